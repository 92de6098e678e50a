"""Hardened (exact) sampling vs the float samplers, per family (run as a script, not a test).

    .venv/bin/python benchmarks/bench_exact_sampling.py [--n 1000000] [--repeats 5]

For each family, ``dist.sample(n, rng)`` (hardened: every draw exactly the rounding of an ideal draw onto
``OutputGrid.for_magnitude(scale)``) and ``dist.sample(n, rng, numerics="float")`` are timed interleaved
(one after the other inside each repeat, so a slow moment of the shared machine hits both alike), keeping
the best of ``--repeats``. Both use the same ChaCha20 generator (smoothdp.rng.default_rng). Reported:
draws/s of each path, the ratio float/hardened (how many times slower the hardened path is), and the
share of elements the float fast path left to the arb slow path. Target: ≥ 10⁶ hardened draws/s.
"""

from __future__ import annotations

import argparse
import platform
import time

from smoothdp.exact import engine
from smoothdp.noise import (
    DiscreteLaplace,
    Gaussian,
    GeneralizedCauchy,
    Laplace,
    NoiseDistribution,
    PlanarLaplace,
    PolyPlace,
    StudentT,
)
from smoothdp.rng import default_rng

FAMILIES: list[NoiseDistribution] = [
    Laplace(1.0),
    Gaussian(1.0),
    PolyPlace(9.0, 9.0),
    PolyPlace(1.0, 1.0 + 1e-6),
    StudentT(3.0),
    StudentT(7.5),
    GeneralizedCauchy(4.0),
    GeneralizedCauchy(2.0),
    GeneralizedCauchy(2.5),  # a γ without a closed-form tail power: x = exp(−ln(s)/(γ−1))
    PlanarLaplace(1.0),
    DiscreteLaplace(3.0),
]


def _time(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    rng = default_rng(2026)
    print(f"# {platform.processor() or platform.machine()}, n = {n} draws per call, best of {args.repeats}")
    print(f"{'family':<42} {'hardened/s':>12} {'float/s':>12} {'ratio':>7} {'slow share':>11}")
    for dist in FAMILIES:
        best_h = best_f = float("inf")
        slow = 0
        for _ in range(args.repeats):
            best_h = min(best_h, _time(lambda d=dist: d.sample(n, rng)))
            slow = max(slow, engine.LAST_STATS.slow)
            best_f = min(best_f, _time(lambda d=dist: d.sample(n, rng, numerics="float")))
        # DiscreteLaplace runs the engine on 2n exponentials.
        elements = 2 * n if isinstance(dist, DiscreteLaplace) else n
        print(
            f"{dist!r:<42} {n / best_h:>12.3g} {n / best_f:>12.3g} {best_h / best_f:>7.2f}"
            f" {slow / elements:>11.2e}"
        )


if __name__ == "__main__":
    main()
