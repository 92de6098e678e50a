"""``smoothdp release geo-threshold|geo-range FILE --column C ... --epsilon E``: geo-privacy in the local
model (:mod:`smoothdp.geo`). Each row of the column is one user's private value; each user's report is
f(x) + S_β(x)·Z (:class:`smoothdp.geo.SmoothSensitivityMechanism`), and the estimate is the mean of the
reports (:meth:`~smoothdp.geo.SmoothSensitivityMechanism.estimate`, post-processing of the reports).

* ``geo-threshold --threshold T --width W``: :class:`smoothdp.geo.SoftThreshold` (T, W): the share of users
  above T, smoothed over the band [T − W/2, T + W/2]. Several ``--threshold`` (or ``--width``) values make a
  grid of queries: one report per query and user, the guarantee composed over them (Q·ε).
* ``geo-range --bounds LOW HIGH --width W``: :class:`smoothdp.geo.BoundedRange`: the share of users in
  [LOW, HIGH] (the library's ``bounds=``: the range counted, not a clipping range), smoothed over W.

``--epsilon`` is ε per unit of the column's values (per dollar, per metre): the guarantee is
``GeoPrivacy(ε)`` per user (neighbours ``"metric"``). ``--noise``, ``--delta``, ``--beta`` and
``--numerics`` are the mechanism's keywords. ``--reports OUT.csv`` writes every user's report (one row per
user in the file's order, one column per query: ``report`` or ``report_1`` … ``report_Q`` in the order of
the thresholds), the floats at full precision. Printed: the estimate (mean and total of the reports, and
the number of users, public in the local model); for the data holder, the estimate's standard deviation
(computed from the data: NOT private). ``--budget LEDGER``: a geo-privacy ledger (``smoothdp budget init
... --neighbours metric``) is charged the guarantee of one call.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smoothdp.cli import inputs
from smoothdp.cli.budgeted import Plan, execute
from smoothdp.cli.output import (
    SIMULATION_BANNER,
    budget_lines,
    emit_json,
    field,
    json_safe,
    not_private,
    values_text,
)
from smoothdp.cli.parsing import (
    NOISES,
    NUMERICS,
    CliError,
    add_budget_options,
    add_output_options,
    check_epsilon,
    check_seed,
    first_line,
    subcommand,
)

if TYPE_CHECKING:
    from smoothdp.accounting import Accountant
    from smoothdp.geo import GeoEstimate, SmoothSensitivityMechanism
    from smoothdp.release import Release

__all__ = ["GEO_STATISTICS", "add_parsers", "build_mechanism"]

GEO_STATISTICS = ("geo-threshold", "geo-range")
EXAMPLES = {
    "geo-threshold": (
        "smoothdp release geo-threshold incomes.csv --column income --threshold 10000 --width 1600 "
        "--epsilon 0.00125 --reports reports.csv"
    ),
    "geo-range": (
        "smoothdp release geo-range incomes.csv --column income --bounds 20000 60000 --width 4000 "
        "--epsilon 0.0005"
    ),
}
HELPS = {
    "geo-threshold": "geo-privacy, local model: the share of users above a threshold (geo.SoftThreshold)",
    "geo-range": "geo-privacy, local model: the share of users in a range (geo.BoundedRange)",
}


def add_parsers(statistics: Any) -> None:
    for name in GEO_STATISTICS:
        parser = subcommand(statistics, name, help=HELPS[name], example=EXAMPLES[name])
        parser.set_defaults(run=_run)
        parser.add_argument("file", metavar="FILE", help=inputs.FILE_HELP + "; each row is one user")
        parser.add_argument("--column", required=True, metavar="C", help="the users' values")
        if name == "geo-threshold":
            parser.add_argument(
                "--threshold",
                required=True,
                type=float,
                nargs="+",
                metavar="T",
                help="the threshold t (several: a grid of queries, one report each)",
            )
        else:
            parser.add_argument(
                "--bounds",
                required=True,
                type=float,
                nargs=2,
                metavar=("LOW", "HIGH"),
                help="the range counted (BoundedRange's bounds=; HIGH − LOW ≥ width)",
            )
        parser.add_argument(
            "--width",
            required=True,
            type=float,
            nargs="+" if name == "geo-threshold" else None,
            metavar="W",
            help="the band over which the indicator is smoothed (> 0; the query's Lipschitz constant is 1/W)",
        )
        parser.add_argument(
            "--epsilon",
            required=True,
            type=float,
            metavar="E",
            help="ε > 0 per unit of the values (geo-privacy: per dollar, per metre, ...), per query",
        )
        parser.add_argument(
            "--noise",
            default="polyplace",
            choices=NOISES,
            help="noise family (default polyplace; student_t is the paper's T(3))",
        )
        parser.add_argument(
            "--delta", type=float, default=0.0, help="δ per query; needed by --noise laplace only (default 0)"
        )
        parser.add_argument(
            "--beta", type=float, default=None, help="the smoothness β (default: the noise rule's own)"
        )
        parser.add_argument(
            "--numerics",
            default="exact",
            choices=NUMERICS,
            help="exact (default: every report rounded exactly onto a public grid) or float (not hardened)",
        )
        parser.add_argument(
            "--reports",
            default=None,
            metavar="OUT.csv",
            help="write every user's report there (one row per user, one column per query)",
        )
        add_output_options(
            parser,
            json_help="print one JSON object: the public fields, 'value' the estimate, and 'simulation'",
        )
        add_budget_options(parser, relation="a geo-privacy budget: budget init --neighbours metric")


def build_mechanism(args: argparse.Namespace) -> SmoothSensitivityMechanism:
    """The query and mechanism from the options alone (no data): the library checks every value."""
    from smoothdp.geo import BoundedRange, SmoothSensitivityMechanism, SoftThreshold

    check_epsilon(args.epsilon)
    try:
        if args.statistic == "geo-threshold":
            query: Any = SoftThreshold(
                threshold=_scalar_or_grid(args.threshold), width=_scalar_or_grid(args.width)
            )
        else:
            query = BoundedRange(bounds=(args.bounds[0], args.bounds[1]), width=args.width)
        return SmoothSensitivityMechanism(
            query,
            epsilon=args.epsilon,
            noise=args.noise,
            delta=args.delta,
            beta=args.beta,
            numerics=args.numerics,
        )
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None


def _scalar_or_grid(values: list[float]) -> Any:
    import numpy as np

    return values[0] if len(values) == 1 else np.asarray(values, dtype=np.float64)


def _check_reports_path(path: str | None) -> None:
    """The reports file can be written: checked before anything is read or charged."""
    if path is None:
        return
    folder = Path(path).parent
    if not folder.is_dir() or not os.access(folder, os.W_OK) or Path(path).is_dir():
        raise CliError(f"--reports {path}: cannot write a file there")


def _write_reports(path: str, reports: Any) -> None:
    import numpy as np

    table = np.asarray(reports, dtype=np.float64)
    columns = ["report"] if table.ndim == 1 else [f"report_{i + 1}" for i in range(table.shape[0])]
    rows = table.reshape(1, -1).T if table.ndim == 1 else table.T
    np.savetxt(path, rows, fmt="%.17g", delimiter=",", header=",".join(columns), comments="")


def _describe(args: argparse.Namespace) -> str:
    source = inputs.source_label(args.file)
    if args.statistic == "geo-threshold":
        thresholds = " ".join(f"{t:g}" for t in args.threshold)
        query = f"threshold {thresholds}, width {' '.join(f'{w:g}' for w in args.width)}"
    else:
        query = f"range [{args.bounds[0]:g}, {args.bounds[1]:g}], width {args.width:g}"
    return f"{args.statistic} of {args.column} in {source} ({query})"


def _run(args: argparse.Namespace) -> int:
    if args.budget is None:  # with --budget, the budget is checked first, before the file is touched
        inputs.check_source(args.file)
    check_seed(args.seed)
    _check_reports_path(args.reports)
    mechanism = build_mechanism(args)
    label = _describe(args)
    seeded = args.seed is not None

    def run(data: Any, accountant: Accountant | None) -> tuple[Release, GeoEstimate, Any]:
        from smoothdp.rng import default_rng

        release = mechanism.release(data, accountant=accountant, rng=default_rng(args.seed))
        return release, mechanism.estimate(release), data

    def show(result: tuple[Release, GeoEstimate, Any], budget: dict[str, Any] | None) -> None:
        import numpy as np

        release, estimate, data = result
        if args.reports is not None:
            _write_reports(args.reports, release.value)
        simulation = seeded or release.is_simulation
        if args.json:
            # "value": the estimate (post-processing of the reports, which go to --reports only).
            payload = dataclasses.replace(release, value=estimate.mean).to_dict()
            total = json_safe(np.asarray(estimate.total).tolist())
            payload["estimate"] = {"mean": payload["value"], "total": total, "users": estimate.n}
            payload["reports"] = args.reports
            emit_json(payload, simulation=simulation, budget=budget)
            return
        _print_geo(release, estimate, mechanism, data, label, simulation, args.reports, budget)

    plan = Plan(
        label=label + (" [simulation: seeded]" if seeded else ""),
        expected=lambda: mechanism.guarantee,
        read=lambda: inputs.read_column(args.file, args.column),
        run=run,
        show=show,
    )
    return execute(plan, args.budget, args.budget_key_file)


def _print_geo(
    release: Release,
    estimate: GeoEstimate,
    mechanism: SmoothSensitivityMechanism,
    data: Any,
    label: str,
    simulation: bool,
    reports: str | None,
    budget: dict[str, Any] | None,
) -> None:
    """The public fields, the estimate at full precision, and the estimate's std (NOT private)."""
    import numpy as np

    if simulation:
        print(SIMULATION_BANNER)
    print(field("statistic", label))
    relation = release.guarantee.relation
    print(field("guarantee", f"{release.guarantee_text}   (per user; neighbours: {relation})"))
    if mechanism.n_queries > 1:
        print(field("per query", f"{mechanism.per_query} per report, {mechanism.n_queries} reports per user"))
    print(field("mechanism", f"{release.mechanism} ({release.details.get('noise', 'default')} noise)"))
    print(field("proof", release.proof))
    print(field("users", f"{estimate.n}   (each sent {mechanism.n_queries} report(s))"))
    print(not_private("estimate std", np.sqrt(mechanism.variance(data, per_user=False).of_mean)))
    print(field("estimate", f"{values_text(estimate.mean)}   (mean of the reports)"))
    print(field("total", f"{values_text(estimate.total)}   (sum of the reports)"))
    if reports is not None:
        print(field("reports", f"{reports}   (one row per user)"))
    for line in budget_lines(budget) if budget is not None else ():
        print(line)
    if simulation:
        print(SIMULATION_BANNER)
