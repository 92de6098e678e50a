"""Threshold-type queries: closed forms against brute force, Lemma 4.3's table, smoothness, bad input."""

import numpy as np
import pytest
from _geo_brute import brute_smooth_sensitivity_1d, pointwise_lipschitz_on_grid, smooth_from_grid

from smoothdp.geo import BoundedRange, SoftThreshold, TwoWayThreshold
from smoothdp.sensitivity import smoothness_violation

BETAS = [0.05, 0.3, 1.5]
GROWTHS = ["exponential", "linear"]


def _test_points(t, theta):
    half = theta / 2
    return np.array(
        [
            t - 40,
            t - 7.3,
            t - half - 1.2,
            t - half - 1e-3,
            t - half,
            t - 0.1,
            t,
            t + 0.2 * half,
            t + half,
            t + half + 0.05,
            t + 2.7,
            t + 15.0,
        ]
    )


@pytest.mark.parametrize("theta", [1.0, 2.5])
@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("growth", GROWTHS)
def test_soft_threshold_matches_brute_force(theta, beta, growth):
    # The grid holds the test points and the band edges, where the sups are attained (Lemma 4.1),
    # so the brute force is exact and the closed form must agree to 1e-6 (and never be below it).
    t = 3.0
    q = SoftThreshold(t, theta)
    x = _test_points(t, theta)
    nodes = np.concatenate([np.linspace(t - 60, t + 60, 2401), [t - theta / 2, t + theta / 2]])
    brute = brute_smooth_sensitivity_1d(q.value, x, beta, nodes, growth)
    closed = q.smooth_sensitivity(x, beta, growth)
    assert np.all(closed >= brute)
    np.testing.assert_allclose(closed, brute, rtol=1e-6)


def test_soft_threshold_lipschitz_is_a_secant_sup_not_the_derivative():
    q = SoftThreshold(0.0, 2.0)
    x = np.array([-10.0, -1.0, 0.0, 0.5, 1.0, 4.0])
    # Lemma 4.1: 1/(|x−t| + θ/2) outside the band (the derivative there is 0), 1/θ inside.
    np.testing.assert_allclose(
        q.pointwise_lipschitz(x), [1 / 11, 1 / 2, 1 / 2, 1 / 2, 1 / 2, 1 / 5], rtol=1e-11
    )
    nodes = np.concatenate([np.linspace(-30, 30, 6001), x])
    grid = np.unique(nodes)
    lip = pointwise_lipschitz_on_grid(q.value(grid), grid)
    np.testing.assert_allclose(q.pointwise_lipschitz(x), lip[np.searchsorted(grid, x)], rtol=1e-9)


def test_soft_threshold_lemma_4_1_formula():
    t, theta, beta = 10_000.0, 1600.0, 1 / 7200
    x = np.array([90_000.0, 11_000.0, 9_000.0, 500.0])
    d = np.abs(x - t)
    expected = np.where(
        d <= theta / 2, 1 / theta, np.maximum(1 / (d + theta / 2), np.exp(-beta * (d - theta / 2)) / theta)
    )
    np.testing.assert_allclose(SoftThreshold(t, theta).smooth_sensitivity(x, beta), expected, rtol=1e-11)
    # Liang & Yi's one-way experiment: a user at 90 000 has S* ≈ 1.24e-5 at these settings.
    assert SoftThreshold(t, theta).smooth_sensitivity(90_000.0, beta) == pytest.approx(1.24e-5, rel=0.01)


@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("growth", GROWTHS)
def test_bounded_range_matches_brute_force(beta, growth):
    a, b, theta = -2.0, 3.0, 1.5
    q = BoundedRange(bounds=(a, b), width=theta)
    edges = [a - theta / 2, a + theta / 2, b - theta / 2, b + theta / 2]
    x = np.array([-30.0, -4.0, a - theta / 2, -2.0, a + theta / 2, 0.3, 0.5, b - theta / 2, 3.1, 5.0, 25.0])
    nodes = np.concatenate([np.linspace(-50, 50, 2001), edges])
    brute = brute_smooth_sensitivity_1d(q.value, x, beta, nodes, growth)
    closed = q.smooth_sensitivity(x, beta, growth)
    assert np.all(closed >= brute)
    np.testing.assert_allclose(closed, brute, rtol=1e-6)
    np.testing.assert_allclose(q.value(np.array([a, b, 0.5, a - 2])), [0.5, 0.5, 1.0, 0.0])


