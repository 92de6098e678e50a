"""A first screen of the generalized Cauchy acceptance test: integer thresholds on the candidate's bits.

The generalized Cauchy sampler (:mod:`smoothdp.exact.cauchy`) accepts a candidate when V < a(x(U)); its
binary64 test over U's first 53 bits and V's first 10 bits decides how many words are drawn (a candidate
it leaves undecided draws one more word for V), so the stream — hence every released value — depends on
exactly which candidates that test decides. This screen decides a candidate only where that test is sure
to decide it the same way, and hands every other candidate to that test unchanged, so the states, the
words drawn and the releases are those of the test alone
(docs/theory/floating-point.md#the-generalized-cauchy-acceptance-screen).

**Why it agrees.** Write k = U's 53 bits (U ∈ [k, k + 1]·2⁻⁵³), c = V's 10 bits, t = (c + 1)/1024 (accept)
or c/1024 (reject), a(r) = 1/(1 + r^P) decreasing in r, r = U/w₀ with P = γ (core, U < w₀ = (γ − 1)/γ)
or r = γ(1 − U) with P = γ/(γ − 1) (tail). The binary64 test computes r at the box's far corner within
a relative 2⁻⁵⁰ and then a_lo ≥ a(r⁺)·(1 − 5E), a_hi ≤ a(r⁻)·(1 + 5E) (E = ELEM_ERR: a log, a product, an
exp and a division, each error folded outward; the exp's relative error enters damped by e·|ln e| ≤ 1/e),
and accepts when a_lo·1024 ≥ c + 1, rejects when a_hi·1024 ≤ c. So it accepts whenever
a(r_far·(1 + 2⁻⁴⁰))·(1 − 2⁻³⁶) ≥ t, i.e. r_far ≤ T_acc = ((1 − 2⁻³⁶)/t − 1)^{1/P}/(1 + 2⁻⁴⁰), and rejects
whenever r_near ≥ T_rej = ((1 + 2⁻³⁶)/t − 1)^{1/P}/(1 − 2⁻⁴⁰). In terms of k these are integer thresholds
per c: accept if k + 1 ≤ KL_acc[c] (core) or k ≥ KR_acc[c] (tail); reject if k ≥ KL_rej[c] (core) or
k + 1 ≤ KR_rej[c] (tail); boxes straddling w₀ are the test's own state −2. The thresholds are computed
once per γ in binary64 with every rounding taken towards "undecided" and margins 2⁷ times the assumed
libm error (tests/exact/test_cauchy_screen.py checks them against arb and the screen against the test).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact._core import U64

__all__ = ["ASK", "Screen", "build_screen", "screen_for"]

_U_BITS = 53
_V_BITS = 10
_TWO53 = float(2**53)
#: Margins: in a (the acceptance probability) and in r (its argument); see the module docstring.
_A_MARGIN = 2.0**-36
_R_MARGIN = 2.0**-40
#: Relative slack for the few binary64 operations computing a threshold (each within 2⁻⁴⁷ at worst).
_SLACK = 2.0**-42
_NEVER = 2**62
_SHIFT_K = np.asarray(np.uint64(64 - _U_BITS))
_SHIFT_ONE = np.asarray(np.int64(1))
_V_MASK = np.asarray(np.int64((1 << _V_BITS) - 1))
_ONE = np.asarray(np.int64(1))

#: Screen states: the binary64 test's own (1 accept, 0 reject, −2 straddling w₀) and "ask the test".
ASK = 3


@dataclass(frozen=True)
class Screen:
    """Integer thresholds of one γ (module docstring), indexed by V's 10 bits c."""

    kl_acc: NDArray[np.int64]
    kr_acc: NDArray[np.int64]
    kl_rej: NDArray[np.int64]
    kr_rej: NDArray[np.int64]
    #: k + 1 ≤ k_core: the box lies in the core (u⁺ ≤ w₀⁻); k ≥ k_tail: in the tail (u⁻ ≥ w₀⁺).
    k_core: np.ndarray
    k_tail: np.ndarray

    def state(self, words: U64) -> NDArray[np.int8]:
        """1 accept, 0 reject, −2 straddling w₀, or :data:`ASK` for the candidate words ``words``."""
        w = words.view(np.int64)
        m = w.shape[0]
        k = np.right_shift(words, _SHIFT_K).view(np.int64)
        c = np.right_shift(w, _SHIFT_ONE)
        np.bitwise_and(c, _V_MASK, out=c)
        k1 = np.add(k, _ONE)
        thr = np.empty(m, dtype=np.int64)
        acc = np.less_equal(k1, np.take(self.kl_acc, c, out=thr))
        flag = np.greater_equal(k, np.take(self.kr_acc, c, out=thr))
        np.logical_or(acc, flag, out=acc)
        rej = np.greater_equal(k, np.take(self.kl_rej, c, out=thr))
        np.less_equal(k1, np.take(self.kr_rej, c, out=thr), out=flag)
        np.logical_and(rej, flag, out=rej)
        straddle = np.greater(k1, self.k_core)
        np.less(k, self.k_tail, out=flag)
        np.logical_and(straddle, flag, out=straddle)
        # state = 3 − 2·acc − 3·rej − 5·straddle (rej may hold on a straddling box: cleared first).
        np.greater(rej, straddle, out=rej)
        state = np.full(m, ASK, dtype=np.int8)
        state -= acc.view(np.int8) * np.int8(2)
        state -= rej.view(np.int8) * np.int8(3)
        state -= straddle.view(np.int8) * np.int8(5)
        return state


