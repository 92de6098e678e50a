"""Grouped releases on the command line: one private table of a data file by :func:`smoothdp.aggregate`.

``smoothdp release STATISTIC FILE --column C --by G --keys KEYS ...`` (one statistic of one column per
group) and ``smoothdp release table FILE --stat C:S1,S2 ... --by G --keys KEYS ...`` (several; see
:mod:`smoothdp.cli.table`) both end here: the options become ``aggregate``'s keywords, the frame is read
from the file, and ``aggregate`` does everything else (no second implementation): keys, contribution
bounding, the split of ε, **one** charge for the whole table (parallel composition over the groups).

The frame: the value columns are numbers (a CSV cell that is empty or not a number is a missing value, as
for every release); the ``--by`` and ``--privacy-unit`` columns are **text** (a CSV cell as written,
stripped; a Parquet value as its text, a missing value the empty text), and ``--keys FILE`` lists the keys
as text: one per line for one ``--by`` column (blank lines skipped), or a CSV whose header names every
``--by`` column for several. Every public parameter is checked (by :func:`smoothdp.tables.query
.build_query`, the library's own check) before the data is read.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from smoothdp.cli import inputs, output
from smoothdp.cli.budgeted import Plan, execute
from smoothdp.cli.parsing import CliError, check_epsilon, check_seed, first_line

if TYPE_CHECKING:
    from smoothdp.accounting import Accountant
    from smoothdp.privacy import PrivacyGuarantee
    from smoothdp.tables import TableRelease

__all__ = [
    "TABLE_NEIGHBOURS",
    "GroupedRequest",
    "add_group_options",
    "is_grouped",
    "read_keys",
    "run_grouped",
    "table_rows",
]

#: The relations a table is released under (``--neighbours`` of a grouped release).
TABLE_NEIGHBOURS = ("substitution", "add_remove")
JSON_HELP = (
    "print one JSON object: 'table' (columns and rows, values at full precision), the guarantee, its "
    "neighbour relation, the split of ε ('statistics'), the keys, the proof, and 'simulation'"
)


def add_group_options(
    parser: argparse.ArgumentParser, *, neighbours: bool = True, delta: bool = True
) -> None:
    """``--by``, ``--keys``, ``--privacy-unit``, ``--contributions``, ``--max-groups`` (and ``--neighbours``,
    ``--delta`` where the command has none of its own)."""
    group = parser.add_argument_group("grouped release (smoothdp.aggregate; docs/cli.md#grouped-releases)")
    group.add_argument(
        "--by",
        action="append",
        default=None,
        metavar="COL",
        help="group by this text column (repeat for several); needs --keys",
    )
    group.add_argument(
        "--keys",
        default=None,
        metavar="FILE | private",
        help=(
            "the public group keys: a file with one key per line (several --by: a CSV whose header names "
            "them); every key listed gets a row, rows of other keys are dropped; or 'private': keys chosen "
            "from the data by thresholded noisy counts (needs --delta)"
        ),
    )
    group.add_argument(
        "--privacy-unit",
        default=None,
        metavar="COL",
        help="the column naming the person who owns a row (default: each row is one person)",
    )
    group.add_argument(
        "--contributions",
        type=int,
        default=1,
        metavar="K",
        help="rows kept per person (default 1; with --privacy-unit)",
    )
    group.add_argument(
        "--max-groups",
        type=int,
        default=None,
        metavar="L",
        help="groups kept per person (default: K; with --privacy-unit)",
    )
    if neighbours:
        group.add_argument(
            "--neighbours",
            default=None,
            choices=TABLE_NEIGHBOURS,
            help="the table's relation: substitution (default) or add_remove (a person added or removed)",
        )
    if delta:
        group.add_argument(
            "--delta",
            type=float,
            default=0.0,
            help="δ of the private key selection (--keys private only; default 0)",
        )


def is_grouped(args: argparse.Namespace) -> bool:
    """Whether the command asks for a grouped release (``--by``, ``--keys`` or ``--privacy-unit``)."""
    named = any(getattr(args, name, None) for name in ("by", "keys", "privacy_unit"))
    bounding = getattr(args, "contributions", 1) != 1 or getattr(args, "max_groups", None) is not None
    return named or bounding


class GroupedRequest:
    """What a grouped command asks ``aggregate`` for: ``aggs`` and ``bounds`` (public), and the label of
    the release (its ledger charge)."""

    def __init__(self, aggs: Mapping[str, list[str]], bounds: Mapping[str, tuple[float, float]], what: str):
        self.aggs = {column: list(specs) for column, specs in aggs.items()}
        self.bounds = dict(bounds)
        self.what = what


def read_keys(path: str, by: list[str]) -> list[Any]:
    """The public keys of ``--keys FILE`` (module docstring): strings, or tuples for several ``--by``."""
    from pathlib import Path

    if len(by) == 1:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise CliError(f"--keys: cannot read {path}: {error.strerror}") from None
        return [line.strip() for line in text.splitlines() if line.strip()]
    from smoothdp.data.csv_reader import read_csv

    if not Path(path).is_file():
        raise CliError(f"--keys: file not found: {path}")
    try:
        header, cells = read_csv(path)
    except ValueError as error:
        raise CliError(f"--keys: cannot read {path} as CSV: {error}") from None
    missing = [b for b in by if b not in cells]
    if missing:
        raise CliError(
            f"--keys: with several --by columns, {path} is a CSV whose header names them all "
            f"({', '.join(by)}); it lacks {', '.join(missing)} (it has: {', '.join(header)})"
        )
    rows = zip(*(cells[b] for b in by), strict=True)
    return [tuple(cell.strip() for cell in row) for row in rows if any(cell.strip() for cell in row)]


def _keys_value(args: argparse.Namespace) -> Any:
    if args.keys is None:
        return None
    if args.keys == "private":
        return "private"
    if not args.by:
        raise CliError("--keys applies to a grouped release: give --by COL (the column of the keys)")
    return read_keys(args.keys, args.by)


def _check_options(args: argparse.Namespace) -> None:
    check_epsilon(args.epsilon)
    check_seed(args.seed)
    if args.contributions < 1:
        raise CliError(f"--contributions must be an integer >= 1; got {args.contributions}")
    if args.max_groups is not None and args.max_groups < 1:
        raise CliError(f"--max-groups must be an integer >= 1; got {args.max_groups}")
    if args.privacy_unit is None and (args.contributions != 1 or args.max_groups is not None):
        raise CliError("--contributions and --max-groups need --privacy-unit COL (the person column)")
    if args.by and args.keys is None:
        raise CliError(
            "--by needs --keys: either a file of the public group keys (every key listed gets a row, empty "
            "groups too; rows of other keys are dropped) or --keys private (keys chosen privately from the "
            "data, with --delta > 0)"
        )


def _aggregate_keywords(args: argparse.Namespace, request: GroupedRequest, keys: Any) -> dict[str, Any]:
    return {
        "by": list(args.by) if args.by else None,
        "aggs": request.aggs,
        "bounds": request.bounds,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "keys": keys,
        "privacy_unit": args.privacy_unit,
        "contributions": args.contributions,
        "max_groups": args.max_groups,
        "neighbours": args.neighbours or "substitution",
    }


def _columns(args: argparse.Namespace, request: GroupedRequest) -> list[str]:
    unit = [args.privacy_unit] if args.privacy_unit is not None else []
    return list(dict.fromkeys([*(args.by or []), *request.aggs, *unit]))


def _text_columns(args: argparse.Namespace) -> list[str]:
    return list(dict.fromkeys([*(args.by or []), *([args.privacy_unit] if args.privacy_unit else [])]))


def expected_table_guarantee(
    args: argparse.Namespace, request: GroupedRequest, keys: Any
) -> PrivacyGuarantee:
    """The guarantee ``aggregate`` will charge, from the public parameters only (the library's own
    validation, run on the column names the options give: no data is read)."""
    from smoothdp.tables.query import build_query

    try:
        query = build_query(
            _columns(args, request), **_aggregate_keywords(args, request, keys), weights=None, accountant=None
        )
    except (ValueError, TypeError) as error:
        raise CliError(_option_message(first_line(error))) from None
    guarantee: PrivacyGuarantee = query.budget.guarantee
    return guarantee


#: The library's keywords and the command's options that set them.
_OPTIONS = {
    "privacy_unit": "--privacy-unit",
    "max_groups": "--max-groups",
    "contributions": "--contributions",
    "keys": "--keys",
    "delta": "--delta",
    "epsilon": "--epsilon",
    "neighbours": "--neighbours",
    "aggs": "--stat",
    "bounds": "--bounds",
    "by": "--by",
}


def _option_message(message: str) -> str:
    """The library's message, with its keywords (``keys=...``, or the first word) named as the options."""
    import re

    names = "|".join(_OPTIONS)
    message = re.sub(
        r"\b(aggs|bounds)\['([^']*)'\]", lambda m: f"{_OPTIONS[m.group(1)]} {m.group(2)}", message
    )
    message = re.sub(rf"\b({names})=", lambda m: _OPTIONS[m.group(1)] + " ", message)
    return re.sub(rf"^({names})\b", lambda m: _OPTIONS[m.group(1)], message)


