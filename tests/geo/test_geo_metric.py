"""The generic procedure (Liang & Yi, CCS 2024, Section 3.3) as a cross-check of every closed form,
and LipschitzQuery."""

import numpy as np
import pytest

from smoothdp.geo import GaussianKDE, LipschitzQuery, SoftThreshold, TwoWayThreshold
from smoothdp.sensitivity import (
    convex_ramp_lipschitz,
    convex_ramp_smooth_sensitivity,
    numeric_pointwise_lipschitz,
    numeric_smooth_sensitivity,
    smoothness_violation,
)


@pytest.mark.parametrize("growth", ["exponential", "linear"])
def test_generic_brackets_the_soft_threshold(growth):
    q = SoftThreshold(0.0, 1.0)
    x = np.array([-8.0, -2.0, -0.6, 0.0, 0.3, 0.7, 2.0, 6.5])
    res = numeric_smooth_sensitivity(
        q.value, x, 0.3, lipschitz=1.0, bounds=(-12, 12), growth=growth, resolution=2401, curvature=1e-9
    )
    closed = q.smooth_sensitivity(x, 0.3, growth)
    assert np.all(res.lower <= closed * (1 + 1e-9))
    assert np.all(closed <= res.upper * (1 + 1e-6))  # the closed forms are themselves rounded up
    assert np.all(res.upper <= 1.02 * closed)


@pytest.mark.parametrize("beta", [0.1, 0.5])
def test_generic_brackets_the_kde_in_1d(beta):
    q = GaussianKDE(0.0, 1.0, dimension=1)
    x = np.array([-9.0, -2.0, -0.6, 0.0, 0.4, 1.0, 3.0])
    res = numeric_smooth_sensitivity(
        q.value, x, beta, lipschitz=float(q.lipschitz), bounds=(-15, 15), resolution=3001
    )
    closed = q.smooth_sensitivity(x, beta)
    assert res.curvature_estimated and res.curvature == pytest.approx(2.0, rel=1e-3)  # 2 × max|f"|
    assert np.all(res.lower <= closed)
    assert np.all(closed <= res.upper * (1 + 1e-6))  # the closed forms are themselves rounded up
    assert np.all(res.upper <= 1.05 * closed)


def test_generic_brackets_the_two_way_threshold_in_2d():
    q = TwoWayThreshold([0.0, 0.0], 1.0)
    x = np.array([[-2.0, -1.5], [0.3, 0.2], [1.5, 2.0], [2.5, -2.5]])
    res = numeric_smooth_sensitivity(
        q.value, x, 0.5, lipschitz=1.0, bounds=((-4, 4), (-4, 4)), dimension=2, resolution=41, curvature=1e-9
    )
    closed = q.smooth_sensitivity(x, 0.5)
    assert np.all(res.lower <= closed * (1 + 1e-9))
    assert np.all(closed <= res.upper * (1 + 1e-6))  # the closed forms are themselves rounded up


def test_generic_bound_is_smooth_and_above_the_pointwise_lipschitz():
    f = lambda v: np.sin(v) + 0.3 * v  # noqa: E731
    rng = np.random.default_rng(0)
    x = rng.uniform(-5, 5, 400)
    xp = np.clip(x + rng.normal(0, 1, 400), -5, 5)
    kw = dict(lipschitz=1.3, bounds=(-5, 5), resolution=801, curvature=1.0)
    s = numeric_smooth_sensitivity(f, x, 0.4, **kw).upper
    sp = numeric_smooth_sensitivity(f, xp, 0.4, **kw).upper
    assert smoothness_violation(s, sp, np.abs(x - xp), 0.4) <= 1e-12
    assert np.all(s >= numeric_pointwise_lipschitz(f, x, bounds=(-5, 5), resolution=4001))


def test_convex_ramp_closed_form_by_region():
    u = np.array([-3.0, -0.5, 0.0, 0.4, 1.0, 2.5])
    w, beta = 1.0, 0.2
    expected = [
        max(1 / 4, np.exp(-0.6)),
        max(1 / 1.5, np.exp(-0.1)),
        1.0,
        1.0,
        1.0,
        max(1 / 2.5, np.exp(-0.3)),
    ]
    np.testing.assert_allclose(convex_ramp_smooth_sensitivity(u, w, beta), expected, rtol=1e-11)


