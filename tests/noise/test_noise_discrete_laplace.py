"""Discrete Laplace: pmf, cdf, ppf against scipy.stats.dlaplace and direct sums; integer sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from smoothdp.noise import DiscreteLaplace
from smoothdp.rng import default_rng

SCALES = [0.3, 1.0, 2.5, 40.0]


@pytest.mark.parametrize("scale", SCALES)
def test_pmf_cdf_sf_match_scipy_dlaplace(scale: float) -> None:
    dist, ref = DiscreteLaplace(scale), stats.dlaplace(1.0 / scale)
    k = np.arange(-60, 61)
    np.testing.assert_allclose(dist.pdf(k), ref.pmf(k), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(dist.logpdf(k), ref.logpmf(k), rtol=1e-12)
    np.testing.assert_allclose(dist.cdf(k), ref.cdf(k), rtol=1e-12)
    # scipy's sf is 1 − cdf (no digits left in the upper tail): compare with a direct sum of its pmf.
    j = np.arange(-60, 61 + int(800 * scale))
    tail_sums = np.cumsum(ref.pmf(j)[::-1])[::-1]  # tail_sums[i] = P(K ≥ j[i])
    upper = tail_sums[np.searchsorted(j, k + 1)]
    np.testing.assert_allclose(dist.sf(k), upper, rtol=1e-12)
    # Real arguments: step functions.
    np.testing.assert_allclose(dist.cdf(k + 0.5), ref.cdf(k), rtol=1e-12)
    np.testing.assert_allclose(dist.sf(k - 0.25), dist.sf(k - 1), rtol=1e-15)


@pytest.mark.parametrize("scale", SCALES)
def test_pmf_sums_to_one_and_variance_is_the_sum(scale: float) -> None:
    dist = DiscreteLaplace(scale)
    k = np.arange(-int(80 * scale) - 80, int(80 * scale) + 81)
    pmf = dist.pdf(k)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-13)
    assert dist.var() == pytest.approx(float(np.sum(k.astype(float) ** 2 * pmf)), rel=1e-11)
    q = math.exp(-1.0 / scale)
    assert dist.var() == pytest.approx(2 * q / (1 - q) ** 2, rel=1e-12)
    assert dist.mean() == 0.0


def test_pmf_is_zero_off_the_integers_and_keeps_nan() -> None:
    dist = DiscreteLaplace(2.0)
    np.testing.assert_array_equal(dist.pdf([0.5, -1.25, 3.0000001]), 0.0)
    assert dist.logpdf(0.5) == -math.inf
    assert math.isnan(dist.pdf(math.nan))


def test_far_tails_do_not_cancel() -> None:
    dist = DiscreteLaplace(1.0)
    # P(K > 500) = e^{−501}/(1 + e^{−1}); 1 − cdf would be 0.
    assert float(dist.sf(500)) == pytest.approx(math.exp(-501) / (1 + math.exp(-1)), rel=1e-12)
    assert float(dist.cdf(-500)) == pytest.approx(math.exp(-500) / (1 + math.exp(-1)), rel=1e-12)


@pytest.mark.parametrize("scale", SCALES)
def test_ppf_is_the_smallest_integer_reaching_q(scale: float) -> None:
    dist, ref = DiscreteLaplace(scale), stats.dlaplace(1.0 / scale)
    k = np.arange(-40, 41)
    k = k[dist.cdf(k) < 1.0]  # where the cdf has not rounded to 1 (nothing can invert it there)
    np.testing.assert_array_equal(dist.ppf(dist.cdf(k)), k)
    q = default_rng(4).random(2000)
    q = np.concatenate([q, [1e-12, 1e-6, 0.5, 1 - 1e-6]])
    x = dist.ppf(q)
    assert np.all(x == np.round(x))
    assert np.all(dist.cdf(x) >= q) and np.all(dist.cdf(x - 1) < q)
    np.testing.assert_array_equal(x, ref.ppf(q))
    assert dist.ppf(0.0) == -math.inf and dist.ppf(1.0) == math.inf


@pytest.mark.parametrize("scale", [0.5, 3.0, 25.0])
def test_sampler_chi2_on_integer_counts_and_rejects_wrong_scale(scale: float) -> None:
    dist = DiscreteLaplace(scale)
    n = 100_000
    draws = dist.sample(n, rng=default_rng(99))
    assert draws.dtype == np.int64 and draws.shape == (n,)

    def chi2_pvalue(law: DiscreteLaplace) -> float:
        # Cells: every integer with expected count ≥ 20, the two tails lumped.
        lo, hi = int(law.ppf(20 / n)), int(law.ppf(1 - 20 / n))
        inner = np.arange(lo, hi + 1)
        observed = np.concatenate(
            [
                [np.sum(draws < lo)],
                np.bincount(draws[(draws >= lo) & (draws <= hi)] - lo, minlength=inner.size),
                [np.sum(draws > hi)],
            ]
        )
        expected = n * np.concatenate([[law.cdf(lo - 1)], law.pdf(inner), [law.sf(hi)]])
        return stats.chisquare(observed, expected * n / expected.sum()).pvalue

    assert chi2_pvalue(dist) > 1e-6
    assert chi2_pvalue(DiscreteLaplace(0.9 * scale)) < 1e-6
    assert chi2_pvalue(DiscreteLaplace(1.1 * scale)) < 1e-6


def test_sample_types_and_reproducibility() -> None:
    dist = DiscreteLaplace(3.0)
    assert isinstance(dist.sample(rng=1), int)
    assert dist.sample((2, 3), rng=1).shape == (2, 3)
    np.testing.assert_array_equal(dist.sample(100, rng=7), dist.sample(100, rng=7))
    assert dist.sample(100).dtype == np.int64  # secure path
    assert dist.with_scale(5.0).var() == pytest.approx(DiscreteLaplace(5.0).var(), rel=1e-15)


def test_bad_scale() -> None:
    for bad in (0.0, -1.0, math.nan, math.inf, 1e16):
        with pytest.raises(ValueError, match="scale"):
            DiscreteLaplace(bad)
    with pytest.raises(ValueError, match="scale"):
        DiscreteLaplace(2.0).with_scale(-1.0)
    with pytest.raises(ValueError, match="q"):
        DiscreteLaplace(2.0).ppf(1.5)
