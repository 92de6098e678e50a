"""Radix selection over Dask (sync, threads, a 2-worker distributed cluster): bit-equal to np.sort."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_reference import CountingBackend, blocked_data, check_window, fraction_sum, rank_range

from smoothdp.scale.selection import KeyBackend, select_window

da = pytest.importorskip("dask.array")
from smoothdp.scale.dask_backend import DaskBackend  # noqa: E402

SCHEDULERS = ["sync", "threads"]


def _dask(blocks: list[np.ndarray]) -> Any:
    x = np.concatenate(blocks) if blocks else np.empty(0)
    return da.from_array(x, chunks=(tuple(b.size for b in blocks) or (0,),))


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_select_window_equals_sorting(scheduler: str, data: st.DataObject) -> None:
    x, blocks = data.draw(blocked_data(max_size=40))
    lo, hi = data.draw(rank_range(x.size))
    cap = data.draw(st.sampled_from([0, 1, 2, 1 << 20]))
    backend = CountingBackend(DaskBackend(_dask(blocks), scheduler=scheduler))
    w = select_window(backend, lo, hi, cap=cap)
    check_window(w, x, lo, hi)
    assert w.passes == backend.passes <= 5
    assert backend.count() == x.size


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_heavy_ties_and_sums(scheduler: str) -> None:
    rng = np.random.default_rng(5)
    x = np.full(100_000, -2.5)
    x[:6] = [-0.0, 0.0, 5e-324, -np.inf, 1.7976931348623157e308, -2.5000000000000004]
    x = rng.permutation(x)
    dx = da.from_array(x, chunks=(0, 1, 30_000, 0, 69_999))
    backend = DaskBackend(dx, scheduler=scheduler)
    for lo, hi, cap in [(1, 100_000, 1), (40_000, 40_300, 2), (99_995, 100_000, 0), (1, 3, 1 << 20)]:
        counting = CountingBackend(backend)
        check_window(select_window(counting, lo, hi, cap=cap), x, lo, hi)
        assert all(c <= cap + hi - lo + 1 for c in counting.collected)
    for a, b in [(-np.inf, np.inf), (-2.5, 0.0), (-3.0, -2.5), (0.0, np.inf)]:
        assert backend.exact_sum_open(a, b) == fraction_sum(x, a, b)


def test_unknown_chunk_sizes() -> None:
    x = np.random.default_rng(6).standard_normal(5000)
    dx = da.from_array(x, chunks=700)
    filtered = dx[dx > -0.5]  # chunk sizes unknown (nan), as from a dataframe column
    backend = DaskBackend(filtered, scheduler="sync")
    kept = x[x > -0.5]
    assert backend.count() == kept.size  # one pass: the top histogram, remembered
    w = select_window(backend, 100, 300)
    check_window(w, kept, 100, 300)
    assert (w.passes, backend.passes) == (1, 2)
    assert isinstance(backend, KeyBackend)


class _PicklingBackend(DaskBackend):
    """Pickles (plain pickle, no cloudpickle) every graph it computes, as process workers would receive it."""

    def _compute(self, *collections: Any) -> tuple[Any, ...]:
        return super()._compute(*(pickle.loads(pickle.dumps(c)) for c in collections))


def test_graphs_pickle_for_process_workers() -> None:
    x = np.random.default_rng(8).standard_normal(3000)
    dx = da.from_array(x, chunks=500)
    backend = _PicklingBackend(dx[dx > -1.0], scheduler="sync")  # unknown chunks: count() computes too
    kept = x[x > -1.0]
    assert backend.count() == kept.size
    check_window(select_window(backend, 10, 20, cap=0), kept, 10, 20)
    assert backend.exact_sum_open(0.0, 1.0) == fraction_sum(kept, 0.0, 1.0)


def test_rejects_non_dask_input() -> None:
    with pytest.raises(TypeError, match="dask"):
        DaskBackend(np.ones(3))
    with pytest.raises(ValueError, match="1-D"):
        DaskBackend(da.ones((2, 2)))


def test_importing_the_backend_does_not_import_dask() -> None:
    code = "import sys, smoothdp.scale.dask_backend, smoothdp.scale.selection; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_distributed_cluster(client: Any) -> None:  # client: conftest.py
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(20_000), np.full(5000, 0.25), [-0.0, np.inf, 5e-324]])
    x = rng.permutation(x)
    dx = da.from_array(x, chunks=3000)
    backend = DaskBackend(dx, client=client)
    assert backend.count() == x.size
    for lo, hi, cap in [(12_000, 12_400, 1 << 20), (1, 30, 0), (x.size - 5, x.size, 1), (14_000, 16_000, 2)]:
        w = select_window(backend, lo, hi, cap=cap)
        check_window(w, x, lo, hi)
        assert w.passes <= 5
    assert backend.exact_sum_open(-1.0, 1.0) == fraction_sum(x, -1.0, 1.0)
    # the same computation through dask's default scheduler (the current client)
    check_window(select_window(DaskBackend(dx), 100, 200), x, 100, 200)
