"""``smoothdp.aggregate``: a private grouped release of a data frame under one budget.

Without ``privacy_unit`` each row is one person. The steps (docs/tables.md; proofs in
docs/theory/tables.md): parameters checked from the schema alone (:mod:`~smoothdp.tables.query`), the
accountant charged once, then on the data: rows of unlisted keys dropped (public keys), contribution
bounding (:mod:`~smoothdp.tables.bounding`), private key selection (:mod:`~smoothdp.tables.partition`), and
every statistic of every group by the single-column entry points (:mod:`~smoothdp.tables.statistics`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.accounting import Accountant, charge
from smoothdp.keywords import check_keywords_of
from smoothdp.rng import SeedLike, is_secure, resolve_rng
from smoothdp.tables.bounding import bound_contributions
from smoothdp.tables.frames import Frame, frame_kind, read_frame
from smoothdp.tables.groups import PublicKeys, combine_codes, sort_key
from smoothdp.tables.lattice_choice import LatticeChoice
from smoothdp.tables.partition import select_keys
from smoothdp.tables.query import Query, build_query
from smoothdp.tables.range_choice import RangeChoice
from smoothdp.tables.result import assemble
from smoothdp.tables.statistics import (
    GroupedColumn,
    StatisticResult,
    choose_pooled,
    count_to_reuse,
    group_call,
    pooled_stage,
    reuses_count,
    run_count,
    run_per_group,
    run_sum,
)

__all__ = ["Groups", "aggregate", "group_rows", "pooled_choice", "run_statistics"]


@dataclass(frozen=True)
class Groups:
    """The rows that take part, their group (0 … G − 1), and the G output keys in output order.

    ``rows``: indices into the frame (``slice(None)``: every row, no copy); ``codes``: the group of each of
    those rows; ``labels``: the key of each group as the output shows it; ``keys_info``: how the keys were
    chosen (public metadata)."""

    rows: NDArray[np.intp] | slice
    codes: NDArray[np.int64]
    labels: list[Any]
    keys_info: dict[str, Any]


def aggregate(
    df: Any,
    by: str | Sequence[str] | None = None,
    aggs: Mapping[str, str | Sequence[str]] | None = None,
    *,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    epsilon: float,
    delta: float = 0.0,
    keys: Sequence[Any] | str | None = None,
    privacy_unit: str | None = None,
    contributions: int = 1,
    max_groups: int | None = None,
    neighbours: str | None = None,
    weights: Mapping[Any, float] | None = None,
    accountant: Accountant | None = None,
    rng: SeedLike = None,
    return_release: bool = False,
) -> Any:
    """Private statistics of every group of a data frame, under one budget ε.

    **Each row is one person unless** ``privacy_unit`` names the column of the person who owns it; then
    each person keeps at most ``contributions`` rows in at most ``max_groups`` groups (chosen at random
    before anything is computed) and the guarantee is per person.

    Parameters
    ----------
    df
        A pandas, polars or Dask DataFrame. The result is of the same library (Dask: pandas).
    by
        A column, a list of columns, or ``None`` (the whole frame is one group).
    aggs
        ``{column: statistic or [statistics]}``: ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
        ``"median"``, ``"quantile:0.9"``, ``"quantiles:0.25,0.5,0.75"`` (one column per q);
        :mod:`smoothdp.tables.plan` lists them and their output names. Each group's statistic is the
        single-column function's release (its default method), with the group's share of ε.
    bounds
        ``{column: (lower, upper)}``, public, for every column with a statistic other than count.
    epsilon, delta
        The budget of the whole table, split across the statistics (and the key selection) by ``weights``
        (default: equal shares); δ > 0 only with ``keys="private"`` (required there).
    keys
        With ``by``: the public list of keys (every listed key gets a row, empty groups included; rows of
        other keys are dropped first; one value per key, a tuple for several ``by`` columns; ``None`` or
        NaN is the null key), or ``"private"`` (keys chosen from the data by thresholded noisy counts,
        (ε, δ)). Grouping without ``keys`` is an error.
    privacy_unit, contributions, max_groups
        The person column, k rows per person (default 1), l groups per person (default: k).
    neighbours
        ``"substitution"`` (one person's rows replaced by another's) or ``"add_remove"`` (a person added or
        removed); default: the accountant's, else substitution.
    weights
        Relative shares of ε: ``{(column, spec): w, "keys": w}`` (default 1 each).
    accountant, rng
        Charged once for the whole table (before any randomness is drawn); the generator of every draw.
    return_release
        Return the :class:`~smoothdp.tables.release.TableRelease` (``.frame`` and the metadata) instead of
        the frame. A pandas result carries the metadata in ``out.attrs["smoothdp"]`` either way.

    Returns
    -------
    DataFrame or TableRelease
        pandas: indexed by the keys, ``MultiIndex`` columns ``(column, statistic)``; polars: the key
        columns, then ``<column>_<statistic>`` columns. Counts are integers, the rest floats.

    Guarantee: (ε, δ)-DP of the whole table under ``neighbours``, per person: parallel composition over
    the disjoint groups, group privacy over a person's rows (docs/theory/tables.md#the-whole-table).
    """
    kind = frame_kind(df)
    if kind == "dask":
        from smoothdp.tables.dask_tables import aggregate_dask

        return aggregate_dask(
            df, by=by, aggs=aggs, bounds=bounds, epsilon=epsilon, delta=delta, keys=keys,
            privacy_unit=privacy_unit, contributions=contributions, max_groups=max_groups,
            neighbours=neighbours, weights=weights, accountant=accountant, rng=rng,
            return_release=return_release,
        )  # fmt: skip
    frame = read_frame(df)
    query = build_query(
        frame.columns, by=by, aggs=aggs, bounds=bounds, epsilon=epsilon, delta=delta, keys=keys,
        privacy_unit=privacy_unit, contributions=contributions, max_groups=max_groups, neighbours=neighbours,
        weights=weights, accountant=accountant, return_release=return_release,
    )  # fmt: skip
    gen = resolve_rng(rng)
    charge(accountant, query.budget.guarantee, label=query.label())
    groups = group_rows(frame, query, gen)
    results = run_statistics(frame, query, groups, gen)
    release = assemble(
        frame.kind,
        frame.build,
        query,
        groups.labels,
        groups.keys_info,
        results,
        simulation=not is_secure(gen),
    )
    return release if return_release else release.frame


# -- the rows and their groups ----------------------------------------------------------------------------
def _key_codes(frame: Frame, by: tuple[str, ...]) -> tuple[NDArray[np.int64], list[tuple[Hashable, ...]]]:
    factors = [frame.factorize(b) for b in by]
    return combine_codes([f[0] for f in factors], [f[1] for f in factors])


def group_rows(frame: Frame, query: Query, rng: np.random.Generator) -> Groups:
    """Drop the rows of unlisted keys, bound each person's contribution, select the keys privately if asked:
    the rows that take part and their group codes (module docstring of :mod:`smoothdp.tables.groups`)."""
    n = frame.n_rows
    rows: NDArray[np.intp] | slice = slice(None)
    if query.by is None:
        codes = np.zeros(n, dtype=np.int64)
        labels: list[Any] = [None]
        info: dict[str, Any] = {"kind": "one group (by=None)"}
    else:
        key_codes, uniques = _key_codes(frame, query.by)
        if isinstance(query.keys, PublicKeys):
            position = query.keys.positions(uniques)[key_codes] if n else np.empty(0, dtype=np.int64)
            labels = list(query.keys.labels)
            listed = position >= 0
            if listed.all():  # nothing to drop: no copy of the columns
                codes = position
            else:
                rows = np.flatnonzero(listed)
                codes = position[rows]
            info = {"kind": "public", "count": len(labels)}
        else:
            codes = key_codes
            labels = uniques  # candidates, until the selection below
            info = {"kind": "private"}
    units: NDArray[np.int64] | None = None
    if query.privacy_unit is not None:
        rows = np.arange(n)[rows]
        units = frame.factorize(query.privacy_unit)[0][rows]
        kept = bound_contributions(
            units, codes, rows=query.contributions, max_groups=query.max_groups, rng=rng
        )
        rows, codes, units = rows[kept], codes[kept], units[kept]
    if query.keys == "private":
        rows = np.arange(n)[rows]
        rows, codes, labels, selection = _select(rows, codes, units, labels, query, rng)
        info.update(selection)
    return Groups(rows, codes, labels, info)


def _select(
    rows: NDArray[np.intp],
    codes: NDArray[np.int64],
    units: NDArray[np.int64] | None,
    candidates: list[tuple[Hashable, ...]],
    query: Query,
    rng: np.random.Generator,
) -> tuple[NDArray[np.intp], NDArray[np.int64], list[Any], dict[str, Any]]:
    """Private partition selection over the keys present after bounding; selected keys in sorted order."""
    present, local = np.unique(codes, return_inverse=True)
    local = local.ravel()
    if units is None:  # each row a person
        persons = np.bincount(local, minlength=present.size)
    else:
        pairs = np.unique(np.stack((local, units), 1), axis=0) if local.size else np.empty((0, 2), np.int64)
        persons = np.bincount(pairs[:, 0], minlength=present.size)
    keep, selection = select_keys(
        persons.astype(np.int64),
        epsilon=query.epsilon_keys,
        delta=query.budget.person_delta,
        max_groups=query.selection_groups,
        rng=rng,
    )
    chosen = [candidates[int(c)] for c in present[keep]]
    order = sorted(range(len(chosen)), key=lambda i: sort_key(chosen[i]))
    new_code = np.full(present.size, -1, dtype=np.int64)
    new_code[np.flatnonzero(keep)[order]] = np.arange(len(order))
    mapped = new_code[local]
    inside = mapped >= 0
    n_by = len(query.by or ())
    labels = [chosen[i][0] if n_by == 1 else chosen[i] for i in order]
    return rows[inside], mapped[inside], labels, selection.as_dict()


# -- the statistics ----------------------------------------------------------------------------------------
def run_statistics(
    frame: Frame, query: Query, groups: Groups, rng: np.random.Generator
) -> list[StatisticResult]:
    """Every planned statistic over the groups, in plan order (one sort per value column)."""
    n_groups = len(groups.labels)
    columns: dict[str, GroupedColumn] = {}
    results = []
    budget = query.budget
    count = _released_count(query, groups.codes, n_groups, rng)  # first: a mean beside it reuses it
    for stat, eps in zip(query.plan.statistics, query.epsilons, strict=True):
        if stat.name == "count":
            if count is not None:
                results.append(count)
            elif budget.direct:  # one group under substitution: n is public (the free, exact answer)
                results.append(StatisticResult(np.array([[groups.codes.size]], dtype=np.int64), {}, False))
            else:
                results.append(run_count(groups.codes, n_groups, epsilon=budget.per_group(eps), rng=rng))
            continue
        assert stat.column is not None
        if stat.name == "sum":
            results.append(
                run_sum(
                    frame.values(stat.column)[groups.rows],
                    groups.codes,
                    n_groups,
                    bounds=query.bounds[stat.column],
                    epsilon=budget.per_group(eps),
                    neighbours=budget.call_neighbours,
                    rng=rng,
                )
            )
            continue
        if stat.column not in columns:
            columns[stat.column] = GroupedColumn(
                frame.values(stat.column)[groups.rows],
                groups.codes,
                n_groups,
                query.bounds[stat.column],
                name=stat.column,
            )
        column = columns[stat.column]
        eps_group = budget.per_group(eps)
        choice = pooled_choice(stat.name, budget.call_neighbours, column, eps_group, rng)
        eps_call, options = group_call(eps_group, choice)
        reused = count.values[:, 0] if count is not None and reuses_count(stat.name, query, eps) else None
        result = run_per_group(
            stat,
            column,
            n_groups,
            epsilon=eps_call,
            neighbours=budget.call_neighbours,
            rng=rng,
            options=options,
            released_counts=reused,
        )
        if choice is not None:
            result = StatisticResult(result.values, choice.describe(result.meta), result.is_simulation)
        results.append(result)
    return results


def _released_count(
    query: Query, codes: NDArray[np.int64], n_groups: int, rng: np.random.Generator
) -> StatisticResult | None:
    """The table's count released ahead of the other statistics when one reuses it (a grouped mean beside a
    count: docs/theory/tables.md#a-mean-beside-a-count), else ``None`` (released in plan order)."""
    eps = count_to_reuse(query)
    return None if eps is None else run_count(codes, n_groups, epsilon=query.budget.per_group(eps), rng=rng)


def pooled_choice(
    name: str, call_neighbours: str, column: GroupedColumn, epsilon_group: float, rng: np.random.Generator
) -> LatticeChoice | RangeChoice | None:
    """The pooled pre-stage of one statistic (:func:`~smoothdp.tables.statistics.pooled_stage`), run once for
    every group on the column's counts, or ``None``."""
    kind = pooled_stage(name, call_neighbours)
    if kind is None:
        return None
    counts = column.pooled_counts(kind)
    return choose_pooled(
        kind, counts, column.values.size, bounds=column.bounds, epsilon_group=epsilon_group, rng=rng
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
