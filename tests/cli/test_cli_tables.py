"""Grouped releases and the counting/moment commands of the ``smoothdp`` command, run through its entry point
(``smoothdp.cli.main``; one case through a subprocess): CSV, Parquet and Dask inputs, ``--json``, the one
``--budget`` charge of a table, equal output shape on neighbouring files, data that never fails, and bad
parameters that fail with exit 2 naming the option."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import smoothdp
from smoothdp.cli import main
from smoothdp.rng import default_rng

KEYS = ["north", "south", "east", "empty"]  # "empty" has no row; "west" is in the data, not listed
TABLE = [
    "--stat",
    "income:median,mean",
    "--stat",
    "age:count",
    "--bounds",
    "income=0,1e6",
    "--bounds",
    "age=0,125",
]


def _rows(n: int = 200, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "person": [f"p{i}" for i in gen.integers(0, n // 2, n)],
            "county": gen.choice(["north", "south", "east", "west"], n),
            "sex": gen.choice(["F", "M"], n),
            "income": gen.lognormal(10, 1, n).round(2),
            "age": gen.integers(18, 90, n).astype(float),
        }
    )


def _write_csv(path, frame: pd.DataFrame) -> str:
    frame.to_csv(path, index=False)
    return str(path)


@pytest.fixture
def files(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(KEYS) + "\n")
    frame = _rows()
    return {
        "csv": _write_csv(tmp_path / "data.csv", frame),
        "keys": str(keys),
        "frame": frame,
        "dir": tmp_path,
    }


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    out, _ = capsys.readouterr()
    return json.loads(out)


def _table(payload: dict) -> pd.DataFrame:
    return pd.DataFrame(payload["table"]["rows"], columns=payload["table"]["columns"])


def test_a_table_of_several_statistics_with_its_metadata(capsys, files):
    argv = ["release", "table", files["csv"], "--by", "county", "--keys", files["keys"], *TABLE]
    payload = _json(capsys, [*argv, "--epsilon", "1", "--json", "--seed", "1"])
    table = _table(payload)
    assert list(table.columns) == ["county", "income_median", "income_mean", "age_count"]
    assert list(table["county"]) == KEYS  # every listed key, in order; the unlisted one dropped
    assert table["age_count"].map(type).eq(int).all()
    assert payload["guarantee"] == {
        "type": "PureDP",
        "epsilon": 1.0,
        "delta": 0.0,
        "neighbours": "substitution",
    }
    assert (
        payload["neighbours"] == "substitution"
        and payload["proof"] == "docs/theory/tables.md#the-whole-table"
    )
    shares = payload["statistics"]
    assert [(s["column"], s["statistic"]) for s in shares] == [
        ("income", "median"),
        ("income", "mean"),
        (None, "count"),
    ]
    # substitution: the person budget is ε/2 under add/remove, split in three equal shares
    assert sum(s["epsilon"] for s in shares) <= 0.5 and all(s["neighbours"] == "add_remove" for s in shares)
    assert payload["simulation"] is True and payload["keys"] == {"kind": "public", "count": 4}


def test_the_command_is_smoothdp_aggregate(capsys, files):
    """The CLI adds no implementation: its seeded table equals aggregate's on the same frame and seed."""
    argv = [
        "release",
        "median",
        files["csv"],
        "--column",
        "income",
        "--by",
        "county",
        "--keys",
        files["keys"],
    ]
    payload = _json(capsys, [*argv, "--bounds", "0", "1e6", "--epsilon", "1", "--json", "--seed", "5"])
    frame = files["frame"].assign(county=files["frame"]["county"].astype(object))
    expected = smoothdp.aggregate(
        frame, by="county", aggs={"income": ["median"]}, bounds={"income": (0, 1e6)}, epsilon=1.0,
        keys=KEYS, neighbours="substitution", rng=default_rng(5),
    )  # fmt: skip
    assert [row[1] for row in payload["table"]["rows"]] == list(expected[("income", "median")])


def test_one_ledger_charge_for_a_table_of_many_groups(capsys, tmp_path):
    frame = _rows(400).assign(county=[f"c{i % 60}" for i in range(400)])
    data = _write_csv(tmp_path / "many.csv", frame)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(f"c{i}" for i in range(80)) + "\n")  # 80 groups, 20 of them empty
    ledger = str(tmp_path / "budget.db")
    assert main(["budget", "init", ledger, "--epsilon", "1"]) == 0
    capsys.readouterr()
    argv = ["release", "table", data, "--by", "county", "--keys", str(keys), *TABLE, "--epsilon", "1"]
    payload = _json(capsys, [*argv, "--budget", ledger, "--json"])
    assert len(payload["table"]["rows"]) == 80
    assert payload["budget"]["charged"] == [{"epsilon": 1.0, "delta": 0.0}]
    assert payload["budget"]["remaining"]["epsilon"] == 0.0
    with smoothdp.Accountant.open(ledger) as acc:
        assert len(acc.charges) == 1 and acc.spent.epsilon == 1.0
    # the budget is spent: the next release is refused before the data is read (exit 3)
    assert main([*argv, "--budget", ledger]) == 3
    assert "budget refused" in capsys.readouterr().err


