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
* Uniform[0, 1) itself (for ``uniform_on_grid``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from flint import arb, ctx
from numpy.typing import NDArray
from scipy import special

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
    hi,
    lo,
)

__all__ = [
    "GaussianLaw",
    "GeneralizedCauchyLaw",
    "LaplaceLaw",
    "PlanarLaplaceLaw",
    "PolyPlaceLaw",
    "StudentTLaw",
    "UniformLaw",
]

_CONST_PREC = 256


def _const(f: Callable[[], arb]) -> tuple[float, float]:
    """Float bounds of a real constant computed in arb at 256 bits."""
    with ctx.workprec(_CONST_PREC):
        return dyadic_to_float_bounds(f())


def _scale(a_lo: F64, a_hi: F64, scale: float) -> tuple[F64, F64]:
    if scale == 1.0:
        return a_lo, a_hi
    return lo(a_lo * scale, B), hi(a_hi * scale, B)


class _Law:
    """Defaults: one signed uniform, one coordinate, no rejection."""

    n_uniforms = 1
    signed = True
    dimension = 1
    rejection = False
    acceptance = 1.0

    def __init__(self, scale: float) -> None:
        self.scale = float(scale)

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> np.ndarray:
        return np.ones(u_lo[0].shape, dtype=np.int8)

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        return True

    def _b(self, x: arb) -> arb:
        return x * arb(self.scale)


def _neg_log(q_lo: F64, q_hi: F64) -> tuple[F64, F64]:
    """Enclosure of −ln q over [q_lo, q_hi] (decreasing in q; +inf at q = 0)."""
    return -hi(np.log(q_hi), E), -lo(np.log(q_lo), E)


class LaplaceLaw(_Law):
    """|Z| = −b·ln q."""

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        return [_scale(*_neg_log(u_lo[0], u_hi[0]), self.scale)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(-us[0].log())]


class GaussianLaw(_Law):
    """|Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2)."""

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        a_lo = -hi(special.ndtri(u_hi[0] * 0.5), NDTRI_ERR)
        a_hi = -lo(special.ndtri(u_lo[0] * 0.5), NDTRI_ERR)
        return [_scale(a_lo, a_hi, self.scale)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(us[0].erfcinv() * arb(2).sqrt())]


