"""The Gaussian law on the exact path: |Z| = σ·x(q), x(q) = √2·erfc⁻¹(q) = −ndtri(q/2), q = U.

binary64 (:meth:`GaussianLaw.fast` on binary64 boxes): one ``ndtri`` per draw, at the box's lower corner
q⁻, where x is largest (docs/theory/floating-point.md#the-fused-kernel). With N = ndtri(q⁻/2) ≤ 0 within
a relative NDTRI_ERR: x(q⁻) ∈ [−N·(1 − ·), −N·(1 + ·)], and since |dx/dq| = √(2π)/2·e^{x²/2} is largest
at q⁻ over the box, x(q⁺) ≥ x(q⁻) − (q⁺ − q⁻)·√(2π)/2·e^{x(q⁻)²/2}: the far corner from an ``exp``
instead of a second ``ndtri`` (the gap is second order in the box's width, far below the first).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from smoothdp.exact import _flint as flint
from smoothdp.exact._core import F64, NDTRI_ERR
from smoothdp.exact.arithmetic import BINARY64, Arithmetic, arithmetic_of
from smoothdp.exact.laws import LawBase, Scratch, arb_constant, take

if TYPE_CHECKING:
    from flint import arb

__all__ = ["GaussianLaw"]

_ZERO = np.int64(0)


def _half_sqrt_two_pi() -> arb:
    return (2 * flint.arb.pi()).sqrt() / 2


def _inv_sqrt_two() -> arb:
    return 1 / flint.arb(2).sqrt()


class GaussianLaw(LawBase):
    """|Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2): ndtri(q/2) ≤ 0 within a relative NDTRI_ERR (q/2 is exact).

    The float path is binary64 only (scipy has no long-double ``ndtri``)."""

    long_double = False

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        e, r = NDTRI_ERR, ar.unit
        half_pi = arb_constant(_half_sqrt_two_pi)
        inv_sqrt2 = arb_constant(_inv_sqrt_two)
        scale = Fraction(self.scale)
        return SimpleNamespace(
            half=0.5,
            # Upper end: σ·x(q⁻) ≤ N·(−grow(σ, E_N)).
            hi=-ar.grow(scale, e),
            # Lower end: σ·x(q⁻) ≥ N·(−shrink(σ, E_N, u)) (one more rounding: the subtraction below).
            lo=-ar.shrink(scale, e, r),
            # Y ≥ x(q⁻)/√2 with room for the rounding of Y²: Y² ≥ x²/2.
            y=-ar.grow(inv_sqrt2[1], e, r),
            # D ≥ σ·box·√(2π)/2·e^{Y²}: exp within E, one product.
            d=ar.grow(scale * Fraction(BINARY64.box) * half_pi[1], ar.elem),
        )

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        from scipy import special  # imported on first use: scipy is slow to import

        if not self.in_range or u_lo[0].dtype != np.float64:
            return self._nan(u_lo)
        k = self.constants(arithmetic_of(u_lo[0]))
        a_lo, a_hi, d = take(scratch, u_lo[0], 3)
        np.multiply(u_lo[0], k.half, out=a_hi)  # exact
        special.ndtri(a_hi, out=a_hi)  # N ≤ 0 at q⁻
        np.multiply(a_hi, k.y, out=d)
        np.square(d, out=d)
        np.exp(d, out=d)
        np.multiply(d, k.d, out=d)
        np.multiply(a_hi, k.lo, out=a_lo)
        np.subtract(a_lo, d, out=a_lo)
        np.maximum(a_lo.view(np.int64), _ZERO, out=a_lo.view(np.int64))  # a negative end: 0 (nan stays)
        np.multiply(a_hi, k.hi, out=a_hi)
        return [(a_lo, a_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(us[0].erfcinv() * flint.arb(2).sqrt())]
