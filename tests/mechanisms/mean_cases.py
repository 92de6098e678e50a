"""Registry case of smoothdp.central.moments.private_clip.PrivateClipMean, with its exact privacy loss written
out from scratch (not from the code's sampler).

The mechanism's output is (y, z): y from the exponential mechanism on the clamped log-magnitudes
log2|x_i − c| over [T − 40, T] (T = ⌈log2 max|bound − c|⌉), then z = clipped mean on
[max(l, c − G), min(u, c + G)] + Laplace((b − a)/(n·ε₂)) with G = 2^min(⌈y⌉ + 2, T + 2). The released
(G, z) is post-processing of (y, z), whose loss is, at each y, the EM log ratio plus the Laplace loss
|Δ mean|/scale; the EM density and G are piecewise constant between the data's log-magnitudes and the
integers, so the supremum is a maximum over one point per piece.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

BOUNDS = (0.0, 4.0)
GRID = (0.0, 0.01, 0.3, 1.0, 4.0)
OCTAVES_BELOW = 40


def clip_mean_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    from quantile_cases import _log_em_density

    from smoothdp.central.quantiles import log_weight_margin

    lo, hi = BOUNDS
    c = mech.center
    top = math.ceil(math.log2(max(abs(lo - c), abs(hi - c))))
    floor = top - OCTAVES_BELOW
    xa, xb = np.asarray(x, float), np.asarray(x2, float)
    n = xa.size

    def logs(v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.sort(np.clip(np.log2(np.abs(v - c)), floor, top))

    la, lb = logs(xa), logs(xb)
    eps1 = mech.epsilon_range
    coverage = mech.coverage if mech.coverage is not None else max(0.5, 1.0 - 20.0 / (eps1 * n))
    eta = log_weight_margin(epsilon=eps1, n=n, width=float(OCTAVES_BELOW))
    coef = 0.5 * (eps1 - 4.0 * eta)
    cuts = np.unique(np.concatenate(([floor, top], la, lb, np.arange(floor, top + 1, dtype=float))))
    y = 0.5 * (cuts[:-1] + cuts[1:])
    em = np.abs(
        _log_em_density(la, floor, top, coverage * n, coef, y)
        - _log_em_density(lb, floor, top, coverage * n, coef, y)
    )
    worst = 0.0
    for yi, loss_y in zip(y, em, strict=True):
        g = 2.0 ** min(math.ceil(yi) + 2, top + 2)
        a, b = max(lo, c - g), min(hi, c + g)
        scale = (b - a) / (n * mech.epsilon_mean)
        shift = abs(float(np.mean(np.clip(xa, a, b)) - np.mean(np.clip(xb, a, b))))
        worst = max(worst, float(loss_y) + shift / scale)
    return worst


def mean_cases() -> list[Any]:
    """The cases (built on call, like quantile_cases)."""
    from mechanism_cases import Case, _attr_times, _substitution_pairs

    from smoothdp.central.moments.private_clip import PrivateClipMean

    data = np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3]) * 4.0
    return [
        Case(
            mechanism=PrivateClipMean,
            build=lambda epsilon, **kw: PrivateClipMean(**{"bounds": BOUNDS, "epsilon": epsilon, **kw}),
            data=data,
            neighbours=lambda: _substitution_pairs(3, GRID),
            privacy_loss=clip_mean_loss,
            broken=_attr_times("epsilon_mean", 2.0),
            bad_parameters=[
                ({"epsilon": 0.0}, ValueError, "epsilon"),
                ({"epsilon": -1.0}, ValueError, "epsilon"),
                ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
                ({"range_fraction": 1.0}, ValueError, "range_fraction"),
                ({"coverage": 1.0}, ValueError, "coverage"),
                ({"center": 5.0}, ValueError, "center"),
                ({"clamp": "yes"}, TypeError, "clamp"),
                ({"numerics": "fast"}, ValueError, "numerics"),
            ],
            epsilon=2.0,
        ),
    ]
