"""Gaussian KDE: the Λ profile against brute force and its reference values, exact S*, smoothness."""

import numpy as np
import pytest
from _geo_brute import brute_smooth_sensitivity_1d, pointwise_lipschitz_on_grid, smooth_from_grid
from scipy.special import lambertw

from smoothdp.geo import GaussianKDE, kde_lipschitz_profile, kde_smooth_profile
from smoothdp.sensitivity import smoothness_violation


def _lambda_brute(s):
    """Λ(s) = sup_u |g(s) − g(u)|/|s − u| over a fine u grid (a lower bound, accurate to ~1e-9)."""
    u = np.linspace(0.0, 60.0, 3_000_001)
    g = lambda v: np.exp(-v * v / 2)  # noqa: E731
    out = []
    for si in np.atleast_1d(s):
        d = np.abs(u - si)
        ok = d > 1e-9
        sec = np.where(ok, np.abs(g(si) - g(u)) / np.where(ok, d, 1.0), 0.0)
        out.append(max(sec.max(), si * np.exp(-si * si / 2)))
    return np.array(out)


def test_lambda_reference_values():
    # The Λ table of docs/theory/geo-privacy.md#gaussian-kde (6 digits), Λ(0) with Lambert W, and
    # max Λ = Λ(1) = e^{-1/2}.
    s = np.array([0.25, 0.5, 0.75, 1.5, 2, 3, 5, 10, 20])
    table = np.array(
        [0.516548, 0.566309, 0.596656, 0.573703, 0.499954, 0.350855, 0.204215, 0.100506, 0.050063]
    )
    np.testing.assert_allclose(kde_lipschitz_profile(s), table, atol=1.5e-6)
    ell = np.sqrt(-2 * lambertw(-np.exp(-0.5) / 2, -1).real - 1)
    assert ell == pytest.approx(1.585201065, abs=1e-9)
    lam0 = (1 - np.exp(-(ell**2) / 2)) / ell
    assert float(kde_lipschitz_profile(0.0)) == pytest.approx(lam0, rel=1e-6)
    assert float(kde_lipschitz_profile(0.0)) >= lam0
    assert float(kde_lipschitz_profile(1.0)) == pytest.approx(np.exp(-0.5), rel=1e-6)


def test_lambda_never_below_brute_force_and_within_1e6():
    s = np.array([0.0, 0.1, 0.37, 0.99, 1.0, 1.01, 1.7, 2.6, 3.3, 7.77, 42.0, 333.0, 700.0, 2500.0])
    brute = _lambda_brute(s)
    ours = kde_lipschitz_profile(s)
    assert np.all(ours >= brute)
    np.testing.assert_allclose(ours, brute, rtol=1e-6)


@pytest.mark.parametrize("b", [0.01, 0.16, 0.39, 1.0, 3.0])
def test_profile_at_c_equal_one_and_far_out(b):
    # For any b, h·S*(c = 1) = e^{-1/2} (the global max of Λ); for large b and c ≥ 3, S* = Λ(c).
    assert float(kde_smooth_profile(1.0, b)) == pytest.approx(np.exp(-0.5), rel=1e-6)
    c = np.array([0.0, 0.5, 2.0, 6.0, 40.0])
    prof = kde_smooth_profile(c, b)
    assert np.all(prof >= kde_lipschitz_profile(c) * (1 - 1e-12))
    if b >= 1.0:
        far = np.array([4.0, 9.0, 30.0])
        np.testing.assert_allclose(kde_smooth_profile(far, b), _lambda_brute(far), rtol=1e-6)


@pytest.mark.parametrize("b", [0.03, 0.16, 0.39, 1.0])
@pytest.mark.parametrize("growth", ["exponential", "linear"])
def test_kde_smooth_sensitivity_against_pair_brute_force_1d(b, growth):
    # 1-D KDE, h = 2: a grid over (x', x'') pairs bounds S* from below; ours is never below it and the
    # grid (step 0.005 h) gets within 1e-4 of it.
    h = 2.0
    q = GaussianKDE(0.0, h, dimension=1)
    x = h * np.array([0.0, 0.3, 1.0, 1.5, 2.0, 3.0, 5.0, 9.0])
    nodes = np.linspace(-16 * h, 16 * h, 6401)
    beta = b / h
    brute = brute_smooth_sensitivity_1d(q.value, x, beta, nodes, growth)
    ours = q.smooth_sensitivity(x, beta, growth)
    assert np.all(ours >= brute)
    np.testing.assert_allclose(ours, brute, rtol=1e-4)


