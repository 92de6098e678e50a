"""Argument parsing and exit statuses of the ``smoothdp`` command: the parser class, the user errors and the
options several commands share.

Every user error is one line on stderr: :class:`CliError` (exit 2) or :class:`BudgetRefused` (exit 3);
:mod:`smoothdp.cli.app` turns them into the line and the status. Nothing here imports numpy (``smoothdp
--help`` stays fast).
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any, NoReturn

__all__ = [
    "EXIT_BUDGET",
    "EXIT_CODES",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "NOISES",
    "NUMERICS",
    "BudgetRefused",
    "CliError",
    "CliParser",
    "add_bounds_option",
    "add_budget_options",
    "add_output_options",
    "bounds_value",
    "check_epsilon",
    "check_seed",
    "first_line",
    "subcommand",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BUDGET = 3
#: The exit statuses, as documented in ``smoothdp --help``.
EXIT_CODES = """exit status:
  0  success (a refused release too: the status never depends on the data)
  2  usage or parameter error (a missing, tampered or mismatched --budget ledger too), one line on stderr
  3  --budget cannot pay for the release: nothing read, drawn, released or charged; one line on stderr
  1  unexpected error (or a failed reproduction), one line on stderr"""

#: The noise families of the smooth-sensitivity mechanisms (central and geo).
NOISES = ("polyplace", "student_t", "cauchy", "laplace")
#: ``numerics=`` of every release: the exact (hardened) path or the float fast path.
NUMERICS = ("exact", "float")


class CliError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


class BudgetRefused(Exception):
    """The ``--budget`` ledger cannot pay for the release: one line on stderr, exit status 3."""


def first_line(error: BaseException) -> str:
    """The first line of an exception's message (the CLI prints one line per error)."""
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__


#: What a negative number looks like on the command line: argparse's own pattern (Python < 3.13) takes
#: ``-1e3`` and ``-inf`` for options, so ``--bounds -1e3 1e3`` failed with "expected 2 arguments".
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help as written (examples keep their lines); a metavar with a space (``LOW HIGH | private``, an
    option of one or two values) is shown as written instead of argparse's ``A [A ...]``."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if isinstance(action.metavar, str) and " " in action.metavar:
            return action.metavar
        return super()._format_args(action, default_metavar)


class CliParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), not the usage block, and a negative
    number in scientific notation (``-1e3``) or ``-inf`` is a value, not an option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise CliError(message)


def subcommand(commands: Any, name: str, *, help: str, example: str = "", **kwargs: Any) -> CliParser:
    """A sub-command's parser whose help ends with its example(s) and the exit statuses."""
    epilog = f"example:\n  {example}\n\n{EXIT_CODES}" if example else EXIT_CODES
    parser: CliParser = commands.add_parser(
        name, help=help, description=kwargs.pop("description", help), epilog=epilog, **kwargs
    )
    return parser


def check_epsilon(value: float, option: str = "--epsilon") -> float:
    """A finite ε > 0, or a :class:`CliError` naming the option."""
    if not math.isfinite(value) or value <= 0:
        raise CliError(f"{option} must be a finite number > 0; got {value}")
    return value


def check_seed(seed: int | None) -> None:
    if seed is not None and seed < 0:
        raise CliError(f"--seed must be a non-negative integer; got {seed}")


def add_output_options(parser: argparse.ArgumentParser, *, json_help: str) -> None:
    """``--seed`` (a simulation) and ``--json`` (one JSON object on stdout)."""
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="reproducible noise: a simulation, NOT private (default: secure randomness)",
    )
    parser.add_argument("--json", action="store_true", help=json_help)


def add_budget_options(parser: argparse.ArgumentParser, *, relation: str) -> None:
    """``--budget LEDGER`` and ``--budget-key-file FILE`` of every release (``relation``: the budget kind)."""
    parser.add_argument(
        "--budget",
        default=None,
        metavar="LEDGER",
        help=(
            f"charge the release to this ledger ({relation}; a SQLite file or a postgresql:// URL, made by "
            "'smoothdp budget init'), checked before the data is read and charged in one transaction "
            "before the noise is drawn; exit 3 and nothing released when it cannot pay"
        ),
    )
    parser.add_argument(
        "--budget-key-file",
        default=None,
        metavar="FILE",
        help="the secret key of a keyed --budget ledger (the file's bytes, less one final newline)",
    )


def add_bounds_option(parser: argparse.ArgumentParser, *, private: bool) -> None:
    """``--bounds LOW HIGH`` (and, where the library takes ``bounds="private"``, ``--bounds private``)."""
    if private:
        parser.add_argument(
            "--bounds",
            nargs="+",
            metavar="LOW HIGH | private",
            help=(
                "public bounds on the values (required; data outside them, ±inf included, is clipped), or "
                "'private': found privately with 25%% of ε around the public --scale (bounds=\"private\")"
            ),
        )
        parser.add_argument(
            "--scale",
            type=float,
            default=None,
            metavar="S",
            help="public scale hint of --bounds private (default 1; the library's scale=)",
        )
        return
    parser.add_argument(
        "--bounds",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="public bounds on the values (required; data outside them, ±inf included, is clipped)",
    )


def bounds_value(args: argparse.Namespace) -> tuple[float, float] | str:
    """The library's ``bounds=``: ``(low, high)`` with LOW < HIGH, or ``"private"`` where offered."""
    values = args.bounds
    if values is None:
        private = " or --bounds private" if getattr(args, "scale", False) is not False else ""
        raise CliError(
            f"--bounds LOW HIGH is required: public bounds on the values (deriving them from the data "
            f"would leak it){private}"
        )
    if len(values) == 1 and values[0] == "private":
        return "private"
    try:
        low, high = (float(v) for v in values)
    except ValueError:
        raise CliError(
            f"--bounds takes two numbers LOW HIGH or the word 'private'; got {' '.join(map(str, values))}"
        ) from None
    if not low < high:
        raise CliError(f"--bounds must satisfy LOW < HIGH; got {values[0]} {values[1]}")
    if getattr(args, "scale", None) is not None:
        raise CliError("--scale applies to --bounds private only (the public scale hint of the range search)")
    return (low, high)


def add_numerics_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--numerics",
        default="exact",
        choices=NUMERICS,
        help="exact (default: the hardened release path) or float (fast path, not hardened)",
    )


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        default="numpy",
        choices=("numpy", "dask"),
        help=(
            "numpy (default: in process) or dask (block by block on the current dask scheduler: threads, "
            "or the cluster of DASK_SCHEDULER_ADDRESS; the same value for the same --seed; docs/scale.md)"
        ),
    )
