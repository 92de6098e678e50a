"""Mechanisms and baselines: worst-case privacy loss over adversarial pairs (with broken twins),
unbiasedness, exact variances, the noise-a-priori MSE, the fast grid counts, bad input."""

import copy
import dataclasses
from functools import partial

import numpy as np
import pytest

from smoothdp.accounting import Accountant, BudgetError
from smoothdp.audit import hockey_stick_divergence, max_log_density_ratio
from smoothdp.geo import (
    BoundedRange,
    GaussianKDE,
    GlobalLipschitz,
    LipschitzQuery,
    LocalDP,
    NoiseAPriori,
    SmoothSensitivityMechanism,
    SoftThreshold,
    TwoWayThreshold,
    quadrant_fractions,
    threshold_fractions,
)
from smoothdp.mechanism import REGISTRY, Mechanism
from smoothdp.privacy import GeoPrivacy, PureDP, compose, sum_up
from smoothdp.release import Release

EPS = 0.8

PAIRS_1D = [
    (0.0, 0.01),
    (0.45, 0.55),
    (0.5, 0.6),
    (-0.55, -0.45),
    (2.0, 2.5),
    (5.0, 7.0),
    (10.0, 30.0),
    (-3.0, -2.0),
    (-20.0, -10.0),
    (0.3, -0.9),
    (1.0, 4.0),
    (0.0, 0.0001),
]
PAIRS_2D = [
    ((0.0, 0.0), (0.01, 0.0)),
    ((0.4, 0.4), (0.6, 0.7)),
    ((1.0, 1.0), (2.0, 2.0)),
    ((-2.0, -2.0), (-1.0, -1.5)),
    ((3.0, -0.2), (3.0, 0.4)),
    ((8.0, 8.0), (12.0, 9.0)),
    ((-6.0, 1.0), (-4.0, 1.5)),
    ((1.2, 0.9), (1.21, 0.91)),
    ((0.6, 5.0), (1.0, 5.0)),
    ((2.0, 3.0), (2.6, 3.0)),
]

QUERIES = {
    "soft threshold": (SoftThreshold(0.0, 1.0), PAIRS_1D),
    "bounded range": (BoundedRange(bounds=(-1.0, 1.5), width=1.0), PAIRS_1D),
    "two-way": (TwoWayThreshold([0.0, 0.0], 1.0), PAIRS_2D),
    "kde 2-D": (GaussianKDE([0.5, 0.5], 1.0), PAIRS_2D),
    "kde 1-D": (GaussianKDE(0.2, 0.7, dimension=1), PAIRS_1D),
    "lipschitz": (
        LipschitzQuery(np.tanh, lipschitz=1.0, bounds=(-25, 35), resolution=1201, curvature=0.77),
        PAIRS_1D,
    ),
}


def _output_grid(centres, scales):
    parts = []
    for f, s in zip(centres, scales, strict=True):
        geo = s * np.geomspace(1e-7, 1e9, 1500)
        parts += [f + geo, f - geo, np.linspace(f - 60 * s, f + 60 * s, 12001)]
    return np.concatenate(parts)


def _worst_ratio(mech, query, pairs):
    """max over pairs of max_y [ln p_x(y) − ln p_x'(y)] / (ε‖x − x'‖)."""
    worst = 0.0
    for a, b in pairs + [(b, a) for a, b in pairs]:
        xa, xb = np.asarray(a, float), np.asarray(b, float)
        d = float(np.linalg.norm(xa - xb))
        fa, fb = float(query.value(xa)), float(query.value(xb))
        sa = float(query.smooth_sensitivity(xa, mech.beta, mech.growth))
        sb = float(query.smooth_sensitivity(xb, mech.beta, mech.growth))
        grid = _output_grid([fa, fb], [sa, sb])
        loss = max_log_density_ratio(partial(mech.log_density, x=xa), partial(mech.log_density, x=xb), grid)
        worst = max(worst, loss / (mech.epsilon * d))
    return worst


