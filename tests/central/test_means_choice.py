"""PrivateClipMean (smoothdp.central.moments.private_clip): public choices, budget split, range, and the
accuracy that justifies it (docs/means.md). Its worst-case privacy loss is checked by the registry case
(tests/mechanisms/mean_cases.py)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from smoothdp.central.moments.private_clip import PrivateClipMean, auto_coverage, private_clip_mean
from smoothdp.privacy import PureDP
from smoothdp.rng import default_rng


def test_auto_coverage_is_one_minus_twenty_over_eps_n_floored_at_a_half():
    assert auto_coverage(1000, 0.25) == pytest.approx(0.92)  # 1 − 20/250
    assert auto_coverage(10_000, 0.5) == pytest.approx(0.996)  # 1 − 20/5000
    assert auto_coverage(100, 0.025) == 0.5  # 1 − 20/2.5 < 1/2
    with pytest.raises(ValueError, match="n"):
        auto_coverage(0, 1.0)


@pytest.mark.parametrize("epsilon", [0.1, 0.3, 1.0, 2.0, 7.0])
@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.3])
def test_the_split_never_exceeds_epsilon(epsilon, fraction):
    mech = PrivateClipMean(bounds=(0.0, 1.0), epsilon=epsilon, range_fraction=fraction)
    assert Fraction(mech.epsilon_range) + Fraction(mech.epsilon_mean) <= Fraction(epsilon)
    assert mech.epsilon_range == pytest.approx(fraction * epsilon)
    assert mech.guarantee == PureDP(epsilon, neighbours="substitution")


def test_laplace_scale_is_never_below_the_exact_one():
    mech = PrivateClipMean(bounds=(-3.0, 7.0), epsilon=0.3)
    for a, b, n in [(-3.0, 7.0, 3), (-0.1, 0.7, 1000), (0.0, 2.0**-20, 7)]:
        exact = (Fraction(b) - Fraction(a)) / (n * Fraction(mech.epsilon_mean))
        assert Fraction(mech.laplace_scale(a, b, n)) >= exact
        assert mech.laplace_scale(a, b, n) == pytest.approx(float(exact), rel=1e-15)


def test_the_clip_range_is_inside_the_bounds_around_the_centre():
    mech = PrivateClipMean(bounds=(10.0, 50.0), epsilon=1.0, center=20.0)
    assert mech.clip_range(4.0) == (16.0, 24.0)
    assert mech.clip_range(64.0) == (10.0, 50.0)


def test_release_is_clamped_into_its_private_range_and_reports_it():
    x = default_rng(3).normal(1.2, 1.0, 500)
    for seed in range(20):
        rel = private_clip_mean(x, epsilon=0.5, bounds=(-1e4, 1e4), rng=default_rng(seed))
        a, b = rel.details["clip_range"]
        assert -1e4 <= a <= 0.0 <= b <= 1e4
        assert a <= rel.value <= b
        assert rel.details["epsilon_range"] + rel.details["epsilon_mean"] <= 0.5
        assert rel.guarantee.neighbours == "substitution"


def test_wide_bounds_error_is_far_below_the_public_bounds_laplace_noise():
    # N(1.2, 1), n = 1000, bounds ±1e4, ε = 1: the public-bounds Laplace mean has noise scale
    # 2e4/(1000·1) = 20 (median |error| ≈ 20·ln 2 ≈ 14); the private range makes it below 0.5.
    x = default_rng(11).normal(1.2, 1.0, 1000)
    errors = [
        abs(private_clip_mean(x, epsilon=1.0, bounds=(-1e4, 1e4), rng=default_rng(s)).value - x.mean())
        for s in range(40)
    ]
    assert np.median(errors) < 0.5


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"range_fraction": 0.0}, "range_fraction"),
        ({"coverage": 0.0}, "coverage"),
        ({"center": -1.0}, "center"),
        ({"clip": 1}, "clip"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        PrivateClipMean(bounds=(0.0, 1.0), epsilon=1.0, **kwargs)


def test_empty_data_is_an_error_about_the_public_size():
    with pytest.raises(ValueError):
        private_clip_mean([], epsilon=1.0, bounds=(0.0, 1.0), rng=default_rng(0))
