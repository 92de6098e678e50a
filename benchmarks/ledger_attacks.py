"""The audit's attacks on ``smoothdp release --budget``, run against any smoothdp source tree.

For each attack: how many releases printed a value, against the budget's total, and how many charges the
ledger at the path records afterwards (fewer than printed: lost updates). Run it on this tree and on an
older one to compare (the JSON ledger with a lock file before the persistent ledger)::

    .venv/bin/python benchmarks/ledger_attacks.py                       # this tree
    git archive 86aaea0 src | tar -x -C /tmp/old                         # the JSON ledger
    .venv/bin/python benchmarks/ledger_attacks.py --source /tmp/old/src

The processes are forked by tests/ledger/ledger_processes.py after one import of the library.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "tests" / "ledger" / "ledger_processes.py"


class Tree:
    """A smoothdp source tree, run in its own processes."""

    def __init__(self, source: Path) -> None:
        self.env = {**os.environ, "PYTHONPATH": str(source)}

    def cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "smoothdp.cli", *argv],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=300,
        )

    def launch(
        self, folder: Path, jobs: list[dict[str, Any]], actions=(), slow=False
    ) -> list[dict[str, Any]]:
        spec = {"folder": str(folder), "jobs": jobs, "actions": list(actions), "slow": slow}
        done = subprocess.run(
            [sys.executable, str(LAUNCHER)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=600,
        )
        if done.returncode:
            raise RuntimeError(done.stderr)
        return json.loads(done.stdout)["jobs"]

    def recorded(self, ledger: Path) -> str:
        shown = self.cli("budget", "show", str(ledger), "--json")
        if shown.returncode:
            return f"refused ({shown.stderr.strip().splitlines()[-1][:60]}…)"
        return str(len(json.loads(shown.stdout)["charges"]))


def data(folder: Path, n: int) -> list[Path]:
    files = []
    for i in range(n):
        path = folder / f"data-{i}.csv"
        path.write_text("age\n" + "".join(f"{20 + (i + j) % 50}\n" for j in range(30)))
        files.append(path)
    return files


def release(csv: Path, ledger: Path) -> list[str]:
    argv = ["release", "median", str(csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    return [*argv, "--numerics", "float", "--budget", str(ledger)]


def printed(results: list[dict[str, Any]]) -> int:
    return sum("\nvalue:" in "\n" + r["out"] for r in results)


def init(tree: Tree, folder: Path, total: float) -> Path:
    ledger = folder / "budget"
    made = tree.cli("budget", "init", str(ledger), "--epsilon", str(total))
    if made.returncode:
        raise RuntimeError(made.stderr)
    return ledger


# ------------------------------------------------------------------------------------------ attacks


def concurrent_links(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """30 concurrent ε = 1 releases through the file and two symbolic links (audit: 15 on a budget of 5)."""
    ledger = init(tree, folder, 5)
    (folder / "a").symlink_to(ledger)
    (folder / "b").symlink_to(ledger)
    names = [ledger, folder / "a", folder / "b"]
    results = tree.launch(
        folder, [{"argv": release(d, names[i % 3])} for i, d in enumerate(data(folder, 30))]
    )
    return printed(results), 5, ledger


def fifty_with_a_hard_link(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """50 concurrent releases through the file, a symbolic link and a hard link."""
    ledger = init(tree, folder, 5)
    (folder / "a").symlink_to(ledger)
    os.link(ledger, folder / "h")
    names = [ledger, folder / "a", folder / "h"]
    results = tree.launch(
        folder, [{"argv": release(d, names[i % 3])} for i, d in enumerate(data(folder, 50))]
    )
    os.unlink(folder / "h")
    return printed(results), 5, ledger


def _sequential(tree: Tree, folder: Path, hard: bool) -> tuple[int, float, Path]:
    ledger = init(tree, folder, 3)
    other = folder / "other"
    if hard:
        os.link(ledger, other)
    else:
        other.symlink_to(ledger)
    count = 0
    for i, name in enumerate([other] * 5 + [ledger] * 5):
        csv = data(folder, i + 1)[-1]
        count += "\nvalue:" in "\n" + tree.cli(*release(csv, name)).stdout
    if hard:
        os.unlink(other)
    return count, 3, ledger


def link_then_target(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """Releases through a symbolic link until refused, then through the target (audit: 2× the budget)."""
    return _sequential(tree, folder, hard=False)


def hard_link_then_target(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """The same through a hard link."""
    return _sequential(tree, folder, hard=True)


def lock_removal(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """20 releases while the files beside the ledger (FILE.lock; -wal, -shm) are deleted (audit: 10 on a
    budget of 3, 3 recorded)."""
    ledger = init(tree, folder, 3)
    beside = [str(ledger) + s for s in (".lock", "-wal", "-shm")]
    actions = [
        {"at": at, "do": "remove_if_exists", "args": beside} for at in (0.02, 0.05, 0.1, 0.15, 0.2, 0.3)
    ]
    jobs = [{"argv": release(d, ledger)} for d in data(folder, 20)]
    return printed(tree.launch(folder, jobs, actions=actions, slow=True)), 3, ledger


def killed(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """24 releases, 18 of them killed (SIGKILL) at random times."""
    ledger = init(tree, folder, 8)
    rng = random.Random(0)
    jobs = [
        {"argv": release(d, ledger), "kill_after": rng.uniform(0, 0.6) if i % 4 else None}
        for i, d in enumerate(data(folder, 24))
    ]
    return printed(tree.launch(folder, jobs, slow=True)), 8, ledger


def edited(tree: Tree, folder: Path) -> tuple[int, float, Path]:
    """Two releases, then the charges wiped and the total raised to 100 by hand; then 5 more releases."""
    ledger = init(tree, folder, 3)
    files = data(folder, 7)
    for csv in files[:2]:
        tree.cli(*release(csv, ledger))
    if ledger.read_bytes().startswith(b"SQLite"):
        db = sqlite3.connect(ledger, isolation_level=None)
        for (trigger,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DELETE FROM charges")
        [(text,)] = db.execute("SELECT definition FROM budget").fetchall()
        db.execute("UPDATE budget SET definition = ?", (text.replace('"epsilon":3.0', '"epsilon":100.0'),))
        db.close()
    else:
        ledger_json = json.loads(ledger.read_text())
        ledger_json["charges"], ledger_json["total"]["epsilon"] = [], 100.0
        ledger.write_text(json.dumps(ledger_json))
    count = 2 + sum("\nvalue:" in "\n" + tree.cli(*release(csv, ledger)).stdout for csv in files[2:])
    return count, 3, ledger


ATTACKS = [
    concurrent_links,
    fifty_with_a_hard_link,
    link_then_target,
    hard_link_then_target,
    lock_removal,
    killed,
    edited,
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT / "src", help="a smoothdp src/ tree")
    args = parser.parse_args()
    tree = Tree(args.source.resolve())
    print(f"source: {args.source}   load: {open('/proc/loadavg').read().split()[0]}")
    print(f"{'attack':<24} {'printed':>8} {'total ε':>8} {'recorded':>10}  verdict")
    for attack in ATTACKS:
        with tempfile.TemporaryDirectory() as folder:
            count, total, ledger = attack(tree, Path(folder))
            recorded = tree.recorded(ledger)
            over = count > total
            lost = recorded.isdigit() and int(recorded) < count
            verdict = "OVERSPENT" if over else "lost updates" if lost else "ok"
            print(f"{attack.__name__:<24} {count:>8} {total:>8g} {recorded:>10}  {verdict}")


if __name__ == "__main__":
    main()
