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
        ["release", "median", str(ages_csv), "--column", "height", "--epsilon", "1"],
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


def test_bare_command_prints_demo_then_usage(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "true median (not private):" in out and " 37" in out  # the median age of UCI Adult
    assert out.index("median") < out.index("usage: smoothdp")
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


def test_release_mean_is_add_remove_and_quantile_takes_laplace_with_delta(capsys, ages_csv):
    common = [str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100", "--seed", "1"]
    mean = _release_lines(capsys, ["release", "mean", *common])
    assert "1-DP (add/remove)" in mean["guarantee"]
    assert "one record added or removed" in mean["guarantee"]
    # Nothing else is printed (n is private under add/remove: no record count).
    assert set(mean) == {
        "statistic",
        "guarantee",
        "mechanism",
        "proof",
        "noise scale",
        "noise std",
        "smooth sensitivity",
        "value",
    }
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
    from smoothdp.cli import _read_column
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


# -- --budget: one privacy budget across invocations --------------------------------------------------------


def _budget_file(capsys, tmp_path, *extra, name="budget.json"):
    path = tmp_path / name
    assert main(["budget", "init", str(path), *extra]) == 0
    assert capsys.readouterr().out.startswith(f"created {path}: total ε = ")
    return path


def _median_argv(csv_path, budget, epsilon, *extra):
    return [
        "release",
        "median",
        str(csv_path),
        "--column",
        "age",
        "--epsilon",
        str(epsilon),
        "--bounds",
        "0",
        "100",
        "--budget",
        str(budget),
        *extra,
    ]


def _ledger(path):
    import json

    return json.loads(path.read_text())


def test_budget_init_writes_the_total_and_never_overwrites(capsys, tmp_path):
    path = _budget_file(capsys, tmp_path, "--epsilon", "3", "--delta", "1e-6")
    ledger = _ledger(path)
    assert ledger["total"] == {"epsilon": 3.0, "delta": 1e-6} and ledger["neighbours"] == "substitution"
    assert ledger["charges"] == []
    before = path.read_bytes()
    _one_line_error(capsys, ["budget", "init", str(path), "--epsilon", "5"], "already exists")
    assert path.read_bytes() == before
    _one_line_error(capsys, ["budget", "init", str(tmp_path / "b2.json"), "--epsilon", "0"], "epsilon")
    _one_line_error(
        capsys, ["budget", "init", str(tmp_path / "b3.json"), "--epsilon", "1", "--slack", "0.1"], "slack"
    )
    _one_line_error(capsys, ["budget", "init", str(tmp_path / "no" / "b.json"), "--epsilon", "1"], "folder")
    _one_line_error(capsys, ["budget"], "init,show")
    assert not (tmp_path / "b2.json").exists() and not (tmp_path / "b3.json").exists()


def test_a_release_needs_an_existing_budget_file(capsys, tmp_path, ages_csv):
    absent = tmp_path / "absent.json"
    _one_line_error(capsys, _median_argv(ages_csv, absent, 1), "does not exist", "budget init")
    assert not absent.exists()


def test_charges_accumulate_across_invocations_with_label_epsilon_delta_and_time(capsys, tmp_path, ages_csv):
    path = _budget_file(capsys, tmp_path, "--epsilon", "2.5")
    payload, _ = _json(capsys, _median_argv(ages_csv, path, 1, "--json"))
    assert payload["budget"] == {
        "file": str(path),
        "charged": [{"epsilon": 1.0, "delta": 0.0}],
        "remaining": {"epsilon": 1.5, "delta": 0.0},
    }
    # a mean is add/remove: 0.5 on a substitution budget counts 1.0 (group privacy)
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "0.5", "--bounds", "0", "100"]
    assert main([*mean, "--budget", str(path), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "budget:      charged ε = 1, δ = 0" in out and "remaining ε = 0.5, δ = 0" in out
    ledger = _ledger(path)
    assert [(c["epsilon"], c["delta"]) for c in ledger["charges"]] == [(1.0, 0.0), (1.0, 0.0)]
    assert ledger["charges"][0]["label"].startswith(f"median of age in {ages_csv}")
    assert ledger["charges"][1]["label"].startswith(f"mean of age in {ages_csv} [simulation: seeded]")
    assert ledger["charges"][1]["guarantee"] == {
        "type": "PureDP",
        "epsilon": 0.5,
        "delta": 0.0,
        "neighbours": "add_remove",
    }
    for charge in ledger["charges"]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", charge["time"])
    assert ledger["spent"] == {"epsilon": 2.0, "delta": 0.0}

    assert main(["budget", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "spent:       ε = 2, δ = 0 in 2 charge(s)" in out and "remaining:   ε = 0.5, δ = 0" in out
    assert "declared 0.5-DP (add/remove), counted by group privacy" in out
    shown, _ = _json(capsys, ["budget", "show", str(path), "--json"])
    assert shown["remaining"] == {"epsilon": 0.5, "delta": 0.0} and len(shown["charges"]) == 2


def test_a_release_past_the_budget_exits_3_before_reading_the_data(capsys, monkeypatch, tmp_path, ages_csv):
    path = _budget_file(capsys, tmp_path, "--epsilon", "1")
    assert main(_median_argv(ages_csv, path, 0.75, "--seed", "1")) == 0
    capsys.readouterr()
    before = path.read_bytes()

    def no_release(*args, **kwargs):
        raise AssertionError("the mechanism ran")

    monkeypatch.setattr(smoothdp, "median", no_release)
    for data in (ages_csv, tmp_path / "absent.csv"):  # a missing data file is never even looked at
        assert main(_median_argv(data, path, 0.5)) == 3
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("smoothdp: budget refused:") and len(err.strip().splitlines()) == 1
        assert "exceed the budget" in err and "remaining (ε = 0.25" in err
        assert path.read_bytes() == before
    with pytest.raises(SystemExit):
        main(["release", "--help"])
    assert "3  --budget cannot pay" in capsys.readouterr().out


def test_the_last_epsilon_is_spent_exactly_once(capsys, tmp_path, ages_csv):
    path = _budget_file(capsys, tmp_path, "--epsilon", "1")
    for _ in range(4):
        assert main(_median_argv(ages_csv, path, 0.25, "--seed", "1")) == 0
    assert main(_median_argv(ages_csv, path, 1e-9, "--seed", "1")) == 3
    assert len(_ledger(path)["charges"]) == 4


def test_two_processes_racing_for_the_last_epsilon_one_wins(capsys, tmp_path, ages_csv):
    import fcntl
    import subprocess
    import sys
    import time

    path = _budget_file(capsys, tmp_path, "--epsilon", "1")
    argv = _median_argv(ages_csv, path, 0.6, "--numerics", "float")
    lock = open(str(path) + ".lock", "a")  # hold the lock so that both start and wait at the same point
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        racers = [
            subprocess.Popen(
                [sys.executable, "-m", "smoothdp.cli", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(2)
        ]
        time.sleep(1.5)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    results = [racer.communicate(timeout=120) for racer in racers]
    codes = sorted(racer.returncode for racer in racers)
    assert codes == [0, 3], results
    ledger = _ledger(path)
    assert len(ledger["charges"]) == 1 and ledger["spent"]["epsilon"] == 0.6
    winner = results[[r.returncode for r in racers].index(0)]
    loser = results[[r.returncode for r in racers].index(3)]
    assert b"value:" in winner[0] and loser[0] == b""


def test_a_corrupt_or_mismatched_budget_file_is_a_clear_error(capsys, tmp_path, ages_csv):
    import json

    good = _ledger(_budget_file(capsys, tmp_path, "--epsilon", "1", name="good.json"))
    tampered = json.loads(json.dumps(good))
    tampered["charges"] = [
        {"label": "x", "epsilon": 0.1, "delta": 0.0, "time": "", "guarantee": PUREDP_HALF},
    ]
    over = json.loads(json.dumps(good))
    over["charges"] = [
        {"label": "x", "epsilon": 0.5, "delta": 0.0, "time": "", "guarantee": PUREDP_HALF} for _ in range(3)
    ]
    cases = {
        "not json": ("{oops", "not JSON"),
        "a list": ("[1, 2]", "JSON object"),
        "no total": (json.dumps({"neighbours": "substitution"}), "field"),
        "other format": (json.dumps({**good, "format": "something else"}), "format"),
        "newer version": (json.dumps({**good, "version": 99}), "version"),
        "bad relation": (json.dumps({**good, "neighbours": "hamming"}), "neighbours"),
        "tampered charge": (json.dumps(tampered), "edited or is corrupt"),
        "over budget": (json.dumps(over), "exceeds its own budget"),
        "geo budget": (json.dumps({**good, "neighbours": "metric", "metric": "euclidean"}), "metric"),
    }
    for name, (text, fragment) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.json"
        path.write_text(text)
        _one_line_error(capsys, _median_argv(ages_csv, path, 0.1), str(path), fragment)
        assert path.read_text() == text, name
    # an add/remove budget cannot count a substitution release (the median); it counts the mean
    path = _budget_file(capsys, tmp_path, "--epsilon", "1", "--neighbours", "add_remove", name="ar.json")
    before = path.read_bytes()
    _one_line_error(capsys, _median_argv(ages_csv, path, 0.1), "add_remove", "cannot count")
    assert path.read_bytes() == before
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "0.4", "--bounds", "0", "100"]
    assert main([*mean, "--budget", str(path), "--seed", "2"]) == 0
    assert [(c["epsilon"], c["delta"]) for c in _ledger(path)["charges"]] == [(0.4, 0.0)]


PUREDP_HALF = {"type": "PureDP", "epsilon": 0.5, "delta": 0.0, "neighbours": "substitution"}


def test_a_charge_is_kept_when_the_release_fails_after_it_and_not_made_by_a_parameter_error(
    capsys, monkeypatch, tmp_path, ages_csv
):
    path = _budget_file(capsys, tmp_path, "--epsilon", "1")
    bad_q = ["release", "quantile", str(ages_csv), "--column", "age", "--q", "1.5", "--epsilon", "0.5"]
    _one_line_error(capsys, [*bad_q, "--bounds", "0", "100", "--budget", str(path)], "1.5")
    assert _ledger(path)["charges"] == []  # refused by the library before it charged

    def charged_then_broken(x, *, accountant, epsilon, **kwargs):
        accountant.charge(smoothdp.PureDP(epsilon), label="median (test)")
        raise RuntimeError("after the noise")

    monkeypatch.setattr(smoothdp, "median", charged_then_broken)
    assert main(_median_argv(ages_csv, path, 0.5)) == 1
    assert capsys.readouterr().out == ""
    [charge] = _ledger(path)["charges"]
    assert charge["epsilon"] == 0.5 and charge["label"].endswith(": median (test)")


@pytest.mark.parametrize(
    "extra",
    [
        ["median"],
        ["median", "--noise", "laplace", "--delta", "1e-6"],
        ["quantile", "--q", "0.3", "--epsilon", "2"],
        ["quantiles", "--q", "0.1", "0.9"],
        ["trimmed-mean", "--trim", "0.1"],
        ["mean"],
        ["mean", "--noise", "laplace", "--delta", "1e-6"],
    ],
)
def test_the_budget_precheck_charges_what_the_library_declares(tmp_path, ages_csv, extra):
    from smoothdp.cli import _build_parser, _expected_guarantee

    argv = ["release", extra[0], str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    args = _build_parser().parse_args([*argv, *extra[1:], "--seed", "1", "--numerics", "float"])
    acc = smoothdp.Accountant(epsilon=10.0, delta=1e-3)
    from smoothdp.cli import _release_statistic

    release = _release_statistic(args, np.arange(50.0), (0.0, 100.0), acc)
    assert _expected_guarantee(args) == release.guarantee == acc.charges[0].guarantee
