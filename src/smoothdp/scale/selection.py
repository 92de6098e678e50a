"""Exact order statistics in a window of ranks, without a full sort (docs/scale.md).

Smooth sensitivity of an order statistic needs the exact values x_(lo) … x_(hi) of a window of ranks around
the target rank (and the counts outside it), never the whole sorted array. This module computes such a
:class:`RankWindow` three ways, all bit-equal to slicing ``np.sort(x + 0.0)``:

* :func:`window_sorted`: a slice of data already sorted;
* :func:`window_in_memory`: O(n) selection (``np.partition``) of an unsorted in-memory array;
* :func:`select_window`: radix-histogram selection over a :class:`KeyBackend`
  (:mod:`smoothdp.scale.backends`), a data source that answers a few whole-data passes (histograms of
  16-bit digits of order-preserving keys, collection of the keys in a range). :class:`BlockBackend` is one
  over in-process numpy blocks; ``smoothdp.scale.dask_backend.DaskBackend`` one over a Dask array.
  :func:`select_window_beyond` also returns, from the same passes, the records just beyond the window's
  end runs (:mod:`smoothdp.scale.beyond`).

Radix selection (:func:`select_window`). Keys are :func:`~smoothdp.scale.keys.float_keys` (order-preserving,
−0 folded into +0). A *bin at shift s* is the set of keys sharing their top 64 − s bits: the key range
[p·2^s, (p + 1)·2^s − 1]. Pass 1 histograms all keys by their top 16 bits (bins at shift 48); its total is n.
The bins containing ranks lo and hi are found from the cumulative counts. While the keys of the range from the
lo-bin to the hi-bin (excluding an end bin that is a single key) number more than ``cap + (hi − lo + 1)``, one
pass histograms both end bins (one if they coincide) on their next 16 bits, and the end bins shrink to the
sub-bins holding ranks lo and hi. A final pass collects the keys of the range, which the driver sorts.

* Exactness. Every count is an exact integer count of keys, so the number of keys below each bin is exact and
  the rank of every collected key is known: the collected keys are all the keys of a key range whose lower
  end is the lower end of the lo-bin, so after sorting them the k-th one has rank (#keys below the range) + k.
  Keys are order-preserving and injective on doubles up to ±0, so sorting keys sorts the values;
  ``keys_to_float`` returns the exact doubles (−0 as +0). A bin at shift 0 is a single key: its value and its
  count are known, so it is never collected, whatever its count (10^8 ties cost nothing).
* Pass bound. Bins start at shift 48 and each refinement lowers the end bins by 16 bits, so after at most
  three refinements both end bins are single keys; then the collected range is the keys strictly between
  them, all of rank in (lo, hi): fewer than hi − lo + 1 keys, so the loop has stopped. Hence at most
  1 + 3 + 1 = 5 passes; typically 2 (continuous data: the end bins at shift 48 hold ~n/2^16 keys each,
  fewer than the cap). With ``fixed=True`` (the release paths) the count is public: 2 for n ≤ cap, 5
  above, padded with passes that read every record and count or collect nothing
  (docs/theory/floating-point.md#timing).
* Driver memory. One 2^16-bin histogram per end (≤ 2 × 512 KiB), and the collected keys: at most
  ``cap + (hi − lo + 1)`` of them (the loop condition), plus the window itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.scale.backends import (
    DIGIT_BITS,
    NBINS,
    TOP_SHIFT,
    BlockBackend,
    CachingBackend,
    HistogramRequest,
    KeyBackend,
    block_histograms,
    collect_block,
    exact_sum_between,
)
from smoothdp.scale.keys import KEY_MAX, float_keys, keys_to_float

__all__ = [
    "DIGIT_BITS",
    "NBINS",
    "BlockBackend",
    "CachingBackend",
    "HistogramRequest",
    "KeyBackend",
    "RankWindow",
    "block_histograms",
    "collect_block",
    "count_beyond",
    "exact_sum_between",
    "partition_ranks",
    "partition_window",
    "partition_windows",
    "plan_windows",
    "refinements_needed",
    "select_window",
    "select_window_beyond",
    "select_windows",
    "window_in_memory",
    "window_sorted",
]


@dataclass(frozen=True, eq=False)  # eq=False: no elementwise array comparison in ==; identity semantics
class RankWindow:
    """The exact values of the ranks ``first`` … ``last`` of n records, and the counts on either side.

    ``values`` are x_(first) … x_(last), sorted ascending, the exact data values with −0.0 folded into +0.0.
    ``n_below`` = #{i : x_i < values[0]} and ``n_above`` = #{i : x_i > values[-1]} (strict; they differ from
    ``first − 1`` and ``n − last`` under ties across the window's ends). An empty window has
    ``first = last + 1`` and ``n_below = n_above = 0``. ``passes`` is the number of whole-data passes it
    cost (0 in memory).
    """

    n: int
    first: int
    values: NDArray[np.float64] = field(repr=False)
    n_below: int
    n_above: int
    passes: int = 0

    @property
    def last(self) -> int:
        """The rank of the last value (``first − 1`` for an empty window)."""
        return self.first + int(self.values.size) - 1

    def covers(self, lo: int, hi: int) -> bool:
        """Whether every rank of [lo, hi] ∩ [1, n] is in the window."""
        a, b = max(int(lo), 1), min(int(hi), self.n)
        return a > b or (self.first <= a and b <= self.last)

    def at(self, ranks: ArrayLike) -> NDArray[np.float64]:
        """The values of the 1-based ``ranks`` (IndexError if one is outside [first, last])."""
        r = np.asarray(ranks, dtype=np.int64)
        idx = r - self.first
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= self.values.size):
            raise IndexError(f"ranks must lie in the window [{self.first}, {self.last}]")
        out: NDArray[np.float64] = self.values[idx]
        return out


def _clip(n: int, lo: int, hi: int) -> tuple[int, int]:
    """[lo, hi] ∩ [1, n] as (first, last); empty as (first, first − 1) with first in [1, n + 1]."""
    first = min(max(int(lo), 1), n + 1)
    last = max(min(int(hi), n), first - 1)
    return first, last


def _empty(n: int, first: int, passes: int) -> RankWindow:
    return RankWindow(
        n=n, first=first, values=np.empty(0, dtype=np.float64), n_below=0, n_above=0, passes=passes
    )


def window_sorted(sorted_x: ArrayLike, lo: int, hi: int) -> RankWindow:
    """The window of ranks [lo, hi] ∩ [1, n] of an array already sorted ascending (a slice, no copy of x)."""
    x = np.asarray(sorted_x, dtype=np.float64).ravel()
    n = int(x.size)
    first, last = _clip(n, lo, hi)
    if last < first:
        return _empty(n, first, 0)
    values = x[first - 1 : last] + 0.0  # a copy, −0 folded into +0
    n_below = int(np.searchsorted(x, values[0], side="left"))
    n_above = n - int(np.searchsorted(x, values[-1], side="right"))
    return RankWindow(n=n, first=first, values=values, n_below=n_below, n_above=n_above)


def window_in_memory(x: ArrayLike, lo: int, hi: int) -> RankWindow:
    """:func:`partition_window` without the partition."""
    return partition_window(x, lo, hi)[0]


def partition_ranks(
    x: ArrayLike, lo: int, hi: int, *, overwrite: bool = False
) -> tuple[int, int, NDArray[np.float64] | None]:
    """(first, last, part): [lo, hi] ∩ [1, n] and x partitioned by ``np.partition`` at kth = (first − 1,
    last − 1), which puts x_(first) and x_(last) at their sorted places with every value between them in
    between (part None for an empty window). ``part`` is a copy of x, or x itself reordered when
    ``overwrite`` (x a float64 array the caller owns; no copy, no new memory). Always two kth (equal ones
    for one rank): numpy's kernel for a single kth is many times slower on some arrays of tied values.
    """
    a = np.asarray(x, dtype=np.float64)
    in_place = overwrite and a is x and a.ndim == 1 and a.flags.c_contiguous and a.flags.writeable
    a = a.ravel()
    first, last = _clip(int(a.size), lo, hi)
    if last < first:
        return first, last, None
    if in_place:
        a.partition([first - 1, last - 1])
        return first, last, a
    return first, last, np.partition(a, [first - 1, last - 1])


def count_beyond(values: NDArray[np.float64], threshold: float, *, below: bool) -> int:
    """#{x < threshold} (``below``) or #{x > threshold}, block by block (no array of n flags)."""
    flags = np.empty(min(values.size, _COUNT_BLOCK), dtype=bool)
    compare = np.less if below else np.greater
    total = 0
    for start in range(0, values.size, _COUNT_BLOCK):
        part = values[start : start + _COUNT_BLOCK]
        total += int(np.count_nonzero(compare(part, threshold, out=flags[: part.size])))
    return total


