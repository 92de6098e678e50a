"""smoothdp.describe: a private summary shaped like pandas.DataFrame.describe(), under one ε."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

import smoothdp
from smoothdp.accounting import Accountant

BOUNDS = {"age": (0, 125), "hours": (0, 100)}
ROWS = ["count", "mean", "std", "25%", "50%", "75%"]


def _frame(n: int = 3000) -> pd.DataFrame:
    gen = np.random.default_rng(0)
    return pd.DataFrame({"age": gen.integers(18, 90, n).astype(float), "hours": gen.normal(40, 10, n),
                         "job": gen.choice(["a", "b"], n)})  # fmt: skip


def test_pandas_summary_has_describes_rows_and_columns():
    df = _frame()
    acc = Accountant(epsilon=1.0)
    out = smoothdp.describe(df, bounds=BOUNDS, epsilon=1.0, accountant=acc, rng=1)
    assert list(out.index) == ROWS and list(out.columns) == ["age", "hours"]
    assert out.loc["count"].tolist() == [3000.0, 3000.0]  # n is public under substitution: exact, free
    truth = df[["age", "hours"]].describe().loc[["mean", "std", "25%", "50%", "75%"]]
    assert np.allclose(out.loc[truth.index].to_numpy(), truth.to_numpy(), atol=3.0)
    assert len(acc) == 1 and acc.spent == 1.0
    assert out.attrs["smoothdp"]["guarantee"]["epsilon"] == 1.0


def test_polars_and_dask_summaries():
    df = _frame(500)
    out = smoothdp.describe(pl.from_pandas(df), bounds={"age": (0, 125)}, epsilon=1.0, rng=2)
    assert out.columns == ["statistic", "age"] and out["statistic"].to_list() == ROWS
    dd = pytest.importorskip("dask.dataframe")
    on_dask = smoothdp.describe(dd.from_pandas(df, npartitions=3), bounds=BOUNDS, epsilon=1.0, rng=3)
    assert isinstance(on_dask, pd.DataFrame) and list(on_dask.index) == ROWS
    assert on_dask.loc["count"].tolist() == [500.0, 500.0]


def test_add_remove_and_person_level_summaries_hide_n():
    df = _frame(800)
    release = smoothdp.describe(df, bounds={"age": (0, 125)}, epsilon=1.0, neighbours="add_remove", rng=4,
                                return_release=True)  # fmt: skip
    assert release.statistics[0].statistic == "count" and release.statistics[0].epsilon > 0
    assert isinstance(release.frame, pd.DataFrame) and release.neighbours == "add_remove"


def test_bad_bounds_are_named():
    with pytest.raises(TypeError, match="bounds"):
        smoothdp.describe(_frame(), bounds={}, epsilon=1.0)
    with pytest.raises(ValueError, match=r"aggs|column"):
        smoothdp.describe(_frame(), bounds={"nope": (0, 1)}, epsilon=1.0)
    with pytest.raises(TypeError, match="job"):
        smoothdp.describe(_frame(), bounds={"job": (0, 1)}, epsilon=1.0)
