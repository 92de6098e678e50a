"""smoothdp.aggregate on pandas and polars frames: the result's shape and names, keys, empty groups, data
that never fails, parameter errors, the accountant, the metadata, and public fields on neighbours."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest

import smoothdp
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.rng import default_rng

BOUNDS = {"hours": (0, 100), "age": (0, 125)}


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "job": gen.choice(["a", "b", "c"], n),
            "sex": gen.choice(["F", "M"], n),
            "hours": gen.integers(10, 60, n).astype(float),
            "age": gen.integers(18, 90, n).astype(float),
            "person": gen.integers(0, n // 3, n),
        }
    )


def test_pandas_result_is_shaped_like_groupby_agg():
    df = _frame()
    out = smoothdp.aggregate(
        df, by="job", aggs={"hours": ["median", "quantiles:0.25,0.75"], "age": "median"},
        bounds=BOUNDS, epsilon=1.0, keys=["c", "a", "b", "z"], rng=1,
    )  # fmt: skip
    assert isinstance(out, pd.DataFrame)
    assert list(out.index) == ["c", "a", "b", "z"] and out.index.name == "job"
    assert list(out.columns) == [
        ("hours", "median"), ("hours", "quantile_0.25"), ("hours", "quantile_0.75"), ("age", "median"),
    ]  # fmt: skip
    assert (out.dtypes == np.float64).all()
    assert out["hours", "median"].between(0, 100).all()  # "z" is empty: a draw from the base measure
    meta = out.attrs["smoothdp"]
    assert meta["guarantee"]["epsilon"] == 1.0 and meta["neighbours"] == "substitution"
    assert [s["statistic"] for s in meta["statistics"]] == ["median", "quantiles:0.25,0.75", "median"]


def test_polars_result_has_key_columns_then_flat_names():
    df = pl.from_pandas(_frame())
    release = smoothdp.aggregate(
        df, ["job", "sex"], {"hours": ["median", "quantile:0.9"]}, bounds=BOUNDS, epsilon=1.0,
        keys=[("a", "F"), ("b", "M")], rng=2, return_release=True,
    )  # fmt: skip
    out = release.frame
    assert isinstance(out, pl.DataFrame)
    assert out.columns == ["job", "sex", "hours_median", "hours_quantile_0.9"]
    assert out["job"].to_list() == ["a", "b"] and out["sex"].to_list() == ["F", "M"]
    assert isinstance(release, smoothdp.TableRelease) and release.keys == {"kind": "public", "count": 2}


def test_several_by_columns_give_a_multiindex_in_pandas():
    out = smoothdp.aggregate(
        _frame(), ["job", "sex"], {"age": "median"}, bounds=BOUNDS, epsilon=1.0,
        keys=[("a", "F"), ("a", "M")], rng=3,
    )  # fmt: skip
    assert isinstance(out.index, pd.MultiIndex) and list(out.index.names) == ["job", "sex"]
    assert list(out.index) == [("a", "F"), ("a", "M")]


def test_unlisted_keys_are_dropped_before_anything_is_computed():
    """Rows of a key not in the list change nothing: with the same seed, the release is the same."""
    df = _frame()
    extra = pd.concat([df, pd.DataFrame({"job": ["zzz"] * 50, "sex": "F", "hours": 99.0, "age": 1.0,
                                         "person": 9999})])  # fmt: skip
    kw = {"by": "job", "aggs": {"hours": "median"}, "bounds": BOUNDS, "epsilon": 1.0, "keys": ["a", "b"]}
    a = smoothdp.aggregate(df, **kw, rng=4)
    b = smoothdp.aggregate(extra, **kw, rng=4)
    pd.testing.assert_frame_equal(a, b)


def test_null_keys_are_one_key_value():
    df = pd.DataFrame({"job": ["a", None, np.nan, "a"], "hours": [10.0, 20.0, 30.0, 40.0]})
    out = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=5.0,
                             keys=["a", None], rng=5)  # fmt: skip
    assert len(out) == 2 and pd.isna(out.index[1])
    pl_df = pl.DataFrame({"job": ["a", None, None], "hours": [10.0, 20.0, 30.0]})
    pl_out = smoothdp.aggregate(pl_df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=5.0, keys=[None],
                                rng=5)  # fmt: skip
    assert pl_out["job"].to_list() == [None]


@pytest.mark.parametrize(
    "values",
    [[], [np.nan], [np.inf, -np.inf, np.nan], [5.0], [1e300, -1e300] * 3],
    ids=["empty", "nan", "infinities", "one", "huge"],
)
def test_data_never_fails_or_warns(values):
    df = pd.DataFrame({"job": ["a"] * len(values), "hours": np.asarray(values, float)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = smoothdp.aggregate(
            df, "job", {"hours": ["median", "quantiles:0.1,0.9"]}, bounds=BOUNDS, epsilon=1.0,
            keys=["a", "b"], rng=6,
        )  # fmt: skip
        smoothdp.aggregate(df, None, {"hours": "median"}, bounds=BOUNDS, epsilon=1.0, rng=6)
        smoothdp.aggregate(pl.from_pandas(df), "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0,
                           keys="private", delta=1e-6, rng=6)  # fmt: skip
    assert out.shape == (2, 3) and np.isfinite(out.to_numpy()).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"keys": None}, ValueError, "keys="),
        ({"keys": "all"}, ValueError, "keys"),
        ({"by": "nope"}, ValueError, "by"),
        ({"by": 3}, TypeError, "by"),
        ({"aggs": {"nope": "median"}, "bounds": {"nope": (0, 1)}}, ValueError, "aggs"),
        ({"bounds": {"hours": (1, 0)}}, ValueError, "bounds"),
        ({"bounds": {}}, ValueError, "bounds"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"delta": 1e-6}, ValueError, "delta"),
        ({"keys": "private"}, ValueError, "delta"),
        ({"contributions": 2}, ValueError, "privacy_unit"),
        ({"privacy_unit": "nope"}, ValueError, "privacy_unit"),
        ({"privacy_unit": "person", "contributions": 0}, ValueError, "contributions"),
        ({"privacy_unit": "person", "max_groups": 0}, ValueError, "max_groups"),
        ({"neighbours": "metric"}, ValueError, "neighbours"),
        ({"aggs": {"hours": "trimmed_mean:0.1"}}, ValueError, "neighbours"),
        ({"aggs": {"job": "median"}, "bounds": {"job": (0, 1)}}, TypeError, "job"),
        ({"return_release": "yes"}, TypeError, "return_release"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, error, match):
    call = {
        "by": "job",
        "aggs": {"hours": "median"},
        "bounds": BOUNDS,
        "epsilon": 1.0,
        "keys": ["a"],
        **kwargs,
    }
    with pytest.raises(error, match=match):
        smoothdp.aggregate(_frame(), **call)


def test_other_inputs_are_refused_clearly():
    with pytest.raises(TypeError, match="DataFrame"):
        smoothdp.aggregate({"a": [1]}, None, {"a": "median"}, bounds={"a": (0, 1)}, epsilon=1.0)
    with pytest.raises(TypeError, match="collect"):
        smoothdp.aggregate(pl.DataFrame({"a": [1.0]}).lazy(), None, {"a": "median"}, bounds={"a": (0, 1)},
                           epsilon=1.0)  # fmt: skip


def test_one_charge_for_the_whole_table_whatever_the_number_of_groups():
    """The issue's failing loop: three disjoint groups at ε = 0.5 each on a budget of 1. As one table of
    ε = 1 it fits (parallel composition), with any number of groups."""
    df = _frame()
    acc = Accountant(epsilon=1.0)
    out = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0,
                             keys=list("abcdefgh"), accountant=acc, rng=7)  # fmt: skip
    assert len(out) == 8 and len(acc) == 1 and acc.spent == 1.0
    assert acc.charges[0].guarantee == smoothdp.PureDP(1.0, neighbours="substitution")
    gen = default_rng(8)
    before = repr(gen.bit_generator.state)
    with pytest.raises(BudgetError):
        smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=0.1, keys=["a"],
                           accountant=acc, rng=gen)  # fmt: skip
    assert repr(gen.bit_generator.state) == before, "randomness was drawn before the budget check"


def test_the_relation_follows_the_accountant_or_the_keyword():
    df = _frame()
    acc = Accountant(epsilon=2.0, neighbours="add_remove")
    r = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0, keys=["a"],
                           accountant=acc, rng=9, return_release=True)  # fmt: skip
    assert r.neighbours == "add_remove" and r.statistics[0].epsilon_per_group == 1.0
    sub = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0, keys=["a"],
                             rng=9, return_release=True)  # fmt: skip
    assert sub.neighbours == "substitution" and sub.statistics[0].epsilon_per_group == 0.5
    acc2 = Accountant(epsilon=2.0)
    smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=0.5, keys=["a"],
                       accountant=acc2, neighbours="add_remove", rng=9)  # fmt: skip
    assert acc2.spent == 1.0  # add/remove ε counted twice on a substitution budget


def test_person_level_bounding_divides_each_group_call_by_k():
    df = _frame()
    r = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.2, keys=["a", "b"],
                           privacy_unit="person", contributions=3, max_groups=2, neighbours="add_remove",
                           rng=10, return_release=True)  # fmt: skip
    assert r.statistics[0].epsilon_per_group == pytest.approx(0.4)
    assert r.unit == {"privacy_unit": "person", "rows_per_person": 3, "groups_per_person": 2}
    assert "per person" in r.guarantee_text


def test_by_none_under_substitution_is_the_single_column_call():
    df = _frame()
    r = smoothdp.aggregate(df, None, {"hours": "median", "age": "median"}, bounds=BOUNDS, epsilon=1.0, rng=11,
                           return_release=True)  # fmt: skip
    assert r.frame.shape == (1, 2) and all(s.neighbours == "substitution" for s in r.statistics)
    assert [s.epsilon_per_group for s in r.statistics] == [0.5, 0.5]
    single = smoothdp.median(df["hours"], epsilon=0.5, bounds=BOUNDS["hours"], rng=12)
    table = smoothdp.aggregate(df, None, {"hours": "median"}, bounds=BOUNDS, epsilon=0.5, rng=12)
    assert table["hours", "median"].iloc[0] == single.value  # the same call, the same draw


def test_private_keys_release_frequent_keys_only():
    gen = np.random.default_rng(13)
    df = pd.DataFrame(
        {"job": np.r_[["big"] * 500, ["mid"] * 80, ["solo"]], "hours": gen.uniform(0, 100, 581)}
    )
    r = smoothdp.aggregate(df, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                           keys="private", rng=14, return_release=True)  # fmt: skip
    assert list(r.frame.index) == ["big", "mid"]  # sorted; a key held by one person is not released
    assert r.keys["kind"] == "private" and r.keys["threshold"] > 10
    assert r.guarantee == smoothdp.ApproxDP(1.0, 1e-6, neighbours="substitution")


def _public(release: smoothdp.TableRelease) -> dict:
    meta = release.to_dict()
    return {**meta, "frame_columns": list(release.frame.columns), "frame_index": list(release.frame.index),
            "dtypes": [str(t) for t in release.frame.dtypes]}  # fmt: skip


@pytest.mark.parametrize(
    "change",
    ["move", "many_rows", "new_key", "remove_all_of_a_group", "nan_and_inf"],
)
def test_public_fields_rows_and_columns_are_the_same_on_neighbours(change):
    df = _frame(200, seed=15)
    other = df.copy()
    if change == "move":  # a person moves between groups (and changes values)
        other.loc[0, ["job", "hours"]] = ["b" if df.loc[0, "job"] != "b" else "a", 99.0]
    elif change == "many_rows":  # a person with many rows joins
        other = pd.concat([df, pd.DataFrame({"job": "a", "sex": "F", "hours": 100.0, "age": 125.0,
                                             "person": [777] * 40})], ignore_index=True)  # fmt: skip
    elif change == "new_key":  # a key that is not listed appears
        other = pd.concat([df, df.iloc[:1].assign(job="new")], ignore_index=True)
    elif change == "remove_all_of_a_group":
        other = df[df["job"] != "c"]
    else:
        other.loc[:5, "hours"] = [np.nan, np.inf, -np.inf, np.nan, 1e308, -0.0]
    kw = {"by": "job", "aggs": {"hours": ["median", "quantiles:0.5,0.9"], "age": "median"}, "bounds": BOUNDS,
          "epsilon": 1.0, "keys": ["a", "b", "c"], "privacy_unit": "person", "contributions": 2,
          "return_release": True}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = smoothdp.aggregate(df, **kw, rng=16)
        b = smoothdp.aggregate(other, **kw, rng=17)
    assert _public(a) == _public(b)


def test_counts_and_sums_are_one_batch_each_and_near_the_truth_at_large_epsilon():
    df = _frame(3000, seed=18)
    release = smoothdp.aggregate(
        df, "job", {"hours": ["count", "sum"], "age": "count"}, bounds=BOUNDS, epsilon=300.0,
        keys=["a", "b", "c", "empty"], rng=19, return_release=True,
    )  # fmt: skip
    out = release.frame
    truth = (
        df.groupby("job")
        .agg(count=("hours", "size"), total=("hours", "sum"))
        .reindex(["a", "b", "c", "empty"])
    )
    assert out["hours", "count"].dtype == np.int64
    assert (out["hours", "count"] == out["age", "count"]).all()  # one count for the table
    assert np.all(np.abs(out["hours", "count"].to_numpy() - truth["count"].fillna(0).to_numpy()) <= 2)
    assert np.allclose(out["hours", "sum"].to_numpy(), truth["total"].fillna(0).to_numpy(), atol=20)
    assert [s.statistic for s in release.statistics] == ["count", "sum"]
    assert release.statistics[1].mechanism.startswith("noisy clipped sum")


def test_the_count_of_one_group_under_substitution_is_exact_and_free():
    df = _frame(123)
    release = smoothdp.aggregate(df, None, {"hours": ["count", "median"]}, bounds=BOUNDS, epsilon=1.0, rng=20,
                                 return_release=True)  # fmt: skip
    assert release.frame["hours", "count"].iloc[0] == 123
    count, median = release.statistics
    assert count.epsilon == 0.0 and median.epsilon == 1.0  # the count takes no share of ε
    ar = smoothdp.aggregate(df, None, {"hours": ["count"]}, epsilon=1.0, neighbours="add_remove", rng=20,
                            return_release=True)  # fmt: skip
    assert ar.statistics[0].epsilon == 1.0 and ar.statistics[0].mechanism.startswith("noisy histogram")