#: Records per block of :func:`count_beyond`.
_COUNT_BLOCK = 1 << 16


def partition_window(
    x: ArrayLike, lo: int, hi: int, *, overwrite: bool = False
) -> tuple[RankWindow, NDArray[np.float64] | None]:
    """The window of ranks [lo, hi] ∩ [1, n] of an unsorted array (no NaN), in O(n) without a full sort.

    :func:`partition_ranks`, then only the middle slice is sorted; ``n_below`` / ``n_above`` count the
    values of the two outer parts strictly beyond the window's ends (the other parts cannot be). Equal, bit
    for bit, to ``window_sorted(np.sort(x + 0.0), lo, hi)``. Also returns the partitioned array.
    """
    first, last, part = partition_ranks(x, lo, hi, overwrite=overwrite)
    if part is None:
        return _empty(int(np.size(x)), first, 0), None
    values = np.sort(part[first - 1 : last]) + 0.0  # −0 and +0 compare equal: fold after sorting
    n_below = count_beyond(part[: first - 1], float(values[0]), below=True)
    n_above = count_beyond(part[last:], float(values[-1]), below=False)
    return RankWindow(n=part.size, first=first, values=values, n_below=n_below, n_above=n_above), part


def _count_side(part: NDArray[np.float64], kth: list[int], pos: int, value: float, *, below: bool) -> int:
    """#{x < value} (``below``) or #{x > value} in ``part``, partitioned at the sorted positions ``kth``
    with part[pos] = value, pos in kth: the elements between pos and the nearest kth position whose value
    is strictly beyond ``value`` are scanned; everything past that position is beyond ``value``."""
    n = part.size
    if below:
        stop = pos
        for k in reversed([k for k in kth if k < pos]):
            if part[k] < value:
                return k + 1 + count_beyond(part[k + 1 : stop], value, below=True)
        return count_beyond(part[:stop], value, below=True)
    for k in [k for k in kth if k > pos]:
        if part[k] > value:
            return (n - k) + count_beyond(part[pos + 1 : k], value, below=False)
    return count_beyond(part[pos + 1 :], value, below=False)


