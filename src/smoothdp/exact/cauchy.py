"""The generalized Cauchy law GC(γ) on the exact path: rejection sampling with every acceptance decided
exactly (docs/theory/floating-point.md#the-samplers).

Envelope 1 on [0, 1) and x^{−γ} beyond, for |Z|: x(U) = U/w₀ for U < w₀ = (γ−1)/γ, else s^{−1/(γ−1)}
with s = γ(1 − U); V < a(x) = 1/(1 + min(x, 1/x)^γ) accepts (the float sampler's envelope). The
acceptance test decides how many words are drawn, so it is evaluated in binary64 exactly as before; the
accepted draw x is enclosed in the boxes' format (binary64, or long double for the undecided few).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import (
    BASIC_ERR as B,
)
from smoothdp.exact._core import (
    ELEM_ERR as E,
)
from smoothdp.exact._core import (
    F64,
    U64,
    Candidates,
    Uniform,
    accept_slow,
    draw_words,
)
from smoothdp.exact.arithmetic import BINARY64, Arithmetic, arithmetic_of
from smoothdp.exact.cauchy_screen import ASK, screen_for
from smoothdp.exact.laws import LawBase, Scratch, arb_constant

if TYPE_CHECKING:
    from flint import arb

__all__ = ["GeneralizedCauchyLaw"]

# Widening factors of the acceptance test (binary64) for a float y approximating a real t of known
# sign (one multiply instead of three operations). Elementary functions (|y − t| ≤ E|t|,
# E = ELEM_ERR ≥ 2⁵·2⁻⁵³): the rounded y·(1 ∓ 2E) is ≤ t (≥ t) for t > 0, since
# (1 + E)(1 − 2E)(1 + 2⁻⁵³) < 1 < (1 − E)(1 + 2E)(1 − 2⁻⁵³); swap them for t < 0. One correctly
# rounded + − × ÷ with a normal result: y(1 − 2⁻⁵²) ≤ pred(y) ≤ t and y(1 + 2⁻⁵²) ≥ succ(y) ≥ t
# (|y| ≥ 2^e gives |y|·2⁻⁵² ≥ one ulp), and rounding keeps those floats.
_DN_B = 1.0 - 2.0 * B
_UP_B = 1.0 + 2.0 * B
_DN_E = 1.0 - 2.0 * E
_UP_E = 1.0 + 2.0 * E
#: Candidates per vectorized pass of the acceptance test (the temporaries stay in cache).
_CHUNK = 1 << 14
_MAX_FLOAT = float(np.finfo(np.float64).max)
#: Bits of the acceptance uniform V in the candidate's own word.
_V_BITS = 10
_U_BITS = 53


def _in(ar: Arithmetic, bounds: Any) -> tuple[Any, Any]:
    return ar.bounds(bounds[0])[0], ar.bounds(bounds[1])[1]


def _w0(g: float) -> arb:
    """w₀ = (γ − 1)/γ."""
    return (flint.arb(g) - 1) / flint.arb(g)


def _inv(g: float) -> arb:
    """1/(γ − 1)."""
    return 1 / (flint.arb(g) - 1)


def _pw(g: float) -> arb:
    """γ/(γ − 1) = 1/w₀, also the tail's acceptance power."""
    return flint.arb(g) / (flint.arb(g) - 1)


