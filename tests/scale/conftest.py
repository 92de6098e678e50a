"""Shared fixtures of the scale tests: a 2-worker LocalCluster per test module (module scope: while it is
alive its Client is dask's default scheduler, so it must not outlive the module that asked for it).

The cluster's workers are threads of the test process, so a worker memory limit would be measured against the
RSS of the whole pytest process (about 0.8 GiB late in the suite): past 80% of it dask *pauses* the workers
and every computation waits for ever. In-process workers therefore get no memory limit; the 1 GiB-per-worker
runs of the benchmarks use worker processes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A ``dask.distributed.Client`` on a 2-worker in-process LocalCluster (no memory limit: see above)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, memory_limit=0, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
