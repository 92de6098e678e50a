"""Work counters: a deterministic measure of the work a release does (docs/theory/floating-point.md#timing).

The default release paths promise *the same work on neighbouring data*: the number of data passes,
records read, order statistics materialised, rejection rounds and sampler steps depends on public
parameters only (n, ε, the bounds, q). Wall-clock time cannot be asserted in a test; these counts can.

Usage (tests, benchmarks, a data holder who wants to check a release)::

    from smoothdp.work import count_work

    with count_work() as work:
        smoothdp.median(x, epsilon=1.0, bounds=(0, 100))
    work.counts   # {"data_passes": 2, "records_read": 2_000_000, ...}

The hot paths call :func:`tally` a handful of times per release (never per record): one
``ContextVar.get`` when no counter is active. Counts are kept on the driver (the Dask tasks themselves are
not instrumented: a pass is counted once, with the n records it reads).

Counter names (see docs/theory/floating-point.md#timing for the full list):

``data_passes``        whole-data passes: a selection, a probe, an exact sum, a sort;
``records_read``       records those passes read (n per pass);
``window_records``     order statistics materialised in rank windows;
``sorted_records``     records sorted as a whole (the exact-law fallback only);
``probe_points``       points whose counts a probe pass finds (the windowed sampler's outside round);
``region_rounds``      outside rounds of the windowed sampler (probability Û/Z: see the docs);
``whole_data_draws``   draws of the whole-data fallback sampler (random: see the docs);
``pair_cells``         cells of the smooth-sensitivity search, padded per level of its divide and conquer to a
                       public number (more only where near-ties widen a split: counted as made).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["WorkCounts", "count_work", "tally"]


@dataclass
class WorkCounts:
    """The counts of one :func:`count_work` block (``counts`` maps a counter name to its total)."""

    counts: Counter[str] = field(default_factory=Counter)

    def __getitem__(self, name: str) -> int:
        return int(self.counts[name])

    def as_dict(self) -> dict[str, int]:
        """The non-zero counts, as a plain dict sorted by name."""
        return {k: int(v) for k, v in sorted(self.counts.items()) if v}


_ACTIVE: ContextVar[tuple[WorkCounts, ...]] = ContextVar("smoothdp_work_counts", default=())


def tally(name: str, amount: int = 1) -> None:
    """Add ``amount`` to counter ``name`` of every active :func:`count_work` block (nothing if none)."""
    active = _ACTIVE.get()
    for counts in active:
        counts.counts[name] += int(amount)


@contextmanager
def count_work() -> Iterator[WorkCounts]:
    """Count the work done inside the block (nested blocks each see their own and their children's)."""
    counts = WorkCounts()
    token = _ACTIVE.set((*_ACTIVE.get(), counts))
    try:
        yield counts
    finally:
        _ACTIVE.reset(token)
