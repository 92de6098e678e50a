"""``smoothdp smoothed-delta`` and ``smoothdp privacy-profile``: how private the sampling-histogram
mechanism is (:mod:`smoothdp.smoothed_dp`; Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023).

The mechanism, :class:`smoothdp.smoothed_dp.SamplingHistogram`, publishes the histogram of a random sample
of the records (``--eta R``: T = ⌈R·n⌉ of them, ``--size T``: T; ``--replace``: with replacement). It adds
no noise, so under plain DP it is no better than δ = T/n for every ε; these commands compute the δ it
has on realistic data. Nothing is released and nothing is charged: ``--budget`` does not apply.

* ``smoothed-delta --epsilon E --n N (--distribution P ... | --distributions FILE)``: δ_SDP, the worst
  expected δ over databases of N records drawn from the distributions Π
  (:func:`~smoothdp.smoothed_dp.smoothed_delta`; only the vertices of Π's convex hull matter). Π comes
  from ``--distribution p1 p2 ...`` (repeatable: one distribution over the categories each) or from a CSV
  whose every row is a distribution (``--columns``: the categories' columns, default every number column;
  ``--counts``: the rows hold counts, e.g. votes per candidate, and each is divided by its total). It
  depends on N and Π only, not on a data set.
* ``privacy-profile --epsilon E (FILE --column C --categories A B ... | --histogram h1 h2 ...)``: δ_{ε,M}(x)
  of one data set x (:func:`~smoothdp.smoothed_dp.privacy_profile`), the histogram of a column of
  categories (every record must be one of ``--categories``, the public list, in that order) or given as
  counts. It is computed from the data without protection: NOT private, for the data holder only (marked
  so, in the text and in the JSON).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from smoothdp.cli import inputs
from smoothdp.cli.output import NOT_PRIVATE, field, json_safe, num
from smoothdp.cli.parsing import EXIT_OK, CliError, check_epsilon, first_line, subcommand

if TYPE_CHECKING:
    from smoothdp.smoothed_dp import SamplingHistogram

__all__ = ["add_parsers"]

DELTA_EXAMPLE = (
    "smoothdp smoothed-delta --epsilon 7 --n 500000 --eta 0.998 --distributions election.csv "
    "--columns biden trump --counts"
)
PROFILE_EXAMPLE = (
    "smoothdp privacy-profile --histogram 81268924 74216154 --epsilon 0.0400 --eta 0.998\n"
    "  smoothdp privacy-profile votes.csv --column vote --categories A B --epsilon 1 --eta 0.998"
)
PRIVATE_NOTE = "computed from the data without protection: NOT private, do not publish"


def add_parsers(commands: Any) -> None:
    delta = subcommand(
        commands,
        "smoothed-delta",
        help="δ of smoothed DP of the sampling-histogram mechanism for n records from distributions Π",
        example=DELTA_EXAMPLE,
    )
    delta.set_defaults(run=_smoothed_delta)
    delta.add_argument("--epsilon", required=True, type=float, metavar="E", help="ε > 0")
    delta.add_argument("--n", required=True, type=int, metavar="N", help="the number of records n ≥ 1")
    _add_mechanism_options(delta)
    delta.add_argument(
        "--distribution",
        action="append",
        nargs="+",
        type=float,
        metavar="P",
        help="one distribution of Π: a probability per category, summing to 1 (repeatable)",
    )
    delta.add_argument(
        "--distributions",
        metavar="FILE",
        help="a CSV of Π, one distribution per row ('-': standard input)",
    )
    delta.add_argument(
        "--columns",
        nargs="+",
        metavar="C",
        help="the categories' columns of --distributions (default: every number column)",
    )
    delta.add_argument(
        "--counts",
        action="store_true",
        help="the rows of --distributions hold counts (votes, people): each is divided by its total",
    )
    delta.add_argument(
        "--mixtures",
        default="auto",
        metavar="{auto,all,vertices,K}",
        help="mixtures of the hull's vertices searched for m = 2 (default auto; K: a grid of K)",
    )
    delta.add_argument("--json", action="store_true", help="print one JSON object")

    profile = subcommand(
        commands,
        "privacy-profile",
        help="δ of the sampling-histogram mechanism on one data set (its privacy profile; NOT private)",
        example=PROFILE_EXAMPLE,
    )
    profile.set_defaults(run=_privacy_profile)
    profile.add_argument("file", nargs="?", metavar="FILE", help=inputs.FILE_HELP.split(";")[0])
    profile.add_argument("--column", metavar="C", help="the column of categories (one record per row)")
    profile.add_argument(
        "--categories", nargs="+", metavar="A", help="every category, the public list (with FILE)"
    )
    profile.add_argument(
        "--histogram", nargs="+", type=int, metavar="H", help="the counts per category (instead of FILE)"
    )
    profile.add_argument("--epsilon", required=True, type=float, metavar="E", help="ε > 0")
    _add_mechanism_options(profile)
    profile.add_argument(
        "--method",
        default="auto",
        choices=("auto", "generic"),
        help="auto (default: the exact closed form) or generic (enumerate the outputs: small cases)",
    )
    profile.add_argument("--json", action="store_true", help="print one JSON object (NOT private)")


def _add_mechanism_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--eta", type=float, default=None, metavar="R", help="sampling rate in (0, 1): T = ⌈R·n⌉"
    )
    parser.add_argument(
        "--size", type=int, default=None, metavar="T", help="sample size T (instead of --eta)"
    )
    parser.add_argument("--replace", action="store_true", help="sample with replacement (default: without)")


def _mechanism(args: argparse.Namespace) -> SamplingHistogram:
    from smoothdp.smoothed_dp import SamplingHistogram

    if (args.eta is None) == (args.size is None):
        raise CliError("give one of --eta (the sampling rate) and --size (the sample size T)")
    try:
        return SamplingHistogram(eta=args.eta, size=args.size, replace=args.replace)
    except (ValueError, TypeError) as error:
        option = "--eta" if args.eta is not None else "--size"
        raise CliError(f"{option}: {first_line(error)}") from None


def _mixtures(text: str) -> str | int:
    if text in ("auto", "all", "vertices"):
        return text
    try:
        return int(text)
    except ValueError:
        raise CliError(f"--mixtures must be auto, all, vertices or a grid size K ≥ 2; got {text!r}") from None


def _distributions(args: argparse.Namespace) -> Any:
    """Π from ``--distribution`` or from the rows of ``--distributions`` (divided by their totals with
    ``--counts``); the library checks that every row is a distribution."""
    import numpy as np

    if (args.distribution is None) == (args.distributions is None):
        raise CliError("give Π by --distribution P ... (repeatable) or by --distributions FILE, not both")
    if args.distribution is not None:
        if args.columns or args.counts:
            raise CliError("--columns and --counts apply to --distributions FILE")
        sizes = {len(p) for p in args.distribution}
        if len(sizes) > 1:
            raise CliError("every --distribution must give one probability per category (the same number)")
        return np.asarray(args.distribution, dtype=np.float64)
    columns = args.columns or _number_columns(args.distributions)
    table = np.column_stack(inputs.read_columns(args.distributions, columns))
    if args.counts:
        with np.errstate(invalid="ignore", divide="ignore"):
            table = table / table.sum(axis=1, keepdims=True)
    return table


def _number_columns(path: str) -> list[str]:
    if path == "-":
        raise CliError("--distributions - (standard input) needs --columns")
    columns = inputs.number_column_names(path)
    if len(columns) < 2:
        raise CliError(f"--distributions {path}: fewer than 2 number columns; name them with --columns")
    return columns


def _smoothed_delta(args: argparse.Namespace) -> int:
    from smoothdp.smoothed_dp import smoothed_delta

    check_epsilon(args.epsilon)
    mechanism = _mechanism(args)
    mixtures = _mixtures(args.mixtures)
    pi = _distributions(args)
    try:
        result = smoothed_delta(mechanism, args.epsilon, args.n, pi, mixtures=mixtures)
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None
    payload = {
        "delta": result.delta,
        "log_delta": result.log_delta,
        "log10_delta": result.log10_delta,
        "epsilon": result.epsilon,
        "n": result.n,
        "mechanism": result.mechanism,
        "dp_delta": result.dp_delta,
        "distributions": len(pi),
        "vertices": result.vertices.tolist(),
        "mixture": list(result.mixture),
        "exact_max": result.exact_max,
        "upper_bound": result.upper_bound,
        "log10_lower": result.log10_lower,
        "method": result.method,
        "source": result.source,
        "proof": mechanism.proof,
    }
    if args.json:
        _print_json(payload)
        return EXIT_OK
    print(
        field(
            "smoothed δ",
            f"{_power(result.log10_delta)}   (δ_SDP = {result.delta:.6g}, ln δ = {result.log_delta:.6g})",
        )
    )
    if result.upper_bound and result.log10_lower is not None:
        print(field("bound", f"a certified upper bound; the exact value is ≥ {_power(result.log10_lower)}"))
    print(field("epsilon", num(result.epsilon)))
    print(field("records", f"n = {result.n}, T = {mechanism.sample_size(result.n)} sampled"))
    print(field("mechanism", result.mechanism))
    print(field("DP δ", f"{result.dp_delta:.6g}   (plain DP, every ε: T/n without replacement)"))
    print(field("Π", f"{len(pi)} distribution(s), {len(result.vertices)} vertex(es) of their convex hull"))
    mix = " + ".join(
        f"{count} from ({', '.join(f'{p:.4g}' for p in vertex)})"
        for count, vertex in zip(result.mixture, result.vertices, strict=True)
        if count
    )
    search = "every mixture evaluated" if result.exact_max else "searched: a lower bound on the maximum"
    print(field("worst mix", f"{mix} records   ({search})"))
    print(field("method", result.method))
    print(field("source", result.source))
    print(field("proof", mechanism.proof))
    return EXIT_OK


def _power(log10: float) -> str:
    return "0" if math.isinf(log10) else f"10^{log10:.4f}"


def _histogram(args: argparse.Namespace) -> tuple[list[int], list[str] | None]:
    """The counts per category, from ``--histogram`` or from FILE's column and ``--categories``."""
    from collections import Counter

    if (args.histogram is None) == (args.file is None):
        raise CliError(
            "give the data set as FILE --column C --categories A B ..., or as --histogram H1 H2 ..."
        )
    if args.histogram is not None:
        if args.column or args.categories:
            raise CliError("--column and --categories apply to FILE, not to --histogram")
        return list(args.histogram), None
    if args.column is None or args.categories is None:
        raise CliError("FILE needs --column (the categories' column) and --categories (every category)")
    if len(set(args.categories)) != len(args.categories):
        raise CliError("--categories must list each category once")
    counts = Counter(inputs.read_text_column(args.file, args.column))
    unknown = sorted(set(counts) - set(args.categories))
    if unknown:
        raise CliError(
            f"column {args.column!r} holds a value not in --categories: {unknown[0]!r}; list every category"
        )
    return [counts[c] for c in args.categories], list(args.categories)