def _twin(mech, *, scale_factor=1.0, beta_factor=1.0):
    twin = copy.copy(mech)
    cal = mech.calibration
    twin.calibration = dataclasses.replace(
        cal, noise=cal.noise.with_scale(cal.noise.scale * scale_factor), beta=cal.beta * beta_factor
    )
    return twin


@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.parametrize("family", ["student_t", "cauchy", "polyplace"])
def test_smooth_sensitivity_mechanism_privacy_loss(name, family):
    query, pairs = QUERIES[name]
    mech = SmoothSensitivityMechanism(query, epsilon=EPS, noise=family)
    assert mech.guarantee == GeoPrivacy(EPS)
    assert _worst_ratio(mech, query, pairs) <= 1 + 1e-9


@pytest.mark.parametrize("name", ["soft threshold", "two-way", "kde 2-D"])
@pytest.mark.parametrize("family", ["student_t", "cauchy", "polyplace"])
def test_broken_twin_with_half_the_noise_fails(name, family):
    query, pairs = QUERIES[name]
    mech = SmoothSensitivityMechanism(query, epsilon=EPS, noise=family)
    assert _worst_ratio(_twin(mech, scale_factor=0.5), query, pairs) > 1.2


@pytest.mark.parametrize(
    ("family", "factor"),
    [("polyplace", 2.0), ("student_t", 4.0), ("cauchy", 6.0)],  # β·factor exceeds the dilation budget
)
def test_broken_twin_with_a_less_smooth_bound_fails(family, factor):
    query, pairs = QUERIES["soft threshold"]
    mech = SmoothSensitivityMechanism(query, epsilon=EPS, noise=family)
    assert _worst_ratio(_twin(mech, beta_factor=factor), query, pairs) > 1.05


@pytest.mark.parametrize("name", ["soft threshold", "two-way", "kde 2-D", "kde 1-D"])
def test_laplace_rule_hockey_stick(name):
    # Lemma 3.6: (ε, δ)-geo-privacy with growth 1 + βt: δ(e^{ε d}) ≤ δ on every pair. Twins: a quarter
    # of the noise (sliding 2ε), or S computed with 4β (the dilation (λ−1)|Z| exceeds its share).
    query, pairs = QUERIES[name]
    delta = 1e-4
    mech = SmoothSensitivityMechanism(query, epsilon=EPS, noise="laplace", delta=delta)
    assert mech.growth == "linear" and mech.guarantee == GeoPrivacy(EPS, delta)

    def divergences(m):
        out = []
        for a, b in pairs + [(b, a) for a, b in pairs]:
            xa, xb = np.asarray(a, float), np.asarray(b, float)
            d = float(np.linalg.norm(xa - xb))
            fa, fb = float(query.value(xa)), float(query.value(xb))
            sa = float(query.smooth_sensitivity(xa, m.beta, m.growth))
            sb = float(query.smooth_sensitivity(xb, m.beta, m.growth))
            out.append(float(hockey_stick_divergence(m.calibration.noise, sb / sa, (fb - fa) / sa, EPS * d)))
        return np.array(out)

    assert np.all(divergences(mech) <= delta * (1 + 1e-6))
    assert np.max(divergences(_twin(mech, scale_factor=0.25))) > 10 * delta
    assert np.max(divergences(_twin(mech, beta_factor=4.0))) > 2 * delta


