"""One harness for every real-line noise family: normalisation, CDF, quantiles, moments, samplers.

Expected values come from numerical integration of the density (scipy quad), from scipy.stats where it has
the law, and from each family's moment rule; goodness of fit uses the family's CDF, itself checked against
the integrated density here.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from noise_cases import CASES, Case
from scipy import integrate, stats

from smoothdp.rng import default_rng

# KS power: a 10% scale error moves the CDF by at most ~0.015 (Cauchy) to ~0.02 (Laplace); at a 1e-6
# level the KS critical distance is √(−ln(5e-7)/(2n)), 0.019 at n = 20,000 (too blunt) and 0.0085 at
# n = 100,000. Draws are cheap (≈ 10 ms), so we use 100,000.
N_DRAWS = 100_000
LEVEL = 1e-6
QUANTILES = np.array([1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-6, 1 - 1e-12])


def _over(cases: list[Case]):
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])


all_cases = _over(CASES)


def _pdf(case: Case):
    return lambda x: float(case.dist.pdf(x))


def _integral(case: Case, f, lo: float, hi: float) -> float:
    """∫_lo^hi f, split at 0 and at the family's breakpoints."""
    cuts = sorted({0.0, *case.breakpoints})
    edges = [lo, *[c for c in cuts if lo < c < hi], hi]
    total = 0.0
    for a, b in itertools.pairwise(edges):
        value, _ = integrate.quad(f, a, b, limit=400, epsabs=1e-13, epsrel=1e-11)
        total += value
    return total


@all_cases
def test_pdf_integrates_to_one(case: Case) -> None:
    assert _integral(case, _pdf(case), -math.inf, math.inf) == pytest.approx(1.0, abs=1e-8)


@all_cases
def test_density_is_symmetric_and_logpdf_consistent(case: Case) -> None:
    x = np.linspace(-7, 7, 57) * case.dist.scale
    np.testing.assert_allclose(case.dist.pdf(x), case.dist.pdf(-x), rtol=1e-14)
    np.testing.assert_allclose(np.log(case.dist.pdf(x)), case.dist.logpdf(x), rtol=1e-12, atol=1e-14)


@all_cases
def test_cdf_and_sf_match_integrated_pdf(case: Case) -> None:
    s = case.dist.scale
    for x in np.array([-40.0, -3.0, -1.0, -0.37, -0.05, 0.0, 0.02, 0.6, 2.0, 25.0]) * s:
        below = _integral(case, _pdf(case), -math.inf, x)
        above = _integral(case, _pdf(case), x, math.inf)
        assert case.dist.cdf(x) == pytest.approx(below, rel=1e-8, abs=1e-15), x
        assert case.dist.sf(x) == pytest.approx(above, rel=1e-8, abs=1e-15), x


@all_cases
def test_ppf_inverts_cdf_into_far_tails(case: Case) -> None:
    x = case.dist.ppf(QUANTILES)
    assert np.all(np.diff(x) > 0)
    lower = QUANTILES <= 0.5
    np.testing.assert_allclose(case.dist.cdf(x[lower]), QUANTILES[lower], rtol=1e-9)
    # Upper tail through sf: 1 − q is exact in floating point for q ≥ 1/2.
    np.testing.assert_allclose(case.dist.sf(x[~lower]), 1.0 - QUANTILES[~lower], rtol=1e-9)
    assert case.dist.ppf(0.0) == -math.inf and case.dist.ppf(1.0) == math.inf
    assert case.dist.ppf(0.5) == 0.0


@all_cases
def test_cdf_and_sf_are_symmetric_far_out(case: Case) -> None:
    x = np.array([1e-3, 1.0, 1e3, 1e8]) * case.dist.scale
    np.testing.assert_allclose(case.dist.sf(x), case.dist.cdf(-x), rtol=1e-14)
    np.testing.assert_allclose(case.dist.cdf(x) + case.dist.sf(x), 1.0, rtol=1e-14)


