"""Randomness on the workers: one stream of the secure generator per partition.

docs/scale.md#randomness-on-workers

A local-model release (geo privatize, the block labels of sample-and-aggregate) draws its noise where the
records are, block by block. For one release:

1. the driver draws a fresh 256-bit key from the caller's generator (:func:`smoothdp.rng.stream_key`;
   ``rng=None``: the secure generator keyed from the operating system; a seed: a reproducible key, the
   release is a simulation);
2. the task of row block (partition) p builds ChaCha20 under that key with its counter started at p·2^64
   (:meth:`smoothdp.rng.StreamKey.generator`) and draws the block's noise from it.

Why this construction:

* **never a pickled generator**: a generator shipped in the graph would be copied to every task, and each
  copy would replay the same draws (identical noise in every partition); only the key travels;
* **never the partition id as a seed**: a seed p gives a stream anyone can regenerate (no secret), and
  seeds of nearby partitions are not a design for disjoint streams; here the key is the secret and p only
  selects a disjoint counter range of one keystream;
* **retries reproduce**: a task that is rerun (a lost worker, a recomputation of the graph) rebuilds the
  same generator from (key, p) and draws exactly the same numbers, so no partition ever releases two
  independent noisy versions of its records. The draws depend on the partitioning (the row chunks, which
  are public and data-independent) but not on the scheduler, the workers or the order of the tasks.

The key sits in the task graph (as the records do): publish the computed reports, never the graph.
Dask is imported lazily.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.rng import StreamKey
from smoothdp.scale.engine import is_dask_collection

__all__ = [
    "BlockFunction",
    "map_row_blocks",
    "map_rows",
    "partition_generator",
    "per_block_rows",
    "row_blocks",
]

#: ``func(block, rng)`` of :func:`map_row_blocks`: a row block of the input and its partition's generator.
BlockFunction = Callable[[NDArray[np.float64], np.random.Generator], NDArray[np.float64]]


def partition_generator(key: StreamKey, partition: int) -> np.random.Generator:
    """The generator of row block ``partition`` for the release keyed by ``key`` (the same on a retry)."""
    return key.generator(int(partition))


def row_blocks(x: Any, name: str = "x", *, min_ndim: int = 1) -> Any:
    """x as a float64 dask array whose rows (first axis) are its only chunked axis.

    Accepts a dask array, series or data frame (a data frame's columns become the trailing axis). Only
    the kind, dtype and number of axes are checked here: the data policy applies block by block.
    """
    import dask.array as da

    if hasattr(x, "to_dask_array"):
        x = x.to_dask_array(lengths=True)
    if not isinstance(x, da.Array) or not is_dask_collection(x):
        raise TypeError(f"{name} must be a dask array, series or data frame; got {type(x).__name__}")
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axis (users along the first); got {x.shape}")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers; got dtype {x.dtype}")
    if x.ndim > 1 and any(len(c) > 1 for c in x.chunks[1:]):
        x = x.rechunk({axis: -1 for axis in range(1, x.ndim)})
    return x if x.dtype == np.float64 else x.astype(np.float64)


def _row_task(
    block: NDArray[Any],
    *,
    func: Callable[[NDArray[np.float64], int], NDArray[np.float64]],
    block_info: dict[Any, Any] | None = None,
) -> NDArray[np.float64]:
    partition = 0 if block_info is None else int(block_info[0]["chunk-location"][0])
    return func(block, partition)


def map_rows(
    func: Callable[[NDArray[np.float64], int], NDArray[np.float64]],
    x: Any,
    *,
    keep: int,
    lead: tuple[int, ...] = (),
    trail: tuple[int, ...] = (),
) -> Any:
    """Lazily apply ``func(block, partition)`` to each row block of x (no randomness).

    x: a dask array chunked along its rows only (:func:`row_blocks`). The output of a block of x with
    shape (m,) + rest is ``lead + (m,) + rest[: keep - 1] + trail``: the first ``keep`` axes of x are kept
    (rows first), the others dropped, ``lead`` axes are added in front and ``trail`` axes at the end. The
    result is a dask array with the row chunks of x; nothing is computed.
    """
    out_ndim = len(lead) + keep + len(trail)
    chunks = tuple((d,) for d in lead) + tuple(x.chunks[:keep]) + tuple((d,) for d in trail)
    new_axis = list(range(len(lead))) + list(range(len(lead) + keep, out_ndim))
    return x.map_blocks(
        functools.partial(_row_task, func=func),
        drop_axis=list(range(keep, x.ndim)) or None,
        new_axis=new_axis or None,
        chunks=chunks,
        dtype=np.float64,
        meta=np.empty((0,) * out_ndim, dtype=np.float64),
    )


def _with_stream(block: NDArray[np.float64], partition: int, *, func: BlockFunction, key: StreamKey) -> Any:
    return func(block, partition_generator(key, partition))


def map_row_blocks(
    func: BlockFunction,
    x: Any,
    key: StreamKey,
    *,
    keep: int,
    lead: tuple[int, ...] = (),
    trail: tuple[int, ...] = (),
) -> Any:
    """Lazily apply ``func(block, rng)`` to each row block of x, ``rng`` the stream of its partition.

    As :func:`map_rows` (the same output layout), with row block p drawing from
    ``key.generator(p)``: computing the result twice, or retrying a task, gives the same values.
    """
    return map_rows(functools.partial(_with_stream, func=func, key=key), x, keep=keep, lead=lead, trail=trail)


def _one_row_task(
    block: NDArray[Any],
    *,
    func: BlockFunction,
    key: StreamKey,
    width: int,
    block_info: dict[Any, Any] | None = None,
) -> NDArray[np.float64]:
    partition = 0 if block_info is None else int(block_info[0]["chunk-location"][0])
    return np.asarray(func(block, partition_generator(key, partition)), dtype=np.float64).reshape(1, width)


def per_block_rows(func: BlockFunction, x: Any, key: StreamKey, *, width: int) -> Any:
    """Lazily, one row of ``width`` floats per row block of x: ``func(block, rng)`` with the partition's
    stream. The result (shape (number of blocks, width), rows in partition order) is small enough for the
    driver: a per-block summary to be reduced there in a fixed order."""
    nblocks = x.numblocks[0]
    return x.map_blocks(
        functools.partial(_one_row_task, func=func, key=key, width=int(width)),
        drop_axis=list(range(2, x.ndim)) or None,
        new_axis=1 if x.ndim == 1 else None,
        chunks=((1,) * nblocks, (int(width),)),
        dtype=np.float64,
        meta=np.empty((0, 0), dtype=np.float64),
    )
