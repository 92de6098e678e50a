"""Engines: where a release's records live, and how their exact order statistics are found.

A mechanism never sees the records themselves; it sees :class:`Records`: the public size ``n``, exact
order statistics in rank windows (:meth:`Records.window`) and exact sums (:meth:`Records.exact_sum_open`).
Three kinds implement it:

* :class:`SortedRecords`: a sorted in-memory array (small data, tests);
* :class:`InMemoryRecords`: an unsorted in-memory array; a window costs one O(n) selection
  (:func:`~smoothdp.scale.selection.window_in_memory`) instead of a full sort;
* :class:`DaskRecords`: a dask array (in-process threads, or a ``dask.distributed`` cluster); a window
  costs a few passes of radix-histogram selection (:func:`~smoothdp.scale.selection.select_window`).

The data policy (NaN imputed with the bounds' midpoint, then clipped into the bounds; −0 folded into +0)
is applied to every record before any of this, block by block on Dask. Windows are exact, so every
mechanism that reads its data through :class:`Records` releases the same value, for the same seed, on
every engine (docs/scale.md#one-release-every-engine).

``engine=`` of the entry points: ``None`` (in-process numpy; a dask input selects ``"dask"``),
``"numpy"``, ``"dask"`` (the current dask scheduler: a ``Client`` if one is active, else threads) or a
``dask.distributed.Client``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.scale.beyond import Probe, beyond_of_partition, beyond_sorted, probe_keys, probe_sorted
from smoothdp.scale.keys import float_keys
from smoothdp.scale.selection import (
    RankWindow,
    partition_ranks,
    partition_window,
    partition_windows,
    window_sorted,
)
from smoothdp.sums import exact_sum
from smoothdp.validation import apply_data_policy, as_float_array, prepare_records
from smoothdp.work import tally

__all__ = [
    "ENGINES",
    "DaskRecords",
    "InMemoryRecords",
    "Records",
    "SortedRecords",
    "as_records",
    "check_engine",
    "dask_compute",
    "dask_length",
    "is_dask_collection",
    "prepare_block",
    "public_size",
]

#: The engine names ``engine=`` accepts (besides a ``dask.distributed.Client``).
ENGINES = (None, "numpy", "dask")


# -- engines -----------------------------------------------------------------------------------------------
def is_dask_collection(x: Any) -> bool:
    """Whether x is a dask array, series or data frame (without importing dask)."""
    return type(x).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(x, "dask")


def _is_client(engine: Any) -> bool:
    return type(engine).__name__ == "Client" and type(engine).__module__.startswith("distributed")


def check_engine(engine: Any) -> Any:
    """``engine`` validated: None, ``"numpy"``, ``"dask"`` or a ``dask.distributed.Client``."""
    if engine is None or _is_client(engine) or (isinstance(engine, str) and engine in ENGINES):
        return engine
    raise ValueError(f"engine must be None, 'numpy', 'dask' or a dask.distributed.Client; got {engine!r}")


def dask_compute(engine: Any, *collections: Any) -> tuple[Any, ...]:
    """Compute dask collections in one go: on ``engine`` when it is a ``Client``, else on the current
    scheduler (a ``Client`` if one is active, else threads)."""
    from smoothdp.scale.dask_backend import compute_on

    return compute_on(engine if _is_client(engine) else None, *collections)


def engine_name(engine: Any, x: Any) -> str:
    """``"numpy"`` or ``"dask"``: where the records of x are processed."""
    engine = check_engine(engine)
    if engine is None:
        return "dask" if is_dask_collection(x) else "numpy"
    return "numpy" if engine == "numpy" else "dask"


# -- records -----------------------------------------------------------------------------------------------
class Records(ABC):
    """Prepared records (data policy applied): the public size n and exact order statistics.

    Windows are cached: a request inside the widest window fetched so far is answered from it.
    """

    engine: ClassVar[str] = ""

    def __init__(self, n: int) -> None:
        self.n = int(n)
        #: The public bounds whose data policy the records are under (set by :func:`as_records`).
        self.bounds: tuple[float, float] | None = None
        self._cache: list[RankWindow] = []
        self.passes = 0  # data passes spent (0 in memory)

    def window(self, lo: int, hi: int) -> RankWindow:
        """Exact order statistics x_(lo) … x_(hi) (1-based ranks, clipped into [1, n]).

        Windows are cached; a request that overlaps (or nearly touches) a cached window widens it to
        their union, so a growing search costs one fetch per growth, and two far-apart windows (the two
        ends of a trimmed mean) stay two.
        """
        lo, hi = max(int(lo), 1), min(int(hi), self.n)
        want = (lo, hi)
        for cached in self._cache:
            if cached.covers(lo, hi):
                return sub_window(cached, lo, hi)
        keep = []
        for cached in self._cache:
            reach = max(cached.values.size, hi - lo + 1, 64)
            if cached.values.size and lo <= cached.last + reach and hi >= cached.first - reach:
                lo, hi = min(lo, cached.first), max(hi, cached.last)
            else:
                keep.append(cached)
        fetched = self._fetch(lo, hi)
        self.passes += fetched.passes
        _tally_pass(self, fetched.passes if self.engine == "dask" else self._memory_passes())
        tally("window_records", fetched.values.size)
        self._cache = [fetched, *keep[:3]]
        return sub_window(fetched, *want) if want[0] <= want[1] else fetched

    def windows(self, spans: Sequence[tuple[int, int]]) -> list[RankWindow]:
        """Exact windows for several disjoint spans of ranks [lo, hi] at once (JointExp's windows,
        docs/theory/quantiles.md#jointexp-from-windows-of-ranks): in memory one partition at every end, on
        Dask the passes of one window (shared histograms, one collect pass for all). Not cached."""
        got = self._fetch_many([(int(lo), int(hi)) for lo, hi in spans])
        passes = sum(w.passes for w in got)
        self.passes += passes
        _tally_pass(self, passes if self.engine == "dask" else self._memory_passes())
        tally("window_records", sum(w.values.size for w in got))
        return got

    def _fetch_many(self, spans: list[tuple[int, int]]) -> list[RankWindow]:
        return [self._fetch(lo, hi) for lo, hi in spans]

    def count_matching(self, kernel: Callable[[NDArray[np.float64]], int]) -> int:
        """Σ kernel(block) over the records' blocks, in one pass (``kernel``: a picklable module-level
        function, or a ``functools.partial`` of one, counting in a block)."""
        _tally_pass(self, 1)
        return int(kernel(self._all_values()))

    def block_totals(self, kernel: Callable[[NDArray[np.float64]], NDArray[np.int64]]) -> NDArray[np.int64]:
        """Σ kernel(block) over the records' blocks, in one pass (``kernel``: as :meth:`count_matching`,
        returning an integer array of one public shape: several counts at once)."""
        _tally_pass(self, 1)
        return np.asarray(kernel(self._all_values()), dtype=np.int64)

    def _all_values(self) -> NDArray[np.float64]:
        return self.sorted_values()

    def value_at(self, rank: int) -> float:
        """The order statistic x_(rank), exactly."""
        return float(self.window(rank, rank).values[0])

    def _memory_passes(self) -> int:
        """Whole-data passes of one in-memory window fetch (a selection over the n records)."""
        return 1

    def window_beyond(
        self, lo: int, hi: int, width: int
    ) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
        """The window of ranks [lo, hi] and the ``width`` records just below its first value and just above
        its last (sorted, padded with −inf / +inf to ``width`` each): always fetched, with the same work
        on every data set of n records (in memory: one partition and one scan of the records outside the
        window; on Dask: the passes of one window). docs/theory/quantiles.md#sampling-from-a-window-of-ranks
        has the use of it."""
        lo, hi, width = max(int(lo), 1), min(int(hi), self.n), int(width)
        window, low, high = self._fetch_beyond(lo, hi, width)
        self.passes += window.passes
        _tally_pass(self, window.passes if self.engine == "dask" else self._memory_passes() + 1)
        tally("window_records", window.values.size + 2 * width)
        self._cache = [window, *self._cache[:3]]
        return window, low, high

    def probe(self, point: float) -> Probe:
        """The :class:`~smoothdp.scale.beyond.Probe` of ``point``: #{x < p}, #{x ≤ p}, max{x < p},
        min{x > p}, in one pass over the records (the windowed sampler's outside round only)."""
        probe, passes = self._probe(float(point))
        self.passes += passes
        _tally_pass(self, passes)
        tally("probe_points")
        return probe

    @abstractmethod
    def _fetch_beyond(
        self, lo: int, hi: int, width: int
    ) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]: ...

    @abstractmethod
    def _probe(self, point: float) -> tuple[Probe, int]:
        """The probe and the passes it cost (data passes, counted on every engine)."""

    @abstractmethod
    def _fetch(self, lo: int, hi: int) -> RankWindow: ...

    @abstractmethod
    def exact_sum_open(self, lower: float, upper: float) -> Fraction:
        """Σ x_i over the records with lower < x_i < upper, exactly."""

    def exact_sum(self) -> Fraction:
        """Σ x_i over every record, exactly (records are finite after the data policy)."""
        return self.exact_sum_open(-np.inf, np.inf)

    def sorted_values(self) -> NDArray[np.float64]:
        """Every record, sorted: the whole window (mechanisms that need all order statistics; on Dask this
        gathers the column on the driver, O(n) memory)."""
        tally("sorted_records", self.n)
        return self.window(1, self.n).values