def _privacy_profile(args: argparse.Namespace) -> int:
    from smoothdp.smoothed_dp import privacy_profile

    check_epsilon(args.epsilon)
    mechanism = _mechanism(args)
    if args.file is not None:
        inputs.check_source(args.file)
    histogram, names = _histogram(args)
    try:
        result = privacy_profile(mechanism, histogram, args.epsilon, method=args.method)
    except (ValueError, TypeError) as error:
        raise CliError(first_line(error)) from None
    a, b, direction = result.neighbour
    labels = names or [f"category {i + 1}" for i in range(len(histogram))]
    worst = f"a record of {labels[a]} becomes {labels[b]} ({direction})" if direction else "none (δ = 0)"
    if args.json:
        _print_json(
            {
                "private": False,
                "note": PRIVATE_NOTE,
                "delta": result.delta,
                "log_delta": result.log_delta,
                "log10_delta": result.log10_delta,
                "epsilon": result.epsilon,
                "histogram": list(result.histogram),
                "categories": names,
                "neighbour": {"from": labels[a], "to": labels[b], "direction": direction}
                if direction
                else None,
                "mechanism": str(mechanism),
                "dp_delta": mechanism.dp_delta(sum(histogram)),
                "method": result.method,
                "source": result.source,
                "proof": mechanism.proof,
            }
        )
        return EXIT_OK
    print(f"NOTE: the privacy profile is {PRIVATE_NOTE}.")
    print(field("mechanism", str(mechanism)))
    print(field("epsilon", num(result.epsilon)))
    print(field("DP δ", f"{mechanism.dp_delta(sum(histogram)):.6g}   (plain DP, every ε)"))
    print(f"{'profile δ:':<12} {_power(result.log10_delta)}   (δ = {result.delta:.6g}){NOT_PRIVATE}")
    print(f"{'worst case:':<12} {worst}{NOT_PRIVATE}")
    print(field("method", result.method))
    print(field("source", result.source))
    print(field("proof", mechanism.proof))
    return EXIT_OK


def _print_json(payload: dict[str, Any]) -> None:
    import json

    print(json.dumps(json_safe(payload), ensure_ascii=False))