def test_kde_reduction_to_the_ray_in_2d():
    # Lemma 4.5 (the sup lives on the ray from t through x): a 2-D pair grid never exceeds our S*.
    h, beta = 1.0, 0.3
    q = GaussianKDE([0.5, -0.5], h)
    axis = np.linspace(-4, 5, 46)
    nodes = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    lip = pointwise_lipschitz_on_grid(q.value(nodes), nodes)
    x = np.array([[0.5, -0.5], [1.5, 0.5], [3.0, -2.0], [-3.0, 4.0]])
    brute = smooth_from_grid(x, nodes, lip, beta)
    ours = q.smooth_sensitivity(x, beta)
    assert np.all(ours >= brute)
    assert np.all(ours <= 1.05 * brute)


def test_reference_code_shortfall_is_not_repeated():
    # docs/theory/geo-privacy.md#gaussian-kde: at b = 0.39, c = 2 the authors' reference code gives
    # 0.865 × the true S*. Ours is ≥ the brute force.
    h = 1.0
    q = GaussianKDE(0.0, h, dimension=1)
    nodes = np.linspace(-14, 14, 5601)
    brute = brute_smooth_sensitivity_1d(q.value, np.array([2.0]), 0.39, nodes)
    ours = q.smooth_sensitivity(np.array([2.0]), 0.39)
    assert ours[0] >= brute[0] and ours[0] > brute[0] * 0.99


@pytest.mark.parametrize("growth", ["exponential", "linear"])
def test_kde_smoothness_on_random_pairs(growth):
    rng = np.random.default_rng(3)
    h, beta = 1.5, 0.2
    q = GaussianKDE([0.0, 0.0], h)
    x = rng.normal(0, 6, (20000, 2))
    scale = rng.choice([1e-4, 1e-2, 1.0, 10.0], (20000, 1))
    xp = x + rng.normal(0, 1, (20000, 2)) * scale
    d = np.linalg.norm(x - xp, axis=1)
    s, sp = q.smooth_sensitivity(x, beta, growth), q.smooth_sensitivity(xp, beta, growth)
    assert smoothness_violation(s, sp, d, beta, growth) <= 1e-12
    assert np.all(s >= q.pointwise_lipschitz(x))


def test_kde_smoothness_far_beyond_the_table():
    beta = 0.02  # b = 0.02: the tail branch near c ≈ 512 bandwidths
    c = np.linspace(500, 600, 20001)
    prof = kde_smooth_profile(c, beta)
    steps = np.abs(np.diff(np.log(prof)))
    assert np.all(steps <= beta * np.diff(c) * (1 + 1e-9) + 1e-15)


def test_kde_grid_of_centres_and_bandwidths():
    centres = np.array([[0.0, 0.0], [3.0, 1.0], [-2.0, 5.0]])
    q = GaussianKDE(centres, np.array([1.0, 2.0, 1.0]))
    x = np.random.default_rng(0).normal(0, 3, (50, 2))
    grid = q.smooth_sensitivity(x, 0.1)
    assert grid.shape == (3, 50)
    for i in range(3):
        one = GaussianKDE(centres[i], q.bandwidth[i])
        np.testing.assert_array_equal(grid[i], one.smooth_sensitivity(x, 0.1))
        np.testing.assert_allclose(
            q.value(x)[i], np.exp(-((x - centres[i]) ** 2).sum(1) / (2 * q.bandwidth[i] ** 2))
        )
    np.testing.assert_allclose(q.lipschitz, np.exp(-0.5) / np.array([1.0, 2.0, 1.0]), rtol=1e-11)


def test_kde_bad_input():
    with pytest.raises(ValueError, match="bandwidth"):
        GaussianKDE([0.0, 0.0], 0.0)
    with pytest.raises(ValueError, match="bandwidth"):
        GaussianKDE(0.0, -1.0)
    with pytest.raises(ValueError, match="dimension"):
        GaussianKDE(0.0, 1.0, dimension=3)
    q = GaussianKDE([0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="shape"):
        q.value(np.zeros(4))
    # Data policy (no data-dependent exception): a NaN coordinate takes the centre's coordinate.
    np.testing.assert_array_equal(
        q.smooth_sensitivity(np.array([[0.0, np.nan]]), 0.1), q.smooth_sensitivity(np.zeros((1, 2)), 0.1)
    )
    with pytest.raises(ValueError, match="beta"):
        q.smooth_sensitivity(np.zeros((1, 2)), -0.1)
