"""Exact discrete draws from lazily refined uniform bits (smoothdp.exact.bits): frequencies against the exact
probabilities, and the decision made by exact comparisons (a probability one ulp away from 1/2 is still
told apart from 1/2 with enough bits)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from smoothdp.exact.bits import bernoulli, rational_choice, uniform_bits
from smoothdp.rng import default_rng


def test_uniform_bits_are_64_bit_words():
    rng = default_rng(1)
    words = [uniform_bits(rng) for _ in range(2000)]
    assert all(0 <= w < 2**64 for w in words)
    assert 0.45 < np.mean([w >> 63 for w in words]) < 0.55


@pytest.mark.parametrize(("num", "den"), [(1, 3), (2, 7), (0, 5), (5, 5), (999, 1000)])
def test_bernoulli_has_the_exact_probability(num, den):
    rng = default_rng(2)
    hits = sum(bernoulli(num, den, rng) for _ in range(4000))
    if num in (0, den):
        assert hits == (0 if num == 0 else 4000)
    else:
        assert stats.binomtest(hits, 4000, num / den).pvalue > 1e-4


def test_bernoulli_decides_probabilities_closer_than_any_float():
    """p = 1/2 + 2^-200: the draw equals the one for 1/2 except when U falls in a set of measure 2^-200, so
    both agree on every seed here, and no float comparison was needed to decide."""
    p = Fraction(1, 2) + Fraction(1, 2**200)
    for seed in range(50):
        a = bernoulli(p.numerator, p.denominator, default_rng(seed))
        b = bernoulli(1, 2, default_rng(seed))
        assert a == b


def test_rational_choice_matches_its_weights():
    weights = [Fraction(1, 3), Fraction(0), Fraction(1, 6), Fraction(1, 2)]
    rng = default_rng(3)
    counts = np.bincount([rational_choice(weights, rng) for _ in range(6000)], minlength=4)
    assert counts[1] == 0
    expected = np.array([2000.0, 1000.0, 3000.0])
    assert stats.chisquare(counts[[0, 2, 3]], expected).pvalue > 1e-4