@pytest.mark.parametrize("name", ["soft threshold", "two-way", "kde 2-D"])
def test_baselines_privacy_loss(name):
    query, pairs = QUERIES[name]
    for mech in [GlobalLipschitz(query, epsilon=EPS), LocalDP(query, epsilon=2.0)]:
        twin = copy.copy(mech)
        twin.scale = mech.scale / 2
        worst, worst_twin = 0.0, 0.0
        for a, b in pairs:
            xa, xb = np.asarray(a, float), np.asarray(b, float)
            budget = mech.epsilon * (np.linalg.norm(xa - xb) if isinstance(mech, GlobalLipschitz) else 1.0)
            fa = float(query.value(xa))
            grid = fa + float(mech.scale) * np.linspace(-40, 40, 8001)
            worst = max(
                worst,
                max_log_density_ratio(partial(mech.log_density, x=xa), partial(mech.log_density, x=xb), grid)
                / budget,
            )
            worst_twin = max(
                worst_twin,
                max_log_density_ratio(partial(twin.log_density, x=xa), partial(twin.log_density, x=xb), grid)
                / budget,
            )
        assert worst <= 1 + 1e-9
        if isinstance(mech, GlobalLipschitz):
            assert worst_twin > 1.5
    assert LocalDP(query, epsilon=2.0).guarantee == PureDP(2.0, neighbours="local")


def test_noise_a_priori_privacy_loss_1d_2d_and_distance():
    q1 = SoftThreshold(0.0, 1.0)
    m1 = NoiseAPriori(q1, epsilon=EPS)
    for a, b in PAIRS_1D:
        grid = np.linspace(min(a, b) - 40, max(a, b) + 40, 20001)
        loss = max_log_density_ratio(partial(m1.log_density, x=a), partial(m1.log_density, x=b), grid)
        assert loss <= EPS * abs(a - b) * (1 + 1e-9) + 1e-15
    q2 = GaussianKDE([0.0, 0.0], 1.0)
    m2 = NoiseAPriori(q2, epsilon=EPS)
    axis = np.linspace(-30, 30, 301)
    ys = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    for a, b in PAIRS_2D:
        xa, xb = np.asarray(a), np.asarray(b)
        d = np.linalg.norm(xa - xb)
        line = xa + np.outer(np.linspace(-50, 50, 2001), (xa - xb) / d)  # the worst outputs lie on this line
        grid = np.concatenate([ys, line])
        loss = max_log_density_ratio(partial(m2.log_density, x=xa), partial(m2.log_density, x=xb), grid)
        assert loss <= EPS * d * (1 + 1e-9)
        assert loss >= EPS * d * (1 - 1e-6)  # attained beyond x on the line: planar Laplace is tight
    m3 = NoiseAPriori(q2, epsilon=EPS, variant="distance")
    for a, b in PAIRS_2D:
        xa, xb = np.asarray(a), np.asarray(b)
        grid = np.linspace(-40, 60, 20001)
        loss = max_log_density_ratio(partial(m3.log_density, x=xa), partial(m3.log_density, x=xb), grid)
        assert loss <= EPS * np.linalg.norm(xa - xb) * (1 + 1e-9) + 1e-15


# -- utility: unbiasedness, variances, MSE -------------------------------------------------------------
def test_smooth_sensitivity_mechanism_is_unbiased_with_the_stated_variance():
    rng = np.random.default_rng(11)
    x = rng.lognormal(0.0, 1.0, 200_000)
    q = SoftThreshold(1.5, 0.5)
    mech = SmoothSensitivityMechanism(q, epsilon=2.0, noise="polyplace")
    est = mech.estimate(mech.privatize(x, rng=4))
    var = mech.variance(x)
    assert abs(est.mean - q.value(x).mean()) <= 5 * np.sqrt(var.of_mean)
    assert est.total == pytest.approx(est.mean * x.size)
    # Liang & Yi's experimental setting: T(3), β = ε/9: per-user variance 9·S*²/ε².
    t3 = SmoothSensitivityMechanism(q, epsilon=2.0, noise="student_t")
    s = q.smooth_sensitivity(x[:100], 2.0 / 9)
    np.testing.assert_allclose(t3.variance(x[:100]).per_user, 9 * s**2 / 4.0, rtol=1e-9)
    np.testing.assert_allclose(
        t3.variance(x, per_user=False, block=777).total, t3.variance(x).total, rtol=1e-10
    )


