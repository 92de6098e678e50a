"""Exact draws from float weights (docs/theory/quantiles.md#sampling-exactly-from-float-weights).

The exponential-mechanism samplers compute their log weights in floats with a certified absolute error η
(:func:`log_weight_margin`, public) and then draw an index *exactly* in proportion to the float weights
(dyadic rationals f·2^k, :func:`dyadic_parts`): a float cumulative sum with a certified error bound against a
uniform whose bits are drawn lazily, with an exact integer fallback where the float comparison is undecided
(:func:`exact_categorical`).
"""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact.bits import uniform_bits as _uniform_bits
from smoothdp.keywords import check_keywords_of

__all__ = [
    "LIBM_ULPS",
    "UNIT_ROUNDOFF",
    "bracket_uniform",
    "dyadic_parts",
    "exact_categorical",
    "exact_categorical_tail",
    "float_below",
    "log_weight_margin",
    "uniform_words",
]

UNIT_ROUNDOFF = 2.0**-53  # unit roundoff of float64
#: Assumed worst error of numpy's float64 log and exp2, in ulps (they are documented at ≤ 4; we budget 64).
LIBM_ULPS = 64.0
#: Head of the exact sampler: weights within 2^-HEAD of the largest are summed in floats (normal numbers).
_HEAD = 960


#: Largest ε·(n + 1) the exact exponential-mechanism samplers accept (:func:`log_weight_margin`).
_MAX_EPSILON_N = 2.0**50


def log_weight_margin(*, epsilon: float, n: int, width: float | None) -> float:
    """A public bound η on |ln Ŵ_j − w_j|: the error of the float log weights (docs/theory/quantiles.md#
    sampling-exactly-from-float-weights).

    |w_j| ≤ 745 + |ln width| + ε(n + 1)/2 (interval log-lengths of floats lie in [ln 2^-1074, ln width]);
    each of the few float operations adds at most a few units of roundoff of that magnitude, and numpy's
    log / exp2 at most ``LIBM_ULPS`` ulps; we allow 4·LIBM_ULPS units in all.

    ε(n + 1) above 2^50 is refused (public: ε and n): the binary exponents of the weights must stay far
    inside int64, and no useful release needs such a budget.
    """
    if not epsilon * (n + 1.0) <= _MAX_EPSILON_N:
        raise ValueError(
            f"epsilon·(n + 1) must be at most 2^50 for the exponential mechanism's exact sampler; got "
            f"epsilon={epsilon:g} (this stage's share of the budget) with n={n}"
        )
    magnitude = 4.0 + epsilon * (n + 1.0)
    if width is not None:
        magnitude += 746.0 + abs(math.log(width))
    return 4.0 * LIBM_ULPS * 2.0 * UNIT_ROUNDOFF * magnitude


