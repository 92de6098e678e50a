"""Each noise family as a map of uniforms, with a certified float evaluator and an arb evaluator.

Conventions (``docs/theory/floating-point.md#the-samplers``): U ∈ [0, 1) is known as a dyadic interval;
symmetric laws take a sign bit and a tail probability q = U, |Z| = Q(q) with P(|Z| > Q(q)) = q, so small
q (the far tail) is reached by refining U's bits, with no 2⁻⁵³ floor. Every float step is followed by an
outward widening (``lo``/``hi`` with :data:`~smoothdp.exact._core.ELEM_ERR` or ``BASIC_ERR``) in the
direction the monotone map needs, so the returned pair encloses the exact value over the whole box.

* Laplace(b): |Z| = −b·ln q.
* Gaussian(σ): |Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2).
* PolyPlace(s, α): the closed-form inverse of P(|X| > su) (HT 2025, Definition 6), core and tail.
* Student's t(ν): polar form (Bailey 1994) with the angle explicit, |T| = σ√(ν(W^{−2/ν} − 1))·sin(πw/2),
  W, w uniform: two uniforms, monotone in each, no rejection.
* Generalized Cauchy(γ): rejection from the uniform/Pareto envelope of |Z| (as the float sampler),
  each acceptance decided exactly.
* Planar Laplace(b): radius −b(ln U₁ + ln U₂) ~ Gamma(2, b), angle 2πU₃.
* Uniform[0, 1) itself (for ``uniform_on_grid``) and the exponential (for lattice laws).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import _flint as flint

if TYPE_CHECKING:
    from flint import arb

from smoothdp.exact._core import (
    BASIC_ERR as B,
)
from smoothdp.exact._core import (
    ELEM_ERR as E,
)
from smoothdp.exact._core import (
    F64,
    NDTRI_ERR,
    U64,
    Uniform,
    _accept_slow,
    _Candidates,
    draw_words,
    dyadic_to_float_bounds,
    fraction_float_bounds,
)

__all__ = [
    "ExponentialLaw",
    "GaussianLaw",
    "GeneralizedCauchyLaw",
    "LaplaceLaw",
    "PlanarLaplaceLaw",
    "PolyPlaceLaw",
    "StudentTLaw",
    "UniformLaw",
]

_CONST_PREC = 256
#: Noise scales (and scaled shape constants) inside this range keep every product of the fast path a
#: normal float, so that the relative error bounds below hold; outside it the fast path gives no
#: enclosure and the slow path decides (never reached by a calibrated release).
_SCALE_RANGE = (2.0**-500, 2.0**500)
#: Shape parameters (PolyPlace α, Student's ν) at most this large keep the same guarantee.
_SHAPE_MAX = 2.0**100
#: The smallest positive subnormal: an absolute slack for a difference that may be tiny.
_SUBNORMAL = 2.0**-1074
_MAX_FLOAT = float(np.finfo(np.float64).max)
# Widening factors for a float y approximating a real t of known sign (one multiply instead of lo()/hi()'s
# three operations). Elementary functions (|y − t| ≤ E|t|, E = ELEM_ERR ≥ 2⁵·2⁻⁵³): the rounded y·(1 ∓ 2E)
# is ≤ t (≥ t) for t > 0, since (1 + E)(1 − 2E)(1 + 2⁻⁵³) < 1 < (1 − E)(1 + 2E)(1 − 2⁻⁵³); swap them for
# t < 0. One correctly rounded + − × ÷ with a normal result: y(1 − 2⁻⁵²) ≤ pred(y) ≤ t and
# y(1 + 2⁻⁵²) ≥ succ(y) ≥ t (|y| ≥ 2^e gives |y|·2⁻⁵² ≥ one ulp), and rounding keeps those floats.
_DN_B = 1.0 - 2.0 * B
_UP_B = 1.0 + 2.0 * B
_DN_E = 1.0 - 2.0 * E
_UP_E = 1.0 + 2.0 * E


def _const(f: Callable[[], arb]) -> tuple[float, float]:
    """Float bounds of a real constant computed in arb at 256 bits."""
    with flint.ctx.workprec(_CONST_PREC):
        return dyadic_to_float_bounds(f())


def _exact(x: float | Fraction) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


def shrink(kappa: float | Fraction, *errors: float) -> float:
    """κ′ ≤ κ/((1 + 2⁻⁵³)·Π(1 + δᵢ)), a float: fl(x·κ′) ≤ κ·t for any x ≥ 0 with x ≤ t·Π(1 + δᵢ).

    (The extra factor covers the rounding of the multiplication itself; for x ≤ 0 with
    |x − t| ≤ |t|·((Π(1 + δᵢ)) − 1) the same product is an *upper* bound of κ·t.) Computed in exact
    rationals and rounded down, so the bound is rigorous whatever κ and δᵢ are. The product must be a
    normal float or zero (:data:`_SCALE_RANGE`).
    """
    den = Fraction(1) + Fraction(B)
    for d in errors:
        den *= 1 + Fraction(d)
    return fraction_float_bounds(_exact(kappa) / den)[0]


def grow(kappa: float | Fraction, *errors: float) -> float:
    """κ″ ≥ κ/((1 − 2⁻⁵³)·Π(1 − δᵢ)): fl(x·κ″) ≥ κ·t for x ≥ t·Π(1 − δᵢ) ≥ 0 (see :func:`shrink`)."""
    den = Fraction(1) - Fraction(B)
    for d in errors:
        den *= 1 - Fraction(d)
    return fraction_float_bounds(_exact(kappa) / den)[1]


#: Relative error of one correctly rounded + − × ÷ or sqrt with a normal result: 2⁻⁵³ (as one δ).
_R = B


class _Law:
    """Defaults: one signed uniform, one coordinate, no rejection."""

    n_uniforms = 1
    signed = True
    dimension = 1
    rejection = False
    acceptance = 1.0

    def __init__(self, scale: float) -> None:
        self.scale = float(scale)
        #: Whether the fast path's products stay normal floats (else: no fast enclosure at all).
        self.in_range = _SCALE_RANGE[0] <= self.scale <= _SCALE_RANGE[1]

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> np.ndarray:
        return np.ones(u_lo[0].shape, dtype=np.int8)

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        return True

    def _b(self, x: arb) -> arb:
        return x * flint.arb(self.scale)

    def _nan(self, u_lo: list[F64]) -> list[tuple[F64, F64]]:
        nan = np.full(u_lo[0].shape, np.nan)
        return [(nan, nan)] * self.dimension


class LaplaceLaw(_Law):
    """|Z| = −b·ln q: ln q ≤ 0 within a relative E, so −b·ln q is ≥ fl(ln q_hi · (−κ′)) and ≤ fl(ln q_lo ·
    (−κ″)) with κ′ = shrink(b, E), κ″ = grow(b, E) (+inf at q = 0)."""

    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.k_lo = -shrink(self.scale, E)
        self.k_hi = -grow(self.scale, E)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        a_lo = np.log(u_hi[0])
        a_lo *= self.k_lo
        a_hi = np.log(u_lo[0])
        a_hi *= self.k_hi
        return [(a_lo, a_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(-us[0].log())]


class ExponentialLaw(LaplaceLaw):
    """Z = −t·ln U ≥ 0 (unsigned): ⌊Z⌋ is geometric with ratio e^{−1/t}."""

    signed = False


class GaussianLaw(_Law):
    """|Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2): ndtri(q/2) ≤ 0 within a relative NDTRI_ERR (q/2 is exact)."""

    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.k_lo = -shrink(self.scale, NDTRI_ERR)
        self.k_hi = -grow(self.scale, NDTRI_ERR)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        from scipy import special  # imported on first use: scipy is slow to import

        if not self.in_range:
            return self._nan(u_lo)
        a_lo = special.ndtri(u_hi[0] * 0.5)
        a_lo *= self.k_lo
        a_hi = special.ndtri(u_lo[0] * 0.5)
        a_hi *= self.k_hi
        return [(a_lo, a_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(us[0].erfcinv() * flint.arb(2).sqrt())]


@lru_cache(maxsize=64)
def _polyplace_constants(alpha: float) -> tuple[tuple[float, float], ...]:
    """Float bounds of A, c, q_b (and 1/c) of PolyPlace(α), computed once per α in arb."""
    consts = (lambda: _polyplace_arb(alpha, 0), lambda: _polyplace_arb(alpha, 1),
              lambda: _polyplace_arb(alpha, 2), lambda: 1 / _polyplace_arb(alpha, 1))
    return tuple(_const(f) for f in consts)


def _polyplace_arb(alpha: float, which: int) -> arb:
    a = flint.arb(alpha)
    r = (a * (-1 / a).log1p()).exp()
    k = 2 * r + a - 1
    if which == 0:
        return (a + 1).log() + a * (-1 / (a * a)).log1p() - k.log()
    return (a - 1) / k if which == 1 else (a + 1) * r / k


class PolyPlaceLaw(_Law):
    """PolyPlace(s, α): tail q ≤ q_b: u = expm1((A − ln q)/α); core q ≥ q_b: u = −expm1(log1p(−(1−q)/c)/α).

    A = ln[(α+1)(1 − 1/α²)^α / K_α], c = (α−1)/K_α, q_b = (α+1)(1 − 1/α)^α / K_α (the tail mass),
    K_α = 2(1 − 1/α)^α + α − 1, all enclosed in arb (HT 2025, Definition 6; docs/theory/noise.md#polyplace).
    Each box is evaluated on its own branch only (a box straddling q_b gets no enclosure).
    """

    def __init__(self, scale: float, alpha: float) -> None:
        super().__init__(scale)
        self.alpha = float(alpha)
        self.A, self.c, self.qb, self.inv_c = _polyplace_constants(self.alpha)
        self.in_range = self.in_range and self.alpha <= _SHAPE_MAX
        s, inv_a = self.scale, 1 / Fraction(self.alpha)
        # Tail: (A − ln q)·(1/α) from a sum of two terms (one rounding, then one product).
        self.neg_log_lo, self.neg_log_hi = -shrink(1, E), -grow(1, E)
        self.t_lo, self.t_hi = shrink(inv_a, _R), grow(inv_a, _R)
        # Core: x = (1 − q)/c (1 − q exact), then log1p(−x)/α (≤ 0) and −expm1(·) (≥ 0).
        self.x_lo, self.x_hi = shrink(self.inv_c[0]), grow(self.inv_c[1])
        self.v_lo, self.v_hi = shrink(inv_a, E), grow(inv_a, E)  # ≤ 0: shrink gives the upper end
        self.k_lo, self.k_hi = shrink(s, E), grow(s, E)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        q_lo, q_hi = u_lo[0], u_hi[0]
        a_lo = np.full(q_lo.shape, np.nan)
        a_hi = np.full(q_lo.shape, np.nan)
        tail = np.flatnonzero(q_hi <= self.qb[0])
        if tail.size:
            a_lo[tail], a_hi[tail] = self._tail(q_lo[tail], q_hi[tail])
        core = np.flatnonzero(q_lo >= self.qb[1])
        if core.size:
            a_lo[core], a_hi[core] = self._core(q_lo[core], q_hi[core])
        return [(a_lo, a_hi)]

    def _tail(self, q_lo: F64, q_hi: F64) -> tuple[F64, F64]:
        """u = expm1((A − ln q)/α), decreasing in q; A − ln q ≥ α·ln(1 + 1/α) ≥ ln 2 > 0 on the tail."""
        lo_ = np.log(q_hi)  # −ln q_hi ≥ fl(ln q_hi · (−shrink(1, E)))
        lo_ *= self.neg_log_lo
        lo_ += self.A[0]
        lo_ *= self.t_lo
        np.expm1(lo_, out=lo_)
        lo_ *= self.k_lo
        hi_ = np.log(q_lo)
        hi_ *= self.neg_log_hi
        hi_ += self.A[1]
        hi_ *= self.t_hi
        np.expm1(hi_, out=hi_)
        hi_ *= self.k_hi
        return lo_, hi_

    def _core(self, q_lo: F64, q_hi: F64) -> tuple[F64, F64]:
        """u = −expm1(log1p(−(1 − q)/c)/α), decreasing in q (1 − q is exact: q a multiple of 2⁻⁵²)."""
        lo_ = np.subtract(1.0, q_hi)
        lo_ *= self.x_lo
        np.negative(lo_, out=lo_)
        np.log1p(lo_, out=lo_)  # ≤ 0: times shrink(1/α, E) is an upper end of ln(1 − x)/α
        lo_ *= self.v_lo
        np.expm1(lo_, out=lo_)  # ≤ 0: times −shrink(s, E) is a lower end of −s·expm1
        lo_ *= -self.k_lo
        hi_ = np.subtract(1.0, q_lo)
        hi_ *= self.x_hi
        np.negative(hi_, out=hi_)
        np.log1p(hi_, out=hi_)
        hi_ *= self.v_hi
        np.expm1(hi_, out=hi_)
        hi_ *= -self.k_hi
        return lo_, hi_

    def ball(self, us: Sequence[arb]) -> list[arb]:
        q = us[0]
        big_a, c, qb = _polyplace_balls(self.alpha, flint.ctx.prec)
        a = flint.arb(self.alpha)
        if q < qb:
            u = ((big_a - q.log()) / a).expm1()
        elif q > qb:
            u = -((-(1 - q) / c).log1p() / a).expm1()
        else:
            return [flint.arb.nan()]
        return [self._b(u)]


@lru_cache(maxsize=256)
def _polyplace_balls(alpha: float, prec: int) -> tuple[arb, arb, arb]:
    """A, c, q_b as arb balls at the precision ``prec`` (the current one), made once per (α, prec)."""
    return _polyplace_arb(alpha, 0), _polyplace_arb(alpha, 1), _polyplace_arb(alpha, 2)


class StudentTLaw(_Law):
    """|T| = σ·√(ν·expm1(−(2/ν)·ln W))·sin(πw/2): Bailey's polar form with the angle explicit.

    The radius is decreasing in W and evaluated at both corners; sin(πw/2) is increasing in w and
    evaluated once, at the lower corner θ₁: sin θ₂ ≤ sin θ₁ + (θ₂ − θ₁) (|cos| ≤ 1), capped at 1.
    """

    n_uniforms = 2

    def __init__(self, scale: float, df: float) -> None:
        super().__init__(scale)
        self.df = float(df)
        two_over = _const(lambda: 2 / flint.arb(self.df))
        self.half_pi = _const(lambda: flint.arb.pi() / 2)
        # ν ≥ 1/8: the lower end of expm1((2/ν)·(−ln W)) ≤ e⁵⁷⁷ never overflows (−ln W ≤ 36.05 on the
        # first word), and r·σ stays below 2⁹¹⁵; ν ≤ 2¹⁰⁰ keeps (2/ν)·(−ln W) normal.
        self.in_range = self.in_range and 0.125 <= self.df <= _SHAPE_MAX
        # g = −(2/ν)·ln W ≥ 0 (one elementary call, one product); ν·expm1(g) (one call, one product);
        # √ (one rounding); × sin (one call, one product); × σ (one product).
        self.g_lo, self.g_hi = -shrink(two_over[0], E), -grow(two_over[1], E)
        self.d_lo, self.d_hi = shrink(self.df, E), grow(self.df, E)
        self.k_lo, self.k_hi = shrink(self.scale, _R, E, _R), grow(self.scale, _R, E, _R)
        self.th_lo, self.th_hi = shrink(self.half_pi[0]), grow(self.half_pi[1])

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        # Radius: r(W) decreasing in W.
        r_lo = np.log(u_hi[0])
        r_lo *= self.g_lo
        np.expm1(r_lo, out=r_lo)
        r_lo *= self.d_lo
        np.sqrt(r_lo, out=r_lo)
        r_hi = np.log(u_lo[0])
        r_hi *= self.g_hi
        np.expm1(r_hi, out=r_hi)
        r_hi *= self.d_hi
        np.sqrt(r_hi, out=r_hi)
        # Angle: θ ∈ [θ₁, θ₂] ⊆ [0, π/2], θ₁ = fl(w_lo·(π/2)⁻) ≤ πw_lo/2, θ₂ = fl(w_hi·(π/2)⁺) ≥ πw_hi/2.
        th1 = np.multiply(u_lo[1], self.th_lo)
        sin1 = np.sin(th1)
        th2 = np.multiply(u_hi[1], self.th_hi)
        th2 -= th1  # θ₂ − θ₁ ≥ 0, one rounding: times (1 + 2⁻⁵²) plus 2⁻¹⁰⁷⁴ is an upper end
        th2 *= _UP_B
        th2 += _SUBNORMAL
        s_hi = np.multiply(sin1, _UP_E)  # sin θ₁ ≥ 0 within E: an upper end, then + (θ₂ − θ₁)
        s_hi += th2
        s_hi *= _UP_B
        np.minimum(s_hi, 1.0, out=s_hi)
        r_lo *= sin1
        r_lo *= self.k_lo
        r_hi *= s_hi
        r_hi *= self.k_hi
        return [(r_lo, r_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        d, two_over = _student_balls(self.df, flint.ctx.prec)
        r = (d * (-two_over * us[0].log()).expm1()).sqrt()
        return [self._b(r * (us[1] / 2).sin_pi())]


@lru_cache(maxsize=256)
def _student_balls(df: float, prec: int) -> tuple[arb, arb]:
    """ν and 2/ν as arb balls at the precision ``prec`` (the current one)."""
    d = flint.arb(df)
    return d, 2 / d


#: Candidates per vectorized pass of the generalized Cauchy sampler (the temporaries stay in cache).
_CHUNK = 1 << 14
#: Bits of the acceptance uniform V in the candidate's own word.
_V_BITS = 10
_U_BITS = 53


class GeneralizedCauchyLaw(_Law):
    """Rejection from the envelope 1 on [0, 1), x^{−γ} beyond; accept with 1/(1 + min(x, 1/x)^γ).

    x(U) = U/w₀ for U < w₀ = (γ−1)/γ, else s^{−1/(γ−1)} with s = γ(1 − U) ∈ (0, 1]; V < a(x) accepts,
    a = 1/(1 + r^p) with r = x, p = γ (core) or r = s = x^{−(γ−1)}, p = γ/(γ−1) (tail).

    One 64-bit word per candidate (:meth:`draw_accepted`): bit 0 is the sign, bits 1–10 the first 10 bits
    of V, bits 11–63 the first 53 bits of U; each uniform is refined by appending fresh 64-bit words of
    the stream (only for the candidates that need it), so U, V and the sign are independent uniforms
    given as infinite bit strings, and the decision "V < a(x(U))" is exact.
    """

    n_uniforms = 2
    rejection = True

    def __init__(self, scale: float, gamma: float) -> None:
        super().__init__(scale)
        g = float(gamma)
        self.gamma = g
        self.acceptance = (1.0 / g) * (1.0 - 1.0 / g) * math.pi / math.sin(math.pi / g)
        self.w0 = _const(lambda: (flint.arb(g) - 1) / flint.arb(g))
        self.inv = _const(lambda: 1 / (flint.arb(g) - 1))
        self.pw = _const(lambda: flint.arb(g) / (flint.arb(g) - 1))  # 1/w₀, and the tail's acceptance power
        # x = s^{−1/(γ−1)} without exp/log (whose error grows with |ln s|) when 1/(γ−1) is exactly 1, 2,
        # 1/2 or 1/3 (γ = 2, 1.5, 3, 4): 1/s, 1/s², 1/√s, 1/∛s.
        self.tail_power: float | None = {2.0: 1.0, 1.5: 2.0, 3.0: 0.5, 4.0: 1.0 / 3.0}.get(g)
        self.k_lo, self.k_hi = shrink(self.scale), grow(self.scale)  # the enclosure of x times s

    # -- acceptance -----------------------------------------------------------------------------------
    def _accept_bounds(self, u_lo: F64, u_hi: F64) -> tuple[F64, F64, NDArray[np.bool_]]:
        """Float bounds of a(x(U)) over the boxes [u_lo, u_hi] (exact floats), and where they hold.

        Where the box straddles w₀ the bounds are meaningless and the mask is False.
        """
        g = self.gamma
        core = u_hi <= self.w0[0]
        known = core | (u_lo >= self.w0[1])
        # r ∈ (0, 1]: U·(1/w₀) (core) or γ(1 − U) (tail; 1 − U is exact, U a multiple of 2⁻⁵³).
        r_lo = np.where(core, u_lo * self.pw[0], g * (1.0 - u_hi))
        r_lo *= _DN_B
        r_hi = np.where(core, u_hi * self.pw[1], g * (1.0 - u_lo))
        r_hi *= _UP_B
        np.minimum(r_hi, 1.0, out=r_hi)
        # ln r ≤ 0, p·ln r ≤ 0: the lower ends move away from 0, the upper ends towards it.
        q_lo = np.log(r_lo)
        q_lo *= _UP_E
        q_lo *= np.where(core, g, self.pw[1])
        q_lo *= _UP_B
        q_hi = np.log(r_hi)
        q_hi *= _DN_E
        q_hi *= np.where(core, g, self.pw[0])
        q_hi *= _DN_B
        # e = r^p ∈ [0, 1]; a = 1/(1 + e) ∈ [1/2, 1]. An exp that underflows (|error| ≤ 2⁻¹⁰²²) is
        # absorbed by the relative widening of 1 + e ≥ 1.
        e_lo = np.exp(q_lo, out=q_lo)
        e_lo *= _DN_E
        e_hi = np.exp(q_hi, out=q_hi)
        e_hi *= _UP_E
        e_hi += 1.0
        e_hi *= _UP_B
        a_lo = np.divide(1.0, e_hi, out=e_hi)
        a_lo *= _DN_B
        e_lo += 1.0
        e_lo *= _DN_B
        a_hi = np.divide(1.0, e_lo, out=e_lo)
        a_hi *= _UP_B
        return a_lo, a_hi, known

    def _coarse_state(self, w: U64) -> NDArray[np.int8]:
        """1 accept, 0 reject, −1 V's 10 bits undecided, −2 U's box straddles w₀ (candidate words w)."""
        u_lo = (w >> np.uint64(64 - _U_BITS)).astype(np.float64)
        u_lo *= 2.0**-_U_BITS
        u_hi = u_lo + 2.0**-_U_BITS
        a_lo, a_hi, known = self._accept_bounds(u_lo, u_hi)
        c = ((w >> np.uint64(1)) & np.uint64((1 << _V_BITS) - 1)).astype(np.float64)
        a_lo *= float(1 << _V_BITS)  # exact
        a_hi *= float(1 << _V_BITS)
        state = np.full(w.shape, -1, dtype=np.int8)
        state[c + 1.0 <= a_lo] = 1  # V < (c + 1)/1024 ≤ a
        state[c >= a_hi] = 0  # V ≥ c/1024 ≥ a
        state[~known] = -2
        return state

    def draw_accepted(self, n: int, rng: Any) -> _Candidates:
        """n accepted candidates in stream order: signs, U's first 53 bits, and U refined where needed."""
        neg_parts: list[NDArray[np.bool_]] = []
        k_parts: list[U64] = []
        refined: dict[int, list[Uniform]] = {}
        filled = 0
        v_mask = np.uint64((1 << _V_BITS) - 1)
        while filled < n:
            missing = n - filled
            m = int(missing / self.acceptance + 6.0 * math.sqrt(missing) + 16)
            words = draw_words(rng, m)
            state = np.empty(m, dtype=np.int8)
            with np.errstate(all="ignore"):  # log 0 = −inf and exp underflow are part of the bounds
                for start in range(0, m, _CHUNK):
                    state[start : start + _CHUNK] = self._coarse_state(words[start : start + _CHUNK])
            # V undecided by its 10 bits: one more 64-bit word of V each (its bits 11..74).
            slow: dict[int, tuple[Uniform, Uniform]] = {}
            pend = np.flatnonzero(state == -1)
            if pend.size:
                w = words[pend]
                extra = draw_words(rng, pend.size)
                c = (w >> np.uint64(1)) & v_mask
                v_lo = ((c << np.uint64(42)) | (extra >> np.uint64(22))).astype(np.float64) * 2.0**-52
                u_lo = (w >> np.uint64(64 - _U_BITS)).astype(np.float64) * 2.0**-_U_BITS
                with np.errstate(all="ignore"):
                    a_lo, a_hi, _ = self._accept_bounds(u_lo, u_lo + 2.0**-_U_BITS)
                st = np.full(pend.size, -1, dtype=np.int8)
                st[v_lo + 2.0**-52 <= a_lo] = 1
                st[v_lo >= a_hi] = 0
                state[pend] = st
                for j in np.flatnonzero(st < 0):
                    i = int(pend[j])
                    u = Uniform(int(w[j]) >> (64 - _U_BITS), _U_BITS)
                    v = Uniform((int(c[j]) << 64) | int(extra[j]), _V_BITS + 64)
                    slow[i] = (u, v)
            for straddle in np.flatnonzero(state == -2):
                wi = int(words[straddle])
                slow[int(straddle)] = (
                    Uniform(wi >> (64 - _U_BITS), _U_BITS),
                    Uniform((wi >> 1) & ((1 << _V_BITS) - 1), _V_BITS),
                )
            # The rest: exact arb decisions (U and V refined together), in stream order.
            this_round: dict[int, Uniform] = {}
            for i in sorted(slow):
                ok, us = _accept_slow(self, list(slow[i]), rng)
                state[i] = 1 if ok else 0
                this_round[i] = us[0]
            take = np.flatnonzero(state == 1)[:missing]
            for i, u in this_round.items():
                pos = int(np.searchsorted(take, i))
                if pos < take.size and take[pos] == i:
                    refined[filled + pos] = [u]
            kept = words[take]
            neg_parts.append((kept & np.uint64(1)).astype(np.bool_))
            k_parts.append(kept >> np.uint64(64 - _U_BITS))
            filled += take.size
        return _Candidates(np.concatenate(neg_parts), [np.concatenate(k_parts)], [_U_BITS], refined)

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> NDArray[np.int8]:
        """The decision over boxes of U and V (the generic engine's form; :meth:`draw_accepted` is used)."""
        a_lo, a_hi, known = self._accept_bounds(u_lo[0], u_hi[0])
        state = np.full(u_lo[0].shape, -1, dtype=np.int8)
        state[u_hi[1] <= a_lo] = 1
        state[u_lo[1] >= a_hi] = 0
        state[~known] = -1
        return state

    def _x_ball(self, u: arb) -> arb | None:
        g = flint.arb(self.gamma)
        w0 = (g - 1) / g
        if u < w0:
            return u / w0
        if u > w0:
            return (-(g * (1 - u)).log() / (g - 1)).exp()
        return None

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        x = self._x_ball(us[0])
        if x is None or not x.is_finite():
            return None
        if x < 1:
            m = x
        elif x > 1:
            m = 1 / x
        else:
            return None
        a = 1 / (1 + (flint.arb(self.gamma) * m.log()).exp())
        if us[1] < a:
            return True
        if us[1] > a:
            return False
        return None

    # -- the accepted draw ------------------------------------------------------------------------------
    def _x_chunk(self, u_lo: F64, u_hi: F64) -> tuple[F64, F64]:
        g = self.gamma
        core = u_hi <= self.w0[0]
        tail = u_lo >= self.w0[1]
        # Tail: x = s^{−1/(γ−1)}, decreasing in s = γ(1 − U) ∈ (0, 1], so increasing in U.
        s_lo = g * (1.0 - u_hi)
        s_lo *= _DN_B
        s_hi = g * (1.0 - u_lo)
        s_hi *= _UP_B
        np.minimum(s_hi, 1.0, out=s_hi)
        if self.tail_power is not None:
            x_lo, x_hi = self._tail_power(s_lo, s_hi)
        else:
            x_lo, x_hi = self._tail_exp(s_lo, s_hi)
        # An exp that overflows gives x_lo = inf, no lower bound of a real x: cap it at the largest float
        # (the engine's widening would also turn it into nan), so c + S·x stays undecided, not inf.
        np.clip(x_lo, 1.0, _MAX_FLOAT, out=x_lo)
        # Core: x = U·(1/w₀).
        c_lo = u_lo * self.pw[0]
        c_lo *= _DN_B
        c_hi = u_hi * self.pw[1]
        c_hi *= _UP_B
        x_lo = np.where(core, c_lo, np.where(tail, x_lo, np.nan))
        x_hi = np.where(core, np.minimum(c_hi, 1.0), np.where(tail, x_hi, np.nan))
        return x_lo, x_hi

    def _tail_power(self, s_lo: F64, s_hi: F64) -> tuple[F64, F64]:
        """x ∈ [1/d(s_hi), 1/d(s_lo)] for d(s) = s, s², √s or ∛s (s_lo ≥ γ·2⁻⁵³·(1 − 2⁻⁵²) or 0).

        √ and ∛ are taken as elementary functions (relative error ≤ ELEM_ERR; ∛ measured in
        tests/exact/test_generalized_cauchy_exact.py).
        """
        if self.tail_power == 2.0:
            d_lo = s_lo * s_lo
            d_lo *= _DN_B
            d_hi = s_hi * s_hi
            d_hi *= _UP_B
        elif self.tail_power in (0.5, 1.0 / 3.0):
            root = np.sqrt if self.tail_power == 0.5 else np.cbrt
            d_lo = root(s_lo)
            d_lo *= _DN_E
            d_hi = root(s_hi)
            d_hi *= _UP_E
        else:
            d_lo, d_hi = s_lo, s_hi
        x_hi = np.divide(1.0, d_lo)  # s_lo = 0: +inf
        x_hi *= _UP_B
        x_lo = np.divide(1.0, d_hi)
        x_lo *= _DN_B
        return x_lo, x_hi

    def _tail_exp(self, s_lo: F64, s_hi: F64) -> tuple[F64, F64]:
        """x = exp(−ln(s)/(γ−1)) ∈ [x(s_hi), x(s_lo)]."""
        t_hi = np.log(s_lo)  # ln s ≤ 0: −ln(s)/(γ−1) ≥ 0, its upper end from the lower s
        t_hi *= -_UP_E
        t_hi *= self.inv[1]
        t_hi *= _UP_B
        t_lo = np.log(s_hi)
        t_lo *= -_DN_E
        t_lo *= self.inv[0]
        t_lo *= _DN_B
        x_lo = np.exp(t_lo, out=t_lo)
        x_lo *= _DN_E
        x_hi = np.exp(t_hi, out=t_hi)
        x_hi *= _UP_E
        return x_lo, x_hi

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        x_lo, x_hi = self._x_chunk(u_lo[0], u_hi[0])
        x_lo *= self.k_lo  # x_lo ≤ MAX: an overflow means s·x > MAX, so MAX stays a lower end
        np.minimum(x_lo, _MAX_FLOAT, out=x_lo)
        x_hi *= self.k_hi
        return [(x_lo, x_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        x = self._x_ball(us[0])
        return [flint.arb.nan() if x is None else self._b(x)]


class PlanarLaplaceLaw(_Law):
    """Y = b(ln(1/U₁) + ln(1/U₂))·(cos 2πU₃, sin 2πU₃); the float path reduces the angle to an octant.

    θ = (o + f)·π/4 with o the octant of U₃ and ψ = f·π/4 (or (1 − f)·π/4 in odd octants) in [0, π/4];
    sin ψ and cos ψ come from t = tan(ψ₁/2) at the box's lower corner ψ₁ (sin = 2t/(1 + t²),
    cos = (1 − t²)/(1 + t²), t ≤ tan(π/8): no cancellation, within a relative 2E), and the far corner
    from |d sin|, |d cos| ≤ 1 over a box of width below 2⁻⁴⁸.
    """

    n_uniforms = 3
    signed = False
    dimension = 2

    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.quarter_pi = _const(lambda: flint.arb.pi() / 4)
        eighth_pi = _const(lambda: flint.arb.pi() / 8)
        # r = b·(−ln U₁ − ln U₂): two logs of one sign (within E together), one sum, one product.
        self.k_lo, self.k_hi = -shrink(self.scale, E, _R), -grow(self.scale, E, _R)
        self.h_lo = shrink(eighth_pi[0])  # ψ₁/2 ≤ g·π/8
        self.trig_lo, self.trig_hi = shrink(1, 2 * E), grow(1, 2 * E)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        r_lo = np.log(u_hi[0])
        r_lo += np.log(u_hi[1])
        r_lo *= self.k_lo
        r_hi = np.log(u_lo[0])
        r_hi += np.log(u_lo[1])
        r_hi *= self.k_hi
        e_lo = u_lo[2] * 8.0  # exact
        o = np.floor(e_lo)
        f_lo = e_lo - o  # exact
        odd = np.fmod(o, 2.0) == 1.0
        g_lo = np.where(odd, (1.0 - u_hi[2] * 8.0) + o, f_lo)  # exact: the lower end of g in [0, 1]
        t = np.multiply(g_lo, self.h_lo)
        np.tan(t, out=t)
        t2 = np.square(t)
        den = np.add(t2, 1.0)
        sin1 = np.multiply(t, 2.0)
        sin1 /= den
        cos1 = np.subtract(1.0, t2, out=t2)
        cos1 /= den
        # Lower corner ψ₁ ≤ ψ ≤ ψ₁ + 2⁻⁴⁸: sin ψ ∈ [sin ψ₁, sin ψ₁ + 2⁻⁴⁸], cos ψ ∈ [cos ψ₁ − 2⁻⁴⁸, cos ψ₁].
        sin_lo = np.multiply(sin1, self.trig_lo)
        sin_hi = np.multiply(sin1, self.trig_hi, out=sin1)
        sin_hi += _PSI_WIDTH
        sin_hi *= _UP_B
        cos_hi = np.multiply(cos1, self.trig_hi)
        np.minimum(cos_hi, 1.0, out=cos_hi)
        cos_lo = np.multiply(cos1, self.trig_lo, out=cos1)
        cos_lo -= _PSI_WIDTH  # ≥ 0.7: one rounding, covered by (1 − 2⁻⁵²)
        cos_lo *= _DN_B
        b = np.where(odd, (o + 1) / 2, o / 2) % 4
        # (cos θ, sin θ) = rot_b(cos ψ, sin ψ), sin ψ = ±sin|ψ| (− for odd octants):
        # b=0: (C, S), b=1: (−S, C), b=2: (−C, −S), b=3: (S, −C).
        sgn_s = np.where(odd, -1.0, 1.0)
        x_is_cos = (b == 0) | (b == 2)
        quarter = [b == 0, b == 1, b == 2, b == 3]
        x_sign = np.select(quarter, [1.0, -sgn_s, -1.0, sgn_s])
        y_sign = np.select(quarter, [sgn_s, 1.0, -sgn_s, -1.0])
        out = []
        for sign, swap in ((x_sign, False), (y_sign, True)):
            use_cos = x_is_cos != swap
            t_lo = np.where(use_cos, cos_lo, sin_lo)
            t_hi = np.where(use_cos, cos_hi, sin_hi)
            m_lo = r_lo * np.maximum(t_lo, 0.0)
            m_lo *= _DN_B
            m_hi = r_hi * t_hi
            m_hi *= _UP_B
            out.append((np.where(sign > 0, m_lo, -m_hi), np.where(sign > 0, m_hi, -m_lo)))
        return out

    def ball(self, us: Sequence[arb]) -> list[arb]:
        r = self._b(-us[0].log() - us[1].log())
        s, c = (2 * us[2]).sin_cos_pi()
        return [r * c, r * s]


#: Width bound of ψ over a first-word box: (g_hi − g_lo)·π/4 plus the rounding of ψ₁ is below 2⁻⁴⁸.
_PSI_WIDTH = 2.0**-48


class UniformLaw(_Law):
    """Z = U on [0, 1) (``uniform_on_grid`` puts c = lower and S = upper − lower)."""

    signed = False

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        return [(u_lo[0], u_hi[0])]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [us[0]]
