"""``smoothdp release --budget LEDGER`` and ``smoothdp budget init|show|verify|export|migrate``, in process.

(The concurrent and killed processes are in test_ledger_attacks.py.)
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from ledger_tampering import RawLedger

import smoothdp
from smoothdp.cli import main


def _one_line_error(capsys, argv, *fragments, status=2):
    assert main(argv) == status
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("smoothdp: error: " if status == 2 else "smoothdp: budget refused: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in err and out == ""


def _json(capsys, argv):
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1  # one JSON object, nothing else on stdout
    return json.loads(out), err


def _init(capsys, tmp_path, *extra, name="budget.db"):
    path = tmp_path / name
    assert main(["budget", "init", str(path), *extra]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"created {path}: total ε = ") and re.search(
        r"chain head 0:[0-9a-f]{64}$", out.strip()
    )
    return path


def _median(csv_path, budget, epsilon, *extra):
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
    with smoothdp.Accountant.open(path) as acc:
        return acc.to_dict()


def test_budget_init_creates_a_ledger_and_never_overwrites(capsys, tmp_path):
    path = _init(capsys, tmp_path, "--epsilon", "3", "--delta", "1e-6")
    ledger = _ledger(path)
    assert ledger["total"] == {"epsilon": 3.0, "delta": 1e-6} and ledger["neighbours"] == "substitution"
    assert ledger["charges"] == [] and path.read_bytes().startswith(b"SQLite format 3\x00")
    before = path.read_bytes()
    _one_line_error(capsys, ["budget", "init", str(path), "--epsilon", "5"], "already exists")
    assert path.read_bytes() == before
    _one_line_error(capsys, ["budget", "init", str(tmp_path / "b2.db"), "--epsilon", "0"], "epsilon")
    _one_line_error(
        capsys, ["budget", "init", str(tmp_path / "b3.db"), "--epsilon", "1", "--slack", "0.1"], "slack"
    )
    _one_line_error(capsys, ["budget", "init", str(tmp_path / "no" / "b.db"), "--epsilon", "1"], "folder")
    _one_line_error(capsys, ["budget"], "init,show,verify,export,migrate")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.db"]


def test_a_release_needs_an_existing_ledger(capsys, tmp_path, ages_csv):
    absent = tmp_path / "absent.db"
    _one_line_error(capsys, _median(ages_csv, absent, 1), "no ledger", "budget init")
    assert not absent.exists()


def test_charges_accumulate_with_label_epsilon_delta_time_and_chain_head(capsys, tmp_path, ages_csv):
    path = _init(capsys, tmp_path, "--epsilon", "2.5")
    payload, _ = _json(capsys, _median(ages_csv, path, 1, "--json"))
    first = payload["budget"]
    assert first["file"] == str(path) and first["charged"] == [{"epsilon": 1.0, "delta": 0.0}]
    assert first["remaining"] == {"epsilon": 1.5, "delta": 0.0} and re.fullmatch(
        r"1:[0-9a-f]{64}", first["head"]
    )
    # an add/remove mean: 0.5 on a substitution budget counts 1.0 (group privacy)
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "0.5", "--bounds", "0", "100"]
    assert main([*mean, "--neighbours", "add_remove", "--budget", str(path), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "budget:      charged ε = 1, δ = 0" in out and "remaining ε = 0.5, δ = 0" in out
    [head] = re.findall(r"chain head:  (2:[0-9a-f]{64})", out)
    ledger = _ledger(path)
    assert [(c["epsilon"], c["delta"]) for c in ledger["charges"]] == [(1.0, 0.0), (1.0, 0.0)]
    assert ledger["charges"][0]["label"].startswith(f"median of age in {ages_csv}: ")
    assert ledger["charges"][1]["label"].startswith(f"mean of age in {ages_csv} [simulation: seeded]: ")
    assert ledger["charges"][1]["guarantee"] == {
        "type": "PureDP",
        "epsilon": 0.5,
        "delta": 0.0,
        "neighbours": "add_remove",
    }
    for charge in ledger["charges"]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", charge["time"])
    assert ledger["spent"] == {"epsilon": 2.0, "delta": 0.0}
    assert f"{ledger['ledger']['head']['charges']}:{ledger['ledger']['head']['digest']}" == head

    assert main(["budget", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "spent:       ε = 2, δ = 0 in 2 charge(s)" in out and "remaining:   ε = 0.5, δ = 0" in out
    assert "declared 0.5-DP (add/remove), counted by group privacy" in out and f"chain head:  {head}" in out
    shown, _ = _json(capsys, ["budget", "show", str(path), "--json"])
    assert shown["remaining"] == {"epsilon": 0.5, "delta": 0.0} and len(shown["charges"]) == 2
    assert main(["budget", "verify", str(path), "--anchor", first["head"], "--anchor", head]) == 0
    assert "2 charge(s)" in capsys.readouterr().out


def test_the_default_mean_is_charged_the_epsilon_passed(capsys, tmp_path, ages_csv):
    """Under substitution (the default) a mean at ε = 1 fits an ε = 1 budget exactly: charged 1, not 2."""
    path = _init(capsys, tmp_path, "--epsilon", "1")
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    payload, _ = _json(capsys, [*mean, "--budget", str(path), "--seed", "4", "--json"])
    assert payload["guarantee"]["neighbours"] == "substitution" and payload["guarantee"]["epsilon"] == 1.0
    assert payload["budget"]["charged"] == [{"epsilon": 1.0, "delta": 0.0}]
    assert payload["budget"]["remaining"] == {"epsilon": 0.0, "delta": 0.0}
    assert 0.0 <= payload["value"] <= 100.0
    [charge] = _ledger(path)["charges"]
    assert (charge["epsilon"], charge["guarantee"]["neighbours"]) == (1.0, "substitution")
    # the add/remove mean at the same ε would count 2: refused before the data is read (exit 3)
    assert main([*mean, "--neighbours", "add_remove", "--budget", str(path)]) == 3


def test_a_release_past_the_budget_exits_3_before_reading_the_data(capsys, monkeypatch, tmp_path, ages_csv):
    path = _init(capsys, tmp_path, "--epsilon", "1")
    assert main(_median(ages_csv, path, 0.75, "--seed", "1")) == 0
    capsys.readouterr()
    before = _ledger(path)

    def no_release(*args, **kwargs):
        raise AssertionError("the mechanism ran")

    monkeypatch.setattr(smoothdp, "median", no_release)
    for data in (ages_csv, tmp_path / "absent.csv"):  # a missing data file is never even looked at
        _one_line_error(
            capsys, _median(data, path, 0.5), "exceed the budget", "remaining (ε = 0.25", status=3
        )
        assert _ledger(path) == before
    with pytest.raises(SystemExit):
        main(["release", "--help"])
    assert "3  --budget cannot pay" in capsys.readouterr().out


def test_the_last_epsilon_is_spent_exactly_once(capsys, tmp_path, ages_csv):
    path = _init(capsys, tmp_path, "--epsilon", "1")
    for _ in range(4):
        assert main(_median(ages_csv, path, 0.25, "--seed", "1")) == 0
    assert main(_median(ages_csv, path, 1e-9, "--seed", "1")) == 3
    assert len(_ledger(path)["charges"]) == 4


def test_a_charge_taken_between_the_check_and_the_charge_is_refused_with_exit_3(
    capsys, monkeypatch, tmp_path, ages_csv
):
    """The pre-check reads what is spent, without a lock; the charge re-reads it under the lock."""
    path = _init(capsys, tmp_path, "--epsilon", "1")
    real_median = smoothdp.median

    def another_process_spends_first(*args, **kwargs):
        with smoothdp.Accountant.open(path) as other:
            other.charge(smoothdp.PureDP(0.7), label="another analyst")
        return real_median(*args, **kwargs)

    monkeypatch.setattr(smoothdp, "median", another_process_spends_first)
    _one_line_error(capsys, _median(ages_csv, path, 0.5), "exceed the budget", status=3)
    assert [c["label"] for c in _ledger(path)["charges"]] == ["another analyst"]


def test_a_tampered_or_mismatched_ledger_is_a_clear_error_and_nothing_is_read(capsys, tmp_path, monkeypatch):
    good = _init(capsys, tmp_path, "--epsilon", "1", name="good.db")
    assert main(["budget", "show", str(good)]) == 0
    capsys.readouterr()
    tampered = _init(capsys, tmp_path, "--epsilon", "1", name="tampered.db")
    with smoothdp.Accountant.open(tampered) as acc:
        acc.charge(smoothdp.PureDP(0.9), label="x")
    raw = RawLedger(str(tampered))
    raw.set_charge(1, guarantee='{"delta":0.0,"epsilon":0.1,"neighbours":"substitution","type":"PureDP"}')
    raw.close()
    old = tmp_path / "old.json"
    old.write_text(json.dumps(smoothdp.Accountant(epsilon=1.0).to_dict()))
    (tmp_path / "text.db").write_text("{oops")
    (tmp_path / "other.db").write_bytes(b"not a database at all, just bytes of some other kind" * 4)
    smoothdp.Accountant.create(tmp_path / "geo.db", epsilon=1.0, neighbours="metric").close()
    cases = {
        tampered: "charge #1 does not match",
        old: "smoothdp budget migrate",
        tmp_path / "text.db": "smoothdp budget migrate",  # starts like JSON: the hint is still right
        tmp_path / "other.db": "not a SQLite database",
        tmp_path / "geo.db": "metric",
    }

    def no_data(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr("smoothdp.cli.inputs.load_column", no_data)
    for path, fragment in cases.items():
        before = path.read_bytes()
        _one_line_error(capsys, _median("data.csv", path, 0.1), str(path), fragment)
        assert path.read_bytes() == before, path
    _one_line_error(capsys, ["budget", "verify", str(tampered)], "charge #1 does not match")
    _one_line_error(capsys, ["budget", "show", str(tampered)], "charge #1 does not match")


def test_an_add_remove_ledger_cannot_count_a_substitution_release(capsys, tmp_path, ages_csv):
    path = _init(capsys, tmp_path, "--epsilon", "1", "--neighbours", "add_remove", name="ar.db")
    _one_line_error(capsys, _median(ages_csv, path, 0.1), "add_remove", "cannot count")
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "0.4", "--bounds", "0", "100"]
    _one_line_error(capsys, [*mean, "--budget", str(path)], "add_remove", "cannot count")  # substitution
    assert main([*mean, "--neighbours", "add_remove", "--budget", str(path), "--seed", "2"]) == 0
    assert [(c["epsilon"], c["delta"]) for c in _ledger(path)["charges"]] == [(0.4, 0.0)]


def test_a_charge_is_kept_when_the_release_fails_after_it_and_not_made_by_a_parameter_error(
    capsys, monkeypatch, tmp_path, ages_csv
):
    path = _init(capsys, tmp_path, "--epsilon", "1")
    bad_q = ["release", "quantile", str(ages_csv), "--column", "age", "--q", "1.5", "--epsilon", "0.5"]
    _one_line_error(capsys, [*bad_q, "--bounds", "0", "100", "--budget", str(path)], "1.5")
    assert _ledger(path)["charges"] == []  # refused by the library before it charged

    def charged_then_broken(x, *, accountant, epsilon, **kwargs):
        accountant.charge(smoothdp.PureDP(epsilon), label="median (test)")
        raise RuntimeError("after the noise")

    monkeypatch.setattr(smoothdp, "median", charged_then_broken)
    assert main(_median(ages_csv, path, 0.5)) == 1
    assert capsys.readouterr().out == ""
    [charge] = _ledger(path)["charges"]
    assert charge["epsilon"] == 0.5 and charge["label"].endswith(": median (test)")


def test_a_value_is_printed_only_when_the_ledger_at_the_path_holds_its_charge(
    capsys, monkeypatch, tmp_path, ages_csv
):
    """The path is checked after the commit and before printing: here the file is moved between them."""
    path = _init(capsys, tmp_path, "--epsilon", "1")
    real_median = smoothdp.median

    def moved_after_the_charge(*args, **kwargs):
        release = real_median(*args, **kwargs)
        path.rename(tmp_path / "moved.db")
        return release

    monkeypatch.setattr(smoothdp, "median", moved_after_the_charge)
    _one_line_error(capsys, _median(ages_csv, path, 0.5), "removed")
    assert len(_ledger(tmp_path / "moved.db")["charges"]) == 1  # charged where it went, nothing printed


def test_export_migrate_and_a_keyed_ledger(capsys, tmp_path, ages_csv):
    key = tmp_path / "key"
    key.write_bytes(b"a secret of more than sixteen bytes\n")
    path = _init(capsys, tmp_path, "--epsilon", "2", "--key-file", str(key))
    _one_line_error(capsys, _median(ages_csv, path, 0.5), "keyed")
    assert main([*_median(ages_csv, path, 0.5), "--budget-key-file", str(key)]) == 0
    capsys.readouterr()
    _one_line_error(capsys, ["budget", "export", str(path)], "keyed")
    assert main(["budget", "export", str(path), "--key-file", str(key)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["ledger"]["definition"]["chain"] == "hmac-sha256" and len(exported["charges"]) == 1
    (tmp_path / "export.json").write_text(json.dumps(exported))
    copy = tmp_path / "copy.db"
    _one_line_error(capsys, ["budget", "migrate", str(tmp_path / "export.json"), str(copy)], "keyed")
    assert main(["budget", "migrate", str(tmp_path / "export.json"), str(copy), "--key-file", str(key)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"migrated 1 charge(s) from {tmp_path / 'export.json'} into {copy}")
    assert f"chain head 1:{exported['charges'][0]['digest']}" in out  # the same chain as the original

    old = smoothdp.Accountant(epsilon=1.0)
    old.charge(smoothdp.PureDP(0.25), label="median of age in old.csv")
    (tmp_path / "old.json").write_text(json.dumps(old.to_dict()))
    assert main(["budget", "migrate", str(tmp_path / "old.json"), str(tmp_path / "new.db")]) == 0
    capsys.readouterr()
    assert main(_median(ages_csv, tmp_path / "new.db", 0.75, "--seed", "1")) == 0
    capsys.readouterr()
    assert main(_median(ages_csv, tmp_path / "new.db", 0.01, "--seed", "1")) == 3
    capsys.readouterr()
    _one_line_error(
        capsys, ["budget", "migrate", str(tmp_path / "old.json"), str(tmp_path / "new.db")], "exists"
    )
    _one_line_error(capsys, ["budget", "verify", str(tmp_path / "new.db"), "--anchor", "3:00"], "anchor")


@pytest.mark.parametrize(
    "extra",
    [
        ["median"],
        ["median", "--noise", "laplace", "--delta", "1e-6"],
        ["quantile", "--q", "0.3", "--epsilon", "2"],
        ["quantiles", "--q", "0.1", "0.9"],
        ["trimmed-mean", "--trim", "0.1"],
        ["mean"],
        ["mean", "--method", "clipped"],
        ["mean", "--method", "private_range"],
        ["mean", "--noise", "polyplace"],
        ["mean", "--neighbours", "add_remove"],
        ["mean", "--neighbours", "add_remove", "--method", "noisy_sum"],
        ["mean", "--neighbours", "add_remove", "--noise", "laplace", "--delta", "1e-6"],
        ["median", "--bounds", "private"],
        ["quantiles", "--q", "0.5", "--bounds", "private", "--scale", "50"],
    ],
)
def test_the_budget_precheck_charges_what_the_library_declares(ages_csv, extra):
    from smoothdp.cli.app import build_parser
    from smoothdp.cli.release import expected_guarantee, release_statistic

    argv = ["release", extra[0], str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    args = build_parser().parse_args([*argv, *extra[1:], "--seed", "1", "--numerics", "float"])
    acc = smoothdp.Accountant(epsilon=10.0, delta=1e-3)
    release = release_statistic(args, np.arange(50.0), acc)
    assert expected_guarantee(args) == release.guarantee == acc.charges[0].guarantee


def test_a_postgres_ledger_from_the_command_line(capsys, postgres_ledger, ages_csv):
    assert main(["budget", "init", postgres_ledger, "--epsilon", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"created {postgres_ledger}: total ε = 1")
    payload, _ = _json(capsys, _median(ages_csv, postgres_ledger, 0.75, "--json"))
    assert payload["budget"]["remaining"] == {"epsilon": 0.25, "delta": 0.0}
    _one_line_error(capsys, _median(ages_csv, postgres_ledger, 0.5), "exceed the budget", status=3)
    assert main(["budget", "verify", postgres_ledger, "--anchor", payload["budget"]["head"]]) == 0
    assert "1 charge(s)" in capsys.readouterr().out
    _one_line_error(capsys, ["budget", "init", postgres_ledger, "--epsilon", "5"], "already exists")
