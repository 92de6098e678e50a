"""The same work on neighbouring data: release time of each member of the audit's neighbour pairs.

For each pair (x, x′ differing in one record: a tie run crossing the median's window against the run's
record moved out, all-equal data against one record moved, one moved record of normal data, two
clusters, a NaN-imputed run, records packed into subnormal gaps; and, as a control that shows the
measurement's own noise, the same data twice) and each default release path (the
median by the exponential mechanism at ε = 1 and by smooth sensitivity at ε = 2, the quantiles 0.1, 0.5,
0.9, the trimmed mean, the mean, and the median on Dask with the threaded scheduler), ``--runs``
interleaved runs of x and x′; reported: the median wall-clock time of each and their ratio (larger /
smaller), the same for CPU time (``time.process_time``: all threads of the process; it leaves out the
time the process waits for a core, which dominates wall-clock noise on a shared machine), the counted
work (:mod:`smoothdp.work`) equal or not, and the load average. Target (issue 23): ratio ≤ 1.2 on every
row (docs/theory/floating-point.md#timing says what is and is not equalised).

    python benchmarks/bench_equal_work.py --n 1000000 --runs 7 --out benchmarks/results/equal_work.md
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import smoothdp
from smoothdp.work import count_work


def pairs(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The neighbour pairs of tests/scale/test_equal_work.py at size n."""
    gen = np.random.default_rng(0)
    normal = gen.normal(50.0, 10.0, n)
    run = np.concatenate((gen.normal(50.0, 10.0, n // 2), np.full(n - n // 2, 50.37)))
    gen.shuffle(run)
    cluster = np.concatenate((np.full(n // 2 + 3, 20.25), gen.normal(80.0, 1.0, n - n // 2 - 3)))
    nan_run = normal.copy()
    nan_run[: n // 2 + 50] = np.nan
    equal = np.full(n, 50.5)
    subnormal = np.arange(1, n + 1) * 5e-324

    def moved(x: np.ndarray, value: float, index: int = 0) -> np.ndarray:
        y = x.copy()
        y[index] = value
        return y

    return {
        "tie run crossing the window": (run, moved(run, 99.0, int(np.argmax(run == 50.37)))),
        "all equal vs one moved": (equal, moved(equal, 3.0)),
        "one moved record": (normal, moved(normal, 0.0, int(np.argmax(normal)))),
        "two clusters": (cluster, moved(cluster, 80.0)),
        "NaN-imputed run": (nan_run, moved(nan_run, 12.0)),
        "records in subnormal gaps": (subnormal, moved(subnormal, 1e-320, n - 1)),
        "control: the same data twice": (normal, normal.copy()),
    }


def releases() -> dict[str, Callable[[Any], Any]]:
    b = (0.0, 100.0)
    return {
        "median (ε=1: exponential)": lambda x: smoothdp.median(x, epsilon=1.0, bounds=b),
        "median (ε=2: smooth sensitivity)": lambda x: smoothdp.median(x, epsilon=2.0, bounds=b),
        "quantiles 0.1/0.5/0.9": lambda x: smoothdp.quantiles(x, [0.1, 0.5, 0.9], epsilon=1.0, bounds=b),
        "trimmed mean 10%": lambda x: smoothdp.trimmed_mean(x, 0.1, epsilon=1.0, bounds=b),
        "mean": lambda x: smoothdp.mean(x, epsilon=1.0, bounds=b),
        "median on Dask (threads)": lambda x: smoothdp.median(x, epsilon=1.0, bounds=b, engine="dask"),
    }


def timed(f: Callable[[Any], Any], x: Any) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    f(x)
    return time.perf_counter() - wall, time.process_time() - cpu


def counted(f: Callable[[Any], Any], x: Any) -> dict[str, int]:
    with count_work() as work:
        f(x)
    return work.as_dict()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default="", help="substring of the release names to run")
    parser.add_argument("--pairs", default="", help="substring of the pair names to run")
    parser.add_argument("--out", default="", help="also write the table (markdown) to this file")
    args = parser.parse_args()
    import dask

    dask.config.set(scheduler="threads")
    lines = [
        f"n = {args.n}, median of {args.runs} interleaved runs per member; load average at the start "
        f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} cores; numpy {np.__version__}",
        "",
        "| release | pair | x (ms) | x′ (ms) | wall ratio | x CPU (ms) | x′ CPU (ms) | CPU ratio | work equal"
        " | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    data = pairs(args.n)
    worst = {"wall": 1.0, "cpu": 1.0}
    for name, release in releases().items():
        if args.only not in name:
            continue
        for pair, (x, y) in data.items():
            if args.pairs not in pair:
                continue
            same = counted(release, x) == counted(release, y)  # also the warm-up (imports, caches)
            tx, ty = [], []
            for _ in range(args.runs):
                tx.append(timed(release, x))
                ty.append(timed(release, y))
            wx, cx = np.median(np.array(tx), axis=0)
            wy, cy = np.median(np.array(ty), axis=0)
            wall, cpu = max(wx, wy) / min(wx, wy), max(cx, cy) / min(cx, cy)
            worst = {"wall": max(worst["wall"], wall), "cpu": max(worst["cpu"], cpu)}
            line = (
                f"| {name} | {pair} | {1e3 * wx:.1f} | {1e3 * wy:.1f} | {wall:.2f} | {1e3 * cx:.1f} | "
                f"{1e3 * cy:.1f} | {cpu:.2f} | {'yes' if same else 'NO'} | {os.getloadavg()[0]:.2f} |"
            )
            lines.append(line)
            print(line, flush=True)
    tail = f"\nLargest ratio: wall-clock {worst['wall']:.2f}, CPU {worst['cpu']:.2f} (target ≤ 1.2)."
    print(tail)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("# The same work on neighbouring data: release times\n\n")
            fh.write("`" + " ".join(["python", "benchmarks/bench_equal_work.py", f"--n {args.n}"]))
            fh.write(f" --runs {args.runs}`\n\n" + "\n".join(lines) + "\n" + tail + "\n")


if __name__ == "__main__":
    main()
