"""Every ``smoothdp`` command shown in docs/cli.md runs as written (in process, in a folder holding the
files the page names); ``reproduce`` runs in tests/test_cli.py."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest

import smoothdp
from smoothdp.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
BLOCKS = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
COMMANDS = [
    line.split("  #")[0].strip()
    for block in BLOCKS
    for line in block.splitlines()
    if line.startswith("smoothdp ") and " reproduce " not in f"{line} "
]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    (tmp_path / "people.csv").write_text("age\n" + "".join(f"{a}\n" for a in rng.integers(18, 90, 500)))
    incomes = rng.lognormal(9.5, 1.0, 2000)
    (tmp_path / "incomes.csv").write_text("income\n" + "".join(f"{v:.2f}\n" for v in incomes))
    (tmp_path / "votes.csv").write_text("vote\n" + "A\n" * 30 + "B\n" * 20)
    shutil.copy(
        Path(smoothdp.__file__).parent / "data" / "election_2020_president.csv", tmp_path / "election.csv"
    )
    write_survey(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_survey(folder: Path) -> None:
    """survey.csv (person,county,sex,income,age: 600 rows of 250 persons, a few missing or infinite cells),
    counties.txt (four public counties, one with no row) and cells.csv (public (county, sex) pairs)."""
    rng = np.random.default_rng(21)
    counties = np.array(["Alameda", "Fresno", "Kern", "Marin", "Yolo"])  # Yolo is not listed
    rows = ["person,county,sex,income,age"]
    for i in range(600):
        income = f"{rng.lognormal(10.8, 0.7):.0f}" if i % 97 else ("" if i % 2 else "inf")
        age = int(rng.integers(18, 90))
        county = counties[rng.choice(5, p=[0.45, 0.3, 0.15, 0.0, 0.1])]
        rows.append(f"p{int(rng.integers(0, 250))},{county},{'FM'[i % 2]},{income},{age}")
    (folder / "survey.csv").write_text("\n".join(rows) + "\n")
    (folder / "counties.txt").write_text("Alameda\nFresno\nKern\nMarin\n")
    (folder / "cells.csv").write_text("county,sex\nAlameda,F\nAlameda,M\nFresno,F\nFresno,M\nMarin,F\n")


def test_the_page_shows_every_command():
    shown = " ".join(COMMANDS)
    for command in (
        "release median",
        "release geo-threshold",
        "release geo-range",
        "smoothed-delta",
        "privacy-profile",
        "budget init",
        "--bounds private",
        "--neighbours metric",
        "release count",
        "release sum",
        "release histogram",
        "release var",
        "release table",
        "--by",
        "--keys private",
        "--privacy-unit",
    ):
        assert command in shown, command


def test_the_commands_of_the_page_run_in_order(capsys, folder):
    for command in COMMANDS:  # in order: the budget examples build on each other
        status = main(shlex.split(command)[1:])
        out, err = capsys.readouterr()
        assert status == 0, (command, err)
        if "--distributions election.csv" in command:
            assert "10^-24.72" in out  # the user guide's value for the 2020 election
    assert (folder / "reports.csv").read_text().startswith("report_1,report_2,report_3\n")
    with smoothdp.Accountant.open(folder / "geo.db") as acc:
        assert acc.spent.epsilon == 0.00125 and acc.neighbours == "metric"


def test_the_worked_table_example_prints_what_the_page_shows(capsys, folder):
    """The page's grouped example (seeded: a simulation) is followed by its output, as printed."""
    text = PAGE.read_text(encoding="utf-8")
    command, shown = re.search(
        r"```bash\n(smoothdp release table [^\n]*--seed 1)\n```\n\n<!-- output:[^\n]*-->\n```text\n(.*?)```",
        text,
        flags=re.S,
    ).groups()
    assert main(shlex.split(command)[1:]) == 0
    out = capsys.readouterr().out
    assert out == shown
    assert "Marin" in out and "Yolo" not in out  # the empty listed county has a row, the unlisted none
