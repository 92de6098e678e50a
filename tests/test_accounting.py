"""The accountant: exact budget checks, conversions between relations, advanced composition and zCDP."""

import math

import pytest

from smoothdp import ZCDP, Accountant, ApproxDP, BudgetError, GeoPrivacy, PureDP
from smoothdp.accounting import charge


def test_charges_add_up_and_a_charge_past_the_budget_is_refused_without_a_trace():
    acc = Accountant(epsilon=1.0)
    acc.charge(PureDP(0.5), label="median")
    acc.charge(PureDP(0.4), label="quantile")
    with pytest.raises(BudgetError, match="exceed the budget"):
        acc.charge(PureDP(0.2), label="mean")
    assert acc.spent == 0.9 and acc.spent == (0.9, 0.0) and acc.spent.epsilon == pytest.approx(0.9)
    assert len(acc) == 2 and [c.label for c in acc] == ["median", "quantile"]
    assert acc.remaining.epsilon == pytest.approx(0.1)
    acc.charge(PureDP(0.1))  # 0.5 + 0.4 + 0.1 is 1 + 2.8e-17 in binary: the budget is met, not exceeded
    assert acc.remaining.epsilon == 0.0


def test_budget_check_is_exact_beyond_the_rounding_allowance():
    acc = Accountant(epsilon=1.0)
    acc.charge(PureDP(1.0))
    with pytest.raises(BudgetError):
        acc.charge(PureDP(1e-9))


def test_delta_is_budgeted_too():
    acc = Accountant(epsilon=10.0, delta=1e-6)
    acc.charge(ApproxDP(1.0, 6e-7))
    with pytest.raises(BudgetError):
        acc.charge(ApproxDP(1.0, 6e-7))
    with pytest.raises(BudgetError):
        Accountant(epsilon=1.0).charge(ApproxDP(0.1, 1e-9))  # a pure budget takes no δ


def test_add_remove_charge_on_a_substitution_budget_counts_twice():
    acc = Accountant(epsilon=1.0)
    entry = acc.charge(PureDP(0.2, neighbours="add_remove"))
    assert entry.counted.epsilon == pytest.approx(0.4) and entry.counted.neighbours == "substitution"
    assert acc.spent.epsilon == pytest.approx(0.4)
    add_remove = Accountant(epsilon=1.0, neighbours="add_remove")
    with pytest.raises(ValueError, match="does not convert"):
        add_remove.charge(PureDP(0.1))  # substitution does not imply add/remove


def test_geo_budget_counts_only_geo_privacy_of_its_metric():
    acc = Accountant(epsilon=0.01, neighbours="metric")
    acc.charge(GeoPrivacy(0.004))
    acc.charge(GeoPrivacy(0.006))
    with pytest.raises(BudgetError):
        acc.charge(GeoPrivacy(1e-6))
    with pytest.raises(ValueError, match="geo-privacy"):
        acc.charge(PureDP(0.001))
    with pytest.raises(ValueError, match="manhattan"):
        Accountant(epsilon=1.0, metric="manhattan", neighbours="metric").charge(GeoPrivacy(0.1))
    with pytest.raises(ValueError, match=r"neighbours='metric'"):
        Accountant(epsilon=1.0).charge(GeoPrivacy(0.1))


def test_advanced_composition_beats_basic_for_many_small_releases():
    k, eps, slack = 1000, 0.01, 1e-6
    acc = Accountant(epsilon=5.0, delta=2e-6, slack=slack)
    for _ in range(k):
        acc.charge(ApproxDP(eps, 1e-9))
    drv = math.sqrt(2 * k * math.log(1 / slack)) * eps + k * eps * math.expm1(eps)
    assert acc.spent.epsilon == pytest.approx(drv, rel=1e-9) and acc.spent.epsilon < k * eps
    assert acc.spent.delta == pytest.approx(k * 1e-9 + slack)
    basic_only = Accountant(epsilon=5.0, delta=2e-6)
    for _ in range(500):
        basic_only.charge(ApproxDP(eps, 1e-9))
    assert basic_only.spent.epsilon == pytest.approx(5.0)
    with pytest.raises(BudgetError):
        basic_only.charge(ApproxDP(eps, 1e-9))


