"""The piecewise Laplace mechanism (Durfee, 2025): Laplace noise in proportion to the local sensitivity,
piece by piece.

Durfee ("Unifying Laplace mechanism with instance optimality in differential privacy", arXiv 2505.02798,
2025) interpolates the inverse-sensitivity path length linearly between consecutive reach points. With
the (smoothed) reach L_k^ρ, U_k^ρ of :mod:`smoothdp.central.frameworks.inverse_sensitivity`, the continuous
path length is ℓ(t) = 0 on the core [L_0, U_0], and

    ℓ(t) = (k − 1) + (t − U_{k−1})/(U_k − U_{k−1})   on the upper piece [U_{k−1}, U_k],

mirrored below. The output density is p_x(t) ∝ exp(−ε·ℓ(x; t)/2) on the bounds: on each piece an
exponential decay of total ratio e^{−ε/2} across it, i.e. Laplace-shaped noise whose scale is the
piece's width, the local sensitivity at distance k (docs/theory/instance-optimal.md#piecewise-laplace).
For neighbours the interpolated reaches keep the nesting φ′(s) ≤ φ(s + 1), so ℓ has sensitivity 1 and the
mechanism is ε-DP; and ℓ ≤ ⌈ℓ⌉ = len, so its density puts at least as much weight near f(x) as the
inverse-sensitivity mechanism's (Durfee's domination result, for continuous outputs).

Sampling, exactly: the piece by :func:`~smoothdp.central.quantiles.exact_categorical` from certified float
log weights ln(width) − (ε′/2)(k − 1) + ln((1 − e^{−ε′/2})/(ε′/2)) (the core: ln(width)), then the point
inside it from the truncated exponential law by :func:`smoothdp.exact.truncated_exponential_on_grid`
(decaying away from the core).

Neighbours: ``"substitution"`` (n public).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.frameworks.inverse_sensitivity import ReachMechanism
from smoothdp.exact import truncated_exponential_on_grid, uniform_on_grid
from smoothdp.keywords import check_keywords_of

__all__ = ["PiecewiseLaplace"]

_DURFEE = "Durfee, Unifying Laplace mechanism with instance optimality in differential privacy, arXiv 2025"


class PiecewiseLaplace(ReachMechanism):
    """The piecewise Laplace mechanism: density ∝ exp(−ε·ℓ_ρ(x; t)/2) on the bounds, ℓ_ρ the linearly
    interpolated (smoothed) path length (module docstring).

    Guarantee: pure ε-DP under substitution: the exponential mechanism with the utility −ℓ_ρ of
    sensitivity 1 (Durfee 2025; docs/theory/instance-optimal.md#piecewise-laplace), sampled exactly from
    certified float weights. Parameters as
    :class:`~smoothdp.central.frameworks.inverse_sensitivity.InverseSensitivity`.
    """

    name: ClassVar[str] = "piecewise Laplace mechanism"
    proof: ClassVar[str] = "docs/theory/instance-optimal.md#piecewise-laplace"
    source = f"{_DURFEE}; reach and smoothing: Asi & Duchi, NeurIPS 2020"

    def piece_log_weights(
        self, lengths: NDArray[np.float64], ks: NDArray[np.float64], coef: float
    ) -> NDArray[np.float64]:
        # ∫ over a piece of width w of e^{−coef·(k − 1 + u/w)} du = w·e^{−coef(k−1)}·(1 − e^{−coef})/coef.
        shape = math.log(-math.expm1(-coef) / coef)
        with np.errstate(divide="ignore"):
            out: NDArray[np.float64] = np.where(
                ks == 0.0, np.log(lengths), np.log(lengths) - coef * (ks - 1.0) + shape
            )
        return out

    def draw_in_piece(self, start: float, end: float, k: float, upward: bool, coef: float, rng: Any) -> float:
        if k == 0.0 or start == end:
            return float(uniform_on_grid(start, end, grid=self.grid, rng=rng, numerics=self.numerics))
        # Upper pieces decay from their start (towards the bounds), lower pieces grow towards their end.
        return truncated_exponential_on_grid(
            start, end, rate=coef, increasing=not upward, grid=self.grid, rng=rng, numerics=self.numerics
        )

    def _details(self, n: int) -> dict[str, Any]:
        return {**super()._details(n), "method": "piecewise_laplace"}

    def __repr__(self) -> str:
        what = f"q={self.q:g}" if self.q is not None else "reach"
        return f"PiecewiseLaplace({what}, {self.guarantee}, bounds=({self.lower:g}, {self.upper:g}))"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
