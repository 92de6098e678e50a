"""A :class:`~smoothdp.scale.selection.KeyBackend` over a Dask array (docs/scale.md).

Each method is ONE Dask computation over all blocks: the keys are made inside each block's task (never
for all the data on the driver); histograms are summed by a tree reduction (``split_every``), so the driver
receives one 2^16-bin array per request; a collect pass returns only the keys in the requested range; an
exact sum returns one Fraction per block. Dask is imported lazily: ``import smoothdp`` never loads it.

Works with ``scheduler="sync"``, ``"threads"``, ``"processes"`` (or ``None``: Dask's default, which is a
``distributed.Client`` if one is the current client), and with an explicit ``client`` (a
``dask.distributed.Client``), whose ``compute`` runs the graph on its cluster.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.scale.backends import (
    NBINS,
    BlockBeyond,
    CachingBackend,
    HistogramRequest,
    block_histograms,
    collect_beyond_block,
    collect_block,
    collect_ranges_block,
    exact_sum_between,
    probe_block,
)
from smoothdp.scale.beyond import Probe

__all__ = ["DaskBackend", "compute_on"]

#: Fan-in of the tree reduction of histograms (each node adds this many (requests × 2^16) int64 arrays).
_SPLIT_EVERY = 8


def _histogram_task(block: NDArray[np.float64], requests: tuple[HistogramRequest, ...]) -> NDArray[np.int64]:
    """One block's histograms as a (1, len(requests) · 2^16) int64 block of the reduction's input."""
    return block_histograms(block, requests).reshape(1, -1)


def _object_task(block: NDArray[np.float64], kernel: Any) -> NDArray[np.object_]:
    """One block's ``kernel(block)`` (any Python object), as a one-element object array."""
    out = np.empty(1, dtype=object)
    out[0] = kernel(block)
    return out


def compute_on(client: Any, *collections: Any, scheduler: str | None = None) -> tuple[Any, ...]:
    """Compute dask collections in one go: on ``client`` (a ``dask.distributed.Client``) when given, else
    with ``dask.compute`` on ``scheduler`` (``None``: the current scheduler)."""
    if client is not None:
        return tuple(client.gather(client.compute(list(collections))))
    import dask

    return tuple(dask.compute(*collections, scheduler=scheduler))


class DaskBackend(CachingBackend):
    """Radix-selection passes over a 1-D float64 Dask array, one Dask computation per pass.

    ``values`` must be already prepared (no NaN; ±inf allowed): the data policy (NaN imputation, clipping) is
    applied before, lazily, by the caller. ``scheduler`` is passed to ``dask.compute``; a ``client`` (a
    ``dask.distributed.Client``) takes precedence and runs every pass on its cluster.
    """

    def __init__(self, values: Any, *, scheduler: str | None = None, client: Any = None) -> None:
        import dask.array as da

        super().__init__()
        if not isinstance(values, da.Array):
            raise TypeError(f"values must be a dask.array.Array, got {type(values).__name__}")
        if values.ndim != 1:
            raise ValueError(f"values must be 1-D, got {values.ndim} dimensions")
        if values.dtype != np.float64:
            values = values.astype(np.float64)
        self.values = values
        self.scheduler = scheduler
        self.client = client

    def _compute(self, *collections: Any) -> tuple[Any, ...]:
        """One Dask computation of ``collections`` (one pass over the data)."""
        return compute_on(self.client, *collections, scheduler=self.scheduler)

    def count(self) -> int:
        """The number of records: no pass if the chunk sizes are known; else the top histogram's total (one
        pass, remembered: the next selection starts from it)."""
        if not np.isnan(self.values.size):
            return int(self.values.size)
        return super().count()

    def _histogram_pass(self, requests: Sequence[HistogramRequest]) -> NDArray[np.int64]:
        """One pass: per block, the digit histograms of its keys; summed by a tree reduction."""
        reqs = tuple(requests)
        nblocks = self.values.numblocks[0]
        per_block = self.values.map_blocks(
            functools.partial(_histogram_task, requests=reqs),
            new_axis=1,
            chunks=((1,) * nblocks, (len(reqs) * NBINS,)),
            dtype=np.int64,
            meta=np.empty((0, 0), dtype=np.int64),
        )
        (total,) = self._compute(per_block.sum(axis=0, dtype=np.int64, split_every=_SPLIT_EVERY))
        return np.asarray(total, dtype=np.int64).reshape(len(reqs), NBINS)

    def _collect_pass(self, key_lo: int, key_hi: int) -> NDArray[np.uint64]:
        """One pass: every key in [key_lo, key_hi], per block by a boolean mask, concatenated."""
        nblocks = self.values.numblocks[0]
        parts = self.values.map_blocks(
            functools.partial(collect_block, key_lo=int(key_lo), key_hi=int(key_hi)),
            chunks=((np.nan,) * nblocks,),
            dtype=np.uint64,
            meta=np.empty(0, dtype=np.uint64),
        )
        (keys,) = self._compute(parts)
        return np.asarray(keys, dtype=np.uint64)

    def _sum_pass(self, lo_value: float, hi_value: float) -> Fraction:
        """One pass: the exact Σ x over lo_value < x < hi_value (per-block Fractions added on the driver)."""
        kernel = functools.partial(exact_sum_between, lo_value=float(lo_value), hi_value=float(hi_value))
        return sum(self._per_block(kernel), Fraction(0))

    def _per_block(self, kernel: Any) -> list[Any]:
        """One pass: ``kernel(block)`` on every block, gathered on the driver as a list."""
        nblocks = self.values.numblocks[0]
        parts = self.values.map_blocks(
            functools.partial(_object_task, kernel=kernel),
            chunks=((1,) * nblocks,),
            dtype=object,
            meta=np.empty(0, dtype=object),
        )
        (blocks,) = self._compute(parts)
        return list(blocks.tolist())

    def _collect_beyond_pass(
        self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int
    ) -> list[BlockBeyond]:
        """One pass: per block, its keys in [key_lo, key_hi] and its smallest scores beyond the keys."""
        kernel = functools.partial(
            collect_beyond_block, key_lo=key_lo, key_hi=key_hi, below_key=below_key, above_key=above_key
        )
        return self._per_block(functools.partial(kernel, width=width))

    def _collect_ranges_pass(self, ranges: list[tuple[int, int]]) -> list[list[NDArray[np.uint64]]]:
        """One pass: per block, its keys in each range."""
        return self._per_block(functools.partial(collect_ranges_block, ranges=tuple(ranges)))

    def per_block(self, kernel: Any) -> list[Any]:
        """One pass: ``kernel(block)`` on every block (a picklable module-level function), gathered."""
        self.passes += 1
        return self._per_block(kernel)

    def _probe_pass(self, point: float) -> list[Probe]:
        """One pass: per block, its probe of ``point``."""
        return self._per_block(functools.partial(probe_block, point=float(point)))
