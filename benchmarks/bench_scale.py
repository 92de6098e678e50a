"""Scale-out: a private median of 10^8 lazily generated values on a Dask LocalCluster, against np.sort.

Target (issue 13): ``smoothdp.median(dx, epsilon=1.0, bounds=(lo, hi), engine=client)`` on a 2-worker
``LocalCluster`` (1 GiB per worker) returns the same value as the in-process path on the same values and
seed, in ≤ 3× the time of ``np.sort`` of the same values in memory. The values are generated block by
block on the workers (``dask.array`` random, fixed seed) and never materialised for the Dask run; the
in-process comparison computes them once (not timed). Timings alternate the baselines and the releases,
best of ``--rounds``, because the machine is shared. Also reported: data passes, rows/s per worker, and
the driver's peak traced memory during the Dask release.

Run: ``.venv/bin/python benchmarks/bench_scale.py [--n 100000000] [--workers 1 2] [--rounds 2]``
(needs the ``dask`` extra). Results: benchmarks/results/scale.md.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import smoothdp
from smoothdp.central.quantiles import ExponentialQuantile
from smoothdp.scale.engine import as_records

BOUNDS = (-10.0, 10.0)
SEED = 2026


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _lazy_values(n: int, chunk: int) -> Any:
    import dask.array as da

    return da.random.default_rng(SEED).standard_normal(n, chunks=chunk)


def run(n: int, workers: int, rounds: int, chunk: int, x: np.ndarray) -> dict[str, Any]:
    from dask.distributed import Client, LocalCluster

    dx = _lazy_values(n, chunk)
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit="1GiB",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: None)  # workers up before timing
        best: dict[str, float] = {}
        values: dict[str, float] = {}
        for _ in range(rounds):
            t, _ = _timed(lambda: np.sort(x))
            best["np.sort"] = min(best.get("np.sort", np.inf), t)
            for method in ("auto", "smooth_sensitivity"):
                t, rel = _timed(
                    lambda m=method: smoothdp.median(
                        dx, epsilon=1.0, bounds=BOUNDS, method=m, engine=client, rng=7
                    )
                )
                best[f"dask {method}"] = min(best.get(f"dask {method}", np.inf), t)
                values[f"dask {method}"] = float(rel)
                t, rel = _timed(
                    lambda m=method: smoothdp.median(x, epsilon=1.0, bounds=BOUNDS, method=m, rng=7)
                )
                best[f"numpy {method}"] = min(best.get(f"numpy {method}", np.inf), t)
                values[f"numpy {method}"] = float(rel)
        # passes and driver memory of one exponential-mechanism release
        tracemalloc.start()
        records = as_records(dx, *BOUNDS, clip=True, engine=client)
        mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=BOUNDS)
        mech.sample(records, smoothdp.rng.default_rng(7))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {"best": best, "values": values, "passes": records.passes, "driver_peak_mb": peak / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10**8)
    parser.add_argument("--chunk", type=int, default=10**7)
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    x = _lazy_values(args.n, args.chunk).compute(scheduler="threads")  # the same values, in memory
    for workers in args.workers:
        res = run(args.n, workers, args.rounds, args.chunk, x)
        sort = res["best"]["np.sort"]
        print(f"\nn = {args.n:.0e}, {workers} worker(s), chunks of {args.chunk:.0e}, best of {args.rounds}")
        print(f"{'run':26s} {'time (s)':>9s} {'/ np.sort':>9s} {'rows/s/worker':>14s}  value")
        for name, t in res["best"].items():
            value = res["values"].get(name, float("nan"))
            print(f"{name:26s} {t:9.2f} {t / sort:9.2f} {args.n / t / workers:14.3g}  {value!r}")
        for method in ("auto", "smooth_sensitivity"):
            same = res["values"][f"dask {method}"] == res["values"][f"numpy {method}"]
            print(f"same value as in process ({method}): {same}")
        print(f"data passes of one exponential-mechanism median: {res['passes']}")
        print(f"driver peak traced memory: {res['driver_peak_mb']:.1f} MiB")


if __name__ == "__main__":
    main()