def _shape(capsys, path: str, keys: str, extra: list[str]) -> tuple[list[str], list[str], dict]:
    argv = ["release", "table", path, "--by", "county", "--keys", keys, *TABLE, "--epsilon", "1", "--json"]
    payload = _json(capsys, [*argv, *extra])
    public = {k: payload[k] for k in ("guarantee", "unit", "keys", "by", "proof")}
    return payload["table"]["columns"], [row[0] for row in payload["table"]["rows"]], public


@pytest.mark.parametrize(
    "unit", [[], ["--privacy-unit", "person", "--contributions", "3", "--max-groups", "2"]]
)
def test_neighbouring_files_give_the_same_rows_and_columns(capsys, files, unit):
    frame = files["frame"]
    neighbours = {
        "a row removed": frame.drop(index=0),
        "a person moved to another group": frame.assign(
            county=np.where(frame.index == 3, "east", frame["county"])
        ),
        "a person with many rows": pd.concat([frame, frame.iloc[[5] * 40]]),
        "NaN and infinite values": frame.assign(income=np.r_[np.nan, np.inf, -np.inf, frame["income"][3:]]),
        "every row of a listed group removed": frame[frame["county"] != "north"],
        "an unlisted key": frame.assign(county=np.where(frame.index < 20, "nowhere", frame["county"])),
    }
    reference = _shape(capsys, files["csv"], files["keys"], unit)
    for name, neighbour in neighbours.items():
        path = _write_csv(files["dir"] / "neighbour.csv", neighbour)
        assert _shape(capsys, path, files["keys"], unit) == reference, name


def test_data_never_fails_an_empty_file_and_empty_cells(capsys, tmp_path, files):
    empty = tmp_path / "empty.csv"
    empty.write_text("county,income,age\n")
    argv = [
        "release",
        "table",
        str(empty),
        "--by",
        "county",
        "--keys",
        files["keys"],
        *TABLE,
        "--epsilon",
        "1",
    ]
    assert list(_table(_json(capsys, [*argv, "--json"]))["county"]) == KEYS
    holes = tmp_path / "holes.csv"
    holes.write_text("county,income,age\nnorth,,inf\n,5,\nsouth,-inf,nan\n\n")
    argv[2] = str(holes)
    assert list(_table(_json(capsys, [*argv, "--json"]))["county"]) == KEYS


def test_several_by_columns_with_a_csv_of_keys(capsys, files):
    keys = files["dir"] / "cells.csv"
    keys.write_text("sex,county\nF,north\nM,north\nF,empty\n")
    argv = ["release", "count", files["csv"], "--by", "county", "--by", "sex", "--keys", str(keys)]
    table = _table(_json(capsys, [*argv, "--epsilon", "1", "--json"]))
    assert table[["county", "sex"]].values.tolist() == [["north", "F"], ["north", "M"], ["empty", "F"]]


def test_private_keys_need_delta_and_state_it(capsys, files):
    argv = ["release", "sum", files["csv"], "--column", "income", "--bounds", "0", "1e5", "--by", "county"]
    assert main([*argv, "--keys", "private", "--epsilon", "1"]) == 2
    assert "--delta" in capsys.readouterr().err
    payload = _json(capsys, [*argv, "--keys", "private", "--delta", "1e-6", "--epsilon", "1", "--json"])
    assert payload["keys"]["kind"] == "private" and payload["guarantee"]["delta"] == 1e-6


def test_parquet_and_dask_inputs(capsys, files):
    path = str(files["dir"] / "data.parquet")
    files["frame"].to_parquet(path)
    base = [
        "release",
        "table",
        path,
        "--by",
        "county",
        "--keys",
        files["keys"],
        *TABLE,
        "--epsilon",
        "1",
        "--json",
    ]
    pandas_table = _table(_json(capsys, base))
    dask_table = _table(_json(capsys, [*base, "--engine", "dask", "--privacy-unit", "person"]))
    assert list(pandas_table.columns) == list(dask_table.columns)
    assert list(pandas_table["county"]) == list(dask_table["county"]) == KEYS