@_over([c for c in CASES if c.reference is not None])
def test_matches_scipy_reference(case: Case) -> None:
    ref = case.reference()
    s = case.dist.scale
    x = np.array([-1e3, -30.0, -2.5, -1.0, -0.1, 0.0, 0.4, 1.7, 12.0, 300.0]) * s
    moderate = np.abs(x) <= 30 * s  # scipy's laplace.logpdf underflows to -inf beyond
    np.testing.assert_allclose(case.dist.logpdf(x[moderate]), ref.logpdf(x[moderate]), rtol=1e-12)
    np.testing.assert_allclose(case.dist.pdf(x), ref.pdf(x), rtol=1e-11)
    np.testing.assert_allclose(case.dist.cdf(x), ref.cdf(x), rtol=1e-11)
    np.testing.assert_allclose(case.dist.sf(x), ref.sf(x), rtol=1e-11)
    q = np.array([1e-9, 1e-4, 0.2, 0.5, 0.8, 0.999])
    np.testing.assert_allclose(case.dist.ppf(q), ref.ppf(q), rtol=1e-9, atol=1e-15)
    if case.finite_var:
        assert case.dist.var() == pytest.approx(ref.var(), rel=1e-12)


@all_cases
def test_moments_match_integrals(case: Case) -> None:
    dist = case.dist
    second = lambda x: x * x * float(dist.pdf(x))  # noqa: E731
    if case.finite_var:
        assert dist.var() == pytest.approx(_integral(case, second, -math.inf, math.inf), rel=1e-7)
        assert dist.std() == pytest.approx(math.sqrt(dist.var()), rel=1e-15)
    else:
        assert dist.var() == math.inf and dist.std() == math.inf
        # Independent evidence that E X² diverges: the truncated second moment keeps growing.
        s = dist.scale
        near = _integral(case, second, 0.0, 1e3 * s)
        far = _integral(case, second, 0.0, 1e9 * s)
        assert far > near + s * s
    assert (dist.mean() == 0.0) if case.has_mean else math.isnan(dist.mean())


@all_cases
def test_sampler_passes_ks_and_rejects_wrong_scale(case: Case) -> None:
    dist = case.dist
    draws = dist.sample(N_DRAWS, rng=default_rng(20240601))
    assert draws.shape == (N_DRAWS,) and np.all(np.isfinite(draws))
    assert stats.kstest(draws, dist.cdf).pvalue > LEVEL
    for factor in (0.9, 1.1):
        wrong = dist.with_scale(dist.scale * factor)
        assert stats.kstest(draws, wrong.cdf).pvalue < LEVEL, factor


def _chi2_pvalue(draws: np.ndarray, dist, bins: int = 200) -> float:
    edges = dist.ppf(np.linspace(0.0, 1.0, bins + 1))
    counts = np.histogram(draws, bins=edges)[0]
    return stats.chisquare(counts).pvalue  # equal expected counts by construction


@_over([c for c in CASES if c.heavy])
def test_sampler_tails_pass_chi2_and_reject_misshaped_twin(case: Case) -> None:
    dist = case.dist
    draws = dist.sample(N_DRAWS, rng=default_rng(77))
    assert _chi2_pvalue(draws, dist) > LEVEL
    # The twin has the wrong shape parameter but the same quartiles, so its body matches and only the
    # tails can tell them apart.
    twin = case.twin()
    twin = twin.with_scale(twin.scale * float(dist.ppf(0.75) / twin.ppf(0.75)))
    assert _chi2_pvalue(draws, twin) < LEVEL
    # And the draws really reach the tail: the most extreme 0.1% bins are populated as predicted.
    far = dist.ppf(np.array([5e-4, 1 - 5e-4]))
    n_far = np.count_nonzero((draws < far[0]) | (draws > far[1]))
    assert stats.binomtest(n_far, N_DRAWS, 1e-3).pvalue > LEVEL


@all_cases
def test_seeded_sampling_reproduces_and_secure_sampling_works(case: Case) -> None:
    dist = case.dist
    np.testing.assert_array_equal(dist.sample(50, rng=11), dist.sample(50, rng=default_rng(11)))
    assert not np.array_equal(dist.sample(50, rng=11), dist.sample(50, rng=12))
    secure = dist.sample((4, 3))
    assert secure.shape == (4, 3) and np.all(np.isfinite(secure))
    assert isinstance(dist.sample(rng=3), float)
