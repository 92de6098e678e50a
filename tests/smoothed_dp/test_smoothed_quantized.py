"""The 8-bit sampling-average: data model, exact profile against enumeration, Monte Carlo, sampled δ_SDP."""

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import smoothed_brute as brute
from scipy import integrate, stats

from smoothdp.smoothed_dp import QuantizedSamplingAverage, SamplingAverage, privacy_profile
from smoothdp.smoothed_dp.montecarlo import quantized_average_delta_mc, sampled_smoothed_delta
from smoothdp.smoothed_dp.quantized import (
    quantized_average_profile,
    quantized_laplace_pmf,
    quantized_normal_pmf,
    subset_sum_laws,
)


def test_subset_sum_laws_match_enumeration():
    values = (0, 3, 1, 1, 4, 2)
    law = subset_sum_laws(values, 4)
    for t in range(5):
        exact = brute.sampled_sum_laws(values, t)
        for s in range(law.shape[1]):
            assert law[t, s] == pytest.approx(float(exact.get(s, 0)), abs=1e-15)


@pytest.mark.parametrize(("codes", "t", "eps"), [((-2, 0, 1, 3, 3), 2, 0.5), ((-1, -1, 0, 2, 3, 1), 3, 1.2)])
def test_quantized_profile_matches_enumeration(codes, t, eps):
    mech = QuantizedSamplingAverage(size=t, low=-2, high=3)
    exact = brute.quantized_profile(codes, t, -2, 3, eps)
    got = quantized_average_profile(mech, codes, eps)
    assert got.delta == pytest.approx(float(exact), rel=1e-12)
    heuristic = quantized_average_profile(mech, codes, eps, neighbours="heuristic")
    assert heuristic.delta <= got.delta + 1e-15
    hist = np.bincount(np.array(codes) + 2, minlength=6)
    assert privacy_profile(mech, hist, eps).delta == pytest.approx(got.delta, rel=1e-14)


def test_quantized_normal_pmf_against_integration():
    pmf = quantized_normal_pmf(0.2, 0.12)
    assert pmf.shape == (256,) and pmf.sum() == pytest.approx(1.0, abs=1e-14)
    dist = stats.norm(0.2, 0.12)
    z = dist.cdf(0.5) - dist.cdf(-0.5)
    for q in (-127, -40, 0, 51, 128):
        mass, _ = integrate.quad(dist.pdf, (q - 1) / 256, q / 256)
        assert pmf[q + 127] == pytest.approx(mass / z, rel=1e-9)
    lap = quantized_laplace_pmf(0.0, 0.12)
    b = 0.12 / math.sqrt(2)
    mass, _ = integrate.quad(lambda v: math.exp(-abs(v) / b) / (2 * b), -1 / 256, 0)
    total, _ = integrate.quad(lambda v: math.exp(-abs(v) / b) / (2 * b), -0.5, 0.5, points=[0])
    assert lap[127] == pytest.approx(mass / total, rel=1e-9)


def test_monte_carlo_brackets_the_exact_heuristic_value():
    mech = QuantizedSamplingAverage(size=4, low=-8, high=8)
    codes = np.array([-3, -1, 0, 0, 1, 2, 2, 5, 1, 0, -2, 3])
    exact = quantized_average_profile(mech, codes, 1.0, neighbours="heuristic").delta
    estimate = quantized_average_delta_mc(mech, codes, 1.0, 200_000, rng=3)
    assert estimate.interval[0] <= exact <= estimate.interval[1]
    # the held-out value estimates d_S ≤ d without selection bias: it stays below the interval's top
    assert estimate.held_out <= estimate.interval[1]


def test_sampled_smoothed_delta_runs_the_paper_protocol():
    mech = QuantizedSamplingAverage()  # T = round(√n), codes −127..128
    pi = [quantized_normal_pmf(0.0, 0.12), quantized_normal_pmf(0.2, 0.12)]
    result = sampled_smoothed_delta(mech, 1.0, 100, pi, ratios=(0.0, 1.0), n_databases=6, rng=11)
    assert mech.sample_size(100) == 10 and result.dp_delta == pytest.approx(0.1)
    assert 0.0 < result.estimate < result.dp_delta
    assert result.ratio in (0.0, 1.0) and len(result.per_database[0.0]) == 6
    assert result.intervals[result.ratios.index(result.ratio)][1] <= result.upper


def test_quantized_mechanism_samples_rounded_means():
    mech = QuantizedSamplingAverage(size=3, low=-4, high=4)
    codes = np.array([-4, 4, 1, 2])
    outs = mech.sample(codes, size=20_000, rng=5)
    law = {}
    for s in combinations(range(4), 3):
        o = brute.round_half_away(int(codes[list(s)].sum()), 3)
        law[o] = law.get(o, 0) + Fraction(1, 4)
    for o, p in law.items():
        assert np.mean(outs == o) == pytest.approx(float(p), abs=0.015)


def test_sampling_average_theorem4_by_enumeration():
    """Distinct values with no subset-sum ties: δ(x) = T/n for every ε (Theorem 4)."""
    x = (0.11, 0.23, 0.37, 0.52, 0.79)
    mech = SamplingAverage(size=2)
    n, t = len(x), 2

    def law(data):
        out = {}
        for s in combinations(range(n), t):
            key = round(sum(data[i] for i in s) / t, 12)
            out[key] = out.get(key, 0) + Fraction(1, math.comb(n, t))
        return out

    c = Fraction(math.exp(2.0))
    x_prime = (*x[:-1], 0.905)
    d = max(brute.divergence(law(x), law(x_prime), c), brute.divergence(law(x_prime), law(x), c))
    assert float(d) == pytest.approx(mech.smoothed_delta(n)) == t / n
    assert np.all(mech.sample(np.array(x), size=100, rng=1) >= 0.11)


@pytest.mark.slow
def test_monte_carlo_at_the_papers_size_brackets_the_exact_value():
    """10^6 draws on a database of the paper's Fig. 2 right (n = 100, T = 10): the interval covers the exact
    heuristic δ(x), and the held-out estimate (of a lower bound d_S ≤ d) stays below the interval's top."""
    mech = QuantizedSamplingAverage()
    rng = np.random.default_rng(2024)
    codes = rng.choice(mech.levels, size=100, p=quantized_normal_pmf(0.0, 0.12))
    exact = quantized_average_profile(mech, codes, 1.0, neighbours="heuristic").delta
    assert quantized_average_profile(mech, codes, 1.0).delta >= exact
    estimate = quantized_average_delta_mc(mech, codes, 1.0, 1_000_000, rng=9)
    assert estimate.interval[0] <= exact <= estimate.interval[1]
    assert estimate.held_out <= estimate.interval[1]
