"""Attacks on ``smoothdp release --budget``: many processes at once, through links, killed mid-charge, with
the files beside the ledger removed and the ledger itself moved or replaced while they run.

The invariant checked after every attack (:func:`check_invariants`): the releases that printed a value
spent at most the total, every one of them has its charge in the ledger it was charged to (the chain head
it printed verifies there as an anchor, on the charge of its own data file), and the ledger still opens
and verifies. The processes come from tests/ledger/ledger_processes.py (forked after one import, so fifty
take seconds); one test runs the real ``python -m smoothdp.cli`` entry point.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import smoothdp

LAUNCHER = Path(__file__).with_name("ledger_processes.py")
ANCHOR = re.compile(r"^chain head:  (\d+:[0-9a-f]{64})", re.MULTILINE)


def launch(folder: Path, jobs: list[dict[str, Any]], *, actions=(), slow=False) -> list[dict[str, Any]]:
    spec = {"folder": str(folder), "jobs": jobs, "actions": list(actions), "slow": slow}
    done = subprocess.run(
        [sys.executable, str(LAUNCHER)], input=json.dumps(spec), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["jobs"]


def data_files(folder: Path, n: int) -> list[Path]:
    """One small CSV per process: its name is in the charge's label, so each release finds its charge."""
    files = []
    for i in range(n):
        path = folder / f"data-{i}.csv"
        path.write_text("age\n" + "".join(f"{20 + (i + j) % 50}\n" for j in range(30)))
        files.append(path)
    return files


def release(data: Path, ledger: Path | str, epsilon: float = 1.0) -> list[str]:
    return [
        "release",
        "median",
        str(data),
        "--column",
        "age",
        "--epsilon",
        str(epsilon),
        "--bounds",
        "0",
        "100",
        "--numerics",
        "float",
        "--budget",
        str(ledger),
    ]


def printed(results: list[dict[str, Any]]) -> dict[int, str]:
    """The jobs that printed a value, with the chain head each printed."""
    heads = {}
    for i, r in enumerate(results):
        if re.search(r"^value: ", r["out"], re.MULTILINE):
            [head] = ANCHOR.findall(r["out"])  # a value is never printed without its charge's head
            heads[i] = head
    return heads


def check_invariants(
    ledgers: list[Path], results: list[dict[str, Any]], data: list[Path], total: float, epsilon: float = 1.0
) -> dict[Path, int]:
    """The invariant of the module docstring; returns how many printed releases each ledger holds."""
    heads = printed(results)
    for r in results:
        assert r["status"] in (0, 2, 3, -9), r  # success, refused or error (one line), killed
        assert "Traceback" not in r["err"], r["err"]
        if r["status"] in (2, 3):
            assert not re.search(r"^value: ", r["out"], re.MULTILINE)
    found: dict[Path, int] = {}
    for ledger in ledgers:
        with smoothdp.Accountant.open(ledger) as acc:
            head = acc.verify()
            assert head is not None and acc.spent.epsilon <= total * (1 + 1e-12)
            charges = acc.charges
            found[ledger] = 0
            for i, anchor in heads.items():
                seq = int(anchor.split(":")[0])
                if seq <= len(charges) and f"{charges[seq - 1].seq}:{charges[seq - 1].digest}" == anchor:
                    acc.verify(anchor=anchor)
                    assert charges[seq - 1].label.startswith(f"median of age in {data[i]}: ")
                    found[ledger] += 1
            assert found[ledger] * epsilon <= total
    assert sum(found.values()) == len(heads), "a release printed a value whose charge is in no ledger"
    return found


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "budget.db"
    smoothdp.Accountant.create(path, epsilon=5.0).close()
    return path


def test_fifty_processes_through_the_file_and_symlinks_spend_the_total_once(tmp_path, ledger):
    (tmp_path / "alias.db").symlink_to(ledger)
    (tmp_path / "folder").symlink_to(tmp_path, target_is_directory=True)
    names = [ledger, tmp_path / "alias.db", tmp_path / "folder" / "budget.db"]
    data = data_files(tmp_path, 50)
    results = launch(tmp_path, [{"argv": release(d, names[i % 3])} for i, d in enumerate(data)])
    assert sorted(r["status"] for r in results) == [0] * 5 + [3] * 45, [r["err"] for r in results]
    assert check_invariants([ledger], results, data, total=5.0) == {ledger: 5}
    assert all("exceed the budget" in r["err"] for r in results if r["status"] == 3)
    assert not any(p.name.endswith(".lock") for p in tmp_path.iterdir())


def test_a_hard_link_is_refused_through_every_name(tmp_path, ledger):
    os.link(ledger, tmp_path / "twin.db")
    (tmp_path / "alias.db").symlink_to(tmp_path / "twin.db")
    names = [ledger, tmp_path / "twin.db", tmp_path / "alias.db"]
    data = data_files(tmp_path, 12)
    results = launch(tmp_path, [{"argv": release(d, names[i % 3])} for i, d in enumerate(data)])
    assert [r["status"] for r in results] == [2] * 12
    assert all("2 hard links" in r["err"] and r["out"] == "" for r in results)
    os.unlink(tmp_path / "twin.db")
    with smoothdp.Accountant.open(ledger) as acc:
        assert len(acc) == 0


