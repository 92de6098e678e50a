"""Sample-and-aggregate (NRS07 §4; PDP Definition 20, seed 001).

Split the records into k disjoint blocks, independently of the data and of the order of the records, by
one of two partitions:

* ``partition="independent"`` (default): every record draws its block uniformly and independently (block
  sizes are multinomial). Private under substitution **and** add/remove: the other records' labels do not
  depend on n, so adding or removing a record changes exactly its own block.
* ``partition="balanced"``: a **uniformly random balanced partition** (block sizes differ by at most one),
  as in NRS07. Private under substitution of one record only (n public). It avoids empty blocks when n is
  close to k (with independent labels a block is empty with probability (1 − 1/k)^n ≈ e^{−n/k}).

Then compute z_i = f(block_i), clip it to public bounds [l, u], and aggregate privately:

* ``aggregator="mean"``: (1/k) Σ z_i + Lap((u − l)/(kε)). Pure ε-DP (PDP Def. 20): one record is in one
  block, so the clipped average moves by at most (u − l)/k.
* ``aggregator="median"``: the smooth-sensitivity median of z_1..z_k (:class:`Median` with clipping, via
  :class:`~smoothdp.central.mechanisms.SmoothSensitivityMechanism`), with that mechanism's guarantee.

Both aggregators need the block outputs z of neighbouring data sets to be substitution neighbours (one z_i
differs). Balanced: with the same random permutation, substituting one record changes exactly one block.
It does **not** extend to add/remove: adding a record to a balanced partition can unbalance two blocks
(sizes q + 1 and q − 1), so no coupling changes only one block, and a function f that sees block sizes can
lose ≈ 2ε − ln 3 > ε (the counterexample is kept in ``tests/central/test_sample_aggregate_neighbours.py``).
Independent: couple the labels record by record; the added, removed or substituted record moves only its
own block. PDP's code chunks by row position, which under add/remove shifts every later chunk
(notes/noise_and_ss.md §5.2). Empty blocks output the midpoint (l + u)/2 without calling f.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.mechanisms import SmoothSensitivityMechanism
from smoothdp.central.statistics import Median
from smoothdp.noise import Laplace
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_bounds, check_data, check_epsilon, check_int

__all__ = ["SampleAndAggregate", "block_starts", "random_blocks", "sample_and_aggregate"]

SOURCE_MEAN = "Sample-and-aggregate, NRS07 §4 / PDP Def. 20 (seed 001): Laplace on the clipped block mean"
AGGREGATORS = ("mean", "median")
PARTITIONS = ("balanced", "independent")
NEIGHBOURS = {
    "balanced": "substitution of one record (n public); not add/remove",
    "independent": "substitution or addition/removal of one record",
}
#: Records × repetitions processed at once by the vectorized block mean.
_CHUNK = 4_000_000

BlockFunction = Callable[[NDArray[Any]], float] | str


def block_starts(n: int, n_blocks: int) -> NDArray[np.int64]:
    """Start offsets of k balanced blocks of n positions: sizes ⌈n/k⌉ then ⌊n/k⌋ (empty past n if n < k)."""
    sizes = np.full(n_blocks, n // n_blocks, dtype=np.int64)
    sizes[: n % n_blocks] += 1
    return np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)


def random_blocks(
    n: int, n_blocks: int, rng: np.random.Generator
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """A uniformly random balanced partition of range(n) into ``n_blocks`` blocks.

    Returns ``(order, starts)``: block i is ``order[starts[i]:starts[i+1]]`` (the last ends at n).
    """
    return rng.permutation(n), block_starts(n, n_blocks)


class SampleAndAggregate:
    """Sample-and-aggregate with a private aggregator over k blocks (see the module docstring).

    Guarantee: ``self.guarantee`` (pure ε-DP for ``"mean"``, the median mechanism's for ``"median"``) under
    substitution and add/remove neighbours for ``partition="independent"`` (default); under substitution
    only, n public, for ``partition="balanced"`` (``self.neighbours`` says which).

    Parameters
    ----------
    func
        A function of one block of records (a 1-D array, or rows of a 2-D array) returning a real number,
        or the string ``"mean"`` for a fast vectorized block mean of 1-D data.
    n_blocks
        k ≥ 1, public.
    bounds
        (l, u): the block outputs are clipped to it.
    epsilon, delta
        The budget of the aggregator.
    aggregator
        ``"mean"`` (Laplace, pure ε-DP) or ``"median"`` (smooth-sensitivity median).
    partition
        ``"independent"`` (default: i.i.d. uniform block labels; substitution and add/remove neighbours) or
        ``"balanced"`` (balanced random partition; substitution neighbours only).
    noise, beta, **shape
        For ``aggregator="median"``: passed to :class:`SmoothSensitivityMechanism`.
    """

    def __init__(
        self,
        func: BlockFunction,
        n_blocks: int,
        bounds: tuple[float, float],
        epsilon: float,
        aggregator: str = "mean",
        *,
        partition: str = "independent",
        noise: str = "polyplace",
        delta: float = 0.0,
        beta: float | None = None,
        **shape: Any,
    ) -> None:
        if not (callable(func) or func == "mean"):
            raise TypeError(f"func must be a callable of one block or 'mean'; got {func!r}")
        if aggregator not in AGGREGATORS:
            raise ValueError(f"aggregator must be one of {AGGREGATORS}; got {aggregator!r}")
        if partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {PARTITIONS}; got {partition!r}")
        self.partition = partition
        self.neighbours = NEIGHBOURS[partition]
        self.func = func
        self.n_blocks = check_int("n_blocks", n_blocks, minimum=1)
        self.lower, self.upper = check_bounds(bounds)
        self.epsilon = check_epsilon(epsilon)
        self.aggregator = aggregator
        if aggregator == "median":
            median = Median(self.lower, self.upper, clip=True)
            self._median = SmoothSensitivityMechanism(median, epsilon, noise, delta, beta, **shape)
            self.guarantee = self._median.guarantee
        else:
            if delta != 0.0:
                raise ValueError(f"delta must be 0 for aggregator='mean' (pure ε-DP); got {delta!r}")
            self.guarantee = PureDP(self.epsilon)
            self._noise = Laplace((self.upper - self.lower) / (self.n_blocks * self.epsilon))

    def block_outputs(self, x: ArrayLike, rng: SeedLike = None) -> NDArray[np.float64]:
        """z_i = clip(f(block_i), l, u) for one random partition (not private on its own)."""
        return self._block_outputs_many(check_data(x, "x", ndim=(1, 2)), 1, resolve_rng(rng))[0]

    def _block_outputs_many(
        self, data: NDArray[np.float64], reps: int, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """Block outputs for ``reps`` independent partitions, shape (reps, k)."""
        if self.func == "mean" and data.ndim != 1:
            raise ValueError("func='mean' needs 1-D data; pass a callable for rows of a 2-D array")
        if self.partition == "independent":
            rows = max(1, _CHUNK // max(data.shape[0], 1))  # bounded memory: reps × n labels per chunk
            return np.concatenate(
                [
                    self._outputs_from_labels(
                        data, rng.integers(0, self.n_blocks, size=(min(rows, reps - r0), data.shape[0]))
                    )
                    for r0 in range(0, reps, rows)
                ]
            )
        n = data.shape[0]
        starts = block_starts(n, self.n_blocks)
        ends = np.append(starts[1:], n)
        full = ends > starts
        out = np.full((reps, self.n_blocks), 0.5 * (self.lower + self.upper))
        rows = max(1, _CHUNK // max(n, 1))
        for r0 in range(0, reps, rows):
            r1 = min(reps, r0 + rows)
            # One uniformly random permutation per repetition; block i is positions starts[i]:ends[i].
            orders = rng.permuted(np.broadcast_to(np.arange(n), (r1 - r0, n)), axis=1)
            if self.func == "mean":
                sums = np.add.reduceat(data[orders], starts[full], axis=1)
                out[r0:r1, full] = sums / (ends - starts)[full]
                continue
            for r, order in enumerate(orders, start=r0):
                shuffled = data[order]
                for i in np.flatnonzero(full):  # a loop over blocks, not over records
                    out[r, i] = float(self.func(shuffled[starts[i] : ends[i]]))
        return self._checked_clip(out)

    def block_outputs_from_labels(self, data: ArrayLike, labels: ArrayLike) -> NDArray[np.float64]:
        """Clipped block outputs for given block labels (shape (reps, n), values in 0..k−1): shape (reps, k).

        The ``"independent"`` partition draws the labels i.i.d. uniform; tests enumerate them. Block i holds
        the records labelled i, in their original order; an empty block outputs the midpoint.
        """
        x = check_data(data, "data", ndim=(1, 2))
        lab = np.atleast_2d(np.asarray(labels, dtype=np.int64))
        k = self.n_blocks
        if lab.shape[1] != x.shape[0] or np.any((lab < 0) | (lab >= k)):
            raise ValueError(f"labels must have shape (reps, {x.shape[0]}) with values in 0..{k - 1}")
        return self._outputs_from_labels(x, lab)

    def _outputs_from_labels(self, x: NDArray[np.float64], lab: NDArray[np.int64]) -> NDArray[np.float64]:
        """:meth:`block_outputs_from_labels` for checked data and labels (the sampler's hot path)."""
        reps, k = lab.shape[0], self.n_blocks
        out = np.full((reps, k), 0.5 * (self.lower + self.upper))
        flat = (lab + k * np.arange(reps)[:, None]).ravel()  # one bin per (repetition, block)
        counts = np.bincount(flat, minlength=reps * k).reshape(reps, k)
        if self.func == "mean":
            sums = np.bincount(flat, weights=np.broadcast_to(x, lab.shape).ravel(), minlength=reps * k)
            full = counts > 0
            out[full] = sums.reshape(reps, k)[full] / counts[full]
        else:
            for r in range(reps):  # a loop over repetitions and blocks, not over records
                for i in np.flatnonzero(counts[r]):
                    out[r, i] = float(self.func(x[lab[r] == i]))
        return self._checked_clip(out)

    def _checked_clip(self, out: NDArray[np.float64]) -> NDArray[np.float64]:
        if np.any(np.isnan(out)):
            raise ValueError("func returned NaN on a block; it must return a real number on every block")
        return np.clip(out, self.lower, self.upper)

    def sample(self, x: ArrayLike, size: int, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent outputs on x, each with its own random partition (vectorized)."""
        n = check_int("size", size, minimum=1)
        gen = resolve_rng(rng)
        z = self._block_outputs_many(check_data(x, "x", ndim=(1, 2)), n, gen)
        if self.aggregator == "mean":
            return z.mean(axis=1) + self._noise.sample(n, gen)
        # The median mechanism depends on the multiset of block outputs: one S_β per distinct multiset.
        distinct, which = np.unique(np.sort(z, axis=1), axis=0, return_inverse=True)
        stat, beta = self._median.statistic, self._median.beta
        values = np.array([stat.value(row) for row in distinct])
        scales = np.array([stat.smooth_sensitivity(row, beta) for row in distinct])
        noise = np.asarray(self._median.calibration.noise.sample(n, gen), dtype=np.float64)
        which = which.reshape(-1)
        return values[which] + scales[which] * noise

    def release(self, x: ArrayLike, rng: SeedLike = None) -> Release:
        """One private release."""
        gen = resolve_rng(rng)
        z = self.block_outputs(x, gen)
        details = {
            "neighbours": self.neighbours,
            "partition": self.partition,
            "n_blocks": self.n_blocks,
            "bounds": (self.lower, self.upper),
            "aggregator": self.aggregator,
        }
        if self.aggregator == "median":
            inner = self._median.release(z, gen)
            return Release(
                value=inner.value,
                guarantee=inner.guarantee,
                statistic="sample-and-aggregate",
                mechanism="sample-and-aggregate, smooth-sensitivity median "
                f"({inner.details['noise_family']})",
                source=f"Sample-and-aggregate, NRS07 §4; aggregator: {inner.source}",
                noise_scale=inner.noise_scale,
                noise_std=inner.noise_std,
                smooth_sensitivity=inner.smooth_sensitivity,
                beta=inner.beta,
                sampler=inner.sampler,
                details={**details, "not_private": inner.details["not_private"]},
            )
        return Release(
            value=float(np.mean(z)) + float(self._noise.sample(None, gen)),
            guarantee=self.guarantee,
            statistic="sample-and-aggregate",
            mechanism="sample-and-aggregate, Laplace on the clipped block mean",
            source=SOURCE_MEAN,
            noise_scale=self._noise.scale,
            noise_std=self._noise.std(),
            sampler=self._noise.sampler,
            details=details,
        )


def sample_and_aggregate(
    func: BlockFunction,
    x: ArrayLike,
    n_blocks: int,
    bounds: tuple[float, float],
    epsilon: float,
    aggregator: str = "mean",
    rng: SeedLike = None,
    **kwargs: Any,
) -> Release:
    """Sample-and-aggregate release of ``func`` on x (see :class:`SampleAndAggregate`)."""
    return SampleAndAggregate(func, n_blocks, bounds, epsilon, aggregator, **kwargs).release(x, rng)
