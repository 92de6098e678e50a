"""Running the planned statistics over the groups: the single-column entry points, per group or in one batch.

* **count**: the exact counts of the group codes (one ``bincount``) plus the noise of
  :func:`smoothdp.histogram` over the categories 0 … G − 1: every group at once, one noise vector. On the
  direct path (one group under substitution) the count is n itself, public there and free.
* **sum**: one batch, :func:`smoothdp.sum`'s mechanism on every group's exact lattice sum at once.
* **order statistics, means, sums, ...**: one sort of each value column by (group, value) — a stable radix
  sort of the group codes, then each group's slice sorted in place — and one call of the single-column
  function per group on its sorted slice (:class:`~smoothdp.scale.engine.SortedRecords`, so the call does not
  sort again). The loop over groups calls the same function a user calls; every group's data policy (NaN →
  the bounds' midpoint, clipping) is the one of that function, applied once to the whole column.

Every call gets ``accountant=None`` (the table charges once) and the table's generator. A group's several
quantiles (``quantiles:…``) are sorted into the order of their levels q (post-processing), so that they are
monotone in q whatever method released them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.ratio_mean import COUNT_SHARE
from smoothdp.release import Release
from smoothdp.rng import is_secure
from smoothdp.scale.engine import SortedRecords
from smoothdp.tables.lattice_choice import LatticeChoice, choose_lattice, prepared_counts, runs_lattice_choice
from smoothdp.tables.plan import PlannedStatistic
from smoothdp.tables.query import Query
from smoothdp.tables.range_choice import RangeChoice, choose_range, prepared_range_counts, runs_range_choice
from smoothdp.validation import prepare_records

__all__ = [
    "GroupedColumn",
    "StatisticResult",
    "accepts_neighbours",
    "choose_pooled",
    "count_epsilon",
    "count_to_reuse",
    "describe_release",
    "group_call",
    "noisy_counts",
    "pooled_stage",
    "positional_arguments",
    "reuses_count",
    "run_count",
    "run_per_group",
    "run_sum",
    "sum_meta",
]


class GroupedColumn:
    """One value column under the data policy of ``bounds``, grouped: ``records(g)`` are group g's records,
    sorted (``starts[g]:starts[g + 1]`` of ``values``)."""

    def __init__(
        self,
        values: NDArray[np.float64],
        groups: NDArray[np.int64],
        n_groups: int,
        bounds: tuple[float, float],
        *,
        name: str,
    ) -> None:
        self.bounds = bounds
        prepared = prepare_records(
            values, bounds[0], bounds[1], clip=True, name=f"column {name!r}", min_size=0
        )
        codes = groups.astype(np.uint16 if n_groups <= 1 << 16 else np.uint32, copy=False)
        order = np.argsort(codes, kind="stable")  # a radix sort for 16-bit codes
        self.values = np.ascontiguousarray(prepared[order])
        counts = np.bincount(groups, minlength=n_groups)
        self.starts = np.concatenate(([0], np.cumsum(counts)))
        for g in range(n_groups):  # each group's slice sorted in place (C sorts; no copy)
            self.values[self.starts[g] : self.starts[g + 1]].sort()

    @cached_property
    def lattice_counts(self) -> NDArray[np.int64]:
        """The pooled lattice pre-stage's counts of the whole column, computed once for every quantile
        statistic of the column (:func:`~smoothdp.tables.lattice_choice.prepared_counts`)."""
        return prepared_counts(self.values)

    def pooled_counts(self, kind: str) -> NDArray[Any]:
        """The counts the pooled pre-stage ``kind`` (:func:`pooled_stage`) reads."""
        return self.lattice_counts if kind == "lattice" else self.range_counts

    @cached_property
    def range_counts(self) -> NDArray[Any]:
        """The pooled range decision's totals [#far, #near, exact sum] of the whole column, computed once
        (:func:`~smoothdp.tables.range_choice.prepared_range_counts`)."""
        return prepared_range_counts(self.values, self.bounds)

    def records(self, g: int) -> SortedRecords:
        rec = SortedRecords(self.values[self.starts[g] : self.starts[g + 1]])
        rec.bounds = self.bounds
        return rec


@dataclass(frozen=True)
class StatisticResult:
    """The values of one statistic for every group (shape (G, outputs)) and the public description of the
    mechanism that released them (``mechanism``, ``method``, ``proof``, ``source``, ``details``: one
    group's release's public fields, the same for every group; empty when there is no group)."""

    values: NDArray[Any]
    meta: dict[str, Any]
    is_simulation: bool


def describe_release(release: Release | None) -> dict[str, Any]:
    """The public fields of a release that describe how a statistic was released."""
    if release is None:
        return {}
    # Where it ran is not how (the same description on every engine); a lattice test's outcome is one
    # group's private output (covered by its guarantee, but not a description of the table): only its
    # public parameters are kept.
    # The bounds a nested draw used are one group's private output too.
    details = {k: v for k, v in release.details.items() if k not in ("engine", "bounds_used")}
    if isinstance(details.get("lattice_test"), dict):
        test = details["lattice_test"]
        details["lattice_test"] = {k: test[k] for k in ("epsilon", "threshold") if k in test}
    return {
        "mechanism": release.mechanism,
        "method": release.details.get("method"),
        "proof": release.proof,
        "source": release.source,
        "details": details,
    }


def positional_arguments(stat: PlannedStatistic) -> tuple[Any, ...]:
    """The arguments after x of the statistic's function (q, the list of qs, the trim)."""
    if stat.name == "quantile":
        return (stat.args[0],)
    if stat.name == "quantiles":
        return (list(stat.args),)
    if stat.name == "trimmed_mean":
        trim = stat.args[0]
        return (int(trim) if trim >= 1 and float(trim).is_integer() else trim,)
    return ()


