"""The smoothness β of the smooth-sensitivity quantile, from public parameters only
(docs/theory/quantiles.md#choosing-the-method-and-beta).

Nothing here sees the data: n, ε, the bounds and q are public under substitution, so β is part of the
mechanism's definition and costs no budget. :mod:`smoothdp.central.choose` re-exports :func:`choose_beta`.
"""

from __future__ import annotations

import math
from functools import lru_cache

from smoothdp.calibration import calibrate
from smoothdp.validation import check_epsilon, check_in_range, check_int

__all__ = ["choose_beta", "median_error_bound"]

_BETA_FRACTIONS = tuple(0.02 + 0.01 * i for i in range(44))  # β/ε in [0.02, 0.45]


@lru_cache(maxsize=256)
def _median_abs_noise(epsilon: float, fraction: float) -> float:
    cal = calibrate("polyplace", epsilon=epsilon, beta=epsilon * fraction)
    return float(cal.noise.ppf(0.75))  # the median of |Z| for a symmetric Z


def median_error_bound(*, n: int, epsilon: float, width: float, rank: int, beta: float) -> float:
    """The documented error bound minimised by :func:`choose_beta` (PolyPlace noise), in units of the width:

        B(β) = med|Z_β| · ( h·max(1, 1/(eβ)) + e^{−β k*} ),   h = 1/n²,   k* = min(r, n + 1 − r),

    med|Z_β| the median of |PolyPlace| at (ε, β); e^{−βk*}·width bounds the smooth sensitivity's reach to the
    bounds (k* substitutions move x_(r) to a bound); h·width is the assumed typical spacing of the data
    around the quantile (data concentrated on 1/n of the width), and max_k e^{−βk}(k+1)h ≤ h·max(1, 1/(eβ)).
    """
    k_star = max(1, min(rank, n + 1 - rank))
    spacing = 1.0 / (float(n) * float(n))
    local = spacing * max(1.0, 1.0 / (math.e * beta))
    return _median_abs_noise(epsilon, beta / epsilon) * (local + math.exp(-beta * k_star)) * width


def choose_beta(*, n: int, epsilon: float, bounds: tuple[float, float], q: float = 0.5) -> float:
    """β minimising :func:`median_error_bound` over β/ε ∈ [0.02, 0.45] (PolyPlace needs β < ε; its variance
    is finite for β < ε/2). Public inputs only."""
    nn = check_int("n", n, minimum=1)
    eps = check_epsilon(epsilon)
    qq = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
    width = float(bounds[1]) - float(bounds[0])
    rank = max(1, math.ceil(qq * nn))
    scores = [
        (median_error_bound(n=nn, epsilon=eps, width=width, rank=rank, beta=f * eps), f)
        for f in _BETA_FRACTIONS
    ]
    return min(scores)[1] * eps
