"""``smoothdp release count|sum|histogram|var|std FILE ...``: the counting queries and the moments of one
column, by the library's entry points of the same name (:func:`smoothdp.count`, :func:`~smoothdp.sum`,
:func:`~smoothdp.histogram`, :func:`~smoothdp.var`, :func:`~smoothdp.std`) with their defaults.

Each option is the keyword of the same name. count, sum and histogram add exact discrete Laplace noise
(``--noise gaussian``: discrete Gaussian, with ``--delta`` or ``--rho``) and are released under add/remove
neighbours by default (n private; ``--neighbours substitution``: one record replaced); var and std under
substitution by default. With ``--by``, ``--keys`` or ``--privacy-unit`` (not histogram: a histogram per
group is ``count --by GROUP --by CATEGORY``), the same statistic is released per group by
:func:`smoothdp.aggregate` (:mod:`smoothdp.cli.grouped`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from smoothdp.cli import grouped, inputs
from smoothdp.cli.budgeted import run_single_release
from smoothdp.cli.parsing import (
    CliError,
    add_budget_options,
    add_engine_option,
    add_numerics_option,
    add_output_options,
    bounds_value,
    check_epsilon,
    check_seed,
    first_line,
    subcommand,
)

if TYPE_CHECKING:
    from smoothdp.accounting import Accountant
    from smoothdp.privacy import PrivacyGuarantee
    from smoothdp.release import Release

__all__ = ["COMMANDS", "add_parsers", "expected_guarantee", "release_statistic"]

#: The commands of this module.
COMMANDS = ("count", "sum", "histogram", "var", "std")
#: Noise of the counting queries (the library's ``noise=``).
COUNT_NOISES = ("laplace", "gaussian")
#: Methods of var and std (:data:`smoothdp.central.moments_api.VARIANCE_METHODS`).
VARIANCE_METHODS = ("auto", "clipped", "private_range", "noisy_moments")
HELPS = {
    "count": "the private number of records (smoothdp.count; per group with --by)",
    "sum": "the private sum of a column clipped to --bounds (smoothdp.sum; per group with --by)",
    "histogram": "private counts over public --categories or --bins (smoothdp.histogram)",
    "var": "the private variance (smoothdp.var; per group with --by)",
    "std": "the private standard deviation (smoothdp.std; per group with --by)",
}
EXAMPLES = {
    "count": "smoothdp release count people.csv --epsilon 1 --json",
    "sum": "smoothdp release sum incomes.csv --column income --bounds 0 200000 --epsilon 1",
    "histogram": "smoothdp release histogram votes.csv --column vote --categories A B --epsilon 1",
    "var": "smoothdp release var people.csv --column age --bounds 0 125 --epsilon 1",
    "std": "smoothdp release std people.csv --column age --bounds 0 125 --epsilon 1",
}
JSON_HELP = "print one JSON object: the public fields (value at full precision) and 'simulation'"


def add_parsers(statistics: Any) -> None:
    """One parser per command, with the options its library function takes."""
    for name in COMMANDS:
        parser = subcommand(statistics, name, help=HELPS[name], example=EXAMPLES[name])
        parser.set_defaults(run=_run)
        inputs.add_data_options(
            parser,
            column_required=name != "count",
            column_help="the column to use"
            + (" (count: optional, every record counts)" if name == "count" else ""),
            epsilon_required=False,  # --rho may stand for it (gaussian noise)
        )
        if name in ("sum", "var", "std"):
            parser.add_argument(
                "--bounds",
                nargs=2,
                type=float,
                metavar=("LOW", "HIGH"),
                help="public bounds on the values (required; data outside them, ±inf included, is clipped)",
            )
        if name == "histogram":
            parser.add_argument(
                "--categories", nargs="+", default=None, metavar="V", help="the public categories, in order"
            )
            parser.add_argument(
                "--bins", nargs="+", type=float, default=None, metavar="EDGE", help="public bin edges"
            )
        default_relation = "substitution" if name in ("var", "std") else "add_remove"
        parser.add_argument(
            "--neighbours",
            default=None,
            choices=grouped.TABLE_NEIGHBOURS,
            help=(
                f"substitution (one record replaced) or add_remove (one record added or removed); default "
                f"{default_relation} (a grouped release: substitution)"
            ),
        )
        parser.add_argument(
            "--delta", type=float, default=0.0, help="δ of an (ε, δ) guarantee (or of --keys private)"
        )
        if name in ("var", "std"):
            parser.add_argument("--ddof", type=int, default=1, choices=(0, 1), help="0 or 1 (default 1)")
            parser.add_argument("--method", default="auto", choices=VARIANCE_METHODS, help="default auto")
            add_numerics_option(parser)
        else:
            parser.add_argument(
                "--noise",
                default="laplace",
                choices=COUNT_NOISES,
                help="laplace (default: discrete Laplace, pure ε-DP) or gaussian (discrete Gaussian)",
            )
            parser.add_argument(
                "--rho", type=float, default=None, metavar="R", help="ρ-zCDP instead of --epsilon (gaussian)"
            )
        add_output_options(parser, json_help=JSON_HELP)
        add_engine_option(parser)
        add_budget_options(parser, relation="substitution or add_remove")
        if name != "histogram":
            grouped.add_group_options(parser, neighbours=False, delta=False)


def _check_options(args: argparse.Namespace) -> None:
    check_seed(args.seed)
    rho = getattr(args, "rho", None)
    if args.epsilon is None and rho is None:
        raise CliError(
            "--epsilon E is required (ε > 0; count, sum, histogram: or --rho R with --noise gaussian)"
        )
    if args.epsilon is not None:
        check_epsilon(args.epsilon)
    if args.statistic == "histogram" and (args.categories is None) == (args.bins is None):
        raise CliError("'histogram' needs exactly one of --categories V [V ...] or --bins EDGE [EDGE ...]")


def expected_guarantee(args: argparse.Namespace) -> PrivacyGuarantee:
    """The guarantee the release will declare, from its public parameters only: the mechanism is built
    without data (count, sum, histogram) or the moments' rule, (ε[, δ]) under ``--neighbours``."""
    from smoothdp.central.counting.queries import NoisyCount, NoisyHistogram, NoisySum
    from smoothdp.privacy import ApproxDP, PureDP

    try:
        if args.statistic in ("var", "std"):
            relation = args.neighbours or "substitution"
            if args.delta:
                return ApproxDP(args.epsilon, args.delta, neighbours=relation)
            return PureDP(args.epsilon, neighbours=relation)
        keywords = _counting_keywords(args)
        if args.statistic == "count":
            return NoisyCount(**keywords).guarantee
        if args.statistic == "sum":
            return NoisySum(bounds=_bounds(args), **keywords).guarantee
        return NoisyHistogram(categories=_categories(args), bins=args.bins, **keywords).guarantee
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None


