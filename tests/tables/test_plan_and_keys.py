"""The plan (statistic names, output columns, the split of ε), the budget rules, group keys, and
contribution bounding: pure functions, no release."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from smoothdp.rng import default_rng
from smoothdp.tables.bounding import bound_contributions, rank_within
from smoothdp.tables.composition import divide_down, table_budget
from smoothdp.tables.groups import PublicKeys, combine_codes, normalise_key, sort_key
from smoothdp.tables.plan import make_plan, split_down

BOUNDS = {"hours": (0.0, 100.0), "age": (0.0, 125.0)}


def test_statistic_names_and_output_columns():
    plan = make_plan(
        {"hours": ["count", "median", "quantiles:0.25,0.5,0.75"], "age": ["count", "quantile:0.9"]},
        bounds=BOUNDS,
        weights=None,
        private_keys=False,
    )
    assert [s.spec for s in plan.statistics] == [
        "count",
        "median",
        "quantiles:0.25,0.5,0.75",
        "quantile:0.9",
    ]
    assert [(c.column, c.name) for c in plan.columns] == [
        ("hours", "count"),
        ("hours", "median"),
        ("hours", "quantile_0.25"),
        ("hours", "quantile_0.5"),
        ("hours", "quantile_0.75"),
        ("age", "count"),
        ("age", "quantile_0.9"),
    ]
    # count is one statistic, shown under both columns
    assert plan.columns[0].statistic == plan.columns[5].statistic == 0
    assert plan.value_columns == ("hours", "age")


def test_weights_split_epsilon_and_never_exceed_it():
    plan = make_plan(
        {"hours": ["count", "median"], "age": "median"},
        bounds=BOUNDS,
        weights={("hours", "median"): 2.0, "keys": 1.0},
        private_keys=True,
    )
    shares, keys = plan.shares(0.7)
    assert shares == pytest.approx((0.7 / 5, 0.7 * 2 / 5, 0.7 / 5)) and keys == pytest.approx(0.7 / 5)
    assert sum(map(Fraction, (*shares, keys))) <= Fraction(0.7)
    for total, weights in ((0.1, [1.0] * 7), (1e-9, [3.0, 1.0, 1.0]), (2.3, [0.1, 0.2, 0.3])):
        parts = split_down(total, weights)
        assert sum(map(Fraction, parts)) <= Fraction(total)
        assert parts == pytest.approx([total * w / sum(weights) for w in weights], rel=1e-12)
    for total, k in ((0.1, 3), (1.0, 7), (0.3, 10)):
        part = divide_down(total, k)
        assert Fraction(part) * k <= Fraction(total) and part == pytest.approx(total / k)


@pytest.mark.parametrize(
    ("aggs", "kwargs", "error", "match"),
    [
        ({"hours": "mode"}, {}, ValueError, "unknown statistic"),
        ({"hours": "quantile"}, {}, ValueError, "argument"),
        ({"hours": "quantile:1.5"}, {}, ValueError, r"\[0, 1\]"),
        ({"hours": "quantile:x"}, {}, ValueError, "numbers"),
        ({"hours": ["median", "quantile:0.5,"]}, {}, ValueError, "median|argument"),
        ({"other": "median"}, {}, ValueError, "bounds"),
        ({"hours": 3}, {}, TypeError, "statistic"),
        ({"hours": [3]}, {}, TypeError, "string"),
        ({}, {}, TypeError, "aggs"),
        ({"hours": ["median", "median"]}, {}, ValueError, "twice"),
        ({"hours": "median"}, {"weights": {("age", "mean"): 2.0}}, ValueError, "weights"),
        ({"hours": "median"}, {"weights": {("hours", "median"): 0.0}}, ValueError, "weights"),
    ],
)
def test_bad_aggs_and_weights_name_the_parameter(aggs, kwargs, error, match):
    with pytest.raises(error, match=match):
        make_plan(aggs, bounds=BOUNDS, weights=kwargs.get("weights"), private_keys=False)


def test_the_budget_rules():
    sub = table_budget(
        epsilon=1.0, delta=0.0, neighbours="substitution", one_group=False, rows=3, private_keys=False
    )
    assert (sub.call_neighbours, sub.person_epsilon, sub.rows) == ("add_remove", 0.5, 3)
    assert sub.per_group(0.3) == pytest.approx(0.1) and sub.guarantee.neighbours == "substitution"
    ar = table_budget(
        epsilon=1.0, delta=1e-6, neighbours="add_remove", one_group=False, rows=1, private_keys=True
    )
    assert (ar.person_epsilon, ar.person_delta) == (1.0, 1e-6)
    direct = table_budget(
        epsilon=1.0, delta=0.0, neighbours="substitution", one_group=True, rows=1, private_keys=False
    )
    assert direct.direct and direct.person_epsilon == 1.0 and direct.per_group(0.4) == 0.4
    sub_keys = table_budget(
        epsilon=2.0, delta=1e-6, neighbours="substitution", one_group=False, rows=1, private_keys=True
    )
    # (1 + e^{ε/2})·δ_P ≤ δ: two add/remove steps of (ε/2, δ_P)
    assert (1 + math.exp(sub_keys.person_epsilon)) * sub_keys.person_delta <= 1e-6
    with pytest.raises(ValueError, match="delta"):
        table_budget(
            epsilon=1.0, delta=0.0, neighbours="add_remove", one_group=False, rows=1, private_keys=True
        )
    with pytest.raises(ValueError, match="delta"):
        table_budget(
            epsilon=1.0, delta=1e-6, neighbours="add_remove", one_group=False, rows=1, private_keys=False
        )
    with pytest.raises(ValueError, match="epsilon"):
        table_budget(
            epsilon=0.0, delta=0.0, neighbours="add_remove", one_group=False, rows=1, private_keys=False
        )


def test_null_keys_are_one_value_and_keys_match_across_kinds():
    assert normalise_key(np.float64("nan")) is None and normalise_key(None) is None
    assert normalise_key(np.int64(3)) == 3 and isinstance(normalise_key(np.int64(3)), int)
    codes, keys = combine_codes([np.array([0, 1, 2, 1])], [["a", float("nan"), None]])
    assert keys == [("a",), (None,)] and codes.tolist() == [0, 1, 1, 1]
    public = PublicKeys(["a", None, "zzz"], 1)
    assert public.positions(keys).tolist() == [0, 1]
    with pytest.raises(ValueError, match="twice"):
        PublicKeys(["a", "a"], 1)
    with pytest.raises(ValueError, match="tuple"):
        PublicKeys(["a"], 2)
    with pytest.raises(TypeError, match="keys"):
        PublicKeys("abc", 1)


def test_several_by_columns_combine_into_tuples():
    a = np.array([0, 1, 0, 1, 0])
    b = np.array([1, 1, 0, 0, 1])
    codes, keys = combine_codes([a, b], [["x", "y"], [10, 20]])
    got = [keys[c] for c in codes]
    assert got == [("x", 20), ("y", 20), ("x", 10), ("y", 10), ("x", 20)]
    assert sorted(keys, key=sort_key) == [("x", 10), ("x", 20), ("y", 10), ("y", 20)]
    assert sorted([("b",), (None,), (2,), (1.5,)], key=sort_key) == [(None,), (1.5,), (2,), ("b",)]


def test_bounding_keeps_at_most_k_rows_in_at_most_l_groups():
    gen = np.random.default_rng(0)
    units = gen.integers(0, 300, 5000)
    groups = gen.integers(0, 40, 5000)
    for rows, max_groups in ((1, None), (3, None), (5, 2), (4, 1)):
        kept = bound_contributions(units, groups, rows=rows, max_groups=max_groups, rng=default_rng(1))
        assert np.all(np.diff(kept) > 0)
        per_person = np.bincount(units[kept], minlength=300)
        assert per_person.max() <= rows
        have = np.bincount(units, minlength=300)
        assert np.all(per_person == np.minimum(have, rows)) or max_groups is not None
        if max_groups is not None:
            pairs = np.unique(np.stack((units[kept], groups[kept]), 1), axis=0)
            assert np.bincount(pairs[:, 0], minlength=300).max() <= max_groups


def test_bounding_chooses_uniformly_and_per_person():
    """Person 0 has rows 0..3 in groups 0, 0, 1, 2: with k = 1 each row is kept w.p. 1/4; with l = 1 and
    k = 4, each of the three groups is kept w.p. 1/3. Person 1's rows never change person 0's odds."""
    units = np.array([0, 0, 0, 0, 1, 1])
    groups = np.array([0, 0, 1, 2, 0, 1])
    gen = default_rng(2)
    trials = 6000
    row_hits = np.zeros(6)
    group_hits = np.zeros(3)
    for _ in range(trials):
        row_hits[bound_contributions(units, groups, rows=1, max_groups=None, rng=gen)] += 1
        kept = bound_contributions(units, groups, rows=4, max_groups=1, rng=gen)
        group_hits[np.unique(groups[kept[units[kept] == 0]])] += 1
    assert np.allclose(row_hits[:4] / trials, 0.25, atol=0.03)
    assert np.allclose(row_hits[4:] / trials, 0.5, atol=0.03)
    assert np.allclose(group_hits / trials, 1 / 3, atol=0.03)


def test_rank_within_is_a_uniform_order_per_owner():
    owner = np.array([5, 5, 5, 9, 9, 5])
    gen = default_rng(3)
    first = np.zeros(6)
    for _ in range(4000):
        r = rank_within(owner, gen)
        assert sorted(r[owner == 5]) == [0, 1, 2, 3] and sorted(r[owner == 9]) == [0, 1]
        first += r == 0
    assert np.allclose(first[owner == 5] / 4000, 0.25, atol=0.03)
    assert np.allclose(first[owner == 9] / 4000, 0.5, atol=0.03)