def pooled_stage(name: str, call_neighbours: str) -> str | None:
    """The pre-stage a grouped statistic runs once on the pooled records of every group
    (docs/theory/tables.md): ``"lattice"`` (a quantile's lattice choice), ``"range"`` (a mean's range
    decision) or ``None``. Public: the statistic's name and the relation of the single-column calls."""
    if runs_lattice_choice(name, call_neighbours):
        return "lattice"
    if runs_range_choice(name, call_neighbours):
        return "range"
    return None


def choose_pooled(
    kind: str,
    counts: NDArray[Any],
    n: int,
    *,
    bounds: tuple[float, float],
    epsilon_group: float,
    rng: np.random.Generator,
) -> LatticeChoice | RangeChoice:
    """The draw of the pooled pre-stage ``kind`` from the totals of every kept record of the column (n of
    them, in ``bounds``), on either engine."""
    if kind == "lattice":
        return choose_lattice(counts, n, epsilon_group=epsilon_group, rng=rng)
    return choose_range(counts, bounds=bounds, epsilon_group=epsilon_group, rng=rng)


def group_call(
    epsilon_group: float, choice: LatticeChoice | RangeChoice | None
) -> tuple[float, dict[str, Any]]:
    """The ε and the public keyword options of each group's call of a statistic whose per-group share is
    ``epsilon_group``: what its pooled stage leaves and the choice it drew, or the whole share and none (the
    same rule on either engine, for groups with rows and without)."""
    if choice is None:
        return epsilon_group, {}
    return choice.epsilon_main, choice.call_options()


def reuses_count(name: str, query: Query, epsilon: float) -> bool:
    """Whether a grouped statistic (at its share ``epsilon`` of the table) takes its group's count, released
    by the same table, as a public input (docs/theory/tables.md#a-mean-beside-a-count). Public: the add/remove
    mean (the ratio mean's denominator), variance and standard deviation (the noisy moments' N), when the
    table has a count at no less than the 30% of the statistic's ε its own count would get (a count weighted
    lower would be noisier than the statistic's own); never on the direct path, where n is public."""
    budget = query.budget
    if budget.direct or name not in ("mean", "var", "std") or budget.call_neighbours != "add_remove":
        return False
    count = count_epsilon(query)
    return count is not None and count >= COUNT_SHARE * epsilon


def count_epsilon(query: Query) -> float | None:
    """The table's count statistic's share of ε, or ``None`` without one."""
    plan = query.plan
    return next((e for s, e in zip(plan.statistics, query.epsilons, strict=True) if s.name == "count"), None)


def count_to_reuse(query: Query) -> float | None:
    """The count statistic's share of ε when the table releases its count ahead of the others because a
    statistic reuses it (:func:`reuses_count`), else ``None``."""
    plan = query.plan
    if not any(reuses_count(s.name, query, e) for s, e in zip(plan.statistics, query.epsilons, strict=True)):
        return None
    return count_epsilon(query)


