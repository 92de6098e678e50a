"""Exact discrete draws from lazily refined uniform bits: a Bernoulli with a rational probability and a
categorical draw with rational weights.

A uniform U on [0, 1) is drawn 64 bits at a time, U ∈ [A/2^L, (A + 1)/2^L); a draw is returned as soon
as every U in that dyadic interval gives the same answer, by exact integer (or rational) comparisons.
The answer is therefore exactly the one of the ideal real U: probability num/den for the Bernoulli,
w_k/Σw for the categorical draw (docs/theory/quantiles.md#sampling-exactly-from-float-weights).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

__all__ = ["bernoulli", "rational_choice", "uniform_bits"]


def uniform_bits(rng: np.random.Generator) -> int:
    """64 uniform bits from the generator, as a Python int in [0, 2^64)."""
    return int.from_bytes(rng.bytes(8), "little")


def bernoulli(num: int, den: int, rng: np.random.Generator) -> bool:
    """True with probability exactly num/den (0 ≤ num ≤ den, den > 0)."""
    a, bits = 0, 0
    while True:
        a = (a << 64) | uniform_bits(rng)
        bits += 64
        scaled = num << bits  # U ∈ [a, a + 1)/2^bits; U < num/den ⟺ U·den < num
        if (a + 1) * den <= scaled:
            return True
        if a * den >= scaled:
            return False


def rational_choice(weights: Sequence[Fraction], rng: np.random.Generator) -> int:
    """An index drawn with probability exactly weights[k]/Σ weights (non-negative rationals, one positive),
    by comparing a lazily refined uniform with the exact prefix sums."""
    prefix = list(itertools.accumulate(weights))
    total = prefix[-1]
    a, bits = 0, 0
    while True:
        a = (a << 64) | uniform_bits(rng)
        bits += 64
        lo = Fraction(a, 1 << bits) * total
        hi = Fraction(a + 1, 1 << bits) * total
        k = next(idx for idx, p in enumerate(prefix) if p > lo)
        if hi <= prefix[k]:
            return k