def partition_windows(
    x: ArrayLike, spans: Sequence[tuple[int, int]], *, overwrite: bool = False
) -> list[RankWindow]:
    """The windows of ranks [lo, hi] ∩ [1, n] of an unsorted array for several disjoint spans, in one
    ``np.partition`` at every window end, each window's slice sorted, its n_below / n_above counted in
    the stretch between its end and the next end beyond it (the whole array past the last end if every
    end ties with it). Equal, bit for bit, to :func:`window_sorted` of ``np.sort(x + 0.0)`` per span;
    ``overwrite`` as :func:`partition_ranks`."""
    a = np.asarray(x, dtype=np.float64)
    in_place = overwrite and a is x and a.ndim == 1 and a.flags.c_contiguous and a.flags.writeable
    a = a.ravel()
    n = int(a.size)
    clipped = [_clip(n, lo, hi) for lo, hi in spans]
    kth = sorted({k for first, last in clipped if first <= last for k in (first - 1, last - 1)})
    if not kth:
        return [_empty(n, first, 0) for first, _ in clipped]
    part = a if in_place else a.copy()
    part.partition(kth)
    out = []
    for first, last in clipped:
        if last < first:
            out.append(_empty(n, first, 0))
            continue
        values = np.sort(part[first - 1 : last]) + 0.0  # −0 and +0 compare equal: fold after sorting
        below = _count_side(part, kth, first - 1, float(values[0]), below=True)
        above = _count_side(part, kth, last - 1, float(values[-1]), below=False)
        out.append(RankWindow(n=n, first=first, values=values, n_below=below, n_above=above))
    return out


