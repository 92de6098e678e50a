"""Scale-out: a private median of 10^8 lazily generated values on a Dask LocalCluster, against np.sort.

Target (issue 13): ``smoothdp.median(dx, epsilon=1.0, bounds=(lo, hi), engine=client)`` on a 2-worker
``LocalCluster`` (1 GiB per worker) returns the same value as the in-process path on the same values and
seed, in ≤ 3× the time of ``np.sort`` of the same values in memory. The values are generated block by
block on the workers (``dask.array`` random, fixed seed) and never materialised for the Dask run; the
in-process comparison computes them once (not timed). Timings alternate the baselines and the releases,
best of ``--rounds``, because the machine is shared. Also reported: data passes, rows/s per worker, and
the driver's peak traced memory during the Dask release.

``--workers-only`` (issue 13, item 8) runs, for each worker count, only what happens on the workers:
geo privatize of 10^8 lazily generated points (the smooth-sensitivity mechanism on a soft one-way
threshold, exact release path, each row block drawing from its own stream of the secure generator) summed
by the estimate's one reduction (the reports are never gathered), and the two Dask medians; for each it
reports rows/s per worker, data passes and the driver's peak traced memory. No in-memory copy of the data.
``--mmap-threshold`` (bytes, default 32 MiB; 0 keeps distributed's environment as it is) is passed to the
worker processes as ``MALLOC_MMAP_THRESHOLD_``: distributed sets ``MALLOC_TRIM_THRESHOLD_`` for its
workers, which switches off glibc's adaptive mmap threshold, so every temporary array above 128 KiB is a
fresh mmap (page faults on each use); the exact geo release path allocates many of those and ran 2.4x
slower per worker without the setting (docs/scale.md#measured).

Run: ``.venv/bin/python benchmarks/bench_scale.py [--n 100000000] [--workers 1 2] [--rounds 2]
[--workers-only]`` (needs the ``dask`` extra). Results: benchmarks/results/scale.md.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import tracemalloc
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def _cluster(workers: int) -> Iterator[Any]:
    """A LocalCluster of single-threaded worker processes with 1 GiB each, and its Client, workers up."""
    from dask.distributed import Client, LocalCluster

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
        yield client


def run(n: int, workers: int, rounds: int, chunk: int, x: np.ndarray) -> dict[str, Any]:

    dx = _lazy_values(n, chunk)
    with _cluster(workers) as client:
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


def _geo_mechanism() -> Any:
    import smoothdp.geo as geo

    return geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=1.0)


def _traced(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(seconds, driver peak traced MiB, result) of fn()."""
    tracemalloc.start()
    t, out = _timed(fn)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return t, peak / 2**20, out


def run_workers_only(
    n: int, workers: int, chunk: int, mmap_threshold: int
) -> dict[str, tuple[float, float, Any]]:
    """Geo privatize + estimate and the two medians on a LocalCluster, data generated on the workers."""
    import dask

    dx = _lazy_values(n, chunk)
    mech = _geo_mechanism()
    out: dict[str, tuple[float, float, Any]] = {}
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    if mmap_threshold:
        environ["MALLOC_MMAP_THRESHOLD_"] = int(mmap_threshold)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}), _cluster(workers) as client:
        warm = _lazy_values(1000 * workers, 1000)  # every worker imports smoothdp before timing
        mech.estimate(mech.privatize(warm, engine=client), engine=client)
        out["geo privatize + estimate"] = _traced(
            lambda: mech.estimate(mech.privatize(dx, engine=client), engine=client).mean
        )
        for method in ("auto", "smooth_sensitivity"):
            out[f"median {method}"] = _traced(
                lambda m=method: float(
                    smoothdp.median(dx, epsilon=1.0, bounds=BOUNDS, method=m, engine=client, rng=7)
                )
            )
        records = as_records(dx, *BOUNDS, clip=True, engine=client)
        ExponentialQuantile(0.5, epsilon=1.0, bounds=BOUNDS).sample(records, smoothdp.rng.default_rng(7))
        out["passes of one median"] = (0.0, 0.0, records.passes)
    return out


def in_process_geo_rate(n: int = 10**7) -> float:
    """Rows/s of the same geo privatize in this process (one core, numpy in memory, secure generator)."""
    x = np.random.default_rng(SEED).standard_normal(n)
    mech = _geo_mechanism()
    t, _ = _timed(lambda: mech.privatize(x))
    return n / t


def main_workers_only(args: argparse.Namespace) -> None:
    print(f"in process, one core: geo privatize {in_process_geo_rate():.3g} rows/s")
    for workers in args.workers:
        res = run_workers_only(args.n, workers, args.chunk, args.mmap_threshold)
        print(
            f"\nn = {args.n:.0e}, {workers} worker(s) (1 GiB each), chunks of {args.chunk:.0e}, "
            f"MALLOC_MMAP_THRESHOLD_ = {args.mmap_threshold or 'unset'}"
        )
        print(f"{'run':26s} {'time (s)':>9s} {'rows/s/worker':>14s} {'driver MiB':>11s}  value")
        for name, (t, mib, value) in res.items():
            if name.startswith("passes"):
                print(f"data passes of one exponential-mechanism median: {value}")
                continue
            print(f"{name:26s} {t:9.2f} {args.n / t / workers:14.3g} {mib:11.1f}  {value!r}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10**8)
    parser.add_argument("--chunk", type=int, default=10**7)
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers-only", action="store_true", help="geo privatize and medians on workers")
    parser.add_argument("--mmap-threshold", type=int, default=1 << 25, help="workers' MALLOC_MMAP_THRESHOLD_")
    args = parser.parse_args()
    if args.workers_only:
        main_workers_only(args)
        return
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