# -- two-way threshold -----------------------------------------------------------------------------------
def _lemma_4_3(x, t, tau, beta):
    """Lemma 4.3's region table (docs/theory/geo-privacy.md#two-way-threshold), implemented independently."""
    r1 = tau / np.sqrt(2)
    r2 = r1 + tau
    c = t + r1 + tau / 2
    x1, x2 = x[:, 0], x[:, 1]
    rho = np.hypot(x1 - c[0], x2 - c[1])
    e = lambda a, gap: np.maximum(1 / a, np.exp(-beta * gap) / tau)  # noqa: E731
    s11 = e(x1 - t[0] + tau / 2, x1 - t[0] - tau / 2)
    s12 = e(x2 - t[1] + tau / 2, x2 - t[1] - tau / 2)
    out = np.full(x.shape[0], np.nan)
    box = (x1 <= c[0]) & (x2 <= c[1])
    regions = [
        ((x2 > c[1]) & (x1 < t[0] - tau / 2), e(t[0] + tau / 2 - x1, t[0] - tau / 2 - x1)),  # S01
        ((x1 > c[0]) & (x2 < t[1] - tau / 2), e(t[1] + tau / 2 - x2, t[1] - tau / 2 - x2)),  # S02
        (box & (rho > r2), e(rho - r1, rho - r2)),  # S0a
        ((x2 > c[1]) & (np.abs(x1 - t[0]) <= tau / 2), np.full(x.shape[0], 1 / tau)),  # St1
        ((x1 > c[0]) & (np.abs(x2 - t[1]) <= tau / 2), np.full(x.shape[0], 1 / tau)),  # St2
        (box & (rho >= r1) & (rho <= r2), np.full(x.shape[0], 1 / tau)),  # Sta
        ((x1 > t[0] + tau / 2) & (x1 <= c[0]) & (x2 > c[1]), s11),  # S11
        ((x1 > c[0]) & (x2 > t[1] + tau / 2) & (x2 <= c[1]), s12),  # S12
        ((x1 > c[0]) & (x2 > c[1]), np.maximum(s11, s12)),  # S13
        (box & (rho < r1), e(r2 - rho, r1 - rho)),  # S1a
    ]
    for mask, val in regions:
        out = np.where(mask & np.isnan(out), val, out)
    return out


@pytest.mark.parametrize("beta", [0.02, 0.2, 1.0])
def test_two_way_threshold_matches_lemma_4_3(beta):
    rng = np.random.default_rng(5)
    t, tau = np.array([10.0, -4.0]), 2.0
    x = np.concatenate([t + rng.uniform(-8, 12, (4000, 2)), t + rng.uniform(-1, 4, (4000, 2))])
    expected = _lemma_4_3(x, t, tau, beta)
    assert not np.any(np.isnan(expected))
    np.testing.assert_allclose(TwoWayThreshold(t, tau).smooth_sensitivity(x, beta), expected, rtol=1e-11)


def test_two_way_threshold_values_in_each_piece():
    t, tau = np.array([0.0, 0.0]), 2.0
    q = TwoWayThreshold(t, tau)
    r1 = tau / np.sqrt(2)
    c = t + r1 + tau / 2
    pts = np.array(
        [t, c, [0.5, 10.0], [10.0, -0.5], c - (r1 + tau / 2) * np.array([1, 1]) / np.sqrt(2), [-5, 5]]
    )
    expected = [0.0, 1.0, (0.5 + 1) / 2, (-0.5 + 1) / 2, (r1 + tau - (r1 + tau / 2)) / tau, 0.0]
    np.testing.assert_allclose(q.value(pts), expected, atol=1e-12)
    np.testing.assert_allclose(q.hard_value(np.array([[1.0, 1.0], [1.0, -1.0]])), [1.0, 0.0])


def test_two_way_threshold_brute_force_lower_bound_2d():
    # A 2-D grid over (x', x'') pairs gives a lower bound of S*: the closed form is never below it and
    # the grid gets close to it.
    t, tau, beta = np.array([0.0, 0.0]), 1.0, 0.5
    q = TwoWayThreshold(t, tau)
    axis = np.linspace(-3, 4, 57)
    nodes = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    lip = pointwise_lipschitz_on_grid(q.value(nodes), nodes)
    x = np.array([[-2.5, -2.0], [-1.0, 3.0], [0.2, 0.3], [2.0, 2.5], [3.5, -2.5], [1.2, 1.1]])
    brute = smooth_from_grid(x, nodes, lip, beta)
    closed = q.smooth_sensitivity(x, beta)
    assert np.all(closed >= brute)
    assert np.all(closed <= 1.1 * brute)


