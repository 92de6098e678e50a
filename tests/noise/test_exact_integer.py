"""The exact integer samplers: their laws against closed forms (chi-square), with twins that must fail.

References are written from the definitions (P(G = g) = (1 − e^{−λ})e^{−λg}, P(K = k) = tanh(λ/2)e^{−λ|k|},
P(B = 1) = e^{−γ}), never from the samplers. Each law test also checks that the same test rejects draws of a
slightly different parameter, so a passing test is not a test that cannot fail.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from smoothdp.noise import DiscreteLaplace
from smoothdp.noise.exact_integer import (
    MAX_DENOMINATOR,
    bernoulli_exp_neg,
    bernoulli_exp_neg_rational,
    check_rate,
    discrete_laplace,
    geometric,
    rate_at_most,
)
from smoothdp.rng import default_rng

N = 200_000


def _chi2_pvalue(draws: np.ndarray, pmf) -> float:
    """Chi-square goodness of fit of integer draws against ``pmf(k)``, cells with ≥ 5 expected, tails
    pooled."""
    lo, hi = int(draws.min()), int(draws.max())
    ks = np.arange(lo, hi + 1)
    expected = pmf(ks) * draws.size
    keep = expected >= 5
    observed = np.bincount(draws - lo, minlength=ks.size)
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], draws.size - expected[keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
        exp = exp * obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def _geometric_pmf(lam: float):
    return lambda k: -math.expm1(-lam) * np.exp(-lam * k)


def _dlap_pmf(lam: float):
    return lambda k: math.tanh(lam / 2) * np.exp(-lam * np.abs(k))


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7)])
def test_bernoulli_exp_neg_has_probability_e_to_the_minus_gamma(gamma):
    hits = int(bernoulli_exp_neg_rational(gamma, N, default_rng(1)).sum())
    p = math.exp(-gamma)
    assert stats.binomtest(hits, N, p).pvalue > 1e-4
    if 0 < p < 1:  # the same test tells a 3% different probability apart
        assert stats.binomtest(hits, N, min(1.0, p * 1.03 + 0.002)).pvalue < 1e-4


def test_bernoulli_exp_neg_vector_of_numerators():
    num = np.array([0, 1, 2, 3], dtype=np.int64)
    draws = bernoulli_exp_neg(np.repeat(num, N // 4), 3, N, default_rng(2)).reshape(4, -1)
    for row, a in zip(draws, num, strict=True):
        assert stats.binomtest(int(row.sum()), row.size, math.exp(-a / 3)).pvalue > 1e-4


@pytest.mark.parametrize(
    "rate", [Fraction(1, 10), Fraction(1, 3), Fraction(2, 3), Fraction(1), Fraction(7, 5), Fraction(5, 2)]
)
def test_geometric_law(rate):
    draws = geometric(rate, N, default_rng(3))
    assert draws.dtype == np.int64 and draws.min() >= 0
    assert _chi2_pvalue(draws, _geometric_pmf(float(rate))) > 1e-4
    assert _chi2_pvalue(draws, _geometric_pmf(float(rate) * 1.05)) < 1e-4


def test_geometric_small_rate_mean_and_variance():
    """Rate 10⁻⁴ (T = 10⁴): the first two moments, e^{−λ}/(1 − e^{−λ}) and e^{−λ}/(1 − e^{−λ})²."""
    lam = 1e-4
    draws = geometric(Fraction(1, 10_000), N, default_rng(4)).astype(float)
    mean = math.exp(-lam) / -math.expm1(-lam)
    var = math.exp(-lam) / math.expm1(-lam) ** 2
    assert abs(draws.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(draws.var() / var - 1) < 0.03
    # U = G mod T is the truncated geometric part: its mean is below (T − 1)/2 by the e^{−λu} weighting
    low = draws % 10_000
    assert low.mean() < 0.5 * 9_999 * 0.99


@pytest.mark.parametrize("rate", [Fraction(1, 4), Fraction(1), Fraction(3)])
def test_discrete_laplace_law(rate):
    draws = discrete_laplace(rate, N, default_rng(5))
    assert _chi2_pvalue(draws, _dlap_pmf(float(rate))) > 1e-4
    assert _chi2_pvalue(draws, _dlap_pmf(float(rate) * 1.05)) < 1e-4


def test_shapes_and_size_none():
    gen = default_rng(6)
    assert discrete_laplace(Fraction(1), None, gen).shape == ()
    assert discrete_laplace(Fraction(1), (3, 4), gen).shape == (3, 4)
    assert discrete_laplace(Fraction(1), 0, gen).shape == (0,)
    assert isinstance(DiscreteLaplace(2.0).sample(rng=gen), int)


def test_the_class_samples_its_own_law_exactly():
    """DiscreteLaplace(t) uses the rate 1/t of the float t, exactly (t = 0.1 is not 1/10)."""
    t = 0.1
    draws = DiscreteLaplace(t).sample(N, default_rng(7))
    assert _chi2_pvalue(draws, _dlap_pmf(1 / t)) > 1e-4
    assert 1 / Fraction(t) != Fraction(10)  # the rate used is the float's, not a decimal's


def test_rate_rounding_is_downward_and_fits():
    for rate in [
        Fraction(1, 3) / (1 << 70),
        Fraction(2**61 + 1, 2**63 + 5),
        Fraction(10**30 + 1, 10**29 + 7),
    ]:
        rounded = rate_at_most(rate)
        assert rounded <= rate and rounded.denominator <= MAX_DENOMINATOR
        assert (rate - rounded) <= Fraction(1, MAX_DENOMINATOR)
    assert rate_at_most(Fraction(1, 3)) == Fraction(1, 3)
    assert rate_at_most(Fraction(0.1)) == Fraction(0.1)  # a float's denominator 2^55 fits


def test_bad_rates():
    with pytest.raises(ValueError, match="rate"):
        check_rate(Fraction(1, 2**51))
    with pytest.raises(ValueError, match="rate"):
        check_rate(Fraction(1, 2**63))
    with pytest.raises(TypeError, match="rate"):
        check_rate("fast")
    with pytest.raises(ValueError, match="size"):
        discrete_laplace(Fraction(1), -1, default_rng(0))


def test_large_rates_and_huge_integer_parts():
    """λ = 10⁶: G = 0 with probability 1 − e^{−10⁶}; the ⌊λ⌋ rounds stop as soon as every draw failed."""
    assert not geometric(Fraction(10**6), 10_000, default_rng(8)).any()
    assert not bernoulli_exp_neg_rational(Fraction(10**12), 1000, default_rng(9)).any()


def test_no_floating_point_function_decides_an_outcome(monkeypatch):
    """No numpy exp or log is called: poisoning them changes nothing (outcomes are integer comparisons)."""
    expected = discrete_laplace(Fraction(1, 7), 5000, default_rng(10))

    def poisoned(*args, **kwargs):
        raise AssertionError("a floating-point exp/log was called")

    monkeypatch.setattr(np, "exp", poisoned)
    monkeypatch.setattr(np, "log", poisoned)
    monkeypatch.setattr(np, "expm1", poisoned)
    monkeypatch.setattr(np, "log1p", poisoned)
    again = discrete_laplace(Fraction(1, 7), 5000, default_rng(10))
    assert np.array_equal(expected, again)


def test_run_lengths_carry_successes_across_chunks(monkeypatch):
    """The geometric draws for λ ≥ 1 are the run lengths of one trial stream cut into chunks: successes at a
    chunk's end (or a chunk without failures) continue the first run of the next chunk."""
    import smoothdp.noise.exact_integer as ei

    stream: list[bool] = [True] * 50 + [False] + [True] * 3 + [False, False] + [True] * 7 + [False] * 100
    used: list[int] = []

    def fake_trials(step, m, rng):  # the next m trials of the fixed stream; chunks of size m
        start = sum(used)
        used.append(m)
        return np.array(stream[start : start + m])

    monkeypatch.setattr(ei, "bernoulli_exp_neg_rational", fake_trials)
    monkeypatch.setattr(ei, "_run_lengths_chunk", lambda missing, fail_rate: 20)
    draws = ei.geometric(Fraction(3), 5, default_rng(0))
    assert draws.tolist() == [50, 3, 0, 7, 0]
    assert len(used) >= 3  # the first chunks held no failure at all
