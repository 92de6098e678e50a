"""PolyPlace (HT seed 004): checks against the note's formulas in high precision and HT's lemmas."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from smoothdp.noise import Laplace, PolyPlace
from smoothdp.rng import default_rng

mp.mp.dps = 50


def _mp_pdf(x, s, a):
    """The density of note §1.1, written directly (no log space) in 50-digit arithmetic."""
    s, a, u = mp.mpf(s), mp.mpf(a), abs(mp.mpf(x)) / mp.mpf(s)
    k = 2 * ((a - 1) / a) ** a + a - 1
    norm = a / (2 * k * s)
    if u < 1 / a:
        return norm * (a - 1) * (1 - u) ** (a - 1)
    return norm * (a + 1) * (1 - 1 / a**2) ** a * (1 + u) ** (-a - 1)


def _mp_upper_tail(x, s, a):
    """P(X > x) for x ≥ 0 from the closed-form CDF of note §1.3, in 50-digit arithmetic."""
    s, a, u = mp.mpf(s), mp.mpf(a), mp.mpf(x) / mp.mpf(s)
    k = 2 * ((a - 1) / a) ** a + a - 1
    if u <= 1 / a:
        g = (a - 1) / k * (1 - (1 - u) ** a)
    else:
        g = 1 - (a + 1) / k * (1 - 1 / a**2) ** a * (1 + u) ** (-a)
    return (1 - g) / 2


# Note §1.5, computed there independently of this code (s = 1).
VARIANCE_TABLE = {2.2: 9.27746, 2.5: 2.93197, 3.0: 1.08286, 5.0: 0.174987, 10.0: 0.0284761, 100.0: 2.06666e-4}


@pytest.mark.parametrize(("shape", "expected"), VARIANCE_TABLE.items())
def test_variance_matches_table_of_lemma_13(shape: float, expected: float) -> None:
    assert PolyPlace(1.0, shape).var() == pytest.approx(expected, rel=5e-6)
    assert PolyPlace(3.0, shape).var() == pytest.approx(9.0 * expected, rel=5e-6)


@pytest.mark.parametrize("shape", [1.01, 1.5, 2.0])
def test_variance_is_infinite_up_to_shape_two(shape: float) -> None:
    assert PolyPlace(1.0, shape).var() == math.inf
    assert PolyPlace(1.0, shape).mean() == 0.0


def test_large_shape_variance_tends_to_laplace() -> None:
    # Var → 2 s²/α², the Laplace(s/α) variance (note §1.5), with relative gap O(1/α).
    for shape in (1e4, 1e8, 1e40):
        assert PolyPlace(1.0, shape).var() * shape**2 == pytest.approx(2.0, rel=10.0 / shape)


@pytest.mark.parametrize(("scale", "shape"), [(1.0, 1.5), (2.0, 3.0), (0.3, 10.0), (1.0, 200.0), (5.0, 1e6)])
def test_density_and_tails_match_high_precision_formulas(scale: float, shape: float) -> None:
    dist = PolyPlace(scale, shape)
    b = scale / shape
    xs = [0.0, 0.3 * b, 0.999999 * b, b, 1.000001 * b, 2 * b, 10 * b, 1e3 * scale, 1e9 * scale]
    for x in xs:
        assert float(dist.logpdf(x)) == pytest.approx(float(mp.log(_mp_pdf(x, scale, shape))), rel=1e-12)
        tail = float(_mp_upper_tail(x, scale, shape))
        assert float(dist.sf(x)) == pytest.approx(tail, rel=1e-11)
        assert float(dist.cdf(-x)) == pytest.approx(tail, rel=1e-11)


def test_logpdf_is_finite_at_huge_arguments() -> None:
    dist = PolyPlace(1.0, 3.0)
    x = 1e300
    assert float(dist.logpdf(x)) == pytest.approx(float(mp.log(_mp_pdf(x, 1.0, 3.0))), rel=1e-13)
    assert np.isfinite(dist.logpdf(np.finfo(float).max))


def test_density_is_continuous_at_the_breakpoint() -> None:
    for shape in (1.2, 3.0, 1e5):
        dist = PolyPlace(2.0, shape)
        b = 2.0 / shape
        assert float(dist.pdf(np.nextafter(b, 0))) == pytest.approx(float(dist.pdf(b)), rel=1e-9)


@pytest.mark.parametrize("shape", [1e4, 1e6])
def test_large_shape_ppf_cdf_round_trip(shape: float) -> None:
    dist = PolyPlace(shape, shape)  # behaves like Laplace(1)
    q = np.array([1e-12, 1e-6, 0.01, 0.2, 0.4, 0.49, 0.5 - 1e-9])
    x = dist.ppf(q)
    np.testing.assert_allclose(dist.cdf(x), q, rtol=1e-12)
    np.testing.assert_allclose(dist.sf(-x), q, rtol=1e-12)
    grid = np.array([1e-6, 1e-3, 0.5, 1.0, 1.0 + 1e-7, 3.0, 20.0])  # straddles the breakpoint at 1
    np.testing.assert_allclose(dist.ppf(dist.cdf(-grid)), -grid, rtol=1e-9)
    # Against the closed form in 50 digits, which sees no cancellation at all.
    for x0 in grid:
        assert float(dist.cdf(-x0)) == pytest.approx(float(_mp_upper_tail(x0, shape, shape)), rel=1e-12)


def test_converges_to_laplace_lemma_15() -> None:
    # HT Lemma 15: PolyPlace(a/γ, ε/γ) → Laplace(a/ε); here a/ε = b = 0.7 and α = ε/γ grows.
    b = 0.7
    laplace = Laplace(b)
    x = np.linspace(-12, 12, 2001) * b
    errors = [
        np.max(np.abs(PolyPlace(shape * b, shape).cdf(x) - laplace.cdf(x))) for shape in (1e2, 1e4, 1e6)
    ]
    assert errors[0] < 1e-2 and errors[1] < 1e-4 and errors[2] < 1e-6
    assert errors[0] / errors[1] > 50 and errors[1] / errors[2] > 50  # rate ~ 1/α
    core = np.abs(x) < 5 * b
    np.testing.assert_allclose(PolyPlace(1e6 * b, 1e6).pdf(x[core]), laplace.pdf(x[core]), rtol=1e-4)


def test_large_shape_sampler_is_laplace_like() -> None:
    b = 1.3
    draws = PolyPlace(1e6 * b, 1e6).sample(100_000, rng=default_rng(5))
    assert stats.kstest(draws, stats.laplace(scale=b).cdf).pvalue > 1e-6
    assert stats.kstest(draws, stats.laplace(scale=0.9 * b).cdf).pvalue < 1e-6


def test_sampler_reaches_the_polynomial_tail() -> None:
    # α = 1.2: P(|X| > 1e4) ≈ 2 × sf(1e4); with 2e5 draws the count is Poisson with a mean of tens.
    dist = PolyPlace(1.0, 1.2)
    draws = dist.sample(200_000, rng=default_rng(8))
    for threshold in (1e2, 1e4):
        p = 2.0 * float(_mp_upper_tail(threshold, 1.0, 1.2))
        count = np.count_nonzero(np.abs(draws) > threshold)
        assert stats.binomtest(count, draws.size, p).pvalue > 1e-6, threshold


def test_shape_is_kept_by_with_scale() -> None:
    dist = PolyPlace(2.0, 3.0).with_scale(5.0)
    assert (dist.scale, dist.shape) == (5.0, 3.0)
    assert dist.var() == pytest.approx(25.0 * VARIANCE_TABLE[3.0], rel=5e-6)
    assert repr(dist) == "PolyPlace(scale=5, shape=3)"


def test_inverse_is_elementwise_whatever_the_shape() -> None:
    # The inverse evaluates the core and tail formulas on their own draws only (gathered by index): the
    # result must not depend on the mix, the order or the shape, and NaN must stay NaN.
    dist = PolyPlace(1.0, 2.5)
    e = np.array(
        [0.0, 1e-300, 1e-9, 0.3, dist._exp_break, np.nextafter(dist._exp_break, 0), 2.0, 50.0, np.inf]
    )
    one_by_one = np.array([float(dist._abs_from_exp(np.array([v]))[0]) for v in e])
    np.testing.assert_array_equal(dist._abs_from_exp(e), one_by_one)
    np.testing.assert_array_equal(dist._abs_from_exp(e[::-1]), one_by_one[::-1])
    np.testing.assert_array_equal(dist._abs_from_exp(np.tile(e, (2, 1))), np.tile(one_by_one, (2, 1)))
    assert dist._abs_from_exp(np.array(0.3)).shape == ()
    assert np.isnan(dist._abs_from_exp(np.array([np.nan, 0.3]))[0])
    q = np.array([[1e-12, 0.3], [0.5, 1 - 1e-12]])
    np.testing.assert_array_equal(dist.ppf(q), dist.ppf(q.ravel()).reshape(2, 2))