class GeneralizedCauchyLaw(LawBase):
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
        # w₀ = (γ−1)/γ, 1/(γ−1) and γ/(γ−1) = 1/w₀ (also the tail's acceptance power), in binary64 for the
        # acceptance test (unchanged: it decides how many words are drawn).
        self.w0 = _in(BINARY64, arb_constant(_w0, g))
        self.inv = _in(BINARY64, arb_constant(_inv, g))
        self.pw = _in(BINARY64, arb_constant(_pw, g))
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

    def _first_states(self, words: U64) -> NDArray[np.int8]:
        """The binary64 test's states of the candidate words (:meth:`_coarse_state`), the integer screen
        deciding first where that test is sure to agree (:mod:`smoothdp.exact.cauchy_screen`)."""
        screen = screen_for(self.gamma, (float(self.w0[0]), float(self.w0[1])))
        state = np.empty(words.shape[0], dtype=np.int8)
        with np.errstate(all="ignore"):  # log 0 = −inf and exp underflow are part of the bounds
            for start in range(0, words.shape[0], _CHUNK):
                part = words[start : start + _CHUNK]
                st = screen.state(part)
                ask = np.flatnonzero(st == ASK)
                if ask.size:
                    st[ask] = self._coarse_state(part[ask])
                state[start : start + _CHUNK] = st
        return state

    def draw_accepted(self, n: int, rng: Any) -> Candidates:
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
            state = self._first_states(words)
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
                ok, us = accept_slow(self, list(slow[i]), rng)
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
        return Candidates(np.concatenate(neg_parts), [np.concatenate(k_parts)], [_U_BITS], refined)

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
    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        e, u = ar.elem, ar.unit
        return SimpleNamespace(
            w0=_in(ar, arb_constant(_w0, self.gamma)),
            inv=_in(ar, arb_constant(_inv, self.gamma)),
            pw=_in(ar, arb_constant(_pw, self.gamma)),
            # One rounding: y(1 ∓ 2u) is beyond pred(y)/succ(y); an elementary call: y(1 ∓ 2E).
            dn_b=ar.down(2 * u),
            up_b=ar.up(2 * u),
            dn_e=ar.down(2 * e),
            up_e=ar.up(2 * e),
            k_lo=ar.shrink(self.scale),  # the enclosure of x times s: one product
            k_hi=ar.grow(self.scale),
        )

    def _x_chunk(self, u_lo: F64, u_hi: F64, k: SimpleNamespace | None = None) -> tuple[F64, F64]:
        """Enclosure of x(U) over the boxes (nan where a box straddles w₀), in the boxes' format; each box
        is evaluated on its own branch only."""
        k = k if k is not None else self.constants(arithmetic_of(u_lo))
        x_lo = np.full(u_lo.shape, np.nan, dtype=u_lo.dtype)
        x_hi = x_lo.copy()
        core = np.flatnonzero(u_hi <= k.w0[0])
        if core.size:  # x = U·(1/w₀) ≤ 1
            c_lo = u_lo[core] * k.pw[0]
            c_lo *= k.dn_b
            c_hi = u_hi[core] * k.pw[1]
            c_hi *= k.up_b
            x_lo[core] = c_lo
            x_hi[core] = np.minimum(c_hi, 1.0, out=c_hi)
        tail = np.flatnonzero(u_lo >= k.w0[1])
        if tail.size:
            x_lo[tail], x_hi[tail] = self._tail(u_lo[tail], u_hi[tail], k)
        return x_lo, x_hi

    def _tail(self, u_lo: F64, u_hi: F64, k: SimpleNamespace) -> tuple[F64, F64]:
        """x = s^{−1/(γ−1)}, decreasing in s = γ(1 − U) ∈ (0, 1], so increasing in U (1 − U exact)."""
        g = self.gamma
        s_lo = g * (1.0 - u_hi)
        s_lo *= k.dn_b
        s_hi = g * (1.0 - u_lo)
        s_hi *= k.up_b
        np.minimum(s_hi, 1.0, out=s_hi)
        if self.tail_power is not None:
            x_lo, x_hi = self._tail_power(s_lo, s_hi, k)
        else:
            x_lo, x_hi = self._tail_exp(s_lo, s_hi, k)
        # An exp that overflows gives x_lo = inf, no lower bound of a real x: cap it at the largest float
        # (the engine's widening would also turn it into nan), so c + S·x stays undecided, not inf.
        np.clip(x_lo, 1.0, _MAX_FLOAT, out=x_lo)
        return x_lo, x_hi

    def _tail_power(self, s_lo: F64, s_hi: F64, k: SimpleNamespace) -> tuple[F64, F64]:
        """x ∈ [1/d(s_hi), 1/d(s_lo)] for d(s) = s, s², √s or ∛s (s_lo ≥ γ·2⁻⁵³·(1 − 2⁻⁵²) or 0).

        √ and ∛ are taken as elementary functions (relative error ≤ E; ∛ measured in
        tests/exact/test_generalized_cauchy_exact.py).
        """
        if self.tail_power == 2.0:
            d_lo = s_lo * s_lo
            d_lo *= k.dn_b
            d_hi = s_hi * s_hi
            d_hi *= k.up_b
        elif self.tail_power in (0.5, 1.0 / 3.0):
            root = np.sqrt if self.tail_power == 0.5 else np.cbrt
            d_lo = root(s_lo)
            d_lo *= k.dn_e
            d_hi = root(s_hi)
            d_hi *= k.up_e
        else:
            d_lo, d_hi = s_lo, s_hi
        x_hi = np.divide(1.0, d_lo)  # s_lo = 0: +inf
        x_hi *= k.up_b
        x_lo = np.divide(1.0, d_hi)
        x_lo *= k.dn_b
        return x_lo, x_hi

    def _tail_exp(self, s_lo: F64, s_hi: F64, k: SimpleNamespace) -> tuple[F64, F64]:
        """x = exp(−ln(s)/(γ−1)) ∈ [x(s_hi), x(s_lo)]."""
        t_hi = np.log(s_lo)  # ln s ≤ 0: −ln(s)/(γ−1) ≥ 0, its upper end from the lower s
        t_hi *= -k.up_e
        t_hi *= k.inv[1]
        t_hi *= k.up_b
        t_lo = np.log(s_hi)
        t_lo *= -k.dn_e
        t_lo *= k.inv[0]
        t_lo *= k.dn_b
        x_lo = np.exp(t_lo, out=t_lo)
        x_lo *= k.dn_e
        x_hi = np.exp(t_hi, out=t_hi)
        x_hi *= k.up_e
        return x_lo, x_hi

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        k = self.constants(arithmetic_of(u_lo[0]))
        x_lo, x_hi = self._x_chunk(u_lo[0], u_hi[0], k)
        x_lo *= k.k_lo  # x_lo ≤ MAX: an overflow means s·x > MAX, so MAX stays a lower end
        np.minimum(x_lo, _MAX_FLOAT, out=x_lo)
        x_hi *= k.k_hi
        return [(x_lo, x_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        x = self._x_ball(us[0])
        return [flint.arb.nan() if x is None else self._b(x)]
