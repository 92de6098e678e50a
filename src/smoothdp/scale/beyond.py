"""The records just beyond a window's end values, found with the same work on every data set; and probes.

The windowed exponential-mechanism sampler (:mod:`smoothdp.central.quantiles.window`) reads a window of
ranks [a, b] and, with it, the ``width`` largest records strictly below x_(a) and the ``width`` smallest
strictly above x_(b): the ranks just beyond the runs of tied values at the window's ends
(docs/theory/quantiles.md#sampling-from-a-window-of-ranks). A run may hold most of the data; it is never
read, and its extent is known from the window's exact counts. Those ranks depend on the data, so they are
not found by a selection at a rank: they are the ``width`` smallest values of a *score* h computed for
every record, by one branch-free integer subtraction, from order-preserving keys (:func:`score_below`,
:func:`score_above`):

* below a key K: h = (K − 1 − key) mod 2^64 puts the keys < K, reversed, at [0, K − 1] and every other key
  at [K, 2^64 − 1]: the ``width`` smallest h are the ``width`` largest keys < K (or all of them, then keys
  ≥ K, which the caller drops and pads with −inf);
* above a key K: h = (key − K − 1) mod 2^64, the mirror image.

The ``width`` smallest scores are found by :func:`smallest_positions` in a fixed number of vectorised
steps over the records, whatever their values: per block of ``_BLOCK`` records, the minima of chunks of
public length; the ``width`` chunks of least minimum; their records. Exactness: let τ be the largest of
the chosen chunks' minima. Every record outside them lies in a chunk of minimum ≥ τ, so it is ≥ τ; the
chosen chunks hold ``width`` records ≤ τ (their minima). Hence the ``width`` smallest scores of the
chosen records are, as a multiset, the ``width`` smallest of all.

In memory (:func:`beyond_of_partition`) the scores are made from the float bits of the two outer parts of
the window's partition (one subtraction per record when the public bounds are ≥ 0, four otherwise); on
Dask (:func:`beyond_of_block`) from each block's keys in the window's collect pass, so the beyond costs
no pass of its own there. A :class:`Probe` (counts at one point) is one more pass, made only in the
sampler's rare outside round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from smoothdp.scale.keys import float_keys, keys_to_float

__all__ = [
    "Probe",
    "beyond_of_block",
    "beyond_of_partition",
    "beyond_sorted",
    "merge_block_scores",
    "probe_keys",
    "probe_sorted",
    "score_above",
    "score_below",
    "smallest_positions",
]

_U64_ONE = np.uint64(1)
_MOD = 1 << 64
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
#: Records per block of a score scan (its temporaries stay in the cache) and the most records per chunk.
_BLOCK = 1 << 16
_MAX_CHUNK = 64


# -- probes --------------------------------------------------------------------------------------------------
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
    """The :class:`Probe` of ``point`` over records given by their order-preserving keys (comparisons and
    wrapped subtractions, no branch on the data)."""
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


# -- the width smallest scores, in a fixed number of vectorised steps ----------------------------------------
def _chunk_length(size: int, width: int) -> int:
    """Records per chunk: the largest power of two ≤ 64 leaving at least 8·width chunks, else 1 (public:
    the size and the width only)."""
    c = _MAX_CHUNK
    while c > 1 and size < 8 * width * c:
        c //= 2
    return c


def smallest_positions(
    size: int, width: int, fill: Callable[[int, int, NDArray[np.int64]], None]
) -> tuple[NDArray[np.intp], int]:
    """Positions of candidates among ``size`` records whose scores include the ``width`` smallest, and
    the number of records scored 2^63 − 1 (the largest int64: the threshold's own key, see
    :func:`score_below`), counted in the same scan.

    ``fill(start, stop, out)`` writes the int64 scores of the records start … stop − 1 into ``out``. Per
    block of ``_BLOCK`` records: one ``fill`` and the minimum of each of its chunks of c records (c
    public; chunk j of a block of k·c records is its records j, j + k, …, j + (c − 1)k); then the ``width``
    chunks of least minimum (ties broken by position), and their records; the last (size mod ``_BLOCK``)
    mod c records are always candidates. The number of candidates, min(width, chunks)·c plus those last
    records, depends on ``size`` and ``width`` only. Proof of exactness: the module docstring.
    """
    c = _chunk_length(size, width)
    per_block = _BLOCK // c
    full, rest = divmod(size, _BLOCK)
    last_cols = rest // c
    mins = np.empty(full * per_block + last_cols, dtype=np.int64)
    buf = np.empty(min(_BLOCK, size), dtype=np.int64)
    flags = np.empty(buf.size, dtype=bool)
    top = np.int64(_I64_MAX)
    ties = 0
    for b in range(full + (rest > 0)):
        lo, hi = b * _BLOCK, min(size, (b + 1) * _BLOCK)
        cols = (hi - lo) // c
        out = buf[: hi - lo]
        fill(lo, hi, out)
        ties += int(np.count_nonzero(np.equal(out, top, out=flags[: hi - lo])))
        if cols:
            np.minimum.reduce(
                out[: cols * c].reshape(c, cols), axis=0, out=mins[b * per_block : b * per_block + cols]
            )
    loose = np.arange(full * _BLOCK + last_cols * c, size, dtype=np.intp)
    chosen = np.arange(mins.size, dtype=np.intp)
    if mins.size > width:
        chosen = _least(mins, width)
    block, col = np.divmod(chosen, per_block)
    stride = np.where(block < full, per_block, last_cols)
    pos = (block * _BLOCK + col)[:, None] + stride[:, None] * np.arange(c, dtype=np.intp)
    return np.concatenate((pos.ravel(), loose)), ties


def _least(values: NDArray[np.int64], width: int) -> NDArray[np.intp]:
    """The positions of ``width`` least values (ties broken by position), 0 < width < values.size: the
    width-th least value τ by a partition with two kth (numpy's single-kth kernel is slow on some arrays
    of tied values), then the positions of the values < τ and the first ones equal to τ."""
    tau = np.partition(values, [width - 1, width])[width - 1]
    below = np.flatnonzero(values < tau)
    at = np.flatnonzero(values == tau)[: width - below.size]
    return np.concatenate((below, at))


def _wrap(value: int) -> np.int64:
    """An integer mod 2^64 as a two's-complement int64."""
    v = value % _MOD
    return np.int64(v - _MOD if v > _I64_MAX else v)


