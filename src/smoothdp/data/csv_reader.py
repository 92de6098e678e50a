"""The one CSV reader of smoothdp: the shipped data loaders and the ``smoothdp release`` command use it
(files and standard input alike).

Parsing is Python's standard :mod:`csv` module (RFC 4180 quoting, maintained with the interpreter). The
rules, the same everywhere:

* the first non-blank line is the header;
* **blank lines are not records**: a line that is empty or holds only whitespace is skipped (in a
  one-column file, write a missing value as ``NA``, not as an empty line);
* **every other line is a record**, whatever its cells hold: a row shorter than the header has missing
  cells at its end, cells past the header's width are ignored;
* :func:`parse_numbers` reads a column as numbers keeping every record: an empty, ``NA``-like or
  unparseable cell is a **missing value (NaN)**, which the mechanisms impute with the midpoint of their
  public bounds (:func:`smoothdp.validation.prepare_records`); ``inf``/``-inf`` are kept as ±inf, which the
  mechanisms clip. Nothing counts or reports the missing or infinite cells.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable, Sequence
from os import PathLike
from typing import TextIO

import numpy as np
from numpy.typing import NDArray

__all__ = ["MISSING", "Table", "is_numeric", "parse_numbers", "read_csv"]

#: Cell texts (after stripping, case-insensitive) that mean "missing", besides unparseable ones.
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "-", "."})

Table = tuple[list[str], dict[str, list[str]]]


def _table(rows: Iterable[list[str]], name: str) -> Table:
    header: list[str] | None = None
    columns: list[list[str]] = []
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue  # a blank line is not a record
        if header is None:
            header = [cell.strip() for cell in row]
            columns = [[] for _ in header]
            continue
        width = len(row)
        for j, column in enumerate(columns):
            column.append(row[j] if j < width else "")
    if header is None:
        raise ValueError(f"{name} has no header row")
    return header, dict(zip(header, columns, strict=True))


def read_csv(
    path: str | PathLike[str] | None = None,
    *,
    text: str | None = None,
    stream: TextIO | None = None,
    name: str = "",
) -> Table:
    """Read a CSV file (``path``; ``.gz`` is decompressed), ``text`` or an open text ``stream`` (standard
    input for ``smoothdp release ... -``): (header, {column: cells}).

    Every non-blank line after the header is a record (module docstring); cells stay strings.
    """
    if sum(source is not None for source in (path, text, stream)) != 1:
        raise TypeError("read_csv takes exactly one of path, text and stream")
    label = name or (str(path) if path is not None else "the CSV text" if text is not None else "the stream")
    if text is not None:
        return _table(csv.reader(io.StringIO(text)), label)
    if stream is not None:
        return _table(csv.reader(stream), label)
    assert path is not None
    if str(path).endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
            return _table(csv.reader(handle), label)
    with open(path, encoding="utf-8", newline="") as handle:
        return _table(csv.reader(handle), label)


def _number(cell: str) -> float:
    text = cell.strip()
    if text.lower() in MISSING:
        return float("nan")
    try:
        return float(text)
    except ValueError:
        return float("nan")  # unparseable: a missing value


def parse_numbers(cells: Sequence[str]) -> NDArray[np.float64]:
    """The cells as floats, one per record: missing or unparseable → NaN, ``inf`` → inf (no errors)."""
    if len(cells) == 0:
        return np.zeros(0)
    try:  # fast path: every cell a number
        out: NDArray[np.float64] = np.asarray(cells, dtype=str).astype(np.float64)
        return out
    except ValueError:
        return np.array([_number(cell) for cell in cells], dtype=np.float64)


def is_numeric(cells: Sequence[str]) -> bool:
    """True when every non-missing cell parses as a number (how the shipped loaders type a column)."""
    return all(cell.strip().lower() in MISSING or _parses(cell) for cell in cells)


def _parses(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
