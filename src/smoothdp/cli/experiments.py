"""``smoothdp list``, ``smoothdp reproduce`` and ``smoothdp demo``: the reproductions of the source papers
(:mod:`smoothdp.experiments`) and a short tour.

* ``smoothdp list``: the reproduced experiments, one line each; without the ``experiments`` extra (what
  ``reproduce`` needs: matplotlib, tqdm) each line names the command that installs it.
* ``smoothdp reproduce [NAME ...] [--quick] [--out DIR] [--seed N]``: run the reproductions.
* ``smoothdp demo``: a private median of the Adult ages next to the global-sensitivity baseline.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from smoothdp.cli.parsing import EXIT_OK, CliError, check_seed, subcommand

__all__ = ["EXPERIMENTS_EXTRA", "INSTALL_EXTRA", "add_parsers", "missing_extra"]

#: The packages of the ``experiments`` extra, which only ``smoothdp reproduce`` needs.
EXPERIMENTS_EXTRA = ("matplotlib", "tqdm")
INSTALL_EXTRA = "pip install 'smoothdp[experiments]'"


def add_parsers(commands: Any) -> None:
    listing = subcommand(commands, "list", help="list the reproduced experiments")
    listing.set_defaults(run=_list)
    reproduce = subcommand(
        commands,
        "reproduce",
        help="run the reproductions of the source papers",
        example="smoothdp reproduce polyplace-std --quick --out results",
    )
    reproduce.set_defaults(run=_reproduce)
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
    demo = subcommand(
        commands,
        "demo",
        help="a private median of the 32,561 UCI Adult ages, next to the global-sensitivity baseline",
    )
    demo.set_defaults(run=_demo)


def missing_extra() -> list[str]:
    """The packages of the ``experiments`` extra that are not installed (or cannot be imported)."""
    import importlib

    missing = []
    for name in EXPERIMENTS_EXTRA:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def _list(args: argparse.Namespace) -> int:
    from smoothdp.experiments import EXPERIMENTS

    extra = missing_extra()
    width = max(len(name) for name in EXPERIMENTS)
    for name, experiment in EXPERIMENTS.items():
        if extra:  # every reproduction needs the extra: say how to install it, not what is missing
            status = f"  [needs {' and '.join(extra)}: {INSTALL_EXTRA}]"
        else:
            missing = experiment.missing()
            status = f"  [waiting for {', '.join(missing)}]" if missing else ""
        print(f"{name:<{width}}  {experiment.summary}{status}")
    return EXIT_OK


def _reproduce(args: argparse.Namespace) -> int:
    missing = missing_extra()
    if missing:
        raise CliError(
            f"reproduce needs {' and '.join(missing)}, not installed; install the extra: {INSTALL_EXTRA}"
        )
    from smoothdp.experiments import EXPERIMENTS, reproduce
    from smoothdp.experiments.report import format_seconds

    unknown = [n for n in args.names if n not in EXPERIMENTS]
    if unknown:
        raise CliError(f"unknown experiment {unknown[0]!r}; choose from: {', '.join(EXPERIMENTS)}")
    check_seed(args.seed)
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    start = time.perf_counter()
    records = reproduce(args.names, mode=mode, out_dir=args.out, seed=args.seed, show_progress=not args.quiet)
    for r in records:
        line = r.outcome.headline if r.outcome is not None else r.reason  # an outcome exactly when done
        print(f"{r.name}: {r.status} ({format_seconds(r.seconds)}): {line}")
    print(f"total {format_seconds(time.perf_counter() - start)}; index: {Path(args.out) / 'index.md'}")
    return 1 if any(r.status == "failed" for r in records) else EXIT_OK


def _number(value: float | None, spec: str = "8.3g") -> str:
    """A not-private number for the data holder's eyes (``n/a`` when the mechanism has none)."""
    return "n/a" if value is None else format(value, spec)


def _demo(args: argparse.Namespace) -> int:
    import numpy as np

    import smoothdp
    from smoothdp.central import global_sensitivity_median
    from smoothdp.data import load_adult_ages

    ages = load_adult_ages()
    epsilon, bounds = 1.0, (0.0, 125.0)
    print("smoothdp demo: the median age of the 32,561 UCI Adult respondents, ε = 1, ages in [0, 125].")
    print(f"  true median (not private):            {np.median(ages):g}")
    private = smoothdp.median(ages, epsilon=epsilon, bounds=bounds, noise="polyplace")
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
    return EXIT_OK
