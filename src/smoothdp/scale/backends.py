"""Data sources for radix selection: each method is one pass over the data (docs/scale.md).

:func:`~smoothdp.scale.selection.select_window` finds exact order statistics from a few whole-data passes
of a :class:`KeyBackend`: histograms of 16-bit digits of order-preserving keys, the keys in a range (with,
in the same pass, the records just beyond a window: :mod:`smoothdp.scale.beyond`), exact sums, and the
counts at one point (:class:`~smoothdp.scale.beyond.Probe`). :class:`BlockBackend` is one over
in-process numpy blocks; ``smoothdp.scale.dask_backend.DaskBackend`` one over a Dask array. The per-block
kernels here (:func:`block_histograms`, :func:`collect_block`, :func:`collect_beyond_block`, ...) are what
both run on each block.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.scale.beyond import Probe, beyond_of_block, merge_block_scores, probe_keys
from smoothdp.scale.keys import KEY_MAX, float_keys, top_digits
from smoothdp.sums import exact_sum

__all__ = [
    "DIGIT_BITS",
    "NBINS",
    "TOP_SHIFT",
    "BlockBackend",
    "CachingBackend",
    "HistogramRequest",
    "KeyBackend",
    "block_histograms",
    "collect_beyond_block",
    "collect_block",
    "collect_ranges_block",
    "exact_sum_between",
    "merge_beyond",
    "probe_block",
]

#: Bits of key resolved per histogram pass, the number of bins of a histogram, the shift of the top digit.
DIGIT_BITS = 16
NBINS = 1 << DIGIT_BITS
TOP_SHIFT = 64 - DIGIT_BITS

#: One block's part of a collect-and-beyond pass: its keys in the range, and its smallest scores below
#: and above (:func:`smoothdp.scale.beyond.beyond_of_block`).
BlockBeyond = tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.int64]]


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

    def collect_beyond(
        self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
    ) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]]:
        """One pass: the keys in [key_lo, key_hi] (as :meth:`collect`), the ``width`` largest keys
        < ``below_key`` and the ``width`` smallest > ``above_key`` (each sorted; fewer if fewer exist)."""
        ...

    def exact_sum_open(self, lo_value: float, hi_value: float) -> Fraction:
        """One pass: the exact Σ x over the records with ``lo_value < x < hi_value``."""
        ...


def _in_range(keys: NDArray[np.uint64], key_lo: int, key_hi: int) -> NDArray[np.uint64]:
    """The keys in [key_lo, key_hi] (one unsigned comparison: k − key_lo wraps for k < key_lo)."""
    if key_lo > key_hi:
        return keys[:0]
    offset = keys - np.uint64(key_lo)
    out: NDArray[np.uint64] = keys[offset <= np.uint64(key_hi - key_lo)]
    return out


def block_histograms(block: ArrayLike, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
    """The digit histograms of one block: an int64 array of shape (len(requests), 2^16).

    The per-block kernel of :meth:`KeyBackend.histograms` (blocks' results add up). Vectorized: the keys'
    top digits of the whole block (:func:`~smoothdp.scale.keys.top_digits`), ``np.bincount`` of them for
    the top request; for a range request the full keys of only the records whose top digit can fall in
    the range (every request reads every record's top digit: the same steps whatever the range holds).
    """
    values = np.asarray(block, dtype=np.float64).ravel()
    top = top_digits(values)
    out = np.zeros((len(requests), NBINS), dtype=np.int64)
    for key_lo, key_hi, shift in requests:
        if not 0 <= key_lo <= key_hi <= KEY_MAX or not 0 <= shift <= TOP_SHIFT:
            raise ValueError(f"invalid histogram request {(key_lo, key_hi, shift)!r}")
    ranged = [(lo, hi) for lo, hi, s in requests if not (lo == 0 and hi == KEY_MAX and s == TOP_SHIFT)]
    near_values, near_top = _near_all(values, top, ranged)
    for j, (key_lo, key_hi, shift) in enumerate(requests):
        if key_lo == 0 and key_hi == KEY_MAX and shift == TOP_SHIFT:
            out[j] = np.bincount(top, minlength=NBINS)
            continue
        sel = _in_range(_keys_near(near_values, near_top, key_lo, key_hi), key_lo, key_hi)
        digits = sel >> np.uint64(shift)
        if shift < TOP_SHIFT:
            digits &= np.uint64(NBINS - 1)
        out[j] = np.bincount(digits.astype(np.intp), minlength=NBINS)
    return out


def _keys_near(
    values: NDArray[np.float64], top: NDArray[np.int64], key_lo: int, key_hi: int
) -> NDArray[np.uint64]:
    """The keys of the records whose top digit lies in [top(key_lo), top(key_hi)] (a superset of the keys
    in [key_lo, key_hi]), from one unsigned comparison of the top digits."""
    t_lo, t_hi = key_lo >> TOP_SHIFT, key_hi >> TOP_SHIFT
    near = (top - np.int64(t_lo)).view(np.uint64) <= np.uint64(t_hi - t_lo)
    return float_keys(values[near])


def _near_all(
    values: NDArray[np.float64], top: NDArray[np.int64], ranges: Sequence[tuple[int, int]]
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The records (and their top digits) whose top digit lies in the top-digit span of some range: one
    look-up of a 2^16-entry table per record, so that each range then scans only these (its keys are the
    same as from the whole block). With at most one range, the whole block (its comparison is cheaper)."""
    if len(ranges) <= 1:  # one range: its own comparison is cheaper than the table's gather
        return values, top
    table = np.zeros(NBINS, dtype=bool)
    for lo, hi in ranges:
        if lo <= hi:
            table[lo >> TOP_SHIFT : (hi >> TOP_SHIFT) + 1] = True
    if table.all():
        return values, top
    near = table[top]
    return values[near], top[near]


def collect_block(block: ArrayLike, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
    """The keys of one block in [key_lo, key_hi] (the per-block kernel of :meth:`KeyBackend.collect`)."""
    if key_lo > key_hi:
        return np.empty(0, dtype=np.uint64)
    values = np.asarray(block, dtype=np.float64).ravel()
    return _in_range(_keys_near(values, top_digits(values), key_lo, key_hi), key_lo, key_hi)


def collect_ranges_block(block: ArrayLike, ranges: Sequence[tuple[int, int]]) -> list[NDArray[np.uint64]]:
    """The keys of one block in each of the key ranges [lo, hi] (the kernel of
    :meth:`CachingBackend.collect_ranges`): the top digits are made once."""
    values = np.asarray(block, dtype=np.float64).ravel()
    values, top = _near_all(values, top_digits(values), [(int(lo), int(hi)) for lo, hi in ranges])
    return [
        _in_range(_keys_near(values, top, int(lo), int(hi)), int(lo), int(hi))
        if lo <= hi
        else top[:0].view(np.uint64)
        for lo, hi in ranges
    ]


def collect_beyond_block(
    block: ArrayLike, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
) -> BlockBeyond:
    """One block's part of :meth:`KeyBackend.collect_beyond`: its keys in [key_lo, key_hi] and its
    ``width`` smallest scores for the keys < ``below_key`` and > ``above_key``
    (:func:`~smoothdp.scale.beyond.beyond_of_block`; the same vectorised steps whatever the values)."""
    keys = float_keys(np.asarray(block, dtype=np.float64).ravel())
    low, high = beyond_of_block(keys, below_key, above_key, width)
    return _in_range(keys, key_lo, key_hi), low, high


def merge_beyond(
    parts: Sequence[BlockBeyond], below_key: int, above_key: int, width: int
) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]]:
    """The blocks' parts of a collect-and-beyond pass, merged on the driver (see
    :meth:`KeyBackend.collect_beyond`)."""
    keys = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, dtype=np.uint64)
    low = merge_block_scores([p[1] for p in parts], below_key, width, below=True)
    high = merge_block_scores([p[2] for p in parts], above_key, width, below=False)
    return keys, low, high


