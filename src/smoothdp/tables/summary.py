"""``smoothdp.describe``: a private one-call summary of every column with declared bounds, shaped like
``pandas.DataFrame.describe()``.

For each column of ``bounds``: count, mean, std and the quartiles (25%, 50%, 75%, one JointExp or recursive
release for the three), under one ε for the whole summary. It is :func:`smoothdp.aggregate` with
``by=None``: under substitution with one row per person (the default), n is public, so the count is n
itself and each statistic is the single-column release at its share of ε
(docs/theory/tables.md#one-group-under-substitution). Rows: ``count, mean, std, 25%, 50%, 75%`` (no min
and max: the private 0- and 1-quantiles would be poor, and the declared bounds are not the data's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from smoothdp.accounting import Accountant
from smoothdp.keywords import check_keywords_of
from smoothdp.rng import SeedLike
from smoothdp.tables.frames import frame_kind, summary_frame
from smoothdp.tables.release import TableRelease

__all__ = ["SUMMARY_ROWS", "describe"]

#: The rows of the summary and the (statistic, output) they come from.
SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
    ("count", "count"),
    ("mean", "mean"),
    ("std", "std"),
    ("25%", "quantile_0.25"),
    ("50%", "quantile_0.5"),
    ("75%", "quantile_0.75"),
)
_AGGS = ["count", "mean", "std", "quantiles:0.25,0.5,0.75"]


def describe(
    df: Any,
    *,
    bounds: Mapping[str, tuple[float, float]],
    epsilon: float,
    privacy_unit: str | None = None,
    contributions: int = 1,
    neighbours: str | None = None,
    accountant: Accountant | None = None,
    rng: SeedLike = None,
    return_release: bool = False,
) -> Any:
    """Private count, mean, std and quartiles of every column of ``bounds``, under one budget ε.

    **Each row is one person** unless ``privacy_unit`` names the person column (then each person keeps
    at most ``contributions`` rows, at random). ``df``: a pandas, polars or Dask DataFrame; the result is a
    frame of the same library (Dask: pandas) with one column per column of ``bounds`` and the rows
    ``count, mean, std, 25%, 50%, 75%`` (polars: a first column ``statistic`` naming them, as polars'
    ``describe``). ε is split equally across the statistics (the count is free when n is public: one row
    per person under substitution). Other arguments as :func:`smoothdp.aggregate`; with
    ``return_release=True`` the :class:`~smoothdp.tables.release.TableRelease` (its ``frame`` the
    summary). Guarantee: (ε)-DP under ``neighbours`` (docs/theory/tables.md#the-whole-table).
    """
    from smoothdp.tables.grouped_release import aggregate

    if not isinstance(bounds, Mapping) or not bounds:
        raise TypeError(
            "bounds must be a non-empty mapping {column: (lower, upper)} of the columns to describe"
        )
    columns = [str(c) for c in bounds]
    release: TableRelease = aggregate(
        df, None, {c: _AGGS for c in columns}, bounds=bounds, epsilon=epsilon, privacy_unit=privacy_unit,
        contributions=contributions, neighbours=neighbours, accountant=accountant, rng=rng,
        return_release=True,
    )  # fmt: skip
    kind = frame_kind(df)
    data = [
        np.array([float(_cell(release.frame, kind, c, stat)) for _, stat in SUMMARY_ROWS]) for c in columns
    ]
    summary = summary_frame(kind, [name for name, _ in SUMMARY_ROWS], columns, data)
    if kind != "polars":
        summary.attrs["smoothdp"] = release.to_dict()
    out = dataclasses.replace(release, frame=summary)
    return out if return_release else summary


def _cell(frame: Any, kind: str, column: str, stat: str) -> Any:
    """The single value of (column, stat) in an ``aggregate`` result with one row."""
    if kind == "polars":
        return frame[f"{column}_{stat}"][0]
    return frame[column, stat].iloc[0]


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
