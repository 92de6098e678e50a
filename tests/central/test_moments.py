"""The means and variances (smoothdp.mean / var / std and their mechanisms): the staircase law, exact sums,
the sensitivities against brute force, the range stage's public rules, the entry points' contract, and a
statistical audit with its broken twin. The worst-case privacy losses are checked by the registry cases
(tests/mechanisms/moment_cases.py)."""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

import smoothdp
from smoothdp.audit import audit_mechanism
from smoothdp.central.moments.clipped import ClippedMean, ClippedVariance, variance_noise
from smoothdp.central.moments.exact_sums import exact_sum_of_squares, exact_variance
from smoothdp.central.moments.on_private_range import (
    choose_moment_method,
    clipped_count_test,
    range_share,
    split_budget,
    widened_range,
)
from smoothdp.central.moments.range_sweep import SweepRange, sweep_grid
from smoothdp.data import load_csv
from smoothdp.noise import Staircase
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.rng import default_rng

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
import moment_cases  # the clipped-count check's law, independently


# -- the staircase law ------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0, 6.0])
def test_staircase_density_cdf_ppf_and_moments_agree(epsilon):
    law = Staircase(0.7, epsilon=epsilon)
    bands = np.arange(math.ceil(60.0 / epsilon))
    cuts = 0.7 * np.unique(np.concatenate([bands, bands + law.gamma]))  # the density is constant between
    mass = 2.0 * float(np.sum(law.pdf(0.5 * (cuts[:-1] + cuts[1:])) * np.diff(cuts)))
    assert mass == pytest.approx(1.0, abs=1e-12)
    width = 0.7 * (40.0 / epsilon + 3.0)
    q = np.array([1e-9, 0.01, 0.2, 0.5, 0.77, 0.999999])
    assert np.allclose(law.cdf(law.ppf(q)), q, rtol=1e-9, atol=1e-15)
    x = np.linspace(-3.0, 3.0, 13)
    assert np.allclose(law.cdf(x) + law.sf(x), 1.0)
    second, _ = integrate.quad(lambda z: z * z * law.pdf(z), 0, width, limit=4000)
    assert law.var() == pytest.approx(2 * second, rel=1e-3 if epsilon < 0.5 else 1e-6)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_staircase_expected_abs_is_geng_viswanath_closed_form(epsilon):
    law = Staircase(1.3, epsilon=epsilon)  # γ* = 1/(1 + e^{ε/2})
    assert law.gamma == pytest.approx(1.0 / (1.0 + math.exp(epsilon / 2)))
    assert law.mean_abs() == pytest.approx(1.3 * math.exp(epsilon / 2) / math.expm1(epsilon), rel=1e-12)
    assert law.mean_abs() < 1.3 / epsilon  # strictly below Laplace(Δ/ε)


def _worst_log_ratio(law: Staircase, shift: float) -> float:
    """max over y of ln p(y) − ln p(y − shift), at the middle of every piece between the jumps of both
    copies (the densities are constant there; the jumps themselves are a set of probability zero)."""
    pts = np.array(law.breakpoints()[:30])
    cuts = np.unique(np.concatenate([pts, -pts, pts + shift, -pts + shift]))
    y = 0.5 * (cuts[:-1] + cuts[1:])
    return float(np.max(law.logpdf(y) - law.logpdf(y - shift)))


@pytest.mark.parametrize("shift", [0.0, 0.3, 0.999, 1.0])
def test_staircase_ratio_is_within_e_epsilon_for_shifts_up_to_delta_and_not_beyond(shift):
    law = Staircase(1.0, epsilon=1.5, gamma=0.3)
    worst = _worst_log_ratio(law, shift)
    assert worst <= 1.5 + 1e-12
    if shift > 0:
        assert worst == pytest.approx(1.5)  # any shift meets a jump: the staircase uses the whole budget
    assert _worst_log_ratio(law, 1.01) == pytest.approx(3.0)  # beyond Δ, two levels: Lemma 1's twin


