"""The records just beyond a window's end runs (smoothdp.scale.beyond): in memory (a chunk-minimum scan of
the window's partition) and on Dask (in the window's collect pass), against np.sort; the Dask path with
refining selections (n above the cap) against the in-memory one, pass for pass and seed for seed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_reference import CountingBackend, blocked_data, check_window, rank_range

from smoothdp.central.quantiles import ExponentialQuantile, target_rank
from smoothdp.central.quantiles.window import sample_em_windowed, window_half_width
from smoothdp.exact import OutputGrid
from smoothdp.rng import default_rng
from smoothdp.scale.beyond import beyond_of_partition, beyond_sorted, smallest_positions
from smoothdp.scale.engine import DaskRecords, InMemoryRecords, as_records
from smoothdp.scale.selection import BlockBackend, refinements_needed, select_window_beyond

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _reference(x: np.ndarray, first: int, last: int, width: int) -> tuple[Any, Any, int, int]:
    """The width records below x_(first) and above x_(last), padded; the strict counts: from np.sort."""
    s = np.sort(x + 0.0)
    low, high = beyond_sorted(s, float(s[first - 1]), float(s[last - 1]), width)
    return low, high, int(np.count_nonzero(x < s[first - 1])), int(np.count_nonzero(x > s[last - 1]))


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        np.asarray(a, dtype=np.float64).view(np.uint64).tolist()
        == (np.asarray(b) + 0.0).view(np.uint64).tolist()
    )


def _check_partition_beyond(x: np.ndarray, first: int, last: int, width: int) -> None:
    x = x + 0.0  # records as the data policy leaves them: −0 folded
    part = np.partition(x, [first - 1, last - 1])
    want = _reference(x, first, last, width)
    for nonnegative in (False, True) if np.all(x >= 0) else (False,):
        low, high, below, above = beyond_of_partition(part, first, last, width, nonnegative=nonnegative)
        assert _same_bits(low, want[0]) and _same_bits(high, want[1]), (first, last, width, nonnegative)
        assert (below, above) == want[2:]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_beyond_of_partition_equals_sorting(data: st.DataObject) -> None:
    x, _ = data.draw(blocked_data())
    if x.size == 0:
        return
    x = x[np.isfinite(x)] if data.draw(st.booleans()) else x
    if x.size == 0:
        return
    first = data.draw(st.integers(1, x.size))
    last = data.draw(st.integers(first, x.size))
    _check_partition_beyond(x, first, last, data.draw(st.integers(0, 12)))


@pytest.mark.parametrize("kind", ["normal", "run crossing", "few values", "nonnegative ties", "subnormal"])
def test_beyond_of_partition_on_large_data_with_chunks(kind: str) -> None:
    """Sizes far above one block (2^16) and not a multiple of it, so that chunks of 64 records and the
    left-over records both take part; tie runs longer than the data below them."""
    gen = np.random.default_rng(3)
    n = 200_003
    x = {
        "normal": gen.normal(0.0, 1.0, n),
        "run crossing": np.where(gen.random(n) < 0.8, 0.25, gen.normal(0.0, 1.0, n)),
        "few values": gen.integers(-3, 4, n).astype(float),
        "nonnegative ties": np.abs(np.round(gen.normal(0.0, 3.0, n))),
        "subnormal": gen.integers(0, 40, n) * 5e-324,
    }[kind]
    for first, last, width in ((n // 2 - 70, n // 2 + 70, 70), (5, 9, 200), (n - 300, n, 33), (1, 1, 150)):
        _check_partition_beyond(x, first, last, width)


def test_candidates_are_public() -> None:
    """The number of candidate positions depends on the size and the width only."""
    sizes = set()
    for values in (np.zeros(100_000, dtype=np.int64), np.arange(100_000, dtype=np.int64)[::-1].copy()):

        def fill(lo: int, hi: int, out: np.ndarray, v: np.ndarray = values) -> None:
            out[:] = v[lo:hi]

        pos, _ = smallest_positions(values.size, 40, fill)
        assert np.min(values[pos]) == np.min(values)
        sizes.add(pos.size)
    assert len(sizes) == 1


CAPS = st.sampled_from([0, 1, 2, 5, 1 << 20])


def _check_select_beyond(backend: Any, x: np.ndarray, lo: int, hi: int, width: int, cap: int) -> None:
    counting = CountingBackend(backend)
    window, low, high = select_window_beyond(counting, lo, hi, width, cap=cap)
    check_window(window, x, lo, hi)
    if window.values.size:
        want = _reference(x, window.first, window.last, width)
        assert _same_bits(low, want[0]) and _same_bits(high, want[1])
        # the same passes whatever the data: n and the cap decide
        assert counting.passes == window.passes == 2 + refinements_needed(x.size, cap)
        assert all(c <= cap + window.values.size for c in counting.collected)  # driver memory bound
    else:
        assert np.all(low == -np.inf) and np.all(high == np.inf) and low.size == high.size == width


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_select_window_beyond_equals_sorting(data: st.DataObject) -> None:
    x, blocks = data.draw(blocked_data())
    lo, hi = data.draw(rank_range(x.size))
    _check_select_beyond(BlockBackend(blocks), x, lo, hi, data.draw(st.integers(0, 12)), data.draw(CAPS))


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_select_window_beyond_on_dask(data: st.DataObject) -> None:
    from smoothdp.scale.dask_backend import DaskBackend

    x, blocks = data.draw(blocked_data(max_size=40))
    lo, hi = data.draw(rank_range(x.size))
    dx = da.from_array(x, chunks=(tuple(b.size for b in blocks) or (0,),))
    backend = DaskBackend(dx, scheduler="sync")
    _check_select_beyond(backend, x, lo, hi, data.draw(st.integers(0, 12)), data.draw(CAPS))


# -- the windowed sampler on Dask above the cap, against the in-memory one ---------------------------------
def _kinds(n: int, gen: np.random.Generator) -> dict[str, np.ndarray]:
    run = np.where(gen.random(n) < 0.6, 50.37, gen.normal(50.0, 10.0, n))
    return {
        "normal": gen.normal(50.0, 10.0, n),
        "tie run crossing the window": run,
        "all equal": np.full(n, 50.5),
        "two clusters": np.where(np.arange(n) < n // 2 + 3, 20.25, gen.normal(80.0, 1.0, n)),
        "integers": np.round(gen.normal(50.0, 2.0, n)),
    }


def _dask_records(x: np.ndarray, cap: int, chunks: int) -> DaskRecords:
    records = as_records(da.from_array(x, chunks=chunks), 0.0, 100.0, clip=True, engine="dask")
    assert isinstance(records, DaskRecords)
    records.cap = cap
    return records


@pytest.mark.parametrize("kind", sorted(_kinds(10, np.random.default_rng(0))))
def test_dask_median_above_the_cap_equals_memory(kind: str) -> None:
    """n = 3000 > cap = 40: every selection refines its end bins (3 passes, padded where the data need
    fewer); the release makes exactly 1 + 1 + 3 + 1 passes (the first: the heavy-level selection's counts)
    and equals the in-memory one for the same seed."""
    x = _kinds(3000, np.random.default_rng(1))[kind]
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0))
    with dask.config.set(scheduler="sync"):
        for seed in (0, 1, 2):
            records = _dask_records(x, cap=40, chunks=700)
            got = mech.sample(records, default_rng(seed))
            assert records.passes == 1 + 1 + refinements_needed(3000, 40) + 1 == 6
            assert got == mech.sample(as_records(x, 0.0, 100.0, clip=True), default_rng(seed))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_dask_windowed_sampler_equals_memory(data: st.DataObject) -> None:
    """Random data (ties, runs), chunks, caps, quantiles and seeds; half width 1 or 3 on a few records so
    that the outside round (the Dask probe pass) and the whole-data draw run often."""
    n = data.draw(st.integers(1, 60))
    values = data.draw(
        st.lists(st.sampled_from([1.0, 2.0, 2.5, 7.0, 7.25, 9.0]) | st.floats(0, 10), min_size=n)
    )
    x = np.array(values[:n], dtype=np.float64)
    cap = data.draw(st.sampled_from([0, 3, 1 << 20]))
    chunks = data.draw(st.integers(1, 25))
    target = target_rank(data.draw(st.sampled_from([0.1, 0.5, 0.9])), x.size)
    half = data.draw(st.sampled_from([1, 3, None]))
    seed = data.draw(st.integers(0, 2**32))
    options = dict(
        lower=0.0, upper=10.0, target=target, coef=0.4, eta=1e-9, lattice=None,
        grid=OutputGrid.for_bounds(0.0, 10.0), numerics="float", half_width=half,
    )  # fmt: skip
    expected = sample_em_windowed(InMemoryRecords(x.copy()), **options, rng=default_rng(seed))
    records = as_records(da.from_array(x, chunks=chunks), 0.0, 10.0, clip=True, engine="dask")
    assert isinstance(records, DaskRecords)
    records.cap = cap
    with dask.config.set(scheduler="sync"):
        assert sample_em_windowed(records, **options, rng=default_rng(seed)) == expected


def test_dask_median_above_2_to_20_records() -> None:
    """n > 2^20 with the default cap: the refining selection for real, on big chunks (a few seconds)."""
    n = (1 << 20) + 4097
    gen = np.random.default_rng(7)
    x = np.where(gen.random(n) < 0.55, 42.0, gen.normal(50.0, 10.0, n))  # a tie run crossing the window
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0))
    records = as_records(da.from_array(x, chunks=1 << 19), 0.0, 100.0, clip=True, engine="dask")
    with dask.config.set(scheduler="threads"):
        got = mech.sample(records, default_rng(5))
    # above 2^20 records the default runs no heavy-level selection: histogram, refinements, collect
    assert records.passes == 1 + refinements_needed(n, 1 << 20) + 1 == 5
    assert got == mech.sample(as_records(x, 0.0, 100.0, clip=True), default_rng(5))
    assert window_half_width(n, 0.5 * mech.epsilon_used(n)) < 200


def test_a_release_never_reorders_the_callers_array() -> None:
    """The in-memory selection partitions the release's own prepared copy in place, never the input."""
    import smoothdp

    x = np.random.default_rng(2).normal(50.0, 10.0, 5000)
    before = x.copy()
    for epsilon in (1.0, 2.0):
        smoothdp.median(x, epsilon=epsilon, bounds=(0.0, 100.0), rng=0)
    smoothdp.trimmed_mean(x, 0.1, epsilon=1.0, bounds=(0.0, 100.0), rng=0)
    np.testing.assert_array_equal(x, before)
    clipped = np.clip(x, 0.0, 100.0)
    records = InMemoryRecords(clipped)  # not owned: never written
    records.window_beyond(100, 200, 10)
    np.testing.assert_array_equal(clipped, np.clip(before, 0.0, 100.0))
