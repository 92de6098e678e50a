"""The geo mechanisms on the exact release path (issue 11): enclosures, data policy, lattice, Lipschitz query.

Expected values come from independent exact computations here (rationals, mpmath at 200 bits), never from
the code under test.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from smoothdp.audit.lattice import cell_probability, numpy_laplace_release, producible_on_grid
from smoothdp.exact import FLOAT_SAMPLER_LABEL, HARDENED_SAMPLER_LABEL, OutputGrid
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
)
from smoothdp.rng import default_rng

mpmath.mp.prec = 200


def _mp(v: float | Fraction) -> mpmath.mpf:
    fr = Fraction(v)
    return mpmath.mpf(fr.numerator) / fr.denominator


def _clip01(v):
    return min(max(v, 0), 1)


def _adversarial_1d(edges: list[float], rng: np.random.Generator) -> np.ndarray:
    """Points a few ulps around each edge, plus random and far points."""
    pts = [rng.normal(0, 1e4, 200), rng.uniform(-3, 3, 200), [0.0, 1e300, -1e300, 5e-324]]
    for e in edges:
        pts.append(e + np.spacing(abs(e) + 1e-300) * np.arange(-8, 9))
        pts.append(e + rng.uniform(-1e-9, 1e-9, 20))
    return np.concatenate([np.asarray(p, dtype=float) for p in pts])


def _assert_encloses(enclosure, exact: np.ndarray) -> None:
    lo = np.asarray(enclosure.lower).ravel()
    hi = np.asarray(enclosure.upper).ravel()
    for k, truth in enumerate(exact.ravel()):
        assert _mp(float(lo[k])) <= truth <= _mp(float(hi[k])), (k, lo[k], hi[k], truth)


# -- certified enclosures ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("t", "w"), [(0.0, 1.0), (10_000.0, 1_600.0), (1e6, 3e-3), (-7.3, 1e-8), (0.1, 0.3)])
def test_soft_threshold_enclosure_holds_the_exact_value(t, w):
    q = SoftThreshold(t, w)
    x = _adversarial_1d([t - w / 2, t, t + w / 2], np.random.default_rng(1))
    enc = q.value_enclosure(x)
    exact = np.array([_mp(_clip01((Fraction(v) - Fraction(t)) / Fraction(w) + Fraction(1, 2))) for v in x])
    _assert_encloses(enc, exact)
    # Narrow (so the fast path decides almost every user): the bound's own size, ~2·ulp(t + w/2)/w.
    assert np.max(enc.upper - enc.lower) <= 4 * np.spacing(abs(t) + w) / w + 1e-13
    for k in (0, 5, len(x) // 2):  # refine is exact
        assert _mp(enc.refine(k, 64)) == exact[k]


def test_bounded_range_enclosure_holds_the_exact_value():
    a, b, w = -1.25, 3.5, 0.7
    q = BoundedRange(bounds=(a, b), width=w)
    x = _adversarial_1d([a - w / 2, a + w / 2, b - w / 2, b + w / 2], np.random.default_rng(2))
    enc = q.value_enclosure(x)
    fa, fb, fw = Fraction(a), Fraction(b), Fraction(w)
    half = Fraction(1, 2)
    up = [_clip01((Fraction(v) - fa) / fw + half) for v in x]
    down = [_clip01((fb - Fraction(v)) / fw + half) for v in x]
    exact = np.array([_mp(min(a_, b_)) for a_, b_ in zip(up, down, strict=True)])
    _assert_encloses(enc, exact)


def _two_way_exact(x: np.ndarray, t: tuple[float, float], tau: float) -> mpmath.mpf:
    """LY's f_τ: clip(1 − (dist(x, Q₀) − R₁)/τ), Q₀ = {y ≥ c}, R₁ = τ/√2, c = T + (R₁ + τ/2)(1, 1)."""
    tau_m = _mp(tau)
    r1 = tau_m / mpmath.sqrt(2)
    gaps = [max(_mp(t[k]) + r1 + tau_m / 2 - _mp(float(x[k])), 0) for k in (0, 1)]
    return _clip01(1 - (mpmath.sqrt(gaps[0] ** 2 + gaps[1] ** 2) - r1) / tau_m)