def test_staircase_exact_sampler_has_the_law():
    law = Staircase(2.0, epsilon=1.0)
    draws = np.asarray(law.sample(40_000, default_rng(5)))  # the exact path
    assert stats.kstest(draws, law.cdf).pvalue > 1e-4
    levels = np.floor(np.abs(draws) / 2.0 + 1.0 - law.gamma)
    r, a = math.exp(-1.0), law.gamma + (1.0 - law.gamma) * math.exp(-1.0)
    expected = [law.gamma / a * (1.0 - r)] + [  # level 0: the inner part of band 0
        (1.0 - r) * r ** (k - 1) * ((1.0 - law.gamma) * r + law.gamma * r) / a for k in range(1, 6)
    ]
    observed = [np.mean(levels == k) for k in range(6)]
    assert np.allclose(observed, expected, atol=0.01)
    floats = np.asarray(law.sample(40_000, default_rng(6), numerics="float"))
    assert stats.ks_2samp(draws, floats).pvalue > 1e-4


def test_staircase_parameters_are_checked():
    with pytest.raises(ValueError, match="epsilon"):
        Staircase(1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="gamma"):
        Staircase(1.0, epsilon=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="scale"):
        Staircase(0.0, epsilon=1.0)


# -- exact sums and the sensitivities -----------------------------------------------------------------------
def test_exact_sums_of_squares_and_variances_are_exact_at_every_magnitude():
    rng = np.random.default_rng(0)
    cases = [
        rng.normal(0.0, 1.0, 500),
        np.array([5e-324, 1e-300, 3e-200, 1.7e308, -1.7e308, 0.0, -0.0, 1e-160, 2.0**-500, 2.0**500]),
        rng.uniform(-1.0, 1.0, 60) * rng.choice([1.0, 1e-300, 1e300], 60),
        np.full(9, 0.1),
    ]
    for x in cases:
        exact = [Fraction(float(v)) for v in x]
        assert exact_sum_of_squares(x) == sum((v * v for v in exact), Fraction(0))
        mean = sum(exact, Fraction(0)) / len(exact)
        for ddof in (0, 1):
            assert exact_variance(x, ddof) == sum(((v - mean) ** 2 for v in exact), Fraction(0)) / (
                x.size - ddof
            )
    with pytest.raises(ValueError, match="ddof"):
        exact_variance(np.array([1.0]), 1)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_variance_sensitivity_is_the_brute_force_maximum(n, ddof):
    grid = (-1.0, -0.25, 0.5, 2.0)
    worst = Fraction(0)
    for row in itertools.combinations_with_replacement(grid, n):
        base = exact_variance(np.array(row), ddof)
        for i, v in itertools.product(range(n), grid):
            other = list(row)
            other[i] = v
            worst = max(worst, abs(exact_variance(np.array(other), ddof) - base))
    stated = Fraction(3) ** 2 * (n - 1) / (n * (n - ddof))
    assert worst == stated  # attained with the records at the bounds
    assert variance_noise("laplace", (-1.0, 2.0), n, ddof, 1.0).scale >= float(stated)


# -- the range stage's public rules -------------------------------------------------------------------------
def test_sweep_grid_is_public_sorted_and_inside_the_bounds():
    for lo, hi in [(-1e4, 1e4), (0.0, 125.0), (40.25, 41.15), (-1e5, 1e7), (1.0, 1e6)]:
        g = sweep_grid(lo, hi)
        assert g[0] == lo and g[-1] == hi and np.all(np.diff(g) > 0)
        assert np.array_equal(g, sweep_grid(lo, hi))
    assert sweep_grid(40.25, 41.15).size == 33  # far from 0: the evenly spaced points only
    assert sweep_grid(-1e4, 1e4).size > 150  # around 0: four points per octave each side


