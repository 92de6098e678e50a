"""Shared fixtures of the scale tests: a 2-worker LocalCluster per test module (module scope: while it is
alive its Client is dask's default scheduler, so it must not outlive the module that asked for it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A ``dask.distributed.Client`` on a 2-worker in-process LocalCluster, without a memory limit.

    In-process workers measure the memory of the whole test process: with a limit (it was 1 GiB) they
    pause, and the test waits forever, once the pytest process of the whole suite holds 80% of it (it did,
    at 0.84 GB, on the full run)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, memory_limit=0, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
