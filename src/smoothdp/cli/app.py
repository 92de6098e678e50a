"""The ``smoothdp`` command's entry point: the parser of every sub-command, and :func:`main`, which runs one
and turns its errors into one line on stderr and an exit status (:data:`~smoothdp.cli.parsing.EXIT_CODES`).

Each command module adds its parsers and sets ``run`` (the function called with the parsed arguments):
:mod:`~smoothdp.cli.release` (central statistics), :mod:`~smoothdp.cli.geo` (geo-privacy releases),
:mod:`~smoothdp.cli.budget`, :mod:`~smoothdp.cli.smoothed`, :mod:`~smoothdp.cli.experiments`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from smoothdp.cli import budget, counting, experiments, geo, release, smoothed, table
from smoothdp.cli.parsing import (
    EXIT_BUDGET,
    EXIT_CODES,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    BudgetRefused,
    CliError,
    CliParser,
    first_line,
    subcommand,
)

__all__ = ["build_parser", "main"]

RELEASE_EXAMPLES = (
    "smoothdp release median people.csv --column age --epsilon 1 --bounds 0 125\n"
    "  smoothdp release geo-threshold incomes.csv --column income --threshold 10000 --width 1600 "
    "--epsilon 0.00125"
)


def build_parser() -> CliParser:
    """The parser of ``smoothdp`` and all its sub-commands."""
    from smoothdp import __version__

    parser = CliParser(
        prog="smoothdp", description="Instance-adaptive differential privacy.", epilog=EXIT_CODES
    )
    parser.add_argument("--version", action="version", version=f"smoothdp {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=CliParser, metavar="COMMAND")
    releases = subcommand(
        commands,
        "release",
        help="release one private statistic of a data column (central DP, or geo-privacy in the local model)",
        example=RELEASE_EXAMPLES,
    )
    statistics = releases.add_subparsers(
        dest="statistic", parser_class=CliParser, required=True, metavar="STATISTIC"
    )
    release.add_parsers(statistics)
    counting.add_parsers(statistics)
    table.add_parsers(statistics)
    geo.add_parsers(statistics)
    budget.add_parsers(commands)
    smoothed.add_parsers(commands)
    experiments.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``smoothdp`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv:
            parser.print_help()
            return EXIT_OK
        args = parser.parse_args(argv)
        run = getattr(args, "run", None)
        if run is None:  # options but no command (`smoothdp --`): the usage, as bare `smoothdp`
            parser.print_help()
            return EXIT_OK
        status: int = run(args)
        return status
    except CliError as error:
        print(f"smoothdp: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BudgetRefused as error:
        print(f"smoothdp: budget refused: {error}", file=sys.stderr)
        return EXIT_BUDGET
    except BrokenPipeError:  # `smoothdp | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")
        return EXIT_OK
    except KeyboardInterrupt:
        print("smoothdp: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug or an environment failure: one line, exit 1 (EXIT_CODES)
        message = first_line(error) if str(error) else ""
        print(f"smoothdp: unexpected error: {type(error).__name__}: {message}", file=sys.stderr)
        return EXIT_FAILURE