def test_the_range_stage_rules():
    assert widened_range((10.0, 20.0), (0.0, 100.0)) == ((7.5, 22.5), False)
    assert widened_range((10.0, 60.0), (0.0, 100.0)) == ((0.0, 100.0), True)  # 75% of the bounds
    assert widened_range((10.0, 25.0), (0.0, 100.0)) == ((0.0, 100.0), True)  # 22.5%: a 5-fold cut at least
    assert widened_range((0.0, 1.0), (0.0, 100.0)) == ((0.0, 1.25), False)
    assert choose_moment_method(n=2000, epsilon=1.0) == "private_range"
    assert choose_moment_method(n=1999, epsilon=1.0) == "clipped"
    assert range_share(100, 1.0) == 0.25 and range_share(10**6, 1.0) == 0.025
    assert range_share(1000, 1.0) == pytest.approx(0.1)
    for eps, share in [(0.1, 0.05), (1.0 / 3.0, 0.3), (7.0, 0.25)]:
        a, b = split_budget(eps, share)
        assert Fraction(a) + Fraction(b) <= Fraction(eps) and a == pytest.approx(share * eps)


def test_a_thin_tail_at_the_bound_keeps_the_declared_bounds():
    # Adult's capital gains: 92% zeros, a tail to 41,310 and 159 records top-coded at 99,999. A range
    # wider than 20% of the bounds is not worth clipping a tail the range's count cannot see. With
    # θ = 0.45, 8% of these releases kept a range near (0, 37,000), 60× off: their 95th percentile |error|
    # was 19× the clipped mean's and their median 1.33×. Fails if θ goes back up.
    x = np.asarray(load_csv("adult")["capital_gain"], dtype=np.float64)
    bounds, eps, truth = (0.0, 1e5), 0.5, float(np.mean(x))

    def errors(method: str) -> tuple[np.ndarray, list[Release]]:
        out = [
            smoothdp.mean(x, epsilon=eps, bounds=bounds, method=method, rng=np.random.default_rng(s))
            for s in range(300)
        ]
        return np.abs([float(r.value) - truth for r in out]), out

    ranged, releases = errors("auto")
    clipped, _ = errors("clipped")
    kept = [r.details["clip_range"] for r in releases if not r.details["reverted_to_bounds"]]
    assert all(hi - lo < 0.2 * (bounds[1] - bounds[0]) for lo, hi in kept)
    assert np.quantile(ranged, 0.95) <= 2.0 * np.quantile(clipped, 0.95)
    assert np.median(ranged) <= 1.2 * np.median(clipped)


@pytest.mark.parametrize("clipped", [0, 2, 3, 6])
def test_the_clipped_count_check_fires_at_the_documented_rate(clipped):
    """#{x < a} + #{x > b} + ν > ⌈1.5/ε⌉ with ν discrete Laplace of scale 1/ε: the firing rate of
    clipped_count_test against the pmf model of tests/mechanisms/moment_cases.py (a threshold of 2.5
    scales, or a noise of the wrong scale, moves the rate by far more than four standard errors)."""
    eps, draws = 0.5, 4000
    x = np.concatenate([np.full(clipped, 50.0), np.full(100, 5.0)])  # `clipped` records beyond b = 10
    gen = default_rng(7 + clipped)
    fired = sum(clipped_count_test(x, (0.0, 10.0), eps, gen) for _ in range(draws))
    expected = moment_cases._test_fires(x, (0.0, 10.0), eps)
    assert 0.0 < expected < 1.0
    assert abs(fired / draws - expected) < 4.0 * math.sqrt(expected * (1.0 - expected) / draws)


def test_sweeps_find_the_data_inside_wide_bounds():
    x = np.sort(np.random.default_rng(1).normal(1.2, 1.0, 5000))
    finder = SweepRange(epsilon=0.5, bounds=(-1e4, 1e4))
    found = [finder.find(x, default_rng(s)) for s in range(60)]
    covered = [a <= x[50] and b >= x[-50] for a, b in found]
    widths = np.array([b - a for a, b in found])  # the bounds are 20 000 wide, the data about 7.5
    # Past the data a sweep stops after a few thresholds (a factor 2^(1/4) each), further when its noisy
    # threshold drew high: most ranges are far below the bounds, a few reach them.
    assert np.mean(covered) > 0.8 and np.median(widths) < 1000.0 and np.mean(widths < 100.0) > 0.3


