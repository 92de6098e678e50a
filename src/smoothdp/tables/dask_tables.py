"""Grouped releases of Dask data frames: per-group work on the workers, counting noise once on the driver
(docs/tables.md#dask-frames).

No column is gathered on the driver. The steps, each one Dask computation over the partitions:

1. **keys**: each partition maps its rows to group codes (public keys; rows of other keys dropped there);
2. **bounding** (``privacy_unit``): a shuffle by person puts each person's rows in one partition, which
   bounds them with a generator of its own (a disjoint stream of the table's
   :class:`~smoothdp.rng.StreamKey`);
3. **private keys**: the number of distinct persons per key, one small Series on the driver, which selects;
4. **counts and sums**: each partition's exact per-group counts and lattice sums, added up on the driver,
   which draws the noise once;
5. **other statistics**: a shuffle by group code puts each group in one partition (groups must fit in a
   worker's memory); each partition releases its groups with the single-column functions, group g's
   statistic s drawing from stream g·S + s; groups with no row are released on the driver from the same
   streams, on empty data.

The law of every release is the in-memory one; the draws differ (streams instead of one sequence), so the
same seed gives another sample on Dask than in memory.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.accounting import Accountant, charge
from smoothdp.rng import SeedLike, StreamKey, default_rng, resolve_rng, stream_key
from smoothdp.scale.engine import SortedRecords
from smoothdp.tables.bounding import bound_contributions
from smoothdp.tables.frames import PandasFrame, build_pandas
from smoothdp.tables.groups import PublicKeys, combine_codes, normalise_key, sort_key
from smoothdp.tables.lattice_choice import LatticeChoice, column_counts
from smoothdp.tables.partition import select_keys
from smoothdp.tables.plan import PlannedStatistic
from smoothdp.tables.query import Query, build_query
from smoothdp.tables.range_choice import RangeChoice, column_range_counts
from smoothdp.tables.result import assemble
from smoothdp.tables.statistics import (
    GroupedColumn,
    StatisticResult,
    accepts_neighbours,
    choose_pooled,
    count_to_reuse,
    describe_release,
    group_call,
    noisy_counts,
    pooled_stage,
    positional_arguments,
    reuses_count,
    run_per_group,
    sum_meta,
)
from smoothdp.validation import as_float_array

__all__ = ["aggregate_dask"]

GROUP = "__smoothdp_group"
#: Streams of the bounding step start here (group statistics use streams g·S + s below it).
_BOUNDING_STREAMS = 1 << 62


def aggregate_dask(
    ddf: Any,
    *,
    by: Any,
    aggs: Any,
    bounds: Any,
    epsilon: Any,
    delta: Any,
    keys: Any,
    privacy_unit: Any,
    contributions: Any,
    max_groups: Any,
    neighbours: Any,
    weights: Any,
    accountant: Accountant | None,
    rng: SeedLike,
    return_release: bool,
) -> Any:
    """:func:`smoothdp.aggregate` on a Dask DataFrame (module docstring); a pandas result."""
    columns = [str(c) for c in ddf.columns]
    query = build_query(
        columns, by=by, aggs=aggs, bounds=bounds, epsilon=epsilon, delta=delta, keys=keys,
        privacy_unit=privacy_unit, contributions=contributions, max_groups=max_groups, neighbours=neighbours,
        weights=weights, accountant=accountant, return_release=return_release,
    )  # fmt: skip
    for c in query.plan.value_columns:
        if getattr(ddf.dtypes[c], "kind", "O") not in "biuf":  # the schema: pandas string dtypes have "O"
            raise TypeError(f"column {c!r} must be an array of real numbers; got dtype {ddf.dtypes[c]}")
    gen = resolve_rng(rng)
    charge(accountant, query.budget.guarantee, label=query.label())
    key = stream_key(gen)
    unit = [] if query.privacy_unit is None else [query.privacy_unit]
    data = ddf[list(dict.fromkeys([*(query.by or ()), *query.plan.value_columns, *unit]))]
    keys_info: dict[str, Any]
    if query.by is None:
        data = data.assign(**{GROUP: 0})
        labels: list[Any] = [None]
        keys_info = {"kind": "one group (by=None)"}
    elif isinstance(query.keys, PublicKeys):
        data = _assign_codes(data, query.by, query.keys)
        labels, keys_info = list(query.keys.labels), {"kind": "public", "count": len(query.keys)}
    if query.privacy_unit is not None:
        data = data.shuffle(on=query.privacy_unit)
        data = data.map_partitions(
            _bound_partition, query.privacy_unit, query.by, query.contributions, query.max_groups, key,
            meta=data._meta,
        )  # fmt: skip
        if query.by is None:  # the single-column functions read it in several passes: bound it once
            data = data.persist()
    if query.keys == "private":
        assert query.by is not None
        labels, selection = _select(data, query, gen)
        data = _assign_codes(data, query.by, PublicKeys(labels, len(query.by)))
        keys_info = {"kind": "private", **selection}
    results = _statistics(data, query, len(labels), key, gen)
    release = assemble("pandas", build_pandas, query, labels, keys_info, results, simulation=not key.secure)
    return release if return_release else release.frame


# -- keys and bounding, per partition -----------------------------------------------------------------------
def _partition_codes(pdf: Any, by: tuple[str, ...]) -> tuple[NDArray[np.int64], list[tuple[Hashable, ...]]]:
    frame = PandasFrame(pdf)
    factors = [frame.factorize(b) for b in by]
    return combine_codes([f[0] for f in factors], [f[1] for f in factors])


def _code_partition(pdf: Any, by: tuple[str, ...], keys: PublicKeys) -> Any:
    codes, uniques = _partition_codes(pdf, by)
    position = keys.positions(uniques)[codes] if len(pdf) else np.empty(0, dtype=np.int64)
    inside = position >= 0
    return pdf.iloc[np.flatnonzero(inside)].assign(**{GROUP: position[inside]})


def _assign_codes(data: Any, by: tuple[str, ...], keys: PublicKeys) -> Any:
    meta = data._meta.assign(**{GROUP: np.zeros(0, dtype=np.int64)})
    return data.map_partitions(_code_partition, by, keys, meta=meta)


def _bound_partition(
    pdf: Any,
    unit: str,
    by: tuple[str, ...] | None,
    rows: int,
    max_groups: int | None,
    key: StreamKey,
    partition_info: dict[str, Any] | None = None,
) -> Any:
    """Contribution bounding of the persons of one partition (all their rows are here after the shuffle),
    with the partition's own stream."""
    if not len(pdf):
        return pdf
    number = 0 if partition_info is None else int(partition_info["number"])
    units = PandasFrame(pdf).factorize(unit)[0]
    if GROUP in pdf.columns:
        groups = pdf[GROUP].to_numpy(np.int64)
    elif by is not None:
        groups = _partition_codes(pdf, by)[0]
    else:
        groups = np.zeros(len(pdf), dtype=np.int64)
    kept = bound_contributions(
        units, groups, rows=rows, max_groups=max_groups, rng=key.generator(_BOUNDING_STREAMS + number)
    )
    return pdf.iloc[kept]


