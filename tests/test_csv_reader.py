"""The CSV reader never makes n depend on a cell (issue 23): records, line endings, the column's type.

Expected record counts and values are written from the documented rules (smoothdp.data.csv_reader), by
hand, never taken from the reader.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from smoothdp.data import load_csv
from smoothdp.data.csv_reader import column_type, number_column, parse_numbers, read_csv, typed_column

NAN = np.nan


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n1\n2\n", [1, 2]),  # the final line ending is not a record
        ("a\n1\n2", [1, 2]),  # nor is its absence one less
        ("a\n1\n2\n\n", [1, 2, NAN]),  # a trailing blank line is a record (missing)
        ("a\r\n1\r\n2\r\n", [1, 2]),  # \r\n ends a line as \n does
        ("a\r\n1\r\n\r\n", [1, NAN]),
        ("a\r1\r2\r", [1, 2]),  # \r alone too
        ("a\n1\n\n3\n", [1, NAN, 3]),  # an empty line in the middle
        ("a\n1\n   \n3\n", [1, NAN, 3]),  # a line of spaces
        ('a\n1\n""\n3\n', [1, NAN, 3]),  # a quoted empty cell: what pandas writes for a missing value
        ('a\n1\n"2"\n3\n', [1, 2, 3]),
        ("a\n", []),  # a header only: no record
        ("a", []),
        ("\n\na\n5\n", [5]),  # blank lines before the header precede every record
        ("\ufeffa\n5\n", [5]),  # a byte-order mark read as text is not part of the header either
    ],
)
def test_every_line_after_the_header_is_one_record(text, expected):
    header, cells = read_csv(text=text)
    assert header == ["a"]
    np.testing.assert_array_equal(parse_numbers(cells["a"]), np.array(expected, dtype=float))


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfage\r\n30\r\n")
    assert read_csv(path) == (["age"], {"age": ["30"]})


def test_a_quoted_line_break_stays_in_its_cell():
    _, cells = read_csv(text='a,b\n1,"x\ny"\n2,z\n')
    assert cells == {"a": ["1", "2"], "b": ["x\ny", "z"]}


# Every kind of record a data holder's file may hold, written as a CSV writer writes it (or as raw bytes).
ODD_CELLS = ["", '""', "   ", "NA", "nan", "?", "abc", "CA", "inf", "-inf", "1e999", "x\ny", "9" * 200_000]


def _file_bytes(cells: list[str]) -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["v", "w"])
    for cell in cells:
        writer.writerow([cell, "1"])
    return buffer.getvalue().encode()


@pytest.mark.parametrize("odd", [*ODD_CELLS, "raw-bytes", "raw-empty-line", "raw-quoted-empty"])
def test_substituting_any_record_keeps_n(tmp_path, odd):
    """x and x' differ in one record, x' holding anything: both files have n = 5 records, and the column
    of x' is that of x with the record replaced by what the documented policy says."""
    base = ["3", "4", "5", "6", "7"]
    x = tmp_path / "x.csv"
    x.write_bytes(_file_bytes(base))
    xp = tmp_path / "xp.csv"
    if odd == "raw-bytes":
        xp.write_bytes(_file_bytes(base[:2]) + b"\xff\xfe5,1\n" + _file_bytes(base[3:])[4:])
    elif odd == "raw-empty-line":
        xp.write_bytes(_file_bytes(base[:2]) + b"\n" + _file_bytes(base[3:])[4:])
    elif odd == "raw-quoted-empty":
        xp.write_bytes(_file_bytes(base[:2]) + b'""\n' + _file_bytes(base[3:])[4:])
    else:
        xp.write_bytes(_file_bytes([*base[:2], odd, *base[3:]]))
    _, cx = read_csv(x)
    _, cxp = read_csv(xp)
    vx, vxp = number_column(cx["v"], "v"), number_column(cxp["v"], "v")
    assert vx.shape == vxp.shape == (5,)
    assert len(cxp["w"]) == 5
    # ±inf are kept (the mechanisms clip them); a number past the float range (1e999, or a 200,000-digit
    # one) is +inf; everything else odd is a missing value.
    infinite = {"inf": np.inf, "-inf": -np.inf, "1e999": np.inf, "9" * 200_000: np.inf}
    want = np.array([3, 4, infinite.get(odd, NAN), 6, 7], dtype=float)
    np.testing.assert_array_equal(vxp, want)
    np.testing.assert_array_equal(vx, [3, 4, 5, 6, 7])


def test_the_cell_size_limit_is_restored_after_a_read():
    before = csv.field_size_limit()
    read_csv(text="a\n" + "1" * 200_000 + "\n")
    assert csv.field_size_limit() == before


@pytest.mark.parametrize(
    ("cells", "kind"),
    [
        (["CA", "NY", "TX"], "text"),
        (["", "NA", "?"], "text"),  # no number at all
        (["CA", "NY", "5"], "number"),  # one number: a number column, the text cells missing
        (["inf"], "number"),
        ([], "number"),  # no cell: like an empty float array
        (["1", "2"], "number"),
    ],
)
def test_the_column_type_rule(cells, kind):
    assert column_type(cells) == kind
    if kind == "text":
        with pytest.raises(ValueError, match=r"'state'.*no number"):
            number_column(cells, "state")
        assert typed_column(cells).tolist() == cells
    else:
        np.testing.assert_array_equal(typed_column(cells), parse_numbers(cells))


def test_one_record_changes_the_type_only_between_no_number_and_one_number():
    """The documented residual dependence: replacing any one record of a column with two numbers or more
    never makes it text; a column with exactly one number becomes text when that number is replaced."""
    odd = ["", "NA", "abc", "CA"]
    column = ["CA", "7", "8", "NA"]
    for i in range(len(column)):
        for cell in odd:
            changed = column.copy()
            changed[i] = cell
            assert column_type(changed) == "number"
    assert column_type(["CA", "7", "NA"]) == "number" and column_type(["CA", "abc", "NA"]) == "text"


def test_the_shipped_loaders_type_their_columns():
    adult = load_csv("adult")
    assert adult["age"].dtype == np.float64 and adult["age"].shape == (32_561,)
    assert adult["workclass"].dtype.kind == "U"  # text, kept as strings
    nyc = load_csv("nyc_collisions_sample")
    assert nyc["latitude"].dtype == np.float64 and nyc["borough"].dtype.kind == "U"
    assert nyc["crash_date"].dtype.kind == "U"  # dates do not parse as numbers