# -- the entry points ---------------------------------------------------------------------------------------
X = np.random.default_rng(2).normal(40.0, 10.0, 300)


@pytest.mark.parametrize("f", [smoothdp.mean, smoothdp.var, smoothdp.std])
@pytest.mark.parametrize("neighbours", ["substitution", "add_remove"])
def test_the_release_costs_the_epsilon_passed_under_the_relation_named(f, neighbours):
    acc = smoothdp.Accountant(epsilon=1.0, neighbours=neighbours)
    rel = f(X, epsilon=0.3, bounds=(0.0, 100.0), neighbours=neighbours, accountant=acc, rng=1)
    assert rel.guarantee == PureDP(0.3, neighbours=neighbours)
    assert acc.spent == 0.3
    assert np.isfinite(rel.value)


def test_auto_picks_by_epsilon_n_under_substitution_and_never_by_n_under_add_remove():
    big = np.random.default_rng(3).normal(0.0, 1.0, 3000)
    assert smoothdp.mean(big, epsilon=1.0, bounds=(-10, 10), rng=1).details["method"] == "private_range"
    assert smoothdp.mean(big[:100], epsilon=1.0, bounds=(-10, 10), rng=1).details["method"] == "clipped"
    for x in (big, big[:100], []):
        assert (
            smoothdp.var(x, epsilon=1.0, bounds=(-10, 10), neighbours="add_remove", rng=1).details["method"]
            == "noisy_moments"
        )
    assert smoothdp.var(big, epsilon=1.0, bounds=(-10, 10), rng=1).details["method"] == "private_range"


def test_std_is_the_square_root_of_the_variance_release():
    for kw in ({}, {"method": "clipped"}, {"neighbours": "add_remove"}):
        v = smoothdp.var(X, epsilon=2.0, bounds=(0.0, 100.0), rng=9, **kw).value
        s = smoothdp.std(X, epsilon=2.0, bounds=(0.0, 100.0), rng=9, **kw).value
        assert s == math.sqrt(v)


def test_releases_lie_in_their_bounds():
    for seed in range(30):
        m = smoothdp.mean(X, epsilon=0.05, bounds=(0.0, 100.0), rng=seed).value
        v = smoothdp.var(X, epsilon=0.05, bounds=(0.0, 100.0), ddof=0, rng=seed).value
        assert 0.0 <= m <= 100.0 and 0.0 <= v <= 100.0**2 / 4


