"""Oracles and properties at realistic sizes: large-ε value, DP δ, monotonicity, search vs enumeration."""

import itertools
import math

import numpy as np
import pytest

from smoothdp.smoothed_dp import SamplingHistogram, binary_privacy_profile, privacy_profile, smoothed_delta
from smoothdp.smoothed_dp._logmath import log_binom_pmf, logsumexp_or_neginf
from smoothdp.smoothed_dp.binary import mixture_expected_delta
from smoothdp.smoothed_dp.montecarlo import monte_carlo_delta
from smoothdp.smoothed_dp.theory import large_epsilon_delta

DC = 317_323 / (317_323 + 18_586)  # 2020 two-party Biden share, from the vote counts
NE3 = 65_854 / (65_854 + 222_179)
PI = [[DC, 1 - DC], [NE3, 1 - NE3]]


@pytest.mark.parametrize(
    ("n", "eta", "eps"), [(100_000, 0.998, 7.0), (20_000, 0.99, 9.0), (300_000, 0.9, 12.0)]
)
def test_large_epsilon_oracle(n, eta, eps):
    """δ_SDP = max over vertices and categories of (1 − π(a))^L when e^ε dominates (notes §3)."""
    mech = SamplingHistogram(eta=eta)
    result = smoothed_delta(mech, eps, n, PI)
    oracle = large_epsilon_delta(mech.removed(n), PI)
    assert result.log10_delta == pytest.approx(oracle, rel=1e-10)
    assert result.mixture == (0, n)  # all records from the DC vertex


def test_large_epsilon_oracle_reaches_below_the_float_range():
    mech = SamplingHistogram(eta=0.9)
    result = smoothed_delta(mech, 12.0, 300_000, PI)
    assert result.delta == 0.0 and result.log10_delta < -700


def test_dp_delta_is_the_maximum_of_the_profile():
    for replace in (False, True):
        mech = SamplingHistogram(eta=0.7, replace=replace)
        for eps in (0.1, 1.0, 5.0):
            profile = np.exp(binary_privacy_profile(mech, 300, eps))
            assert profile.max() == pytest.approx(mech.dp_delta(300), rel=1e-12)


@pytest.mark.parametrize("replace", [False, True])
def test_smoothed_delta_below_dp_and_nonincreasing_in_epsilon(replace):
    mech = SamplingHistogram(eta=0.95, replace=replace)
    values = [smoothed_delta(mech, eps, 2_000, PI).log_delta for eps in (0.05, 0.3, 1.0, 2.0, 4.0, 7.0)]
    assert max(values) <= math.log(mech.dp_delta(2_000)) + 1e-12
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(values))


def test_profile_is_nonincreasing_in_epsilon_and_symmetric():
    mech = SamplingHistogram(eta=0.9)
    rows = np.array([binary_privacy_profile(mech, 500, eps) for eps in (0.2, 0.5, 1.0, 3.0)])
    assert np.all(np.diff(rows, axis=0) <= 1e-12)
    np.testing.assert_allclose(rows[:, ::-1], rows, rtol=1e-13)


def test_vertex_value_matches_a_sum_over_every_k():
    """Independent route for the vertex: Σ_k Bin(k; n, p) δ(k) over all k, against the tilted-window sum."""
    n, mech = 100_000, SamplingHistogram(eta=0.998)
    for eps in (0.5, 2.0):
        k = np.arange(n + 1)
        direct = logsumexp_or_neginf(log_binom_pmf(k, n, DC) + binary_privacy_profile(mech, n, eps))
        result = smoothed_delta(mech, eps, n, PI, mixtures="vertices")
        assert result.log_delta == pytest.approx(direct, rel=1e-12)


def test_mixture_search_agrees_with_full_enumeration():
    mech = SamplingHistogram(eta=0.9)
    for pi in (PI, [[0.3, 0.7], [0.45, 0.55]]):
        full = smoothed_delta(mech, 1.0, 300, pi, mixtures="all")
        searched = smoothed_delta(mech, 1.0, 300, pi, mixtures=9)
        assert full.exact_max and not searched.exact_max
        assert searched.log_delta == pytest.approx(full.log_delta, rel=1e-12)
        assert searched.mixture == full.mixture


def test_interior_mixtures_are_accurate_and_below_the_vertex():
    """Every mixture value (FFT or direct windows) against a log-space sum over all k of the exact law."""
    n, mech, eps = 3_000, SamplingHistogram(eta=0.95), 1.0
    ell = binary_privacy_profile(mech, n, eps)
    vertex = mixture_expected_delta(mech, eps, [n, 0], PI)  # all records from DC
    for n1 in (0, 700, 1_500, 2_999):
        j = np.arange(n1 + 1)
        k = np.arange(n + 1)
        # P(k) = Σ_j Bin(j; n1, NE3) Bin(k − j; n − n1, DC), summed in log space
        joint = log_binom_pmf(j[:, None], n1, NE3) + log_binom_pmf(k[None, :] - j[:, None], n - n1, DC)
        law = logsumexp_or_neginf(joint, axis=0)
        exact = logsumexp_or_neginf(law + ell) / math.log(10)
        value = mixture_expected_delta(mech, eps, [n - n1, n1], PI) / math.log(10)  # n1 from NE-3
        assert value == pytest.approx(exact, abs=1e-11)
        assert value * math.log(10) <= vertex


def test_profile_agrees_with_sampling_the_mechanism():
    """Statistical check: the plug-in estimate of d(x, x') from 200k draws covers the exact value."""
    mech = SamplingHistogram(size=12)
    exact = privacy_profile(mech, (5, 15), 0.3).delta
    forward, backward = (5, 15), (4, 16)
    a, b, _ = privacy_profile(mech, forward, 0.3).neighbour
    nb = list(forward)
    nb[a] -= 1
    nb[b] += 1
    estimate = monte_carlo_delta(
        lambda k, g: mech.sample(forward, size=k, rng=g)[:, 0],
        lambda k, g: mech.sample(nb, size=k, rng=g)[:, 0],
        0.3,
        200_000,
        rng=7,
    )
    assert estimate.interval[0] <= exact <= estimate.interval[1]
    assert backward == (4, 16)
