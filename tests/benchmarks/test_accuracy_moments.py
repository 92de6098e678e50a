"""The accuracy benchmark's means and variances cells (benchmarks/accuracy/moments.py): truths, release
ranges, the trial factor and the report's split by family. No competitor library runs here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.accuracy.harness import run_cell  # noqa: E402
from benchmarks.accuracy.methods import Method  # noqa: E402
from benchmarks.accuracy.moments import TRIAL_FACTOR, MomentDataset  # noqa: E402
from benchmarks.accuracy.report import render_markdown  # noqa: E402


def test_truths_and_release_ranges():
    x = np.array([1.0, 2.0, 4.0, 9.0])
    mean = MomentDataset("m", x, (0.0, 10.0), "d", "mean")
    var = MomentDataset("v", x, (0.0, 10.0), "d", "var")
    assert mean.truth.tolist() == [4.0] and mean.release_bounds == (0.0, 10.0)
    assert var.truth[0] == pytest.approx(np.var(x, ddof=1))  # the sample variance, ddof = 1
    assert var.release_bounds == (0.0, 100.0 * 4 / (4 * 3))
    with pytest.raises(ValueError, match="outside"):
        MomentDataset("bad", x, (0.0, 5.0), "d", "mean")


def test_cells_run_more_trials_and_check_the_release_range():
    x = np.linspace(0.0, 10.0, 11)
    var = MomentDataset("v", x, (0.0, 10.0), "d", "var")
    outside = Method("big", "x", "competitor", lambda ds, e, s: lambda: np.array([20.0]), "")
    cell = run_cell(var, 1.0, outside, trials=5)
    assert cell.trials == 5 * TRIAL_FACTOR
    assert cell.out_of_bounds == 0.0  # 20 lies in [0, 27.5]: a variance is not held to the data bounds
    above = Method("above", "x", "competitor", lambda ds, e, s: lambda: np.array([30.0]), "")
    assert run_cell(var, 1.0, above, trials=5).out_of_bounds == 1.0


def test_the_report_has_one_table_per_family():
    cells = [
        {
            "dataset": d,
            "kind": k,
            "n": 10,
            "epsilon": 1.0,
            "method": m,
            "library": lib,
            "role": role,
            "trials": 5,
            "median_abs_error": e,
            "p90_abs_error": e,
            "out_of_bounds": 0.0,
            "nonfinite": 0.0,
            "ms_per_release": 1.0,
            "setup_seconds": 0.0,
            "failure": "",
        }
        for d, k, m, lib, role, e in [
            ("a_median", "median", "smoothdp", "smoothdp", "default", 1.0),
            ("a_median", "median", "opendp-tree", "opendp", "competitor", 2.0),
            ("a_mean", "mean", "smoothdp", "smoothdp", "default", 1.0),
            ("a_mean", "mean", "opendp", "opendp", "competitor", 0.5),
        ]
    ]
    text = render_markdown(cells, {"bounds": {"a_median": [0, 1], "a_mean": [0, 1]}})
    quantile_table = text.split("(90th percentile): medians and quantiles")[1].split("##")[0]
    moments_table = text.split("(90th percentile): means and variances")[1].split("##")[0]
    assert "opendp-tree" in quantile_table and "| opendp |" not in quantile_table
    assert "| opendp |" in moments_table and "opendp-tree" not in moments_table
    assert "means and variances: 1 cells; within 10%: 0" in text
