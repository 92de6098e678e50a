"""Planar Laplace(b) on the exact path: Y = b(ln(1/U₁) + ln(1/U₂))·(cos 2πU₃, sin 2πU₃).

The radius −b·ln(U₁U₂) ~ Gamma(2, b) and the angle θ = 2πU₃ (docs/theory/floating-point.md#the-samplers).
The float path (:meth:`PlanarLaplaceLaw.fast`) encloses |cos θ| and |sin θ| over a box of U₃ after
reducing the angle to an octant, and returns each coordinate as an enclosure of its magnitude with the
coordinate's sign bit (the engine applies it): the octant o = ⌊8U₃⌋ (a box never straddles two
octants, its ends being multiples of 2⁻⁴⁹ or finer) fixes both signs and which of cos ψ, sin ψ each
coordinate's magnitude is, for ψ ∈ [0, π/4] measured from the nearer axis — all integer operations on o,
no selection among arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import F64
from smoothdp.exact.arithmetic import Arithmetic, arithmetic_of
from smoothdp.exact.laws import LawBase, Scratch, arb_constant, take, take_integers

if TYPE_CHECKING:
    from flint import arb

__all__ = ["PlanarLaplaceLaw"]

_ONE = np.int64(1)
_TWO = np.int64(2)
_SHIFT61 = np.int64(61)
_SIGN = np.int64(-(1 << 63))  # the sign bit as an int64 mask


def _eighth_pi() -> arb:
    return flint.arb.pi() / 8


class PlanarLaplaceLaw(LawBase):
    """Y = b(ln(1/U₁) + ln(1/U₂))·(cos 2πU₃, sin 2πU₃); the float path reduces the angle to an octant.

    Radius: r ∈ [−b·ln(P⁺), −b·ln(P⁻)] with P⁺ ≥ u₁⁺u₂⁺ (capped at 1) and P⁻ ≤ u₁⁻u₂⁻, each the rounded
    product moved by a factor (1 ± 2⁻⁵¹), the log within E. Angle: in octant o, g = 8U₃ − o for even o
    and (o + 1) − 8U₃ for odd o, both in [0, 1] and exact; ψ = g·π/4; sin ψ and cos ψ come from
    t = tan(ψ₁/2) at the lower corner ψ₁ of g (sin ψ = 2t/(1 + t²), cos ψ = (1 − t²)/(1 + t²),
    t ≤ tan(π/8): nothing cancels, within a relative 2E + 4u), the far corner from |d sin|, |d cos| ≤ 1
    (ψ − ψ₁ ≤ 8·box·π/4 plus the rounding of ψ₁). |cos θ| is cos ψ in octants 0, 3, 4, 7 and sin ψ in the
    others (|sin θ| the other one); cos θ < 0 in octants 2–5 and sin θ < 0 in octants 4–7.
    """

    n_uniforms = 3
    signed = False
    dimension = 2
    #: The angle's box is used by its lower end only (the far corner is f + 8·box).
    uppers = (True, True, False)

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        eighth_pi = arb_constant(_eighth_pi)
        e, r, trig = ar.elem, ar.unit, 2 * ar.elem + 4 * ar.unit
        box = Fraction(ar.box)
        return SimpleNamespace(
            # P⁺ = fl(u₁⁺u₂⁺)·(1 + 2⁻⁵¹) ≥ u₁⁺u₂⁺, P⁻ = fl(u₁⁻u₂⁻)·(1 − 2⁻⁵²) ≤ u₁⁻u₂⁻ (normal products:
            # u⁻ ≥ 2⁻⁶⁴ unless 0); ln P within E; × the scale, one product with the trig factor.
            p_up=ar.up(4 * r),
            p_dn=ar.down(2 * r),
            one=1.0,
            eight=8.0,
            minus_two=-2.0,
            reflect=ar.bounds(1 - box * 8)[0],  # exact in the format: box is a power of two
            k_lo=-ar.shrink(self.scale, e, r),
            k_hi=-ar.grow(self.scale, e, r),
            h_lo=ar.shrink(eighth_pi[0]),
            # s = t/(1 + t²) = sin ψ₁/2, c = (1 − t²)/(1 + t²) = cos ψ₁, each within trig.
            sin_lo=ar.shrink(2, trig),
            sin_up=ar.grow(2, trig, r, r),
            cos_lo=ar.shrink(1, trig, r, r),
            cos_hi=ar.grow(1, trig),
            # ψ − ψ₁ ≤ (π/4)·8·box + the rounding of ψ₁ ≤ 8·box; one more rounding (the sum).
            width=ar.grow(box * 8, r),
        )

    def fast(
        self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None
    ) -> list[tuple[Any, Any, Any]]:
        if not self.in_range:
            return [(*pair, np.zeros(u_lo[0].shape, dtype=np.uint64)) for pair in self._nan(u_lo)]
        k = self.constants(arithmetic_of(u_lo[0]))
        r_lo, r_hi, f_lo, g, t, den, s_lo, s_hi, c_lo, c_hi = take(scratch, u_lo[0], 10)
        self._radius(u_lo, u_hi, k, r_lo, r_hi)
        m = u_lo[0].shape[0]
        octant, swap, odd, sign_x = take_integers(scratch, m, 4)
        # Octant o, f = 8u⁻ − o, and g ∈ [0, 1] at the lower corner of ψ: f for even o, and
        # (o + 1) − 8u⁺ ≥ 1 − 8·box − f for odd o (box ≤ the format's widest box): all exact.
        np.multiply(u_lo[2], k.eight, out=f_lo)
        np.copyto(octant, f_lo, casting="unsafe")  # ⌊8u⌋: truncation of a nonnegative number
        np.subtract(f_lo, octant, out=f_lo)
        np.bitwise_and(octant, _ONE, out=odd)
        np.multiply(f_lo, k.minus_two, out=g)
        np.add(g, k.reflect, out=g)
        np.multiply(g, odd, out=g)
        np.add(g, f_lo, out=g)
        if g.dtype != np.float64:  # a long-double box may be narrower than the format's widest: g ≥ −2⁻⁶¹
            np.maximum(g, 0, out=g)
        # t = tan(ψ₁/2); s = t/(1 + t²), c = (1 − t²)/(1 + t²).
        np.multiply(g, k.h_lo, out=t)
        np.tan(t, out=t)
        np.square(t, out=den)
        np.subtract(k.one, den, out=c_lo)
        np.add(den, k.one, out=den)
        np.divide(t, den, out=t)
        np.divide(c_lo, den, out=c_lo)
        np.multiply(t, k.sin_lo, out=s_lo)  # ≤ sin ψ₁ ≤ sin ψ
        np.multiply(t, k.sin_up, out=s_hi)
        np.add(s_hi, k.width, out=s_hi)  # ≥ sin ψ₁ + (ψ − ψ₁) ≥ sin ψ
        np.multiply(c_lo, k.cos_hi, out=c_hi)  # ≥ cos ψ₁ ≥ cos ψ
        np.multiply(c_lo, k.cos_lo, out=c_lo)
        np.subtract(c_lo, k.width, out=c_lo)  # ≤ cos ψ₁ − (ψ − ψ₁) ≤ cos ψ (≥ 0.7)
        # |cos θ| = sin ψ in octants 1, 2, 5, 6: swap there, so that c is |cos θ| and s is |sin θ|.
        np.add(octant, _ONE, out=swap)
        np.right_shift(swap, _ONE, out=swap)
        np.bitwise_and(swap, _ONE, out=swap)
        np.negative(swap, out=swap)  # all ones where swapped
        _swap_where(s_lo, c_lo, swap, odd)
        _swap_where(s_hi, c_hi, swap, odd)
        np.multiply(c_lo, r_lo, out=c_lo)
        np.multiply(c_hi, r_hi, out=c_hi)
        np.multiply(s_lo, r_lo, out=s_lo)
        np.multiply(s_hi, r_hi, out=s_hi)
        # Signs: cos θ < 0 in octants 2–5 (bit 2 of o + 2), sin θ < 0 in octants 4–7 (bit 2 of o).
        np.add(octant, _TWO, out=sign_x)
        np.left_shift(sign_x, _SHIFT61, out=sign_x)
        np.bitwise_and(sign_x, _SIGN, out=sign_x)
        sign_y = np.left_shift(octant, _SHIFT61, out=octant)
        np.bitwise_and(sign_y, _SIGN, out=sign_y)
        return [(c_lo, c_hi, sign_x.view(np.uint64)), (s_lo, s_hi, sign_y.view(np.uint64))]

    @staticmethod
    def _radius(u_lo: list[Any], u_hi: list[Any], k: SimpleNamespace, r_lo: Any, r_hi: Any) -> None:
        """r⁻ = −b·ln P⁺ ≥ 0 and r⁺ = −b·ln P⁻ (+inf when a uniform's lower end is 0)."""
        np.multiply(u_hi[0], u_hi[1], out=r_lo)
        np.multiply(r_lo, k.p_up, out=r_lo)
        np.minimum(r_lo, k.one, out=r_lo)
        np.log(r_lo, out=r_lo)
        np.multiply(r_lo, k.k_lo, out=r_lo)
        np.multiply(u_lo[0], u_lo[1], out=r_hi)
        np.multiply(r_hi, k.p_dn, out=r_hi)
        np.log(r_hi, out=r_hi)
        np.multiply(r_hi, k.k_hi, out=r_hi)

    def ball(self, us: Sequence[arb]) -> list[arb]:
        r = self._b(-us[0].log() - us[1].log())
        s, c = (2 * us[2]).sin_cos_pi()
        return [r * c, r * s]


def _swap_where(a: Any, b: Any, mask: NDArray[np.int64], work: NDArray[np.int64]) -> None:
    """Exchange a[i] and b[i] where mask[i] is all ones (else 0): an exclusive-or under the mask for binary64
    buffers (exact), a selection for other formats (``work``: an int64 buffer of the same length)."""
    if a.dtype == np.float64:
        a_bits, b_bits = a.view(np.int64), b.view(np.int64)
        np.bitwise_xor(a_bits, b_bits, out=work)
        np.bitwise_and(work, mask, out=work)
        np.bitwise_xor(a_bits, work, out=a_bits)
        np.bitwise_xor(b_bits, work, out=b_bits)
        return
    on = mask.astype(np.bool_)
    a[on], b[on] = b[on], a[on].copy()
