"""The decision guide and the done-when summary (benchmarks/accuracy/guide.py, summary.py): numbers come
from the results, a missing cell is an error, lost cells are listed with their reasons, and the committed
docs page is exactly what the generator writes from the committed results."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.accuracy.guide import fill_guide  # noqa: E402
from benchmarks.accuracy.report import render_docs  # noqa: E402
from benchmarks.accuracy.summary import render_summary  # noqa: E402


def _cell(
    ds: str,
    eps: float,
    method: str,
    role: str,
    err: float,
    kind: str = "median",
    oob: float = 0.0,
    trials: int = 200,
) -> dict[str, Any]:
    library = method.split(":")[0] if role != "competitor" else method.split("-")[0]
    return {
        "dataset": ds,
        "kind": kind,
        "n": 100,
        "epsilon": eps,
        "method": method,
        "library": library,
        "role": role,
        "trials": trials,
        "median_abs_error": err,
        "p90_abs_error": 3 * err,
        "out_of_bounds": oob,
        "nonfinite": 0.0,
        "ms_per_release": 1.0,
        "setup_seconds": 0.0,
        "failure": "",
    }


CELLS = [
    _cell("a", 1.0, "smoothdp", "default", 0.5),
    _cell("a", 1.0, "diffprivlib", "competitor", 1.0),
    _cell("a", 1.0, "opendp-em", "competitor", 0.8),
    _cell("b", 1.0, "smoothdp", "default", 4.0),
    _cell("b", 1.0, "smoothdp:clipped", "smoothdp", 2.0),
    _cell("b", 1.0, "opendp-em", "competitor", 2.0),
    _cell("c_mean", 0.5, "smoothdp", "default", 1.05, kind="mean", oob=0.01),
    _cell("c_mean", 0.5, "opendp", "competitor", 1.0, kind="mean"),
    _cell("d", 1.0, "smoothdp", "default", 9.0, trials=20),  # too few trials: not counted
    _cell("d", 1.0, "opendp-em", "competitor", 1.0),
]


def test_guide_placeholders_are_filled_from_the_cells_and_a_missing_cell_is_an_error() -> None:
    sources = {"q": CELLS, "m": [], "nb": []}
    text = fill_guide(
        "a: {{err q a 1 smoothdp}} vs {{other q a 1}} ({{othername q a 1}}), "
        "p90 {{p90 q a 1 smoothdp}}, ratio {{ratio q b 1 smoothdp}}×",
        sources,
    )
    assert text == "a: 0.5 vs 0.8 (opendp-em), p90 1.5, ratio 2×"
    assert fill_guide("{{within all}} of {{cells all}}, better {{better all}}", sources) == "2 of 3, better 1"
    with pytest.raises(KeyError, match="no cells"):
        fill_guide("{{err q zzz 1 smoothdp}}", sources)
    with pytest.raises(KeyError, match="smoothdp:kss"):
        fill_guide("{{err q a 1 smoothdp:kss}}", sources)
    with pytest.raises(KeyError, match="unknown placeholder"):
        fill_guide("{{median q a 1 smoothdp}}", sources)


def test_docs_page_puts_the_guide_above_the_generated_tables() -> None:
    docs = render_docs(CELLS, {"trials": 200, "datasets": {}}, guide="## Decision guide\n\nCall this.")
    assert docs.startswith("# Which mechanism should I use?")
    assert docs.index("## Decision guide") < docs.index("## The measurements") < docs.index("## Per data set")


def test_summary_counts_lost_cells_with_reasons_out_of_bounds_and_short_cells() -> None:
    text = render_summary(CELLS, {}, ["note"], ["charge line -> OK"])
    assert "| medians | 2 | 1 (50%) | 1 (50%) | 0 |" in text
    assert "| means | 1 | 1 (100%) | 0 (0%) | 1 |" in text
    lost = text.split("## Cells not within 10%", 1)[1]
    assert "| b | 1 | 100 | 4 | opendp-em | 2 | 2× | `smoothdp:clipped` (2) | not explained |" in lost
    assert "| a |" not in lost and "c_mean" not in lost.split("## Default cells with releases")[0]
    assert "- c_mean ε=0.5: 1.0%" in text and "**not met**" in text
    assert "- d ε=1" in text.split("fewer than 200 releases")[1]


def test_committed_docs_page_is_the_generators_output() -> None:
    from benchmarks.accuracy.__main__ import DOCS_PAGE, render_page

    assert DOCS_PAGE.read_text(encoding="utf-8") == render_page(), (
        "docs/which-mechanism.md is stale: run `python -m benchmarks.accuracy --docs`"
    )


def test_default_mean_var_std_are_charged_exactly_the_epsilon_passed() -> None:
    from benchmarks.accuracy.charged_epsilon import check_charges

    checks = check_charges()
    assert [c.statistic for c in checks] == ["mean", "var", "std"]
    for c in checks:
        assert c.ok, c.line()
