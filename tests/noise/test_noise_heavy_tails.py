"""Generalized Cauchy and Student's t: constants, closed forms and far tails against mpmath."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from smoothdp.noise import GeneralizedCauchy, StudentT
from smoothdp.rng import default_rng

mp.mp.dps = 40


def _gc_density(gamma: float):
    g = mp.mpf(gamma)
    c = g * mp.sin(mp.pi / g) / (2 * mp.pi)
    return lambda x: c / (1 + abs(x) ** g)


def _t_density(df: float):
    d = mp.mpf(df)
    c = mp.gamma((d + 1) / 2) / (mp.gamma(d / 2) * mp.sqrt(d * mp.pi))
    return lambda x: c * (1 + x * x / d) ** (-(d + 1) / 2)


def _mp_upper_tail(density, x: float):
    """∫_x^∞ density in 40 digits, as ∫_0^∞ density(x e^s) x e^s ds: a polynomial tail becomes an
    exponential one, which the quadrature handles (a plain [x, ∞) quad is off in the 5th digit at γ = 1.1)."""
    x = mp.mpf(x)
    return mp.quad(lambda s: density(x * mp.exp(s)) * x * mp.exp(s), [0, 1, 10, 100, 1000, mp.inf])


# -- generalized Cauchy --------------------------------------------------------------------------------
def test_normalising_constants() -> None:
    assert float(GeneralizedCauchy(4).pdf(0.0)) == pytest.approx(math.sqrt(2) / math.pi, rel=1e-15)
    assert float(GeneralizedCauchy(2).pdf(0.0)) == pytest.approx(1 / math.pi, rel=1e-15)
    assert float(GeneralizedCauchy(6).pdf(0.0)) == pytest.approx(3 / (2 * math.pi), rel=1e-15)
    assert float(GeneralizedCauchy(4, 2.0).pdf(0.0)) == pytest.approx(math.sqrt(2) / (2 * math.pi), rel=1e-15)


def test_variance_closed_forms() -> None:
    assert GeneralizedCauchy(4).var() == pytest.approx(1.0, rel=1e-15)  # GC(4, σ) has variance σ²
    assert GeneralizedCauchy(4, 3.0).var() == pytest.approx(9.0, rel=1e-15)
    assert GeneralizedCauchy(6).var() == pytest.approx(0.5, rel=1e-15)
    assert GeneralizedCauchy(5).var() == pytest.approx(1 / (2 * math.cos(2 * math.pi / 5) + 1), rel=1e-14)
    for gamma in (1.2, 2.0, 2.5, 3.0):
        assert GeneralizedCauchy(gamma).var() == math.inf
    assert math.isnan(GeneralizedCauchy(2.0).mean()) and GeneralizedCauchy(2.01).mean() == 0.0


def _gc4_cdf(z: float) -> float:
    """The closed form of gp_paper §1.15 (Liang–Yi Appendix C.1)."""
    a, r2 = abs(z), math.sqrt(2)
    h = (
        math.log((a * a + r2 * a + 1) / (a * a - r2 * a + 1))
        + 2 * math.atan(r2 * a + 1)
        + 2 * math.atan(r2 * a - 1)
    )
    return 0.5 + math.copysign(1.0, z) * h / (4 * math.pi)


def _gc6_cdf(z: float) -> float:
    a, r3 = abs(z), math.sqrt(3)
    h = (
        r3 * math.log((a * a + r3 * a + 1) / (a * a - r3 * a + 1))
        + 2 * math.atan(2 * a + r3)
        + 2 * math.atan(2 * a - r3)
        + 4 * math.atan(a)
    )
    return 0.5 + math.copysign(1.0, z) * h / (8 * math.pi)


@pytest.mark.parametrize(("gamma", "closed_form"), [(4.0, _gc4_cdf), (6.0, _gc6_cdf)])
def test_cdf_matches_closed_forms(gamma: float, closed_form) -> None:
    dist = GeneralizedCauchy(gamma)
    for z in (-30.0, -3.0, -1.0, -0.2, 0.05, 0.7, 1.0, 2.5, 10.0):
        assert float(dist.cdf(z)) == pytest.approx(closed_form(z), rel=1e-13)


@pytest.mark.parametrize("gamma", [1.1, 1.5, 2.0, 4.0, 30.0])
def test_far_tails_and_logpdf_against_mpmath(gamma: float) -> None:
    dist = GeneralizedCauchy(gamma)
    density = _gc_density(gamma)
    for x in (0.5, 3.0, 1e3, 1e8):
        tail = float(_mp_upper_tail(density, x))
        assert float(dist.sf(x)) == pytest.approx(tail, rel=1e-10), x
        assert float(dist.cdf(-x)) == pytest.approx(tail, rel=1e-10), x
    for x in (1e5, 1e100, 1e300):
        assert float(dist.logpdf(x)) == pytest.approx(float(mp.log(density(mp.mpf(x)))), rel=1e-13)


@pytest.mark.parametrize(
    ("gamma", "masses"), [(1.5, (1e-100, 1e-140)), (2.0, (1e-100, 1e-250, 1e-300)), (4.0, (1e-100, 1e-300))]
)
def test_ppf_in_the_asymptotic_regime(gamma: float, masses: tuple[float, ...]) -> None:
    # Tail masses so small that y = 1/(1+t^γ) underflows (t^γ > e^690) and the asymptote takes over;
    # the mpmath tail at the returned point must still be the mass asked for.
    dist = GeneralizedCauchy(gamma)
    density = _gc_density(gamma)
    for q in masses:
        x = -float(dist.ppf(q))
        assert np.isfinite(x)
        assert float(_mp_upper_tail(density, x)) == pytest.approx(q, rel=1e-9)
        assert float(dist.cdf(-x)) == pytest.approx(q, rel=1e-9)
    assert gamma * math.log(-float(dist.ppf(masses[-1]))) > 690  # the smallest mass is in the asymptote


def test_ppf_overflows_only_where_the_quantile_exceeds_the_largest_double() -> None:
    dist = GeneralizedCauchy(1.5)
    biggest = float(np.finfo(float).max)
    assert float(_mp_upper_tail(_gc_density(1.5), biggest)) > 1e-300  # so the 1e-300 quantile is beyond
    assert dist.ppf(1e-300) == -math.inf


# Near γ = 1 the law is so spread that a scale error shows only when large: the KS test at n = 50,000
# separates ×0.5 and ×2 there, ×0.8 and ×1.25 elsewhere.
@pytest.mark.parametrize(("gamma", "factor"), [(1.05, 0.5), (1.3, 0.8), (3.0, 0.8), (50.0, 0.8)])
def test_sampler_extreme_shapes(gamma: float, factor: float) -> None:
    dist = GeneralizedCauchy(gamma, 0.6)
    draws = dist.sample(50_000, rng=default_rng(3))
    assert stats.kstest(draws, dist.cdf).pvalue > 1e-6
    for wrong in (factor, 1 / factor):
        assert stats.kstest(draws, dist.with_scale(0.6 * wrong).cdf).pvalue < 1e-6, wrong
    edges = dist.ppf(np.linspace(0, 1, 101))
    assert stats.chisquare(np.histogram(draws, edges)[0]).pvalue > 1e-6


def test_sampler_shapes() -> None:
    dist = GeneralizedCauchy(4)
    assert dist.sample((3, 5), rng=1).shape == (3, 5)
    assert dist.sample(0, rng=1).shape == (0,)
    assert isinstance(dist.sample(rng=1), float)


# -- Student's t ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("df", [0.5, 1.0, 2.5, 3.0, 30.0])
def test_student_far_tails_against_mpmath(df: float) -> None:
    dist = StudentT(df)
    density = _t_density(df)
    for x in (0.5, 4.0, 1e4, 1e9):
        tail = float(_mp_upper_tail(density, x))
        assert float(dist.cdf(-x)) == pytest.approx(tail, rel=1e-10), x
        assert float(dist.sf(x)) == pytest.approx(tail, rel=1e-10), x
    for x in (1e100, 1e200, 1e300):  # x² overflows: the density must still be right
        assert float(dist.logpdf(x)) == pytest.approx(float(mp.log(density(mp.mpf(x)))), rel=1e-13)


@pytest.mark.parametrize("df", [1.0, 3.0])
def test_student_ppf_below_scipy_range(df: float) -> None:
    # scipy.special.stdtrit returns +inf (wrong sign) near 1e-300; ours stays right, checked by mpmath.
    dist = StudentT(df)
    density = _t_density(df)
    for q in (1e-200, 1e-300):
        x = -float(dist.ppf(q))
        assert np.isfinite(x) and x > 0
        assert float(_mp_upper_tail(density, x)) == pytest.approx(q, rel=1e-9)


def test_student_moments() -> None:
    assert StudentT(3).var() == pytest.approx(3.0, rel=1e-15)
    assert StudentT(5, 2.0).var() == pytest.approx(4 * 5 / 3, rel=1e-15)
    assert (
        StudentT(2.0).var() == math.inf
        and StudentT(1.5).var() == math.inf
        and StudentT(0.5).var() == math.inf
    )
    assert StudentT(1.5).mean() == 0.0 and math.isnan(StudentT(1.0).mean())


@pytest.mark.parametrize("gamma", [1.2, 4.0])
def test_sampler_tail_counts_beyond_the_envelope_redraw_point(gamma: float) -> None:
    # The sampler redraws the envelope's Pareto tail from a fresh exponential beyond x₀ = 2^{10/(γ−1)}
    # (1e15 at γ = 1.2, 10 at γ = 4): the counts on both sides of x₀ must match the law's tail.
    dist = GeneralizedCauchy(gamma)
    n = 1_000_000
    draws = np.abs(dist.sample(n, rng=default_rng(12)))
    x0 = 2.0 ** (10 / (gamma - 1))
    for threshold in (0.5 * x0, x0, 2.0 * x0):
        p = 2.0 * float(_mp_upper_tail(_gc_density(gamma), threshold))
        count = np.count_nonzero(draws > threshold)
        assert count > 20
        assert stats.binomtest(count, n, p).pvalue > 1e-6, threshold


@pytest.mark.parametrize("gamma", [1.5, 4.0, 12.0])
def test_rejection_sampler_matches_the_beta_transform(gamma: float) -> None:
    """Cross-check against an independent construction (note §1.15): B ~ Beta(1/γ, 1−1/γ) gives
    |Z| = (B/(1−B))^{1/γ}. A two-sample KS test on |Z| (invariant to monotone maps, so tails count)."""
    rng = default_rng(20261123)
    n = 100_000
    ours = np.abs(GeneralizedCauchy(gamma).sample(n, rng=rng))
    b = rng.beta(1.0 / gamma, 1.0 - 1.0 / gamma, n)
    with np.errstate(divide="ignore"):  # b = 1 in floats: an infinite reference draw, as it should be
        reference = (b / (1.0 - b)) ** (1.0 / gamma)
    assert stats.ks_2samp(ours, reference).pvalue > 1e-4
    # The same test tells apart a 5% scale error, so it is not vacuous.
    assert stats.ks_2samp(1.05 * ours, reference).pvalue < 1e-4


# -- Student's t with df = 3: the two-uniform polar sampler ---------------------------------------------
def test_student_t3_sampler_passes_ks_and_rejects_wrong_scale() -> None:
    # df = 3 draws T = sign(C)·√(3U/(1 − U + C²)), C = tan φ; other df go through numpy's standard_t.
    dist = StudentT(3, 1.7)
    draws = dist.sample(200_000, rng=default_rng(20260515))
    assert draws.shape == (200_000,) and np.all(np.isfinite(draws))
    assert stats.kstest(draws, dist.cdf).pvalue > 1e-6
    assert stats.kstest(draws, stats.t(3, scale=1.7).cdf).pvalue > 1e-6
    for factor in (0.9, 1.1):
        assert stats.kstest(draws, dist.with_scale(1.7 * factor).cdf).pvalue < 1e-6, factor


def test_student_t3_sampler_tails_pass_chi2_and_reject_misshaped_twin() -> None:
    dist = StudentT(3)
    draws = dist.sample(200_000, rng=default_rng(515))
    edges = dist.ppf(np.linspace(0.0, 1.0, 201))  # equal-probability bins, the outer ones reach ±inf
    assert stats.chisquare(np.histogram(draws, edges)[0]).pvalue > 1e-6
    # T(6) rescaled to the same quartiles: same body, lighter tails; only the tail bins tell them apart.
    twin = StudentT(6)
    twin = twin.with_scale(float(dist.ppf(0.75) / twin.ppf(0.75)))
    assert stats.chisquare(np.histogram(draws, twin.ppf(np.linspace(0.0, 1.0, 201)))[0]).pvalue < 1e-6


def test_student_t3_sampler_far_tail_counts_against_mpmath() -> None:
    # P(|T| > t) from 40-digit quadrature; 2·10⁶ draws put tens of counts beyond t = 100 on each side.
    n = 2_000_000
    draws = StudentT(3).sample(n, rng=default_rng(3))
    density = _t_density(3.0)
    for t in (3.0, 30.0, 100.0):
        p = float(_mp_upper_tail(density, t))
        for count in (np.count_nonzero(draws > t), np.count_nonzero(draws < -t)):
            assert stats.binomtest(count, n, p).pvalue > 1e-6, t
    assert stats.binomtest(np.count_nonzero(draws > 0), n, 0.5).pvalue > 1e-6


def test_student_t3_sampler_matches_numpy_standard_t() -> None:
    """Two-sample KS against numpy's standard_t(3), an independent construction (normal over χ²)."""
    rng = default_rng(99)
    ours = StudentT(3).sample(200_000, rng=rng)
    reference = rng.standard_t(3, 200_000)
    assert stats.ks_2samp(ours, reference).pvalue > 1e-4
    assert stats.ks_2samp(1.05 * ours, reference).pvalue < 1e-4  # not vacuous


def test_student_t_sampler_paths() -> None:
    # Float path: df = 3 (int or float) takes the polar sampler, any other df numpy's standard_t.
    f = "float"
    assert not np.array_equal(StudentT(3).sample(20, rng=1, numerics=f), default_rng(1).standard_t(3, 20))
    t3 = StudentT(3).sample(20, rng=1, numerics=f)
    np.testing.assert_array_equal(StudentT(3.0).sample(20, rng=1, numerics=f), t3)
    np.testing.assert_array_equal(
        StudentT(3.5).sample(20, rng=1, numerics=f), default_rng(1).standard_t(3.5, 20)
    )
    dist = StudentT(3, 2.0)
    assert dist.sample((3, 5), rng=1).shape == (3, 5)
    assert dist.sample(0, rng=1).shape == (0,)
    assert np.shape(dist.sample((), rng=1)) == ()
    assert isinstance(dist.sample(rng=1), float)
