"""The result of a grouped release, assembled from the statistics' values: the frame in the input's library
and its :class:`~smoothdp.tables.release.TableRelease` (shared by the in-memory and the Dask paths)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smoothdp.tables.query import Query
from smoothdp.tables.release import StatisticShare, TableRelease
from smoothdp.tables.statistics import StatisticResult

__all__ = ["assemble"]


def _share(query: Query, index: int, result: StatisticResult) -> StatisticShare:
    stat = query.plan.statistics[index]
    eps = query.epsilons[index]
    budget = query.budget
    if stat.name == "count" and budget.direct:
        return StatisticShare(
            None, "count", stat.outputs, 0.0, 0.0, "substitution",
            mechanism="the exact number of rows (public under substitution with one group)",
            proof="docs/theory/tables.md#one-group-under-substitution",
        )  # fmt: skip
    meta = result.meta
    return StatisticShare(
        stat.column,
        stat.spec,
        stat.outputs,
        eps,
        budget.per_group(eps),
        budget.call_neighbours,
        mechanism=meta.get("mechanism", ""),
        method=meta.get("method"),
        proof=meta.get("proof", ""),
        source=meta.get("source", ""),
        details=meta.get("details", {}),
    )


def assemble(
    kind: str,
    build: Callable[..., Any],
    query: Query,
    labels: list[Any],
    keys_info: dict[str, Any],
    results: list[StatisticResult],
    *,
    simulation: bool,
) -> TableRelease:
    """The result frame (``build(by, labels, columns, data)``, columns in the order of ``aggs``) and its
    :class:`TableRelease`; a pandas result (``kind``) carries the metadata in ``attrs["smoothdp"]``."""
    columns = [(c.column, c.name) for c in query.plan.columns]
    data = [results[c.statistic].values[:, c.position] for c in query.plan.columns]
    out = build(query.by, labels, columns, data)
    shares = tuple(_share(query, i, r) for i, r in enumerate(results))
    unit = {
        "privacy_unit": query.privacy_unit,
        "rows_per_person": query.contributions,
        "groups_per_person": query.max_groups,
    }
    release = TableRelease(
        frame=out,
        guarantee=query.budget.guarantee,
        statistics=shares,
        keys=keys_info,
        unit=unit,
        by=query.by,
        is_simulation=simulation or any(r.is_simulation for r in results),
    )
    if kind == "pandas":
        out.attrs["smoothdp"] = release.to_dict()
    return release
