"""The ``smoothdp`` command: errors are one line on stderr, exit 2; list, demo, reproduce, release."""

import csv
import re

import numpy as np
import pytest

import smoothdp
from smoothdp.cli import SIMULATION_BANNER, main
from smoothdp.experiments import EXPERIMENTS


def _one_line_error(capsys, argv, *fragments):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("smoothdp: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in err and out == ""


@pytest.fixture
def ages_csv(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("age,name\n" + "".join(f"{20 + i % 50},p{i}\n" for i in range(501)))
    return path


def test_unknown_experiment(capsys, tmp_path):
    _one_line_error(
        capsys, ["reproduce", "no-such-thing", "--out", str(tmp_path)], "no-such-thing", "polyplace-std"
    )


@pytest.mark.parametrize("epsilon", ["0", "-1", "nan", "inf", "abc"])
def test_bad_epsilon(capsys, ages_csv, epsilon):
    _one_line_error(
        capsys, ["release", "median", str(ages_csv), "--column", "age", "--epsilon", epsilon], "epsilon"
    )


def test_missing_file(capsys, tmp_path):
    _one_line_error(
        capsys,
        ["release", "median", str(tmp_path / "absent.csv"), "--column", "age", "--epsilon", "1"],
        "absent.csv",
    )


def test_missing_column(capsys, ages_csv):
    _one_line_error(
        capsys,
        ["release", "median", str(ages_csv), "--column", "height", "--epsilon", "1", "--bounds", "0", "9"],
        "'height'",
        "age",
    )


def test_a_text_column_is_an_error_naming_it(capsys, ages_csv):
    # No cell of "name" is a number: the column's type is text, refused as the API refuses strings (issue
    # 23). One unparseable cell in a number column stays a missing value (test below).
    _one_line_error(
        capsys,
        ["release", "median", str(ages_csv), "--column", "name", "--epsilon", "1", "--bounds", "0", "100"],
        "'name'",
        "no number",
    )


def test_bounds_are_required(capsys, ages_csv):
    _one_line_error(
        capsys, ["release", "median", str(ages_csv), "--column", "age", "--epsilon", "1"], "--bounds"
    )


def test_bad_bounds_and_unknown_statistic(capsys, ages_csv):
    _one_line_error(
        capsys,
        ["release", "median", str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "5", "1"],
        "LOW < HIGH",
    )
    _one_line_error(capsys, ["release", "mode", str(ages_csv), "--column", "age", "--epsilon", "1"], "mode")


def test_unknown_command_and_negative_seed(capsys, tmp_path):
    _one_line_error(capsys, ["frobnicate"], "frobnicate")
    _one_line_error(capsys, ["reproduce", "polyplace-std", "--seed", "-3", "--out", str(tmp_path)], "seed")


def test_list_prints_one_line_per_experiment(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(EXPERIMENTS)


def test_demo_prints_the_median_age_and_marks_the_not_private_numbers(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "true median (not private):" in out and " 37" in out  # the median age of UCI Adult
    assert "NOT private: do not publish" in out  # the noise std and smooth sensitivity shown to the holder


def test_release_median_prints_guarantee_scale_and_value(capsys, ages_csv):
    assert (
        main(
            [
                "release",
                "median",
                str(ages_csv),
                "--column",
                "age",
                "--epsilon",
                "1",
                "--bounds",
                "0",
                "100",
                "--method",
                "smooth_sensitivity",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "guarantee:" in out and "noise scale:" in out and "value:" in out
    assert out.splitlines()[0].startswith("NOT PRIVATE (simulation: seeded generator)")
    # One "label: number" per line; the data-dependent ones carry the warning.
    lines = {line.split(":")[0]: line for line in out.splitlines() if not line.startswith("NOT PRIVATE")}
    for label in ("noise scale", "noise std", "smooth sensitivity"):
        assert re.match(rf"{label}: +[-+0-9.e]+ ", lines[label]), lines[label]
        assert "NOT private: do not publish" in lines[label]
    assert re.match(r"value: +[-+0-9.e]+$", lines["value"])
    # The public fields: the guarantee with its neighbour relation, the mechanism and the proof.
    guarantee = r"guarantee: +1-DP .*SIMULATION.* +\(neighbours: one record substituted"
    assert re.match(guarantee, lines["guarantee"])
    assert "smooth sensitivity (polyplace)" in lines["mechanism"]
    assert re.match(r"proof: +docs/theory/[a-z-]+\.md#[a-z0-9-]+$", lines["proof"])
    # Only the not-private lines carry the warning.
    for label in ("statistic", "guarantee", "mechanism", "proof", "value"):
        assert "NOT private" not in lines[label]


def _release_lines(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = {line.split(":")[0]: line for line in out.splitlines() if not line.startswith("NOT PRIVATE")}
    if "--seed" in argv:  # a seeded release is a simulation: said first and last, prominently
        assert out.splitlines()[0] == out.splitlines()[-1] == SIMULATION_BANNER
    else:
        assert "NOT PRIVATE (simulation" not in out
    return lines


def test_release_mean_is_substitution_add_remove_by_name_and_quantile_takes_laplace_with_delta(
    capsys, ages_csv
):
    common = [str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100", "--seed", "1"]
    default = _release_lines(capsys, ["release", "mean", *common])  # the library's default: substitution
    assert default["guarantee"].startswith("guarantee:   1-DP — ") and "(n public)" in default["guarantee"]
    assert "add/remove" not in default["guarantee"] and "clipped mean" in default["mechanism"]
    mean = _release_lines(capsys, ["release", "mean", *common, "--neighbours", "add_remove"])
    assert "1-DP (add/remove)" in mean["guarantee"]
    assert "one record added or removed" in mean["guarantee"]
    # Nothing else is printed (n is private under add/remove: no record count).
    assert set(mean) == {"statistic", "guarantee", "mechanism", "proof", "value"}
    assert "centred noisy sum over a noisy count" in mean["mechanism"]  # the add/remove default
    quantile = _release_lines(
        capsys, ["release", "quantile", *common, "--q", "0.9", "--noise", "laplace", "--delta", "1e-6"]
    )
    assert "(1, 1e-06)-DP" in quantile["guarantee"]
    assert "smooth sensitivity (laplace)" in quantile["mechanism"]
    assert re.match(r"value: +[-+0-9.e]+$", quantile["value"])


def test_release_noise_and_delta_mismatch_is_one_line_error(capsys, ages_csv):
    common = [str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    _one_line_error(capsys, ["release", "median", *common, "--delta", "1e-6"], "delta", "polyplace")
    _one_line_error(capsys, ["release", "median", *common, "--noise", "laplace"], "delta")


def test_reproduce_quick_polyplace_std(capsys, tmp_path):
    if EXPERIMENTS["polyplace-std"].missing():
        pytest.skip(f"waiting for {EXPERIMENTS['polyplace-std'].missing()}")
    status = main(["reproduce", "polyplace-std", "--quick", "--seed", "1", "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "polyplace-std: done" in out
    with (tmp_path / "polyplace-std" / "std_per_sensitivity.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and "polyplace" in rows[0]
    assert "Mode: **quick**" in (tmp_path / "polyplace-std" / "report.md").read_text()
    assert "polyplace-std" in (tmp_path / "index.md").read_text()


# -- issue 11, finding 6: every row is a record, the same policy as the API ---------------------------------
def _value(lines):
    return float(lines["value"].split()[1])


def test_cli_keeps_every_row_blank_lines_too(capsys, tmp_path):
    """n is public under substitution: missing, unparseable and infinite cells stay records (the old CLI
    dropped them, changing n), and so does a blank line (issue 23: skipping it changed n too)."""
    from smoothdp.central import Median
    from smoothdp.rng import default_rng

    cells = ["3", "", "NA", "abc", "inf", "-inf", "7", "8", "nan", "4.5"]
    path = tmp_path / "messy.csv"
    path.write_text("x,y\n" + "".join(f"{c},1\n" + ("\n" if i == 3 else "") for i, c in enumerate(cells)))
    argv = ["release", "median", str(path), "--column", "x", "--epsilon", "1", "--bounds", "0", "10"]
    lines = _release_lines(capsys, [*argv, "--seed", "4"])
    # The API on the same 11 records (the blank line after "abc" one of them; NaN imputed with the
    # midpoint 5, ±inf clipped), same seed.
    records = np.array([3, np.nan, np.nan, np.nan, np.nan, np.inf, -np.inf, 7, 8, np.nan, 4.5])
    expected = smoothdp.median(records, epsilon=1.0, bounds=(0, 10), rng=default_rng(4))
    assert _value(lines) == expected.value  # full precision: the same float
    assert Median(bounds=(0, 10)).value(records) == 5.0  # 11 records; dropping the 8 odd ones gives 4.5
    out = "\n".join(lines.values())
    assert "imputed" not in out and "clipped" not in out  # nothing about the odd cells is printed


def test_reader_is_shared_with_the_loaders_and_keeps_short_rows(tmp_path):
    from smoothdp.cli.inputs import read_column as _read_column
    from smoothdp.data import load_csv

    path = tmp_path / "short.csv"
    path.write_text("a,b,c\n1,2,CA\n\n   \n3\n5,x,NY\n")  # every line after the header is a record
    np.testing.assert_array_equal(_read_column(str(path), "a"), [1.0, np.nan, np.nan, 3.0, 5.0])
    np.testing.assert_array_equal(_read_column(str(path), "b"), [2.0, np.nan, np.nan, np.nan, np.nan])
    columns = load_csv("short", path)
    np.testing.assert_array_equal(columns["a"], [1.0, np.nan, np.nan, 3.0, 5.0])
    np.testing.assert_array_equal(columns["b"], [2.0, np.nan, np.nan, np.nan, np.nan])  # one number: numbers
    assert columns["c"].tolist() == ["CA", "", "", "", "NY"]  # a loader keeps a text column as strings


def test_cli_numerics_and_unseeded_release_has_no_banner(capsys, ages_csv):
    argv = ["release", "median", str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    lines = _release_lines(capsys, [*argv, "--numerics", "float"])
    assert re.match(r"value: +[-+0-9.e]+$", lines["value"])
    _one_line_error(capsys, [*argv, "--numerics", "fast"], "numerics")


# -- issue 14: a CLI for pipelines (stdin, --json, quantiles, exit codes) ------------------------------------
def _stdin(monkeypatch, text):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def _json(capsys, argv):
    import json

    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1  # one JSON object, nothing else on stdout
    return json.loads(out), err


AGES = "age,name\n" + "".join(f"{20 + i % 50},p{i}\n" for i in range(501))
JSON_ARGV = ["release", "median", "-", "--column", "age", "--epsilon", "1", "--bounds", "0", "125", "--json"]


def test_json_from_stdin_has_the_public_fields_at_full_precision(capsys, monkeypatch):
    from smoothdp.rng import default_rng

    _stdin(monkeypatch, AGES)
    payload, err = _json(capsys, [*JSON_ARGV, "--seed", "11"])
    ages = np.array([20 + i % 50 for i in range(501)], dtype=float)
    expected = smoothdp.median(ages, epsilon=1.0, bounds=(0, 125), rng=default_rng(11))
    assert payload["value"] == expected.value  # the same float: full precision through JSON
    assert payload["simulation"] is True and payload["is_simulation"] is True
    assert payload["guarantee"]["epsilon"] == 1.0 and payload["guarantee"]["neighbours"] == "substitution"
    assert SIMULATION_BANNER in err  # the banner goes to stderr, stdout stays JSON
    assert not {"not_private", "noise_scale", "noise_std", "smooth_sensitivity"} & set(payload)


def test_json_never_carries_not_private_values(capsys, monkeypatch):
    _stdin(monkeypatch, AGES)
    argv = [*JSON_ARGV[:-1], "--noise", "polyplace", "--json"]
    payload, err = _json(capsys, argv)
    assert payload["simulation"] is False and err == ""
    assert "smooth sensitivity" not in repr(payload).lower() and "not private" not in repr(payload).lower()
    assert isinstance(payload["value"], float)


def test_stdin_uses_the_shared_reader_rules(capsys, monkeypatch):
    # a blank line and NA are records, imputed with the midpoint: four records 0, 50, 50, 125 (clipped)
    from smoothdp.rng import default_rng

    _stdin(monkeypatch, "age\n0\n\nNA\n900\n")
    payload, _ = _json(capsys, [*JSON_ARGV, "--seed", "2", "--numerics", "float"])
    expected = smoothdp.median(
        [0.0, np.nan, np.nan, 900.0], epsilon=1.0, bounds=(0, 125), rng=default_rng(2), numerics="float"
    )
    assert payload["value"] == expected.value
    _stdin(monkeypatch, "age\n1\n")
    _one_line_error(capsys, [*JSON_ARGV[:3], "--column", "height", *JSON_ARGV[5:]], "standard input", "age")


def test_stdin_through_a_real_pipe():
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "smoothdp.cli", *JSON_ARGV, "--numerics", "float"],
        input=AGES.encode(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert 0.0 <= payload["value"] <= 125.0 and payload["simulation"] is False


def test_release_quantiles_in_the_order_asked(capsys, ages_csv):
    from smoothdp.rng import default_rng

    argv = ["release", "quantiles", str(ages_csv), "--column", "age", "--q", "0.9", "0.1", "0.5"]
    argv += ["--epsilon", "1", "--bounds", "0", "100", "--seed", "5", "--json"]
    payload, _ = _json(capsys, argv)
    ages = np.array([20 + i % 50 for i in range(501)], dtype=float)
    expected = smoothdp.quantiles(ages, [0.9, 0.1, 0.5], epsilon=1.0, bounds=(0, 100), rng=default_rng(5))
    assert payload["value"] == list(expected.value)
    assert payload["value"][1] < payload["value"][2] < payload["value"][0]  # 0.1 < 0.5 < 0.9 levels, as asked
    lines = _release_lines(capsys, argv[:-1])
    assert lines["value"].split(None, 1)[1] == "[" + ", ".join(repr(v) for v in payload["value"]) + "]"


def test_quantile_options_are_checked(capsys, ages_csv):
    base = [
        "release",
        "quantiles",
        str(ages_csv),
        "--column",
        "age",
        "--epsilon",
        "1",
        "--bounds",
        "0",
        "100",
    ]
    _one_line_error(capsys, base, "--q")
    _one_line_error(capsys, [*base, "--q", "0.5", "--noise", "laplace"], "--noise")
    single = ["release", "quantile", *base[2:]]
    _one_line_error(capsys, [*single, "--q", "0.1", "0.9"], "'quantiles'")
    median = ["release", "median", *base[2:]]
    _one_line_error(capsys, [*median, "--method", "joint_exp"], "'quantiles' only")
    _one_line_error(capsys, [*median, "--q", "0.5"], "--q")


def test_exit_codes_are_documented_and_an_unexpected_error_is_one_line_exit_1(capsys, monkeypatch, ages_csv):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "exit status:" in out and "0  success" in out and "2  usage" in out and "1  unexpected" in out

    def broken(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(smoothdp, "median", broken)
    argv = ["release", "median", str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err.strip() == "smoothdp: unexpected error: RuntimeError: boom" and out == ""


# --budget LEDGER and `smoothdp budget ...`: tests/ledger/test_ledger_cli.py (and the attacks beside it).