@dataclass(frozen=True)
class _End:
    """The bin of an end rank: keys [start, start + 2^shift − 1]; ``below`` keys under it, ``count`` in it."""

    start: int
    shift: int
    below: int
    count: int

    @property
    def stop(self) -> int:
        return self.start + (1 << self.shift) - 1

    @property
    def single(self) -> bool:
        return self.shift == 0


def _locate(hist: NDArray[np.int64], base_key: int, shift: int, below: int, rank: int) -> _End:
    """The bin of ``hist`` (bins of width 2^shift from ``base_key``) holding ``rank`` (1-based, overall)."""
    cum = np.cumsum(hist)
    b = int(np.searchsorted(cum, rank - below, side="left"))
    count = int(hist[b])
    return _End(start=base_key + (b << shift), shift=shift, below=below + int(cum[b]) - count, count=count)


def _request(end: _End) -> HistogramRequest:
    """The histogram of a (non-single) end bin on its next 16 bits."""
    return HistogramRequest(end.start, end.stop, end.shift - DIGIT_BITS)


def _refine(end: _End, hist: NDArray[np.int64], rank: int) -> _End:
    return _locate(hist, end.start, end.shift - DIGIT_BITS, end.below, rank)


def _made(backend: KeyBackend, before: int | None, calls: int) -> int:
    """The passes a selection made: the backend's own count if it keeps one, else the number of calls."""
    after = getattr(backend, "passes", None)
    return int(after) - int(before) if isinstance(before, int) and isinstance(after, int) else calls


#: A key that no record has (keys above that of +inf are NaNs, which the data policy removes): the range
#: [_ABSENT_KEY, _ABSENT_KEY] makes a padding pass that reads every record and collects nothing.
_ABSENT_KEY = KEY_MAX
#: Refinement passes of a selection whose range could exceed the cap (shift 48 → 32 → 16 → 0).
_MAX_REFINEMENTS = 3


def refinements_needed(n: int, cap: int) -> int:
    """The refinement passes a fixed-pass selection among n records makes: 0 when n ≤ cap (the range to
    collect can never exceed the cap), else 3 (public: n and the cap)."""
    return 0 if n <= cap else _MAX_REFINEMENTS


def _pad_histogram_pass(backend: KeyBackend, shift: int) -> None:
    """One histogram pass that reads every record and counts nothing (a range no record has)."""
    pad = getattr(backend, "uncached_histograms", None)
    if pad is not None:
        pad([HistogramRequest(_ABSENT_KEY, _ABSENT_KEY, shift)])


def _check_cap(cap: int) -> None:
    if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 0:
        raise ValueError(f"cap must be an integer >= 0, got {cap!r}")


def _pending(lo_end: _End, hi_end: _End) -> int:
    """The number of keys the collect pass would return."""
    if lo_end.start == hi_end.start and lo_end.shift == hi_end.shift:
        return 0 if lo_end.single else lo_end.count
    return hi_end.below + hi_end.count * (not hi_end.single) - lo_end.below - lo_end.count * lo_end.single