@lru_cache(maxsize=64)
def screen_for(gamma: float, w0: tuple[float, float]) -> Screen:
    """The thresholds of GC(γ), w₀ = (γ − 1)/γ enclosed by the floats ``w0`` (computed once per γ)."""
    return build_screen(gamma, w0, _A_MARGIN, _R_MARGIN, _SLACK)


def build_screen(
    gamma: float, w0: tuple[float, float], a_margin: float, r_margin: float, slack: float
) -> Screen:
    """The thresholds with the given margins (module docstring; the tests build a twin without them)."""
    g = float(gamma)
    inv_core, inv_tail = 1.0 / g, (g - 1.0) / g  # 1/P for the core and the tail
    c = np.arange(1 << _V_BITS, dtype=np.float64)
    k_core = int(np.floor(w0[0] * _TWO53))
    k_tail = int(np.ceil(w0[1] * _TWO53))
    lo, hi = 1.0 - slack, 1.0 + slack
    with np.errstate(all="ignore"):
        # Accept at t = (c + 1)/1024: lower ends of the r thresholds, every rounding covered by `lo`;
        # ((1 − margin)·1024 − (c + 1)) is exact, so the ratio (1 − margin)/t − 1 has one rounding.
        ratio = ((1.0 - a_margin) * 1024.0 - (c + 1.0)) / (c + 1.0) * lo
        t_core = np.power(ratio, inv_core) * (lo / (1.0 + r_margin))
        t_tail = np.power(ratio, inv_tail) * (lo / (1.0 + r_margin))
        kl_acc = np.floor(_TWO53 * w0[0] * t_core * lo)
        kr_acc = _TWO53 - np.floor(_TWO53 * t_tail / g * lo)
        no_acc = ~(ratio > 0.0)
        kl_acc[no_acc] = -1.0
        kr_acc[no_acc] = float(_NEVER)
        # Reject at t = c/1024 (c ≥ 1): upper ends, every rounding covered by `hi`.
        ratio = ((1.0 + a_margin) * 1024.0 - c) / c * hi
        t_core = np.power(ratio, inv_core) * (hi / (1.0 - r_margin))
        t_tail = np.power(ratio, inv_tail) * (hi / (1.0 - r_margin))
        kl_rej = np.ceil(_TWO53 * w0[1] * t_core * hi)
        kr_rej = _TWO53 - np.ceil(_TWO53 * t_tail / g * hi)
        no_rej = ~np.isfinite(ratio)
        kl_rej[no_rej] = float(_NEVER)
        kr_rej[no_rej] = -1.0
    return Screen(
        kl_acc=np.minimum(kl_acc, k_core).astype(np.int64),
        kr_acc=np.maximum(kr_acc, k_tail).astype(np.int64),
        kl_rej=np.nan_to_num(kl_rej, nan=_NEVER, posinf=_NEVER).astype(np.int64),
        kr_rej=np.nan_to_num(kr_rej, nan=-1.0, neginf=-1.0).astype(np.int64),
        k_core=np.asarray(np.int64(k_core)),
        k_tail=np.asarray(np.int64(k_tail)),
    )