def _tally_pass(records: Records, passes: int) -> None:
    """Count ``passes`` whole-data passes over the n records (:mod:`smoothdp.work`)."""
    tally("data_passes", passes)
    tally("records_read", passes * records.n)


def sub_window(w: RankWindow, lo: int, hi: int) -> RankWindow:
    """The part of window w with ranks [lo, hi] ⊆ [w.first, w.last], with its exact n_below / n_above."""
    if hi < lo:
        return RankWindow(n=w.n, first=lo, values=w.values[:0], n_below=0, n_above=0)
    a, b = lo - w.first, hi - w.first + 1
    vals = w.values[a:b]
    v0, v1 = vals[0], vals[-1]
    below = w.n_below if v0 == w.values[0] else w.first - 1 + int(np.searchsorted(w.values, v0, "left"))
    if v1 == w.values[-1]:
        above = w.n_above
    else:
        above = w.n - (w.first - 1 + int(np.searchsorted(w.values, v1, "right")))
    return RankWindow(n=w.n, first=lo, values=vals, n_below=below, n_above=above)


def _sorted_window_beyond(
    sorted_x: NDArray[np.float64], lo: int, hi: int, width: int
) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
    window = window_sorted(sorted_x, lo, hi)
    if window.values.size == 0:
        return window, np.full(width, -np.inf), np.full(width, np.inf)
    low, high = beyond_sorted(sorted_x, float(window.values[0]), float(window.values[-1]), width)
    return window, low, high