def test_laplace_rule_report_variance_matches_simulation():
    q = GaussianKDE([0.0, 0.0], 1.0)
    mech = SmoothSensitivityMechanism(q, epsilon=1.0, noise="laplace", delta=1e-5)
    x = np.tile([[1.3, 0.4]], (200_000, 1))
    reports = mech.privatize(x, rng=9)
    per_user = mech.variance(x[:1]).per_user[0]
    assert reports.var() == pytest.approx(per_user, rel=0.02)
    assert reports.mean() == pytest.approx(float(q.value(x[0])), abs=5 * np.sqrt(per_user / x.shape[0]))


def test_global_lipschitz_and_local_dp_variances():
    q = SoftThreshold(0.0, 2.0)
    x = np.linspace(-5, 5, 11)
    gl, ldp = GlobalLipschitz(q, epsilon=0.5), LocalDP(q, epsilon=1.5)
    np.testing.assert_allclose(gl.variance(x).per_user, 2 * (0.5 / 0.5) ** 2)
    np.testing.assert_allclose(ldp.variance(x).per_user, 2 / 1.5**2)
    reports = gl.privatize(np.zeros(100_000), rng=2)
    assert reports.var() == pytest.approx(2.0, rel=0.03)


def test_noise_a_priori_mse_section_4_1_1():
    # MSE(F̂) = Σ p_i(1 − p_i) + (Σ s_i p_i)², p_i = ½ e^{−ε|x_i − t|}, s_i = ±1 (hard threshold).
    rng = np.random.default_rng(0)
    t, eps = 0.0, 1.0
    x = rng.normal(0.6, 1.0, 2000)
    p = 0.5 * np.exp(-eps * np.abs(x - t))
    s = np.where(x > t, 1.0, -1.0)
    expected = np.sum(p * (1 - p)) + np.sum(s * p) ** 2
    mech = NoiseAPriori(SoftThreshold(t, 0.5), epsilon=eps, hard=True)
    err = mech.mse(x, truth="hard")
    assert float(err.mse_total) == pytest.approx(expected, rel=1e-10)
    # ... and against simulation.
    gen = np.random.default_rng(3)
    sums = np.array([mech.estimate(mech.privatize(x, rng=gen)).total for _ in range(3000)])
    truth = np.sum(x > t)
    assert np.mean((sums - truth) ** 2) == pytest.approx(expected, rel=0.08)


@pytest.mark.parametrize(
    ("query", "hard", "variant"),
    [
        (SoftThreshold(0.3, 1.0), False, "location"),
        (BoundedRange(bounds=(-1.0, 1.0), width=0.8), False, "location"),
        (BoundedRange(bounds=(-1.0, 1.0), width=0.8), True, "location"),
        (GaussianKDE(0.0, 1.0, dimension=1), False, "location"),
        (GaussianKDE([0.0, 0.5], 1.0), False, "location"),
        (GaussianKDE([0.0, 0.5], 1.0), False, "distance"),
        (TwoWayThreshold([0.0, 0.0], 1.0), True, "location"),
        (TwoWayThreshold([0.0, 0.0], 1.0), False, "location"),
    ],
)
def test_noise_a_priori_moments_against_monte_carlo(query, hard, variant):
    mech = NoiseAPriori(query, epsilon=1.2, hard=hard, variant=variant, quadrature=48)
    pts = (
        np.array([0.1, 0.9, -1.7])
        if query.dimension == 1
        else np.array([[0.1, 0.2], [1.0, 1.5], [-1.0, 0.3]])
    )
    mean, var = mech.moments(pts)
    n = 400_000
    for i in range(3):
        users = np.repeat(pts[i : i + 1], n, axis=0) if query.dimension == 2 else np.full(n, pts[i])
        vals = mech.apply(mech.privatize(users, rng=100 + i))
        assert vals.mean() == pytest.approx(mean[i], abs=6 * np.sqrt(var[i] / n) + 2e-4)
        assert vals.var() == pytest.approx(var[i], rel=0.03, abs=1e-3)


