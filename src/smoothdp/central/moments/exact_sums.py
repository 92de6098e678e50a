"""Exact sums of squares and exact variances of floats, as rationals (docs/central.md#exact-statistics).

The mean's exact value comes from :func:`~smoothdp.central.smooth_sensitivity.statistics.exact_sum`; the
variance needs Σ x_i² exactly too, and a float square is rounded. Each square is written as a sum of three
exact float products (Veltkamp's split, Dekker 1971): x = h + l with h = fl(c·x) − fl(fl(c·x) − x), c = 2^27 +
1, where h has at most 26 significant bits and l = x − h at most 27 (with its sign), so h², 2·h·l and l² are
exact floats whenever they neither overflow nor underflow, and x² = h² + 2hl + l² exactly. Records are first
scaled by a power of two into [2^-480, 2^500) (exact: only the exponent changes), in three groups (|x| ≥ 2^500
by 2^-600, |x| < 2^-480 by 2^600, the rest as they are), so that every product lies in [2^-1000, 2^1000]; each
group's three product arrays are summed exactly by :func:`exact_sum` and divided by its scale squared.
Vectorized over the records; about 3 ms for 10^5 records.

The variance is then (n·Σx² − (Σx)²)/(n·(n − ddof)), a :class:`~fractions.Fraction`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from smoothdp.central.smooth_sensitivity.statistics import exact_sum

__all__ = ["exact_sum_of_squares", "exact_variance"]

#: Veltkamp's splitting constant for binary64: 2^27 + 1.
_SPLITTER = 134217729.0
#: (lower magnitude, upper magnitude, power-of-two exponent applied) of the three groups.
_GROUPS = ((0.0, 2.0**-480, 600), (2.0**-480, 2.0**500, 0), (2.0**500, np.inf, -600))


def _exact_squares(v: np.ndarray) -> Fraction:
    """Σ v_i² exactly for finite floats with |v_i| in [2^-480, 2^500) (or zero)."""
    c = _SPLITTER * v
    high = c - (c - v)
    low = v - high
    return exact_sum(high * high) + 2 * exact_sum(high * low) + exact_sum(low * low)


def exact_sum_of_squares(values: ArrayLike) -> Fraction:
    """Σ x_i² exactly, as a :class:`~fractions.Fraction` (finite floats; see the module docstring)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("exact_sum_of_squares needs finite values (a caller bug, not a data condition)")
    mag = np.abs(x)
    total = Fraction(0)
    for low, high, shift in _GROUPS:
        part = x[(mag >= low) & (mag < high)]
        if part.size:
            total += _exact_squares(np.ldexp(part, shift)) / Fraction(2) ** (2 * shift)
    return total


def exact_variance(values: ArrayLike, ddof: int = 1) -> Fraction:
    """The variance (1/(n − ddof))·Σ(x_i − x̄)² of finite floats, exactly: (nΣx² − (Σx)²)/(n(n − ddof)).

    n > ddof is required (a public condition under substitution, where n is public)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    n = x.size
    if n <= ddof:
        raise ValueError(f"the variance with ddof={ddof} needs more than {ddof} record(s); got n={n}")
    total = exact_sum(x)
    return (n * exact_sum_of_squares(x) - total * total) / (n * (n - ddof))
