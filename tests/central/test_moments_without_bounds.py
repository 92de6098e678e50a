"""``smoothdp.mean``, ``var`` and ``std`` with ``bounds=None``: the budget split, the parameter errors, no
data-dependent failure, and the accuracy the two stages give."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import smoothdp
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.central.no_bounds import MOMENT_RANGE_CAP as RANGE_CAP
from smoothdp.central.no_bounds import capped_range, tail_share
from smoothdp.rng import default_rng

X = np.random.default_rng(0).lognormal(3.0, 1.0, 2000)
STATISTICS = [smoothdp.mean, smoothdp.var, smoothdp.std]


@pytest.mark.parametrize("statistic", STATISTICS)
@pytest.mark.parametrize("neighbours", ["substitution", "add_remove"])
def test_the_release_costs_the_epsilon_passed_and_states_its_split(statistic, neighbours):
    ledger = Accountant(epsilon=1.0, neighbours=neighbours)
    r = statistic(X, epsilon=1.0, bounds=None, neighbours=neighbours, accountant=ledger, rng=1)
    assert r.guarantee.epsilon == 1.0 and r.neighbours == neighbours
    assert ledger.spent.epsilon == 1.0
    split = Fraction(r.details["epsilon_bounds"]) + Fraction(r.details["epsilon_statistic"])
    assert split <= 1 and r.details["epsilon_bounds"] == 0.25
    assert r.details["bounds_private"] and 0 < r.details["range_tail"] < 0.5
    with pytest.raises(BudgetError):
        statistic(X, epsilon=1.0, bounds=None, neighbours=neighbours, accountant=ledger, rng=1)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"method": "clipped"}, "method"),
        ({"delta": 1e-6}, "delta"),
        ({"engine": "numpy"}, "engine"),
        ({"noise": "polyplace"}, "noise"),
        ({"epsilon": 0.0}, "epsilon"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, name):
    call = {"epsilon": 1.0, "bounds": None, **kwargs}
    with pytest.raises((ValueError, TypeError), match=name):
        smoothdp.mean(X, **call)


def test_the_mean_refuses_smooth_sensitivity_options_without_bounds():
    with pytest.raises(ValueError, match="beta"):
        smoothdp.mean(X, epsilon=1.0, bounds=None, beta=0.1)


ODD_COLUMNS = {
    "constant 62.5": np.full(300, 62.5),
    "huge": np.full(300, 1e300),
    "infinities and NaN": np.array([np.inf, -np.inf, np.nan, 1.0, 2.0] * 60),
    "tiny": np.random.default_rng(1).normal(0.0, 1e-200, 300),
    "negative, far from 0": -np.random.default_rng(2).normal(1e6, 1.0, 300),
    "two records": np.array([3.0, 4.0]),
}


@pytest.mark.parametrize("column", list(ODD_COLUMNS))
@pytest.mark.parametrize("statistic", STATISTICS)
@pytest.mark.parametrize("epsilon", [0.01, 1.0])
def test_no_column_makes_it_fail_or_release_a_non_finite_value(column, statistic, epsilon):
    # the range found depends on the data; nothing after it may raise or overflow (errors are public only)
    gen = default_rng(3)
    for neighbours in ("substitution", "add_remove"):
        for _ in range(3):
            r = statistic(ODD_COLUMNS[column], epsilon=epsilon, bounds=None, neighbours=neighbours, rng=gen)
            assert np.isfinite(r.value)
            lo, hi = r.details["bounds"]
            assert -RANGE_CAP <= lo < hi <= RANGE_CAP


def test_a_range_beyond_the_cap_stays_a_range():
    assert capped_range(1e300, 2e300) == (0.5 * RANGE_CAP, RANGE_CAP)
    assert capped_range(-2e300, -1e300) == (-RANGE_CAP, -0.5 * RANGE_CAP)
    assert capped_range(-1e300, 5.0) == (-RANGE_CAP, 5.0)


def test_the_tail_share_reads_public_values_only():
    assert tail_share(n=None, epsilon=1.0) == 0.01
    assert tail_share(n=100, epsilon=0.1) == 0.25
    assert tail_share(n=10**7, epsilon=1.0) == 1e-3
    assert tail_share(n=10_000, epsilon=1.0) == pytest.approx(0.004)


def test_without_bounds_the_mean_and_variance_land_near_the_truth():
    # far from 0, with no scale known: the range walks find the data's octave, the sweep narrows it
    x = np.random.default_rng(4).normal(1000.0, 10.0, 20_000)
    gen = default_rng(5)
    means = [smoothdp.mean(x, epsilon=1.0, bounds=None, rng=gen).value for _ in range(20)]
    stds = [smoothdp.std(x, epsilon=1.0, bounds=None, rng=gen).value for _ in range(20)]
    assert np.median(np.abs(np.asarray(means) - x.mean())) < 0.1
    assert np.median(np.abs(np.asarray(stds) - x.std(ddof=1))) < 0.5


def test_without_bounds_beats_generous_bounds_where_they_are_loose():
    # 100 N(1.2, 1) records: the declared (−10^4, 10^4) cost noise of their width; no bounds cost a range
    x = np.random.default_rng(6).normal(1.2, 1.0, 1000)
    gen = default_rng(7)
    free = [abs(smoothdp.mean(x, epsilon=1.0, bounds=None, rng=gen).value - x.mean()) for _ in range(30)]
    loose = [
        abs(smoothdp.mean(x, epsilon=1.0, bounds=(-1e4, 1e4), rng=gen).value - x.mean()) for _ in range(30)
    ]
    assert np.median(free) * 100 < np.median(loose)


@pytest.mark.parametrize("statistic", STATISTICS)
def test_too_few_records_are_refused_before_any_budget_is_charged(statistic):
    ledger = Accountant(epsilon=5.0)
    with pytest.raises(ValueError, match="at least"):
        statistic([], epsilon=1.0, bounds=None, accountant=ledger)
    assert ledger.spent.epsilon == 0.0


def _median_relative_error(statistic, x, truth, epsilon, seed):
    gen = default_rng(seed)
    return float(
        np.median([abs(statistic(x, epsilon=epsilon, bounds=None, rng=gen).value - truth) for _ in range(40)])
    ) / abs(truth)


def test_data_far_from_zero_get_a_range_that_follows_their_spread():
    # years-like data: 2000 ± 20. The first walk's 1.25 ladder lands up to 500 above them, a range 20σ
    # wide; the finer ladder (ε·n ≥ 300) plus the far end's slack keep it a few σ wide
    x = np.random.default_rng(7).normal(2000.0, 20.0, 1000)
    assert _median_relative_error(smoothdp.var, x, float(np.var(x, ddof=1)), 1.0, 11) < 0.3
    assert _median_relative_error(smoothdp.std, x, float(np.std(x, ddof=1)), 1.0, 12) < 0.15


def test_the_first_ladder_and_the_slack_are_public_and_stated():
    from smoothdp.central.no_bounds import MOMENT_LADDER_RATIO, RANGE_SLACK, far_end_slack, moment_top_ratio

    ratios = [moment_top_ratio(n=n, epsilon=1.0) for n in (10, 299, 300, 2999, 3000, 10**6)]
    assert ratios == [MOMENT_LADDER_RATIO, MOMENT_LADDER_RATIO, 1.05, 1.05, 1.01, 1.01]
    assert moment_top_ratio(n=None, epsilon=100.0) == MOMENT_LADDER_RATIO  # add/remove: n is private
    # the end farther from 0 moves out by (RANGE_SLACK − (ratio − 1))·width, the other stays
    assert far_end_slack(10.0, 20.0, 1.05) == (10.0, 20.0 + (RANGE_SLACK - 0.05) * 10.0)
    assert far_end_slack(-20.0, -10.0, 1.05) == (-20.0 - (RANGE_SLACK - 0.05) * 10.0, -10.0)
    assert far_end_slack(10.0, 20.0, MOMENT_LADDER_RATIO) == (10.0, 20.0)
    x = np.random.default_rng(8).normal(2000.0, 20.0, 1000)
    r = smoothdp.var(x, epsilon=1.0, bounds=None, rng=3)
    lo, hi = r.details["bounds_found"]
    assert r.details["range"]["ladder"]["top_ratio"] == 1.05
    assert r.details["bounds"] == far_end_slack(lo, hi, 1.05)
