"""``smoothdp release median|quantile|quantiles|trimmed-mean|mean FILE --column C --epsilon E ...``: one
central-DP statistic of a data column, by the library's entry point of the same name
(:func:`smoothdp.median`, :func:`~smoothdp.quantile`, :func:`~smoothdp.quantiles`,
:func:`~smoothdp.trimmed_mean`, :func:`~smoothdp.mean`) with its defaults.

Each option is the keyword of the same name (``--bounds private`` is ``bounds="private"``, ``--q`` the
level(s)); the release is printed by :func:`smoothdp.cli.output.print_release` and, with ``--budget``,
charged as :mod:`smoothdp.cli.budgeted` describes. ``release quantiles FILE --q 0.1 0.5 0.9`` releases
several quantiles under one ε, in the order asked.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from smoothdp.cli import grouped, inputs
from smoothdp.cli.budgeted import run_single_release
from smoothdp.cli.parsing import (
    NOISES,
    CliError,
    add_bounds_option,
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

__all__ = ["STATISTICS", "add_parsers", "expected_guarantee", "release_statistic"]

#: The central statistics, each the library function of the same name (``trimmed-mean``: trimmed_mean).
STATISTICS = ("median", "quantile", "quantiles", "trimmed-mean", "mean")
#: Methods of 'median' and 'quantile'; 'quantiles' also takes joint_exp and recursive.
METHODS = ("auto", "exponential", "smooth_sensitivity")
QUANTILES_METHODS = (*METHODS, "joint_exp", "recursive")
#: Methods of 'mean', under either relation (the library checks that the one asked for fits --neighbours).
MEAN_METHODS = ("auto", "clipped", "private_range", "smooth_sensitivity", "ratio", "noisy_sum")
#: --neighbours of 'mean', the library's ``neighbours=`` (default substitution: n public).
MEAN_NEIGHBOURS = ("substitution", "add_remove")
JSON_EXAMPLE = "smoothdp release median - --column age --epsilon 1 --bounds 0 125 --json < people.csv"
HELPS = {
    "median": "the private median (smoothdp.median)",
    "quantile": "one private quantile (smoothdp.quantile)",
    "quantiles": "several private quantiles under one ε (smoothdp.quantiles)",
    "trimmed-mean": "the private trimmed mean (smoothdp.trimmed_mean)",
    "mean": "the private mean (smoothdp.mean; substitution neighbours unless --neighbours add_remove)",
}
EXAMPLES = {
    "median": JSON_EXAMPLE,
    "quantile": "smoothdp release quantile people.csv --column age --q 0.9 --epsilon 1 --bounds 0 125",
    "quantiles": (
        "smoothdp release quantiles people.csv --column age --q 0.1 0.5 0.9 --epsilon 1 --bounds 0 125"
    ),
    "trimmed-mean": (
        "smoothdp release trimmed-mean people.csv --column age --trim 0.1 --epsilon 1 --bounds 0 125"
    ),
    "mean": "smoothdp release mean people.csv --column age --epsilon 1 --bounds 0 125 --budget budget.db",
}
JSON_HELP = "print one JSON object: the public fields (value at full precision) and 'simulation'"


def add_parsers(statistics: Any) -> None:
    """One parser per statistic, with the options its library function takes."""
    for name in STATISTICS:
        parser = subcommand(statistics, name, help=HELPS[name], example=EXAMPLES[name])
        parser.set_defaults(run=_run)
        inputs.add_data_options(parser)
        add_bounds_option(parser, private=name in ("median", "quantile", "quantiles"))
        if name in ("quantile", "quantiles"):
            parser.add_argument(
                "--q",
                type=float,
                nargs="+",
                default=None,
                metavar="Q",
                help="quantile level(s) in [0, 1]: one for 'quantile', one or more for 'quantiles'",
            )
        if name == "trimmed-mean":
            parser.add_argument("--trim", type=float, default=None, help="fraction trimmed from each end")
        if name in ("median", "quantile", "quantiles"):
            parser.add_argument(
                "--method",
                default="auto",
                choices=QUANTILES_METHODS,
                help=(
                    "method (default auto: chosen from public parameters, see docs/quantiles.md); "
                    "joint_exp and recursive are for 'quantiles' only"
                ),
            )
        if name == "mean":
            add_mean_options(parser)
        if name != "quantiles":
            add_noise_options(parser)
        add_numerics_option(parser)
        add_output_options(parser, json_help=JSON_HELP)
        add_engine_option(parser)
        add_budget_options(parser, relation="substitution or add_remove")
        grouped.add_group_options(parser, neighbours=name != "mean", delta=name == "quantiles")


def add_mean_options(parser: argparse.ArgumentParser) -> None:
    """``--neighbours`` and ``--method`` of the mean (:func:`smoothdp.mean`)."""
    parser.add_argument(
        "--neighbours",
        default="substitution",
        choices=MEAN_NEIGHBOURS,
        help=(
            "substitution (default: one record replaced, the record count public) or add_remove (one record "
            "added or removed, the count private); the release is ε-DP under it"
        ),
    )
    parser.add_argument(
        "--method",
        default="auto",
        choices=MEAN_METHODS,
        help=(
            "auto (default: chosen from public parameters, see docs/means.md); clipped, private_range and "
            "smooth_sensitivity under substitution; ratio (its auto), smooth_sensitivity and noisy_sum under "
            "add_remove"
        ),
    )


def add_noise_options(parser: argparse.ArgumentParser) -> None:
    """``--noise`` and ``--delta`` of the smooth-sensitivity mechanism."""
    parser.add_argument(
        "--noise",
        default=None,
        choices=NOISES,
        help="noise family of the smooth-sensitivity mechanism (default: polyplace; selects that method)",
    )
    parser.add_argument(
        "--delta",
        type=float,
        default=0.0,
        help="δ of the (ε, δ) guarantee; needed by --noise laplace only (default 0)",
    )


def _check_options(args: argparse.Namespace) -> None:
    """The options' own rules, before anything is read (the library checks the values' ranges)."""
    check_epsilon(args.epsilon)
    bounds_value(args)
    check_seed(args.seed)
    statistic = args.statistic
    if statistic == "quantiles" and args.q is None:
        raise CliError("'quantiles' needs --q, one or more quantile levels in [0, 1]")
    if statistic == "quantile" and (args.q is None or len(args.q) != 1):
        raise CliError("'quantile' needs one --q, the quantile level in [0, 1] (several: 'quantiles')")
    if statistic in ("median", "quantile") and args.method not in METHODS:
        raise CliError(
            f"--method {args.method} applies to 'quantiles' only; choose from: {', '.join(METHODS)}"
        )
    if statistic == "trimmed-mean" and args.trim is None:
        raise CliError("'trimmed-mean' needs --trim, the fraction trimmed from each end")


def expected_guarantee(args: argparse.Namespace) -> PrivacyGuarantee:
    """The guarantee the release will declare, from its public parameters only: ε (and δ) under
    ``--neighbours`` for the mean (default substitution), substitution for the others
    (tests/ledger/test_ledger_cli.py checks it against the library)."""
    from smoothdp.privacy import ApproxDP, PureDP

    neighbours = args.neighbours if args.statistic == "mean" else "substitution"
    delta = getattr(args, "delta", 0.0)
    try:
        if delta:
            return ApproxDP(args.epsilon, delta, neighbours=neighbours)
        return PureDP(args.epsilon, neighbours=neighbours)
    except ValueError as error:
        raise CliError(first_line(error)) from None


def release_statistic(args: argparse.Namespace, data: Any, accountant: Accountant | None = None) -> Release:
    """The library's entry point for the statistic, with its defaults (method, clipping, clamping); the
    library charges ``accountant`` (if any) before it draws the noise."""
    import smoothdp
    from smoothdp.rng import default_rng

    options: dict[str, Any] = {
        "epsilon": args.epsilon,
        "bounds": bounds_value(args),
        "numerics": args.numerics,
        "rng": default_rng(args.seed),
        "engine": inputs.dask_engine(args.engine),
    }
    if accountant is not None:
        options["accountant"] = accountant
    if getattr(args, "scale", None) is not None:
        options["scale"] = args.scale
    if args.statistic == "quantiles":
        return smoothdp.quantiles(data, args.q, method=args.method, **options)
    # Smooth-sensitivity options only when asked for: they select that method under method="auto".
    if args.noise is not None:
        options["noise"] = args.noise
    if args.delta:
        options["delta"] = args.delta
    if args.statistic == "median":
        return smoothdp.median(data, method=args.method, **options)
    if args.statistic == "quantile":
        return smoothdp.quantile(data, args.q[0], method=args.method, **options)
    if args.statistic == "trimmed-mean":
        return smoothdp.trimmed_mean(data, args.trim, **options)
    # --noise names a smooth-sensitivity family: under method auto it selects that method, as for the median.
    method = "smooth_sensitivity" if args.method == "auto" and args.noise is not None else args.method
    return smoothdp.mean(data, neighbours=args.neighbours, method=method, **options)


def _run(args: argparse.Namespace) -> int:
    if grouped.is_grouped(args):  # --by, --keys or --privacy-unit: a table by smoothdp.aggregate
        return grouped.run_grouped(args, grouped.statistic_request(args))
    if getattr(args, "neighbours", None) is not None and args.statistic != "mean":
        raise CliError(f"--neighbours applies to a grouped release of '{args.statistic}' (--by ...)")
    if args.budget is None:  # with --budget, the budget is checked first, before the file is touched
        inputs.check_source(args.file)
    _check_options(args)
    label = f"{args.statistic} of {args.column} in {inputs.source_label(args.file)}"
    return run_single_release(
        args,
        label,
        expected=lambda: expected_guarantee(args),
        read=lambda: inputs.load_column(args.file, args.column, args.engine),
        run=lambda data, accountant: release_statistic(args, data, accountant),
    )
