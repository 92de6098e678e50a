"""The data a command reads: one or more columns of a CSV file (or standard input), or of Parquet.

The CSV is read by :mod:`smoothdp.data.csv_reader`, the parser of the library's loaders: every line after
the header is a record, whatever its cells hold (n never depends on a cell); an empty, ``""``, NA-like or
unparseable cell is a missing value (NaN, imputed by the mechanism with its documented policy); ``inf``
cells are kept (the mechanisms clip them). The number of such cells is never printed. A column in which
no cell is a number (text) is an error naming it (exit 2), decided before any release work. Only the
file's structure (no file, no header, no such column) and a column's type can fail here, never one
cell's value.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smoothdp.cli.parsing import CliError

if TYPE_CHECKING:  # numpy is imported by the commands that need it: `smoothdp --help` stays fast
    import numpy as np

__all__ = [
    "FILE_HELP",
    "check_source",
    "dask_engine",
    "is_parquet",
    "load_column",
    "number_column_names",
    "read_column",
    "read_columns",
    "read_mixed_columns",
    "read_text_column",
    "record_count",
    "source_label",
]

#: The help of the FILE argument of every command that reads data.
FILE_HELP = (
    "a CSV file with a header row ('-': standard input); every line after the header is a record "
    "(an empty line too); empty, NA or unparseable cells are missing values; a column with no number at "
    "all is an error. A path ending in .parquet (a file, a directory or a glob) is read as Parquet (the "
    "dask extra)"
)


def source_label(path: str) -> str:
    return "standard input" if path == "-" else path


def is_parquet(path: str) -> bool:
    return path.rstrip("/").endswith(".parquet")


def check_source(path: str) -> None:
    """A missing file is an error before anything else is checked or read (not a fact about the data)."""
    if path == "-" or (is_parquet(path) and "*" in path):
        return
    exists = Path(path).exists() if is_parquet(path) else Path(path).is_file()
    if not exists:
        raise CliError(f"file not found: {path}")


def load_column(path: str, column: str, engine: str = "numpy") -> Any:
    """The column from a CSV file (or stdin) or, for a path ending in .parquet, from Parquet: a dask
    series on the dask engine (never loaded whole), else a numpy array."""
    if not is_parquet(path):
        return read_column(path, column)
    check_source(path)
    try:
        if engine == "dask":
            import dask.dataframe as dd

            return dd.read_parquet(path, columns=[column])[column]
        import pandas as pd

        return pd.read_parquet(path, columns=[column])[column].to_numpy()
    except ImportError as error:
        raise CliError(f"Parquet needs the dask extra (pip install 'smoothdp[dask]'): {error}") from None
    except (KeyError, ValueError, OSError) as error:
        raise CliError(f"cannot read column {column!r} of {path} as Parquet: {error}") from None


def read_column(path: str, column: str) -> np.ndarray:
    """Every record of ``column`` as a float (missing or unparseable cells NaN, for the API's imputation)."""
    return read_columns(path, [column])[0]


def read_columns(path: str, columns: Sequence[str]) -> list[np.ndarray]:
    """Every record of each of ``columns`` as floats (module docstring); a column of text is an error."""
    from smoothdp.data.csv_reader import number_column

    label = source_label(path)
    header, cells = _read_table(path)
    numbers = []
    for column in columns:
        _check_column(column, cells, header, label)
        try:
            numbers.append(number_column(cells[column], column))
        except ValueError as error:
            raise CliError(f"{error} ({label})") from None
    return numbers


def read_mixed_columns(
    path: str, numbers: Sequence[str], texts: Sequence[str]
) -> tuple[list[np.ndarray], list[list[str]]]:
    """One reading of the file (standard input can be read once): ``numbers`` as floats (as
    :func:`read_columns`) and ``texts`` as their cells' text, stripped (as :func:`read_text_column`)."""
    from smoothdp.data.csv_reader import number_column

    label = source_label(path)
    header, cells = _read_table(path)
    for column in (*numbers, *texts):
        _check_column(column, cells, header, label)
    try:
        values = [number_column(cells[column], column) for column in numbers]
    except ValueError as error:
        raise CliError(f"{error} ({label})") from None
    return values, [[cell.strip() for cell in cells[column]] for column in texts]


def record_count(path: str) -> int:
    """The number of records of a CSV file (or stdin): every line after the header (module docstring)."""
    header, cells = _read_table(path)
    return len(cells[header[0]]) if header else 0


def number_column_names(path: str) -> list[str]:
    """The columns of a CSV file whose type is number (:func:`smoothdp.data.csv_reader.column_type`)."""
    from smoothdp.data.csv_reader import column_type

    if path == "-":
        raise CliError("standard input can be read once: name its columns")
    header, cells = _read_table(path)
    return [column for column in header if column_type(cells[column]) == "number"]


def read_text_column(path: str, column: str) -> list[str]:
    """Every record of ``column`` as its cell text, stripped (categories: nothing is parsed)."""
    header, cells = _read_table(path)
    _check_column(column, cells, header, source_label(path))
    return [cell.strip() for cell in cells[column]]


def _check_column(column: str, cells: dict[str, list[str]], header: list[str], label: str) -> None:
    if column not in cells:
        raise CliError(f"column {column!r} not in {label}; it has: {', '.join(header)}")


def _read_table(path: str) -> tuple[list[str], dict[str, list[str]]]:
    import csv

    from smoothdp.data.csv_reader import read_csv

    check_source(path)
    try:
        return _read_stdin() if path == "-" else read_csv(path)
    except (ValueError, UnicodeDecodeError, csv.Error) as error:
        raise CliError(f"cannot read {source_label(path)} as CSV: {error}") from None


def _read_stdin() -> tuple[list[str], dict[str, list[str]]]:
    """Standard input through the shared reader, decoded as the files are (UTF-8, bad bytes U+FFFD)."""
    import io

    from smoothdp.data.csv_reader import DECODE_ERRORS, ENCODING, read_csv

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (tests, embedding)
        return read_csv(stream=sys.stdin, name="standard input")
    stream = io.TextIOWrapper(buffer, encoding=ENCODING, errors=DECODE_ERRORS, newline="")
    try:
        return read_csv(stream=stream, name="standard input")
    finally:
        stream.detach()  # leave sys.stdin usable


def dask_engine(name: str) -> Any:
    """``engine=`` of the library: None (in process), "dask" (the current scheduler), or a Client of
    ``$DASK_SCHEDULER_ADDRESS``."""
    import os

    if name == "numpy":
        return None
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    if not address:
        return "dask"
    from distributed import Client

    return Client(address)


def add_data_options(
    parser: argparse.ArgumentParser,
    *,
    column_required: bool = True,
    column_help: str = "the column to use",
    epsilon_required: bool = True,
) -> None:
    """FILE, ``--column`` and ``--epsilon``: what every single-column release reads and spends (``--column``
    optional where every record counts, ``--epsilon`` optional where ``--rho`` may stand for it)."""
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    parser.add_argument("--column", required=column_required, default=None, metavar="C", help=column_help)
    parser.add_argument(
        "--epsilon",
        required=epsilon_required,
        type=float,
        default=None,
        metavar="E",
        help="privacy budget ε > 0",
    )