def test_a_hard_link_made_during_a_run(tmp_path, ledger):
    data = data_files(tmp_path, 30)
    names = [ledger, tmp_path / "twin.db"]
    jobs = [{"argv": release(d, names[i % 2])} for i, d in enumerate(data)]
    link = {"at": 0.08, "do": "link", "args": [str(ledger), str(tmp_path / "twin.db")]}
    results = launch(tmp_path, jobs, actions=[link], slow=True)
    os.unlink(tmp_path / "twin.db")
    check_invariants([ledger], results, data, total=5.0)
    assert any("hard links" in r["err"] for r in results)


@pytest.mark.parametrize("round", range(2))
def test_processes_killed_at_random_points_mid_charge(tmp_path, round):
    ledger = tmp_path / "budget.db"
    smoothdp.Accountant.create(ledger, epsilon=8.0).close()
    rng = random.Random(round)
    data = data_files(tmp_path, 24)
    # The charges run one after another, each 10-60 ms here (slow mode): kills spread over the whole run
    jobs = [
        {"argv": release(d, ledger), "kill_after": rng.uniform(0.0, 0.6) if i % 4 else None}
        for i, d in enumerate(data)
    ]
    results = launch(tmp_path, jobs, slow=True)
    assert sum(r["status"] == -9 for r in results) >= 5  # most kills landed while the process was running
    check_invariants([ledger], results, data, total=8.0)
    assert ledger.read_bytes().startswith(b"SQLite format 3\x00")


def test_removing_the_files_beside_the_ledger_while_releases_wait(tmp_path):
    """The old attack: the lock file deleted while 20 releases waited let 10 out on a budget of 3 and recorded
    3 (lost updates). There is no lock file now; the -wal and -shm files are what a deletion can target."""
    ledger = tmp_path / "budget.db"
    smoothdp.Accountant.create(ledger, epsilon=3.0).close()
    data = data_files(tmp_path, 20)
    beside = [str(ledger) + suffix for suffix in (".lock", "-wal", "-shm")]
    actions = [{"at": at, "do": "remove_if_exists", "args": beside} for at in (0.02, 0.06, 0.12, 0.2, 0.3)]
    results = launch(tmp_path, [{"argv": release(d, ledger)} for d in data], actions=actions, slow=True)
    found = check_invariants([ledger], results, data, total=3.0)
    assert found[ledger] == len(printed(results)) <= 3


def test_the_ledger_moved_away_during_a_run(tmp_path, ledger):
    data = data_files(tmp_path, 24)
    moved = tmp_path / "moved.db"
    action = {"at": 0.15, "do": "rename", "args": [str(ledger), str(moved)]}
    results = launch(tmp_path, [{"argv": release(d, ledger)} for d in data], actions=[action], slow=True)
    check_invariants([moved], results, data, total=5.0)  # every printed release is where it was charged
    late = [r for r in results if "no ledger" in r["err"] or "removed" in r["err"]]
    assert late and all(r["status"] == 2 for r in late)


def _verifies(acc: smoothdp.Accountant, head: str) -> bool:
    try:
        acc.verify(anchor=head)
    except smoothdp.ledger.LedgerError:
        return False
    return True


def test_the_ledger_replaced_by_an_older_copy_during_a_run(tmp_path, ledger):
    """A rollback by someone who may write the folder: each file stays within its total, every printed
    release is in the file it was charged to, and the heads printed before the swap no longer verify on
    the file now at the path: the anchor is what reveals a rollback."""
    shutil.copyfile(ledger, tmp_path / "backup.db")
    data = data_files(tmp_path, 30)
    old = tmp_path / "old.db"
    swap = [
        {"at": 0.2, "do": "rename", "args": [str(ledger), str(old)]},
        {"at": 0.2, "do": "rename", "args": [str(tmp_path / "backup.db"), str(ledger)]},
    ]
    results = launch(tmp_path, [{"argv": release(d, ledger)} for d in data], actions=swap, slow=True)
    found = check_invariants([old, ledger], results, data, total=5.0)
    if found[old]:
        # Some head printed before the swap verifies on the old file. (Which one is a race: both files
        # number their charges from 1, so the head with the smallest number may be the new file's.)
        with smoothdp.Accountant.open(old) as acc:
            assert any(_verifies(acc, head) for head in printed(results).values())
        with (
            smoothdp.Accountant.open(ledger) as acc,
            pytest.raises(smoothdp.ledger.LedgerError, match="anchor"),
        ):
            for head in printed(results).values():
                acc.verify(anchor=head)


def test_the_real_entry_point_in_separate_interpreters(tmp_path, ledger):
    """Four ``python -m smoothdp.cli`` processes (each its own interpreter) through a file and a symlink."""
    (tmp_path / "alias.db").symlink_to(ledger)
    with smoothdp.Accountant.open(ledger) as acc:
        acc.charge(smoothdp.PureDP(3.0), label="earlier")
    data = data_files(tmp_path, 4)
    argvs = [release(d, ledger if i % 2 else tmp_path / "alias.db") for i, d in enumerate(data)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "smoothdp.cli", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    results = []
    for p in processes:
        out, err = p.communicate(timeout=300)
        results.append({"status": p.returncode, "out": out, "err": err})
    assert sorted(r["status"] for r in results) == [0, 0, 3, 3]
    assert check_invariants([ledger], results, data, total=5.0) == {ledger: 2}
    anchors = [f"--anchor={h}" for h in printed(results).values()]
    shown = subprocess.run(
        [sys.executable, "-m", "smoothdp.cli", "budget", "verify", str(ledger), *anchors],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0 and "3 charge(s)" in shown.stdout