def test_two_way_threshold_enclosure_holds_the_exact_value():
    t, tau = (1_000.0, -250.0), 40.0
    q = TwoWayThreshold(t, tau)
    rng = np.random.default_rng(3)
    c = np.array(t) + (tau / math.sqrt(2) + tau / 2)
    x = np.concatenate(
        [
            rng.normal(c, 60.0, (300, 2)),
            c + rng.normal(0, 1e-9, (50, 2)),  # at the rounded corner's centre
            np.column_stack([np.full(50, t[0] + tau / 2), rng.normal(t[1] + 100, 50, 50)]),  # band edge
            np.array([[1e300, 1e300], [-1e300, 5.0]]),
        ]
    )
    enc = q.value_enclosure(x)
    exact = np.array([_two_way_exact(p, t, tau) for p in x])
    _assert_encloses(enc, exact)
    for k in (0, 310, 360):
        ball = enc.refine(k, 128)
        assert ball.lower() <= float(exact[k]) + 1e-30 and ball.upper() >= float(exact[k]) - 1e-30
        assert float(ball.rad()) < 1e-30


@pytest.mark.parametrize("dimension", [1, 2])
def test_kde_enclosure_holds_the_exact_value(dimension):
    h = 1452.0
    centre = 123.456 if dimension == 1 else [123.456, -7.5]
    q = GaussianKDE(centre, h)
    rng = np.random.default_rng(4)
    shape = (400,) if dimension == 1 else (400, 2)
    x = np.concatenate([rng.normal(0, 5e4, shape), rng.normal(0, 1e-3, shape) + np.asarray(centre)])
    enc = q.value_enclosure(x)
    cen = np.broadcast_to(np.asarray(centre, dtype=float), x.shape)
    diffs = np.atleast_2d(x.T).T, np.atleast_2d(cen.T).T  # (n, d) points and centres
    sq = [
        sum((_mp(float(a)) - _mp(float(b))) ** 2 for a, b in zip(p, c, strict=True))
        for p, c in zip(*diffs, strict=True)
    ]
    exact = np.array([mpmath.exp(-s / (2 * _mp(h) ** 2)) for s in sq])
    _assert_encloses(enc, exact)
    dist = q._distance_enclosure(x)
    _assert_encloses(dist, np.array([mpmath.sqrt(s) for s in sq]))


def test_numpy_exp_is_within_the_assumed_error():
    """The KDE bound assumes numpy's exp within 16 ulps; check it against mpmath on hard arguments."""
    a = np.concatenate([np.random.default_rng(5).uniform(0, 745, 3000), [0.0, 1e-300, 708.3, 744.4]])
    got = np.exp(-a)
    for ai, gi in zip(a, got, strict=True):
        truth = mpmath.exp(-_mp(float(ai)))
        if gi > 2.2250738585072014e-308:
            assert abs(_mp(float(gi)) - truth) <= 16 * _mp(float(np.spacing(gi)))


# -- data policy ------------------------------------------------------------------------------------------
def test_nan_takes_the_public_default_point_and_inf_is_clipped():
    cases = [
        (SoftThreshold([0.0, 4.0], 1.0), 2.0),
        (BoundedRange(bounds=(1.0, 5.0), width=1.0), 3.0),
        (GaussianKDE(3.0, 1.0), 3.0),
    ]
    for q, default in cases:
        np.testing.assert_array_equal(q.value(np.array([np.nan])), q.value(np.array([default])))
        np.testing.assert_array_equal(q.value(np.array([np.inf, -np.inf])), q.value([2.0**400, -(2.0**400)]))
    two = TwoWayThreshold([1.0, 3.0], 1.0)
    np.testing.assert_array_equal(two.value([[np.nan, 7.0]]), two.value([[1.0, 7.0]]))
    lq = LipschitzQuery(np.tanh, lipschitz=1.0, bounds=(-2, 6), resolution=101, curvature=0.77)
    np.testing.assert_array_equal(lq.value([np.nan, np.inf, -np.inf]), np.tanh([2.0, 6.0, -2.0]))


@pytest.mark.parametrize(
    "build",
    [
        lambda: SmoothSensitivityMechanism(SoftThreshold(0.0, 1.0), epsilon=1.0),
        lambda: SmoothSensitivityMechanism(GaussianKDE([0.0, 0.0], 1.0), epsilon=1.0),
        lambda: GlobalLipschitz(SoftThreshold(0.0, 1.0), epsilon=1.0),
        lambda: LocalDP(SoftThreshold(0.0, 1.0), epsilon=1.0),
        lambda: NoiseAPriori(SoftThreshold(0.0, 1.0), epsilon=1.0),
        lambda: NoiseAPriori(GaussianKDE([0.0, 0.0], 1.0), epsilon=1.0),
        lambda: NoiseAPriori(GaussianKDE(0.0, 1.0), epsilon=1.0, variant="distance"),
    ],
)
def test_non_finite_points_never_raise_and_the_release_is_hardened(build):
    mech = build()
    x = np.array([0.3, np.nan, np.inf, -np.inf, 1e308])
    if mech.query.dimension == 2:
        x = np.column_stack([x, x[::-1]])
    release = mech.release(x, rng=default_rng(3))
    assert np.all(np.isfinite(release.value))
    assert release.sampler == HARDENED_SAMPLER_LABEL
    assert np.array_equal(mech.grid.round(release.value), release.value)  # every report on the grid
    assert "certif" not in release.details["sensitivity_bound"]


