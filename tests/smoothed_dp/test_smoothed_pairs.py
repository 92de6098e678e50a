"""The pair reduction for m ≥ 3 (smoothdp.smoothed_dp.pairs) against exact rational enumeration.

Every reference comes from tests/smoothed_dp/smoothed_brute.py (Fractions, every output and neighbour
enumerated); nothing is taken from the code under test.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import smoothed_brute as brute

from smoothdp.smoothed_dp import SamplingHistogram, smoothed_delta
from smoothdp.smoothed_dp.pairs import (
    histograms_log_profile,
    log_pair_divergence,
    log_pair_profile,
    trinomial_log_expected_delta,
)

REL = 1e-12


def _ln(x: Fraction) -> float:
    return -math.inf if x == 0 else math.log(x.numerator) - math.log(x.denominator)


HISTOGRAMS = [
    (3, 2, 1),
    (4, 0, 2),  # an empty category
    (0, 0, 6),  # two empty categories
    (2, 2, 1, 1),
    (5, 0, 1, 0),
    (1, 1, 1, 2, 1),
    (0, 3, 0, 2, 1),
]


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("eps", [0.3, 1.5])
def test_profiles_match_enumeration_for_m_3_4_5(replace, eps):
    for h in HISTOGRAMS:
        n = sum(h)
        t = n - 2 if not replace else 3
        param = t if replace else n - t
        got = float(histograms_log_profile(np.array([h]), param, eps, replace=replace)[0])
        exact = brute.shm_profile(h, t, eps, replace)
        if exact == 0:
            assert got == -math.inf, h
        else:
            # an upper bound (rounded up), tight to ~1e-12 relative
            assert got >= _ln(exact) - 1e-13, h
            assert got - _ln(exact) < REL, (h, got, _ln(exact))


def test_vectorized_profiles_agree_row_by_row():
    hists = np.array([(3, 2, 1), (4, 0, 2), (0, 0, 6), (1, 4, 1)])
    together = histograms_log_profile(hists, 2, 1.0, replace=False)
    alone = [histograms_log_profile(h[None, :], 2, 1.0, replace=False)[0] for h in hists]
    assert np.array_equal(together, alone)


@pytest.mark.parametrize("replace", [False, True])
def test_pair_table_is_label_free(replace):
    # D(h; a→b) depends only on (h_a + h_b, h_a): permuting the other categories changes nothing
    eps, param = 0.7, 2
    for h in [(2, 1, 3, 0), (2, 1, 0, 3), (2, 1, 1, 2)]:
        t = param if replace else sum(h) - param
        law = brute.shm_law(h, t, replace)
        nb = (h[0] - 1, h[1] + 1, *h[2:])
        exact = brute.divergence(law, brute.shm_law(nb, t, replace), Fraction(math.exp(eps)))
        got = float(log_pair_divergence(sum(h), param, eps, 3, 2, replace=replace))
        assert abs(got - _ln(exact)) < REL


@pytest.mark.parametrize("n,t,eps", [(5, 4, 0.5), (6, 4, 1.0), (7, 5, 2.0)])
def test_smoothed_delta_three_categories_matches_enumeration(n, t, eps):
    verts = [(0.6, 0.3, 0.1), (0.1, 0.2, 0.7)]
    mech = SamplingHistogram(size=t)
    got = smoothed_delta(mech, eps, n, verts)
    fr = [tuple(Fraction(v).limit_denominator(10**6) for v in row) for row in verts]
    exact, _mixture = brute.smoothed_delta(n, lambda h: brute.shm_profile(h, t, eps), fr)
    assert got.log_delta >= _ln(exact) - 1e-13
    assert got.log_delta - _ln(exact) < 1e-9  # the vertices are rounded to 1e-6 rationals in the reference


@pytest.mark.parametrize("replace", [False, True])
def test_trinomial_expectation_matches_enumeration(replace):
    n, eps = 7, 0.8
    t = 5 if not replace else 4
    param = t if replace else n - t
    pi = (Fraction(1, 2), Fraction(3, 10), Fraction(1, 5))
    exact = sum(
        brute.multinomial(h, pi) * brute.shm_profile(h, t, eps, replace) for h in brute.compositions(n, 3)
    )
    got = trinomial_log_expected_delta(n, param, eps, [0.5, 0.3, 0.2], replace=replace)
    assert got >= _ln(exact) - 1e-13
    assert got - _ln(exact) < 1e-12


def test_trinomial_expectation_large_epsilon_oracle():
    # large ε: E[δ] for one vertex is max_a (1 − π_a)^L
    # (docs/theory/smoothed-dp.md#binary-hypergeometric-closed-form)
    n, lost, pi = 2000, 4, [0.7, 0.25, 0.05]
    got = trinomial_log_expected_delta(n, lost, 30.0, pi, replace=False)
    assert got >= lost * math.log1p(-0.05) - 1e-12
    assert got - lost * math.log1p(-0.05) < 1e-9


def test_parameter_errors():
    with pytest.raises(ValueError, match="1 ≤ k ≤ s ≤ n"):
        log_pair_divergence(10, 2, 1.0, 3, 4, replace=False)
    with pytest.raises(ValueError, match="1 ≤ k ≤ s ≤ n"):
        log_pair_divergence(10, 2, 1.0, 11, 4, replace=False)
    with pytest.raises(ValueError, match="0 ≤ k ≤ s ≤ n"):
        log_pair_profile(10, 2, 1.0, 3, -1, replace=False)
    with pytest.raises(ValueError, match="one total n"):
        histograms_log_profile(np.array([[1, 2, 3], [1, 2, 4]]), 2, 1.0, replace=False)
