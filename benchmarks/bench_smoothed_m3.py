"""Smoothed DP with three categories: timings of the pair-reduced path against the per-histogram loop.

    python benchmarks/bench_smoothed_m3.py          # δ_SDP at n = 30 (baseline), one vertex at n = 1e3
    python benchmarks/bench_smoothed_m3.py --large  # also n = 1e4 (about a minute per ε)
    python benchmarks/bench_smoothed_m3.py --huge   # also n = 1e5 (hours with this path)

Setting: SamplingHistogram(eta=0.998) (0.2% of the records lost), Π's vertex (0.921, 0.054, 0.025) (the
three-way shares of a lopsided electorate, illustrative), ε ∈ {1, 7}.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from smoothdp.smoothed_dp.algorithm1 import general_smoothed_delta
from smoothdp.smoothed_dp.histogram_profile import histogram_log_profile
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.smoothed_dp.pairs import histograms_log_profile, trinomial_log_expected_delta

PI = [0.921, 0.054, 0.025]


def baseline(n: int, eps: float) -> None:
    vertices = hull_vertices([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    lost = n - math.ceil(0.9 * n)
    t0 = time.perf_counter()
    old = general_smoothed_delta(lambda h: histogram_log_profile(h, lost, eps, replace=False)[0], n, vertices)
    t1 = time.perf_counter()
    new = general_smoothed_delta(
        None, n, vertices, log_profiles=lambda hs: histograms_log_profile(hs, lost, eps, replace=False)
    )
    t2 = time.perf_counter()
    print(
        f"δ_SDP m=3 n={n} eta=0.9 eps={eps}: per-histogram loop {t1 - t0:.2f} s, pair table {t2 - t1:.2f} s "
        f"(x{(t1 - t0) / (t2 - t1):.0f}); log10 δ {old[0] / math.log(10):.12f} "
        f"vs {new[0] / math.log(10):.12f}"
    )


def one_vertex(n: int, eps: float) -> None:
    lost = n - math.ceil(0.998 * n)
    t0 = time.perf_counter()
    value = trinomial_log_expected_delta(n, lost, eps, PI, replace=False)
    t1 = time.perf_counter()
    oracle = lost * math.log10(1 - min(PI))
    print(
        f"E[δ] one vertex m=3 n={n} L={lost} eps={eps}: {t1 - t0:.2f} s, log10 = {value / math.log(10):.6f} "
        f"(large-ε value {oracle:.6f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also n = 1e4")
    parser.add_argument("--huge", action="store_true", help="also n = 1e5 (hours)")
    args = parser.parse_args()
    np.seterr(all="ignore")
    baseline(30, 1.0)
    sizes = [1_000] + ([10_000] if args.large else []) + ([100_000] if args.huge else [])
    for n in sizes:
        for eps in (1.0, 7.0):
            one_vertex(n, eps)
    if not args.huge:
        print("n = 1e5 skipped (--huge): this path's work grows like n·L (docs/theory/smoothed-dp.md)")


if __name__ == "__main__":
    main()
