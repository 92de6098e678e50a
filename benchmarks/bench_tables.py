"""Speed of a grouped release (issue 21, item 8): smoothdp.aggregate against the same non-private group-by.

In memory: 10^7 rows in 1,000 groups, count + mean + median of one column, ``smoothdp.aggregate(df, "g",
{"x": ["count", "mean", "median"]}, ...)`` (secure generator) against pandas'
``df.groupby("g").agg({"x": ["count", "mean", "median"]})`` on the same frame. Target: within 10x. The two
are timed alternately, best of ``--rounds``; the load average is printed beside the ratio (the machine is
shared). ``mean`` is left out, and said so, when this smoothdp's ``mean`` has no ``neighbours=`` keyword.

``--dask``: 10^8 rows (``--dask-n``) generated lazily on a 2-worker ``LocalCluster`` (worker processes, 1 GiB
each, one thread each), the same release against dask's own non-private ``groupby().agg()`` on the same
cluster; both read the same lazily generated partitions. Also reported: the driver's peak traced memory
during the release (no column is gathered there).

Run: ``.venv/bin/python benchmarks/bench_tables.py [--n 10000000] [--groups 1000] [--rounds 3] [--dask]``.
Results: benchmarks/results/tables_speed.md.
"""

from __future__ import annotations

import argparse
import inspect
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import smoothdp

BOUNDS = (0.0, 100.0)
SEED = 2026


def _statistics() -> list[str]:
    stats = ["count", "mean", "median"]
    if "neighbours" not in inspect.signature(smoothdp.mean).parameters:
        print("note: smoothdp.mean has no neighbours= keyword in this version: timing count + median")
        stats.remove("mean")
    return stats


def _frame(n: int, groups: int) -> Any:
    import pandas as pd

    gen = np.random.default_rng(SEED)
    return pd.DataFrame({"g": gen.integers(0, groups, n), "x": np.clip(gen.normal(40.0, 12.0, n), 0, 100)})


def _best(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():  # alternated: both see the same load
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def in_memory(n: int, groups: int, rounds: int) -> None:
    df = _frame(n, groups)
    stats = _statistics()
    keys = list(range(groups))

    def private() -> Any:
        return smoothdp.aggregate(df, "g", {"x": stats}, bounds={"x": BOUNDS}, epsilon=1.0, keys=keys)

    def pandas() -> Any:
        return df.groupby("g").agg({"x": stats})

    best = _best({"pandas": pandas, "smoothdp": private}, rounds)
    load = os.getloadavg()
    print(f"in memory: {n:,} rows, {groups:,} groups, {' + '.join(stats)}, best of {rounds}")
    print(f"  pandas groupby().agg(): {best['pandas']:.2f} s; smoothdp.aggregate: {best['smoothdp']:.2f} s")
    print(f"  ratio {best['smoothdp'] / best['pandas']:.2f}x (target <= 10x); load average {load[0]:.2f}")


def _partition(i: int, rows: int, groups: int) -> Any:
    import pandas as pd

    gen = np.random.default_rng([SEED, i])
    return pd.DataFrame(
        {"g": gen.integers(0, groups, rows), "x": np.clip(gen.normal(40.0, 12.0, rows), 0, 100)}
    )


def on_dask(n: int, groups: int, partitions: int, rounds: int) -> None:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    stats = _statistics()
    rows = n // partitions
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="1GiB",
                     dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        client.run(lambda: None)
        ddf = dd.from_map(_partition, range(partitions), rows=rows, groups=groups)
        keys = list(range(groups))

        def private() -> Any:
            return smoothdp.aggregate(ddf, "g", {"x": stats}, bounds={"x": BOUNDS}, epsilon=1.0, keys=keys)

        def dask_agg() -> Any:
            return ddf.groupby("g").agg({"x": stats}, shuffle_method="p2p").compute()

        best = _best({"dask": dask_agg, "smoothdp": private}, rounds)
        tracemalloc.start()
        out = private()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    load = os.getloadavg()
    print(f"dask: {rows * partitions:,} rows, {partitions} partitions, {groups:,} groups, 2 workers x 1 GiB")
    print(f"  dask groupby().agg(): {best['dask']:.1f} s; smoothdp.aggregate: {best['smoothdp']:.1f} s; "
          f"ratio {best['smoothdp'] / best['dask']:.2f}x; load average {load[0]:.2f}")  # fmt: skip
    print(f"  driver peak traced memory during the release: {peak / 2**20:.1f} MiB; result {out.shape}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--dask-n", type=int, default=10**8)
    parser.add_argument("--partitions", type=int, default=200)
    args = parser.parse_args()
    if args.dask:
        on_dask(args.dask_n, args.groups, args.partitions, max(1, args.rounds - 1))
    else:
        in_memory(args.n, args.groups, args.rounds)


if __name__ == "__main__":
    main()