def _counting_keywords(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "epsilon": args.epsilon,
        "rho": args.rho,
        "delta": args.delta,
        "noise": args.noise,
        "neighbours": args.neighbours or "add_remove",
    }


def _bounds(args: argparse.Namespace) -> tuple[float, float]:
    """``--bounds LOW HIGH`` (two numbers: these commands take no ``--bounds private``)."""
    bounds = bounds_value(args)
    assert not isinstance(bounds, str)
    return bounds


def _numeric_categories(args: argparse.Namespace) -> list[float] | None:
    """The categories as numbers when every one is a number (the column is then read as numbers)."""
    try:
        return [float(c) for c in args.categories]
    except ValueError:
        return None


def _categories(args: argparse.Namespace) -> Any:
    if args.categories is None:
        return None
    numbers = _numeric_categories(args)
    return numbers if numbers is not None else list(args.categories)


def release_statistic(args: argparse.Namespace, data: Any, accountant: Accountant | None = None) -> Release:
    """The library's entry point for the command, with its defaults; it charges ``accountant`` (if any)
    before it draws the noise."""
    import smoothdp
    from smoothdp.rng import default_rng

    options: dict[str, Any] = {"rng": default_rng(args.seed)}
    if accountant is not None:
        options["accountant"] = accountant
    if args.statistic in ("var", "std"):
        function = smoothdp.var if args.statistic == "var" else smoothdp.std
        return function(
            data,
            epsilon=args.epsilon,
            bounds=_bounds(args),
            neighbours=args.neighbours or "substitution",
            method=args.method,
            ddof=args.ddof,
            delta=args.delta,
            numerics=args.numerics,
            engine=inputs.dask_engine(args.engine),
            **options,
        )
    options.update(_counting_keywords(args))
    if args.statistic == "count":
        return smoothdp.count(data, **options)
    if args.statistic == "sum":
        return smoothdp.sum(data, bounds=_bounds(args), **options)
    return smoothdp.histogram(data, categories=_categories(args), bins=args.bins, **options)


