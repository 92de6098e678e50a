"""The one CSV reader of smoothdp: the shipped data loaders and the ``smoothdp release`` command use it
(files and standard input alike).

Parsing is Python's standard :mod:`csv` module (RFC 4180 quoting, maintained with the interpreter). The
rules, the same everywhere:

**Records: n never depends on a cell.**

* the first line that is not blank is the header (blank lines before it precede every record);
* **every line after the header is one record**, whatever its cells hold: an empty line, a line of
  spaces, a quoted empty cell (``""``, what pandas writes for a missing value) and a row shorter than
  the header all give records whose missing cells are empty; cells past the header's width are ignored;
* only the file's **final line ending** is not a record (``1\\n2\\n`` and ``1\\n2`` both hold 2 records;
  ``1\\n2\\n\\n`` holds 3, the last one missing); ``\\r\\n``, ``\\n`` and ``\\r`` all end a line, and a file
  with only a header holds 0 records;
* a "line" is a CSV record: a quoted cell may hold line breaks (``"a\\nb"`` is one cell of one record),
  as every CSV writer produces them. The residual dependence on the data: a file that is **not** valid
  CSV, where a cell opens a quote (``"`` first) that no later quote closes, joins the following lines
  into that cell. Write files with a CSV writer (Python's :mod:`csv`, pandas, R, spreadsheets): they
  quote any cell holding a quote, a comma or a line break, so their files have one record per row;
* bytes that are not UTF-8 are read as U+FFFD (a cell holding them is unparseable, so missing), a UTF-8
  byte-order mark is dropped, and a cell of any length is read: the only errors are about the file's
  structure (no file, no header, no such column), never about a cell.

**Values.** :func:`parse_numbers` reads a column as numbers keeping every record: an empty, ``NA``-like
(:data:`MISSING`) or unparseable cell is a **missing value (NaN)**, which the mechanisms impute with the
midpoint of their public bounds (:func:`smoothdp.validation.prepare_records`); ``inf``/``-inf`` are kept
as ±inf, which the mechanisms clip. Nothing counts or reports the missing or infinite cells.

**The column's type** (:func:`column_type`). A CSV has no schema, so the type is read from the cells,
once, before any data-dependent work: a column is ``"number"`` when at least one of its cells parses as a
number (±inf included) or when it has no cell at all (a header-only file, like an empty float array in
Python); it is ``"text"`` when it has cells and none of them is a number (every cell empty, ``NA``-like
or text: ``CA, NY, TX``). A statistic of a text column is refused with an error naming the column
(:func:`number_column`), as the Python API refuses an array of strings by its dtype. The loaders keep a
text column as strings and read a number column with :func:`parse_numbers`.

*Residual dependence on the data.* The type is a function of the cells, but only through the event "no
cell is a number": changing one record changes the type only when one of the two files has no number at
all and the other exactly one (under add/remove, also: the empty file against a one-record file of
text). A column holding at least two numbers is ``"number"`` whatever any one record holds, so on every
such column the error never depends on a record.
"""

from __future__ import annotations

import csv
import gzip
import io
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from typing import Literal, TextIO

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DECODE_ERRORS",
    "ENCODING",
    "MISSING",
    "Table",
    "column_type",
    "number_column",
    "parse_numbers",
    "read_csv",
    "typed_column",
]

#: Cell texts (after stripping, case-insensitive) that mean "missing", besides unparseable ones.
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "-", "."})

#: How files and standard input are decoded: UTF-8, a byte-order mark dropped (``ENCODING``), bytes
#: that are not UTF-8 read as U+FFFD (``DECODE_ERRORS``), never an error.
ENCODING = "utf-8-sig"
DECODE_ERRORS = "replace"

Table = tuple[list[str], dict[str, list[str]]]

#: The csv module's per-cell size limit during a read (its default, 131,072 characters, made a long cell
#: an error): the largest value every platform's C long accepts.
_FIELD_SIZE_LIMIT = 2**31 - 1
_FIELD_SIZE_LOCK = threading.Lock()


@contextmanager
def _any_cell_size() -> Iterator[None]:
    """Lift the csv module's cell-size limit (a process-wide setting) for one read, then restore it."""
    with _FIELD_SIZE_LOCK:
        saved = csv.field_size_limit(_FIELD_SIZE_LIMIT)
        try:
            yield
        finally:
            csv.field_size_limit(saved)


def _table(rows: Iterable[list[str]], name: str) -> Table:
    lines = iter(rows)
    header: list[str] | None = None
    for row in lines:
        if any(cell.strip() for cell in row):  # blank lines before the header precede every record
            header = [cell.strip() for cell in row]
            header[0] = header[0].removeprefix("\ufeff").strip()  # a byte-order mark read as text
            break
    if header is None:
        raise ValueError(f"{name} has no header row")
    width = len(header)
    columns: list[list[str]] = [[] for _ in header]
    for row in lines:  # every line after the header is a record, whatever its cells hold
        cells = row[:width] if len(row) >= width else row + [""] * (width - len(row))
        for column, cell in zip(columns, cells, strict=True):
            column.append(cell)
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

    Every line after the header is a record (module docstring); cells stay strings. A stream should be
    opened with ``newline=""`` (as :func:`open` files are here) so that quoted line breaks stay in their
    cell.
    """
    if sum(source is not None for source in (path, text, stream)) != 1:
        raise TypeError("read_csv takes exactly one of path, text and stream")
    label = name or (str(path) if path is not None else "the CSV text" if text is not None else "the stream")
    with _any_cell_size():
        if text is not None:
            return _table(csv.reader(io.StringIO(text, newline="")), label)
        if stream is not None:
            return _table(csv.reader(stream), label)
        assert path is not None
        if str(path).endswith(".gz"):
            with gzip.open(path, "rt", encoding=ENCODING, errors=DECODE_ERRORS, newline="") as handle:
                return _table(csv.reader(handle), label)
        with open(path, encoding=ENCODING, errors=DECODE_ERRORS, newline="") as handle:
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


def _type_of(numbers: NDArray[np.float64]) -> Literal["number", "text"]:
    """The type rule on parsed cells: NaN is exactly a missing or unparseable cell."""
    return "number" if numbers.size == 0 or not bool(np.isnan(numbers).all()) else "text"


def column_type(cells: Sequence[str]) -> Literal["number", "text"]:
    """``"number"`` when some cell parses as a number (±inf too) or there is no cell; else ``"text"``.

    The one type rule of CSV columns (module docstring, with its residual dependence on the data).
    """
    return _type_of(parse_numbers(cells))


def number_column(cells: Sequence[str], column: str) -> NDArray[np.float64]:
    """The column as floats (:func:`parse_numbers`), or a :class:`ValueError` naming ``column`` when its
    type (:func:`column_type`) is text: what ``smoothdp release`` reads."""
    numbers = parse_numbers(cells)
    if _type_of(numbers) == "text":
        raise ValueError(
            f"column {column!r} holds no number (every cell is empty, NA-like or text): a statistic needs a "
            "column of numbers"
        )
    return numbers


def typed_column(cells: Sequence[str]) -> NDArray[np.float64] | NDArray[np.str_]:
    """The column as floats when its type is ``"number"``, else as strings (the loaders' reading)."""
    numbers = parse_numbers(cells)
    return numbers if _type_of(numbers) == "number" else np.array(cells, dtype=str)
