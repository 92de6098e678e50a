"""smoothdp.tables: a private grouped release of a data frame under one budget.

* :func:`aggregate`: per group, the statistics a user names (count, sum, mean, var, std, median, quantiles),
  each released by the same single-column function a user calls, on pandas, polars and Dask frames;
* :func:`describe`: count, mean, std and quartiles of every column with declared bounds, shaped like
  ``pandas.DataFrame.describe()``;
* :class:`TableRelease`: the result frame with its guarantee and the split of ε.

Without ``privacy_unit``, each row is one person. The layer adds no statistic of its own: it bounds each
person's contribution, chooses the keys, splits ε and charges one guarantee, proved in
docs/theory/tables.md. User guide: docs/tables.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = ["StatisticShare", "TableRelease", "aggregate", "describe"]

_EXPORTS = {
    "aggregate": "smoothdp.tables.grouped_release",
    "describe": "smoothdp.tables.summary",
    "StatisticShare": "smoothdp.tables.release",
    "TableRelease": "smoothdp.tables.release",
}

_SUBMODULES = (
    "bounding",
    "composition",
    "frames",
    "grouped_release",
    "groups",
    "partition",
    "plan",
    "query",
    "release",
    "result",
    "statistics",
    "summary",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.tables.grouped_release import aggregate
    from smoothdp.tables.release import StatisticShare, TableRelease
    from smoothdp.tables.summary import describe