class PolyPlaceLaw(_Law):
    """PolyPlace(s, α): tail q ≤ q_b: u = expm1((A − ln q)/α); core q ≥ q_b: u = −expm1(log1p(−(1−q)/c)/α).

    A = ln[(α+1)(1 − 1/α²)^α / K_α], c = (α−1)/K_α, q_b = (α+1)(1 − 1/α)^α / K_α (the tail mass),
    K_α = 2(1 − 1/α)^α + α − 1, all enclosed in arb (HT 2025, Definition 6; docs/theory/noise.md#polyplace).
    """

    def __init__(self, scale: float, alpha: float) -> None:
        super().__init__(scale)
        self.alpha = float(alpha)
        self.A = _const(lambda: self._consts()[0])
        self.c = _const(lambda: self._consts()[1])
        self.qb = _const(lambda: self._consts()[2])

    def _consts(self) -> tuple[arb, arb, arb]:
        a = arb(self.alpha)
        r = (a * (-1 / a).log1p()).exp()
        k = 2 * r + a - 1
        big_a = (a + 1).log() + a * (-1 / (a * a)).log1p() - k.log()
        return big_a, (a - 1) / k, (a + 1) * r / k

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        q_lo, q_hi = u_lo[0], u_hi[0]
        al = self.alpha
        # Tail.
        t_lo = lo(self.A[0] + hi(np.log(q_hi), E) * -1.0, B)
        t_hi = hi(self.A[1] - lo(np.log(q_lo), E), B)
        tail_lo = lo(np.expm1(lo(t_lo / al, B)), E)
        tail_hi = hi(np.expm1(hi(t_hi / al, B)), E)
        # Core (1 − q is exact: q is a multiple of 2⁻⁵² in [0, 1]).
        x_lo = lo((1.0 - q_hi) / self.c[1], B)
        x_hi = hi((1.0 - q_lo) / self.c[0], B)
        core_lo = -hi(np.expm1(hi(hi(np.log1p(-x_lo), E) / al, B)), E)
        core_hi = -lo(np.expm1(lo(lo(np.log1p(-x_hi), E) / al, B)), E)
        in_tail = q_hi <= self.qb[0]
        in_core = q_lo >= self.qb[1]
        a_lo = np.where(in_tail, tail_lo, np.where(in_core, core_lo, np.nan))
        a_hi = np.where(in_tail, tail_hi, np.where(in_core, core_hi, np.nan))
        return [_scale(a_lo, a_hi, self.scale)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        q = us[0]
        big_a, c, qb = self._consts()
        a = arb(self.alpha)
        if q < qb:
            u = ((big_a - q.log()) / a).expm1()
        elif q > qb:
            u = -((-(1 - q) / c).log1p() / a).expm1()
        else:
            return [arb.nan()]
        return [self._b(u)]


class StudentTLaw(_Law):
    """|T| = σ·√(ν·expm1(−(2/ν)·ln W))·sin(πw/2): Bailey's polar form with the angle explicit."""

    n_uniforms = 2

    def __init__(self, scale: float, df: float) -> None:
        super().__init__(scale)
        self.df = float(df)
        self.two_over = _const(lambda: 2 / arb(self.df))
        self.half_pi = _const(lambda: arb.pi() / 2)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        d = self.df
        # Radius part, decreasing in W.
        g_lo = lo(-hi(np.log(u_hi[0]), E) * self.two_over[0], B)
        g_hi = hi(-lo(np.log(u_lo[0]), E) * self.two_over[1], B)
        r_lo = lo(np.sqrt(lo(lo(np.expm1(g_lo), E) * d, B)), E)
        r_hi = hi(np.sqrt(hi(hi(np.expm1(g_hi), E) * d, B)), E)
        # Angle part, increasing in w on [0, 1].
        th_lo = lo(u_lo[1] * self.half_pi[0], B)
        th_hi = hi(u_hi[1] * self.half_pi[1], B)
        s_lo = lo(np.sin(th_lo), E)
        s_hi = np.where(th_hi >= self.half_pi[0], 1.0, hi(np.sin(th_hi), E))
        return [_scale(lo(r_lo * s_lo, B), hi(r_hi * s_hi, B), self.scale)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        d = arb(self.df)
        r = (d * (-(2 / d) * us[0].log()).expm1()).sqrt()
        return [self._b(r * (us[1] / 2).sin_pi())]


# Widening factors for a float y approximating a real t of known sign (one multiply instead of lo()/hi()'s
# three operations). Elementary functions (|y − t| ≤ E|t|, E = ELEM_ERR ≥ 2⁵·2⁻⁵³): the rounded y·(1 ∓ 2E)
# is ≤ t (≥ t) for t > 0, since (1 + E)(1 − 2E)(1 + 2⁻⁵³) < 1 < (1 − E)(1 + 2E)(1 − 2⁻⁵³); swap them for
# t < 0. One correctly rounded + − × ÷ with a normal result: y(1 − 2⁻⁵²) ≤ pred(y) ≤ t and
# y(1 + 2⁻⁵²) ≥ succ(y) ≥ t (|y| ≥ 2^e gives |y|·2⁻⁵² ≥ one ulp), and rounding keeps those floats.
_DN_B = 1.0 - 2.0 * B
_UP_B = 1.0 + 2.0 * B
_DN_E = 1.0 - 2.0 * E
_UP_E = 1.0 + 2.0 * E
#: Candidates per vectorized pass of the generalized Cauchy sampler (the temporaries stay in cache).
_CHUNK = 1 << 14
_MAX_FLOAT = float(np.finfo(np.float64).max)
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
        self.w0 = _const(lambda: (arb(g) - 1) / arb(g))
        self.inv = _const(lambda: 1 / (arb(g) - 1))
        self.pw = _const(lambda: arb(g) / (arb(g) - 1))  # 1/w₀, and the tail's acceptance power
        # x = s^{−1/(γ−1)} without exp/log (whose error grows with |ln s|) when 1/(γ−1) is exactly 1, 2,
        # 1/2 or 1/3 (γ = 2, 1.5, 3, 4): 1/s, 1/s², 1/√s, 1/∛s.
        self.tail_power: float | None = {2.0: 1.0, 1.5: 2.0, 3.0: 0.5, 4.0: 1.0 / 3.0}.get(g)

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
        g = arb(self.gamma)
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
        a = 1 / (1 + (arb(self.gamma) * m.log()).exp())
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

    def _x_fast(self, u_lo: F64, u_hi: F64) -> tuple[F64, F64]:
        """Enclosure of x(U) over the boxes (nan where a box straddles w₀), in cache-sized chunks."""
        x_lo = np.empty(u_lo.shape)
        x_hi = np.empty(u_lo.shape)
        for start in range(0, u_lo.size, _CHUNK):
            part = slice(start, start + _CHUNK)
            x_lo[part], x_hi[part] = self._x_chunk(u_lo[part], u_hi[part])
        return x_lo, x_hi

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        return [_scale(*self._x_fast(u_lo[0], u_hi[0]), self.scale)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        x = self._x_ball(us[0])
        return [arb.nan() if x is None else self._b(x)]


class PlanarLaplaceLaw(_Law):
    """Y = b(ln(1/U₁) + ln(1/U₂))·(cos 2πU₃, sin 2πU₃); the float path reduces the angle to an octant."""

    n_uniforms = 3
    signed = False
    dimension = 2

    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.quarter_pi = _const(lambda: arb.pi() / 4)

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        a1_lo, a1_hi = _neg_log(u_lo[0], u_hi[0])
        a2_lo, a2_hi = _neg_log(u_lo[1], u_hi[1])
        r_lo, r_hi = _scale(lo(a1_lo + a2_lo, B), hi(a1_hi + a2_hi, B), self.scale)
        # θ = (o + f)·π/4, o the octant; odd octants use θ = b·π/2 − (1 − f)·π/4.
        e_lo = u_lo[2] * 8.0  # exact
        o = np.floor(e_lo)
        f_lo = e_lo - o  # exact
        f_hi = u_hi[2] * 8.0 - o  # exact, ≤ 1
        odd = (o % 2) == 1
        g_lo = np.where(odd, 1.0 - f_hi, f_lo)  # exact
        g_hi = np.where(odd, 1.0 - f_lo, f_hi)
        p_lo = lo(g_lo * self.quarter_pi[0], B)
        p_hi = hi(g_hi * self.quarter_pi[1], B)
        cos_lo = lo(np.cos(p_hi), E)
        cos_hi = np.minimum(hi(np.cos(p_lo), E), 1.0)
        sin_lo = lo(np.sin(p_lo), E)
        sin_hi = hi(np.sin(p_hi), E)
        b = np.where(odd, (o + 1) / 2, o / 2) % 4
        # (cos θ, sin θ) = rot_b(cos ψ, sin ψ), sin ψ = ±sin|ψ| (− for odd octants):
        # b=0: (C, S), b=1: (−S, C), b=2: (−C, −S), b=3: (S, −C).
        sgn_s = np.where(odd, -1.0, 1.0)
        x_is_cos = (b == 0) | (b == 2)
        quarter = [b == 0, b == 1, b == 2, b == 3]
        x_sign = np.select(quarter, [1.0, -sgn_s, -1.0, sgn_s])
        y_sign = np.select(quarter, [sgn_s, 1.0, -sgn_s, -1.0])
        t_lo_x = np.where(x_is_cos, cos_lo, sin_lo)
        t_hi_x = np.where(x_is_cos, cos_hi, sin_hi)
        t_lo_y = np.where(x_is_cos, sin_lo, cos_lo)
        t_hi_y = np.where(x_is_cos, sin_hi, cos_hi)
        out = []
        for sign, t_lo, t_hi in ((x_sign, t_lo_x, t_hi_x), (y_sign, t_lo_y, t_hi_y)):
            m_lo = lo(r_lo * np.maximum(t_lo, 0.0), B)
            m_hi = hi(r_hi * t_hi, B)
            out.append((np.where(sign > 0, m_lo, -m_hi), np.where(sign > 0, m_hi, -m_lo)))
        return out

    def ball(self, us: Sequence[arb]) -> list[arb]:
        r = self._b(-us[0].log() - us[1].log())
        s, c = (2 * us[2]).sin_cos_pi()
        return [r * c, r * s]


class UniformLaw(_Law):
    """Z = U on [0, 1) (``uniform_on_grid`` puts c = lower and S = upper − lower)."""

    signed = False

    def fast(self, u_lo: list[F64], u_hi: list[F64]) -> list[tuple[F64, F64]]:
        return [(u_lo[0], u_hi[0])]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [us[0]]