def read_frame(path: str, args: argparse.Namespace, request: GroupedRequest) -> Any:
    """The frame of the columns the release uses: pandas (``--engine numpy``) or Dask (``--engine dask``),
    value columns as numbers and the key and person columns as text (module docstring)."""
    import pandas as pd

    values = [c for c in request.aggs if c not in _text_columns(args)]
    text = _text_columns(args)
    if inputs.is_parquet(path):
        return _read_parquet(path, args.engine, values, text)
    numbers, cells = inputs.read_mixed_columns(path, values, text)
    data: dict[str, Any] = dict(zip(values, numbers, strict=True))
    data.update({c: pd.Series(v, dtype=object) for c, v in zip(text, cells, strict=True)})
    frame = pd.DataFrame(data)
    if args.engine == "dask":
        import dask.dataframe as dd

        return dd.from_pandas(frame, npartitions=2)
    return frame


def _read_parquet(path: str, engine: str, values: list[str], text: list[str]) -> Any:
    columns = list(dict.fromkeys([*values, *text]))
    inputs.check_source(path)
    try:
        if engine == "dask":
            import dask.dataframe as dd

            frame = dd.read_parquet(path, columns=columns)
        else:
            import pandas as pd

            frame = pd.read_parquet(path, columns=columns)
    except ImportError as error:
        raise CliError(f"Parquet needs the dask extra (pip install 'smoothdp[dask]'): {error}") from None
    except (KeyError, ValueError, OSError) as error:
        raise CliError(f"cannot read columns {columns} of {path} as Parquet: {error}") from None
    for column in text:  # keys compared as text; a missing key is the empty text
        frame[column] = frame[column].astype("string").fillna("").astype(object)
    return frame