def test_fast_grid_counts():
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (5000, 2))
    t1, t2 = np.linspace(-2, 2, 9), np.array([0.5, -1.0, 0.0, 0.0])
    frac = quadrant_fractions(x, t1, t2)
    direct = np.mean(
        (x[None, None, :, 0] > t1[:, None, None]) & (x[None, None, :, 1] > t2[None, :, None]), axis=-1
    )
    np.testing.assert_array_equal(frac, direct)
    xr = np.round(x[:, 0], 1)  # ties with the thresholds
    np.testing.assert_array_equal(threshold_fractions(xr, t1), np.mean(xr[None, :] > t1[:, None], axis=1))


def test_grids_of_queries_and_composition():
    q = SoftThreshold(np.array([0.0, 1.0, 2.0]), 0.5)
    mech = SmoothSensitivityMechanism(q, epsilon=1.0)
    reports = mech.privatize(np.linspace(-1, 3, 40), rng=1)
    assert reports.shape == (3, 40)
    assert mech.estimate(reports).mean.shape == (3,)
    assert mech.total_guarantee() == GeoPrivacy(3.0) == mech.guarantee
    assert mech.per_query == GeoPrivacy(1.0) and mech.epsilon == 1.0
    na = NoiseAPriori(q, epsilon=1.0)
    assert na.estimate(na.privatize(np.linspace(-1, 3, 40), rng=1)).mean.shape == (3,)
    assert na.guarantee == na.total_guarantee() == GeoPrivacy(1.0)  # one report answers the 3 queries


def test_mechanism_bad_input():
    q = SoftThreshold(0.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        SmoothSensitivityMechanism(q, epsilon=0.0)
    with pytest.raises(ValueError, match="noise"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="gaussian")
    with pytest.raises(ValueError, match="delta"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="laplace")
    with pytest.raises(ValueError, match="beta"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="polyplace", beta=2.0)
    with pytest.raises(TypeError, match="query"):
        SmoothSensitivityMechanism(lambda v: v, epsilon=1.0)
    mech = SmoothSensitivityMechanism(q, epsilon=1.0)
    assert np.all(np.isfinite(mech.privatize(np.array([1.0, np.nan]), rng=1)))  # NaN: imputed, no error
    with pytest.raises(ValueError, match="numerics"):
        SmoothSensitivityMechanism(q, epsilon=1.0, numerics="fast")
    with pytest.raises(ValueError, match="reports"):
        SmoothSensitivityMechanism(SoftThreshold([0.0, 1.0], 1.0), epsilon=1.0).estimate(np.zeros(5))
    with pytest.raises(ValueError, match="epsilon"):
        GlobalLipschitz(q, epsilon=-1.0)
    with pytest.raises(ValueError, match="distance"):
        NoiseAPriori(q, epsilon=1.0, variant="distance")
    with pytest.raises(ValueError, match="hard"):
        NoiseAPriori(GaussianKDE([0.0, 0.0], 1.0), epsilon=1.0, hard=True)
    with pytest.raises(ValueError, match="truth"):
        NoiseAPriori(q, epsilon=1.0).mse(np.zeros(3), truth="median")

    with pytest.raises(ValueError, match="depends on a distance"):
        NoiseAPriori(
            LipschitzQuery(np.tanh, lipschitz=1.0, bounds=(-3, 3), resolution=101, curvature=0.77),
            epsilon=1.0,
            variant="distance",
        )
    with pytest.raises(TypeError, match="query"):
        GlobalLipschitz("not a query", epsilon=1.0)


# -- the mechanism contract ------------------------------------------------------------------------------
def _kde_grid(points_per_axis=31):
    axis = np.linspace(-3.0, 3.0, points_per_axis)
    return GaussianKDE(np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1), 1.0)


def _every_mechanism(query):
    return [
        SmoothSensitivityMechanism(query, epsilon=0.001),
        GlobalLipschitz(query, epsilon=0.001),
        NoiseAPriori(query, epsilon=0.001),
        LocalDP(query, epsilon=0.001),
    ]


