"""Sample-and-aggregate (NRS07 §4; Near & Abuah, *Programming Differential Privacy*, chapter Local
Sensitivity).

Split the records into k disjoint blocks, independently of the data and of the order of the records, by
one of two partitions:

* ``partition="independent"`` (default): every record draws its block uniformly and independently (block
  sizes are multinomial). Private under substitution **and** add/remove, with the same ε: the other
  records' labels do not depend on n, so adding, removing or substituting a record changes exactly its
  own block (docs/theory/central-frameworks.md#independent-block-labels).
* ``partition="balanced"``: a **uniformly random balanced partition** (block sizes differ by at most one),
  as in NRS07. Private under substitution of one record only (n public)
  (docs/theory/central-frameworks.md#balanced-partition). It avoids empty blocks when n is close to k (with
  independent labels a block is empty with probability (1 − 1/k)^n ≈ e^{−n/k}).

Then compute z_i = f(block_i), replace it by the public default (l + u)/2 when it is not finite (NaN, ±inf:
f may return them on some blocks; no exception, no count), clip it to public bounds [l, u], and aggregate
privately:

* ``aggregator="mean"``: (1/k) Σ z_i + Lap((u − l)/(kε)). Pure ε-DP: one record is in one block, so the
  clipped average moves by at most (u − l)/k. The average is exact (a rational, from
  :func:`~smoothdp.sums.exact_sum`) and the release is its exact rounding onto the public grid
  of [l, u] (:func:`smoothdp.exact.add_noise`; docs/theory/floating-point.md#the-exact-release-path).
* ``aggregator="median"``: the smooth-sensitivity median of z_1..z_k (:class:`Median` with clipping, via
  :class:`~smoothdp.central.smooth_sensitivity.mechanism.SmoothSensitivityMechanism`), with that mechanism's
  guarantee.

Both aggregators need the block outputs z of neighbouring data sets to be substitution neighbours (one z_i
differs; k is public). Balanced: with the same random permutation, substituting one record changes exactly
one block. It does **not** extend to add/remove: adding a record to a balanced partition can unbalance two
blocks (sizes q + 1 and q − 1), so no coupling changes only one block, and a function f that sees block sizes
can lose ≈ 2ε − ln 3 > ε (the counterexample is kept in
``tests/central/test_sample_aggregate_neighbours.py``).
Independent: couple the labels record by record; the added, removed or substituted record moves only its
own block. Chunking by row position (as the book's code does) would, under add/remove, shift every later
chunk. Empty blocks output the midpoint (l + u)/2 without calling f. The records themselves are passed to
f as they are (NaN and ±inf included: no record is refused; ``func="mean"`` then gives a non-finite block
mean, replaced by the midpoint), and empty data is allowed (every block outputs the midpoint). An
exception raised by a user's f propagates: f must be total on every block (wrap it if it may raise).

**The neighbour relation of the guarantee.** A guarantee records one relation. The independent partition
satisfies the same ε under both; it states ``"add_remove"`` by default (it does not need n public), and
``neighbours="substitution"`` states it under substitution instead (then a substitution
:class:`~smoothdp.accounting.Accountant` counts ε, not the 2ε of the add/remove → substitution conversion).
The balanced partition states ``"substitution"`` and refuses ``neighbours="add_remove"``.

**On Dask** (``engine="dask"`` or a ``dask.distributed.Client``; a dask input selects it): the
independent partition only. The driver charges the accountant, draws a fresh 256-bit key from ``rng``,
and each row block p draws its records' labels on its worker from stream p of that key
(:mod:`smoothdp.scale.streams`); f runs once per block of the partition on the workers (the records
labelled i gathered in their original order: k tasks of about n/k records each; ``func="mean"`` needs
only per-row-block label sums and counts), the k outputs come to the driver, and the non-finite
replacement, the clipping, the aggregation and the noise are those of the in-memory path, on the
driver. The law of the release is the same; for a seed the labels come from another stream than in
memory, so a seeded release on Dask equals the seeded releases on every other dask scheduler (with
the same row chunks) but not the in-memory one. ``partition="balanced"`` needs one global random
permutation and runs in memory only (docs/scale.md#randomness-on-workers).

Proof: docs/theory/central-frameworks.md#sample-and-aggregate. NRS07 = Nissim, Raskhodnikova & Smith,
STOC 2007.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
from smoothdp.central.smooth_sensitivity.statistics import Median
from smoothdp.exact import Enclosure, OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism, check_options
from smoothdp.noise import Laplace
from smoothdp.privacy import Guarantee, PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, StreamKey, resolve_rng, stream_key
from smoothdp.scale.engine import dask_compute, engine_name, is_dask_collection
from smoothdp.sums import exact_sum
from smoothdp.validation import check_bounds, check_epsilon, check_int, to_float_array

__all__ = ["SampleAndAggregate", "block_starts", "mean_enclosure", "random_blocks", "sample_and_aggregate"]

SOURCE_MEAN = (
    "Sample-and-aggregate, Nissim, Raskhodnikova & Smith, STOC 2007, §4: Laplace on the clipped block mean "
    "(docs/theory/central-frameworks.md#sample-and-aggregate)"
)
AGGREGATORS = ("mean", "median")
PARTITIONS = ("balanced", "independent")
#: The neighbour relations each partition is private under; the first is the default of the guarantee.
PARTITION_NEIGHBOURS = {
    "independent": ("add_remove", "substitution"),
    "balanced": ("substitution",),
}
#: The keywords of the median aggregator (the mean aggregator takes none of them).
MEDIAN_OPTIONS = ("noise", "delta", "beta", "df", "gamma", "constants")
#: Records × repetitions processed at once by the vectorized block mean.
_CHUNK = 4_000_000

BlockFunction = Callable[[NDArray[Any]], float] | str


@dataclass(frozen=True)
class _DaskRows:
    """Records in a dask array chunked by rows only, and the engine to compute on."""

    rows: Any
    engine: Any


def _labels(n_rows: int, n_blocks: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Independent uniform block labels of one row block, from its partition's stream."""
    return rng.integers(0, n_blocks, size=n_rows)


