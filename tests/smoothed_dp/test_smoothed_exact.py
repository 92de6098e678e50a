"""Exact paths against enumeration with exact rationals (m = 2, 3, 4; with and without replacement)."""

import math

import numpy as np
import pytest
import smoothed_brute as brute

from smoothdp.smoothed_dp import SamplingHistogram, binary_privacy_profile, privacy_profile, smoothed_delta
from smoothdp.smoothed_dp.histogram_profile import binary_log_profile

REL = 1e-12


def assert_rel(got: float, exact, rel: float = REL) -> None:
    exact = float(exact)
    assert np.isfinite(got), got
    assert abs(got - exact) <= rel * exact, (got, exact, abs(got - exact) / exact)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize(
    ("n", "t", "eps"),
    [(6, 3, 0.5), (9, 5, 1.0), (12, 10, 0.1), (10, 9, 3.0), (7, 1, 0.2), (8, 8, 1.0), (14, 12, 7.0)],
)
def test_binary_profile_matches_enumeration_for_every_k(n, t, eps, replace):
    mech = SamplingHistogram(size=t, replace=replace)
    log_delta = binary_privacy_profile(mech, n, eps)
    for k in range(n + 1):
        assert_rel(math.exp(log_delta[k]), brute.shm_profile((k, n - k), t, eps, replace))


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize(
    ("h", "t", "eps"),
    [
        ((2, 3, 1), 3, 0.5),
        ((0, 4, 3), 5, 1.0),
        ((3, 2, 2), 5, 0.3),
        ((5, 1, 2), 2, 2.0),
        ((1, 2, 3, 1), 4, 0.7),
    ],
)
def test_general_m_profile_matches_enumeration(h, t, eps, replace):
    if replace and sum(h) > 8:
        pytest.skip("enumeration with replacement is slow here")
    mech = SamplingHistogram(size=t, replace=replace)
    exact = brute.shm_profile(h, t, eps, replace)
    assert_rel(privacy_profile(mech, h, eps).delta, exact)
    assert_rel(privacy_profile(mech, h, eps, method="generic").delta, exact)


def test_profile_reports_a_neighbour_attaining_it():
    mech = SamplingHistogram(size=4)
    value = privacy_profile(mech, (3, 2, 2), 0.8)
    a, b, direction = value.neighbour
    nb = [3, 2, 2]
    nb[a] -= 1
    nb[b] += 1
    c = brute.Fraction(math.exp(0.8))
    p, q = brute.shm_law((3, 2, 2), 4, False), brute.shm_law(tuple(nb), 4, False)
    d = brute.divergence(p, q, c) if direction == "forward" else brute.divergence(q, p, c)
    assert_rel(value.delta, d)


def test_broken_twins_are_rejected_by_the_reference():
    """The reference must catch a wrong kernel: one direction only, or e^ε misread as e^{0.8ε}."""
    n, t, eps = 10, 7, 1.0
    exact = [float(brute.shm_profile((k, n - k), t, eps)) for k in range(n + 1)]
    right = np.exp(binary_log_profile(n, n - t, eps))
    np.testing.assert_allclose(right, exact, rtol=REL)
    weaker = np.exp(binary_log_profile(n, n - t, 0.8 * eps))
    assert np.max(np.abs(weaker - exact) / np.array(exact)) > 1e-3
    from smoothdp.smoothed_dp.histogram_profile import log_removal_kernel

    k = np.arange(1, n + 1)
    forward_only = np.exp(log_removal_kernel(n, k, n - t, eps))  # d(x_k, x_{k-1}) alone, k = 1..n
    assert np.max(np.abs(forward_only - exact[1:]) / np.array(exact[1:])) > 1e-3


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize(
    ("n", "t", "eps", "verts"),
    [
        (8, 5, 0.5, [[0.3, 0.7], [0.9, 0.1]]),
        (10, 9, 2.0, [[0.2, 0.8], [0.6, 0.4]]),
        (7, 3, 1.0, [[0.5, 0.5], [0.95, 0.05]]),
        (9, 6, 0.3, [[0.45, 0.55], [0.6, 0.4], [0.5, 0.5]]),  # an interior distribution is dropped
    ],
)
def test_smoothed_delta_binary_matches_enumeration(n, t, eps, verts, replace):
    result = smoothed_delta(SamplingHistogram(size=t, replace=replace), eps, n, verts)
    exact, mixture = brute.smoothed_delta(n, lambda h: brute.shm_profile(h, t, eps, replace), result.vertices)
    assert_rel(result.delta, exact)
    assert result.exact_max
    assert math.isclose(result.log10_delta, math.log10(float(exact)), rel_tol=0, abs_tol=1e-12)
    assert result.evaluated[mixture] == pytest.approx(math.log10(float(exact)), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "t", "eps"),
    [(5, 3, 0.5), (6, 4, 1.0)],
)
def test_smoothed_delta_three_categories_matches_enumeration(n, t, eps):
    pi = [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.2, 0.6, 0.2], [0.25, 0.3, 0.45]]  # the last is interior
    result = smoothed_delta(SamplingHistogram(size=t), eps, n, pi)
    assert result.vertices.shape == (3, 3)
    exact, _ = brute.smoothed_delta(n, lambda h: brute.shm_profile(h, t, eps), result.vertices)
    assert_rel(result.delta, exact)


def test_generic_mechanism_path_matches_enumeration():
    """Any object with output_log_pmf goes through the generic path (Algorithm 1 for a user's mechanism)."""

    class Wrapped:
        def __init__(self):
            self.inner = SamplingHistogram(size=3)

        def output_log_pmf(self, histogram):
            return self.inner.output_log_pmf(histogram)

    result = smoothed_delta(Wrapped(), 0.7, 5, [[0.2, 0.8], [0.7, 0.3]])
    exact, _ = brute.smoothed_delta(5, lambda h: brute.shm_profile(h, 3, 0.7), result.vertices)
    assert_rel(result.delta, exact)