def _select(data: Any, query: Query, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    """Private partition selection from the distinct persons per key (a small Series on the driver)."""
    assert query.by is not None
    by = list(query.by)
    if query.privacy_unit is None:
        sizes = data.groupby(by, dropna=False).size().compute()
    else:
        sizes = data[[*by, query.privacy_unit]].drop_duplicates().groupby(by, dropna=False).size().compute()
    persons: dict[tuple[Hashable, ...], int] = {}
    for idx, count in sizes.items():
        parts = idx if isinstance(idx, tuple) else (idx,)
        k = tuple(normalise_key(v) for v in parts)
        persons[k] = max(persons.get(k, 0), int(count))
    candidates = list(persons)
    keep, selection = select_keys(
        np.array([persons[c] for c in candidates], dtype=np.int64),
        epsilon=query.epsilon_keys,
        delta=query.budget.person_delta,
        max_groups=query.selection_groups,
        rng=rng,
    )
    chosen = sorted((c for c, k in zip(candidates, keep, strict=True) if k), key=sort_key)
    labels = [c[0] if len(by) == 1 else c for c in chosen]
    return labels, selection.as_dict()


# -- statistics ---------------------------------------------------------------------------------------------
#: One grouped statistic released on the workers: (its index in the plan, the statistic, each group's ε, the
#: public options of its pooled choice, the table's released counts if it reuses them).
PerGroup = tuple[int, PlannedStatistic, float, dict[str, Any], NDArray[Any] | None]


def _count_partition(pdf: Any, n_groups: int) -> NDArray[np.int64]:
    return np.bincount(pdf[GROUP].to_numpy(np.int64), minlength=n_groups).reshape(1, -1)


def _sum_partition(pdf: Any, column: str, n_groups: int, quantizer: Any) -> NDArray[Any]:
    from smoothdp.central.counting.batch import grouped_sums

    values = as_float_array(pdf[column], name=f"column {column!r}")
    return grouped_sums(values, pdf[GROUP].to_numpy(np.int64), n_groups, quantizer).reshape(1, -1)


#: The counts of a raw part of a column that each pooled pre-stage reads (they add up over partitions).
_STAGE_COUNTS = {"lattice": column_counts, "range": column_range_counts}


def _pooled_counts_partition(pdf: Any, column: str, bounds: tuple[float, float], kind: str) -> NDArray[Any]:
    """[rows, then the totals of the pooled pre-stage ``kind``] of one partition."""
    values = as_float_array(pdf[column], name=f"column {column!r}")
    return np.concatenate(([values.size], _STAGE_COUNTS[kind](values, bounds, name=column))).reshape(1, -1)


def _release_partition(
    pdf: Any,
    stats: list[PerGroup],
    bounds: dict[str, tuple[float, float]],
    neighbours: str,
    key: StreamKey,
    n_stats: int,
) -> Any:
    """Every group of one partition (whole groups, after the shuffle): one row per group, one column per
    output of each statistic (``"<index>:<position>"``)."""
    import pandas as pd

    codes = pdf[GROUP].to_numpy(np.int64)
    present = np.unique(codes)
    local = np.searchsorted(present, codes)
    out: dict[str, Any] = {GROUP: present}
    for index, stat, eps, options, released in stats:
        assert stat.column is not None
        values = as_float_array(pdf[stat.column], name=f"column {stat.column!r}")
        column = GroupedColumn(values, local, present.size, bounds[stat.column], name=stat.column)

        def stream(i: int, index: int = index) -> np.random.Generator:
            return key.generator(int(present[i]) * n_stats + index)

        result = run_per_group(
            stat, column, present.size, epsilon=eps, neighbours=neighbours, rng=stream, options=options,
            released_counts=None if released is None else released[present],
        )  # fmt: skip
        for j in range(len(stat.outputs)):
            out[f"{index}:{j}"] = result.values[:, j]
    return pd.DataFrame(out)


def _statistics(
    data: Any, query: Query, n_groups: int, key: StreamKey, rng: np.random.Generator
) -> list[StatisticResult]:
    import dask
    import pandas as pd

    from smoothdp.central.counting.queries import NoisySum

    budget = query.budget
    plan = query.plan
    n_stats = len(plan.statistics)
    pending: dict[str, Any] = {}
    sums: dict[int, Any] = {}
    per_group: list[PerGroup] = []
    parts = data.to_delayed()
    width = max(n_groups, 1)
    choices, count = _before_the_groups(parts, query, n_groups, rng)  # count: when a mean reuses it
    released_counts = None if count is None else count.values[:, 0]
    statistics = list(enumerate(zip(plan.statistics, query.epsilons, strict=True)))
    # each statistic's released counts, if it reuses them (public), for the workers and the driver alike
    reused = {
        i: released_counts if reuses_count(stat.name, query, eps) else None for i, (stat, eps) in statistics
    }
    for i, (stat, eps) in statistics:
        if stat.name == "count" and count is not None:
            continue
        if stat.name == "count" and not budget.direct:
            pending["count"] = [dask.delayed(_count_partition)(p, width) for p in parts]
        elif stat.name == "count":
            pending["rows"] = [dask.delayed(len)(p) for p in parts]
        elif stat.name == "sum":
            assert stat.column is not None
            mech = NoisySum(bounds=query.bounds[stat.column], epsilon=budget.per_group(eps),
                            neighbours=budget.call_neighbours)  # fmt: skip
            sums[i] = mech
            pending[f"sum{i}"] = [
                dask.delayed(_sum_partition)(p, stat.column, width, mech.quantizer) for p in parts
            ]
        else:
            per_group.append((i, stat, *group_call(budget.per_group(eps), choices.get(i)), reused[i]))
    if per_group and n_groups and query.by is not None:
        meta = pd.DataFrame({GROUP: np.zeros(0, np.int64)})
        for i, stat, _, _, _ in per_group:
            for j in range(len(stat.outputs)):
                meta[f"{i}:{j}"] = np.zeros(0)
        shuffled = data.shuffle(on=GROUP)
        pending["groups"] = shuffled.map_partitions(
            _release_partition, per_group, query.bounds, budget.call_neighbours, key, n_stats, meta=meta
        ).to_delayed()  # every pending computation delayed: one graph, one compute
    names = list(pending)
    computed = dict(zip(names, dask.compute(*(pending[n] for n in names)), strict=True))
    released = computed.get("groups")
    by_group = pd.concat(released).set_index(GROUP) if released else None
    results: list[StatisticResult] = []
    for i, (stat, eps) in statistics:
        if stat.name == "count" and count is not None:
            results.append(count)
        elif stat.name == "count" and budget.direct:
            rows = int(np.sum(computed["rows"]))
            results.append(StatisticResult(np.array([[rows]], dtype=np.int64), {}, False))
        elif stat.name == "count":
            counts = np.vstack([np.zeros((1, width), np.int64), *computed["count"]]).sum(axis=0)[:n_groups]
            results.append(noisy_counts(counts, epsilon=budget.per_group(eps), rng=rng))
        elif stat.name == "sum":
            mech = sums[i]
            exact = np.vstack([np.zeros((1, width), np.int64).astype(object), *computed[f"sum{i}"]])
            f = exact.sum(axis=0)[:n_groups]
            noisy = mech.quantizer.to_float(f + mech.noise.sample(f.shape, rng).astype(object))
            meta_sum = sum_meta(mech, budget.call_neighbours)
            values = np.asarray(noisy, dtype=np.float64).reshape(n_groups, 1)
            results.append(StatisticResult(values, meta_sum, not key.secure))
        elif query.by is not None:
            results.append(
                _gather(stat, i, by_group, n_groups, query, key, n_stats, choices.get(i), reused[i])
            )
        elif stat.column is not None:  # by=None: the single-column function on the Dask column itself
            results.append(_whole_column(stat, data[stat.column], eps, query, rng, reused[i], choices.get(i)))
    return results


def _before_the_groups(
    parts: list[Any], query: Query, n_groups: int, rng: np.random.Generator
) -> tuple[dict[int, LatticeChoice | RangeChoice], StatisticResult | None]:
    """What the driver releases before the groups, from one pass over the partitions: the pooled pre-stage of
    every grouped statistic that has one (a quantile's lattice choice, a mean's range decision; counts per
    column and kind) and the table's count when a mean reuses it; the draws in plan order, then the count,
    as the in-memory path makes them."""
    import dask

    budget = query.budget
    wanted = []
    for i, (stat, eps) in enumerate(zip(query.plan.statistics, query.epsilons, strict=True)):
        kind = pooled_stage(stat.name, budget.call_neighbours)
        if n_groups and kind is not None:  # by=None too: the one group's pooled stage, as in memory
            wanted.append((i, kind, str(stat.column), eps))
    count_epsilon = count_to_reuse(query)
    needed = sorted({(kind, column) for _, kind, column, _ in wanted})  # one pass per column and kind
    pending = [
        [dask.delayed(_pooled_counts_partition)(p, column, query.bounds[column], kind) for p in parts]
        for kind, column in needed
    ]
    width = max(n_groups, 1)
    if count_epsilon is not None:
        pending.append([dask.delayed(_count_partition)(p, width) for p in parts])
    if not pending:
        return {}, None
    computed = dask.compute(*pending)
    totals = {need: np.sum(np.vstack(counts), axis=0) for need, counts in zip(needed, computed, strict=False)}
    choices: dict[int, LatticeChoice | RangeChoice] = {}
    for i, kind, column, eps in wanted:
        total = totals[(kind, column)]
        choices[i] = choose_pooled(
            kind, total[1:], int(total[0]), bounds=query.bounds[column],
            epsilon_group=budget.per_group(eps), rng=rng,
        )  # fmt: skip
    if count_epsilon is None:
        return choices, None
    counts = np.vstack([np.zeros((1, width), np.int64), *computed[-1]]).sum(axis=0)[:n_groups]
    return choices, noisy_counts(counts, epsilon=budget.per_group(count_epsilon), rng=rng)


def _whole_column(
    stat: PlannedStatistic,
    column: Any,
    epsilon: float,
    query: Query,
    rng: np.random.Generator,
    released: NDArray[Any] | None = None,
    choice: LatticeChoice | RangeChoice | None = None,
) -> StatisticResult:
    """``by=None``: the single-column release on the Dask column (its own scale-out path: exact order
    statistics in rank windows on the workers, docs/scale.md), from the table's generator, at the statistic's
    per-group share ``epsilon`` (with the table's released count, for a mean beside it, and the pooled
    stage's choice and the ε it leaves, as in memory)."""
    assert stat.column is not None
    fn = stat.function()
    eps, options = group_call(query.budget.per_group(epsilon), choice)
    kwargs: dict[str, Any] = {"epsilon": eps, "bounds": query.bounds[stat.column], "accountant": None}
    if accepts_neighbours(fn):
        kwargs["neighbours"] = query.budget.call_neighbours
    if released is not None:
        kwargs["released_count"] = float(released[0])
    kwargs.update(options)
    release = fn(column, *positional_arguments(stat), rng=rng, **kwargs)
    values = np.atleast_1d(np.asarray(release.value, dtype=np.float64)).reshape(1, -1)
    meta = describe_release(release)
    return StatisticResult(values, meta if choice is None else choice.describe(meta), release.is_simulation)


def _gather(
    stat: PlannedStatistic,
    index: int,
    by_group: Any,
    n_groups: int,
    query: Query,
    key: StreamKey,
    n_stats: int,
    choice: LatticeChoice | RangeChoice | None = None,
    released: NDArray[Any] | None = None,
) -> StatisticResult:
    """The groups released on the workers, and the groups with no row released here on empty data (same
    streams and the same pooled choice, if any); the public description from one release
    on empty data with a throwaway generator."""
    budget = query.budget
    eps, options = group_call(budget.per_group(query.epsilons[index]), choice)
    width = len(stat.outputs)
    values = np.full((n_groups, width), np.nan)
    done = np.zeros(n_groups, dtype=bool)
    if by_group is not None and len(by_group):
        rows = by_group.index.to_numpy(np.int64)
        for j in range(width):
            values[rows, j] = by_group[f"{index}:{j}"].to_numpy(np.float64)
        done[rows] = True
    assert stat.column is not None
    bounds = query.bounds[stat.column]
    empty = SortedRecords(np.empty(0))
    empty.bounds = bounds
    fn = stat.function()
    kwargs: dict[str, Any] = {"epsilon": eps, "bounds": bounds, "accountant": None}
    if accepts_neighbours(fn):
        kwargs["neighbours"] = budget.call_neighbours
    kwargs.update(options)
    for g in np.flatnonzero(~done):
        if released is not None:
            kwargs["released_count"] = float(released[g])
        release = fn(
            empty, *positional_arguments(stat), rng=key.generator(int(g) * n_stats + index), **kwargs
        )
        values[g] = np.atleast_1d(np.asarray(release.value, dtype=np.float64))
    if released is not None:  # the description's example: a count of 0 (the description does not show it)
        kwargs["released_count"] = 0.0
    example = fn(empty, *positional_arguments(stat), rng=default_rng(0), **kwargs)
    meta = describe_release(example)
    if choice is not None:
        meta = choice.describe(meta)
    return StatisticResult(values, meta, not key.secure)