def dyadic_parts(logw: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Ŵ = f·2^k with f in [1, 2): the float weights the sampler draws from exactly (f = 0 for −inf)."""
    t = logw / math.log(2.0)
    live = np.isfinite(t)
    if live.all():  # the common case: no −inf weight, no masking needed
        k = np.floor(t)
        f = np.exp2(t - k)  # t − ⌊t⌋ is exact
        return k.astype(np.int64), f
    k = np.where(live, np.floor(np.where(live, t, 0.0)), 0.0)
    f = np.where(live, np.exp2(np.where(live, t, 0.0) - k), 0.0)  # t − ⌊t⌋ is exact
    return k.astype(np.int64), f


def exact_categorical(logw: ArrayLike, rng: np.random.Generator) -> int:
    """An index j drawn with probability exactly Ŵ_j / Σ Ŵ, where Ŵ_j = f_j·2^{k_j} are the float weights of
    the natural-log weights ``logw`` (−inf: weight 0). At least one weight must be positive.

    Fast path: float cumulative sums of the weights within 2^-960 of the largest, with the certified error
    bound |Ĉ_j − C_j| ≤ 2(j+1)u·Ĉ_j of a sequential sum of positive terms, against a 64-bit uniform;
    undecided comparisons (probability about n·2^-52) go to exact integer arithmetic with more uniform bits.
    """
    k, f = dyadic_parts(np.asarray(logw, dtype=np.float64))
    live = f > 0.0
    if not live.any():
        raise ValueError("exact_categorical needs at least one positive weight")
    everywhere = bool(live.all())
    top = int(k.max() if everywhere else k[live].max())
    rel = k - top
    head = rel >= -_HEAD
    if everywhere and head.all():  # every weight within 2^-960 of the largest: no tail, no masking
        v = np.ldexp(f, rel)
    else:
        head &= live
        v = np.where(head, np.ldexp(f, np.maximum(rel, -_HEAD).astype(np.int64)), 0.0)
    c = np.cumsum(v)
    m = c.size
    if (m + 2) * UNIT_ROUNDOFF < 1e-3:  # the certified bound below needs m·u small

        def err(j: int) -> float:  # the bound 2(j + 2)u·Ĉ_j on the float prefix sum Ĉ_j
            return 2.0 * (j + 2.0) * UNIT_ROUNDOFF * float(c[j])

        n_tail = int(np.count_nonzero(live & ~head))
        tail_bound = n_tail * 2.0**-_HEAD
        a = _uniform_bits(rng)
        total_lo = (c[-1] - err(m - 1)) * (1.0 - 4 * UNIT_ROUNDOFF)
        total_hi = (c[-1] + err(m - 1) + tail_bound) * (1.0 + 4 * UNIT_ROUNDOFF)
        x_lo = a * 2.0**-64 * total_lo * (1.0 - 4 * UNIT_ROUNDOFF)
        x_hi = (a + 1) * 2.0**-64 * total_hi * (1.0 + 4 * UNIT_ROUNDOFF)
        j = int(np.searchsorted(c, x_lo, side="right"))
        if j < m and x_hi < c[j] - err(j) and (j == 0 or c[j - 1] + err(j - 1) <= x_lo):
            return j
        return _exact_fallback(k, f, head, live, top, rng, first_bits=a)
    return _exact_fallback(k, f, head, live, top, rng, first_bits=_uniform_bits(rng))


def _exact_fallback(
    k: NDArray[np.int64],
    f: NDArray[np.float64],
    head: NDArray[np.bool_],
    live: NDArray[np.bool_],
    top: int,
    rng: np.random.Generator,
    *,
    first_bits: int,
) -> int:
    """Exact inversion with integer prefix sums and a lazily refined uniform U = A/2^L (A < 2^L)."""
    idx = np.flatnonzero(head)
    mant, exps = np.frexp(f[idx])  # f = mant·2^exps exactly, mant in [0.5, 1)
    ints = (mant * 2.0**53).astype(np.int64)
    shifts = (k[idx] - top) + exps.astype(np.int64) - 53  # weight = int·2^shift
    base = int(shifts.min())
    prefix = list(itertools.accumulate(int(i) << int(s - base) for i, s in zip(ints, shifts, strict=True)))
    h_total = prefix[-1]
    tail = live & ~head
    n_tail = int(np.count_nonzero(tail))
    # Tail sum ≤ n_tail·2^-HEAD relative to 2^top, i.e. ≤ n_tail·2^(-HEAD - base) in units of 2^base.
    tail_units = Fraction(n_tail) * Fraction(2) ** (-_HEAD - base)
    a, bits = first_bits, 64
    exact_tail: Fraction | None = None
    while True:
        lo = Fraction(a, 1 << bits) * h_total  # X ≥ U_lo·H
        t_hi = tail_units if exact_tail is None else exact_tail
        hi = Fraction(a + 1, 1 << bits) * (h_total + t_hi)
        j = bisect.bisect_right(prefix, lo)  # first prefix > lo
        if j < len(prefix) and hi <= prefix[j] and (j == 0 or prefix[j - 1] <= lo):
            return int(idx[j])
        if exact_tail is not None and n_tail and lo >= h_total:
            return int(np.flatnonzero(tail)[exact_categorical_tail(k[tail], f[tail], rng)])
        if exact_tail is None and n_tail and bits >= 4 * _HEAD:
            tk, tf = k[tail], f[tail]
            exact_tail = sum(
                (
                    Fraction(float(ff)) * Fraction(2) ** int(kk - top - base)
                    for kk, ff in zip(tk, tf, strict=True)
                ),
                Fraction(0),
            )
        a = (a << 64) | _uniform_bits(rng)
        bits += 64


def exact_categorical_tail(k: NDArray[np.int64], f: NDArray[np.float64], rng: np.random.Generator) -> int:
    """Exact draw among weights f·2^k (the tail of :func:`exact_categorical`), same algorithm."""
    top = int(k.max())
    rel = k - top
    live = f > 0
    head = live & (rel >= -_HEAD)
    return _exact_fallback(k, f, head, live, top, rng, first_bits=_uniform_bits(rng))


def float_below(y: Fraction) -> float:
    """The largest float ≤ y."""
    f = float(y)
    return f if Fraction(f) <= y else float(np.nextafter(f, -np.inf))


def bracket_uniform(lo: float, hi: float, words: int, rng: np.random.Generator) -> float:
    """A float f with f < Y < next(f) for Y uniform on (lo, hi), exactly (Y is a float with probability 0):
    ``words`` 64-bit words of Y's bits at once (public), more only when they do not decide (rare)."""
    base, span = Fraction(lo), Fraction(hi) - Fraction(lo)
    acc = 0
    for _ in range(words):
        acc = (acc << 64) | _uniform_bits(rng)
    bits = 64 * words
    while True:
        y_lo = base + span * Fraction(acc, 1 << bits)
        y_hi = base + span * Fraction(acc + 1, 1 << bits)
        f = float_below(y_lo)
        if Fraction(float(np.nextafter(f, np.inf))) >= y_hi:
            return f
        acc = (acc << 64) | _uniform_bits(rng)
        bits += 64


def uniform_words(lower: float, upper: float) -> int:
    """Words of a uniform's bits that place it between two adjacent floats, from the bounds (public)."""
    return max(1, math.ceil((math.log2(float(upper) - float(lower)) + 1074.0 + 64.0) / 64.0))


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