def test_lipschitz_query_with_a_curvature_bound():
    f = lambda v: np.tanh(v)  # noqa: E731
    q = LipschitzQuery(f, lipschitz=1.0, bounds=(-6, 6), resolution=1201, curvature=0.77)
    x = np.linspace(-6, 6, 13)
    s = q.smooth_sensitivity(x, 0.5)
    assert np.all(s >= q.pointwise_lipschitz(x) * (1 - 1e-12))
    assert np.all(q.pointwise_lipschitz(x) >= numeric_pointwise_lipschitz(f, x, bounds=(-6, 6)))
    lo, hi = q.value_range
    assert lo <= -np.tanh(6) and hi >= np.tanh(6)
    assert float(q.value(np.array([9.0]))[0]) == pytest.approx(np.tanh(6))  # clipped by default
    assert float(q.value(np.array([np.nan]))[0]) == 0.0  # NaN: the box's midpoint
    strict = LipschitzQuery(f, lipschitz=1.0, bounds=(-6, 6), resolution=301, curvature=1.0, clip=False)
    with pytest.raises(ValueError, match="outside the domain") as err:
        strict.value(np.array([7.0, 8.0]))
    assert "trusted" in str(err.value) and "2" not in str(err.value).split("[")[0]  # no count


def test_generic_bad_input():
    f = lambda v: v  # noqa: E731
    with pytest.raises(ValueError, match="bounds"):
        numeric_smooth_sensitivity(f, [0.0], 0.1, lipschitz=1.0, bounds=(1, -1))
    with pytest.raises(ValueError, match="lipschitz"):
        numeric_smooth_sensitivity(f, [0.0], 0.1, lipschitz=0.0, bounds=(-1, 1))
    with pytest.raises(ValueError, match="beta"):
        numeric_smooth_sensitivity(f, [0.0], 0.0, lipschitz=1.0, bounds=(-1, 1))
    with pytest.raises(ValueError, match="finite"):
        numeric_smooth_sensitivity(f, [np.nan], 0.1, lipschitz=1.0, bounds=(-1, 1))
    with pytest.raises(ValueError, match="one finite value"):
        numeric_smooth_sensitivity(
            lambda v: np.full_like(v, np.nan), [0.0], 0.1, lipschitz=1.0, bounds=(-1, 1)
        )
    with pytest.raises(TypeError, match="callable"):
        LipschitzQuery(3.0, lipschitz=1.0, bounds=(-1, 1))


@pytest.mark.parametrize("growth", ["exponential", "linear"])
def test_convex_ramp_band_identity_and_single_rounding(growth):
    # L = 1/(w + d_band) (d_band = max(u − w, −u, 0)) is the three secants 1/u, 1/w, 1/(w − u); the
    # smooth sensitivity rounds max{L, edge} up once, so it is never below the (rounded) L.
    w = np.array([0.7, 1.0, 1600.0])[:, None]
    u = np.concatenate([np.linspace(-60.0, 60.0, 24001), [0.0, -1e-300, 1e-300, 1e300, -1e300]]) * w
    secants = 1.0 / np.maximum(w, np.where(u > 0, u, w - u))
    lipschitz = convex_ramp_lipschitz(u, w)
    assert np.all(lipschitz > secants) and np.all(lipschitz <= secants * (1 + 1.1e-12))
    beta = 0.3
    s = convex_ramp_smooth_sensitivity(u, w, beta, growth)
    assert np.all(s >= lipschitz)
    d_band = np.maximum(np.maximum(u - w, -u), 0.0)
    decay = np.exp(-beta * d_band) if growth == "exponential" else 1.0 / (1.0 + beta * d_band)
    exact = np.maximum(secants, decay / w)
    assert np.all(s > exact) and np.all(s <= exact * (1 + 1.1e-12))
    assert float(convex_ramp_smooth_sensitivity(0.5, 1.0, 0.2, growth)) == pytest.approx(1.0, rel=2e-12)
