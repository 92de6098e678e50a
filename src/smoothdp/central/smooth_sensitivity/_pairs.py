"""Smooth sensitivity of order statistics and trimmed means on sorted data: the pair form.

Notation (docs/theory/smooth-sensitivity.md#trimmed-mean): data sorted x_(1) ≤ … ≤ x_(n) in public bounds [a,
b], padded with x_(i) = a for i ≤ 0 and x_(i) = b for i ≥ n + 1. Both statistics have local sensitivity at
distance k

    A^(k) = c · max_{i = i_hi−k−1 .. i_hi} ( x_(i+L+k) − x_(i) )

for a *pair problem* (i_hi, L, c):

* the order statistic x_(q): i_hi = q, L = 1, c = 1 (NRS07 §3.1;
  docs/theory/smooth-sensitivity.md#median-and-quantiles);
* the m-trimmed mean: i_hi = m + 1, L = n − 2m, c = 1/(n − 2m) (Bun & Steinke, NeurIPS 2019;
  docs/theory/smooth-sensitivity.md#trimmed-mean).

Substituting k = j − i − L gives the pair form of the β-smooth sensitivity

    S_β = c · max { (x_(j) − x_(i)) · e^{−β(j−i−L)} :  i ≤ i_hi,  j ≥ i_hi + L − 1,  j − i ≥ L },

over padded indices 0 ≤ i, j ≤ n + 1 (indices past the pads repeat a pad value with more decay).

Algorithm (NRS07's "J-list"; docs/theory/smooth-sensitivity.md#exact-on-log-n-algorithm): for fixed i let
j*(i) be the *largest* maximiser. Since ln(x_j − x_i) − βj has increasing differences in (i, j), j*(i) is
non-decreasing in i, so a divide and conquer over i that scans the current j-range for the middle i and
recurses left on [lo, j*] and right on [j*, hi] costs O(W log W) for W candidate indices. Here every level of
the recursion is one vectorized pass.
Two refinements keep it exact in floating point and fast:

* ties within 1e-10 (log scale) of the row maximum widen the split to [first near-max, last near-max], so a
  rounding error can never send the search past the exact maximiser (rows of zero gaps, log = −inf, are
  exact ties and take the last feasible j, keeping the O(W log W) bound);
* a public cutoff: pairs at distance k ≥ K contribute at most c·(b − a)·e^{−βK}, below the smallest normal
  float for K = :func:`pair_window` (n, β, the bounds and c only), so only the windows i ∈ [i_hi − K, i_hi],
  j ∈ [j_lo, j_lo + K] are read and searched, whatever the data: the same load on every data set (no
  search that grows until the data's own S_β is certified, which read all n ranks on all-equal data).

:func:`pair_max_quadratic` is the O(n²) definition, kept as the reference for tests.

NRS07 = Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in private data analysis", STOC 2007.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.scale.engine import Records, SortedRecords
from smoothdp.scale.selection import RankWindow
from smoothdp.work import tally

__all__ = [
    "PairProblem",
    "local_sensitivity_at",
    "pair_max_quadratic",
    "pair_window",
    "smooth_sensitivity_pairs",
]

#: Log-scale tolerance within which two candidates count as tied (see module docstring).
_TIE = 1e-10
#: The floor of every released smooth sensitivity: the smallest normal float.
_TINY = float(np.finfo(np.float64).tiny)


class PairProblem:
    """Data in [a, b] with padding, and the (i_hi, L, c) of one statistic.

    The order statistics are read through rank windows of :class:`~smoothdp.scale.engine.Records`
    (:meth:`load` fetches the two windows [i_min, i_hi] and [j_lo, j_max] a search needs), so the data
    is never sorted as a whole; a sorted array is accepted too.
    """

    def __init__(
        self,
        data: Records | NDArray[np.float64],
        lower: float,
        upper: float,
        i_hi: int,
        gap: int,
        scale: float,
    ):
        self.records = data if isinstance(data, Records) else SortedRecords(np.asarray(data))
        self.n = self.records.n
        self.lower = lower
        self.upper = upper
        self.i_hi = i_hi
        self.gap = gap  # L
        self.j_lo = i_hi + gap - 1
        self.scale = scale  # c
        self._low: RankWindow | None = None
        self._high: RankWindow | None = None

    def load(self, i_min: int, j_max: int) -> None:
        """Fetch the order statistics of ranks [i_min, i_hi] and [j_lo, j_max] (one window if they meet)."""
        if self.j_lo - self.i_hi <= 2 * max(self.i_hi - i_min, j_max - self.j_lo, 64):
            self._low = self._high = self.records.window(i_min, j_max)
        else:
            self._low = self.records.window(i_min, self.i_hi)
            self._high = self.records.window(self.j_lo, j_max)

    def at(self, idx: NDArray[np.int64]) -> NDArray[np.float64]:
        """Padded order statistics x_(idx) (1-based; a below 1, b above n), from the loaded windows."""
        low, high = self._low, self._high
        if low is None or high is None:
            raise RuntimeError("PairProblem.at before load()")
        inner_idx = np.clip(idx, 1, max(self.n, 1))
        inside = (idx >= 1) & (idx <= self.n)
        in_low = inside & (inner_idx >= low.first) & (inner_idx <= low.last)
        in_high = inside & (inner_idx >= high.first) & (inner_idx <= high.last)
        if not np.all(in_low | in_high | ~inside):  # a bug guard: the searches stay inside their windows
            raise RuntimeError("PairProblem read a rank outside its loaded windows")
        from_low = (
            low.values[np.clip(inner_idx - low.first, 0, max(low.values.size - 1, 0))]
            if low.values.size
            else 0.0
        )
        from_high = (
            high.values[np.clip(inner_idx - high.first, 0, max(high.values.size - 1, 0))]
            if high.values.size
            else 0.0
        )
        inner = np.where(in_low, from_low, from_high)
        return np.where(idx <= 0, self.lower, np.where(idx >= self.n + 1, self.upper, inner))


def local_sensitivity_at(p: PairProblem, k: int) -> float:
    """A^(k) = c · max_{i = i_hi−k−1..i_hi} (x_(i+L+k) − x_(i)), exactly (before rounding up)."""
    if k >= p.n + 1:  # every pair (a, b) is reachable: the global sensitivity
        return p.scale * (p.upper - p.lower)
    i = np.arange(p.i_hi - k - 1, p.i_hi + 1, dtype=np.int64)
    p.load(p.i_hi - k - 1, p.i_hi + p.gap + k)
    return p.scale * float(np.max(p.at(i + p.gap + k) - p.at(i)))


def pair_max_quadratic(p: PairProblem, beta: float) -> float:
    """The O(n²) definition of S_β (reference for tests): scan every feasible padded pair."""
    p.load(0, p.n + 1)
    i = np.arange(0, p.i_hi + 1, dtype=np.int64)[:, None]
    j = np.arange(p.j_lo, p.n + 2, dtype=np.int64)[None, :]
    k = j - i - p.gap
    with np.errstate(over="ignore"):
        values = np.where(k >= 0, (p.at(j) - p.at(i)) * np.exp(-beta * np.maximum(k, 0)), 0.0)
    return p.scale * float(np.max(values))


def _segment_argmax_range(
    log_values: NDArray[np.float64], starts: NDArray[np.int64], cols: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Per segment: the max, and the first and last column within _TIE of it (−inf rows: last only)."""
    seg_max = np.maximum.reduceat(log_values, starts)
    sizes = np.diff(np.append(starts, log_values.size))
    rep_max = np.repeat(seg_max, sizes)
    finite = np.isfinite(rep_max)
    with np.errstate(invalid="ignore"):
        near = np.where(
            finite, log_values >= rep_max - _TIE * (1.0 + np.abs(np.where(finite, rep_max, 0))), True
        )
    big = np.iinfo(np.int64).max
    last = np.maximum.reduceat(np.where(near, cols, -1), starts)
    first = np.minimum.reduceat(np.where(near & finite, cols, big), starts)
    first = np.where(np.isfinite(seg_max), first, last)
    return seg_max, first, last