def test_guarantee_is_what_one_user_spends_on_a_31x31_grid():
    eps = 0.001
    q = _kde_grid()
    assert q.param_shape == (31, 31)
    grid_total = GeoPrivacy(sum_up([eps] * 961))  # 961·ε exactly, rounded up once
    assert grid_total.epsilon <= compose(*[GeoPrivacy(eps)] * 961).epsilon  # pairwise rounding: looser
    assert grid_total.epsilon == pytest.approx(0.961) and grid_total.epsilon >= 0.961
    ss = SmoothSensitivityMechanism(q, epsilon=eps)
    assert ss.guarantee == grid_total and ss.per_query == GeoPrivacy(eps)
    assert GlobalLipschitz(q, epsilon=eps).guarantee == grid_total
    assert LocalDP(q, epsilon=eps).guarantee == PureDP(grid_total.epsilon, neighbours="local")
    # Regression: noise a priori sends one noisy location that answers every centre: ε once, not 0.961.
    nap = NoiseAPriori(q, epsilon=eps)
    assert nap.guarantee == GeoPrivacy(eps)
    assert nap.total_guarantee() == GeoPrivacy(eps)
    # ... while the distance variant sends one noisy distance per centre.
    assert NoiseAPriori(q, epsilon=eps, variant="distance").guarantee == grid_total


def test_a_grid_whose_deltas_add_up_to_one_is_refused():
    q = SoftThreshold(np.linspace(0, 1, 20), 0.5)
    with pytest.raises(ValueError, match="20 queries"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="laplace", delta=0.06)


@pytest.mark.parametrize("kind", ["smooth", "global", "a priori", "local"])
def test_every_geo_mechanism_follows_the_contract(kind):
    q = SoftThreshold(0.0, 1.0)
    mech = dict(zip(["smooth", "global", "a priori", "local"], _every_mechanism(q), strict=True))[kind]
    assert isinstance(mech, Mechanism)
    assert f"{type(mech).__module__}.{type(mech).__qualname__}" in REGISTRY
    assert mech.proof.startswith("docs/theory/geo-privacy.md#")
    page = open(mech.proof.split("#")[0], encoding="utf-8").read().lower()
    heading = mech.proof.split("#")[1].replace("-", " ")
    assert f"## {heading}" in page.replace("-", " ")
    assert "notes/" not in type(mech).source and "seed 00" not in type(mech).source
    assert mech.source and mech.name
    neighbours = "local" if kind == "local" else "metric"
    assert mech.guarantee.neighbours == neighbours == mech.neighbours
    x = np.linspace(-2.0, 2.0, 9)
    release = mech.release(x, rng=5)
    assert isinstance(release, Release)
    assert release.guarantee == mech.guarantee and release.guarantee.neighbours == neighbours
    assert release.proof == mech.proof and release.statistic == q.name
    np.testing.assert_array_equal(release.value, mech.privatize(x, rng=5))  # same draws either way
    assert mech.estimate(release).mean == pytest.approx(mech.estimate(release.value).mean)
    assert "smooth_sensitivity" not in repr(release) and "noise_scale" not in repr(release)
    if kind == "smooth":
        assert release.beta == mech.beta and release.details["noise"] == "polyplace"


def test_release_guarantee_is_metric_geo_privacy():
    mech = SmoothSensitivityMechanism(TwoWayThreshold([0.0, 0.0], 1.0), epsilon=0.5)
    release = mech.release(np.zeros((4, 2)), rng=1)
    assert release.guarantee.neighbours == "metric"
    assert release.guarantee == GeoPrivacy(0.5)
    assert release.value.shape == (4,)