def table_rows(release: TableRelease) -> tuple[list[str], list[list[Any]]]:
    """The table as flat columns (the key columns, then ``<column>_<statistic>``) and rows of plain values
    (ints for counts, floats at full precision)."""
    frame = release.frame
    by = list(release.by or [])
    names = [f"{column}_{stat}" for column, stat in frame.columns]
    rows = []
    for label, values in zip(frame.index, frame.to_numpy(dtype=object), strict=True):
        key = [] if not by else (list(label) if len(by) > 1 else [label])
        rows.append([*(_plain(k) for k in key), *(_plain(v) for v in values)])
    return [*by, *names], rows


def _plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.integer | int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, np.floating | float):
        return float(value)
    return value if value is None else str(value)


def print_table(
    release: TableRelease, label: str, *, simulation: bool, budget: Any, json_output: bool
) -> None:
    """The table and its metadata (text, or one JSON object): public fields only."""
    columns, rows = table_rows(release)
    if json_output:
        payload = {"release": label, "table": {"columns": columns, "rows": rows}, **release.to_dict()}
        output.emit_json(output.json_safe(payload), simulation=simulation, budget=budget)
        return
    lines = [output.SIMULATION_BANNER] if simulation else []
    lines.append(output.field("release", label))
    lines.append(output.field("guarantee", release.guarantee_text))
    lines.append(output.field("keys", _keys_text(release.keys)))
    for share in release.statistics:
        where = share.statistic if share.column is None else f"{share.column}: {share.statistic}"
        lines.append(
            output.field(
                "ε split",
                f"{where}: ε = {output.num(share.epsilon)} (each group's call ε = "
                f"{output.num(share.epsilon_per_group)}, {share.neighbours}; {share.mechanism})",
            )
        )
    lines.append(output.field("proof", release.proof))
    if budget is not None:
        lines.extend(output.budget_lines(budget))
    lines.append("")
    lines.extend(_aligned([columns, *[[_cell(v) for v in row] for row in rows]]))
    if simulation:
        lines.append(output.SIMULATION_BANNER)
    print("\n".join(lines))