def _refine_ends(
    backend: KeyBackend, ends: list[tuple[_End, _End, int, int]], cap: int, fixed: bool, n: int
) -> list[tuple[_End, _End]]:
    """Refine the end bins of several windows ((lo_end, hi_end, first, last) each), one histogram pass per
    round for all of them, while a window's range to collect holds more than cap + its width keys.

    ``fixed``: exactly :func:`refinements_needed` rounds (the widest window's), padded with passes that
    count nothing where the data needed fewer (a round answered from the histogram cache is padded too).
    """
    state = [(lo, hi) for lo, hi, _, _ in ends]
    widths = [last - first + 1 for *_, first, last in ends]
    rounds = refinements_needed(n, cap) if fixed else _MAX_REFINEMENTS
    for round_no in range(rounds):
        todo = [i for i, (lo, hi) in enumerate(state) if _pending(lo, hi) > cap + widths[i]]
        requests: list[HistogramRequest] = []
        for i in todo:
            lo, hi = state[i]
            if lo.start == hi.start and lo.shift == hi.shift:
                requests.append(_request(lo))
            else:
                requests.extend(_request(e) for e in (lo, hi) if not e.single)
        before = getattr(backend, "passes", None)
        hists = backend.histograms(requests) if requests else []
        made = _made(backend, before, 1 if requests else 0)
        if fixed and made == 0:
            _pad_histogram_pass(backend, DIGIT_BITS * (2 - round_no))
        if not todo and not fixed:
            break
        k = 0
        for i in todo:
            lo, hi = state[i]
            first, last = ends[i][2], ends[i][3]
            if lo.start == hi.start and lo.shift == hi.shift:
                h = hists[k]
                k += 1
                state[i] = (_refine(lo, h, first), _refine(lo, h, last))
                continue
            if not lo.single:
                lo = _refine(lo, hists[k], first)
                k += 1
            if not hi.single:
                hi = _refine(hi, hists[k], last)
                k += 1
            state[i] = (lo, hi)
    return state


def _collect_range(lo_end: _End, hi_end: _End) -> tuple[int, int, int]:
    """(key_lo, key_hi, keys below key_lo) of the range to collect: from the lo-bin to the hi-bin, leaving
    out an end bin that is a single key (key_lo > key_hi: nothing to collect)."""
    if lo_end.start == hi_end.start and lo_end.shift == hi_end.shift and lo_end.single:
        return lo_end.start + 1, lo_end.start, lo_end.below + lo_end.count
    key_lo = lo_end.start + 1 if lo_end.single else lo_end.start
    key_hi = hi_end.stop - 1 if hi_end.single else hi_end.stop
    below = lo_end.below + (lo_end.count if lo_end.single else 0)  # keys under key_lo
    return key_lo, key_hi, below


def _assemble(n: int, first: int, last: int, lo_end: _End, hi_end: _End, got: NDArray[np.uint64],
              passes: int) -> RankWindow:  # fmt: skip
    """The window of ranks first … last from its end bins and the sorted collected keys ``got``."""
    width = last - first + 1
    if lo_end.start == hi_end.start and lo_end.shift == hi_end.shift and lo_end.single:
        # every rank of the window holds the one key
        values = keys_to_float(np.full(width, lo_end.start, dtype=np.uint64))
        return RankWindow(n, first, values, lo_end.below, n - lo_end.below - lo_end.count, passes)
    below = _collect_range(lo_end, hi_end)[2]
    # The sorted keys of the ranks lo_end.below + 1 … hi_end.below + hi_end.count:
    # [lo key × its count if single] + got + [hi key × its count if single]; keep the ranks first … last.
    parts = []
    if lo_end.single:
        parts.append(np.full(min(last, below) - first + 1, lo_end.start, dtype=np.uint64))
    start = max(first - below - 1, 0)  # index in got of rank max(first, below + 1)
    stop = max(min(last - below, got.size), start)
    parts.append(got[start:stop])
    if hi_end.single:
        tail = last - max(first, hi_end.below + 1) + 1
        parts.append(np.full(max(tail, 0), hi_end.start, dtype=np.uint64))
    keys = np.concatenate(parts)
    if keys.size != width:  # a backend whose passes disagree (counts vs collected keys)
        raise RuntimeError("inconsistent backend: the collected keys do not match the histogram counts")
    if lo_end.single:
        n_below = lo_end.below
    else:
        n_below = below + int(np.searchsorted(got, keys[0], side="left"))
    if hi_end.single:
        n_above = n - hi_end.below - hi_end.count
    else:
        n_above = n - below - int(np.searchsorted(got, keys[-1], side="right"))
    return RankWindow(n, first, keys_to_float(keys), n_below, n_above, passes)


