"""Group keys: the ``by`` columns, the public key list, and the codes that map rows to groups.

A key is a tuple with one value per ``by`` column. **Null keys** (``None``, NaN, pandas ``NA``/``NaT``, polars
null) are one key value, written ``None`` here: a row whose key is null belongs to the group ``None``, which
gets a row of the output only if ``keys`` lists it (``None`` or NaN) or the private selection picks it.

With a public ``keys`` list every listed key gets a row, in the order of the list (empty groups included),
and the rows of unlisted keys are dropped before anything is computed. Nothing here depends on the values
of the value columns.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["PublicKeys", "check_by", "combine_codes", "normalise_key", "sort_key"]

#: Type names of the missing-value singletons of pandas and numpy, matched without importing pandas.
_MISSING = frozenset({"NAType", "NaTType"})


def normalise_key(value: Any) -> Hashable:
    """One key value as a plain hashable Python value: numpy scalars unwrapped, every null → ``None``."""
    if value is None or type(value).__name__ in _MISSING:
        return None
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64 | np.timedelta64) and np.isnat(value):
            return None
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def check_by(by: Any, columns: Sequence[str]) -> tuple[str, ...] | None:
    """``by`` as a tuple of column names of the frame (``None``: one group, the whole frame)."""
    if by is None:
        return None
    names = (by,) if isinstance(by, str) else tuple(by) if isinstance(by, Sequence) else None
    if not names or not all(isinstance(b, str) for b in names):
        raise TypeError(f"by must be a column name, a list of column names or None; got {by!r}")
    missing = [b for b in names if b not in columns]
    if missing:
        raise ValueError(f"by: no column(s) {missing} in the data frame (columns: {list(columns)})")
    if len(set(names)) != len(names):
        raise ValueError(f"by names a column twice: {list(names)}")
    return names


class PublicKeys:
    """A public list of keys: one scalar per key for one ``by`` column, one tuple per key for several.

    ``labels`` are the keys as given (the output's index); ``index`` maps each normalised key tuple to its
    position. A key listed twice is an error.
    """

    def __init__(self, keys: Any, n_by: int) -> None:
        if isinstance(keys, str | bytes) or not isinstance(keys, Sequence | np.ndarray):
            raise TypeError(
                f"keys must be a list of the group keys, 'private', or None; got {type(keys).__name__}"
            )
        self.labels: list[Any] = list(keys)
        self.index: dict[tuple[Hashable, ...], int] = {}
        for position, key in enumerate(self.labels):
            parts = self._parts(key, n_by)
            if parts in self.index:
                raise ValueError(f"keys lists the key {key!r} twice")
            self.index[parts] = position

    @staticmethod
    def _parts(key: Any, n_by: int) -> tuple[Hashable, ...]:
        if n_by == 1:
            if isinstance(key, tuple):
                if len(key) != 1:
                    raise ValueError(f"keys: one 'by' column, so each key is one value; got {key!r}")
                key = key[0]
            return (normalise_key(key),)
        if not isinstance(key, tuple | list) or len(key) != n_by:
            raise ValueError(
                f"keys: {n_by} 'by' columns, so each key is a tuple of {n_by} values; got {key!r}"
            )
        return tuple(normalise_key(k) for k in key)

    def __len__(self) -> int:
        return len(self.labels)

    def positions(self, uniques: Sequence[tuple[Hashable, ...]]) -> NDArray[np.int64]:
        """The position of each key of ``uniques`` in the list, −1 for a key not listed."""
        return np.fromiter((self.index.get(u, -1) for u in uniques), dtype=np.int64, count=len(uniques))


def combine_codes(
    codes: Sequence[NDArray[np.int64]], uniques: Sequence[Sequence[Hashable]]
) -> tuple[NDArray[np.int64], list[tuple[Hashable, ...]]]:
    """One code per row for the combination of several factorised ``by`` columns, and the key tuple of
    each code (normalised values). One column: its codes as they are."""
    if len(codes) == 1:
        return _merge_equal([(normalise_key(u),) for u in uniques[0]], codes[0])
    sizes = [max(1, len(u)) for u in uniques]
    if math.prod(sizes) < 2**62:
        combined = np.zeros(codes[0].size, dtype=np.int64)
        for c, size in zip(codes, sizes, strict=True):
            combined = combined * size + c
        present, inverse = np.unique(combined, return_inverse=True)
        parts = []
        for size in reversed(sizes):
            parts.append(present % size)
            present = present // size
        parts.reverse()
    else:
        table, inverse = np.unique(np.stack(codes, 1), axis=0, return_inverse=True)
        parts = [table[:, i] for i in range(len(codes))]
    keys = [
        tuple(normalise_key(uniques[i][int(p)]) for i, p in enumerate(row))
        for row in zip(*parts, strict=True)
    ]
    return _merge_equal(keys, inverse.ravel().astype(np.int64))


def _merge_equal(
    keys: list[tuple[Hashable, ...]], codes: NDArray[np.int64]
) -> tuple[NDArray[np.int64], list[tuple[Hashable, ...]]]:
    """Codes whose keys are equal once normalised (NaN and None: both null) merged into one."""
    first: dict[tuple[Hashable, ...], int] = {}
    remap = np.fromiter((first.setdefault(k, len(first)) for k in keys), dtype=np.int64, count=len(keys))
    if len(first) == len(keys):
        return codes, keys
    return remap[codes], list(first)


def sort_key(key: tuple[Hashable, ...]) -> tuple[Any, ...]:
    """A total order on key tuples of mixed kinds (None first, then numbers, then the rest by type name):
    the order of the rows of a private selection (a function of the selected set alone)."""

    def part(v: Hashable) -> tuple[Any, ...]:
        if v is None:
            return (0,)
        if isinstance(v, bool | int | float):
            return (1, "", float(v))
        return (2, type(v).__name__, v)

    return tuple(part(v) for v in key)
