"""What every geo-privacy mechanism shares: the contract, the estimate, the variance report and user chunking.

A geo mechanism is a :class:`smoothdp.mechanism.Mechanism` in the local model: each user privatizes their
own point. Its ``guarantee`` is what **one user** spends on one call (one :meth:`GeoMechanism.release` or
:meth:`GeoMechanism.privatize`): for a grid of Q queries answered with one report per query, the Q
per-query guarantees composed (Q·ε, docs/theory/privacy-definitions.md#geo-privacy-composition); for a
mechanism whose one report answers every query (noise a priori on the location), the per-query guarantee
once (docs/theory/privacy-definitions.md#one-report-answers-every-query).

Every report goes through the exact release path (:func:`smoothdp.exact.add_noise`): the released float is
exactly the rounding, onto a public :class:`~smoothdp.exact.OutputGrid` (built from the query's value range
or the noise scale, never from the data or S), of the ideal real-arithmetic report, so the guarantee holds
for the floats released (post-processing; docs/geo.md, "Exact release path"). ``numerics="float"`` (a
keyword-only constructor argument of every geo mechanism) keeps the old floating-point path, whose
guarantee assumes idealized arithmetic; the Release's ``sampler`` says which path was used.

``engine=`` (:meth:`GeoMechanism.privatize`, :meth:`GeoMechanism.release`, :meth:`GeoMechanism.estimate`):
points in a dask array (users along the first axis) are privatized block by block on the workers, each
row block with its own stream of the secure generator (:mod:`smoothdp.scale.streams`), and the reports
stay a lazy dask array; the estimate is one sum reduction (docs/scale.md#randomness-on-workers).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant, charge
from smoothdp.exact import OutputGrid, check_numerics, sampler_label
from smoothdp.geo._query import GeoQuery
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import Guarantee
from smoothdp.release import Release
from smoothdp.rng import SeedLike, StreamKey, resolve_rng, stream_key
from smoothdp.scale.engine import dask_compute, engine_name, is_dask_collection
from smoothdp.validation import check_data, check_int

__all__ = ["GeoEstimate", "GeoMechanism", "GeoVariance", "repeated_guarantee"]

#: Users per block on the fast paths: small enough for the CPU cache, large enough to amortize numpy.
USER_BLOCK = 1 << 16


@dataclass(frozen=True)
class GeoEstimate:
    r"""The analyst's estimate from the users' reports.

    Attributes
    ----------
    mean
        Estimate of $(1/n) \sum_i f(x_i)$, shape ``param_shape``.
    total
        Estimate of $\sum_i f(x_i)$ ($= n \cdot \mathrm{mean}$).
    n
        Number of users.
    """

    mean: NDArray[np.float64]
    total: NDArray[np.float64]
    n: int


@dataclass(frozen=True)
class GeoVariance:
    r"""Exact variance of the reports.

    Attributes
    ----------
    per_user
        Var of each user's contribution, shape ``param_shape + U`` (``None`` when not asked for).
    total
        $\sum_i \mathrm{Var}$: the variance of the estimated sum, shape ``param_shape``.
    of_mean
        $\mathrm{total}/n^2$: the variance of the estimated mean.
    """

    per_user: NDArray[np.float64] | None
    total: NDArray[np.float64]
    of_mean: NDArray[np.float64]


@dataclass(frozen=True)
class _DaskPoints:
    """Users' points in a dask array chunked by rows only (shape checked; the data policy is lazy)."""

    points: Any


def _privatize_block(
    block: NDArray[np.float64], rng: np.random.Generator, *, mechanism: GeoMechanism
) -> NDArray[np.float64]:
    """One row block's reports: the in-memory data policy and :meth:`GeoMechanism._privatize`."""
    if block.shape[0] == 0:
        return np.empty(mechanism._report_shape(mechanism.query.user_shape(block)))
    return mechanism._privatize(mechanism.query.check_points(block), rng)


def user_blocks(x: NDArray[np.float64], dimension: int, block: int) -> Iterator[tuple[slice, NDArray]]:
    """Blocks of users of a flattened (n,) or (n, 2) array."""
    n = x.shape[0]
    for start in range(0, n, block):
        yield slice(start, min(start + block, n)), x[start : start + block]


def _times(value: float, count: int) -> float:
    """The smallest float ≥ count·value exactly (what ``sum_up([value] * count)`` gives, in O(1))."""
    total = value * count
    if math.isfinite(total) and Fraction(total) < Fraction(value) * count:
        total = math.nextafter(total, math.inf)
    return total