def plan_windows(
    backend: KeyBackend, windows: Sequence[tuple[int, int]], *, cap: int = 1 << 20, fixed: bool = True
) -> tuple[int, list[tuple[int, int, _End, _End]]]:
    """n and, per window [lo, hi], (first, last, lo_end, hi_end): the top histogram (remembered by a
    caching backend) and the refinement rounds of :func:`select_window`, done for all windows at once."""
    _check_cap(cap)
    top = backend.histograms([HistogramRequest(0, KEY_MAX, TOP_SHIFT)])[0]
    n = int(top.sum())
    spans = [_clip(n, lo, hi) for lo, hi in windows]
    live = [(first, last) for first, last in spans if first <= last]
    ends = [
        (_locate(top, 0, TOP_SHIFT, 0, f), _locate(top, 0, TOP_SHIFT, 0, last), f, last) for f, last in live
    ]
    refined = iter(_refine_ends(backend, ends, cap, fixed, n) if ends else [])
    out = []
    for first, last in spans:
        if first <= last:
            lo_end, hi_end = next(refined)
        else:
            lo_end = hi_end = _End(start=0, shift=0, below=0, count=0)
        out.append((first, last, lo_end, hi_end))
    return n, out


def select_window(
    backend: KeyBackend, lo: int, hi: int, *, cap: int = 1 << 20, fixed: bool = True
) -> RankWindow:
    """The exact window of ranks [lo, hi] ∩ [1, n] of the backend's data, by radix-histogram selection.

    Bit-equal to ``window_sorted(np.sort(x + 0.0), lo, hi)``. Passes: 1 histogram pass (which also gives n;
    remembered by a caching backend), then refinement passes while the range to collect holds more than
    ``cap + (hi − lo + 1)`` keys, and one collect pass. ``fixed=True`` (default, the release paths): the
    number of passes depends on n, the width and the cap only (:func:`refinements_needed` refinement passes,
    always one collect pass), padded with passes that read every record and keep nothing where the data
    needed fewer; ``fixed=False``: as few as the data need (at most 5, typically 2; none to collect when
    the window is one tied value). Driver memory O(2^16 + cap + (hi − lo + 1)), whatever the ties.
    See the module docstring for the algorithm and the proof of exactness.
    """
    made_before = getattr(backend, "passes", None)
    n, ((first, last, lo_end, hi_end),) = plan_windows(backend, [(lo, hi)], cap=cap, fixed=fixed)
    calls = 1 + (refinements_needed(n, cap) if fixed and first <= last else 0)
    if last < first:
        if fixed and n > 0:
            backend.collect(_ABSENT_KEY, _ABSENT_KEY)
            calls += 1
        return _empty(n, first, _made(backend, made_before, calls))
    key_lo, key_hi, _ = _collect_range(lo_end, hi_end)
    if key_lo <= key_hi:
        got = np.sort(backend.collect(key_lo, key_hi))
        calls += 1
    else:
        got = np.empty(0, dtype=np.uint64)
        if fixed:  # nothing to collect (the window is one key, or two adjacent ones): the same pass anyway
            backend.collect(_ABSENT_KEY, _ABSENT_KEY)
            calls += 1
    return _assemble(n, first, last, lo_end, hi_end, got, _made(backend, made_before, calls))


