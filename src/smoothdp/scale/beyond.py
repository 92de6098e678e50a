"""The records just beyond a window's end values, and the counts at one point: one fixed-size pass.

The windowed exponential-mechanism sampler (:mod:`smoothdp.central.quantile_window`) reads a window of
ranks [a, b], then, in ONE more pass whatever the data
(docs/theory/quantiles.md#sampling-from-a-window-of-ranks):

* the ``width`` largest records strictly below x_(a) and the ``width`` smallest strictly above x_(b): the
  ranks just beyond the runs of tied values at the window's ends (a run may hold most of the data; it is
  never read, its extent is known from the window's exact counts);
* a :class:`Probe` of one point p: #{x < p}, #{x ≤ p}, max{x < p} and min{x > p}.

The work is the same for every data set of n records: in memory, the two outer parts of the window's
partition (a − 1 and n − b records, public) are each masked and partitioned at a public position, so a
side with fewer than ``width`` records is padded with ∓inf (never a shorter loop); the probe compares
every key once. On Dask both are one pass over the blocks (:meth:`DaskBackend.beyond_pass`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from smoothdp.scale.keys import float_keys, keys_to_float

__all__ = [
    "Probe",
    "beyond_of_partition",
    "beyond_sorted",
    "collect_probe_block",
    "probe_keys",
    "probe_sorted",
]

_U64_ONE = np.uint64(1)


@dataclass(frozen=True)
class Probe:
    """Counts of the records at a point p: ``below`` = #{x < p}, ``at_most`` = #{x ≤ p}, ``pred`` =
    max{x < p} (−inf if none) and ``succ`` = min{x > p} (+inf if none)."""

    below: int
    at_most: int
    pred: float
    succ: float

    @staticmethod
    def combine(parts: list[Probe]) -> Probe:
        """The probe of a union of blocks from the probes of the blocks."""
        return Probe(
            below=sum(p.below for p in parts),
            at_most=sum(p.at_most for p in parts),
            pred=max((p.pred for p in parts), default=-np.inf),
            succ=min((p.succ for p in parts), default=np.inf),
        )


def probe_keys(keys: NDArray[np.uint64], point: float) -> Probe:
    """The :class:`Probe` of ``point`` over records given by their order-preserving keys (one comparison
    and one wrapped subtraction per record and per end: branch-free, the same work for every data set)."""
    kp = np.uint64(int(float_keys(np.array([point]))[0]))
    n = int(keys.size)
    below = int(np.count_nonzero(keys < kp))
    at_most = int(np.count_nonzero(keys <= kp))
    # kp − 1 − k wraps above kp − 1 for k ≥ kp: its minimum is kp − 1 − max{k < kp} when some k < kp.
    pred = -np.inf
    succ = np.inf
    if n:
        gap_below = int(np.min((kp - _U64_ONE) - keys)) if kp > 0 else None
        gap_above = int(np.min(keys - (kp + _U64_ONE))) if kp < np.iinfo(np.uint64).max else None
        if below and gap_below is not None:
            pred = float(keys_to_float(np.array([int(kp) - 1 - gap_below], dtype=np.uint64))[0])
        if at_most < n and gap_above is not None:
            succ = float(keys_to_float(np.array([int(kp) + 1 + gap_above], dtype=np.uint64))[0])
    return Probe(below, at_most, pred, succ)


def probe_sorted(sorted_x: NDArray[np.float64], point: float) -> Probe:
    """The :class:`Probe` of ``point`` over sorted records (binary search)."""
    below = int(np.searchsorted(sorted_x, point, side="left"))
    at_most = int(np.searchsorted(sorted_x, point, side="right"))
    pred = float(sorted_x[below - 1]) if below else -np.inf
    succ = float(sorted_x[at_most]) if at_most < sorted_x.size else np.inf
    return Probe(below, at_most, pred, succ)


#: Padding values below (above) every record: distinct, so that np.partition meets no long run of one
#: padding value (a run of −inf with one record above it at the front made np.partition 20× slower).
_PAD_MAG = 2.0**1022


def _pads(size: int, below: bool) -> NDArray[np.float64]:
    """Distinct floats beyond ±2^1022 (records lie within bounds narrower than that, else ∓inf)."""
    pads = _PAD_MAG * (1.0 + np.arange(size, dtype=np.float64) * 2.0**-52)
    return -pads if below else pads


def _top(values: NDArray[np.float64], threshold: float, width: int, *, below: bool) -> NDArray[np.float64]:
    """The ``width`` largest values < threshold (below) or smallest > threshold, sorted, padded with ∓inf
    to ``width`` entries: a mask and a partition at a public position of an array of public size."""
    if width <= 0:
        return np.empty(0)
    size = max(values.size, width)
    pads = _pads(size, below)
    if values.size and float(np.max(np.abs(values))) >= _PAD_MAG:  # bounds this wide: plain ∓inf padding
        pads = np.full(size, -np.inf if below else np.inf)
    keep = values < threshold if below else values > threshold
    masked = np.where(keep, values, pads[: values.size])
    if masked.size < width:
        masked = np.concatenate((masked, pads[values.size :]))
    if below:
        k = masked.size - width
        top = np.sort(np.partition(masked, k)[k:] if masked.size > width else masked)
        return np.where((top <= -_PAD_MAG) & (pads[0] != -np.inf), -np.inf, top)
    top = np.sort(np.partition(masked, width - 1)[:width] if masked.size > width else masked)
    return np.where((top >= _PAD_MAG) & (pads[0] != np.inf), np.inf, top)


def beyond_of_partition(
    part: NDArray[np.float64], first: int, last: int, width: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """From an array partitioned at the ranks ``first`` and ``last`` (np.partition, kth first − 1 and
    last − 1): the ``width`` largest records < x_(first) and the ``width`` smallest > x_(last), each
    sorted and padded with ∓inf (see :func:`_top`)."""
    low = _top(part[: first - 1], float(part[first - 1]), width, below=True)
    high = _top(part[last:], float(part[last - 1]), width, below=False)
    return low, high


def beyond_sorted(
    sorted_x: NDArray[np.float64], v_low: float, v_high: float, width: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`beyond_of_partition` for sorted records: the ``width`` records below v_low and above v_high."""
    i = int(np.searchsorted(sorted_x, v_low, side="left"))
    j = int(np.searchsorted(sorted_x, v_high, side="right"))
    low = sorted_x[max(0, i - width) : i]
    high = sorted_x[j : j + width]
    low = np.concatenate((np.full(width - low.size, -np.inf), low))
    high = np.concatenate((high, np.full(width - high.size, np.inf)))
    return low, high


def collect_probe_block(
    block: NDArray[np.float64], ranges: tuple[tuple[int, int], ...], point: float
) -> tuple[list[NDArray[np.uint64]], Probe]:
    """One block's part of a combined pass: its keys in each key range [lo, hi] (an empty range when
    lo > hi) and its :class:`Probe` of ``point``."""
    keys = float_keys(np.asarray(block, dtype=np.float64).ravel())
    got = []
    for lo, hi in ranges:
        if lo > hi:
            got.append(keys[:0])
            continue
        offset = keys - np.uint64(lo)
        got.append(keys[offset <= np.uint64(hi - lo)])
    return got, probe_keys(keys, point)
