"""Import cost of smoothdp against numpy's (run as a script, not a test).

    .venv/bin/python benchmarks/bench_import.py [--repeats 5]

Each command runs in a fresh interpreter; the commands are interleaved (one after the other inside each
repeat, so that a slow moment of a shared machine hits all of them alike) and the best of ``--repeats``
wall times is kept. Targets, asserted (exit status 1 when one is missed):

* ``import smoothdp`` ≤ 2.5 × ``import numpy`` (wall times of the whole interpreter run);
* ``smoothdp --help`` ≤ 0.5 s.

Also printed, not asserted: the bare interpreter (``python -c pass``), the first use of the main entry point
(``from smoothdp import median``, which loads the release path) and the 10 slowest modules of
``import smoothdp`` by ``python -X importtime``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

#: import smoothdp may take at most this multiple of import numpy.
IMPORT_RATIO_TARGET = 2.5
#: smoothdp --help may take at most this many seconds.
HELP_SECONDS_TARGET = 0.5


def _cli() -> list[str]:
    """The installed ``smoothdp`` command next to this interpreter, else ``python -m smoothdp.cli``."""
    script = Path(sys.executable).with_name("smoothdp")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "smoothdp.cli"]


COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import numpy": [sys.executable, "-c", "import numpy"],
    "import smoothdp": [sys.executable, "-c", "import smoothdp"],
    "smoothdp --help": [*_cli(), "--help"],
    "from smoothdp import median": [sys.executable, "-c", "from smoothdp import median"],
}


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _slowest_modules(count: int = 10) -> list[tuple[float, str]]:
    """The modules with the largest cumulative import time in ``import smoothdp`` (seconds, name)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import smoothdp"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            rows.append((int(cumulative) * 1e-6, name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="keep the best of this many runs (default 5)")
    args = parser.parse_args(argv)
    best = dict.fromkeys(COMMANDS, float("inf"))
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            best[name] = min(best[name], _wall(command))
    print(f"python {platform.python_version()} on {platform.machine()}; best of {args.repeats}, interleaved")
    for name, seconds in best.items():
        print(f"  {name:<28} {seconds:7.3f} s")
    ratio = best["import smoothdp"] / best["import numpy"]
    net = (best["import smoothdp"] - best["python -c pass"]) / (best["import numpy"] - best["python -c pass"])
    print(
        f"  import smoothdp / import numpy: {ratio:.2f} (target ≤ {IMPORT_RATIO_TARGET}); "
        f"net of interpreter start-up: {net:.2f}"
    )
    print("slowest modules of `import smoothdp` (cumulative):")
    for seconds, name in _slowest_modules():
        print(f"  {seconds:7.3f} s  {name}")
    failures = []
    if ratio > IMPORT_RATIO_TARGET:
        failures.append(f"import smoothdp is {ratio:.2f} × import numpy (target ≤ {IMPORT_RATIO_TARGET})")
    if best["smoothdp --help"] > HELP_SECONDS_TARGET:
        failures.append(
            f"smoothdp --help takes {best['smoothdp --help']:.3f} s (target ≤ {HELP_SECONDS_TARGET} s)"
        )
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print("targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