class _RecordingAccountant(Accountant):
    """Remembers the generator's state when it is charged (it must be the untouched state)."""

    def __init__(self, gen, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gen = gen
        self.states = []

    def charge(self, guarantee, *, label=""):
        self.states.append(copy.deepcopy(self.gen.bit_generator.state))
        return super().charge(guarantee, label=label)


@pytest.mark.parametrize("entry", ["release", "privatize"])
@pytest.mark.parametrize("kind", range(4))
def test_accountant_is_charged_before_noise(entry, kind):
    q = SoftThreshold(np.array([0.0, 1.0]), 1.0)
    mech = _every_mechanism(q)[kind]
    neighbours = mech.guarantee.neighbours
    gen = np.random.default_rng(3)
    before = copy.deepcopy(gen.bit_generator.state)
    acc = _RecordingAccountant(gen, 1.0, neighbours=neighbours)
    getattr(mech, entry)(np.linspace(-1, 2, 50), accountant=acc, rng=gen)
    assert acc.states == [before]  # charged once, before any draw
    assert gen.bit_generator.state != before  # ... and noise was drawn afterwards
    assert acc.spent.epsilon == pytest.approx(mech.guarantee.epsilon)
    expected = 0.001 if kind == 2 else 0.002  # noise a priori: one report for both queries
    assert acc.spent.epsilon == pytest.approx(expected)


@pytest.mark.parametrize("entry", ["release", "privatize"])
def test_budget_error_charges_nothing_and_draws_nothing(entry):
    mech = SmoothSensitivityMechanism(SoftThreshold(np.array([0.0, 1.0, 2.0]), 1.0), epsilon=0.2)
    acc = Accountant(0.5, neighbours="metric")
    gen = np.random.default_rng(4)
    before = copy.deepcopy(gen.bit_generator.state)
    with pytest.raises(BudgetError):
        getattr(mech, entry)(np.linspace(-1, 2, 50), accountant=acc, rng=gen)  # 3 × 0.2 > 0.5
    assert gen.bit_generator.state == before
    assert acc.spent == 0.0 and len(acc) == 0
    # Noise a priori on the same grid costs 0.2 once: it fits.
    nap = NoiseAPriori(mech.query, epsilon=0.2)
    getattr(nap, entry)(np.linspace(-1, 2, 50), accountant=acc, rng=gen)
    assert acc.spent.epsilon == pytest.approx(0.2)


def test_accountant_of_the_wrong_relation_is_refused_before_noise():
    gen = np.random.default_rng(0)
    before = copy.deepcopy(gen.bit_generator.state)
    with pytest.raises(ValueError, match="geo-privacy"):
        SmoothSensitivityMechanism(SoftThreshold(0.0, 1.0), epsilon=1.0).release(
            np.zeros(3), accountant=Accountant(5.0), rng=gen
        )
    with pytest.raises(ValueError):
        LocalDP(SoftThreshold(0.0, 1.0), epsilon=1.0).privatize(
            np.zeros(3), accountant=Accountant(5.0, neighbours="metric"), rng=gen
        )
    assert gen.bit_generator.state == before


def test_keyword_only_privacy_parameters_and_noise_options():
    q = SoftThreshold(0.0, 1.0)
    assert SmoothSensitivityMechanism(q, epsilon=1.0).calibration.family == "polyplace"  # the default
    for make in (SmoothSensitivityMechanism, GlobalLipschitz, NoiseAPriori, LocalDP):
        with pytest.raises(TypeError):
            make(q, 1.0)  # epsilon is keyword-only
    with pytest.raises(TypeError, match="df"):
        SmoothSensitivityMechanism(q, epsilon=1.0, df=5)  # polyplace takes no df
    with pytest.raises(TypeError, match="gamma"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="student_t", gamma=2)
    with pytest.raises(TypeError, match="dimension"):
        SmoothSensitivityMechanism(q, epsilon=1.0, noise="cauchy", dimension=2)
    with pytest.raises(ValueError, match="delta"):
        SmoothSensitivityMechanism(q, epsilon=1.0, delta=1e-5)  # polyplace is pure
    t5 = SmoothSensitivityMechanism(q, epsilon=1.0, noise="student_t", df=5)
    assert t5.calibration.noise.df == 5
    with pytest.raises(TypeError):
        SmoothSensitivityMechanism(q, epsilon=1.0).privatize(np.zeros(3), 1)  # rng is keyword-only
