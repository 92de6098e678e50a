"""``smoothdp release geo-threshold|geo-range``: the library's geo-privacy mechanism on a CSV column, each
row a user; the estimate and reports are the library's (same seed, same floats), the budget a geo one."""

from __future__ import annotations

import json

import numpy as np
import pytest

import smoothdp
from smoothdp.cli import SIMULATION_BANNER, main
from smoothdp.geo import BoundedRange, SmoothSensitivityMechanism, SoftThreshold
from smoothdp.rng import default_rng

INCOMES = np.round(np.random.default_rng(5).lognormal(9.5, 1.0, 400), 2)
# Every line after the header is a user: a blank cell, NA and inf are users too (imputed / clipped).
CELLS = [f"{v:.2f}" for v in INCOMES] + ["", "NA", "inf", "-inf"]
USERS = np.concatenate([INCOMES, [np.nan, np.nan, np.inf, -np.inf]])
THRESHOLD = ["--threshold", "10000", "--width", "1600", "--epsilon", "0.00125"]


@pytest.fixture
def incomes_csv(tmp_path):
    path = tmp_path / "incomes.csv"
    path.write_text("income,city\n" + "".join(f"{cell},x\n" for cell in CELLS))
    return path


def _one_line_error(capsys, argv, *fragments, status=2):
    assert main(argv) == status
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("smoothdp: error: " if status == 2 else "smoothdp: budget refused: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert out == ""


def _json(capsys, argv):
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1
    return json.loads(out), err


def _threshold(csv, *extra):
    return ["release", "geo-threshold", str(csv), "--column", "income", *THRESHOLD, *extra]


def test_geo_threshold_is_the_library_release(capsys, incomes_csv, tmp_path):
    reports_path = tmp_path / "reports.csv"
    payload, err = _json(
        capsys, _threshold(incomes_csv, "--seed", "7", "--json", "--reports", str(reports_path))
    )
    mechanism = SmoothSensitivityMechanism(SoftThreshold(10000.0, 1600.0), epsilon=0.00125)
    release = mechanism.release(USERS, rng=default_rng(7))
    estimate = mechanism.estimate(release)
    assert payload["value"] == payload["estimate"]["mean"] == float(estimate.mean)
    assert payload["estimate"]["total"] == float(estimate.total)
    assert payload["estimate"]["users"] == len(CELLS) == 404  # every line a user
    assert payload["guarantee"] == {
        "type": "GeoPrivacy",
        "epsilon": 0.00125,
        "delta": 0.0,
        "neighbours": "metric",
        "metric": "euclidean",
    }
    assert payload["proof"] == mechanism.proof and payload["details"]["noise"] == "polyplace"
    assert payload["simulation"] is True and SIMULATION_BANNER in err
    assert payload["reports"] == str(reports_path)
    lines = reports_path.read_text().splitlines()
    assert lines[0] == "report" and len(lines) == 1 + len(CELLS)
    np.testing.assert_array_equal([float(v) for v in lines[1:]], release.value)  # the same floats, in order
    # Never the data holder's numbers: the estimate's std (computed from the data) is not in the JSON.
    std = float(np.sqrt(mechanism.variance(USERS, per_user=False).of_mean))
    text = json.dumps(payload)
    assert repr(std) not in text and f"{std:.6g}" not in text and f"{std:.4g}" not in text
    assert not {"std", "variance", "not_private", "estimate_std"} & (set(payload) | set(payload["estimate"]))


def test_a_grid_of_thresholds_composes_and_writes_one_column_per_query(capsys, incomes_csv, tmp_path):
    out = tmp_path / "grid.csv"
    argv = [
        "release",
        "geo-threshold",
        str(incomes_csv),
        "--column",
        "income",
        "--threshold",
        "20000",
        "5000",
    ]
    argv += ["--width", "1600", "--epsilon", "0.001", "--noise", "student_t", "--seed", "3"]
    payload, _ = _json(capsys, [*argv, "--json", "--reports", str(out)])
    query = SoftThreshold(np.array([20000.0, 5000.0]), 1600.0)
    mechanism = SmoothSensitivityMechanism(query, epsilon=0.001, noise="student_t")
    release = mechanism.release(USERS, rng=default_rng(3))
    assert payload["value"] == mechanism.estimate(release).mean.tolist()  # in the order asked
    assert payload["value"][0] < payload["value"][1]  # fewer users above 20,000 than above 5,000
    assert payload["guarantee"]["epsilon"] == pytest.approx(0.002) and payload["details"]["queries"] == 2
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert out.read_text().splitlines()[0] == "report_1,report_2"
    np.testing.assert_array_equal(table, release.value.T)


def test_geo_text_output_marks_only_the_std_as_not_private(capsys, incomes_csv):
    assert main(_threshold(incomes_csv, "--seed", "2", "--noise", "cauchy")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[-1] == SIMULATION_BANNER
    lines = {line.split(":")[0]: line for line in out[1:-1]}
    assert set(lines) == {
        "statistic",
        "guarantee",
        "mechanism",
        "proof",
        "users",
        "estimate std",
        "estimate",
        "total",
    }
    assert "NOT private" in lines["estimate std"]
    for label in ("statistic", "guarantee", "mechanism", "users", "estimate", "total"):
        assert "NOT private" not in lines[label], label
    assert "geo-privacy per unit euclidean distance" in lines["guarantee"]
    assert "(per user; neighbours: any two inputs of one user" in lines["guarantee"]
    assert "cauchy noise" in lines["mechanism"] and lines["users"].split()[1] == "404"
    mechanism = SmoothSensitivityMechanism(SoftThreshold(10000.0, 1600.0), epsilon=0.00125, noise="cauchy")
    estimate = mechanism.estimate(mechanism.release(USERS, rng=default_rng(2)))
    assert lines["estimate"].split()[1] == repr(float(estimate.mean))  # full precision
    std = np.sqrt(mechanism.variance(USERS, per_user=False).of_mean)
    assert lines["estimate std"].split()[2] == f"{std:.6g}"


def test_geo_range_is_the_library_bounded_range(capsys, incomes_csv):
    argv = ["release", "geo-range", str(incomes_csv), "--column", "income", "--bounds", "5000", "30000"]
    payload, _ = _json(capsys, [*argv, "--width", "2000", "--epsilon", "0.0005", "--seed", "4", "--json"])
    mechanism = SmoothSensitivityMechanism(
        BoundedRange(bounds=(5000.0, 30000.0), width=2000.0), epsilon=0.0005
    )
    assert payload["value"] == float(mechanism.estimate(mechanism.release(USERS, rng=default_rng(4))).mean)
    assert payload["statistic"] == "soft range query" or "range" in payload["statistic"]


def test_geo_parameter_errors_are_one_line_naming_the_option(capsys, incomes_csv, tmp_path):
    base = ["release", "geo-threshold", str(incomes_csv), "--column", "income", "--threshold", "10000"]
    _one_line_error(capsys, [*base, "--width", "0", "--epsilon", "0.001"], "width")
    _one_line_error(capsys, [*base, "--width", "10", "--epsilon", "0"], "--epsilon")
    _one_line_error(capsys, [*base, "--width", "10", "--epsilon", "0.01", "--noise", "laplace"], "delta")
    _one_line_error(capsys, [*base, "--width", "10", "--epsilon", "0.01", "--beta", "0.5"], "beta")
    missing = str(tmp_path / "no" / "such" / "dir" / "r.csv")
    _one_line_error(capsys, [*base, "--width", "10", "--epsilon", "0.01", "--reports", missing], "--reports")
    _one_line_error(capsys, [*base, "--width", "10", "--epsilon", "0.01", "--bounds", "0", "9"], "--bounds")
    _one_line_error(
        capsys, [*base[:4], "city", *base[5:], "--width", "1", "--epsilon", "1"], "'city'", "no number"
    )
    ranged = ["release", "geo-range", str(incomes_csv), "--column", "income", "--epsilon", "0.01"]
    _one_line_error(capsys, [*ranged, "--bounds", "100", "150", "--width", "80"], "width")
    _one_line_error(capsys, [*ranged, "--bounds", "100", "150"], "--width")


# -- --budget: a geo-privacy ledger (neighbours="metric") ----------------------------------------------------
def test_a_geo_release_is_charged_to_a_metric_ledger(capsys, incomes_csv, tmp_path, monkeypatch):
    ledger = tmp_path / "geo.db"
    assert main(["budget", "init", str(ledger), "--epsilon", "0.003", "--neighbours", "metric"]) == 0
    capsys.readouterr()
    payload, _ = _json(capsys, [*_threshold(incomes_csv, "--json"), "--budget", str(ledger)])
    assert payload["budget"]["charged"] == [{"epsilon": 0.00125, "delta": 0.0}]
    assert payload["budget"]["remaining"]["epsilon"] == pytest.approx(0.00175)
    grid = _threshold(incomes_csv)
    grid[grid.index("10000")] = "9000"
    grid[grid.index("--threshold") + 1 : grid.index("--threshold") + 1] = ["10000"]  # two thresholds: 2ε
    with smoothdp.Accountant.open(ledger) as acc:
        [charge] = acc.charges
        assert charge.guarantee == smoothdp.GeoPrivacy(0.00125)
        assert charge.label.startswith("geo-threshold of income in ")

    def no_data(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr("smoothdp.cli.inputs.read_column", no_data)
    _one_line_error(capsys, [*grid, "--budget", str(ledger)], "exceed", status=3)  # 2 × 0.00125 > 0.00175
    median = [
        "release",
        "median",
        str(incomes_csv),
        "--column",
        "income",
        "--epsilon",
        "1",
        "--bounds",
        "0",
        "1e6",
    ]
    _one_line_error(capsys, [*median, "--budget", str(ledger)], "'metric'", "cannot count")
    central = tmp_path / "central.db"
    assert main(["budget", "init", str(central), "--epsilon", "5"]) == 0
    capsys.readouterr()
    _one_line_error(capsys, [*_threshold(incomes_csv), "--budget", str(central)], "--neighbours metric")
    with smoothdp.Accountant.open(ledger) as acc:
        assert len(acc) == 1  # nothing else charged
