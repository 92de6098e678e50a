"""Several quantiles at scale (issue 24): the default deciles against np.sort and OpenDP's nine quantiles.

In memory, N(0, 1) values (seed 2026), bounds (-8, 8), ε = 1: the default
``smoothdp.quantiles(x, [0.1, …, 0.9], epsilon=1.0, bounds=(-8, 8))`` (JointExp from windows of ranks
above the public threshold, docs/theory/quantiles.md#jointexp-from-windows-of-ranks) against ``np.sort(x)``
and against OpenDP's nine single quantiles (``make_private_quantile`` over 10,001 candidates at ε/9 each,
built once, untimed; the data passed as a prepared Python list). Interleaved rounds, best of ≥ 5
(benchmarks/timing.py), CPU and wall ratios with the load averages beside each row.

``--dask``: the default median and deciles on a 2-worker ``LocalCluster`` (processes, one thread and
1 GiB each), 10^8 values generated block by block on the workers (never materialised there), against
``np.sort`` of the same values in memory (computed once, untimed), wall time (the work is on the workers).

    .venv/bin/python benchmarks/bench_quantiles.py --n 1000000 10000000 --rounds 5 \
        --out benchmarks/results/quantiles_speed.md
    .venv/bin/python benchmarks/bench_quantiles.py --dask --n 100000000 --rounds 5 \
        --out benchmarks/results/quantiles_dask.md
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import smoothdp
from timing import header, interleaved, load

BOUNDS = (-8.0, 8.0)
QS = [i / 10 for i in range(1, 10)]
SEED = 2026


def _opendp_nine(x: np.ndarray, epsilon: float) -> Any:
    """OpenDP's nine single quantiles at ε/9 each (substitution: symmetric distance 2), as the accuracy
    benchmark builds them (benchmarks/accuracy/methods.py)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=x.size), dp.symmetric_distance()
    candidates = np.linspace(*BOUNDS, 10_001).tolist()
    each = epsilon / len(QS)
    ms = [
        dp.binary_search_chain(
            lambda s, a=a: dp.m.make_private_quantile(
                *space, dp.max_divergence(), candidates=candidates, alpha=a, scale=s
            ),
            d_in=2,
            d_out=each,
        )
        for a in QS
    ]
    data = x.tolist()
    return lambda: [m(data) for m in ms]


def in_memory(ns: list[int], rounds: int, opendp: bool) -> list[str]:
    lines = [
        header("Default deciles in memory", rounds),
        "",
        "| n | smoothdp deciles (s, CPU) | np.sort (s, CPU) | ratio CPU | ratio wall | OpenDP nine (s, CPU) "
        "| smoothdp / OpenDP (CPU) | load (1m/5m/15m) before → after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in ns:
        x = np.random.default_rng(SEED).standard_normal(n)
        smoothdp.quantiles(x[:1000], QS, epsilon=1.0, bounds=BOUNDS)  # imports, caches
        calls = {
            "smoothdp": lambda x=x: smoothdp.quantiles(x, QS, epsilon=1.0, bounds=BOUNDS),
            "np.sort": lambda x=x: np.sort(x),
        }
        if opendp:
            calls["opendp"] = _opendp_nine(x, 1.0)
        best = interleaved(calls, rounds)
        s, b = best["smoothdp"], best["np.sort"]
        o = best.get("opendp")
        line = (
            f"| {n:.0e} | {s.cpu:.3f} | {b.cpu:.3f} | {s.cpu / b.cpu:.2f} | {s.wall / b.wall:.2f} | "
            + (f"{o.cpu:.3f} | {s.cpu / o.cpu:.3f} | " if o else "– | – | ")
            + f"{s.load} |"
        )
        lines.append(line)
        print(line, flush=True)
    return lines


def on_dask(n: int, rounds: int, chunk: int, persist: bool) -> list[str]:
    import time

    import dask.array as da
    from dask.distributed import Client, LocalCluster

    lines = [
        header(f"Median and deciles on a 2-worker Dask LocalCluster, n = {n:.0e}", rounds),
        "",
        "LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit='1GiB'); values "
        f"generated on the workers (chunks of {chunk:.0e})"
        + (
            "; persisted there (held in the workers' memory) before timing"
            if persist
            else ", again in every pass"
        )
        + "; np.sort of the same values in memory. Wall time.",
        "",
        "| run | best (s) | / np.sort | load (1m/5m/15m) before → after |",
        "|---|---|---|---|",
    ]
    x = da.random.default_rng(SEED).standard_normal(n, chunks=chunk).compute(scheduler="threads")
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="1GiB", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: None)
        dx = da.random.default_rng(SEED).standard_normal(n, chunks=chunk)
        if persist:
            from dask.distributed import wait

            dx = dx.persist()
            wait(dx)
        calls = {
            "np.sort (in memory)": lambda: np.sort(x),
            "median on Dask": lambda: smoothdp.median(dx, epsilon=1.0, bounds=BOUNDS, engine=client, rng=7),
            "deciles on Dask": lambda: smoothdp.quantiles(dx, QS, epsilon=1.0, bounds=BOUNDS, engine=client),
        }
        before = load()
        best = dict.fromkeys(calls, float("inf"))
        for _ in range(rounds):
            for name, call in calls.items():
                t0 = time.perf_counter()
                call()
                best[name] = min(best[name], time.perf_counter() - t0)
        around = f"{before} → {load()}"
        same = float(smoothdp.median(dx, epsilon=1.0, bounds=BOUNDS, engine=client, rng=7)) == float(
            smoothdp.median(x, epsilon=1.0, bounds=BOUNDS, rng=7)
        )
    base = best["np.sort (in memory)"]
    for name, t in best.items():
        line = f"| {name} | {t:.2f} | {t / base:.2f} | {around} |"
        lines.append(line)
        print(line, flush=True)
    lines += ["", f"Median on Dask equal to the in-memory median for the same seed: {same}."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-opendp", action="store_true")
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--chunk", type=int, default=10**7)
    parser.add_argument("--persist", action="store_true", help="hold the generated values on the workers")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if args.rounds < 5:
        parser.error("--rounds must be at least 5")
    if args.dask:
        lines = on_dask(args.n[0], args.rounds, args.chunk, args.persist)
    else:
        lines = in_memory(args.n, args.rounds, not args.no_opendp)
    cmd = "`.venv/bin/python benchmarks/bench_quantiles.py " + " ".join(sys.argv[1:]) + "`"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join([lines[0], "", cmd, "", *lines[1:]]) + "\n")


if __name__ == "__main__":
    main()