def probe_block(block: ArrayLike, point: float) -> Probe:
    """One block's :class:`~smoothdp.scale.beyond.Probe` of ``point``."""
    return probe_keys(float_keys(np.asarray(block, dtype=np.float64).ravel()), point)


def exact_sum_between(block: ArrayLike, lo_value: float, hi_value: float) -> Fraction:
    """The exact Σ x over the values of one block with ``lo_value < x < hi_value`` (the open interval).

    The per-block kernel of :meth:`KeyBackend.exact_sum_open` (blocks' Fractions add up). The values summed
    are finite: the open interval excludes ±inf whatever its ends.
    """
    x = np.asarray(block, dtype=np.float64).ravel()
    return exact_sum(np.where((x > lo_value) & (x < hi_value), x, 0.0))  # every record: the same work


class CachingBackend(KeyBackend):
    """A :class:`KeyBackend` that counts its passes and remembers its histograms (the data never change).

    Subclasses implement one pass each: :meth:`_histogram_pass`, :meth:`_collect_pass`,
    :meth:`_collect_beyond_pass`, :meth:`_sum_pass`, :meth:`_probe_pass`. ``histograms`` answers a request
    it has answered before from memory (the last :attr:`MAX_CACHED` requests, 512 KiB each), so a second
    :func:`select_window` on the same backend (a wider window, for a smooth-sensitivity cutoff further out)
    costs no histogram pass in the usual case: only the collect pass repeats. ``count`` is the total of the
    top histogram (one pass that also serves the next selection) unless a subclass knows n without a pass.
    :attr:`passes` counts the passes actually made.
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

    def _collect_beyond_pass(
        self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
    ) -> list[BlockBeyond]:
        """One pass: every block's :func:`collect_beyond_block`."""
        raise NotImplementedError

    def _sum_pass(self, lo_value: float, hi_value: float) -> Fraction:
        raise NotImplementedError

    def _probe_pass(self, point: float) -> list[Probe]:
        """One pass: every block's :func:`probe_block`."""
        raise NotImplementedError

    def count(self) -> int:
        return int(self.histograms([HistogramRequest(0, KEY_MAX, TOP_SHIFT)])[0].sum())

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

    def collect_ranges(self, ranges: Sequence[tuple[int, int]]) -> list[NDArray[np.uint64]]:
        """One pass: the keys in each of the ranges [lo, hi] (several windows at once)."""
        self.passes += 1
        per_block = self._collect_ranges_pass([(int(lo), int(hi)) for lo, hi in ranges])
        return [
            np.concatenate([p[i] for p in per_block]) if per_block else np.empty(0, dtype=np.uint64)
            for i in range(len(ranges))
        ]

    def _collect_ranges_pass(self, ranges: list[tuple[int, int]]) -> list[list[NDArray[np.uint64]]]:
        """One pass: every block's :func:`collect_ranges_block`."""
        raise NotImplementedError

    def collect_beyond(
        self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
    ) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]]:
        self.passes += 1
        args = (int(key_lo), int(key_hi), int(below_key), int(above_key), int(width))
        return merge_beyond(self._collect_beyond_pass(*args), args[2], args[3], args[4])

    def exact_sum_open(self, lo_value: float, hi_value: float) -> Fraction:
        self.passes += 1
        return self._sum_pass(float(lo_value), float(hi_value))

    def probe(self, point: float) -> Probe:
        """One pass: the :class:`~smoothdp.scale.beyond.Probe` of ``point`` over every record."""
        self.passes += 1
        return Probe.combine(self._probe_pass(float(point)))


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

    def _collect_ranges_pass(self, ranges: list[tuple[int, int]]) -> list[list[NDArray[np.uint64]]]:
        return [collect_ranges_block(b, ranges) for b in self._blocks]

    def _collect_beyond_pass(
        self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
    ) -> list[BlockBeyond]:
        return [collect_beyond_block(b, key_lo, key_hi, below_key, above_key, width) for b in self._blocks]

    def _sum_pass(self, lo_value: float, hi_value: float) -> Fraction:
        return sum((exact_sum_between(b, lo_value, hi_value) for b in self._blocks), Fraction(0))

    def _probe_pass(self, point: float) -> list[Probe]:
        return [probe_block(b, point) for b in self._blocks]