def _smallest(values: NDArray[np.int64], width: int) -> NDArray[np.int64]:
    """The ``width`` smallest of ``values`` (all of them if fewer), sorted."""
    if values.size > width + 1:
        values = np.partition(values, [width - 1, width])[:width] if width else values[:0]
    return np.sort(values)[:width]


# -- scores --------------------------------------------------------------------------------------------------
# Keys here are the signed order-preserving keys s of doubles: s = bits for bits ≥ 0 (a double ≥ +0), else
# bits ^ (2^63 − 1); the unsigned keys of smoothdp.scale.keys are s ^ 2^63. In signed arithmetic the scores
# below are h ^ 2^63 (h of the module docstring), so that numpy's signed int64 minimum orders them.
def score_below(signed_threshold: int) -> int:
    """C with C − s (mod 2^64, int64) the signed score of a key s for the largest keys < the threshold's."""
    return int(_wrap(signed_threshold + _I64_MAX))


def score_above(signed_threshold: int) -> int:
    """C with s − C (mod 2^64, int64) the signed score of a key s for the smallest keys > the threshold's."""
    return int(_wrap(signed_threshold + 1 + _I64_MIN))


def _signed_key(value: float) -> int:
    """The signed order-preserving key of one double (−0 as +0)."""
    bits = int(np.array([value + 0.0]).view(np.int64)[0])
    return bits if bits >= 0 else bits ^ _I64_MAX


def _signed_keys(values: NDArray[np.float64], out: NDArray[np.int64], nonnegative: bool) -> NDArray[np.int64]:
    """The signed keys of ``values``: their bits as they are when every value is ≥ +0 (a view, no work),
    else made in ``out``."""
    if nonnegative:
        return values.view(np.int64)
    folded = values + 0.0  # −0 → +0
    bits = folded.view(np.int64)
    np.right_shift(bits, 63, out=out)  # −1 for a negative double, 0 otherwise
    np.bitwise_and(out, _I64_MAX, out=out)
    np.bitwise_xor(out, bits, out=out)
    return out


def _keys_from_scores(scores: NDArray[np.int64], constant: int, *, below: bool) -> NDArray[np.int64]:
    """The signed keys of signed scores made with ``constant`` (:func:`score_below` / :func:`score_above`)."""
    c = np.int64(_wrap(constant))
    return (c - scores) if below else (scores + c)


