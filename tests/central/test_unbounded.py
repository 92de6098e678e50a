"""Quantiles and ranges without bounds: the ladder, the AboveThreshold walk, its work bound, entry points."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import smoothdp
from smoothdp.accounting import Accountant
from smoothdp.central.no_bounds import private_range, range_quantiles, unbounded_quantile
from smoothdp.central.unbounded import ladder as unbounded
from smoothdp.central.unbounded.ladder import (
    CAP,
    Ladder,
    UnboundedQuantile,
    UnboundedRange,
    above_threshold_walk,
    prepare_unbounded,
    rational_q,
)
from smoothdp.rng import default_rng


def test_the_ladder_is_public_increasing_and_ends_at_the_cap():
    lad = Ladder(ratio=1.01, floor=2.0**-30)
    m = lad.magnitudes(0, lad.size)
    assert m[0] == 0.0 and m[1] == 2.0**-30 and m[-1] == CAP
    assert np.all(np.diff(m) >= 0) and np.all(np.diff(m[:-1]) > 0)
    assert lad.size == 2 + math.ceil((1021 * math.log(2) + 30 * math.log(2)) / math.log(1.01))
    assert m[lad.steps_to(1000.0)] >= 1000.0 > m[lad.steps_to(1000.0) - 1]


def test_rational_q_is_the_shortest_decimal_form():
    assert rational_q(0.5) == (1, 2)
    assert rational_q(0.1) == (1, 10)
    assert rational_q(0.999) == (999, 1000)
    a, b = rational_q(1 / 3)
    assert b <= 10**6 and abs(Fraction(a, b) - Fraction(1, 3)) < 1e-6


@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_a_noiseless_walk_stops_at_the_first_ladder_point_at_or_above_the_quantile(q):
    """With vanishing noise (scale 10⁻³: P(draw ≠ 0) ≈ 2e^{-1000}) the walk is the deterministic rule."""
    x = np.sort(np.random.default_rng(1).lognormal(2.0, 1.5, 301))
    lad = Ladder(ratio=1.05, floor=2.0**-10)
    r = max(1, math.ceil(q * x.size))
    k = above_threshold_walk(
        x, lad, origin=0.0, weight=1, offset=0, theta=r, scale_threshold=1e-3, scale_query=1e-3,
        rng=default_rng(0), chunk=7,
    )  # fmt: skip
    m = lad.magnitudes(0, lad.size)
    expected = int(np.argmax(m >= x[r - 1]))  # first ladder point ≥ x_(r), by brute force
    assert k == expected


def test_the_two_sided_walk_goes_down_for_negative_data_and_lands_near_the_quantile():
    x = np.random.default_rng(2).normal(-500.0, 10.0, 2000)
    mech = UnboundedQuantile(0.5, epsilon=2.0)
    values = [mech.sample(prepare_unbounded(x), default_rng(s)) for s in range(20)]
    assert all(report["direction"] == "down" for _, report in values)
    true = np.quantile(x, 0.5, method="inverted_cdf")
    errors = np.array([abs(v - true) for v, _ in values])
    assert np.median(errors) < 0.02 * abs(true)


def test_the_work_past_the_stopping_step_is_at_most_one_chunk(monkeypatch):
    drawn: list[int] = []
    real = unbounded._draw

    def counting(scale, size, rng, numerics):
        drawn.append(1 if size is None else int(size))
        return real(scale, size, rng, numerics)

    monkeypatch.setattr(unbounded, "_draw", counting)
    x = np.random.default_rng(3).normal(1e6, 1e3, 500)
    mech = UnboundedQuantile(0.5, epsilon=1.0, chunk=1000)
    _, report = mech.sample(prepare_unbounded(x), default_rng(4))
    k = report["steps"]
    assert k > 3000  # the walk is long (to 1e6 from 2^-30 by 1%): the bound below is not vacuous
    # one sign-test draw, one threshold draw, then whole chunks up to the one holding step k
    assert sum(drawn) == 2 + 1000 * (k // 1000 + 1)


def test_release_details_state_the_split_of_epsilon():
    x = np.random.default_rng(5).normal(3.0, 1.0, 300)
    rel = smoothdp.median(x, epsilon=0.7, bounds=None, method="unbounded", rng=1)
    d = rel.details
    parts = [d["epsilon_sign_test"], d["epsilon_threshold"], d["epsilon_queries"]]
    assert sum(map(Fraction, parts)) <= Fraction(0.7) and math.isclose(sum(parts), 0.7, rel_tol=1e-12)
    assert d["epsilon_sign_test"] == pytest.approx(0.07)
    assert rel.guarantee.epsilon == 0.7 and rel.neighbours == "substitution"


def test_bounds_none_charges_the_epsilon_passed_and_reports_the_range_share():
    x = np.random.default_rng(6).normal(40.0, 5.0, 400)
    acc = Accountant(epsilon=1.0)
    rel = smoothdp.median(x, epsilon=0.6, bounds=None, method="piecewise_laplace", rng=2, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(0.6) and len(acc) == 1
    d = rel.details
    assert Fraction(d["epsilon_bounds"]) + Fraction(d["epsilon_statistic"]) <= Fraction(0.6)
    assert d["epsilon_bounds"] == pytest.approx(0.15) and d["bounds_private"] is True
    lo, hi = d["bounds"]
    assert lo < rel.value < hi


def test_bounds_none_for_several_quantiles_runs_inside_a_private_range():
    x = np.random.default_rng(7).lognormal(10.0, 1.0, 3000)
    rel = smoothdp.quantiles(x, [0.1, 0.5, 0.9], epsilon=2.0, bounds=None, rng=3)
    true = np.quantile(x, [0.1, 0.5, 0.9], method="inverted_cdf")
    assert np.all(np.abs(rel.value - true) < 0.2 * true)
    assert rel.details["range"]["quantiles"] == range_quantiles([0.1, 0.5, 0.9]) == (0.05, 0.95)


def test_method_unbounded_needs_bounds_none():
    with pytest.raises(ValueError, match="bounds=None"):
        smoothdp.median([1.0, 2.0], epsilon=1.0, bounds=(0, 10), method="unbounded")


def test_add_remove_releases_on_empty_data_and_names_its_relation():
    rel = unbounded_quantile([], 0.5, epsilon=1.0, neighbours="add_remove", rng=4)
    assert math.isfinite(rel.value) and rel.neighbours == "add_remove"
    assert rel.details["method"] == "unbounded"  # auto cannot look at n under add/remove


def test_nan_is_imputed_with_zero_and_infinities_are_clipped():
    arr = prepare_unbounded(np.array([np.nan, np.inf, -np.inf, 2.0]))
    assert arr.tolist() == [-CAP, 0.0, 2.0, CAP]
    assert prepare_unbounded(np.array([np.nan, -5.0]), lower=1.0).tolist() == [1.0, 1.0]


def test_the_private_range_brackets_the_data_tightly_far_from_zero():
    """The lower end walks down from the upper one: its steps follow the spread, not the magnitude 2000."""
    x = np.random.default_rng(8).normal(2000.0, 20.0, 5000)
    q25, q75 = np.quantile(x, [0.25, 0.75])
    hits = 0
    for seed in range(10):
        lo, hi = private_range(x, epsilon=1.0, rng=seed).value
        assert lo < hi
        hits += lo <= q25 and hi >= q75 and hi - lo <= 256
    assert hits >= 9


def test_the_range_widens_crossed_ends():
    mech = UnboundedRange(epsilon=1.0, quantiles=(0.5, 0.5))
    lo, hi = mech.sample(prepare_unbounded(np.zeros(50)), default_rng(9))
    assert lo < hi


def test_one_sided_walk_needs_no_sign_test():
    mech = UnboundedQuantile(0.5, epsilon=1.0, lower=0.0)
    assert mech.epsilon_sign == 0.0 and mech.epsilon_threshold + mech.epsilon_queries <= 1.0
    x = np.random.default_rng(10).exponential(50.0, 1000)
    value, report = mech.sample(mech._prepare(x), default_rng(11))
    assert report["direction"] == "up" and 0.0 < value < 200.0


def test_a_private_range_that_collapses_far_out_is_widened_into_valid_bounds() -> None:
    """Regression: on ten records at ε = 1 the range's walks can overshoot to u ≈ 2^40 with ℓ ≥ u; the old
    widening by the ladder's floor vanished in u's rounding (ℓ = u), and the bounded stage raised a
    ValueError that depended on the data. Every seed must now release, inside the widened range."""
    x = np.arange(1.0, 11.0)
    for seed in range(60):
        for data in (x, np.array([5.0]), np.array([2.0**40] * 3)):
            release = smoothdp.quantiles(data, [0.25, 0.5, 0.75], epsilon=1.0, bounds=None, rng=seed)
            lo, hi = release.details["bounds"]
            assert lo < hi and np.all((lo <= release.value) & (release.value <= hi))


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0**-20, 7.0])
def test_the_range_spends_at_most_its_epsilon_in_exact_arithmetic(epsilon):
    mech = UnboundedRange(epsilon=epsilon, quantiles=(0.01, 0.99), mirror=True)
    assert Fraction(mech.epsilon_top) + Fraction(mech.epsilon_bottom) <= Fraction(epsilon)
    assert Fraction(mech.sign.epsilon_sign) + Fraction(mech.epsilon_walk) <= Fraction(mech.epsilon_top)
    for direction in ("up", "down"):
        walk, low = mech.top_walk(direction), mech.bottom(1.0, direction)
        assert walk.epsilon == mech.epsilon_walk and walk.epsilon_sign == 0.0
        assert low.epsilon == mech.epsilon_bottom and low.epsilon_sign == 0.0


@pytest.mark.parametrize("quantiles", [(0.25, 0.75), (0.004, 0.996), (0.1, 0.9)])
def test_a_column_below_zero_gets_the_mirror_of_its_positive_twin(quantiles):
    # mirror=True: the sign test sends −x to the walks on x: the same draws, the range mirrored (without it,
    # longitudes near −74 get an upper end near 0 for q_hi = 0.996, the walk from 0 stopping on its first
    # empty steps)
    x = np.random.default_rng(12).normal(74.0, 0.1, 13_000)
    for seed in range(5):
        lo, hi = private_range(x, epsilon=0.25, quantiles=quantiles, rng=seed, mirror=True).value
        lo_neg, hi_neg = private_range(-x, epsilon=0.25, quantiles=quantiles, rng=seed, mirror=True).value
        assert (lo_neg, hi_neg) == (-hi, -lo)
        assert 32.0 <= lo < 74.0 < hi <= 160.0