def repeated_guarantee(guarantee: Guarantee, count: int) -> Guarantee:
    """``count`` releases of ``guarantee`` composed (basic composition, rounded up): count·ε, count·δ.

    Equal to ``compose(*[guarantee] * count)`` (docs/theory/privacy-definitions.md#basic-composition and
    #geo-privacy-composition), in O(1). A ``ValueError`` when the δ's add up to 1 or more.
    """
    if count == 1:
        return guarantee
    try:
        return dataclasses.replace(
            guarantee, epsilon=_times(guarantee.epsilon, count), delta=_times(guarantee.delta, count)
        )
    except ValueError as err:
        raise ValueError(
            f"{count} queries at {guarantee} each compose to no guarantee ({err}); use fewer queries or a "
            "smaller delta"
        ) from err


class GeoMechanism(Mechanism):
    """A local geo-privacy mechanism: each user sends reports about their own point; the analyst averages.

    Subclasses set ``name``, ``proof``, ``source``, call :meth:`_set_guarantee` in ``__init__`` and
    implement :meth:`_privatize` (checked points, resolved generator) and :meth:`_user_variance` (checked
    input, shape P + U).

    Attributes
    ----------
    query
        The :class:`~smoothdp.geo.GeoQuery` (possibly a grid of Q queries, shape ``query.param_shape``).
    per_query
        What one report spends for its query (ε per unit of distance, as passed).
    guarantee
        What one user spends on one call: ``per_query`` composed over the Q reports each user sends.
    """

    query: GeoQuery
    per_query: Guarantee
    guarantee: Guarantee
    calibration: Any = None
    name = "geo mechanism"
    #: ``"exact"`` (default: the exact release path) or ``"float"`` (idealized arithmetic).
    numerics: str = "exact"
    #: The public output grid of the reports (from the query's value range or the noise scale).
    grid: OutputGrid
    #: True when the noise rests on the query's pointwise Lipschitz bound (its smooth sensitivity), so that
    #: a heuristic bound (``query.heuristic_sensitivity``) voids the guarantee and the release says so; the
    #: baselines use the declared global constant, the value range or no bound at all.
    uses_pointwise_bound: bool = True

    def _set_numerics(self, numerics: str, grid: OutputGrid) -> None:
        """Fix the arithmetic mode and the public output grid (both data-independent)."""
        self.numerics = check_numerics(numerics)
        self.grid = grid

    def _set_guarantee(self, per_query: Guarantee, *, reports: int | None = None) -> None:
        """Fix the guarantees before any data is seen; ``reports`` per user (default: one per query)."""
        self.per_query = per_query
        self.guarantee = repeated_guarantee(per_query, self.n_queries if reports is None else reports)

    @property
    def rests_on_a_heuristic(self) -> bool:
        """True when the guarantee rests on a heuristic bound (a ``LipschitzQuery(..., heuristic=True)``
        under a mechanism that uses its pointwise bound): the releases then say NOT PRIVATE."""
        return self.uses_pointwise_bound and self.query.heuristic_sensitivity

    @property
    def n_queries(self) -> int:
        """Q, the number of queries in the grid (1 for a single query)."""
        return int(np.prod(self.query.param_shape, dtype=np.int64))

    @property
    def epsilon(self) -> float:
        r"""$\varepsilon$ of one report (per query; per unit of distance for geo-privacy)."""
        return self.per_query.epsilon

    @property
    def delta(self) -> float:
        r"""$\delta$ of one report (per query)."""
        return self.per_query.delta

    @property
    def statistic_name(self) -> str:
        return self.query.name

    def total_guarantee(self) -> Guarantee:
        """What one user spends on one call: the same as :attr:`guarantee` (kept for older code)."""
        return self.guarantee

    # -- releasing -----------------------------------------------------------------------------------------
    def privatize(
        self,
        x: ArrayLike,
        *,
        rng: SeedLike = None,
        accountant: Accountant | None = None,
        engine: Any = None,
    ) -> Any:
        """The users' reports as an array (shape P + U, see the subclass); the fast entry point.

        Returns a numpy float array in process, a lazy ``dask.array.Array`` on Dask (hence ``Any``).

        ``accountant`` (a geo accountant, ``Accountant(epsilon=..., neighbours="metric")``) is charged
        :attr:`guarantee` before any noise is drawn; a :class:`~smoothdp.accounting.BudgetError` draws
        nothing. ``rng=None``: the secure generator. :meth:`release` returns the same reports in a
        :class:`~smoothdp.release.Release`.

        ``engine``: ``None`` (in process; a dask input selects ``"dask"``), ``"numpy"``, ``"dask"`` or a
        ``dask.distributed.Client``. On Dask, x is a dask array (or data frame) with the users along its
        first axis; the accountant is charged here, on the driver, and the result is a **lazy** dask array
        of reports computed block by block on the workers: row block p draws from stream p of a fresh
        256-bit key drawn from ``rng`` (:mod:`smoothdp.scale.streams`), so computing it again (or a retried
        task) gives the same reports. Publish the computed reports, never the graph (it holds the points
        and the key). For a seed the reports are reproducible on every dask scheduler with the same row
        chunks, but differ from the in-process reports (another stream).
        """
        if engine_name(engine, x) == "dask":
            points: Any = self._dask_points(x)
        else:
            points = self.query.check_points(self._in_memory(x))
        gen = resolve_rng(rng)
        if accountant is not None:
            charge(accountant, self.guarantee, label=f"{self.statistic_name} ({self.name})")
        return self._draw_reports(points, gen)

    def release(
        self, data: Any, *, accountant: Accountant | None = None, rng: SeedLike = None, engine: Any = None
    ) -> Release:
        """The reports in a :class:`~smoothdp.release.Release` (see :meth:`privatize`; on Dask its
        ``value`` is the lazy dask array of reports)."""
        if engine_name(engine, data) == "dask":
            data = self._dask_points(data)
        return super().release(self._in_memory(data), accountant=accountant, rng=rng)

    @staticmethod
    def _in_memory(x: Any) -> Any:
        """A dask input computed into memory (``engine="numpy"``); anything else unchanged."""
        return x.compute() if is_dask_collection(x) else x

    def _dask_points(self, x: Any) -> _DaskPoints:
        """Points on Dask, chunked by users only; their shape checked (the data policy applies per block)."""
        from smoothdp.scale.streams import row_blocks

        if isinstance(x, _DaskPoints):
            return x
        if not is_dask_collection(x):
            import dask.array as da

            pts = self.query.check_points(x)
            if pts.ndim == 0 or (self.query.dimension == 2 and pts.ndim == 1):
                raise ValueError(f"x must hold users along a first axis on Dask; got shape {pts.shape}")
            x = da.from_array(pts, chunks=(max(1, -(-pts.shape[0] // 8)), *pts.shape[1:]))
        arr = row_blocks(x, "x")
        if self.query.dimension == 2 and (arr.ndim < 2 or arr.shape[-1] != 2):
            raise ValueError(f"x must have shape (n, ..., 2) (users first); got shape {arr.shape}")
        if not np.isnan(arr.shape[0]) and arr.size == 0:
            raise ValueError("x must hold at least 1 point; got 0")
        return _DaskPoints(arr)

    def _privatize_dask(self, points: Any, key: StreamKey) -> Any:
        """The lazy dask array of reports, row block p drawing from ``key``'s stream p."""
        from smoothdp.scale.streams import map_row_blocks

        users_ndim = points.ndim - (1 if self.query.dimension == 2 else 0)
        lead, trail = self._report_layout()
        block = functools.partial(_privatize_block, mechanism=self)
        return map_row_blocks(block, points, key, keep=users_ndim, lead=lead, trail=trail)

    def _report_layout(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The reports' shape around the users' shape U: (leading, trailing). Default: P + U."""
        return self.query.param_shape, ()

    def _report_shape(self, users: tuple[int, ...]) -> tuple[int, ...]:
        lead, trail = self._report_layout()
        return lead + tuple(users) + trail

    def _prepare(self, data: Any) -> Any:
        return data if isinstance(data, _DaskPoints) else self.query.check_points(data)

    def _draw_reports(self, prepared: Any, rng: np.random.Generator) -> Any:
        """The reports of checked points: in process, or lazily on Dask from a stream key drawn from rng."""
        if isinstance(prepared, _DaskPoints):
            return self._privatize_dask(prepared.points, stream_key(rng))
        return self._privatize(prepared, rng)

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        return self._make_release(
            self._draw_reports(prepared, rng),
            details=self._public_details(),
            beta=self.calibration.beta if self.calibration is not None else None,
            sampler=sampler_label(self.numerics),
            caveat=self.query.sensitivity_note if self.rests_on_a_heuristic else "",
        )

    def _public_details(self) -> dict[str, Any]:
        """Data-independent facts about the release (how the query and its bound were evaluated)."""
        return {
            "query": self.query.name,
            "queries": self.n_queries,
            "per_query": str(self.per_query),
            "model": "local",
            "numerics": self.numerics,
            "output_grid": f"exponent {self.grid.exponent}, precision {self.grid.precision} bits",
            "query_value": self.query.value_note,
            **self._sensitivity_details(),
        }

    def _sensitivity_details(self) -> dict[str, Any]:
        """How the Lipschitz bound behind the noise was obtained (a HEURISTIC one is said so)."""
        return {"sensitivity_bound": self.query.sensitivity_note}

    @abstractmethod
    def _privatize(self, pts: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """The reports for checked points with a resolved generator (the budget is already charged)."""

    @staticmethod
    def _reports(reports: ArrayLike | Release) -> ArrayLike:
        return reports.value if isinstance(reports, Release) else reports

    def estimate(self, reports: ArrayLike | Release, *, engine: Any = None) -> GeoEstimate:
        """Estimate of the mean and sum of f over users from their reports (shape P + U, or a Release).

        Reports in a dask array (from ``privatize(..., engine=...)``) are summed by one reduction on
        ``engine`` (``None``/``"dask"``: the current scheduler; or a ``dask.distributed.Client``).
        """
        r = self._reports(reports)
        if is_dask_collection(r):
            return self._estimate_dask(r, engine)
        r = check_data(r, "reports")
        p_ndim = len(self.query.param_shape)
        if r.shape[:p_ndim] != self.query.param_shape:
            raise ValueError(
                f"reports must have shape param_shape + users = {self.query.param_shape} + (n, ...); "
                f"got {r.shape}"
            )
        axes = tuple(range(p_ndim, r.ndim))
        n = int(np.prod(r.shape[p_ndim:], dtype=np.int64))
        total = r.sum(axis=axes)
        return GeoEstimate(mean=total / n, total=total, n=n)

    def _estimate_dask(self, values: Any, engine: Any) -> GeoEstimate:
        """Σ over users of per-user values (a dask array, shape P + U): one sum reduction."""
        p_ndim = len(self.query.param_shape)
        if values.ndim <= p_ndim or values.shape[:p_ndim] != self.query.param_shape:
            raise ValueError(
                f"reports must have shape param_shape + users = {self.query.param_shape} + (n, ...); "
                f"got {values.shape}"
            )
        if any(np.isnan(d) for d in values.shape):
            values = values.compute_chunk_sizes()  # one counting pass (unknown chunk sizes)
        check = functools.partial(check_data, name="reports", min_size=0)
        checked = values.map_blocks(check, dtype=np.float64)
        (total,) = dask_compute(engine, checked.sum(axis=tuple(range(p_ndim, values.ndim))))
        n = int(np.prod(values.shape[p_ndim:], dtype=np.int64))
        if n == 0:
            raise ValueError("reports must hold at least 1 report; got 0")
        total = np.asarray(total, dtype=np.float64)
        return GeoEstimate(mean=total / n, total=total, n=n)

    def variance(self, x: ArrayLike, *, per_user: bool = True, block: int = USER_BLOCK) -> GeoVariance:
        r"""Exact variance of each report and of the estimated sum and mean.

        With ``per_user=False`` users are processed in blocks and only the totals are kept (memory
        $O(\vert P\vert \cdot \mathrm{block})$), the way to evaluate a large grid of queries over many users.
        """
        pts = self.query.check_points(x)
        users = self.query.user_shape(pts)
        n = int(np.prod(users, dtype=np.int64))
        if per_user:
            var = self._user_variance(pts)
            total = var.reshape((*self.query.param_shape, -1)).sum(axis=-1)
            return GeoVariance(per_user=var, total=total, of_mean=total / n**2)
        flat = pts.reshape((-1, 2) if self.query.dimension == 2 else (-1,))
        # Bound the working set to ~256k values (param_shape × block, cache-sized) whatever the grid size.
        n_params = int(np.prod(self.query.param_shape, dtype=np.int64))
        blk = max(1, min(check_int("block", block, minimum=1), (1 << 18) // max(1, n_params)))
        total = np.zeros(self.query.param_shape)
        for _, chunk in user_blocks(flat, self.query.dimension, blk):
            total += self._user_variance(chunk).sum(axis=-1)
        return GeoVariance(per_user=None, total=total, of_mean=total / n**2)

    @abstractmethod
    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.query.name}, {self.per_query} per report; "
            f"{self.guarantee} per user and call)"
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
