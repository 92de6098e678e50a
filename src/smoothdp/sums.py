"""Exact sums of floats: the one place where the library adds records without rounding.

It sits below both the statistics (:mod:`smoothdp.central`) and the engines (:mod:`smoothdp.scale`), which
both sum records exactly (the mean and trimmed mean release around an exact rational; the engines' exact sums
over open intervals of values).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["exact_sum"]

#: frexp exponents of finite non-zero doubles lie in [-1073, 1024]; bin = exponent + _OFFSET.
_OFFSET = 1074
_NBINS = 1024 + _OFFSET + 1
#: 3·2^77: adding and subtracting it rounds |M| < 2^53 to the nearest multiple of 2^26, exactly.
_ROUNDER = 3.0 * 2.0**77
#: Records per vectorized chunk (cache-sized buffers) and per exact float accumulation (< 2^26 records).
_CHUNK = 8192
_FLUSH = 1 << 25


def exact_sum(values: ArrayLike) -> Fraction:
    """The exact sum of finite floats, as a :class:`~fractions.Fraction` (no rounding at all).

    Each x = M·2^(e−53) with an integer mantissa |M| < 2^53 (``np.frexp``); M = H + L with H the nearest
    multiple of 2^26 and |L| ≤ 2^25, both exact in floats. ``np.bincount`` sums H and L per exponent e:
    every partial sum is a multiple of 2^26 below 2^79 (resp. an integer below 2^53) for fewer than 2^26
    records, so the float sums are exact; they are moved to Python integers every 2^25 records. The ≤ 2099
    per-exponent totals are combined in Python integers. Vectorized over the records (chunks of 8192);
    ~0.7 ms for 10^5 records.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    total = 0
    for start in range(0, x.size, _FLUSH):
        part = x[start : start + _FLUSH]
        high = np.zeros(_NBINS)
        low = np.zeros(_NBINS)
        for s in range(0, part.size, _CHUNK):
            m, e = np.frexp(part[s : s + _CHUNK])
            m *= 9007199254740992.0  # 2^53: M, an exact integer
            h = m + _ROUNDER
            h -= _ROUNDER
            m -= h  # L = M − H
            idx = e.astype(np.intp)
            idx += _OFFSET
            high += np.bincount(idx, weights=h, minlength=_NBINS)
            low += np.bincount(idx, weights=m, minlength=_NBINS)
        for k in np.flatnonzero((high != 0) | (low != 0)):
            total += (int(high[k]) + int(low[k])) << int(k)
    return Fraction(total, 1 << (53 + _OFFSET))
