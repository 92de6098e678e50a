"""The same work on neighbouring data: release time of each member of the audit's neighbour pairs.

For each pair (x, x′ differing in one record) and each default release path, the median over ``--runs``
interleaved runs of the release time of x and of x′, their ratio (larger / smaller), and the load average.
Target: ratio ≤ 1.2 on every row (docs/theory/floating-point.md#timing).

    python benchmarks/bench_equal_work.py --n 1000000 --runs 7
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import smoothdp


def pairs(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    gen = np.random.default_rng(0)
    normal = gen.normal(50.0, 10.0, n)
    run = np.concatenate((gen.normal(50.0, 10.0, n // 2), np.full(n - n // 2, 50.37)))
    gen.shuffle(run)
    cluster = np.concatenate((np.full(n // 2 + 3, 20.25), gen.normal(80.0, 1.0, n - n // 2 - 3)))
    nan_run = normal.copy()
    nan_run[: n // 2 + 50] = np.nan
    equal = np.full(n, 50.5)

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
    }


def releases() -> dict[str, Callable[[Any], Any]]:
    b = (0.0, 100.0)
    return {
        "median (default, ε=1: exponential)": lambda x: smoothdp.median(x, epsilon=1.0, bounds=b),
        "median (default, ε=2: smooth sensitivity)": lambda x: smoothdp.median(x, epsilon=2.0, bounds=b),
        "quantiles 0.1/0.5/0.9 (default)": lambda x: smoothdp.quantiles(
            x, [0.1, 0.5, 0.9], epsilon=1.0, bounds=b
        ),
        "trimmed mean": lambda x: smoothdp.trimmed_mean(x, 0.1, epsilon=1.0, bounds=b),
        "mean": lambda x: smoothdp.mean(x, epsilon=1.0, bounds=b),
        "median on Dask (threads)": lambda x: smoothdp.median(x, epsilon=1.0, bounds=b, engine="dask"),
    }


def timed(f: Callable[[Any], Any], x: Any) -> float:
    start = time.perf_counter()
    f(x)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default="", help="substring of the release names to run")
    args = parser.parse_args()
    print(f"n = {args.n}, median of {args.runs} interleaved runs; load average {os.getloadavg()}")
    print("| release | pair | x (ms) | x′ (ms) | ratio | load |")
    print("|---|---|---|---|---|---|")
    for name, release in releases().items():
        if args.only not in name:
            continue
        for pair, (x, y) in pairs(args.n).items():
            release(x), release(y)  # warm up (imports, caches)
            tx, ty = [], []
            for _ in range(args.runs):
                tx.append(timed(release, x))
                ty.append(timed(release, y))
            a, b = float(np.median(tx)), float(np.median(ty))
            load = os.getloadavg()[0]
            ratio = max(a, b) / min(a, b)
            print(f"| {name} | {pair} | {1e3 * a:.1f} | {1e3 * b:.1f} | {ratio:.2f} | {load:.2f} |")


if __name__ == "__main__":
    main()
