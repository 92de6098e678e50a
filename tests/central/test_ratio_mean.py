"""The add/remove mean (smoothdp.central.moments.ratio_mean.RatioMean, the default of
mean(neighbours="add_remove")): data policy, public fields, the range's public rule, and accuracy against the
uncentred noisy sum over a noisy count and the smooth-sensitivity mean. Its worst-case privacy loss and broken
twin are in tests/mechanisms/ratio_mean_cases.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import smoothdp
from smoothdp.central.moments.ratio_mean import MIN_RANKS, RatioMean

WIDE = (-1e5, 1e7)


def _errors(
    x: np.ndarray, bounds: tuple[float, float], epsilon: float, method: str, trials: int = 30
) -> float:
    truth = float(np.clip(x, *bounds).mean())
    gen = smoothdp.default_rng(7)
    out = [
        smoothdp.mean(
            x, epsilon=epsilon, bounds=bounds, neighbours="add_remove", method=method, rng=gen
        ).value
        for _ in range(trials)
    ]
    return float(np.median(np.abs(np.array(out) - truth)))


def test_the_add_remove_default_is_the_ratio_mean_with_its_guarantee_and_proof():
    r = smoothdp.mean(np.arange(10.0), epsilon=1.0, bounds=(0, 10), neighbours="add_remove", rng=1)
    assert r.details["method"] == "ratio"
    assert r.guarantee.epsilon == 1.0 and r.guarantee.neighbours == "add_remove"
    assert r.proof == "docs/theory/moments.md#the-mean-when-n-is-private"


@pytest.mark.parametrize(
    "x",
    [
        [],
        [5.0],
        [np.nan, np.inf, -np.inf],
        [3.0] * 500,
        np.r_[np.zeros(900), np.full(100, 1e9)],
        np.random.default_rng(0).pareto(1.2, 5000) * 1e4,
    ],
    ids=["empty", "one", "nan-inf", "tied", "zeros-and-outliers", "pareto"],
)
def test_any_data_releases_a_float_inside_the_bounds_without_warning(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(5):
            r = smoothdp.mean(
                np.asarray(x, float), epsilon=0.5, bounds=WIDE, neighbours="add_remove", rng=seed
            )
            assert type(r.value) is float and WIDE[0] <= r.value <= WIDE[1]


def test_public_fields_do_not_depend_on_the_data():
    """The details (what a grouped table shows) are the same for neighbours and for both branches."""
    big = np.random.default_rng(1).exponential(3e4, 20_000)
    releases = [
        smoothdp.mean(x, epsilon=1.0, bounds=WIDE, neighbours="add_remove", rng=3)
        for x in (big, big[:-1], big[:3], big[:0])
    ]
    used = {r.not_private.extra["range_used"] for r in releases}
    assert used == {True, False}  # both branches ran
    assert all(r.details == releases[0].details for r in releases)
    assert all(r.mechanism == releases[0].mechanism for r in releases)


def test_the_range_is_tried_only_when_the_noisy_count_is_large():
    mech = RatioMean(epsilon=1.0, bounds=WIDE)
    small, large = MIN_RANKS / mech.eps_quantile - 1, MIN_RANKS / mech.eps_quantile
    assert mech.coverage(small) is None and mech.coverage(-5.0) is None
    assert mech.coverage(large) == 0.5
    assert 0.99 < mech.coverage(1e6) < 1.0


def test_the_range_clips_heavy_tails_far_inside_wide_bounds():
    x = np.random.default_rng(2).lognormal(10, 1, 5000)
    r = smoothdp.mean(x, epsilon=1.0, bounds=WIDE, neighbours="add_remove", rng=4)
    a, b = r.not_private.extra["clip_range"]
    assert a == WIDE[0] and np.quantile(x, 0.99) < b < 2e6


def test_heavy_tails_in_wide_bounds_beat_the_noisy_sum_and_the_smooth_sensitivity_mean():
    x = np.random.default_rng(3).lognormal(10, 1, 3000)
    ratio = _errors(x, WIDE, 1.0, "ratio")
    assert ratio < _errors(x, WIDE, 1.0, "noisy_sum") / 10
    assert ratio < _errors(x, WIDE, 1.0, "smooth_sensitivity") / 3


def test_moderate_groups_beat_the_smooth_sensitivity_mean():
    """ε·n = 30: the smooth sensitivity is still (u − l)e^{−β(n−1)}, the ratio's noise is (u − l)/(εn)."""
    x = np.random.default_rng(4).normal(40, 5, 300)
    assert _errors(x, (0, 100), 0.1, "ratio") < _errors(x, (0, 100), 0.1, "smooth_sensitivity") / 3


def test_centring_and_the_split_beat_the_uncentred_noisy_sum_on_bounded_data():
    x = np.random.default_rng(5).normal(40, 5, 1000)
    assert _errors(x, (0, 100), 1.0, "ratio") < _errors(x, (0, 100), 1.0, "noisy_sum") / 1.5
