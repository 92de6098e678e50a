"""``smoothdp release table FILE --stat COL:STAT[,STAT...] ... --bounds COL=LOW,HIGH ... --epsilon E``:
several statistics of several columns, per group or of the whole file, in one private table under one ε
(:func:`smoothdp.aggregate`; the grouping options are :mod:`smoothdp.cli.grouped`'s).

``--stat`` (repeatable) names a column and its statistics, spelled as ``aggregate``'s ``aggs``:
``count``, ``sum``, ``mean``, ``var``, ``std``, ``median``, ``quantile:Q``, ``quantiles:Q1,Q2,...``,
``trimmed_mean:F`` (whole file only). The commas of a statistic's levels need no quoting: a number after a
comma belongs to the statistic before it (``--stat income:median,quantiles:0.25,0.75,mean``). ``--bounds``
(repeatable) gives a column's public bounds, ``COL=LOW,HIGH``, for every column with a statistic other
than count.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from smoothdp.cli import grouped, inputs
from smoothdp.cli.parsing import CliError, add_budget_options, add_output_options, subcommand

__all__ = ["add_parsers", "parse_bounds", "parse_stats"]

EXAMPLE = (
    "smoothdp release table data.csv --by county --keys keys.txt --stat income:median,mean "
    "--stat age:count --bounds income=0,1e6 --bounds age=0,125 --epsilon 1"
)
HELP = "several private statistics of several columns, per group (--by), under one ε (smoothdp.aggregate)"


def add_parsers(statistics: Any) -> None:
    parser = subcommand(statistics, "table", help=HELP, example=EXAMPLE)
    parser.set_defaults(run=_run)
    parser.add_argument("file", metavar="FILE", help=inputs.FILE_HELP)
    parser.add_argument(
        "--stat",
        action="append",
        required=True,
        metavar="COL:STAT[,STAT...]",
        help=(
            "a column and its statistics (repeatable): count, sum, mean, var, std, median, quantile:Q, "
            "quantiles:Q1,Q2,..., trimmed_mean:F (whole file only)"
        ),
    )
    parser.add_argument(
        "--bounds",
        action="append",
        default=[],
        metavar="COL=LOW,HIGH",
        help="public bounds of a column (repeatable; every column with a statistic other than count)",
    )
    parser.add_argument(
        "--epsilon", required=True, type=float, metavar="E", help="the budget ε > 0 of the table"
    )
    add_output_options(parser, json_help=grouped.JSON_HELP)
    parser.add_argument(
        "--engine",
        default="numpy",
        choices=("numpy", "dask"),
        help="numpy (default: pandas in process) or dask (a Dask frame: Parquet read lazily)",
    )
    add_budget_options(parser, relation="substitution or add_remove")
    grouped.add_group_options(parser)


def parse_stats(values: list[str]) -> dict[str, list[str]]:
    """``--stat`` values as ``aggs``: ``{column: [spec, ...]}`` (a column named twice gets both lists)."""
    aggs: dict[str, list[str]] = {}
    for value in values:
        column, sep, rest = value.partition(":")
        if not sep or not column or not rest:
            raise CliError(
                f"--stat takes COL:STAT[,STAT...] (e.g. income:median,mean or age:quantiles:0.25,0.75); "
                f"got {value!r}"
            )
        specs: list[str] = []
        for token in rest.split(","):
            token = token.strip()
            if specs and _is_number(token):  # a level of the statistic before it
                specs[-1] += ("," if ":" in specs[-1] else ":") + token
            elif token:
                specs.append(token)
        if not specs:
            raise CliError(f"--stat {value!r} names no statistic")
        aggs.setdefault(column, []).extend(specs)
    return aggs


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse_bounds(values: list[str]) -> dict[str, tuple[float, float]]:
    """``--bounds`` values as ``bounds``: ``{column: (low, high)}`` with finite LOW < HIGH."""
    bounds: dict[str, tuple[float, float]] = {}
    for value in values:
        column, sep, rest = value.rpartition("=")
        parts = rest.split(",")
        try:
            low, high = (float(p) for p in parts)
        except ValueError:
            low = high = math.nan
        if not sep or not column or len(parts) != 2 or not (math.isfinite(low) and math.isfinite(high)):
            raise CliError(
                f"--bounds takes COL=LOW,HIGH with two finite numbers (e.g. age=0,125); got {value!r}"
            )
        if not low < high:
            raise CliError(f"--bounds {column}: LOW < HIGH is required; got {low:g},{high:g}")
        if column in bounds:
            raise CliError(f"--bounds {column} given twice")
        bounds[column] = (low, high)
    return bounds


def _run(args: argparse.Namespace) -> int:
    aggs = parse_stats(args.stat)
    bounds = parse_bounds(args.bounds)
    unused = sorted(set(bounds) - set(aggs))
    if unused:
        raise CliError(f"--bounds {', '.join(unused)}: no --stat names that column")
    for column, specs in aggs.items():
        if column not in bounds and any(spec.partition(":")[0] != "count" for spec in specs):
            raise CliError(
                f"--bounds {column}=LOW,HIGH is required: public bounds of {column!r} for "
                f"{', '.join(s for s in specs if s != 'count')} (deriving them from the data would leak it)"
            )
    what = "table of " + ", ".join(f"{column}: {','.join(specs)}" for column, specs in aggs.items())
    return grouped.run_grouped(args, grouped.GroupedRequest(aggs, bounds, what))
