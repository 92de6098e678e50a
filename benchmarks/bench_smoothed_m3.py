"""Smoothed DP with three categories: the pair-reduced path, and the monotone bracket at large n.

    python benchmarks/bench_smoothed_m3.py          # δ_SDP at n = 30 (baseline), one vertex at n = 1e3,
                                                    # the bracket and the public call at n = 1e4 and 1e5
    python benchmarks/bench_smoothed_m3.py --large  # also the pair path at n = 1e4 (about a minute per ε)
    python benchmarks/bench_smoothed_m3.py --huge   # also the pair path at n = 1e5 (hours)

Setting: SamplingHistogram(eta=0.998) (0.2% of the records lost), Π's vertex (0.921, 0.054, 0.025) (the
three-way shares of a lopsided electorate, illustrative), ε ∈ {1, 7}; the public call adds a second vertex
(0.45, 0.45, 0.10). Results are written to benchmarks/results/smoothed_m3.md.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

import numpy as np

from smoothdp.smoothed_dp import SamplingHistogram, smoothed_delta
from smoothdp.smoothed_dp.algorithm1 import general_smoothed_delta
from smoothdp.smoothed_dp.bracket import trinomial_expected_delta_bracket
from smoothdp.smoothed_dp.histogram_profile import histogram_log_profile
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.smoothed_dp.pairs import histograms_log_profile, trinomial_log_expected_delta

PI = [0.921, 0.054, 0.025]
SECOND = [0.45, 0.45, 0.10]
RESULTS = Path(__file__).parent / "results" / "smoothed_m3.md"
LINES: list[str] = []


def record(text: str) -> None:
    print(text, flush=True)
    LINES.append(text)


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
    record(
        f"| pair path, one vertex | {n} | {eps:g} | — | {value / math.log(10):.6f} | {t1 - t0:.2f} "
        f"(large-ε value {oracle:.6f}) |"
    )


def bracket(n: int, eps: float, rtol: float) -> None:
    lost = n - math.ceil(0.998 * n)
    t0 = time.perf_counter()
    b = trinomial_expected_delta_bracket(n, lost, eps, [n], [PI], rtol=rtol)
    t1 = time.perf_counter()
    record(
        f"| bracket, one vertex | {n} | {eps:g} | {rtol:g} | [{b.log_lower / math.log(10):.6f}, "
        f"{b.log_upper / math.log(10):.6f}] | {t1 - t0:.2f} (bits {b.bits}, {b.histograms} histograms) |"
    )


def public_call(n: int, eps: float) -> None:
    t0 = time.perf_counter()
    r = smoothed_delta(SamplingHistogram(eta=0.998), eps, n, [PI, SECOND])
    t1 = time.perf_counter()
    record(
        f"| smoothed_delta, two vertices | {n} | {eps:g} | 1e-2 | [{r.log10_lower:.6f}, {r.log10_delta:.6f}] "
        f"| {t1 - t0:.2f} (mixture {r.mixture}, {len(r.evaluated)} mixtures) |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also n = 1e4")
    parser.add_argument("--huge", action="store_true", help="also n = 1e5 (hours)")
    args = parser.parse_args()
    np.seterr(all="ignore")
    baseline(30, 1.0)
    record(f"Machine: {platform.machine()}, 2 shared cores; times in s.\n")
    record("| path | n | ε | rtol | log10 E[δ] or bracket | time (s) |")
    record("|---|---|---|---|---|---|")
    sizes = [1_000] + ([10_000] if args.large else []) + ([100_000] if args.huge else [])
    for n in sizes:
        for eps in (1.0, 7.0):
            one_vertex(n, eps)
    for n in (1_000, 10_000, 100_000):
        for eps in (1.0, 7.0):
            bracket(n, eps, 1e-2)
    bracket(10_000, 1.0, 1e-3)
    for n in (10_000, 100_000):
        for eps in (1.0, 7.0):
            public_call(n, eps)
    RESULTS.write_text(
        "# Smoothed DP, m = 3 (benchmarks/bench_smoothed_m3.py)\n\n"
        "SamplingHistogram(eta=0.998), vertex (0.921, 0.054, 0.025); the public call adds\n"
        "(0.45, 0.45, 0.10). A bracket [lower, upper] is certified for E[δ] of the mixture;\n"
        "the public call reports the upper end.\n\n" + "\n".join(LINES) + "\n"
    )


if __name__ == "__main__":
    main()