class SortedRecords(Records):
    """Records held sorted in memory."""

    engine: ClassVar[str] = "numpy"

    def __init__(self, sorted_values: NDArray[np.float64]) -> None:
        super().__init__(sorted_values.size)
        self.values = sorted_values

    def _fetch(self, lo: int, hi: int) -> RankWindow:
        return window_sorted(self.values, lo, hi)

    def _fetch_beyond(
        self, lo: int, hi: int, width: int
    ) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
        return _sorted_window_beyond(self.values, lo, hi, width)

    def _probe(self, point: float) -> tuple[Probe, int]:
        return probe_sorted(self.values, point), 1

    def exact_sum_open(self, lower: float, upper: float) -> Fraction:

        _tally_pass(self, 1)
        x = self.values
        return exact_sum(np.where((x > lower) & (x < upper), x, 0.0))

    def sorted_values(self) -> NDArray[np.float64]:
        return self.values

    def _all_values(self) -> NDArray[np.float64]:
        return self.values


class InMemoryRecords(Records):
    """Records held unsorted in memory: each window is one O(n) selection, never a full sort.

    ``owned=True``: ``values`` is an array of this object alone (the prepared copy made by
    :func:`as_records`), which selections may reorder in place (no copy of the n records per window; the
    records' order carries nothing here). Otherwise it is never written.
    """

    engine: ClassVar[str] = "numpy"

    def __init__(self, values: NDArray[np.float64], *, owned: bool = False) -> None:
        super().__init__(values.size)
        self.values = values
        self.owned = bool(owned) and values.dtype == np.float64 and values.ndim == 1
        self._sorted: NDArray[np.float64] | None = None

    def _memory_passes(self) -> int:
        return 0 if self._sorted is not None else 1

    def _fetch(self, lo: int, hi: int) -> RankWindow:
        if self._sorted is not None:
            return window_sorted(self._sorted, lo, hi)
        return partition_window(self.values, lo, hi, overwrite=self.owned)[0]

    def _fetch_beyond(
        self, lo: int, hi: int, width: int
    ) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
        if self._sorted is not None:
            return _sorted_window_beyond(self._sorted, lo, hi, width)
        first, last, part = partition_ranks(self.values, lo, hi, overwrite=self.owned)
        if part is None:
            return partition_window(self.values, lo, hi)[0], np.full(width, -np.inf), np.full(width, np.inf)
        nonnegative = self.bounds is not None and self.bounds[0] >= 0.0  # public: then every record ≥ +0
        low, high, below, above = beyond_of_partition(part, first, last, width, nonnegative=nonnegative)
        values = np.sort(part[first - 1 : last]) + 0.0  # −0 and +0 compare equal: fold after sorting
        return RankWindow(self.n, first, values, below, above), low, high

    def _fetch_many(self, spans: list[tuple[int, int]]) -> list[RankWindow]:
        if self._sorted is not None:
            return [window_sorted(self._sorted, lo, hi) for lo, hi in spans]
        return partition_windows(self.values, spans, overwrite=self.owned)

    def _all_values(self) -> NDArray[np.float64]:
        return self.values

    def _probe(self, point: float) -> tuple[Probe, int]:
        if self._sorted is not None:
            return probe_sorted(self._sorted, point), 1
        return probe_keys(float_keys(self.values), point), 1

    def exact_sum_open(self, lower: float, upper: float) -> Fraction:

        _tally_pass(self, 1)
        x = self.values  # every record, the others as 0.0: the same work whatever the data
        return exact_sum(np.where((x > lower) & (x < upper), x, 0.0))

    def sorted_values(self) -> NDArray[np.float64]:
        if self._sorted is None:
            _tally_pass(self, 1)
            tally("sorted_records", self.n)
            self._sorted = np.sort(self.values)
        return self._sorted