def run_per_group(
    stat: PlannedStatistic,
    column: GroupedColumn,
    n_groups: int,
    *,
    epsilon: float,
    neighbours: str,
    rng: np.random.Generator | Callable[[int], np.random.Generator],
    options: dict[str, Any] | None = None,
    released_counts: NDArray[Any] | None = None,
) -> StatisticResult:
    """One call of ``smoothdp.<stat>`` per group, at ``epsilon`` under ``neighbours`` (and the public
    keyword ``options``: a grouped quantile's lattice choice, a grouped mean's range decision); ``rng`` is
    one generator for every group (drawn in group order), or a function giving group g's generator (the
    disjoint streams of a :class:`~smoothdp.rng.StreamKey` on Dask workers). ``released_counts[g]``: group
    g's count as the table released it, passed to the call as ``released_count``."""
    fn = stat.function()
    args = positional_arguments(stat)
    kwargs: dict[str, Any] = {"epsilon": epsilon, "bounds": column.bounds, "accountant": None}
    kwargs.update(options or {})
    if accepts_neighbours(fn):
        kwargs["neighbours"] = neighbours
    out = np.empty((n_groups, len(stat.outputs)), dtype=np.float64)
    # A group's several quantiles are made monotone in q (sorting: post-processing), in the order of qs.
    order = (
        np.argsort(np.asarray(stat.args, dtype=np.float64), kind="stable")
        if stat.name == "quantiles"
        else None
    )
    example: Release | None = None
    simulation = False
    for g in range(n_groups):
        gen = rng(g) if callable(rng) else rng
        if released_counts is not None:
            kwargs["released_count"] = float(released_counts[g])
        release = fn(column.records(g), *args, rng=gen, **kwargs)
        out[g] = np.atleast_1d(np.asarray(release.value, dtype=np.float64))
        if order is not None:
            out[g, order] = np.sort(out[g])
        if example is None:
            example = release
        simulation = simulation or release.is_simulation
    return StatisticResult(out, describe_release(example), simulation)


def run_count(
    groups: NDArray[np.int64], n_groups: int, *, epsilon: float, rng: np.random.Generator
) -> StatisticResult:
    """Every group's count at once: the exact counts of the group codes, plus the noise of
    :func:`smoothdp.histogram` over the categories 0 … G − 1 (its mechanism,
    :class:`~smoothdp.central.counting.queries.NoisyHistogram`, under add/remove: a person's k rows move the
    count vector by at most k in ℓ1, so the caller passes ε/k)."""
    from smoothdp.central.counting.batch import cell_counts

    return noisy_counts(cell_counts(groups, max(n_groups, 1))[:n_groups], epsilon=epsilon, rng=rng)


def noisy_counts(counts: NDArray[Any], *, epsilon: float, rng: np.random.Generator) -> StatisticResult:
    """Exact per-group counts plus the histogram's noise (one draw per group, one vector)."""
    from smoothdp.central.counting.batch import add_integer_noise
    from smoothdp.central.counting.queries import NoisyHistogram

    g = counts.size
    if g == 0:
        return StatisticResult(np.empty((0, 1), dtype=np.int64), {}, False)
    mech = NoisyHistogram(epsilon=epsilon, categories=np.arange(g), neighbours="add_remove")
    values = add_integer_noise(np.asarray(counts, dtype=np.int64), mech.noise, rng).reshape(g, 1)
    meta = {"mechanism": mech.name, "method": None, "proof": mech.proof, "source": mech.source,
            "details": {"neighbours": "add_remove", "noise": mech.noise.family}}  # fmt: skip
    return StatisticResult(values, meta, not is_secure(rng))


def run_sum(
    values: NDArray[np.float64],
    groups: NDArray[np.int64],
    n_groups: int,
    *,
    bounds: tuple[float, float],
    epsilon: float,
    neighbours: str,
    rng: np.random.Generator,
) -> StatisticResult:
    """Every group's clipped sum in one batch: the noisy sum of :func:`smoothdp.sum` (the same
    :class:`~smoothdp.central.counting.queries.NoisySum` calibration, one exact lattice sum per group, one
    noise vector), each group's sum ε-DP under ``neighbours`` for one row."""
    from smoothdp.central.counting.batch import noisy_grouped_sums
    from smoothdp.central.counting.queries import NoisySum

    mech = NoisySum(bounds=bounds, epsilon=epsilon, neighbours=neighbours)
    q = mech.quantizer
    meta = sum_meta(mech, neighbours)
    if n_groups == 0:
        return StatisticResult(np.empty((0, 1)), meta, False)
    out = noisy_grouped_sums(values, groups, n_groups, q, mech.noise, rng)
    return StatisticResult(np.asarray(out, dtype=np.float64).reshape(n_groups, 1), meta, not is_secure(rng))


def sum_meta(mech: Any, neighbours: str) -> dict[str, Any]:
    """The public description of a batch of noisy sums (a
    :class:`~smoothdp.central.counting.queries.NoisySum`)."""
    q = mech.quantizer
    details = {"neighbours": neighbours, "bounds": (q.lower, q.upper), "quantum": q.quantum,
               "noise": mech.noise.family}  # fmt: skip
    return {
        "mechanism": mech.name,
        "method": None,
        "proof": mech.proof,
        "source": mech.source,
        "details": details,
    }


def accepts_neighbours(fn: Any) -> bool:
    """Whether a single-column function takes ``neighbours=``."""
    import inspect

    return "neighbours" in inspect.signature(fn).parameters