def _label_sums(
    block: NDArray[np.float64], rng: np.random.Generator, *, n_blocks: int
) -> NDArray[np.float64]:
    """One row block: Σ x and the count per label (2k floats; counts are exact below 2^53)."""
    lab = _labels(block.shape[0], n_blocks, rng)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite block means: replaced on the driver
        sums = np.bincount(lab, weights=block, minlength=n_blocks)
    return np.concatenate((sums, np.bincount(lab, minlength=n_blocks).astype(np.float64)))


def _split_by_label(
    block: NDArray[np.float64], partition: int, *, key: StreamKey, n_blocks: int
) -> tuple[NDArray[np.float64], ...]:
    """One row block's records split by their labels (each part in its original order)."""
    from smoothdp.scale.streams import partition_generator

    lab = _labels(block.shape[0], n_blocks, partition_generator(key, partition))
    order = np.argsort(lab, kind="stable")
    counts = np.bincount(lab, minlength=n_blocks)
    return tuple(np.split(block[order], np.cumsum(counts)[:-1]))


def _apply_group(func: Callable[[NDArray[Any]], float], *parts: NDArray[np.float64]) -> float:
    """f on the records of one block of the partition (NaN for an empty block: replaced by the default)."""
    records = np.concatenate(parts)
    return float(func(records)) if records.shape[0] else float("nan")


#: Unit roundoff of float64 (2^-53), and 2^-1074, the spacing of subnormals.
_UNIT_ROUNDOFF = 2.0**-53
_SUBNORMAL = 2.0**-1074