def _divide_and_conquer(p: PairProblem, beta: float, i_min: int, j_max: int) -> float:
    """max log((x_j − x_i)e^{−β(j−i−L)}) over i ∈ [i_min, i_hi], j ∈ [j_lo, j_max], j − i ≥ L.

    Monotone-argmax divide and conquer, one vectorized pass per level of the recursion.
    """
    ilo = np.array([i_min], dtype=np.int64)
    ihi = np.array([p.i_hi], dtype=np.int64)
    jlo = np.array([p.j_lo], dtype=np.int64)
    jhi = np.array([j_max], dtype=np.int64)
    best = -np.inf
    while ilo.size:
        mid = (ilo + ihi) // 2
        lo = np.maximum(jlo, mid + p.gap)  # feasible j for this i
        sizes = np.maximum(jhi - lo + 1, 0)
        has = sizes > 0
        # Rows with no feasible j: every larger i has none either; left children keep the full range.
        j_first = jhi.copy()
        j_last = jhi.copy()
        # The cells of a level: at most (j_max − j_lo + 1) + (rows) when no near-tie widens a split (the
        # rows' j-ranges then share at most their ends); padded to that public number with cells of a
        # segment of their own, so that every level scans as many cells whatever the data.
        bound = j_max - p.j_lo + 1 + int(ilo.size)
        rows = np.flatnonzero(has)
        sz = sizes[rows]
        total = int(sz.sum())
        pad = max(bound - total, 0)
        tally("pair_cells", total + pad)
        starts = np.concatenate(([0], np.cumsum(sz)[:-1])).astype(np.int64)
        offsets = np.arange(total, dtype=np.int64) - np.repeat(starts, sz)
        cols = np.concatenate((np.repeat(lo[rows], sz) + offsets, np.full(pad, p.j_lo, dtype=np.int64)))
        i_rep = np.concatenate((np.repeat(mid[rows], sz), np.full(pad, p.i_hi, dtype=np.int64)))
        gaps = p.at(cols) - p.at(i_rep)
        with np.errstate(divide="ignore", invalid="ignore"):
            logv = np.log(gaps) - beta * (cols - i_rep - p.gap)
        if pad:
            starts = np.append(starts, total)
        if cols.size:
            seg_max, first, last = _segment_argmax_range(logv, starts, cols)
            n_rows = rows.size
            if n_rows:
                best = max(best, float(np.max(seg_max[:n_rows])))
            j_first[rows] = first[:n_rows]
            j_last[rows] = last[:n_rows]
        left = mid - 1 >= ilo
        right = mid + 1 <= ihi
        ilo = np.concatenate((ilo[left], mid[right] + 1))
        ihi = np.concatenate((mid[left] - 1, ihi[right]))
        new_jlo = np.concatenate((jlo[left], j_first[right]))
        jhi = np.concatenate((j_last[left], jhi[right]))
        jlo = new_jlo
    return best


