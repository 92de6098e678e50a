"""The ways to fork or roll back a SQLite ledger through the file system, one by one (from Python).

A symbolic link reaches the same ledger; a hard link is refused; a file removed, moved or replaced under
an open accountant, or its -wal/-shm removed, stops that accountant's charges before any noise is drawn; a
charge that returned is in the main file (nothing is lost with the -wal); an older copy put back (a
rollback) is caught by an anchor.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import smoothdp
from smoothdp.ledger import ChainHead, LedgerError

DATA = np.arange(50.0)


def _release(acc: smoothdp.Accountant, epsilon: float = 0.5) -> smoothdp.Release:
    return smoothdp.median(DATA, epsilon=epsilon, bounds=(0, 100), accountant=acc, numerics="float")


@pytest.fixture
def ledger(tmp_path) -> str:
    path = str(tmp_path / "budget.db")
    smoothdp.Accountant.create(path, epsilon=2.0).close()
    return path


def test_symbolic_links_reach_one_ledger(ledger, tmp_path):
    (tmp_path / "alias.db").symlink_to(ledger)
    (tmp_path / "folder").symlink_to(tmp_path, target_is_directory=True)
    paths = [
        ledger,
        tmp_path / "alias.db",
        tmp_path / "folder" / "alias.db",
        tmp_path / "folder" / "budget.db",
    ]
    accountants = [smoothdp.Accountant.open(p) for p in paths]
    try:
        assert {acc.location for acc in accountants} == {os.path.realpath(ledger)}
        for acc in accountants:
            acc.charge(smoothdp.PureDP(0.5))
        for acc in accountants:  # four names, one budget: the fifth half is refused through any of them
            with pytest.raises(smoothdp.BudgetError):
                acc.charge(smoothdp.PureDP(0.5))
    finally:
        for acc in accountants:
            acc.close()
    assert not any(name.endswith((".lock", "-journal")) for name in os.listdir(tmp_path))  # no sidecar lock


def test_a_hard_link_is_refused_through_either_name(ledger, tmp_path):
    with smoothdp.Accountant.open(ledger) as acc:
        os.link(ledger, tmp_path / "twin.db")
        with pytest.raises(LedgerError, match="2 hard links"):
            _release(acc)  # an accountant opened before the link: refused at its next charge
        for name in (ledger, tmp_path / "twin.db"):
            with pytest.raises(LedgerError, match="hard links"):
                smoothdp.Accountant.open(name)
    os.unlink(tmp_path / "twin.db")
    with smoothdp.Accountant.open(ledger) as acc:
        assert len(acc) == 0  # the refused release charged nothing


def test_a_removed_file_stops_an_open_accountant(ledger):
    with smoothdp.Accountant.open(ledger) as acc:
        _release(acc)
        os.remove(ledger)
        with pytest.raises(LedgerError, match="removed"):
            _release(acc)
        with pytest.raises(LedgerError, match="removed"):
            _ = acc.spent
    with pytest.raises(LedgerError, match="no ledger"):
        smoothdp.Accountant.open(ledger)


@pytest.mark.parametrize("how", ["moved away", "replaced by a copy"])
def test_a_moved_or_replaced_file_stops_an_open_accountant(ledger, tmp_path, how):
    with smoothdp.Accountant.open(ledger) as acc:
        _release(acc)
        if how == "moved away":
            os.rename(ledger, tmp_path / "elsewhere.db")
        else:
            shutil.copyfile(ledger, tmp_path / "copy.db")
            os.replace(tmp_path / "copy.db", ledger)
        with pytest.raises(LedgerError, match=r"removed|replaced"):
            _release(acc)


def test_a_removed_wal_stops_the_process_holding_it_and_loses_no_charge(ledger):
    holder = smoothdp.Accountant.open(ledger)
    try:
        first = _release(holder)
        assert first.value is not None
        for suffix in ("-wal", "-shm"):
            assert os.path.exists(ledger + suffix)
            os.remove(ledger + suffix)
        with pytest.raises(LedgerError, match=r"-wal|-shm"):
            _release(holder)
        # Another process, while this one still holds the removed files: it reads the main file, which
        # holds the charge that returned, and charges on.
        script = (
            "import sys, smoothdp\n"
            "acc = smoothdp.Accountant.open(sys.argv[1])\n"
            "before = len(acc)\n"
            "acc.charge(smoothdp.PureDP(0.5))\n"
            "print(before, len(acc), acc.spent.epsilon)\n"
        )
        fresh = subprocess.run([sys.executable, "-c", script, ledger], capture_output=True, text=True)
        assert fresh.stdout.split() == ["1", "2", "1.0"], fresh.stderr
    finally:
        holder.close()


def test_every_charge_that_returned_is_in_the_main_file(ledger, tmp_path):
    """No -wal needed: a copy of the main file alone holds every charge that returned."""
    with smoothdp.Accountant.open(ledger) as acc:
        for _ in range(3):
            _release(acc)
        shutil.copyfile(ledger, tmp_path / "main-only.db")  # while open: the -wal is not copied
        with sqlite3.connect(tmp_path / "main-only.db") as db:
            assert db.execute("SELECT count(*) FROM charges").fetchone()[0] == 3


def test_an_older_copy_put_back_is_a_rollback_caught_by_an_anchor(ledger, tmp_path):
    shutil.copyfile(ledger, tmp_path / "backup.db")
    with smoothdp.Accountant.open(ledger) as acc:
        _release(acc, 1.0)
        _release(acc, 1.0)
        anchor = acc.head  # what the CLI prints with each release, kept elsewhere
    os.replace(tmp_path / "backup.db", ledger)  # someone who may write the folder rolls the budget back
    with smoothdp.Accountant.open(ledger) as acc:
        assert len(acc) == 0  # a file the attacker can write cannot prove its own history …
        with pytest.raises(LedgerError, match="anchor"):
            acc.verify(anchor=anchor)  # … the anchor kept elsewhere does
        assert anchor == ChainHead.parse(str(anchor))


def test_what_is_not_a_ledger_is_named(tmp_path):
    (tmp_path / "empty.db").write_bytes(b"")
    (tmp_path / "text.db").write_text("hello")
    with sqlite3.connect(tmp_path / "other.db") as db:
        db.execute("CREATE TABLE t (x)")
    (tmp_path / "folder.db").mkdir()
    for name, message in [
        ("empty.db", "empty file"),
        ("text.db", "not a SQLite database"),
        ("other.db", "another SQLite database"),
        ("folder.db", "not a regular file"),
    ]:
        with pytest.raises(LedgerError, match=message):
            smoothdp.Accountant.open(tmp_path / name)


def test_an_accountant_does_not_cross_a_fork(ledger):
    with smoothdp.Accountant.open(ledger) as acc:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child uses the parent's connection: refused, nothing charged
            try:
                acc.charge(smoothdp.PureDP(0.5))
                os.write(write, b"charged")
            except LedgerError as error:
                os.write(write, b"refused" if "another process" in str(error) else b"other error")
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        os.close(write)
        assert os.read(read, 100) == b"refused"
        os.close(read)
        assert len(acc) == 0
