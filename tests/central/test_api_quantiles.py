"""The numpy-style entry points of the quantiles: methods, order, duplicates, clamping, private bounds,
parameter errors, accountant."""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.rng import default_rng

X = np.random.default_rng(0).normal(1.2, 1.0, 500)


@pytest.mark.parametrize("method", ["exponential", "smooth_sensitivity"])
def test_every_single_method_is_selectable_and_reported(method):
    r = smoothdp.median(X, epsilon=1.0, bounds=(-100, 100), method=method, rng=1)
    assert r.details["method"] == method
    assert -100 <= float(r) <= 100


def test_auto_reports_the_method_it_ran():
    low = smoothdp.median(X, epsilon=0.5, bounds=(-100, 100), rng=1)
    high = smoothdp.median(X, epsilon=2.0, bounds=(-100, 100), rng=1)
    assert low.details["method"] == "exponential" and high.details["method"] == "smooth_sensitivity"


@pytest.mark.parametrize("method", ["auto", "joint_exp", "recursive", "exponential", "smooth_sensitivity"])
def test_quantiles_keep_the_order_asked_and_duplicates(method):
    qs = [0.9, 0.1, 0.5, 0.1]
    r = smoothdp.quantiles(X, qs, epsilon=4.0, bounds=(-100, 100), method=method, rng=2)
    v = np.asarray(r.value)
    assert v.shape == (4,) and v[1] == v[3]
    truth = np.quantile(X, qs, method="inverted_cdf")
    assert np.all(np.abs(v - truth) < 1.0)
    assert r.guarantee.epsilon == 4.0 and r.neighbours == "substitution"


def test_clamp_keeps_default_releases_in_bounds_and_clamp_false_does_not_force_it():
    x = np.random.default_rng(3).normal(1.2, 1.0, 5)
    outs = [
        float(smoothdp.median(x, epsilon=0.3, bounds=(0.0, 2.0), method="smooth_sensitivity", rng=s))
        for s in range(200)
    ]
    assert min(outs) >= 0.0 and max(outs) <= 2.0
    raw = [
        float(
            smoothdp.median(
                x, epsilon=0.3, bounds=(0.0, 2.0), method="smooth_sensitivity", clamp=False, rng=s
            )
        )
        for s in range(200)
    ]
    assert min(raw) < 0.0 or max(raw) > 2.0


def test_private_bounds_report_their_split_and_bounds():
    r = smoothdp.median(X, epsilon=1.0, bounds="private", rng=4)
    lo, hi = r.details["bounds"]
    assert lo < np.median(X) < hi
    assert r.details["epsilon_bounds"] + r.details["epsilon_statistic"] == pytest.approx(1.0)
    assert r.guarantee.epsilon == 1.0


def test_private_bounds_charge_the_whole_budget_once_before_any_noise():
    acc = Accountant(epsilon=0.5)
    gen = default_rng(5)
    before = repr(gen.bit_generator.state)
    with pytest.raises(BudgetError):
        smoothdp.median(X, epsilon=1.0, bounds="private", rng=gen, accountant=acc)
    assert repr(gen.bit_generator.state) == before and len(acc) == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"method": "laplace"}, ValueError, "method"),
        ({"bounds": "public"}, ValueError, "bounds"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"method": "exponential", "beta": 0.1}, TypeError, "beta"),
        ({"numerics": "fast"}, ValueError, "numerics"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, error, name):
    with pytest.raises(error, match=name):
        smoothdp.median(X, **{"epsilon": 1.0, "bounds": (-100, 100), **kwargs})


def test_bad_quantile_lists():
    with pytest.raises(ValueError, match="qs"):
        smoothdp.quantiles(X, [0.5, 1.5], epsilon=1.0, bounds=(-100, 100))
    with pytest.raises(ValueError, match="qs"):
        smoothdp.quantiles(X, [], epsilon=1.0, bounds=(-100, 100))
    with pytest.raises(ValueError, match="method"):
        smoothdp.quantiles(X, [0.5], epsilon=1.0, bounds=(-100, 100), method="tree")