def test_float_numerics_is_labelled():
    mech = SmoothSensitivityMechanism(SoftThreshold(0.0, 1.0), epsilon=1.0, numerics="float")
    assert mech.release(np.zeros(5), rng=default_rng(1)).sampler == FLOAT_SAMPLER_LABEL
    for cls in (GlobalLipschitz, LocalDP, NoiseAPriori):
        with pytest.raises(ValueError, match="numerics"):
            cls(SoftThreshold(0.0, 1.0), epsilon=1.0, numerics="double")


# -- lattice regression (issue 11, finding 2) -------------------------------------------------------------
N_DRAWS = 3000


def _threshold_mechanism(noise: str, numerics: str) -> SmoothSensitivityMechanism:
    extra = {"delta": 1e-6} if noise == "laplace" else {}
    return SmoothSensitivityMechanism(
        SoftThreshold(0.0, 1.0), epsilon=1.0, noise=noise, numerics=numerics, **extra
    )


@pytest.mark.parametrize("noise", ["cauchy", "laplace"])
def test_exact_path_every_output_of_a_neighbour_is_producible(noise):
    """x = 0 and x' = 0.01 (f = 1/2 and 0.51 exactly, S = 1 in the band): decided exactly."""
    mech = _threshold_mechanism(noise, "exact")
    x, x_prime = 0.0, 0.01
    s = float(mech.smooth_sensitivity(np.array([x]))[0])
    assert s == float(mech.smooth_sensitivity(np.array([x_prime]))[0])
    centres = {x: Fraction(1, 2), x_prime: Fraction(x_prime) + Fraction(1, 2)}
    for user, other in ((x_prime, x), (x, x_prime)):
        y = mech.privatize(np.full(N_DRAWS, user), rng=default_rng(11))
        ok = producible_on_grid(y, grid=mech.grid, center=centres[other], sensitivity=s)
        assert ok.all(), f"{np.count_nonzero(~ok)} outputs of x={user} cannot come from x={other}"
        # Information only: each cell has a positive probability under the other user's law.
        prob = cell_probability(
            y[:200], grid=mech.grid, center=centres[other], sensitivity=s, noise=mech.calibration.noise
        )
        assert np.all(prob > 0)


def test_float_path_fails_the_same_check():
    """The float path's outputs are off the public grid, and (Laplace) exactly decidable as unproducible."""
    for noise in ("cauchy", "laplace"):
        mech = _threshold_mechanism(noise, "float")
        y = mech.privatize(np.full(N_DRAWS, 0.01), rng=default_rng(11))
        on_grid = producible_on_grid(y, grid=OutputGrid.for_bounds(0.0, 1.0), center=Fraction(1, 2))
        assert on_grid.mean() < 0.1
    # Laplace: numpy's sampler is a monotone map of its 53-bit lattice, so producibility is decidable
    # exactly (smoothdp.audit.lattice); a large share of x' = 0.01's outputs cannot come from x = 0.
    mech = _threshold_mechanism("laplace", "float")
    y = mech.privatize(np.full(N_DRAWS, 0.01), rng=default_rng(12))
    s = float(mech.smooth_sensitivity(np.array([0.0]))[0])  # 1/w rounded up; the same for x' = 0.01
    model = numpy_laplace_release(0.5, s, mech.calibration.noise.scale)
    if not model.producible(
        _threshold_mechanism("laplace", "float").privatize(np.full(200, 0.0), rng=default_rng(13))
    ).all():
        pytest.skip("the float Laplace sampler is not numpy's (the lattice model does not apply)")
    share = 1.0 - model.producible(y).mean()
    assert share > 0.3


# -- LipschitzQuery: a bump narrower than the grid step (issue 11, finding 3) -------------------------------
_A, _SIGMA, _X0 = 4.2e-4, 1e-4, 0.0005  # max |f'| = A·√2·e^{-1/2}/σ ≈ 3.6, between two nodes (step 0.001)
_TRUE_SLOPE = _A * math.sqrt(2) * math.exp(-0.5) / _SIGMA


def _bump(v):
    return _A * np.exp(-(((np.asarray(v) - _X0) / _SIGMA) ** 2))


