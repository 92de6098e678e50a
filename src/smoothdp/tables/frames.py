"""Data frame adapters: read columns from a pandas or polars frame, and build the result in the same library.

The tables layer works on numpy arrays: a value column as float64 (nulls → NaN, which the data policy then
imputes), a key or privacy-unit column as integer codes with its distinct values (nulls are one value).
Neither pandas nor polars is imported unless the input is one of them. The result's shape:

* **pandas** (like ``df.groupby(by).agg({...})``): one row per group, indexed by the key (an ``Index``
  named after the ``by`` column, a ``MultiIndex`` for several; a one-row ``RangeIndex`` for ``by=None``),
  and ``MultiIndex`` columns ``(column, statistic)``: ``out["hours", "median"]``;
* **polars** (like ``df.group_by(by).agg(...)``): the ``by`` columns first, then one flat column per
  statistic named ``<column>_<statistic>``: ``hours_median``, ``age_quantile_0.25``.

Dask frames are read by :mod:`smoothdp.tables.dask_tables` and give a pandas result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.validation import as_float_array

__all__ = ["Frame", "PandasFrame", "PolarsFrame", "frame_kind", "read_frame", "summary_frame"]


def frame_kind(df: Any) -> str:
    """``"pandas"``, ``"polars"`` or ``"dask"`` (from the type's module, importing nothing)."""
    module = type(df).__module__.split(".")[0]
    if type(df).__name__ == "DataFrame":
        if module == "pandas":
            return "pandas"
        if module == "polars":
            return "polars"
        if module in ("dask", "dask_expr"):
            return "dask"
    if module == "polars" and type(df).__name__ == "LazyFrame":
        raise TypeError("df is a polars LazyFrame: collect it first (df.collect())")
    raise TypeError(
        f"df must be a pandas, polars or Dask DataFrame; got {type(df).__module__}.{type(df).__name__}"
    )


class Frame(ABC):
    """The columns of one in-memory data frame, as numpy arrays."""

    kind = ""

    def __init__(self, df: Any) -> None:
        self.df = df
        self.columns: list[str] = [str(c) for c in df.columns]
        self.n_rows = len(df)

    def check_columns(self, names: Sequence[str], what: str) -> None:
        missing = [c for c in names if c not in self.columns]
        if missing:
            raise ValueError(f"{what}: no column(s) {missing} in the data frame (columns: {self.columns})")

    def values(self, name: str) -> NDArray[np.float64]:
        """A value column as float64 (nulls → NaN); its kind (not its values) must be numeric."""
        out = as_float_array(self.df[name], name=f"column {name!r}")
        return np.ascontiguousarray(out.ravel())

    @abstractmethod
    def factorize(self, name: str) -> tuple[NDArray[np.int64], list[Hashable]]:
        """One code per row and the distinct values (nulls one value), codes indexing the values."""

    @abstractmethod
    def build(
        self,
        by: tuple[str, ...] | None,
        labels: Sequence[Any],
        columns: Sequence[tuple[str, str]],
        data: Sequence[NDArray[Any]],
    ) -> Any:
        """The result: one row per label (keys as given; ``by=None``: one row), one column per
        (value column, statistic)."""


class PandasFrame(Frame):
    kind = "pandas"

    def factorize(self, name: str) -> tuple[NDArray[np.int64], list[Hashable]]:
        import pandas as pd

        codes, uniques = pd.factorize(self.df[name], use_na_sentinel=False)
        return np.asarray(codes, dtype=np.int64), list(uniques)

    def build(
        self,
        by: tuple[str, ...] | None,
        labels: Sequence[Any],
        columns: Sequence[tuple[str, str]],
        data: Sequence[NDArray[Any]],
    ) -> Any:
        return build_pandas(by, labels, columns, data)


def build_pandas(
    by: tuple[str, ...] | None,
    labels: Sequence[Any],
    columns: Sequence[tuple[str, str]],
    data: Sequence[NDArray[Any]],
) -> Any:
    """The pandas result (module docstring): indexed by the keys, ``MultiIndex`` columns."""
    import pandas as pd

    if by is None:
        index: Any = pd.RangeIndex(1)
    elif len(by) == 1:
        index = pd.Index(list(labels), name=by[0], dtype=None if labels else object)
    elif labels:
        index = pd.MultiIndex.from_tuples([tuple(k) for k in labels], names=list(by))
    else:
        index = pd.MultiIndex.from_arrays([[] for _ in by], names=list(by))
    frame = pd.DataFrame({i: np.asarray(d) for i, d in enumerate(data)}, index=index)
    frame.columns = (
        pd.MultiIndex.from_tuples(list(columns)) if columns else pd.MultiIndex.from_arrays([[], []])
    )
    return frame


class PolarsFrame(Frame):
    kind = "polars"

    def factorize(self, name: str) -> tuple[NDArray[np.int64], list[Hashable]]:
        import polars as pl

        s = self.df[name]
        if s.dtype in (pl.Categorical, pl.Enum):
            s = s.cast(pl.String)
        uniques: list[Hashable] = s.drop_nulls().unique().sort().to_list()
        ranks = s.rank("dense")  # 1..G in the sorted order of the values; nulls stay null
        codes = (ranks.cast(pl.Int64) - 1).fill_null(len(uniques)).to_numpy().astype(np.int64)
        if s.null_count():
            uniques.append(None)
        return codes, uniques

    def build(
        self,
        by: tuple[str, ...] | None,
        labels: Sequence[Any],
        columns: Sequence[tuple[str, str]],
        data: Sequence[NDArray[Any]],
    ) -> Any:
        import polars as pl

        series: list[Any] = []
        if by is not None:
            for i, b in enumerate(by):
                key_values = [k if len(by) == 1 else k[i] for k in labels]
                series.append(pl.Series(b, key_values, strict=False))
        names = [s.name for s in series]
        for (column, stat), values in zip(columns, data, strict=True):
            name = f"{column}_{stat}"
            if name in names:
                raise ValueError(f"aggs: the output column {name!r} would appear twice (rename a column)")
            names.append(name)
            series.append(pl.Series(name, np.asarray(values)))
        return pl.DataFrame(series) if series else pl.DataFrame()


def summary_frame(
    kind: str, rows: Sequence[str], columns: Sequence[str], data: Sequence[NDArray[Any]]
) -> Any:
    """A ``describe``-shaped result: one row per summary statistic, one column per value column (pandas:
    the statistics as the index; polars: a first column ``statistic``, as polars' own ``describe``)."""
    if kind == "polars":
        import polars as pl

        series = [pl.Series("statistic", list(rows))]
        series += [pl.Series(c, np.asarray(d, dtype=np.float64)) for c, d in zip(columns, data, strict=True)]
        return pl.DataFrame(series)
    import pandas as pd

    values = {c: np.asarray(d, dtype=np.float64) for c, d in zip(columns, data, strict=True)}
    return pd.DataFrame(values, index=pd.Index(list(rows)))


def read_frame(df: Any) -> Frame:
    """The adapter of an in-memory frame (``frame_kind`` refuses anything else)."""
    kind = frame_kind(df)
    if kind == "pandas":
        return PandasFrame(df)
    if kind == "polars":
        return PolarsFrame(df)
    raise TypeError("Dask frames are read by smoothdp.tables.dask_tables")