def mean_enclosure(rows: NDArray[np.float64]) -> Enclosure:
    """A certified enclosure of the exact mean of each row of ``rows`` (shape (reps, k), finite floats).

    The float mean m̂ = fl(fl(Σ z)/k) is within E = γ_{k−1}·Σ|z|/k + u·|m̂| + 2^-1074 of the exact mean
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, Lemma 3.1 and §4.2: any
    order of summation has error ≤ γ_{k−1}·Σ|z_i|, γ_m = m·u/(1 − m·u), u = 2^-53; the division adds a
    relative u plus an absolute 2^-1074 for underflow). E is computed with 2k·u ≥ γ_{k−1} and a factor
    1 + 2^-20 that covers the roundings of E itself; the ends are then moved one float outward. A row
    whose float sums overflow gets the exact mean's own float bounds. ``refine(i, bits)`` returns the exact
    mean of row i (:func:`~smoothdp.sums.exact_sum`), used only when a rounding is undecided.
    """
    z = np.asarray(rows, dtype=np.float64)
    k = z.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        mean = z.sum(axis=1) / k
        magnitude = np.abs(z).sum(axis=1) / k
        error = (2.0 * k * _UNIT_ROUNDOFF * magnitude + _UNIT_ROUNDOFF * np.abs(mean)) * (1.0 + 2.0**-20)
        error += _SUBNORMAL
        lower = np.nextafter(mean - error, -np.inf)
        upper = np.nextafter(mean + error, np.inf)
    for i in np.flatnonzero(~(np.isfinite(lower) & np.isfinite(upper))):  # overflow: bounds of the exact mean
        exact = exact_sum(z[i]) / k
        lower[i], upper[i] = np.nextafter(float(exact), -np.inf), np.nextafter(float(exact), np.inf)

    def refine(i: int, bits: int) -> Fraction:
        return exact_sum(z[i]) / k

    return Enclosure(lower, upper, refine)


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


