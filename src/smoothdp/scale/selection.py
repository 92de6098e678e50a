"""Exact order statistics in a window of ranks, without a full sort (docs/scale.md).

Smooth sensitivity of an order statistic needs the exact values x_(lo) … x_(hi) of a window of ranks around
the target rank (and the counts outside it), never the whole sorted array. This module computes such a
:class:`RankWindow` three ways, all bit-equal to slicing ``np.sort(x + 0.0)``:

* :func:`window_sorted`: a slice of data already sorted;
* :func:`window_in_memory`: O(n) selection (``np.partition``) of an unsorted in-memory array;
* :func:`select_window`: radix-histogram selection over a :class:`KeyBackend`, a data source that answers a
  few whole-data passes (histograms of 16-bit digits of order-preserving keys, collection of the keys in a
  range). :class:`BlockBackend` is one over in-process numpy blocks;
  ``smoothdp.scale.dask_backend.DaskBackend`` one over a Dask array.

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
  fewer than the cap).
  If the lo-bin and the hi-bin are the same single key, no collect pass is needed at all.
* Driver memory. One 2^16-bin histogram per end (≤ 2 × 512 KiB), and the collected keys: at most
  ``cap + (hi − lo + 1)`` of them (the loop condition), plus the window itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.scale.beyond import Probe, collect_probe_block
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
    "exact_sum_between",
    "partition_window",
    "plan_windows",
    "refinements_needed",
    "select_beyond",
    "select_window",
    "window_in_memory",
    "window_sorted",
]

#: Bits of key resolved per histogram pass, and the number of bins of a histogram.
DIGIT_BITS = 16
NBINS = 1 << DIGIT_BITS
_TOP_SHIFT = 64 - DIGIT_BITS


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


def partition_window(x: ArrayLike, lo: int, hi: int) -> tuple[RankWindow, NDArray[np.float64] | None]:
    """The window of ranks [lo, hi] ∩ [1, n] of an unsorted array (no NaN), in O(n) without a full sort.

    ``np.partition`` with kth = (lo − 1, hi − 1) puts x_(lo) and x_(hi) at their sorted places with every
    value between them in between; only that middle slice is sorted. ``n_below`` / ``n_above`` count the
    values of the two outer parts strictly beyond the window's ends (the other parts cannot be). Equal, bit
    for bit, to ``window_sorted(np.sort(x + 0.0), lo, hi)``. Also returns the partitioned copy of x
    (None for an empty window).
    """
    a = np.asarray(x, dtype=np.float64).ravel()
    n = int(a.size)
    first, last = _clip(n, lo, hi)
    if last < first:
        return _empty(n, first, 0), None
    kth = [first - 1] if first == last else [first - 1, last - 1]
    part = np.partition(a, kth)
    values = np.sort(part[first - 1 : last]) + 0.0  # −0 and +0 compare equal: fold after sorting
    n_below = int(np.count_nonzero(part[: first - 1] < values[0]))
    n_above = int(np.count_nonzero(part[last:] > values[-1]))
    return RankWindow(n=n, first=first, values=values, n_below=n_below, n_above=n_above), part


class HistogramRequest(NamedTuple):
    """Histogram the keys k with ``key_lo ≤ k ≤ key_hi`` by their digit ``(k >> shift) & 0xFFFF``."""

    key_lo: int
    key_hi: int
    shift: int


@runtime_checkable
class KeyBackend(Protocol):
    """A data source for :func:`select_window`: each method is ONE pass over the data (keys made per block).

    The data are doubles without NaN (±inf allowed); keys are :func:`~smoothdp.scale.keys.float_keys`.
    """

    def count(self) -> int:
        """The number of records."""
        ...

    def histograms(self, requests: Sequence[HistogramRequest]) -> list[NDArray[np.int64]]:
        """One pass: per request, the int64 counts (length 2^16) of the digits of the keys in its range."""
        ...

    def collect(self, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
        """One pass: every key k with ``key_lo ≤ k ≤ key_hi`` (with repetitions, in any order)."""
        ...

    def exact_sum_open(self, lo_value: float, hi_value: float) -> Fraction:
        """One pass: the exact Σ x over the records with ``lo_value < x < hi_value``."""
        ...


def block_histograms(block: ArrayLike, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
    """The digit histograms of one block: an int64 array of shape (len(requests), 2^16).

    The per-block kernel of :meth:`KeyBackend.histograms` (blocks' results add up). Vectorized: keys of the
    block, a range mask per request, ``np.bincount`` of the 16-bit digits.
    """
    keys = float_keys(np.asarray(block, dtype=np.float64).ravel())
    out = np.zeros((len(requests), NBINS), dtype=np.int64)
    for j, (key_lo, key_hi, shift) in enumerate(requests):
        if not 0 <= key_lo <= key_hi <= KEY_MAX or not 0 <= shift <= _TOP_SHIFT:
            raise ValueError(f"invalid histogram request {(key_lo, key_hi, shift)!r}")
        sel = keys
        if key_lo > 0 or key_hi < KEY_MAX:
            # One unsigned comparison for both ends: k − key_lo wraps above key_hi − key_lo if k < key_lo.
            offset = keys - np.uint64(key_lo)
            sel = keys[offset <= np.uint64(key_hi - key_lo)]
        digits = sel >> np.uint64(shift)
        if shift < _TOP_SHIFT:
            digits &= np.uint64(NBINS - 1)
        out[j] = np.bincount(digits.astype(np.intp), minlength=NBINS)
    return out


def collect_block(block: ArrayLike, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
    """The keys of one block in [key_lo, key_hi] (the per-block kernel of :meth:`KeyBackend.collect`)."""
    keys = float_keys(np.asarray(block, dtype=np.float64).ravel())
    offset = keys - np.uint64(key_lo)
    out: NDArray[np.uint64] = keys[offset <= np.uint64(key_hi - key_lo)]
    return out


def exact_sum_between(block: ArrayLike, lo_value: float, hi_value: float) -> Fraction:
    """The exact Σ x over the values of one block with ``lo_value < x < hi_value`` (the open interval).

    The per-block kernel of :meth:`KeyBackend.exact_sum_open` (blocks' Fractions add up). The values summed
    are finite: the open interval excludes ±inf whatever its ends.
    """
    from smoothdp.central.statistics import exact_sum  # lazy: central imports may come to import scale

    x = np.asarray(block, dtype=np.float64).ravel()
    return exact_sum(x[(x > lo_value) & (x < hi_value)])


class CachingBackend(KeyBackend):
    """A :class:`KeyBackend` that counts its passes and remembers its histograms (the data never change).

    Subclasses implement one pass each: :meth:`_histogram_pass`, :meth:`_collect_pass`, :meth:`_sum_pass`.
    ``histograms`` answers a request it has answered before from memory (the last
    :attr:`MAX_CACHED` requests, 512 KiB each), so a second :func:`select_window` on the same backend (a wider
    window, for a smooth-sensitivity cutoff further out) costs no histogram pass in the usual case: only the
    collect pass repeats. ``count`` is the total of the top histogram (one pass that also serves the next
    selection) unless a subclass knows n without a pass. :attr:`passes` counts the passes actually made.
    """

    #: How many histograms are remembered (first in, first out).
    MAX_CACHED: int = 16

    def __init__(self) -> None:
        self.passes = 0
        self._cache: dict[HistogramRequest, NDArray[np.int64]] = {}

    def _histogram_pass(self, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
        """One pass: the (len(requests), 2^16) int64 histograms."""
        raise NotImplementedError

    def _collect_pass(self, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
        raise NotImplementedError

    def _sum_pass(self, lo_value: float, hi_value: float) -> Fraction:
        raise NotImplementedError

    def count(self) -> int:
        return int(self.histograms([HistogramRequest(0, KEY_MAX, _TOP_SHIFT)])[0].sum())

    def histograms(self, requests: Sequence[HistogramRequest]) -> list[NDArray[np.int64]]:
        reqs = [HistogramRequest(int(r[0]), int(r[1]), int(r[2])) for r in requests]
        missing = list(dict.fromkeys(r for r in reqs if r not in self._cache))
        if missing:
            got = self._histogram_pass(missing)
            self.passes += 1
            for r, h in zip(missing, got, strict=True):
                self._cache[r] = h
            while len(self._cache) > max(self.MAX_CACHED, len(reqs)):
                del self._cache[next(iter(self._cache))]
        return [self._cache[r].copy() for r in reqs]

    def uncached_histograms(self, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
        """One histogram pass, never answered from (nor kept in) the cache: a selection's padding pass."""
        self.passes += 1
        return self._histogram_pass([HistogramRequest(int(r[0]), int(r[1]), int(r[2])) for r in requests])

    def collect(self, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
        self.passes += 1
        return self._collect_pass(int(key_lo), int(key_hi))

    def exact_sum_open(self, lo_value: float, hi_value: float) -> Fraction:
        self.passes += 1
        return self._sum_pass(float(lo_value), float(hi_value))

    def collect_and_probe(
        self, ranges: Sequence[tuple[int, int]], point: float
    ) -> tuple[list[NDArray[np.uint64]], Probe]:
        """One pass: the keys in each key range (empty when lo > hi) and the :class:`Probe` of ``point``."""
        self.passes += 1
        return self._collect_probe_pass(tuple((int(a), int(b)) for a, b in ranges), float(point))

    def _collect_probe_pass(
        self, ranges: tuple[tuple[int, int], ...], point: float
    ) -> tuple[list[NDArray[np.uint64]], Probe]:
        raise NotImplementedError


class BlockBackend(CachingBackend):
    """A :class:`KeyBackend` over a sequence of 1-D float64 numpy blocks (in-process; no NaN, ±inf allowed).

    Each pass loops over the blocks (not over the values), making the keys of one block at a time: the keys of
    all data are never held at once.
    """

    def __init__(self, blocks: Sequence[ArrayLike]) -> None:
        super().__init__()
        self._blocks = [np.asarray(b, dtype=np.float64).ravel() for b in blocks]

    def count(self) -> int:
        return sum(int(b.size) for b in self._blocks)

    def _histogram_pass(self, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
        total = np.zeros((len(requests), NBINS), dtype=np.int64)
        for b in self._blocks:
            total += block_histograms(b, requests)
        return total

    def _collect_pass(self, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
        parts = [collect_block(b, key_lo, key_hi) for b in self._blocks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)

    def _sum_pass(self, lo_value: float, hi_value: float) -> Fraction:
        return sum((exact_sum_between(b, lo_value, hi_value) for b in self._blocks), Fraction(0))

    def _collect_probe_pass(
        self, ranges: tuple[tuple[int, int], ...], point: float
    ) -> tuple[list[NDArray[np.uint64]], Probe]:
        parts = [collect_probe_block(b, ranges, point) for b in self._blocks]
        keys = [
            np.concatenate([p[0][i] for p in parts]) if parts else np.empty(0, dtype=np.uint64)
            for i in range(len(ranges))
        ]
        return keys, Probe.combine([p[1] for p in parts])


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
    top = backend.histograms([HistogramRequest(0, KEY_MAX, _TOP_SHIFT)])[0]
    n = int(top.sum())
    spans = [_clip(n, lo, hi) for lo, hi in windows]
    live = [(first, last) for first, last in spans if first <= last]
    ends = [
        (_locate(top, 0, _TOP_SHIFT, 0, f), _locate(top, 0, _TOP_SHIFT, 0, last), f, last) for f, last in live
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


def select_beyond(
    backend: CachingBackend, window: RankWindow, width: int, point: float, *, cap: int = 1 << 20
) -> tuple[NDArray[np.float64], NDArray[np.float64], Probe]:
    """The ``width`` records just below ``window``'s first value and just above its last, sorted and
    padded with ∓inf to ``width`` each (:mod:`smoothdp.scale.beyond`), and the :class:`Probe` of ``point``.

    The ranks are [n_below − width + 1, n_below] and [n − n_above + 1, n − n_above + width]: found on the
    remembered top histogram (and :func:`refinements_needed` refinement passes for both at once, padded),
    then ONE pass collects both key ranges and probes the point, whatever the data.
    """
    n = window.n
    lo_ranks = (window.n_below - width + 1, window.n_below)
    hi_ranks = (n - window.n_above + 1, n - window.n_above + width)
    _, plans = plan_windows(backend, [lo_ranks, hi_ranks], cap=cap, fixed=True)
    ranges = []
    for first, last, lo_end, hi_end in plans:
        if first > last:
            ranges.append((1, 0))
        else:
            key_lo, key_hi, _ = _collect_range(lo_end, hi_end)
            ranges.append((key_lo, key_hi))
    got, probe = backend.collect_and_probe(ranges, point)
    sides = []
    for (first, last, lo_end, hi_end), keys in zip(plans, got, strict=True):
        if first > last:
            sides.append(np.empty(0))
        else:
            sides.append(_assemble(n, first, last, lo_end, hi_end, np.sort(keys), 0).values)
    low = np.concatenate((np.full(width - sides[0].size, -np.inf), sides[0]))
    high = np.concatenate((sides[1], np.full(width - sides[1].size, np.inf)))
    return low, high, probe