class DaskRecords(Records):
    """Records in a 1-D dask array, prepared block by block; windows by radix-histogram selection.

    ``cap``: the most keys a selection's collect pass may bring to the driver besides the window
    (:func:`~smoothdp.scale.selection.select_window`); n above it makes every selection refine its end bins
    in :func:`~smoothdp.scale.selection.refinements_needed` (n, cap) extra passes. Public; lower it to
    bound driver memory (or, in tests, to reach the refining selections with small data).
    """

    engine: ClassVar[str] = "dask"

    def __init__(self, values: Any, *, client: Any = None, n: int | None = None, cap: int = 1 << 20) -> None:
        from smoothdp.scale.dask_backend import DaskBackend

        self.dask_values = values
        self.client = client
        self.backend = DaskBackend(values, client=client)
        self.cap = cap
        super().__init__(self.backend.count() if n is None else n)

    def _fetch(self, lo: int, hi: int) -> RankWindow:
        from smoothdp.scale.selection import select_window

        return select_window(self.backend, lo, hi, cap=self.cap)

    def _fetch_beyond(
        self, lo: int, hi: int, width: int
    ) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
        from smoothdp.scale.selection import select_window_beyond

        return select_window_beyond(self.backend, lo, hi, width, cap=self.cap)

    def _probe(self, point: float) -> tuple[Probe, int]:
        return self.backend.probe(point), 1

    def _fetch_many(self, spans: list[tuple[int, int]]) -> list[RankWindow]:
        from smoothdp.scale.selection import select_windows

        return select_windows(self.backend, spans, cap=self.cap)

    def count_matching(self, kernel: Callable[[NDArray[np.float64]], int]) -> int:
        passes = self.backend.passes
        total = sum(int(k) for k in self.backend.per_block(kernel))
        self.passes += self.backend.passes - passes
        _tally_pass(self, 1)
        return total

    def block_totals(self, kernel: Callable[[NDArray[np.float64]], NDArray[np.int64]]) -> NDArray[np.int64]:
        passes = self.backend.passes
        parts = [np.asarray(k, dtype=np.int64) for k in self.backend.per_block(kernel)]
        self.passes += self.backend.passes - passes
        _tally_pass(self, 1)
        return np.sum(parts, axis=0, dtype=np.int64)

    def exact_sum_open(self, lower: float, upper: float) -> Fraction:
        _tally_pass(self, 1)
        return self.backend.exact_sum_open(lower, upper)