def test_zcdp_charges_convert_once_with_the_slack():
    acc = Accountant(epsilon=3.0, delta=1e-5, slack=1e-5)
    for _ in range(10):
        acc.charge(ZCDP(0.01))
    rho = 0.1
    assert acc.spent.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e5)), rel=1e-9)
    with pytest.raises(ValueError, match="slack"):
        Accountant(epsilon=1.0, delta=1e-6).charge(ZCDP(0.01))


def test_bad_parameters_name_themselves():
    with pytest.raises(ValueError, match="epsilon"):
        Accountant(epsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        Accountant(epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError, match="slack"):
        Accountant(epsilon=1.0, delta=1e-6, slack=1e-5)
    with pytest.raises(ValueError, match="neighbours"):
        Accountant(epsilon=1.0, neighbours="hamming")
    with pytest.raises(TypeError):
        Accountant(1.0, 0.0, "substitution")  # the relation is keyword-only
    with pytest.raises(TypeError, match="accountant"):
        charge("not an accountant", PureDP(1.0))  # type: ignore[arg-type]


def test_ledger_round_trips_through_a_dict():
    acc = Accountant(epsilon=1.0, delta=1e-6)
    acc.charge(PureDP(0.25), label="a")
    acc.charge(ApproxDP(0.25, 1e-7, neighbours="add_remove"), label="b")
    again = Accountant.from_dict(acc.to_dict())
    assert again.spent == acc.spent and [c.label for c in again] == ["a", "b"]


def test_ledger_round_trips_through_json_with_times_and_composition():
    import json
    import re

    acc = Accountant(epsilon=3.0, delta=1e-5, slack=1e-6)
    acc.charge(PureDP(0.25), label="a")
    acc.charge(ApproxDP(0.25, 1e-7, neighbours="add_remove"), label="b")
    acc.charge(ZCDP(0.01), label="c")
    written = json.dumps(acc.to_dict())
    again = Accountant.from_dict(json.loads(written))
    assert again.total == acc.total and again.neighbours == "substitution" and again.slack == 1e-6
    assert again.spent == acc.spent and again.remaining == acc.remaining
    assert [(c.label, c.guarantee, c.counted, c.time) for c in again] == [
        (c.label, c.guarantee, c.counted, c.time) for c in acc
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", c.time) for c in again)
    data = json.loads(written)
    assert data["total"] == {"epsilon": 3.0, "delta": 1e-5}
    # the add/remove charge is recorded as counted on this substitution budget: (2ε, (1 + e^ε)δ)
    assert data["charges"][1]["epsilon"] == 0.5
    assert data["charges"][1]["delta"] == pytest.approx((1 + math.exp(0.25)) * 1e-7)
    assert "epsilon" not in data["charges"][2]  # a zCDP charge has a ρ, not an (ε, δ) of its own
    assert json.dumps(again.to_dict()) == written  # a fixed point


def test_from_dict_rejects_what_is_not_a_consistent_ledger():
    good = Accountant(epsilon=1.0)
    good.charge(PureDP(0.5), label="a")
    data = good.to_dict()
    bad = {
        "a list": [],
        "no total": {k: v for k, v in data.items() if k != "total"},
        "other format": {**data, "format": "csv"},
        "newer version": {**data, "version": 2},
        "string epsilon": {**data, "total": {"epsilon": "1", "delta": 0.0}},
        "charges not a list": {**data, "charges": {}},
        "unknown guarantee": {**data, "charges": [{**data["charges"][0], "guarantee": {"type": "os"}}]},
        "edited epsilon": {**data, "charges": [{**data["charges"][0], "epsilon": 0.1}]},
        "over budget": {**data, "charges": data["charges"] * 3},
    }
    for name, value in bad.items():
        with pytest.raises(ValueError):
            Accountant.from_dict(value)
        assert name
    assert Accountant.from_dict(data).spent == 0.5


def test_split_epsilon_never_overspends_and_refuses_shares_beyond_the_whole():
    from fractions import Fraction

    from smoothdp.composition import split_epsilon

    for eps in (1e-9, 0.1, 1 / 3, 0.7, 1.0, 7.0):
        parts = split_epsilon(eps, 0.01, 0.02, 0.3)
        assert sum(map(Fraction, parts)) <= Fraction(eps) and parts[-1] >= 0.66 * eps
    assert split_epsilon(1.0, 1.0) == (1.0, 0.0)
    for shares in ((0.6, 0.5), (-0.1,), (1.5,), (float("nan"),)):
        with pytest.raises(ValueError, match="shares"):
            split_epsilon(1.0, *shares)