def test_the_add_remove_methods_take_empty_data():
    for f in (smoothdp.mean, smoothdp.var, smoothdp.std):
        rel = f([], epsilon=1.0, bounds=(0.0, 10.0), neighbours="add_remove", rng=2)
        assert np.isfinite(rel.value) and rel.guarantee.neighbours == "add_remove"
    with pytest.raises(ValueError, match="x must hold at least 1 value"):
        smoothdp.mean([], epsilon=1.0, bounds=(0.0, 10.0))
    with pytest.raises(ValueError, match="x must hold at least 2 value"):
        smoothdp.var([1.0], epsilon=1.0, bounds=(0.0, 10.0))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), neighbours="local"), ValueError, "neighbours"),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), method="noisy_sum"), ValueError, "add_remove"),
        (
            lambda: smoothdp.var(X, epsilon=1, bounds=(0, 9), method="smooth_sensitivity"),
            ValueError,
            "method",
        ),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), method="clipped", beta=0.1), TypeError, "'beta'"),
        (
            lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), range_fraction=0.1, method="clipped"),
            TypeError,
            "range_fraction",
        ),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), delta=1e-6), TypeError, "'delta'"),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), noise="gauss"), ValueError, "noise"),
        (lambda: smoothdp.var(X, epsilon=1, bounds=(0, 9), ddof=2), ValueError, "ddof"),
        (lambda: smoothdp.var(X, epsilon=1, bounds=(0, 9), delta=1e-6), ValueError, "delta"),
        (
            lambda: smoothdp.mean(
                X, epsilon=1, bounds=(0, 9), method="smooth_sensitivity", noise="laplace", delta=1e-6
            ),
            ValueError,
            "delta",
        ),
        (
            lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), range_fraction=1.0, method="private_range"),
            ValueError,
            "range_fraction",
        ),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), centre=4.0), TypeError, "centre"),
        (lambda: smoothdp.mean(X, epsilon=1, bounds=None, centre=4.0), TypeError, "centre"),
        (
            lambda: smoothdp.mean(X, epsilon=1, bounds=(0, 9), neighbours="add_remove", centre=9.5),
            ValueError,
            "centre",
        ),
    ],
)
def test_bad_parameters_name_themselves(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_former_default_is_one_keyword_away():
    x = np.linspace(1.0, 9.0, 37)
    kw = {"epsilon": 1.0, "bounds": (0, 10), "neighbours": "add_remove", "rng": 4}
    old = smoothdp.mean(x, method="smooth_sensitivity", **kw)
    assert old.mechanism.startswith("smooth sensitivity")
    assert smoothdp.mean(x, beta=0.1, **kw).mechanism.startswith("smooth sensitivity")  # its option: its own
    assert smoothdp.mean(x, **kw).details["method"] == "ratio"
    assert old.guarantee == PureDP(1.0, neighbours="add_remove")
    sub = smoothdp.mean(x, epsilon=1.0, bounds=(0, 10), method="smooth_sensitivity", rng=4)
    assert (
        sub.guarantee == PureDP(1.0, neighbours="substitution") and sub.details["epsilon_add_remove"] == 0.5
    )


# -- a statistical audit on neighbours where the clipped mean moves by its whole sensitivity --------------
@pytest.mark.parametrize("kind", ["mean", "var"])
def test_clipped_statistic_passes_the_audit_and_its_half_noise_twin_fails(kind):
    x, x2 = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    mech = (ClippedMean if kind == "mean" else ClippedVariance)(epsilon=1.0, bounds=(0.0, 1.0))
    f = np.mean if kind == "mean" else lambda v: np.var(v, ddof=1)
    noise = mech.noise_for(3)
    assert noise.scale == pytest.approx(abs(f(x2) - f(x)))  # the pair moves the statistic by Δ exactly

    def sampler(values, law):
        return lambda k, g: f(values) + np.asarray(law.sample(k, g))  # the exact sampler

    ok = audit_mechanism(sampler(x, noise), sampler(x2, noise), 1.0, n_samples=100_000, rng=1)
    assert ok.passed, ok
    twin = noise.with_scale(0.5 * noise.scale)
    bad = audit_mechanism(sampler(x, twin), sampler(x2, twin), 1.0, n_samples=100_000, rng=1)
    assert not bad.passed, bad


def test_an_add_remove_mean_centred_near_its_data_is_more_accurate():
    """2,000 values of mean 20 in (0, 100) at ε = 0.5: centred on 22 (a public guess), the count's noise
    enters through |20 − 22| instead of |20 − 50|; median |error| over 400 seeded releases (measured 0.65×
    the midpoint's)."""
    x = np.random.default_rng(5).normal(20, 5, 2000).clip(0, 100)
    kw = {"epsilon": 0.5, "bounds": (0.0, 100.0), "neighbours": "add_remove", "range_fraction": 0.0}
    centred = [abs(smoothdp.mean(x, centre=22.0, rng=s, **kw).value - x.mean()) for s in range(400)]
    midpoint = [abs(smoothdp.mean(x, rng=s, **kw).value - x.mean()) for s in range(400)]
    assert np.median(centred) < 0.8 * np.median(midpoint)
    release = smoothdp.mean(x, centre=22.0, rng=1, **kw)
    assert release.details["centre"] == 22.0 and release.guarantee.neighbours == "add_remove"
