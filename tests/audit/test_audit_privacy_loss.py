"""smoothdp.audit.privacy_loss: the generic log-ratio and hockey-stick tools, and the worst-case search."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from smoothdp.audit import (
    PrivacyLossReport,
    hockey_stick_divergence,
    max_log_density_ratio,
    worst_case_privacy_loss,
)
from smoothdp.calibration import calibrate
from smoothdp.noise import Gaussian, Laplace


# -- max_log_density_ratio -----------------------------------------------------------------------------------
def test_laplace_shift_ratio_is_shift_over_scale():
    b, shift = 0.7, 1.3
    grid = np.linspace(-20, 20, 4001)
    got = max_log_density_ratio(Laplace(b).logpdf, lambda y: Laplace(b).logpdf(y - shift), grid)
    assert got == pytest.approx(shift / b, rel=1e-12)


def test_gaussian_ratio_grows_to_the_grid_edge():
    # ln p(y) − ln p(y − Δ) = (Δ² − 2yΔ)/(2σ²), largest at the left end of the grid.
    sigma, shift, edge = 1.5, 0.5, 10.0
    grid = np.linspace(-edge, edge, 101)
    got = max_log_density_ratio(Gaussian(sigma).logpdf, lambda y: Gaussian(sigma).logpdf(y - shift), grid)
    assert got == pytest.approx((shift**2 + 2 * edge * shift) / (2 * sigma**2), rel=1e-12)


def test_disjoint_support_gives_inf_and_nan_is_refused():
    def uniform(lo):
        return lambda y: np.where((y >= lo) & (y <= lo + 1), 0.0, -np.inf)

    assert max_log_density_ratio(uniform(0.0), uniform(0.5), np.linspace(-1, 2, 31)) == math.inf
    with pytest.raises(ValueError, match="NaN"):
        max_log_density_ratio(lambda y: y * np.nan, uniform(0.0), [0.0, 1.0])
    with pytest.raises(ValueError, match="grid"):
        max_log_density_ratio(uniform(0.0), uniform(0.0), [])
    with pytest.raises(ValueError, match="grid"):
        max_log_density_ratio(uniform(0.0), uniform(0.0), [0.0, np.inf])


# -- hockey_stick_divergence ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("sigma", "shift", "eps"), [(1.0, 1.0, 0.5), (0.5, 1.0, 1.0), (2.0, 0.3, 0.05)])
def test_hockey_stick_of_gaussians_matches_balle_wang(sigma, shift, eps):
    # Balle & Wang 2018: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), μ = Δ/σ.
    mu = shift / sigma
    want = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    got = hockey_stick_divergence(Gaussian(sigma), 1.0, shift, eps)
    assert float(got) == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize(("b", "shift", "eps"), [(1.0, 1.0, 0.5), (0.5, 1.0, 1.0), (1.0, 0.1, 0.01)])
def test_hockey_stick_of_shifted_laplaces(b, shift, eps):
    # The loss (|y − Δ| − |y|)/b exceeds ε exactly for y < y* = (Δ − εb)/2 (when ε < Δ/b).
    y_star = (shift - eps * b) / 2
    want = stats.laplace.cdf(y_star, scale=b) - math.exp(eps) * stats.laplace.cdf(y_star - shift, scale=b)
    got = hockey_stick_divergence(Laplace(b), 1.0, shift, eps)
    assert float(got) == pytest.approx(want, rel=1e-9)


def test_hockey_stick_with_a_scale_change_against_quadrature():
    # Laplace(1) vs Δ + r·Laplace(1) with r < 1: the loss is unbounded in both tails.
    r, shift, eps = 0.8, 0.3, 0.4

    def excess(y):
        return max(0.0, math.exp(-abs(y)) / 2 - math.exp(eps) * math.exp(-abs(y - shift) / r) / (2 * r))

    edges = [-np.inf, -20, -2, 0, shift, 2, 20, np.inf]
    want = sum(integrate.quad(excess, a, c, limit=400, epsabs=1e-15)[0] for a, c in itertools.pairwise(edges))
    got = hockey_stick_divergence(Laplace(1.0), r, shift, eps)
    assert float(got) == pytest.approx(want, rel=1e-7)


def test_hockey_stick_is_vectorized_and_zero_for_identical_laws():
    got = hockey_stick_divergence(Laplace(1.0), np.array([1.0, 1.0, 0.9]), np.array([0.0, 0.5, 0.5]), 0.1)
    assert got.shape == (3,)
    assert got[0] == 0.0 and got[1] > 0 and got[2] > got[1]


# -- worst_case_privacy_loss ---------------------------------------------------------------------------------
def _brute_force_loss(cal, n=15):
    """Independent brute force: a plain neighbour grid and a plain output grid, no refinement."""
    beta, noise = cal.beta, cal.noise
    s = noise.scale
    y = np.concatenate([np.linspace(0, 60 * s, 6001), np.geomspace(60 * s, 1e9 * s, 600)])
    y = np.concatenate([-y[::-1], y])
    y = np.concatenate([-y, y])
    rho, theta = np.meshgrid(np.linspace(-beta, beta, n), np.linspace(0, 1, n))
    r = np.exp(rho.ravel())[:, None]
    shift = theta.ravel()[:, None] * np.minimum(1, r)
    loss = noise.logpdf(y) - (noise.logpdf((y - shift) / r) - np.log(r))
    return loss.max()


@pytest.mark.parametrize(
    ("family", "kw"), [("student_t", {}), ("cauchy", {"gamma": 6}), ("student_t", {"df": 1.5})]
)
def test_search_finds_the_brute_force_maximum(family, kw):
    cal = calibrate(family, epsilon=1.0, **kw)
    report = worst_case_privacy_loss(cal)
    brute = _brute_force_loss(cal)
    assert brute > 0.5 * cal.epsilon
    assert report.max_loss >= brute - 1e-9
    assert report.max_loss <= brute + 5e-3  # the refinement may only add a little on the brute-force grid


def test_multi_dimensional_loss_is_at_least_the_one_dimensional_splits():
    # k = 2: all the shift in one coordinate (the other only dilates) is one admissible configuration.
    cal = calibrate("cauchy", epsilon=1.0, beta=0.1, dimension=2)
    report = worst_case_privacy_loss(cal)
    noise, beta = cal.noise, cal.beta
    y = np.concatenate(
        [np.linspace(-200, 200, 40_001), np.geomspace(200, 1e9, 2000), -np.geomspace(200, 1e9, 2000)]
    )
    best = -np.inf
    for rho in (-beta, beta):
        r = math.exp(rho)
        dil = (noise.logpdf(y) - noise.logpdf(y / r) + math.log(r)).max()
        full = (noise.logpdf(y) - noise.logpdf((y - min(1, r)) / r) + math.log(r)).max()
        best = max(best, dil + full)
    assert report.max_loss >= best - 1e-9
    assert len(report.worst.shift) == 2
    assert sum(abs(v) for v in report.worst.shift) <= min(1, report.worst.scale_ratio) + 1e-12


def test_report_fields_and_text():
    cal = calibrate("polyplace", epsilon=1.0, model="geo")
    report = worst_case_privacy_loss(cal, distance=[0.5, 2.0])
    assert isinstance(report, PrivacyLossReport)
    assert [r.distance for r in report.per_distance] == [0.5, 2.0]
    assert report.criterion == "pure" and report.hockey_stick is None
    assert str(report).startswith("PASS: polyplace/geo")
    broken = worst_case_privacy_loss(dataclasses.replace(cal, beta=2 * cal.beta), distance=0.5)
    assert str(broken).startswith("FAIL")
    lap = worst_case_privacy_loss(calibrate("laplace", epsilon=1.0, delta=1e-5))
    assert lap.criterion == "hockey_stick" and lap.max_loss == math.inf and lap.delta_bound == 1e-5
    assert "hockey-stick" in str(lap)


def test_linear_growth_uses_linear_ratio_range():
    cal = calibrate("laplace", epsilon=1.0, delta=1e-5, model="geo")
    report = worst_case_privacy_loss(cal, distance=3.0)
    assert 1 / (1 + 3 * cal.beta) - 1e-12 <= report.worst.scale_ratio <= 1 + 3 * cal.beta + 1e-12


def test_pure_rule_under_the_hockey_stick_criterion_has_no_divergence():
    report = worst_case_privacy_loss(calibrate("student_t", epsilon=1.0), criterion="hockey_stick")
    assert report.passed and report.hockey_stick == 0.0


def test_bad_arguments():
    cal = calibrate("polyplace", epsilon=1.0)
    with pytest.raises(TypeError, match="Calibration"):
        worst_case_privacy_loss("polyplace")
    with pytest.raises(ValueError, match="distance"):
        worst_case_privacy_loss(cal, distance=0.0)
    with pytest.raises(ValueError, match="distance"):
        worst_case_privacy_loss(cal, distance=[1.0, math.nan])
    with pytest.raises(ValueError, match="criterion"):
        worst_case_privacy_loss(cal, criterion="renyi")
    with pytest.raises(ValueError, match="n_neighbours"):
        worst_case_privacy_loss(cal, n_neighbours=2)
    with pytest.raises(ValueError, match="dimension 1"):
        worst_case_privacy_loss(calibrate("cauchy", epsilon=1.0, dimension=2), criterion="hockey_stick")