@pytest.mark.parametrize(
    "query",
    [SoftThreshold(1.0, 2.0), BoundedRange(bounds=(-1.0, 4.0), width=1.0)],
)
@pytest.mark.parametrize("growth", GROWTHS)
def test_smoothness_on_random_pairs_1d(query, growth):
    rng = np.random.default_rng(1)
    x = rng.uniform(-30, 30, 20000)
    xp = x + rng.normal(0, 3, x.size) * rng.choice([1e-3, 1, 5], x.size)
    beta = 0.4
    s, sp = query.smooth_sensitivity(x, beta, growth), query.smooth_sensitivity(xp, beta, growth)
    assert smoothness_violation(s, sp, np.abs(x - xp), beta, growth) <= 1e-13
    assert np.all(s >= query.pointwise_lipschitz(x))


@pytest.mark.parametrize("growth", GROWTHS)
def test_smoothness_on_random_pairs_two_way(growth):
    rng = np.random.default_rng(2)
    q = TwoWayThreshold([0.0, 0.0], 1.0)
    x = rng.uniform(-5, 6, (20000, 2))
    xp = x + rng.normal(0, 1, (20000, 2)) * rng.choice([1e-3, 0.3, 3], (20000, 1))
    beta = 0.7
    d = np.linalg.norm(x - xp, axis=1)
    s, sp = q.smooth_sensitivity(x, beta, growth), q.smooth_sensitivity(xp, beta, growth)
    assert smoothness_violation(s, sp, d, beta, growth) <= 1e-13
    assert np.all(s >= q.pointwise_lipschitz(x))


def test_parameter_grids_broadcast_over_users():
    t = np.array([0.0, 1.0, 5.0])
    q = SoftThreshold(t, 2.0)
    x = np.linspace(-3, 8, 7)
    grid = q.smooth_sensitivity(x, 0.3)
    assert grid.shape == (3, 7)
    for i, ti in enumerate(t):
        np.testing.assert_array_equal(grid[i], SoftThreshold(ti, 2.0).smooth_sensitivity(x, 0.3))
    tw = TwoWayThreshold(np.array([[0.0, 0.0], [1.0, 2.0]]), np.array([1.0, 3.0]))
    pts = np.zeros((4, 5, 2))
    assert tw.value(pts).shape == (2, 4, 5)
    np.testing.assert_array_equal(tw.lipschitz, [1.0, 1 / 3])


def test_bad_input():
    with pytest.raises(ValueError, match="width"):
        SoftThreshold(0.0, 0.0)
    with pytest.raises(ValueError, match="width"):
        TwoWayThreshold([0.0, 0.0], -1.0)
    with pytest.raises(ValueError, match="thresholds"):
        TwoWayThreshold([0.0, 0.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="upper - lower"):
        BoundedRange(bounds=(0.0, 1.0), width=2.0)
    with pytest.raises(ValueError, match="bounds must be a pair"):
        BoundedRange(bounds=(0.0, 1.0, 2.0), width=0.5)
    with pytest.raises(TypeError):
        BoundedRange(0.0, 1.0, 0.5)  # the old (low, high, width) call: refused, not misread
    q = SoftThreshold(0.0, 1.0)
    # Data policy: NaN takes the threshold (f = 1/2), ±inf is clipped to ±2^400: no exception.
    np.testing.assert_array_equal(q.value(np.array([0.0, np.nan])), [0.5, 0.5])
    s_inf = q.smooth_sensitivity(np.array([np.inf, -np.inf]), 0.1)
    np.testing.assert_array_equal(s_inf, q.smooth_sensitivity(np.array([2.0**400, -(2.0**400)]), 0.1))
    assert np.all(s_inf > 0)
    with pytest.raises(ValueError, match="beta"):
        q.smooth_sensitivity(1.0, 0.0)
    with pytest.raises(ValueError, match="growth"):
        q.smooth_sensitivity(1.0, 0.1, growth="quadratic")
    with pytest.raises(ValueError, match="shape"):
        TwoWayThreshold([0.0, 0.0], 1.0).value(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="at least"):
        q.value(np.array([]))


def test_mean_over_users_in_blocks():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 3, (3001, 2))
    t = rng.normal(0, 1, (4, 5, 2))
    q = TwoWayThreshold(t, 0.7)
    np.testing.assert_allclose(q.mean(x, block=100), q.value(x).mean(axis=-1), rtol=1e-12)
    np.testing.assert_allclose(q.mean(x, hard=True, block=77), q.hard_value(x).mean(axis=-1), rtol=1e-12)
