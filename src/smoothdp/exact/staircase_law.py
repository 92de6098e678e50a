"""The staircase law as a map of two uniforms, with a certified float evaluator and an arb evaluator.

Staircase(Δ, ε, γ) (Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy", IEEE
Transactions on Information Theory 2016; docs/theory/moments.md#the-staircase-mechanism): |Z| = Δ·(G + V)
with G and V independent,

* G = ⌊−ln(U₁)/ε⌋: P(G ≥ k) = P(U₁ ≤ e^{−kε}) = e^{−kε}, the geometric law of ratio r = e^{−ε};
* V = F_V⁻¹(U₂) on [0, 1) with density ∝ 1 on [0, γ) and ∝ r on [γ, 1): with A = γ + (1 − γ)r,
  F_V⁻¹(q) = max(qA, γ + (qA − γ)/r), the larger of the two linear pieces (both increasing in q).

|Z| decreases in U₁ and increases in U₂; G is a step function of U₁, so a box of U₁ that straddles a step
gives an enclosure at least Δ wide, which the engine (:mod:`smoothdp.exact._core`) refines with more bits
until it lies inside one step (the steps have probability zero). The sign is uniform 0's top bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from flint import arb, ctx
from numpy.typing import NDArray

from smoothdp.exact._core import BASIC_ERR, ELEM_ERR, dyadic_to_float_bounds, hi, lo

__all__ = ["StaircaseLaw"]

F64 = NDArray[np.float64]
_CONST_PREC = 256


def _bounds(value: arb) -> tuple[float, float]:
    """Float bounds of a real constant (computed at 256 bits by the caller)."""
    return dyadic_to_float_bounds(value)


class StaircaseLaw:
    """|Z| = Δ·(⌊−ln(U₁)/ε⌋ + max(U₂A, γ + (U₂A − γ)e^ε)), signed (see the module docstring)."""

    n_uniforms = 2
    signed = True
    dimension = 1
    rejection = False
    acceptance = 1.0

    def __init__(self, scale: float, epsilon: float, gamma: float) -> None:
        self.scale = float(scale)
        self.epsilon = float(epsilon)
        self.gamma = float(gamma)
        with ctx.workprec(_CONST_PREC):
            eps = arb(self.epsilon)
            self.inv_eps = _bounds(1 / eps)
            self.exp_eps = _bounds(eps.exp())
            self.mass = _bounds(self._mass(eps))

    def _mass(self, eps: arb) -> arb:
        """A = γ + (1 − γ)e^{−ε}, the normaliser of V's density."""
        g = arb(self.gamma)
        return g + (1 - g) * (-eps).exp()

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> NDArray[np.int8]:
        return np.ones(u_lo[0].shape, dtype=np.int8)

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        return True

    def _v_bound(self, w: F64, *, upper: bool) -> F64:
        """A bound on max(w, γ + (w − γ)e^ε) at a bound w of U₂A (lower or ``upper``)."""
        g = self.gamma
        e_lo, e_hi = self.exp_eps
        if upper:
            d = hi(w - g, BASIC_ERR)
            p = hi(d * np.where(d >= 0, e_hi, e_lo), BASIC_ERR)
            return np.maximum(w, hi(g + p, BASIC_ERR))
        d = lo(w - g, BASIC_ERR)
        p = lo(d * np.where(d >= 0, e_lo, e_hi), BASIC_ERR)
        return np.maximum(w, lo(g + p, BASIC_ERR))

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        # −ln U₁ over the box, decreasing in U₁ (+inf at U₁ = 0); then t = −ln(U₁)/ε ≥ 0 and G = ⌊t⌋.
        nl_lo = -hi(np.log(u_hi[0]), ELEM_ERR)
        nl_hi = -lo(np.log(u_lo[0]), ELEM_ERR)
        g_lo = np.floor(lo(nl_lo * self.inv_eps[0], BASIC_ERR))
        g_hi = np.floor(hi(nl_hi * self.inv_eps[1], BASIC_ERR))
        # V, increasing in U₂ (U₂ ≥ 0 and A > 0, so the products of like bounds bound U₂A).
        v_lo = self._v_bound(lo(u_lo[1] * self.mass[0], BASIC_ERR), upper=False)
        v_hi = self._v_bound(hi(u_hi[1] * self.mass[1], BASIC_ERR), upper=True)
        z_lo = lo(lo(np.maximum(g_lo, 0.0) + np.maximum(v_lo, 0.0), BASIC_ERR) * self.scale, BASIC_ERR)
        z_hi = hi(hi(g_hi + v_hi, BASIC_ERR) * self.scale, BASIC_ERR)
        return [(np.maximum(z_lo, 0.0), z_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        eps = arb(self.epsilon)
        g = arb(self.gamma)
        steps = (-us[0].log() / eps).floor()
        w = us[1] * self._mass(eps)
        v = w.max(g + (w - g) * eps.exp())
        return [(steps + v) * arb(self.scale)]
