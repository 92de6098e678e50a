"""The ``smoothdp`` command.

* ``smoothdp``: a short demo (a private median of the Adult ages), then the usage.
* ``smoothdp list``: the reproduced experiments, one line each.
* ``smoothdp reproduce [NAME ...] [--quick] [--out DIR] [--seed N]``: run the reproductions.
* ``smoothdp release STATISTIC FILE --column C --epsilon E [--bounds LOW HIGH] [--noise polyplace]``:
  release one statistic of a CSV column and print its public fields (the value, the guarantee spent with its
  neighbour relation, the mechanism and its proof), then, for the data holder only, the values computed from
  the data without protection (noise scale and std, smooth sensitivity), each marked "NOT private: do not
  publish". ``FILE`` ``-`` reads standard input. ``--json`` prints one JSON object instead, for pipelines:
  :meth:`smoothdp.Release.to_dict` (public fields only, values at full precision) and ``"simulation"``;
  never the not-private values. ``release quantiles FILE --q 0.1 0.5 0.9`` releases several quantiles under
  one ε (:func:`smoothdp.quantiles`), in the order asked.
  The CSV is read by :mod:`smoothdp.data.csv_reader`, the parser of the library's loaders: every line
  after the header is a record, whatever its cells hold (n never depends on a cell); an empty, ``""``,
  NA-like or unparseable cell is a missing value, imputed with the midpoint of ``--bounds``; ``inf`` cells
  and values outside the bounds are clipped. The number of such cells is never printed. A column in which
  no cell is a number (text) is an error naming it (exit 2), decided before any release work.
  ``--seed`` makes a simulation: the output starts with "NOT PRIVATE (simulation: seeded generator)".

A privacy budget across invocations (``--budget LEDGER``): a persistent ledger of the library
(:meth:`smoothdp.Accountant.open`; docs/ledger.md), a SQLite file or a ``postgresql://`` URL. ``smoothdp
budget init LEDGER --epsilon 3 [--delta D] [--neighbours substitution|add_remove] [--slack S]`` creates it
(never over an existing one); ``release ... --budget LEDGER`` charges every release to it; ``budget show``,
``verify``, ``export`` and ``migrate`` (an old JSON budget file into a ledger) work on it. ``--key-file``
(``--budget-key-file`` on ``release``) gives the secret of a keyed (HMAC) ledger. A release with
``--budget``:

1. opens the ledger (its whole hash chain verified: a missing, tampered, hard-linked or old JSON file is an
   error, exit 2) and checks that the release's guarantee fits what is spent now, *before* the data is
   read: when it does not, nothing is read, no noise is drawn, nothing about the data is printed, and the
   exit status is 3; a release under a relation the budget cannot count (a substitution release on an
   add/remove budget) is an error (2);
2. reads the data and runs the release with the ledger's accountant, which charges it in one transaction
   (re-read what is spent, check, record, commit) before the noise is drawn; another process that spent
   the rest in between makes this charge fail with exit 3, nothing drawn (an add/remove release on a
   substitution budget counts 2ε by group privacy);
3. confirms that the ledger the path or URL names now holds the charge as recorded (not a replaced or
   forked file), and only then prints the release, the budget left and the chain head of its charge
   (``N:HEX``, to keep elsewhere: ``smoothdp budget verify LEDGER --anchor N:HEX`` later proves that the
   ledger was not rolled back or rewritten before it).

Exit status (:data:`EXIT_CODES`): 0 success (a refused release too: the status never depends on the data);
2 a usage or parameter error (unknown experiment, bad ε, missing file or column, a missing, corrupt or
mismatched budget ledger), one line on stderr; 3 the ``--budget`` cannot pay for the release (nothing read,
drawn, released or charged), one line on stderr; 1 an unexpected error (or a failed reproduction), one line
on stderr.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # numpy is imported by the commands that need it: `smoothdp --help` stays fast
    import numpy as np

    from smoothdp.accounting import Accountant
    from smoothdp.privacy import PrivacyGuarantee

__all__ = ["main"]

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
#: The neighbour relations a ``smoothdp budget init`` ledger can count (the releases' relations).
BUDGET_RELATIONS = ("substitution", "add_remove")
JSON_EXAMPLE = "smoothdp release median - --column age --epsilon 1 --bounds 0 125 --json < people.csv"
BUDGET_EXAMPLE = (
    "smoothdp budget init budget.db --epsilon 3\n"
    "  smoothdp release median people.csv --column age --epsilon 1 --bounds 0 125 --budget budget.db\n"
    "  smoothdp budget show budget.db\n"
    "  smoothdp budget verify budget.db --anchor N:HEX   # the head a release printed"
)
STATISTICS = ("median", "quantile", "quantiles", "trimmed-mean", "mean")
#: Methods of 'median' and 'quantile'; 'quantiles' also takes joint_exp and recursive.
METHODS = ("auto", "exponential", "smooth_sensitivity")
QUANTILES_METHODS = (*METHODS, "joint_exp", "recursive")
NUMERICS = ("exact", "float")
#: The first line of a release drawn from a seeded (or otherwise non-secure) generator.
SIMULATION_BANNER = "NOT PRIVATE (simulation: seeded generator): the noise can be regenerated; do not publish"
NOISES = ("polyplace", "student_t", "cauchy", "laplace")
#: How every data-dependent (not private) number is marked when printed for the data holder.
NOT_PRIVATE = "   (computed from the data, NOT private: do not publish)"


class CliError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


class BudgetRefused(Exception):
    """The ``--budget`` ledger cannot pay for the release: one line on stderr, exit status 3."""


#: What a negative number looks like on the command line: argparse's own pattern (Python < 3.13) takes
#: ``-1e3`` and ``-inf`` for options, so ``--bounds -1e3 1e3`` failed with "expected 2 arguments".
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), not the usage block, and a negative
    number in scientific notation (``-1e3``) or ``-inf`` is a value, not an option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise CliError(message)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="smoothdp",
        description="Instance-adaptive differential privacy.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    commands.add_parser("list", help="list the reproduced experiments")

    reproduce = commands.add_parser("reproduce", help="run the reproductions of the source papers")
    reproduce.add_argument("names", nargs="*", metavar="NAME", help="experiments to run (default: all)")
    reproduce.add_argument(
        "--quick",
        action="store_true",
        help="reduced form: fewer repetitions, smaller grids (minutes in total)",
    )
    reproduce.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)  # the test-suite setting
    reproduce.add_argument("--out", default="results", metavar="DIR", help="output folder (default: results)")
    reproduce.add_argument(
        "--seed", type=int, default=None, metavar="N", help="reproducible run (default: secure randomness)"
    )
    reproduce.add_argument("--quiet", action="store_true", help="no progress bars")

    release = commands.add_parser(
        "release",
        help="release one private statistic of a CSV column",
        epilog=f"example:\n  {JSON_EXAMPLE}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    release.add_argument(
        "statistic", choices=STATISTICS, metavar="STATISTIC", help=f"one of: {', '.join(STATISTICS)}"
    )
    release.add_argument(
        "file",
        metavar="FILE",
        help=(
            "a CSV file with a header row ('-': standard input); every line after the header is a record "
            "(an empty line too); empty, NA or unparseable cells are missing values, imputed with the "
            "midpoint of the bounds; a column with no number at all is an error. A path ending in .parquet "
            "(a file, a directory or a glob) is read as Parquet (the dask extra)"
        ),
    )
    release.add_argument("--column", required=True, metavar="C", help="the column to use")
    release.add_argument("--epsilon", required=True, type=float, metavar="E", help="privacy budget ε > 0")
    release.add_argument(
        "--bounds",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="public bounds on the values (required; data outside them, ±inf included, is clipped)",
    )
    release.add_argument(
        "--numerics",
        default="exact",
        choices=NUMERICS,
        help="exact (default: the hardened release path) or float (fast path, not hardened)",
    )
    release.add_argument(
        "--method",
        default="auto",
        choices=QUANTILES_METHODS,
        help=(
            "median/quantile(s) method (default auto: chosen from public parameters, see docs/quantiles.md); "
            "joint_exp and recursive are for 'quantiles' only"
        ),
    )
    release.add_argument(
        "--noise",
        default=None,
        choices=NOISES,
        help="noise family of the smooth-sensitivity mechanism (default: polyplace; selects that method)",
    )
    release.add_argument(
        "--delta",
        type=float,
        default=0.0,
        help="δ of the (ε, δ) guarantee; needed by --noise laplace only (default 0)",
    )
    release.add_argument(
        "--q",
        type=float,
        nargs="+",
        default=None,
        metavar="Q",
        help="quantile level(s) in (0, 1): one for 'quantile', one or more for 'quantiles'",
    )
    release.add_argument(
        "--trim", type=float, default=None, help="fraction trimmed from each end for 'trimmed-mean'"
    )
    release.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="reproducible noise: a simulation, NOT private (default: secure randomness)",
    )
    release.add_argument(
        "--engine",
        default="numpy",
        choices=("numpy", "dask"),
        help=(
            "numpy (default: in process) or dask (block by block on the current dask scheduler: threads, "
            "or the cluster of DASK_SCHEDULER_ADDRESS; the same value for the same --seed; docs/scale.md)"
        ),
    )
    release.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: the public fields (value at full precision) and 'simulation'",
    )
    release.add_argument(
        "--budget",
        default=None,
        metavar="LEDGER",
        help=(
            "charge the release to this ledger (a SQLite file or a postgresql:// URL, made by 'smoothdp "
            "budget init'), checked before the data is read and charged in one transaction before the "
            "noise is drawn; exit 3 and nothing released when it cannot pay"
        ),
    )
    release.add_argument(
        "--budget-key-file",
        default=None,
        metavar="FILE",
        help="the secret key of a keyed --budget ledger (the file's bytes, less one final newline)",
    )
    _add_budget_commands(commands)
    return parser


def _add_budget_commands(commands: Any) -> None:
    """``smoothdp budget init|show|verify|export|migrate``."""
    budget = commands.add_parser(
        "budget",
        help="a persistent privacy budget shared by 'release --budget LEDGER' invocations",
        epilog=f"example:\n  {BUDGET_EXAMPLE}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = budget.add_subparsers(
        dest="budget_command",
        parser_class=_Parser,
        required=True,
        metavar="{init,show,verify,export,migrate}",
    )
    where = "a ledger: a SQLite file (a path) or a postgresql://…[#name] URL"
    key_help = "the secret key of a keyed (HMAC) ledger: the file's bytes, less one final newline"
    init = actions.add_parser("init", help="create a ledger with its total (never over an existing one)")
    init.add_argument("file", metavar="LEDGER", help=f"{where}, to create")
    init.add_argument("--epsilon", required=True, type=float, metavar="E", help="the total ε > 0")
    init.add_argument(
        "--delta", type=float, default=0.0, metavar="D", help="the total δ in [0, 1) (default 0)"
    )
    init.add_argument(
        "--neighbours",
        default="substitution",
        choices=BUDGET_RELATIONS,
        help=(
            "what the budget protects (default substitution: it also counts add/remove releases, the mean, "
            "at 2ε by group privacy; add_remove takes only add/remove releases)"
        ),
    )
    init.add_argument(
        "--slack",
        type=float,
        default=0.0,
        metavar="S",
        help="δ' in [0, delta] reserved for advanced composition and zCDP (default 0: basic composition)",
    )
    init.add_argument(
        "--key-file", metavar="FILE", help=f"make a keyed ledger (HMAC-SHA-256 chain); {key_help}"
    )
    show = actions.add_parser("show", help="print the total, what is spent and left, and every charge")
    show.add_argument("file", metavar="LEDGER", help=where)
    show.add_argument("--json", action="store_true", help="print the ledger as one JSON object")
    show.add_argument("--key-file", metavar="FILE", help=key_help)
    verify = actions.add_parser(
        "verify", help="check the whole hash chain (and an anchor kept elsewhere); exit 2 when it fails"
    )
    verify.add_argument("file", metavar="LEDGER", help=where)
    verify.add_argument(
        "--anchor",
        action="append",
        default=[],
        metavar="N:HEX",
        help="a chain head printed by an earlier release: charge N must still have that digest (repeatable)",
    )
    verify.add_argument("--key-file", metavar="FILE", help=key_help)
    export = actions.add_parser("export", help="print the ledger as JSON, with its chain (for migrate)")
    export.add_argument("file", metavar="LEDGER", help=where)
    export.add_argument("--key-file", metavar="FILE", help=key_help)
    migrate = actions.add_parser(
        "migrate", help="move an old JSON budget file (or an export) into a new ledger"
    )
    migrate.add_argument("source", metavar="OLD.json", help="the JSON budget file or export")
    migrate.add_argument("file", metavar="NEW", help=f"{where}, to create")
    migrate.add_argument(
        "--key-file", metavar="FILE", help=f"the key of a keyed export, or of the new ledger; {key_help}"
    )


# ------------------------------------------------------------------------------------------ list


def _cmd_list() -> int:
    from smoothdp.experiments import EXPERIMENTS

    width = max(len(name) for name in EXPERIMENTS)
    for name, experiment in EXPERIMENTS.items():
        missing = experiment.missing()
        status = f"  [waiting for {', '.join(missing)}]" if missing else ""
        print(f"{name:<{width}}  {experiment.summary}{status}")
    return 0


# ------------------------------------------------------------------------------------- reproduce


#: The packages of the ``experiments`` extra, which only ``smoothdp reproduce`` needs.
EXPERIMENTS_EXTRA = ("matplotlib", "tqdm")


def _require_experiments_extra() -> None:
    """A one-line error naming the extra when its packages are not installed (or cannot be imported)."""
    import importlib

    missing = []
    for name in EXPERIMENTS_EXTRA:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise CliError(
            f"reproduce needs {' and '.join(missing)}, not installed; install the extra: "
            "pip install 'smoothdp[experiments]'"
        )


def _cmd_reproduce(args: argparse.Namespace) -> int:
    _require_experiments_extra()
    from smoothdp.experiments import EXPERIMENTS, reproduce
    from smoothdp.experiments.report import format_seconds

    unknown = [n for n in args.names if n not in EXPERIMENTS]
    if unknown:
        raise CliError(f"unknown experiment {unknown[0]!r}; choose from: {', '.join(EXPERIMENTS)}")
    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer; got {args.seed}")
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    start = time.perf_counter()
    records = reproduce(args.names, mode=mode, out_dir=args.out, seed=args.seed, show_progress=not args.quiet)
    for r in records:
        line = r.outcome.headline if r.outcome is not None else r.reason  # an outcome exactly when done
        print(f"{r.name}: {r.status} ({format_seconds(r.seconds)}): {line}")
    print(f"total {format_seconds(time.perf_counter() - start)}; index: {Path(args.out) / 'index.md'}")
    return 1 if any(r.status == "failed" for r in records) else 0


# --------------------------------------------------------------------------------------- release


def _load_column(path: str, column: str, engine: str) -> Any:
    """The column from a CSV file (or stdin) or, for a path ending in .parquet, from Parquet: a dask
    series on the dask engine (never loaded whole), else a numpy array."""
    if not path.rstrip("/").endswith(".parquet"):
        return _read_column(path, column)
    if "*" not in path and not Path(path).exists():
        raise CliError(f"file not found: {path}")
    try:
        if engine == "dask":
            import dask.dataframe as dd

            return dd.read_parquet(path, columns=[column])[column]
        import pandas as pd

        return pd.read_parquet(path, columns=[column])[column].to_numpy()
    except ImportError as error:
        raise CliError(f"Parquet needs the dask extra (pip install 'smoothdp[dask]'): {error}") from None
    except (KeyError, ValueError, OSError) as error:
        raise CliError(f"cannot read column {column!r} of {path} as Parquet: {error}") from None


def _read_column(path: str, column: str) -> np.ndarray:
    """Every record of ``column`` as a float (missing or unparseable cells NaN, for the API's imputation).

    Only the file's structure (no file, no header, no such column) and the column's type (no cell is a
    number: :func:`smoothdp.data.csv_reader.column_type`) can fail here, never one cell's value: no
    record is dropped and nothing is counted.
    """
    import csv

    from smoothdp.data.csv_reader import number_column, read_csv

    label = "standard input" if path == "-" else path
    if path != "-" and not Path(path).is_file():
        raise CliError(f"file not found: {path}")
    try:
        header, cells = _read_stdin() if path == "-" else read_csv(path)
    except (ValueError, UnicodeDecodeError, csv.Error) as error:
        raise CliError(f"cannot read {label} as CSV: {error}") from None
    if column not in cells:
        raise CliError(f"column {column!r} not in {label}; it has: {', '.join(header)}")
    try:
        return number_column(cells[column], column)
    except ValueError as error:
        raise CliError(f"{error} ({label})") from None


def _read_stdin() -> tuple[list[str], dict[str, list[str]]]:
    """Standard input through the shared reader, decoded as the files are (UTF-8, bad bytes U+FFFD)."""
    import io

    from smoothdp.data.csv_reader import DECODE_ERRORS, ENCODING, read_csv

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (tests, embedding)
        return read_csv(stream=sys.stdin, name="standard input")
    stream = io.TextIOWrapper(buffer, encoding=ENCODING, errors=DECODE_ERRORS, newline="")
    try:
        return read_csv(stream=stream, name="standard input")
    finally:
        stream.detach()  # leave sys.stdin usable


def _engine(name: str) -> Any:
    """None (in process), "dask" (the current scheduler), or a Client of $DASK_SCHEDULER_ADDRESS."""
    import os

    if name == "numpy":
        return None
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    if not address:
        return "dask"
    from distributed import Client

    return Client(address)


def _release_statistic(
    args: argparse.Namespace, data: Any, bounds: tuple[float, float], accountant: Accountant | None = None
) -> Any:
    """The library's entry point for the statistic, with its defaults (method, clipping, clamping); the
    library charges ``accountant`` (if any) before it draws the noise."""
    import smoothdp
    from smoothdp.rng import default_rng

    common: dict[str, Any] = {
        "epsilon": args.epsilon,
        "bounds": bounds,
        "numerics": args.numerics,
        "rng": default_rng(args.seed),
        "engine": _engine(args.engine),
    }
    if accountant is not None:
        common["accountant"] = accountant
    # Smooth-sensitivity options only when asked for: they select that method under method="auto".
    if args.statistic == "quantiles":
        if args.noise is not None or args.delta:
            raise CliError("--noise and --delta do not apply to 'quantiles' (pure ε-DP methods)")
        if args.q is None:
            raise CliError("'quantiles' needs --q, one or more quantile levels in (0, 1)")
        return smoothdp.quantiles(data, args.q, method=args.method, **common)
    if args.method not in METHODS:
        raise CliError(
            f"--method {args.method} applies to 'quantiles' only; choose from: {', '.join(METHODS)}"
        )
    if args.noise is not None:
        common["noise"] = args.noise
    if args.delta:
        common["delta"] = args.delta
    if args.statistic in ("median", "quantile"):
        common["method"] = args.method
    elif args.method != "auto":
        raise CliError(f"--method applies to 'median' and 'quantile' only; got it for {args.statistic!r}")
    if args.statistic == "quantile":
        if args.q is None or len(args.q) != 1:
            raise CliError("'quantile' needs one --q, the quantile level in (0, 1) (several: 'quantiles')")
        return smoothdp.quantile(data, args.q[0], **common)
    if args.q is not None:
        raise CliError(f"--q applies to 'quantile' and 'quantiles' only; got it for {args.statistic!r}")
    if args.statistic == "trimmed-mean":
        if args.trim is None:
            raise CliError("'trimmed-mean' needs --trim, the fraction trimmed from each end")
        return smoothdp.trimmed_mean(data, args.trim, **common)
    if args.statistic == "mean":
        return smoothdp.mean(data, **common)
    return smoothdp.median(data, **common)


def _cmd_release(args: argparse.Namespace) -> int:
    import numpy as np

    if not np.isfinite(args.epsilon) or args.epsilon <= 0:
        raise CliError(f"--epsilon must be a finite number > 0; got {args.epsilon}")
    if args.bounds is not None and not args.bounds[0] < args.bounds[1]:
        raise CliError(f"--bounds must satisfy LOW < HIGH; got {args.bounds[0]} {args.bounds[1]}")
    if args.budget is not None:
        return _release_with_budget(args, args.budget)
    data = _load_column(args.file, args.column, args.engine)
    _check_release_options(args)
    release = _run_release(args, data)
    _print_release_output(args, release)
    return EXIT_OK


def _check_release_options(args: argparse.Namespace) -> None:
    if args.bounds is None:
        raise CliError(
            "--bounds LOW HIGH is required: public bounds on the values (deriving them from the "
            "data would leak it)"
        )
    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer; got {args.seed}")


def _run_release(args: argparse.Namespace, data: Any, accountant: Accountant | None = None) -> Any:
    from smoothdp.accounting import BudgetError

    try:
        return _release_statistic(args, data, (args.bounds[0], args.bounds[1]), accountant)
    except BudgetError as error:  # the library's own check, before its noise (module docstring, step 3)
        raise BudgetRefused(str(error)) from None
    except (ValueError, TypeError) as error:
        raise CliError(str(error).splitlines()[0]) from None


def _source(args: argparse.Namespace) -> str:
    return "standard input" if args.file == "-" else args.file


def _print_release_output(
    args: argparse.Namespace, release: Any, budget: dict[str, Any] | None = None
) -> None:
    simulation = args.seed is not None or bool(getattr(release, "is_simulation", False))
    if args.json:
        _print_json(release, simulation=simulation, budget=budget)
    else:
        statistic = f"{args.statistic} of {args.column} in {_source(args)}"
        _print_release(release, statistic, simulation=simulation, budget=budget)


# ---------------------------------------------------------------------------------------- budget


def _release_with_budget(args: argparse.Namespace, target: str) -> int:
    """``release --budget``: open, check, read, release (charged in one transaction), confirm, print."""
    from smoothdp.ledger import LedgerError

    _check_release_options(args)
    expected = _expected_guarantee(args)
    key = _key(args.budget_key_file)
    with _open_ledger(target, key, label_prefix=f"{_budget_label(args)}: ") as accountant:
        _check_budget(accountant, expected, target, args)
        data = _load_column(args.file, args.column, args.engine)  # only now is the data read
        try:
            release = _run_release(args, data, accountant)  # charged before its noise (docstring, step 2)
            made = accountant.charged_here
            for charge in made:  # the ledger the path names holds it: not a replaced or forked file
                accountant.confirm(charge)
            left = accountant.remaining
        except LedgerError as error:
            raise CliError(f"budget {target}: {error}") from None
    summary = {
        "file": target,
        "charged": [_budget_amount(c.counted) for c in made],
        "remaining": {"epsilon": left.epsilon, "delta": left.delta},
        "head": f"{made[-1].seq}:{made[-1].digest}" if made else None,
    }
    _print_release_output(args, release, summary)
    return EXIT_OK


def _expected_guarantee(args: argparse.Namespace) -> PrivacyGuarantee:
    """The guarantee the release will declare, from its public parameters only: ε (and δ) under
    add/remove for the mean, substitution for the others (tests/test_cli.py checks it against the library)."""
    from smoothdp.privacy import ApproxDP, PureDP

    neighbours = "add_remove" if args.statistic == "mean" else "substitution"
    try:
        if args.delta:
            return ApproxDP(args.epsilon, args.delta, neighbours=neighbours)
        return PureDP(args.epsilon, neighbours=neighbours)
    except ValueError as error:
        raise CliError(str(error).splitlines()[0]) from None


def _check_budget(
    accountant: Accountant, expected: PrivacyGuarantee, target: str, args: argparse.Namespace
) -> None:
    """Refuse (exit 3) a release the budget cannot pay for, or (exit 2) one it cannot count at all."""
    from smoothdp.accounting import BudgetError
    from smoothdp.ledger import LedgerError

    if accountant.neighbours not in BUDGET_RELATIONS:
        raise CliError(
            f"budget {target} counts neighbours={accountant.neighbours!r}; releases need a "
            f"{' or '.join(BUDGET_RELATIONS)} budget"
        )
    try:
        accountant.check(expected, label=_budget_label(args))
    except BudgetError as error:
        raise BudgetRefused(f"budget {target}: {error}") from None
    except LedgerError as error:
        raise CliError(f"budget {target}: {error}") from None
    except ValueError:
        raise CliError(
            f"budget {target} counts neighbours={accountant.neighbours!r}; a {args.statistic} release "
            f"is {expected} under {expected.neighbours!r}, which it cannot count (a substitution budget "
            "counts both relations)"
        ) from None


def _budget_label(args: argparse.Namespace) -> str:
    label = f"{args.statistic} of {args.column} in {_source(args)}"
    return label + (" [simulation: seeded]" if args.seed is not None else "")


def _budget_amount(guarantee: Any) -> dict[str, float]:
    return {"epsilon": float(guarantee.epsilon), "delta": float(guarantee.delta)}


def _key(path: str | None) -> bytes | None:
    """The secret in ``path`` (its bytes, less one final newline), or None."""
    if path is None:
        return None
    try:
        secret = Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read the key file {path}: {error.strerror}") from None
    return secret.removesuffix(b"\n").removesuffix(b"\r")


def _open_ledger(target: str, key: bytes | None, *, label_prefix: str = "") -> Accountant:
    """The accountant of an existing ledger; any ledger error is one line, exit 2."""
    from smoothdp.accounting import Accountant
    from smoothdp.ledger import LedgerError

    try:
        return Accountant.open(target, key=key, label_prefix=label_prefix)
    except (LedgerError, ValueError, TypeError) as error:
        raise CliError(f"budget {target}: {str(error).splitlines()[0]}") from None


def _cmd_budget(args: argparse.Namespace) -> int:
    from smoothdp.ledger import LedgerError

    commands = {
        "init": _budget_init,
        "show": _budget_show,
        "verify": _budget_verify,
        "export": _budget_export,
        "migrate": _budget_migrate,
    }
    try:
        return commands[args.budget_command](args)
    except LedgerError as error:
        raise CliError(f"budget {args.file}: {str(error).splitlines()[0]}") from None


def _budget_init(args: argparse.Namespace) -> int:
    from smoothdp.accounting import Accountant

    try:
        accountant = Accountant.create(
            args.file,
            args.epsilon,
            args.delta,
            neighbours=args.neighbours,
            slack=args.slack,
            key=_key(args.key_file),
        )
    except (ValueError, TypeError) as error:
        raise CliError(str(error).splitlines()[0]) from None
    with accountant:
        total, head = accountant.total, accountant.head
    print(
        f"created {args.file}: total ε = {_num(total.epsilon)}, δ = {_num(total.delta)} "
        f"(neighbours: {accountant.neighbours}); chain head {head}"
    )
    return EXIT_OK


def _num(value: float) -> str:
    return f"{value:.12g}"


def _budget_show(args: argparse.Namespace) -> int:
    import json

    with _open_ledger(args.file, _key(args.key_file)) as accountant:
        payload = accountant.to_dict()  # one transaction: the totals and charges agree
    if args.json:
        print(json.dumps({"file": args.file, **payload}, ensure_ascii=False))
        return EXIT_OK
    total, spent, left = payload["total"], payload["spent"], payload["remaining"]
    print(f"budget:      {args.file} ({accountant.location})")
    print(
        f"total:       ε = {_num(total['epsilon'])}, δ = {_num(total['delta'])}   "
        f"(neighbours: {accountant.neighbours})"
    )
    charges = payload["charges"]
    amount = f"ε = {_num(spent['epsilon'])}, δ = {_num(spent['delta'])}"
    print(f"spent:       {amount} in {len(charges)} charge(s)")
    print(f"remaining:   ε = {_num(left['epsilon'])}, δ = {_num(left['delta'])}")
    head = payload["ledger"]["head"]
    print(f"chain head:  {head['charges']}:{head['digest']}")
    for charge in charges:
        amount = (
            f"ε = {_num(charge['epsilon'])}, δ = {_num(charge['delta'])}"
            if "epsilon" in charge
            else json.dumps(charge["counted"])
        )
        how = (
            ""
            if charge["counted"] == charge["guarantee"]
            else f"   (declared {_guarantee_text(charge['guarantee'])}, counted by group privacy)"
        )
        label = charge["label"] or "(no label)"
        print(f"  #{charge['seq']:<4} {charge['time'] or 'no time':<20}  {amount:<24}  {label}{how}")
    return EXIT_OK


def _guarantee_text(fields: dict[str, Any]) -> str:
    from smoothdp.ledger.records import guarantee_from_dict

    return str(guarantee_from_dict(fields))


def _budget_verify(args: argparse.Namespace) -> int:
    with _open_ledger(args.file, _key(args.key_file)) as accountant:  # opening verifies the whole chain
        try:
            head = accountant.verify()
            for anchor in args.anchor:
                accountant.verify(anchor=anchor)
        except ValueError as error:
            raise CliError(str(error).splitlines()[0]) from None
        spent = accountant.spent
    anchors = f"; anchor(s) {', '.join(args.anchor)} hold" if args.anchor else ""
    print(
        f"verified {args.file}: the chain holds {head.charges if head else 0} charge(s), head {head}; "
        f"spent ε = {_num(spent.epsilon)}, δ = {_num(spent.delta)}{anchors}"
    )
    return EXIT_OK


def _budget_export(args: argparse.Namespace) -> int:
    import json

    with _open_ledger(args.file, _key(args.key_file)) as accountant:
        payload = accountant.to_dict()
    print(json.dumps(payload, indent=2, ensure_ascii=False))
    return EXIT_OK


def _budget_migrate(args: argparse.Namespace) -> int:
    from smoothdp.ledger import migrate

    try:
        accountant = migrate(args.source, args.file, key=_key(args.key_file))
    except (ValueError, TypeError) as error:
        raise CliError(f"cannot migrate {args.source}: {str(error).splitlines()[0]}") from None
    with accountant:
        spent, head, n = accountant.spent, accountant.head, len(accountant)
    print(
        f"migrated {n} charge(s) from {args.source} into {args.file}: spent ε = {_num(spent.epsilon)}, "
        f"δ = {_num(spent.delta)}; chain head {head}"
    )
    return EXIT_OK


def _print_json(release: Any, *, simulation: bool, budget: dict[str, Any] | None = None) -> None:
    """One JSON object on stdout: the public fields (:meth:`~smoothdp.Release.to_dict`, values at full
    precision) and ``"simulation"`` (and, with ``--budget``, ``"budget"``: the file, what this release was
    charged and what is left); never the not-private values. A simulation's banner goes to stderr."""
    import json

    payload = release.to_dict()
    payload["simulation"] = simulation
    if budget is not None:
        payload["budget"] = budget
    if simulation:
        print(SIMULATION_BANNER, file=sys.stderr)
    print(json.dumps(payload))


def _print_release(
    release: Any, statistic: str, *, simulation: bool = False, budget: dict[str, Any] | None = None
) -> None:
    """The public fields of a release, then the data holder's not-private values, each marked as such.

    A simulation (seeded generator) starts and ends with :data:`SIMULATION_BANNER`. The record count is
    private under add/remove (mean): it is never printed, nor how many cells were imputed or clipped.
    """
    if simulation:
        print(SIMULATION_BANNER)
    print(f"statistic:   {statistic}")
    print(f"guarantee:   {release.guarantee_text}   (neighbours: {release.guarantee.relation})")
    print(f"mechanism:   {release.mechanism}")
    if release.proof:
        print(f"proof:       {release.proof}")
    hidden = release.not_private
    for label, number in (("noise scale:", hidden.noise_scale), ("noise std:  ", hidden.noise_std)):
        if number is not None:
            print(f"{label} {number:.6g}{NOT_PRIVATE}")
    if hidden.smooth_sensitivity is not None:
        beta = f" (β = {release.beta:.4g})" if release.beta is not None else ""
        print(f"smooth sensitivity: {hidden.smooth_sensitivity:.6g}{beta}{NOT_PRIVATE}")
    if release.refused:
        print(f"value:       refused ({release.reason})")
    elif getattr(release.value, "ndim", 0):  # several quantiles, in the order asked
        print(f"value:       [{', '.join(repr(float(v)) for v in release.value)}]")
    else:
        print(f"value:       {float(release.value)!r}")  # full precision: the exact released float
    if budget is not None:
        charged = " + ".join(f"ε = {_num(c['epsilon'])}, δ = {_num(c['delta'])}" for c in budget["charged"])
        left = budget["remaining"]
        print(
            f"budget:      charged {charged} to {budget['file']}; remaining ε = {_num(left['epsilon'])}, "
            f"δ = {_num(left['delta'])}"
        )
        if budget.get("head"):
            print(f"chain head:  {budget['head']}   (keep it to anchor the ledger: smoothdp budget verify)")
    if simulation:
        print(SIMULATION_BANNER)


# ------------------------------------------------------------------------------------------ demo


def _number(value: float | None, spec: str = "8.3g") -> str:
    """A not-private number for the data holder's eyes (``n/a`` when the mechanism has none)."""
    return "n/a" if value is None else format(value, spec)


def _demo() -> None:
    import numpy as np

    from smoothdp.data import load_adult_ages

    ages = load_adult_ages()
    epsilon, bounds = 1.0, (0.0, 125.0)
    print("smoothdp demo: the median age of the 32,561 UCI Adult respondents, ε = 1, ages in [0, 125].")
    print(f"  true median (not private):            {np.median(ages):g}")
    from smoothdp.central import global_sensitivity_median, median

    private = median(ages, epsilon=epsilon, bounds=bounds, noise="polyplace")
    baseline = global_sensitivity_median(ages, bounds=bounds, epsilon=epsilon)
    print(
        f"  smooth sensitivity + PolyPlace noise: {private.value:8.3f}   noise std "
        f"{_number(private.not_private.noise_std)}   {private.guarantee}"
    )
    ties = int(np.sum(ages == np.median(ages)))
    print(
        f"  (smooth sensitivity {_number(private.not_private.smooth_sensitivity, '.3g')}: {ties} respondents "
        f"are exactly {np.median(ages):g}, so many records must change before the median can move)"
    )
    print(
        f"  global sensitivity + Laplace noise:   {baseline.value:8.3f}   noise std "
        f"{_number(baseline.not_private.noise_std)}   {baseline.guarantee}"
    )
    print(
        "  Only the values are private: noise std and smooth sensitivity are computed from the data, "
        "NOT private: do not publish them."
    )
    print("  Fresh secure randomness on every run: the private values change, the guarantee does not.")


# ------------------------------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``smoothdp`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    try:
        if not argv:
            _demo()
            print()
            parser.print_help()
            return EXIT_OK
        args = parser.parse_args(argv)
        if args.command == "list":
            return _cmd_list()
        if args.command == "reproduce":
            return _cmd_reproduce(args)
        if args.command == "release":
            return _cmd_release(args)
        if args.command == "budget":
            return _cmd_budget(args)
        parser.print_help()
        return 0
    except CliError as error:
        print(f"smoothdp: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BudgetRefused as error:
        print(f"smoothdp: budget refused: {error}", file=sys.stderr)
        return EXIT_BUDGET
    except BrokenPipeError:  # `smoothdp | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except KeyboardInterrupt:
        print("smoothdp: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug or an environment failure: one line, exit 1 (EXIT_CODES)
        message = str(error).splitlines()[0] if str(error) else ""
        print(f"smoothdp: unexpected error: {type(error).__name__}: {message}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
