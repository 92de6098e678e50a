"""The smooth-sensitivity mechanism: worst-case privacy loss on every neighbour pair of a small domain,
broken twins that must fail the same check, the release record, and the numpy-style entry points."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from central_pairs import max_pure_loss, pair_configurations

import smoothdp
from smoothdp.audit.privacy_loss import hockey_stick_divergence, max_log_density_ratio
from smoothdp.calibration import calibrate
from smoothdp.central import Mean, Median, Quantile, SmoothSensitivityMechanism, TrimmedMean
from smoothdp.exact import FLOAT_SAMPLER_LABEL, HARDENED_SAMPLER_LABEL, OutputGrid
from smoothdp.privacy import ApproxDP, PureDP

EPS = 1.0
N_RECORDS = 5  # every multiset of 5 values from an 8-point grid in [0, 1], and all its neighbours

# Broken twins per family: (noise-scale factor, β factor) that make the mechanism NOT ε-DP on these pairs.
# Student's T and the Cauchy family have slack in LY's constants (worst real loss 0.78ε and 0.90ε), so a
# 0.8 scale or a doubled β is not a real violation for them; their twins are broken harder.
PURE_TWINS = {
    "polyplace": [(0.8, 1.0), (1.0, 2.0)],
    "student_t": [(0.5, 1.0), (1.0, 3.0)],
    "cauchy": [(0.8, 1.0), (1.0, 3.0)],
}


def _loss(family, scale_factor=1.0, beta_factor=1.0):
    cal = calibrate(family, epsilon=EPS)
    noise = cal.noise.with_scale(scale_factor * cal.noise.scale)
    configs = pair_configurations(Median(bounds=(0.0, 1.0)), beta_factor * cal.beta, N_RECORDS)
    assert len(configs) > 500
    return max_pure_loss(noise, configs, max_log_density_ratio)


@pytest.mark.parametrize("family", sorted(PURE_TWINS))
def test_median_mechanism_pure_loss_at_most_epsilon_on_all_neighbours(family):
    assert _loss(family) <= EPS * (1 + 1e-9)


@pytest.mark.parametrize(("family", "twin"), [(f, t) for f, ts in PURE_TWINS.items() for t in ts])
def test_broken_twin_exceeds_epsilon(family, twin):
    assert _loss(family, *twin) > EPS * 1.02


def test_median_mechanism_laplace_hockey_stick_at_most_delta_and_twins_fail():
    delta = 1e-6
    cal = calibrate("laplace", epsilon=EPS, delta=delta)

    def worst(scale_factor, beta_factor):
        configs = pair_configurations(Median(bounds=(0.0, 1.0)), beta_factor * cal.beta, N_RECORDS)
        noise = cal.noise.with_scale(scale_factor * cal.noise.scale)
        return float(np.max(hockey_stick_divergence(noise, configs[:, 0], configs[:, 1], EPS)))

    assert worst(1.0, 1.0) <= delta
    assert worst(1.0, 2.0) > 2 * delta  # β doubled
    assert worst(0.5, 1.0) > 2 * delta  # noise halved (×0.8 stays within δ: NRS's analysis has slack)


def test_polyplace_mechanism_is_tight_on_the_median():
    # HT Theorem 8 is tight: some real median pair reaches the full ε (so the check above has power).
    assert _loss("polyplace") > EPS * (1 - 1e-6)


# -- the release record ------------------------------------------------------------------------------------
def test_release_reports_guarantee_beta_scale_and_source():
    x = np.array([0.1, 0.2, 0.25, 0.3, 0.9])
    mech = SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=0.5)
    rel = mech.release(x, rng=3)
    cal = calibrate("polyplace", epsilon=0.5)
    s = Median(bounds=(0, 1)).smooth_sensitivity(x, cal.beta)
    assert rel.guarantee == PureDP(0.5) and rel.guarantee.neighbours == "substitution"
    secret = rel.not_private
    assert rel.beta == cal.beta and secret.smooth_sensitivity == s
    assert secret.noise_scale == pytest.approx(s * cal.noise.scale)
    assert secret.noise_std == pytest.approx(s * cal.noise.std())
    assert rel.statistic == "median" and "Theorem 8" in rel.source and "Nissim" in rel.source
    assert rel.proof == "docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism"
    assert rel.details["neighbours"] == "substitution" and rel.details["noise_family"] == "polyplace"
    # The value is a point of the public grid of the bounds, and the release says it is hardened.
    assert OutputGrid.for_bounds(0.0, 1.0).round(rel.value) == rel.value
    assert rel.sampler == HARDENED_SAMPLER_LABEL
    # The float fast path is an explicit opt-in, and says so.
    fast = SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=0.5, numerics="float").release(x, rng=3)
    assert math.isfinite(fast.value) and fast.sampler == FLOAT_SAMPLER_LABEL


def _shown(rel) -> str:
    return repr(rel) + str(rel) + repr(rel.to_dict()) + repr(rel.details)


@pytest.mark.parametrize("noise", ["polyplace", "student_t", "laplace"])
def test_repr_str_and_to_dict_hide_smooth_sensitivity_and_noise_scale(noise):
    x = np.array([0.12, 0.2, 0.25, 0.31, 0.9, 0.93, 0.4])
    delta = 1e-6 if noise == "laplace" else 0.0
    rel = smoothdp.median(
        x, epsilon=0.7, bounds=(0, 1), method="smooth_sensitivity", noise=noise, delta=delta, rng=5
    )
    secret = rel.not_private
    shown = _shown(rel)
    for value in (secret.smooth_sensitivity, secret.noise_scale, secret.noise_std):
        assert isinstance(value, float) and value > 0
        assert repr(value) not in shown and f"{value:.6g}" not in shown and f"{value:.4g}" not in shown
    assert "hidden" in repr(secret)
    assert "not_private" not in rel.to_dict()


def test_add_remove_mean_release_hides_n():
    # Under add/remove n is private; S = (u − l)/n would give it away: it stays in not_private.
    x = np.linspace(1.0, 9.0, 37)
    kw = {"epsilon": 1.0, "bounds": (0, 10), "neighbours": "add_remove", "rng": 0}
    rel = smoothdp.mean(x, method="smooth_sensitivity", **kw)
    assert rel.guarantee == PureDP(1.0, neighbours="add_remove")
    assert rel.not_private.smooth_sensitivity == pytest.approx(10 / 37, rel=1e-11)
    shown = _shown(rel)
    assert "37" not in shown.replace(repr(rel.value), "").replace(f"{rel.value:.6g}", "")
    assert f"{rel.not_private.smooth_sensitivity:.6g}" not in shown
    default = smoothdp.mean(x, **kw)  # the ratio mean: n and the noisy count stay in not_private
    assert default.guarantee == PureDP(1.0, neighbours="add_remove")
    assert default.not_private.extra["n"] == 37
    shown = _shown(default).replace(repr(default.value), "").replace(f"{default.value:.6g}", "")
    assert "37" not in shown and repr(default.not_private.extra["noisy_count"]) not in shown


def test_sample_is_the_release_law():
    x = np.linspace(0, 1, 21)
    mech = SmoothSensitivityMechanism(Quantile(0.25, bounds=(0, 1)), epsilon=1.0, noise="student_t")
    draws = mech.sample(x, 4000, rng=1)
    cal = mech.calibration
    s = mech.smooth_sensitivity(x)
    z = (draws - Quantile(0.25, bounds=(0, 1)).value(x)) / s
    # KS against the calibrated noise law
    from scipy import stats

    assert stats.kstest(z, cal.noise.cdf).pvalue > 1e-4


@pytest.mark.parametrize("noise", ["polyplace", "student_t", "cauchy", "laplace"])
def test_every_noise_family_releases(noise):
    delta = 1e-6 if noise == "laplace" else 0.0
    mech = SmoothSensitivityMechanism(TrimmedMean(1, bounds=(0, 10)), epsilon=1.0, noise=noise, delta=delta)
    rel = mech.release([1, 2, 3, 4, 9.0], rng=0)
    assert math.isfinite(rel.value)
    assert rel.guarantee == (ApproxDP(1.0, delta) if delta else PureDP(1.0))


def test_from_calibration_refuses_geo_and_linear_growth():
    cal = calibrate("laplace", epsilon=1.0, delta=1e-6, model="geo")
    with pytest.raises(ValueError, match="model must be 'dp'"):
        SmoothSensitivityMechanism.from_calibration(Median(bounds=(0, 1)), cal)
    cal = dataclasses.replace(calibrate("polyplace", epsilon=1.0), growth="linear")
    with pytest.raises(ValueError, match="growth"):
        SmoothSensitivityMechanism.from_calibration(Median(bounds=(0, 1)), cal)


# -- numpy-style entry points --------------------------------------------------------------------------------
def test_entry_points_match_the_mechanism():
    rng_seed = 12
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    b = (0, 10)
    # The smooth-sensitivity method, at an explicit β and without clamping, is exactly the mechanism.
    ss = {"method": "smooth_sensitivity", "beta": 0.2, "clamp": False, "rng": rng_seed}
    plain = {"beta": 0.2, "clamp": False, "rng": rng_seed}
    pairs = [
        (smoothdp.median(x, epsilon=1.0, bounds=b, **ss), Median(bounds=b)),
        (smoothdp.quantile(x, 0.75, epsilon=1.0, bounds=b, **ss), Quantile(0.75, bounds=b)),
        (smoothdp.trimmed_mean(x, 0.25, epsilon=1.0, bounds=b, **plain), TrimmedMean(0.25, bounds=b)),
        (smoothdp.mean(x, epsilon=1.0, bounds=b, neighbours="add_remove", **plain), Mean(bounds=b)),
    ]
    for rel, stat in pairs:
        expected = SmoothSensitivityMechanism(stat, epsilon=1.0, beta=0.2).release(x, rng=rng_seed)
        assert rel.value == expected.value and rel.statistic == stat.name
        assert rel.guarantee == expected.guarantee
        assert rel.guarantee.neighbours == stat.neighbours == rel.details["neighbours"]


def test_entry_points_pass_noise_options_to_the_family():
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    common = {"epsilon": 1.0, "bounds": (0, 10), "noise": "student_t", "beta": 0.1, "clamp": False, "rng": 3}
    rel = smoothdp.median(x, df=5, **common)
    expected = SmoothSensitivityMechanism(
        Median(bounds=(0, 10)), epsilon=1.0, noise="student_t", df=5, beta=0.1
    )
    assert rel.value == expected.release(x, rng=3).value
    assert rel.value != smoothdp.median(x, **common).value


def test_entry_point_errors():
    with pytest.raises(ValueError, match="lower < upper"):
        smoothdp.median([1.0, 2.0], epsilon=1.0, bounds=(5, 0))
    with pytest.raises(ValueError, match="outside the declared bounds"):
        smoothdp.median([1.0, 20.0], epsilon=1.0, bounds=(0, 10), clip=False)
    assert math.isfinite(smoothdp.median([1.0, 20.0], epsilon=1.0, bounds=(0, 10), clip=True, rng=0).value)
    with pytest.raises(ValueError, match="epsilon"):
        smoothdp.median([1.0], epsilon=-1.0, bounds=(0, 10))
    with pytest.raises(ValueError, match="delta"):
        smoothdp.median([1.0], epsilon=1.0, bounds=(0, 10), noise="laplace")
    with pytest.raises(ValueError, match="noise"):
        smoothdp.median([1.0], epsilon=1.0, bounds=(0, 10), noise="gauss")
    with pytest.raises(ValueError, match="beta"):
        smoothdp.median([1.0], epsilon=1.0, bounds=(0, 10), beta=2.0)
    with pytest.raises(ValueError, match="too many"):
        smoothdp.trimmed_mean([1.0, 2.0], 1, epsilon=1.0, bounds=(0, 10))


def test_a_keyword_of_another_noise_is_an_error_naming_the_valid_ones():
    # The issue's example: `df` does nothing for PolyPlace, so it must not be silently ignored.
    with pytest.raises(TypeError, match=r"'df'.*keywords: none"):
        smoothdp.median([1.0, 2.0, 3.0], epsilon=1, bounds=(-10, 10), df=5)
    with pytest.raises(TypeError, match=r"'gamma'.*keywords: df, constants"):
        smoothdp.quantile([1.0, 2.0], 0.5, epsilon=1, bounds=(0, 10), noise="student_t", gamma=2)
    with pytest.raises(TypeError, match=r"'df'.*keywords: gamma, dimension, constants"):
        SmoothSensitivityMechanism(Median(bounds=(0, 10)), epsilon=1.0, noise="cauchy", df=3)
    with pytest.raises(TypeError, match="'shape'"):
        smoothdp.mean([1.0], epsilon=1, bounds=(0, 10), shape=2)


@pytest.mark.parametrize(
    "call",
    [
        lambda: smoothdp.median([1.0, 2.0], 1.0, (0, 10)),
        lambda: smoothdp.quantile([1.0, 2.0], 0.5, 1.0, bounds=(0, 10)),
        lambda: smoothdp.trimmed_mean([1.0, 2.0, 3.0], 0, 1.0, bounds=(0, 10)),
        lambda: smoothdp.mean([1.0, 2.0], 1.0, bounds=(0, 10)),
        lambda: SmoothSensitivityMechanism(Median(bounds=(0, 10)), 1.0),
        lambda: Median(0, 10),
        lambda: Quantile(0.5, 0, 10),
        lambda: TrimmedMean(1, 0, 10),
    ],
)
def test_positional_privacy_parameters_and_bounds_are_refused(call):
    with pytest.raises(TypeError, match="positional"):
        call()


def test_statistics_take_bounds_and_report_their_relation():
    med = Median(bounds=(0, 100))
    assert med.bounds == (0.0, 100.0) and med.lower == 0.0 and med.upper == 100.0
    assert med.value([10.0, 50.0, 70.0]) == 50.0
    assert repr(med) == "Median(bounds=(0, 100), clip=True)"
    assert repr(Median(bounds=(0, 100), clip=False)) == "Median(bounds=(0, 100), clip=False)"
    assert Quantile(0.9, bounds=(0, 100), clip=True).value([150.0]) == 100.0
    assert TrimmedMean(0.1, bounds=(0, 1)).bounds == (0.0, 1.0)
    assert {s.neighbours for s in (med, Quantile(0.2, bounds=(0, 1)), TrimmedMean(1, bounds=(0, 1)))} == {
        "substitution"
    }
    assert Mean(bounds=(0, 1)).neighbours == "add_remove"
    with pytest.raises(TypeError, match="pair"):
        Median(bounds=5)


# -- the accountant -----------------------------------------------------------------------------------------
def test_the_issue_done_when_example():
    x = np.random.default_rng(0).uniform(0, 100, 500)
    acc = smoothdp.Accountant(epsilon=1.0)
    smoothdp.median(x, epsilon=0.5, bounds=(0, 100), accountant=acc)
    smoothdp.quantile(x, 0.9, epsilon=0.4, bounds=(0, 100), accountant=acc)
    with pytest.raises(smoothdp.BudgetError):
        smoothdp.mean(x, epsilon=0.2, bounds=(0, 100), accountant=acc)
    assert acc.spent == 0.9 and len(acc) == 2


def test_a_refused_charge_draws_no_noise_and_records_nothing():
    x = np.random.default_rng(1).uniform(0, 100, 200)
    acc = smoothdp.Accountant(epsilon=0.3)
    gen, twin = smoothdp.default_rng(7), smoothdp.default_rng(7)  # the same stream twice
    with pytest.raises(smoothdp.BudgetError):
        smoothdp.median(x, epsilon=0.5, bounds=(0, 100), rng=gen, accountant=acc)
    assert gen.random(4).tolist() == twin.random(4).tolist()  # the generator did not advance: no noise
    assert len(acc) == 0 and acc.spent == 0.0
    # A release that fits is charged once, with the mechanism's guarantee, and draws from the generator.
    rel = smoothdp.median(x, epsilon=0.3, bounds=(0, 100), rng=gen, accountant=acc)
    assert gen.random(4).tolist() != twin.random(4).tolist()
    assert [c.guarantee for c in acc.charges] == [rel.guarantee] and acc.spent == 0.3


def test_bad_data_is_refused_before_the_accountant_is_charged():
    acc = smoothdp.Accountant(epsilon=1.0)
    with pytest.raises(ValueError, match="outside the declared bounds"):
        smoothdp.median([1.0, 200.0], epsilon=0.5, bounds=(0, 100), clip=False, accountant=acc)
    assert len(acc) == 0


def test_add_remove_mean_on_a_substitution_accountant_costs_twice():
    acc = smoothdp.Accountant(epsilon=1.0)
    kw = {"bounds": (0, 10), "neighbours": "add_remove", "rng": 0}
    smoothdp.mean([1.0, 2.0, 3.0], epsilon=0.25, accountant=acc, **kw)
    assert acc.spent == 0.5  # a substitution is a removal and an addition
    smoothdp.mean([1.0, 2.0, 3.0], epsilon=0.25, bounds=(0, 10), accountant=acc, rng=0)
    assert acc.spent == 0.75  # the default mean is a substitution release: charged the ε passed
    acc_ar = smoothdp.Accountant(epsilon=1.0, neighbours="add_remove")
    smoothdp.mean([1.0, 2.0, 3.0], epsilon=0.25, accountant=acc_ar, **kw)
    assert acc_ar.spent == 0.25
    with pytest.raises(ValueError, match="does not convert"):
        smoothdp.median([1.0, 2.0, 3.0], epsilon=0.25, bounds=(0, 10), accountant=acc_ar, rng=0)
