"""Planar Laplace: density over the plane, radius law Gamma(2, b), uniform angle, per-coordinate variance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from smoothdp.noise import PlanarLaplace
from smoothdp.rng import default_rng


@pytest.mark.parametrize("b", [0.4, 1.0, 7.0])
def test_density_integrates_to_one_over_the_plane(b: float) -> None:
    dist = PlanarLaplace(b)
    radial = lambda r: 2 * math.pi * r * float(dist.pdf([r, 0.0]))  # noqa: E731
    assert integrate.quad(radial, 0, math.inf)[0] == pytest.approx(1.0, abs=1e-10)
    # A Cartesian check over a box holding all but ~1e-9 of the mass.
    half = 25 * b
    box = integrate.dblquad(lambda y, x: float(dist.pdf([x, y])), -half, half, -half, half, epsabs=1e-10)[0]
    assert box == pytest.approx(1.0, abs=1e-7)


def test_density_formula_isotropy_and_shapes() -> None:
    b = 1.7
    dist = PlanarLaplace(b)
    pts = np.array([[0.0, 0.0], [3.0, 4.0], [-4.0, 3.0], [0.0, -5.0]])
    expected = np.exp(-np.array([0.0, 5.0, 5.0, 5.0]) / b) / (2 * math.pi * b * b)
    np.testing.assert_allclose(dist.pdf(pts), expected, rtol=1e-14)
    assert dist.logpdf(np.zeros((3, 4, 2))).shape == (3, 4)
    assert np.ndim(dist.logpdf([1.0, 2.0])) == 0
    for bad in ([1.0, 2.0, 3.0], np.zeros((5, 3)), 1.0):
        with pytest.raises(ValueError, match="x"):
            dist.logpdf(bad)


@pytest.mark.parametrize("b", [0.4, 3.0])
def test_radius_cdf_sf_ppf_are_gamma_2(b: float) -> None:
    dist, ref = PlanarLaplace(b), stats.gamma(2, scale=b)
    r = np.array([0.0, 1e-6, 0.1, 1.0, 4.0, 30.0, 300.0]) * b
    np.testing.assert_allclose(dist.cdf(r), ref.cdf(r), rtol=1e-13)
    np.testing.assert_allclose(dist.sf(r), ref.sf(r), rtol=1e-12)
    q = np.array([1e-12, 1e-4, 0.3, 0.5, 0.9, 1 - 1e-9])
    np.testing.assert_allclose(dist.ppf(q), ref.ppf(q), rtol=1e-10)
    np.testing.assert_allclose(dist.sf(dist.ppf(1 - 1e-12)), 1e-12, rtol=1e-3)  # 1 − (1 − 1e-12) ≠ 1e-12
    assert dist.ppf(0.0) == 0.0 and dist.ppf(1.0) == math.inf


def test_per_coordinate_variance_is_3b2() -> None:
    b = 1.3
    dist = PlanarLaplace(b)
    # ∫∫ y₁² f = ∫_0^∞ ∫_0^{2π} r² cos²θ f(r) r dθ dr = π ∫ r³ f(r) dr.
    integral = integrate.quad(lambda r: math.pi * r**3 * float(dist.pdf([r, 0.0])), 0, math.inf)[0]
    assert dist.var() == pytest.approx(integral, rel=1e-10)
    assert dist.var() == pytest.approx(3 * b * b, rel=1e-15)
    assert dist.std() == pytest.approx(math.sqrt(3) * b, rel=1e-15)
    assert dist.dimension == 2 and dist.mean() == 0.0


@pytest.mark.parametrize("b", [0.5, 2.0])
def test_sampler_radius_and_angle(b: float) -> None:
    dist = PlanarLaplace(b)
    draws = dist.sample(100_000, rng=default_rng(31))
    assert draws.shape == (100_000, 2)
    radius = np.hypot(draws[:, 0], draws[:, 1])
    angle = np.arctan2(draws[:, 1], draws[:, 0])
    assert stats.kstest(radius, stats.gamma(2, scale=b).cdf).pvalue > 1e-6
    for factor in (0.9, 1.1):
        assert stats.kstest(radius, stats.gamma(2, scale=factor * b).cdf).pvalue < 1e-6
    assert stats.kstest(angle, stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-6
    # Angle independent of radius: the angle is uniform within the inner and the outer half of the radii.
    inner = radius < np.median(radius)
    for part in (inner, ~inner):
        assert stats.kstest(angle[part], stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-6
    # Coordinates: variance 3b² each, uncorrelated (loose: 4.5 standard errors).
    cov = np.cov(draws.T)
    assert cov[0, 0] == pytest.approx(3 * b * b, rel=0.03) and cov[1, 1] == pytest.approx(3 * b * b, rel=0.03)
    assert abs(cov[0, 1]) < 0.03 * 3 * b * b


def test_sample_shapes_and_reproducibility() -> None:
    dist = PlanarLaplace(1.0)
    assert dist.sample(rng=1).shape == (2,)
    assert dist.sample(5, rng=1).shape == (5, 2)
    assert dist.sample((3, 4), rng=1).shape == (3, 4, 2)
    np.testing.assert_array_equal(dist.sample(10, rng=2), dist.sample(10, rng=2))
    assert np.all(np.isfinite(dist.sample(10)))
