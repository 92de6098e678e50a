"""Exact δ(x) of the 8-bit sampling average: the counting recursion with a shared prefix against the previous
per-record normalised recursion (one full pass per removed value).

    python benchmarks/bench_subset_sum.py           # subset_sum_laws and heuristic δ(x), n = 100, 175, 250
    python benchmarks/bench_subset_sum.py --all     # also δ(x) over every neighbour at n = 100 (~10 s)

Data: n codes from N_8bit(0, 0.12²) (the smoothed-sgd experiment's model), T = round(√n), ten ε (0.5..5).
Old and new are timed interleaved (old, new, old, new, ...) and the best of ``--repeats`` kept for each, so
a load spike on the machine hits both alike. The previous implementation is the reference copy kept in
tests/smoothed_dp/test_subset_sum_fast.py; the script also checks that both agree to 1e-12.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import numpy as np

from smoothdp.rng import default_rng
from smoothdp.smoothed_dp.quantized import (
    QuantizedSamplingAverage,
    quantized_average_deltas,
    quantized_normal_pmf,
    subset_sum_laws,
)

TESTS = Path(__file__).resolve().parent.parent / "tests" / "smoothed_dp"
EPSILONS = [0.5 * k for k in range(1, 11)]


def reference_module() -> ModuleType:
    """The test module holding the previous implementation (its helpers import smoothed_brute from there)."""
    sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location("subset_sum_reference", TESTS / "test_subset_sum_fast.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(TESTS / "test_subset_sum_fast.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_of(old: Callable[[], object], new: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best wall time of each, measured interleaved."""
    best_old = best_new = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        old()
        best_old = min(best_old, time.perf_counter() - start)
        start = time.perf_counter()
        new()
        best_new = min(best_new, time.perf_counter() - start)
    return best_old, best_new


def report(label: str, old: float, new: float) -> None:
    print(
        f"{label:<44} old {old * 1e3:9.2f} ms   new {new * 1e3:8.2f} ms   ratio {old / new:6.1f}×", flush=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timings per implementation (best kept)")
    parser.add_argument("--all", action="store_true", help="also δ(x) over every neighbour at n = 100")
    args = parser.parse_args()
    ref = reference_module()
    mech = QuantizedSamplingAverage()
    pmf = quantized_normal_pmf(0.0, 0.12)
    gen = default_rng(20261124)  # a fixed benchmark input, not a release
    print(f"numpy {np.__version__}; best of {args.repeats}, interleaved")
    for n in (100, 175, 250):
        codes = gen.choice(mech.levels, size=n, p=pmf)
        t = mech.sample_size(n)
        values = codes - mech.low
        np.testing.assert_allclose(
            subset_sum_laws(values, t), ref.reference_subset_sum_laws(values, t), rtol=1e-12
        )
        old, new = best_of(
            partial(ref.reference_subset_sum_laws, values, t),
            partial(subset_sum_laws, values, t),
            args.repeats,
        )
        report(f"subset_sum_laws, n = {n}, T = {t}", old, new)
        got = quantized_average_deltas(mech, codes, EPSILONS, neighbours="heuristic")[0]
        want = ref.reference_deltas(mech, codes, EPSILONS, "heuristic")[0]
        np.testing.assert_allclose(got, want, rtol=1e-12)
        old, new = best_of(
            partial(ref.reference_deltas, mech, codes, EPSILONS, "heuristic"),
            partial(quantized_average_deltas, mech, codes, EPSILONS, neighbours="heuristic"),
            args.repeats,
        )
        report(f"δ(x), heuristic neighbours, n = {n}", old, new)
    if args.all:
        codes = gen.choice(mech.levels, size=100, p=pmf)
        got = quantized_average_deltas(mech, codes, EPSILONS, neighbours="all")[0]
        want = ref.reference_deltas(mech, codes, EPSILONS, "all")[0]
        np.testing.assert_allclose(got, want, rtol=1e-12)
        old, new = best_of(
            lambda: ref.reference_deltas(mech, codes, EPSILONS, "all"),
            lambda: quantized_average_deltas(mech, codes, EPSILONS, neighbours="all"),
            min(args.repeats, 3),
        )
        report(f"δ(x), all neighbours, n = 100 ({np.unique(codes).size} values)", old, new)


if __name__ == "__main__":
    main()