def select_window_beyond(
    backend: KeyBackend, lo: int, hi: int, width: int, *, cap: int = 1 << 20
) -> tuple[RankWindow, NDArray[np.float64], NDArray[np.float64]]:
    """The window of ranks [lo, hi] (as :func:`select_window`, ``fixed=True``) and, in its collect pass,
    the ``width`` largest records < its first value and the ``width`` smallest > its last, sorted and padded
    with −inf / +inf to ``width`` each (:mod:`smoothdp.scale.beyond`).

    The same passes as :func:`select_window`: the collect pass also returns, per block, the ``width``
    largest keys below the lo-bin and smallest above the hi-bin. The records < x_(lo) are those below the
    lo-bin and the collected ones < x_(lo) (the lo-bin is collected unless it is the single key x_(lo)), so
    the ``width`` largest of both are the ``width`` largest records < x_(lo); likewise above.
    """
    made_before = getattr(backend, "passes", None)
    n, ((first, last, lo_end, hi_end),) = plan_windows(backend, [(lo, hi)], cap=cap, fixed=True)
    calls = 1 + (refinements_needed(n, cap) if first <= last else 0)
    pads = np.full(width, -np.inf), np.full(width, np.inf)
    if last < first:
        if n > 0:
            backend.collect(_ABSENT_KEY, _ABSENT_KEY)
            calls += 1
        return _empty(n, first, _made(backend, made_before, calls)), *pads
    key_lo, key_hi, _ = _collect_range(lo_end, hi_end)
    if key_lo > key_hi:  # nothing to collect (the window is one key, or two adjacent ones)
        key_lo = key_hi = _ABSENT_KEY
    got, below, above = backend.collect_beyond(key_lo, key_hi, lo_end.start, hi_end.stop, width)
    got = np.sort(got)
    window = _assemble(n, first, last, lo_end, hi_end, got, _made(backend, made_before, calls + 1))
    k_first, k_last = (int(k) for k in float_keys(window.values[[0, -1]]))
    near_low = got[: int(np.searchsorted(got, np.uint64(k_first), side="left"))]
    near_high = got[int(np.searchsorted(got, np.uint64(k_last), side="right")) :]
    low = keys_to_float(np.concatenate((below, near_low))[-width:] if width else below[:0])
    high = keys_to_float(np.concatenate((near_high, above))[:width])
    low = np.concatenate((pads[0][: width - low.size], low))
    high = np.concatenate((high, pads[1][: width - high.size]))
    return window, low, high


def select_windows(
    backend: KeyBackend, spans: Sequence[tuple[int, int]], *, cap: int = 1 << 20
) -> list[RankWindow]:
    """The exact windows of several spans of ranks, as :func:`select_window` (``fixed=True``) each, with
    the histogram and refinement passes shared (:func:`plan_windows`) and every window collected in one pass
    (:meth:`~smoothdp.scale.backends.CachingBackend.collect_ranges`). The passes depend on n, the widths,
    the number of spans and the cap only. The first window carries the passes of all."""
    made_before = getattr(backend, "passes", None)
    n, plans = plan_windows(backend, spans, cap=cap, fixed=True)
    calls = 1 + (refinements_needed(n, cap) if any(f <= last for f, last, _, _ in plans) else 0)
    ranges = []
    for first, last, lo_end, hi_end in plans:
        key_lo, key_hi, _ = _collect_range(lo_end, hi_end) if first <= last else (1, 0, 0)
        ranges.append((key_lo, key_hi) if key_lo <= key_hi else (_ABSENT_KEY, _ABSENT_KEY))
    collect_ranges = getattr(backend, "collect_ranges", None)
    if collect_ranges is not None:
        got_all = collect_ranges(ranges)
        calls += 1
    else:
        got_all = [backend.collect(lo, hi) for lo, hi in ranges]
        calls += len(ranges)
    passes = _made(backend, made_before, calls)
    out = []
    for (first, last, lo_end, hi_end), got in zip(plans, got_all, strict=True):
        if last < first:
            out.append(_empty(n, first, passes))
        else:
            out.append(_assemble(n, first, last, lo_end, hi_end, np.sort(got), passes))
        passes = 0
    return out
