"""The first release in a fresh process against numpy's median in a fresh process (a script).

    .venv/bin/python benchmarks/bench_first_release.py [--rounds 7] [--out FILE]

Each command is a new interpreter that makes 1,000 uniform values and computes one statistic: numpy's
median (the baseline), smoothdp's default ``median`` and default ``mean`` (ε = 1, bounds (0, 100), the
secure generator: a real release through the exact path). The commands run interleaved, best of
``--rounds`` (≥ 5) of the child's CPU time (user + system) and of the wall time, the load averages beside
each row. Target (issue 24): the first default median ≤ 2 × numpy's median, both in a fresh process.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

from timing import header, load

TARGET = 2.0
DATA = "import numpy as np\nx = np.random.default_rng(0).uniform(0, 100, 1000)\n"
RELEASE = DATA + "import smoothdp\nsmoothdp.{}(x, epsilon=1.0, bounds=(0, 100))"
COMMANDS = {
    "numpy median": DATA + "np.median(x)",
    "smoothdp median (first release)": RELEASE.format("median"),
    "smoothdp mean (first release)": RELEASE.format("mean"),
}


def _run(code: str) -> tuple[float, float]:
    """(child CPU seconds, wall seconds) of one fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    args = parser.parse_args()
    for code in COMMANDS.values():  # warm the file cache
        _run(code)
    before = load()
    cpu = dict.fromkeys(COMMANDS, float("inf"))
    wall = dict.fromkeys(COMMANDS, float("inf"))
    for _ in range(args.rounds):
        for name, code in COMMANDS.items():
            c, w = _run(code)
            cpu[name], wall[name] = min(cpu[name], c), min(wall[name], w)
    around = f"{before} → {load()}"
    base = "numpy median"
    lines = [
        header("first release in a fresh process", args.rounds),
        "",
        "| command | CPU s | wall s | CPU / numpy median | wall / numpy median | load 1m/5m/15m |",
        "|---|---|---|---|---|---|",
    ]
    for name in COMMANDS:
        r_cpu, r_wall = cpu[name] / cpu[base], wall[name] / wall[base]
        mark = ""
        if name.startswith("smoothdp median"):
            mark = " (met)" if r_cpu <= TARGET else " (MISSED)"
        figures = f"{cpu[name]:.3f} | {wall[name]:.3f} | **{r_cpu:.2f}**{mark} | {r_wall:.2f}"
        lines.append(f"| {name} | {figures} | {around} |")
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0 if cpu["smoothdp median (first release)"] <= TARGET * cpu[base] else 1


if __name__ == "__main__":
    sys.exit(main())