def _bump_grad_bound(lower, upper):
    """sup |f'| over [lower, upper]: |f'| = (2A/σ)·|u|e^{−u²}, u = (x − x0)/σ, peaks at |u| = 1/√2."""
    ul, uh = (np.asarray(lower) - _X0) / _SIGMA, (np.asarray(upper) - _X0) / _SIGMA
    g = lambda u: 2 * _A / _SIGMA * np.abs(u) * np.exp(-(u**2))  # noqa: E731
    peak = 1 / math.sqrt(2)
    inside = ((ul <= peak) & (uh >= peak)) | ((ul <= -peak) & (uh >= -peak))
    return np.where(inside, g(peak), np.maximum(g(ul), g(uh))) * (1 + 1e-12)


def test_lipschitz_query_without_a_certificate_is_refused_unless_heuristic_is_asked():
    with pytest.raises(ValueError, match=r"curvature=M.*grad_bound=g.*heuristic=True"):
        LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), resolution=2001)
    with pytest.raises(ValueError, match="heuristic=True applies only without"):
        LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), curvature=1.0, heuristic=True)
    with pytest.raises(TypeError, match="heuristic"):
        LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), heuristic="yes")
    q = LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), resolution=2001, heuristic=True)
    assert q.heuristic_sensitivity
    # The estimate misses the bump (the reason for the refusal): far below the true slope.
    assert float(q.pointwise_lipschitz(np.array([_X0 - _SIGMA / math.sqrt(2)]))[0]) < 1e-6 * _TRUE_SLOPE
    release = SmoothSensitivityMechanism(q, epsilon=1.0).release(np.array([0.0, 0.002]), rng=default_rng(2))
    assert release.details["sensitivity_bound"].startswith("HEURISTIC bound, NOT PRIVATE")
    assert "NOT PRIVATE" in release.guarantee_text and "NOT PRIVATE" in str(release)
    assert "NOT PRIVATE" in release.to_dict()["guarantee_text"]
    shown = (str(release) + repr(release.to_dict())).lower()
    assert "certif" not in shown.replace("for a certified bound", "")


def test_a_declared_global_constant_is_a_certificate():
    """grad_bound returning the global constant K everywhere: certified (no caveat), S ≥ the true slope."""
    q = LipschitzQuery(
        _bump, lipschitz=4.0, bounds=(-1, 1), resolution=2001, grad_bound=lambda lo, hi: np.full(len(lo), 4.0)
    )
    assert not q.heuristic_sensitivity
    assert float(q.pointwise_lipschitz(np.array([_X0 - _SIGMA / math.sqrt(2)]))[0]) >= _TRUE_SLOPE
    release = SmoothSensitivityMechanism(q, epsilon=1.0).release(np.array([0.0, 0.002]), rng=default_rng(2))
    assert release.caveat == "" and "NOT PRIVATE" not in release.guarantee_text


def test_baselines_on_a_heuristic_query_keep_their_guarantee():
    """GlobalLipschitz, LocalDP and noise a priori do not use the pointwise bound: no caveat."""
    from smoothdp.geo import GlobalLipschitz, LocalDP, NoiseAPriori

    q = LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), resolution=201, heuristic=True)
    for mech in (GlobalLipschitz(q, epsilon=1.0), LocalDP(q, epsilon=1.0), NoiseAPriori(q, epsilon=1.0)):
        release = mech.release(np.array([0.0, 0.5]), rng=default_rng(3))
        assert release.caveat == "" and "NOT PRIVATE" not in release.guarantee_text, type(mech).__name__


@pytest.mark.parametrize("route", ["curvature", "grad_bound"])
def test_lipschitz_query_with_a_rigorous_route_covers_the_bump(route):
    kw = {"curvature": 2 * _A / _SIGMA**2} if route == "curvature" else {"grad_bound": _bump_grad_bound}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = LipschitzQuery(_bump, lipschitz=4.0, bounds=(-1, 1), resolution=2001, **kw)
    assert not q.heuristic_sensitivity
    x = np.array([0.0, 0.002, _X0 - _SIGMA / math.sqrt(2), _X0 + _SIGMA / math.sqrt(2)])
    lip = q.pointwise_lipschitz(x)
    assert np.all(lip[2:] >= _TRUE_SLOPE)  # the bump's steepest points
    s = q.smooth_sensitivity(x, 0.1)
    assert np.all(s >= _TRUE_SLOPE * np.exp(-0.1 * np.abs(x - _X0 + _SIGMA / math.sqrt(2)) - 1e-12))
    release = SmoothSensitivityMechanism(q, epsilon=1.0).release(x, rng=default_rng(2))
    assert "rigorous given" in release.details["sensitivity_bound"]