class SampleAndAggregate(Mechanism):
    """Sample-and-aggregate with a private aggregator over k blocks (see the module docstring).

    Guarantee: pure ε-DP for ``aggregator="mean"`` (Laplace on the clipped block mean), the median
    mechanism's guarantee for ``"median"``; under ``"add_remove"`` (default) or ``"substitution"`` for
    ``partition="independent"``, under ``"substitution"`` only (n public) for ``partition="balanced"``.
    Lemma: one record changes one block output
    (docs/theory/central-frameworks.md#sample-and-aggregate, #independent-block-labels,
    #balanced-partition).

    Parameters
    ----------
    func
        A function of one block of records (a 1-D array, or rows of a 2-D array) returning a real number,
        or the string ``"mean"`` for a fast vectorized block mean of 1-D data.
    n_blocks
        k ≥ 1, public.
    bounds
        (l, u): the block outputs are clipped to it.
    epsilon
        The budget of the aggregator.
    aggregator
        ``"mean"`` (Laplace, pure ε-DP) or ``"median"`` (smooth-sensitivity median).
    partition
        ``"independent"`` (default: i.i.d. uniform block labels) or ``"balanced"`` (balanced random
        partition).
    neighbours
        The relation the guarantee is stated under (``None``: ``"add_remove"`` for the independent
        partition, ``"substitution"`` for the balanced one).
    numerics
        ``"exact"`` (default): the release is exactly rounded onto the public grid of ``bounds``;
        ``"float"``: the float fast path (not hardened).
    median_options
        For ``aggregator="median"`` only, a mapping: ``noise``, ``delta``, ``beta`` and the noise family's
        keywords (``df``, ``gamma``, ``constants``), passed to :class:`SmoothSensitivityMechanism`, e.g.
        ``median_options={"noise": "student_t", "df": 5}``. The mean aggregator takes none (a
        ``TypeError`` naming the valid keywords).
    """

    name = "sample-and-aggregate"
    source = SOURCE_MEAN
    proof = "docs/theory/central-frameworks.md#sample-and-aggregate"

    def __init__(
        self,
        func: BlockFunction,
        *,
        n_blocks: int,
        bounds: tuple[float, float],
        epsilon: float,
        aggregator: str = "mean",
        partition: str = "independent",
        neighbours: str | None = None,
        numerics: str = "exact",
        median_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.numerics = check_numerics(numerics)
        if not (callable(func) or func == "mean"):
            raise TypeError(f"func must be a callable of one block or 'mean'; got {func!r}")
        if aggregator not in AGGREGATORS:
            raise ValueError(f"aggregator must be one of {AGGREGATORS}; got {aggregator!r}")
        if partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {PARTITIONS}; got {partition!r}")
        allowed = PARTITION_NEIGHBOURS[partition]
        relation = allowed[0] if neighbours is None else check_neighbours(neighbours)
        if relation not in allowed:
            raise ValueError(
                f"partition={partition!r} is private under neighbours in {allowed} only; got "
                f"neighbours={neighbours!r} (adding a record can unbalance two blocks: use "
                "partition='independent' for add/remove)"
            )
        self.partition = partition
        self.func = func
        self.n_blocks = check_int("n_blocks", n_blocks, minimum=1)
        self.lower, self.upper = check_bounds(bounds)
        self.epsilon = check_epsilon(epsilon)
        self.aggregator = aggregator
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)  # public: bounds only
        if aggregator == "median":
            options = dict(median_options or {})
            check_options(options, MEDIAN_OPTIONS, what="aggregator='median'")
            median = Median(bounds=(self.lower, self.upper), clip=True)
            self._median = SmoothSensitivityMechanism(
                median, epsilon=self.epsilon, numerics=self.numerics, **options
            )
            base: Guarantee = self._median.calibration.guarantee
            self.source = (
                "Sample-and-aggregate, Nissim, Raskhodnikova & Smith, STOC 2007, §4; aggregator: "
                f"{self._median.source}"
            )
        else:
            check_options(dict(median_options or {}), (), what="aggregator='mean' (Laplace, pure ε-DP)")
            base = PureDP(self.epsilon)
            self._noise = Laplace((self.upper - self.lower) / (self.n_blocks * self.epsilon))
            self.source = SOURCE_MEAN
        self.guarantee = dataclasses.replace(base, neighbours=relation)

    def block_outputs(self, x: ArrayLike, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """z_i = clip(f(block_i), l, u) for one random partition (not private on its own)."""
        return self._block_outputs_many(self._prepare(x), 1, resolve_rng(rng))[0]

    def _block_outputs_many(
        self, data: NDArray[np.float64], reps: int, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """Block outputs for ``reps`` independent partitions of checked data, shape (reps, k)."""
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
                with np.errstate(invalid="ignore", over="ignore"):  # non-finite: replaced below
                    sums = np.add.reduceat(data[orders], starts[full], axis=1)
                    out[r0:r1, full] = sums / (ends - starts)[full]
                continue
            for r, order in enumerate(orders, start=r0):
                shuffled = data[order]
                for i in np.flatnonzero(full):  # a loop over blocks, not over records
                    out[r, i] = self._apply(shuffled[starts[i] : ends[i]])
        return self._checked_clip(out)

    def block_outputs_from_labels(self, data: ArrayLike, labels: ArrayLike) -> NDArray[np.float64]:
        """Clipped block outputs for given block labels (shape (reps, n), values in 0..k−1): shape (reps, k).

        The ``"independent"`` partition draws the labels i.i.d. uniform; tests enumerate them. Block i holds
        the records labelled i, in their original order; an empty block outputs the midpoint.
        """
        x = to_float_array(data, "data", ndim=(1, 2))
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
            with np.errstate(invalid="ignore", over="ignore"):  # non-finite block means: replaced below
                sums = np.bincount(flat, weights=np.broadcast_to(x, lab.shape).ravel(), minlength=reps * k)
                full = counts > 0
                out[full] = sums.reshape(reps, k)[full] / counts[full]
        else:
            for r in range(reps):  # a loop over repetitions and blocks, not over records
                for i in np.flatnonzero(counts[r]):
                    out[r, i] = self._apply(x[lab[r] == i])
        return self._checked_clip(out)

    def _apply(self, block: NDArray[np.float64]) -> float:
        """f(block) for a callable f (the string "mean" takes the vectorized paths)."""
        func = self.func
        assert not isinstance(func, str)
        return float(func(block))

    def _checked_clip(self, out: NDArray[np.float64]) -> NDArray[np.float64]:
        """Non-finite block outputs → the public default (midpoint), then clip into [l, u]."""
        out = np.where(np.isfinite(out), out, 0.5 * self.lower + 0.5 * self.upper)
        clipped: NDArray[np.float64] = np.clip(out, self.lower, self.upper)
        return clipped

    def sample(self, x: ArrayLike, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent outputs on x, each with its own random partition and the law of
        :meth:`release` (vectorized; no accountant).

        The partitions are drawn as in a release, then the aggregate takes the release path vectorized over
        the draws (:func:`smoothdp.exact.add_noise` with the mechanism's ``numerics``): for the mean, the
        exact block means as certified enclosures (:func:`mean_enclosure`); for the median, the exact
        median and S_β of each distinct multiset of block outputs. With the same generator state,
        ``sample(x, 1, rng=g)[0]`` is the value ``release(x, rng=g)`` gives (in memory).
        """
        n = check_int("size", size, minimum=1)
        data = self._prepare(x)
        gen = resolve_rng(rng)
        z = self._block_outputs_many(data, n, gen)
        if self.aggregator == "mean":
            draws = add_noise(mean_enclosure(z), self._noise, grid=self.grid, rng=gen, numerics=self.numerics)
            return np.asarray(draws, dtype=np.float64).reshape(n)
        # The median mechanism depends on the multiset of block outputs: one S_β per distinct multiset.
        distinct, which = np.unique(np.sort(z, axis=1), axis=0, return_inverse=True)
        median = self._median
        prepared = [median.statistic.prepare(row) for row in distinct]
        exact = [median.statistic.exact_value(d) for d in prepared]  # data values: floats (else rationals)
        centers = np.array(exact, dtype=np.float64 if all(type(v) is float for v in exact) else object)
        scales = np.array([median.statistic.smooth_sensitivity(d, median.beta) for d in prepared])
        which = which.reshape(-1)
        draws = add_noise(
            centers[which],
            median.calibration.noise,
            grid=median.grid,
            rng=gen,
            sensitivity=scales[which],
            numerics=median.numerics,
        )
        return np.asarray(draws, dtype=np.float64).reshape(n)

    def release(
        self, data: Any, *, accountant: Accountant | None = None, rng: SeedLike = None, engine: Any = None
    ) -> Release:
        """One private release on ``data`` (see :meth:`smoothdp.mechanism.Mechanism.release`).

        ``engine``: ``None`` (in process; a dask input selects ``"dask"``), ``"numpy"``, ``"dask"`` or a
        ``dask.distributed.Client``: on Dask the block labels are drawn and f is applied on the workers
        (module docstring); the accountant is charged on the driver before anything is drawn.
        """
        if engine_name(engine, data) == "dask":
            data = self._dask_rows(data, engine)
        elif is_dask_collection(data):
            data = data.compute()
        return super().release(data, accountant=accountant, rng=rng)

    def _dask_rows(self, x: Any, engine: Any) -> _DaskRows:
        """Records on Dask, chunked by rows; shape checks only (records are passed to f as they are)."""
        import dask.array as da

        from smoothdp.scale.streams import row_blocks

        if self.partition != "independent":
            raise ValueError(
                f"partition={self.partition!r} needs one global random permutation and runs in memory "
                "only; use partition='independent' on Dask (engine=None or 'numpy' for the balanced one)"
            )
        if not is_dask_collection(x):
            arr = self._prepare(x)
            x = da.from_array(arr, chunks=(max(1, -(-arr.shape[0] // 8)), *arr.shape[1:]))
        rows = row_blocks(x, "x")
        if rows.ndim not in (1, 2):
            raise ValueError(f"x must have ndim in (1, 2); got shape {rows.shape}")
        if self.func == "mean" and rows.ndim != 1:
            raise ValueError("func='mean' needs 1-D data; pass a callable for rows of a 2-D array")
        return _DaskRows(rows, engine)

    def _block_outputs_dask(self, data: _DaskRows, key: StreamKey) -> NDArray[np.float64]:
        """Clipped block outputs z (shape (k,)) with the labels drawn on the workers from ``key``."""
        import dask

        from smoothdp.scale.streams import per_block_rows

        k = self.n_blocks
        if self.func == "mean":
            summary = functools.partial(_label_sums, n_blocks=k)
            (parts,) = dask_compute(data.engine, per_block_rows(summary, data.rows, key, width=2 * k))
            with np.errstate(invalid="ignore", over="ignore"):  # non-finite block means: replaced below
                sums, counts = parts[:, :k].sum(axis=0), parts[:, k:].sum(axis=0)
                out = np.divide(sums, counts, out=np.full(k, np.nan), where=counts > 0)
            return self._checked_clip(out)
        func = self.func
        assert not isinstance(func, str)
        blocks = data.rows.to_delayed().ravel()
        split = dask.delayed(_split_by_label, nout=k, pure=True)
        parts_of = [split(b, p, key=key, n_blocks=k) for p, b in enumerate(blocks)]
        apply = dask.delayed(_apply_group, pure=True)
        groups = [apply(func, *(parts[i] for parts in parts_of)) for i in range(k)]
        return self._checked_clip(np.array(dask_compute(data.engine, *groups), dtype=np.float64))

    def _prepare(self, data: Any) -> Any:
        if isinstance(data, _DaskRows):
            return data
        x = to_float_array(data, "x", ndim=(1, 2))  # every record kept, NaN/±inf too (module docstring)
        if self.func == "mean" and x.ndim != 1:
            raise ValueError("func='mean' needs 1-D data; pass a callable for rows of a 2-D array")
        return x

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        if isinstance(prepared, _DaskRows):
            z = self._block_outputs_dask(prepared, stream_key(rng))
        else:
            z = self._block_outputs_many(prepared, 1, rng)[0]
        details: dict[str, Any] = {
            "partition": self.partition,
            "n_blocks": self.n_blocks,
            "bounds": (self.lower, self.upper),
            "aggregator": self.aggregator,
        }
        sampler = sampler_label(self.numerics)
        if self.aggregator == "median":
            inner = self._median._release(self._median._prepare(z), rng)
            family = inner.details["noise_family"]
            return self._make_release(
                inner.value,
                mechanism=f"sample-and-aggregate, smooth-sensitivity median ({family})",
                beta=inner.beta,
                sampler=sampler,
                details={**details, "noise_family": family},
                not_private=inner.not_private,
            )
        value = add_noise(
            exact_sum(z) / self.n_blocks, self._noise, grid=self.grid, rng=rng, numerics=self.numerics
        )
        return self._make_release(
            float(value),
            mechanism="sample-and-aggregate, Laplace on the clipped block mean",
            sampler=sampler,
            details=details,
            not_private=NotPrivate(noise_scale=self._noise.scale, noise_std=self._noise.std()),
        )


def sample_and_aggregate(
    func: BlockFunction,
    x: ArrayLike,
    *,
    n_blocks: int,
    bounds: tuple[float, float],
    epsilon: float,
    aggregator: str = "mean",
    partition: str = "independent",
    neighbours: str | None = None,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    engine: Any = None,
    median_options: Mapping[str, Any] | None = None,
) -> Release:
    """Sample-and-aggregate release of ``func`` on x (see :class:`SampleAndAggregate` for the guarantee
    and its neighbour relation); ``accountant`` is charged before the partition and the noise are drawn.
    ``engine``: where the records are (``None``, ``"numpy"``, ``"dask"`` or a ``dask.distributed.Client``;
    on Dask the block labels are drawn on the workers, see the module docstring)."""
    mech = SampleAndAggregate(
        func,
        n_blocks=n_blocks,
        bounds=bounds,
        epsilon=epsilon,
        aggregator=aggregator,
        partition=partition,
        neighbours=neighbours,
        numerics=numerics,
        median_options=median_options,
    )
    return mech.release(x, accountant=accountant, rng=rng, engine=engine)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