def _keys_text(keys: Mapping[str, Any]) -> str:
    kind = keys.get("kind")
    if kind == "public":
        return f"public, {keys.get('count')} listed (every one a row)"
    if kind == "private":
        extra = ", ".join(f"{k} = {v}" for k, v in keys.items() if k != "kind" and not isinstance(v, dict))
        return f"private (thresholded noisy counts{': ' + extra if extra else ''})"
    return str(kind)


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _aligned(table: list[list[str]]) -> list[str]:
    widths = [max(len(row[j]) for row in table) for j in range(len(table[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]


def run_grouped(args: argparse.Namespace, request: GroupedRequest) -> int:
    """Run a grouped release: options checked, keys read, the guarantee known before the data is read;
    then ``aggregate`` on the frame, charged once to ``--budget`` (if any), and the table printed."""
    if args.budget is None:
        inputs.check_source(args.file)
    _check_options(args)
    keys = _keys_value(args)
    expected = expected_table_guarantee(args, request, keys)  # every public parameter checked here
    source = inputs.source_label(args.file)
    by = f" by {', '.join(args.by)}" if args.by else ""
    label = f"{request.what}{by} in {source}"
    seeded = args.seed is not None

    def run(frame: Any, accountant: Accountant | None) -> TableRelease:
        import smoothdp
        from smoothdp.rng import default_rng

        release: TableRelease = smoothdp.aggregate(
            frame,
            **_aggregate_keywords(args, request, keys),
            accountant=accountant,
            rng=default_rng(args.seed),
            return_release=True,
        )
        return release

    def show(release: TableRelease, budget: Any) -> None:
        simulation = seeded or release.is_simulation
        print_table(release, label, simulation=simulation, budget=budget, json_output=args.json)

    plan = Plan(
        label=label + (" [simulation: seeded]" if seeded else ""),
        expected=lambda: expected,
        read=lambda: read_frame(args.file, args, request),
        run=run,
        show=show,
    )
    return execute(plan, args.budget, args.budget_key_file)


def statistic_request(args: argparse.Namespace) -> GroupedRequest:
    """The grouped form of ``release median|quantile|quantiles|trimmed-mean|mean``: its ``aggs`` spec
    (``quantile:Q``, ``quantiles:Q1,Q2``, ``trimmed_mean:F``); options of the single-column call that a
    table does not take are errors naming them."""
    if getattr(args, "noise", None) is not None or getattr(args, "method", "auto") != "auto":
        raise CliError(
            "--noise and --method do not apply to a grouped release: every group runs the statistic's "
            "default method (docs/tables.md)"
        )
    if args.numerics != "exact" or getattr(args, "scale", None) is not None:
        raise CliError("--numerics and --scale do not apply to a grouped release")
    if args.bounds is not None and list(args.bounds) == ["private"]:
        raise CliError("--bounds private does not apply to a grouped release: give public --bounds LOW HIGH")
    from smoothdp.cli.parsing import bounds_value

    statistic = args.statistic
    if statistic in ("quantile", "quantiles"):
        if not args.q or (statistic == "quantile" and len(args.q) != 1):
            raise CliError(
                f"'{statistic}' needs --q: {'one level' if statistic == 'quantile' else 'levels'} in [0, 1]"
            )
        spec = f"{statistic}:" + ",".join(f"{q:g}" for q in args.q)
    elif statistic == "trimmed-mean":
        if args.trim is None:
            raise CliError("'trimmed-mean' needs --trim, the fraction trimmed from each end")
        spec = f"trimmed_mean:{args.trim:g}"
    else:
        spec = statistic
    bounds = bounds_value(args)
    assert not isinstance(bounds, str)  # --bounds private is refused above
    return GroupedRequest({args.column: [spec]}, {args.column: bounds}, f"{statistic} of {args.column}")