def test_counting_and_moment_commands_of_one_column(capsys, files):
    csv = files["csv"]
    count = _json(capsys, ["release", "count", csv, "--epsilon", "1", "--json"])
    assert isinstance(count["value"], int) and count["guarantee"]["neighbours"] == "add_remove"
    total = _json(
        capsys, ["release", "sum", csv, "--column", "age", "--bounds", "0", "125", "--epsilon", "1", "--json"]
    )
    assert total["statistic"] == "sum" and total["details"]["bounds"] == [0.0, 125.0]
    hist = _json(
        capsys,
        [
            "release",
            "histogram",
            csv,
            "--column",
            "county",
            "--categories",
            "north",
            "west",
            "--epsilon",
            "1",
            "--json",
        ],
    )
    assert len(hist["value"]) == 2 and hist["details"]["categories"] == ["north", "west"]
    bins = _json(
        capsys,
        [
            "release",
            "histogram",
            csv,
            "--column",
            "age",
            "--bins",
            "0",
            "50",
            "125",
            "--epsilon",
            "1",
            "--json",
        ],
    )
    assert len(bins["value"]) == 2
    var = _json(
        capsys, ["release", "var", csv, "--column", "age", "--bounds", "0", "125", "--epsilon", "1", "--json"]
    )
    assert var["guarantee"]["neighbours"] == "substitution" and var["value"] >= 0
    std = [
        "release",
        "std",
        csv,
        "--column",
        "age",
        "--bounds",
        "0",
        "125",
        "--epsilon",
        "1",
        "--neighbours",
        "add_remove",
    ]
    assert _json(capsys, [*std, "--json"])["guarantee"]["neighbours"] == "add_remove"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--stat", "age:count", "--epsilon", "1", "--by", "county"], "--keys"),
        (["--stat", "income:median", "--epsilon", "1"], "--bounds income=LOW,HIGH"),
        (["--stat", "income:medain", "--bounds", "income=0,1", "--epsilon", "1"], "'medain'"),
        (["--stat", "income", "--epsilon", "1"], "--stat"),
        (["--stat", "income:median", "--bounds", "income=1,0", "--epsilon", "1"], "--bounds income"),
        (["--stat", "income:median", "--bounds", "income=0,1", "--epsilon", "-1"], "--epsilon"),
        (
            ["--stat", "income:median", "--bounds", "income=0,1", "--epsilon", "1", "--neighbours", "x"],
            "--neighbours",
        ),
        (["--stat", "age:count", "--epsilon", "1", "--contributions", "2"], "--privacy-unit"),
        (
            ["--stat", "age:count", "--epsilon", "1", "--privacy-unit", "person", "--contributions", "0"],
            "--contributions",
        ),
        (["--stat", "age:count", "--epsilon", "1", "--by", "county", "--keys", "private"], "--delta"),
        (["--stat", "age:count", "--epsilon", "1", "--by", "county", "--keys", "no-such-file"], "--keys"),
        (["--stat", "nope:count", "--epsilon", "1"], "'nope'"),
    ],
)
def test_bad_parameters_exit_2_with_one_line_naming_the_option(capsys, files, extra, named):
    assert main(["release", "table", files["csv"], *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and named in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (
            [
                "median",
                "--column",
                "income",
                "--bounds",
                "0",
                "1",
                "--by",
                "county",
                "--keys",
                "K",
                "--noise",
                "laplace",
            ],
            "--noise",
        ),
        (
            ["median", "--column", "income", "--bounds", "private", "--by", "county", "--keys", "K"],
            "--bounds private",
        ),
        (
            ["median", "--column", "income", "--bounds", "0", "1", "--neighbours", "add_remove"],
            "--neighbours",
        ),
        (["histogram", "--column", "age", "--by", "county", "--keys", "K", "--bins", "0", "1"], "--by"),
        (["histogram", "--column", "age"], "--categories"),
        (["count"], "--epsilon"),
    ],
)
def test_single_statistic_commands_refuse_what_they_cannot_do(capsys, files, argv, named):
    argv = [a if a != "K" else files["keys"] for a in argv]
    assert (
        main(
            ["release", argv[0], files["csv"], *argv[1:], *([] if argv[0] == "count" else ["--epsilon", "1"])]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and named in err


def test_the_installed_command_releases_a_table_from_standard_input(files):
    """The real entry point in a fresh process, the CSV on stdin (read once for every column)."""
    argv = [
        "release",
        "table",
        "-",
        "--by",
        "county",
        "--keys",
        files["keys"],
        *TABLE,
        "--epsilon",
        "1",
        "--json",
    ]
    with open(files["csv"], "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "smoothdp.cli", *argv], stdin=stdin, capture_output=True, timeout=120
        )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert [row[0] for row in payload["table"]["rows"]] == KEYS and payload["simulation"] is False
