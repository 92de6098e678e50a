"""What the exact release path adds to a central release, against the statistic alone, same run.

Target (issue 11): a hardened central release adds ≤ 2 ms to the statistic. For each mechanism and n, three
calls are timed interleaved (statistic, float release, exact release) and the best of several rounds is
kept, so the differences are robust to the load of the shared machine. The "statistic" is what the release
must compute anyway (the sort and the value, or the exact sum for means); the overhead columns are
exact − statistic and exact − float.

Run: ``.venv/bin/python benchmarks/bench_central_hardened.py [--sizes 1000 100000] [--rounds 7]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from smoothdp.central import (
    GlobalSensitivityMean,
    Mean,
    Median,
    SmoothSensitivityMechanism,
    TrimmedMean,
)
from smoothdp.rng import default_rng

BOUNDS = (0.0, 100.0)


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cases(numerics: str) -> dict[str, tuple[Callable[[np.ndarray], object], object]]:
    """Mechanism name -> (the statistic alone, the mechanism at ``numerics``)."""
    median, trimmed, mean = Median(bounds=BOUNDS), TrimmedMean(0.1, bounds=BOUNDS), Mean(bounds=BOUNDS)
    return {
        "median (smooth sensitivity)": (
            median.value,
            SmoothSensitivityMechanism(median, epsilon=1.0, numerics=numerics),
        ),
        "trimmed mean 10%": (
            trimmed.value,
            SmoothSensitivityMechanism(trimmed, epsilon=1.0, numerics=numerics),
        ),
        "mean (smooth sensitivity)": (
            mean.value,
            SmoothSensitivityMechanism(mean, epsilon=1.0, numerics=numerics),
        ),
        "mean (global sensitivity)": (
            mean.value,
            GlobalSensitivityMean(epsilon=1.0, bounds=BOUNDS, numerics=numerics),
        ),
    }


def bench(n: int, rounds: int) -> None:
    x = default_rng(n).uniform(*BOUNDS, size=n)
    floats, exacts = _cases("float"), _cases("exact")
    for name in floats:
        statistic, fast = floats[name]
        exact = exacts[name][1]
        calls: dict[str, Callable[[], object]] = {
            "statistic": partial(statistic, x),
            "float": partial(fast.release, x, rng=default_rng(1)),  # type: ignore[attr-defined]
            "exact": partial(exact.release, x, rng=default_rng(1)),  # type: ignore[attr-defined]
        }
        for call in calls.values():  # warm-up: imports, python-flint, tables
            call()
        best = dict.fromkeys(calls, np.inf)
        for _ in range(rounds):
            for key, call in calls.items():
                best[key] = min(best[key], _time(call))
        ms = {k: 1e3 * v for k, v in best.items()}
        print(
            f"n={n:>8,}  {name:<28} statistic {ms['statistic']:8.3f} ms  float {ms['float']:8.3f} ms  "
            f"exact {ms['exact']:8.3f} ms  exact−statistic {ms['exact'] - ms['statistic']:+7.3f} ms  "
            f"exact−float {ms['exact'] - ms['float']:+7.3f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for n in args.sizes:
        bench(n, args.rounds)


if __name__ == "__main__":
    main()
