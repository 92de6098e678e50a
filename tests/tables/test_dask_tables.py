"""smoothdp.aggregate on Dask data frames: a pandas result with the shape and metadata of the in-memory
path, per-group work on the workers (threads here, a 2-worker cluster in the last test)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import smoothdp

dd = pytest.importorskip("dask.dataframe")

BOUNDS = {"hours": (0, 100), "age": (0, 125)}
AGGS = {"hours": ["count", "median", "sum", "quantiles:0.25,0.75"], "age": ["count", "quantile:0.9"]}


def _frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "job": gen.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.2, 0.0]),
            "hours": gen.integers(10, 60, n).astype(float),
            "age": gen.normal(40, 10, n),
            "person": gen.integers(0, n // 4, n),
        }
    )


def _public(release: smoothdp.TableRelease) -> dict:
    meta = release.to_dict()
    meta.pop("is_simulation")
    meta.pop("guarantee_text")
    frame = release.frame
    return {**meta, "index": list(frame.index), "columns": list(frame.columns), "dtypes": list(frame.dtypes)}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"by": "job", "keys": ["a", "b", "c", "d", "zz"]},
        {"by": None},
        {"by": "job", "keys": ["a", "b"], "privacy_unit": "person", "contributions": 3, "max_groups": 2},
    ],
    ids=["public keys", "whole frame", "bounded persons"],
)
def test_a_dask_frame_gives_the_pandas_result_of_the_in_memory_path(kwargs):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=5)
    call = {"aggs": AGGS, "bounds": BOUNDS, "epsilon": 1.0, "return_release": True, **kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        on_dask = smoothdp.aggregate(ddf, **call, rng=1)
    in_memory = smoothdp.aggregate(df, **call, rng=1)
    assert isinstance(on_dask.frame, pd.DataFrame)
    assert _public(on_dask) == _public(in_memory)


def test_values_are_right_at_a_large_epsilon():
    df = _frame(4000, seed=2)
    ddf = dd.from_pandas(df, npartitions=6)
    out = smoothdp.aggregate(ddf, "job", {"hours": ["count", "sum", "median"]}, bounds=BOUNDS, epsilon=500.0,
                             keys=["a", "b", "c"], rng=3)  # fmt: skip
    truth = df.groupby("job")["hours"].agg(["size", "sum"]).reindex(["a", "b", "c"])
    assert np.all(np.abs(out["hours", "count"].to_numpy() - truth["size"].to_numpy()) <= 1)
    assert np.allclose(out["hours", "sum"].to_numpy(), truth["sum"].to_numpy(), atol=5)
    medians = df.groupby("job")["hours"].median().reindex(["a", "b", "c"]).to_numpy()
    assert np.all(np.abs(out["hours", "median"].to_numpy() - medians) <= 1.0)


def test_the_same_seed_gives_the_same_release_whatever_the_partitioning_of_the_groups():
    df = _frame(1500, seed=4)
    call = {"by": "job", "aggs": {"age": ["median", "quantiles:0.1,0.9"]}, "bounds": BOUNDS, "epsilon": 1.0,
            "keys": ["a", "b", "c"]}  # fmt: skip
    a = smoothdp.aggregate(dd.from_pandas(df, npartitions=2), **call, rng=5)
    b = smoothdp.aggregate(dd.from_pandas(df, npartitions=7), **call, rng=5)
    pd.testing.assert_frame_equal(a, b)  # group g's draws come from stream g, wherever g lands


def test_private_keys_on_dask():
    gen = np.random.default_rng(6)
    df = pd.DataFrame({"job": np.r_[["big"] * 600, ["solo"]], "hours": gen.uniform(0, 100, 601),
                       "person": np.arange(601) // 2})  # fmt: skip
    out = smoothdp.aggregate(dd.from_pandas(df, npartitions=3), "job", {"hours": ["count", "median"]},
                             bounds=BOUNDS, epsilon=1.0, delta=1e-6, keys="private", privacy_unit="person",
                             rng=7)  # fmt: skip
    assert list(out.index) == ["big"]


def test_schema_errors_come_before_any_computation():
    ddf = dd.from_pandas(pd.DataFrame({"job": ["a"], "hours": ["x"]}), npartitions=1)
    with pytest.raises(TypeError, match="hours"):
        smoothdp.aggregate(ddf, "job", {"hours": "median"}, bounds=BOUNDS, epsilon=1.0, keys=["a"])


def test_on_a_two_worker_cluster():
    distributed = pytest.importorskip("distributed")
    df = _frame(3000, seed=8)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, memory_limit=0,
                                 dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):  # fmt: skip
        out = smoothdp.aggregate(dd.from_pandas(df, npartitions=4), "job", AGGS, bounds=BOUNDS, epsilon=1.0,
                                 keys=["a", "b", "c"], rng=9)  # fmt: skip
    assert out.shape == (3, 7) and np.isfinite(out.to_numpy(dtype=float)).all()