def pair_window(p: PairProblem, beta: float) -> int:
    """K: the public number of ranks searched on each side (n, β, the bounds and c only).

    Pairs at distance k ≥ K contribute at most c(b − a)e^{−βK}; K is the least with that below the
    smallest normal float, the floor every smooth sensitivity is raised to before release
    (:meth:`~smoothdp.central.smooth_sensitivity.statistics.Statistic.smooth_sensitivity`), so the released
    bound max(S, tiny) is the same as with every pair searched
    (docs/theory/smooth-sensitivity.md#exact-on-log-n-algorithm).
    """
    log_global = math.log(p.scale * (p.upper - p.lower))
    k = math.ceil((log_global - math.log(_TINY)) / beta) + 1 if log_global > math.log(_TINY) else 1
    return int(min(max(k, 1), p.n + 1))


def smooth_sensitivity_pairs(p: PairProblem, beta: float) -> float:
    """S_β for the pair problem, exact (before rounding up) wherever S_β ≥ the smallest normal float
    (below it, a value at most that float): the pairs within :func:`pair_window` ranks, read in one load
    whose size is public, searched by the divide and conquer, and the global term c(b − a)e^{−βK}."""
    window = pair_window(p, beta)
    i_min = max(0, p.i_hi - window)
    j_max = min(p.n + 1, p.j_lo + window)
    p.load(i_min, j_max)
    best = math.log(p.scale) + _divide_and_conquer(p, beta, i_min, j_max)
    if window < p.n + 1:  # pairs beyond the window: at most c(b − a)e^{−β·window}
        best = max(best, math.log(p.scale * (p.upper - p.lower)) - beta * window)
    return math.exp(best) if np.isfinite(best) else 0.0