def beyond_of_partition(
    part: NDArray[np.float64], first: int, last: int, width: int, *, nonnegative: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64], int, int]:
    """From an array partitioned at the ranks ``first`` and ``last`` (kth first − 1 and last − 1): the
    ``width`` largest records < x_(first) and the ``width`` smallest > x_(last), each sorted ascending and
    padded with −inf (below) / +inf (above) to ``width`` entries, and the counts #{x < x_(first)},
    #{x > x_(last)}.

    One scan of the two outer parts (first − 1 and n − last records: public), each record scored by one
    integer subtraction from its bits (``nonnegative``: the public bounds are ≥ 0, so every record is ≥ +0;
    else three more to make its key), then :func:`smallest_positions`. Records must not be −0 (the data
    policy folds it) when ``nonnegative``.
    """
    low_part, high_part = part[: first - 1], part[last:]
    v_low, v_high = float(part[first - 1]), float(part[last - 1])
    c_low = np.int64(score_below(_signed_key(v_low)))
    c_high = np.int64(score_above(_signed_key(v_high)))

    def fill_low(lo: int, hi: int, out: NDArray[np.int64]) -> None:
        np.subtract(c_low, _signed_keys(low_part[lo:hi], out, nonnegative), out=out)

    def fill_high(lo: int, hi: int, out: NDArray[np.int64]) -> None:
        np.subtract(_signed_keys(high_part[lo:hi], out, nonnegative), c_high, out=out)

    with np.errstate(over="ignore"):
        at_low, ties_low = smallest_positions(low_part.size, width, fill_low)
        at_high, ties_high = smallest_positions(high_part.size, width, fill_high)
    low = _top_values(low_part, at_low, v_low, width, True)
    high = _top_values(high_part, at_high, v_high, width, False)
    return low, high, low_part.size - ties_low, high_part.size - ties_high


def _top_values(
    values: NDArray[np.float64], positions: NDArray[np.intp], threshold: float, width: int, below: bool
) -> NDArray[np.float64]:
    """The ``width`` largest candidates < threshold (below) or smallest > threshold, sorted, padded."""
    cand = values[positions]
    if below:
        keep = np.where(cand < threshold, cand, -np.inf)
        top = -_smallest_floats(-keep, width)[::-1]
        return np.concatenate((np.full(width - top.size, -np.inf), top)) + 0.0
    keep = np.where(cand > threshold, cand, np.inf)
    top = _smallest_floats(keep, width)
    return np.concatenate((top, np.full(width - top.size, np.inf))) + 0.0


def _smallest_floats(values: NDArray[np.float64], width: int) -> NDArray[np.float64]:
    if values.size > width + 1:
        values = np.partition(values, [width - 1, width])[:width] if width else values[:0]
    return np.sort(values)[:width]


def beyond_of_block(
    keys: NDArray[np.uint64], below_key: int, above_key: int, width: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One block's part of the beyond on Dask: the ``width`` smallest signed scores (sorted; all of them if
    the block is smaller) of its (unsigned) keys for the keys < ``below_key`` and for the keys >
    ``above_key``. The driver merges blocks with :func:`merge_block_scores`."""
    signed = keys.view(np.int64) ^ np.int64(_I64_MIN)  # unsigned key k → signed key k ^ 2^63
    c_low = np.int64(score_below(int(below_key) + _I64_MIN))
    c_high = np.int64(score_above(int(above_key) + _I64_MIN))

    def fill_low(lo: int, hi: int, out: NDArray[np.int64]) -> None:
        np.subtract(c_low, signed[lo:hi], out=out)

    def fill_high(lo: int, hi: int, out: NDArray[np.int64]) -> None:
        np.subtract(signed[lo:hi], c_high, out=out)

    with np.errstate(over="ignore"):
        at_low = signed[smallest_positions(signed.size, width, fill_low)[0]]
        at_high = signed[smallest_positions(signed.size, width, fill_high)[0]]
        return _smallest(c_low - at_low, width), _smallest(at_high - c_high, width)


def merge_block_scores(
    parts: list[NDArray[np.int64]], threshold_key: int, width: int, *, below: bool
) -> NDArray[np.uint64]:
    """The (unsigned) keys of the ``width`` smallest scores over all blocks that are truly < (``below``)
    or > the threshold key, sorted ascending (fewer than ``width`` when fewer exist)."""
    signed_threshold = int(threshold_key) + _I64_MIN
    constant = score_below(signed_threshold) if below else score_above(signed_threshold)
    scores = _smallest(np.concatenate(parts) if parts else np.empty(0, dtype=np.int64), width)
    with np.errstate(over="ignore"):
        signed = _keys_from_scores(scores, constant, below=below)
    signed = signed[signed < signed_threshold] if below else signed[signed > signed_threshold]
    return (np.sort(signed) ^ np.int64(_I64_MIN)).view(np.uint64)


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