def _read(args: argparse.Namespace) -> Any:
    """The column (count without --column: one record per line, the first column's cells read as text)."""
    import numpy as np

    if args.statistic == "histogram" and args.categories is not None and _numeric_categories(args) is None:
        if inputs.is_parquet(args.file):
            return np.asarray(inputs.load_column(args.file, args.column), dtype=object)
        return np.asarray(inputs.read_text_column(args.file, args.column), dtype=object)
    if args.column is None:  # count: the records, whatever their cells hold
        return np.zeros(_record_count(args.file))
    data = inputs.load_column(args.file, args.column, args.engine)
    if args.statistic in ("count", "sum", "histogram") and not isinstance(data, np.ndarray):
        data = np.asarray(data.compute())  # the counting queries take an array (their sums are exact)
    return data


def _record_count(path: str) -> int:
    if inputs.is_parquet(path):
        import pandas as pd

        inputs.check_source(path)
        return len(pd.read_parquet(path, columns=[]))
    return inputs.record_count(path)


def _grouped_request(args: argparse.Namespace) -> grouped.GroupedRequest:
    if args.statistic == "histogram":
        raise CliError(
            "'histogram' takes no --by/--keys/--privacy-unit: a histogram per group is "
            "'smoothdp release count FILE --by GROUP --by CATEGORY --keys KEYS.csv'"
        )
    if args.statistic == "count":
        column = args.column or (args.by[0] if args.by else args.privacy_unit)
        return grouped.GroupedRequest({column: ["count"]}, {}, "count")
    return grouped.GroupedRequest(
        {args.column: [args.statistic]},
        {args.column: _bounds(args)},
        f"{args.statistic} of {args.column}",
    )


def _check_grouped(args: argparse.Namespace) -> None:
    """Options of the single-column call that a grouped release does not take."""
    if args.epsilon is None:
        raise CliError("--epsilon E is required: the budget of the whole table")
    if getattr(args, "rho", None) is not None:
        raise CliError("--rho does not apply to a grouped release (the table is (ε, δ)-DP: use --epsilon)")
    if getattr(args, "noise", "laplace") != "laplace":
        raise CliError(
            "--noise gaussian does not apply to a grouped release (every count is discrete Laplace)"
        )
    if getattr(args, "method", "auto") != "auto" or getattr(args, "numerics", "exact") != "exact":
        raise CliError(
            "--method and --numerics do not apply to a grouped release (every group runs the default method)"
        )
    if getattr(args, "ddof", 1) != 1:
        raise CliError("--ddof does not apply to a grouped release (every group's variance has ddof=1)")


def _run(args: argparse.Namespace) -> int:
    if grouped.is_grouped(args):
        _check_grouped(args)
        return grouped.run_grouped(args, _grouped_request(args))
    if args.budget is None:
        inputs.check_source(args.file)
    _check_options(args)
    if args.budget is None:
        expected_guarantee(args)  # every public parameter checked before the data is read
    of = f" of {args.column}" if args.column else " of records"
    return run_single_release(
        args,
        f"{args.statistic}{of} in {inputs.source_label(args.file)}",
        expected=lambda: expected_guarantee(args),
        read=lambda: _read(args),
        run=lambda data, accountant: release_statistic(args, data, accountant),
    )