# -- the data policy, in memory or block by block ------------------------------------------------------------
def prepare_block(block: NDArray[Any], lower: float, upper: float, clip: bool) -> NDArray[np.float64]:
    """The data policy on one block: NaN (and a masked entry) → (lower + upper)/2, clip into the bounds (or
    check), −0 → +0."""
    return apply_data_policy(as_float_array(block, "x").ravel(), lower, upper, clip=clip)


def _dask_column(x: Any, name: str) -> Any:
    """A 1-D dask array from a dask array, series or one-column data frame (kind and shape only)."""
    import dask.array as da

    if type(x).__name__ == "DataFrame":  # a data frame: one column only
        if len(x.columns) != 1:
            raise ValueError(f"{name} must be one column; got a data frame with columns {list(x.columns)}")
        x = x[x.columns[0]]
    if hasattr(x, "to_dask_array"):
        x = x.to_dask_array(lengths=True)
    if not isinstance(x, da.Array):
        raise TypeError(f"{name} must be a dask array or series; got {type(x).__name__}")
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {x.shape}")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers; got dtype {x.dtype}")
    return x


def dask_length(x: Any, name: str = "x") -> int:
    """The number of records of a dask column (public under substitution; one pass if unknown)."""
    column = _dask_column(x, name)
    if np.isnan(column.shape[0]):
        column = column.compute_chunk_sizes()
    return int(column.shape[0])


def public_size(x: Any) -> int:
    """n = len(x), public under substitution (the shape, not the values; a dask column of unknown length
    is counted, one pass). Under add/remove n is private: callers must not read it there."""
    if isinstance(x, Records):
        return x.n
    if is_dask_collection(x):
        return dask_length(x)
    return int(np.size(x))


def as_records(
    x: Any,
    lower: float,
    upper: float,
    *,
    clip: bool,
    engine: Any = None,
    name: str = "x",
    min_size: int = 0,
) -> Records:
    """x with the data policy applied, as :class:`Records` on the engine asked for.

    In process, the records are prepared at once (:func:`smoothdp.validation.prepare_records`); on Dask,
    lazily block by block (:func:`prepare_block`), and n is the array's length (public under substitution;
    one counting pass if the chunk sizes are unknown).
    """
    if isinstance(x, Records):
        if x.bounds is not None and x.bounds != (lower, upper):
            raise ValueError(
                f"{name} was prepared for bounds {x.bounds}, not ({lower!r}, {upper!r}); prepare it again"
            )
        records = x
    else:
        records = _new_records(x, lower, upper, clip=clip, engine=engine, name=name, min_size=min_size)
        records.bounds = (lower, upper)
    if records.n < min_size:  # n is public: records prepared elsewhere, or a Dask column
        raise ValueError(f"{name} must hold at least {min_size} value(s); got {records.n}")
    return records


def _new_records(
    x: Any, lower: float, upper: float, *, clip: bool, engine: Any, name: str, min_size: int
) -> Records:
    where = engine_name(engine, x)
    if where == "numpy":
        if is_dask_collection(x):
            x = _dask_column(x, name).compute()
        arr = prepare_records(x, lower, upper, clip=clip, name=name, min_size=min_size)
        if arr.size <= 1:
            return SortedRecords(arr)
        return InMemoryRecords(arr, owned=True)  # the prepared array is a fresh copy
    import dask.array as da

    if is_dask_collection(x):
        column = _dask_column(x, name)
    else:
        arr = np.asarray(prepare_records(x, lower, upper, clip=clip, name=name, min_size=min_size))
        column = da.from_array(arr, chunks=max(1, -(-arr.size // 8)))
    prepared = column.map_blocks(prepare_block, lower, upper, clip, dtype=np.float64)
    n = None if np.isnan(prepared.shape[0]) else int(prepared.shape[0])
    client = engine if _is_client(engine) else None
    return DaskRecords(prepared, client=client, n=n)
