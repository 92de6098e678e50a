"""Fixtures of the ledger tests: small CSV data, CLI processes, and a throw-away PostgreSQL cluster.

PostgreSQL: when Debian's server binaries are installed (``initdb`` and ``pg_ctl``, on the PATH or in
``/usr/lib/postgresql/*/bin``), one cluster is made for the session in a temporary folder and started on a
Unix socket in that folder (no TCP port), then stopped at the end. As root, the server runs as the
``postgres`` system user (PostgreSQL refuses to run as root). Without the binaries, or when the cluster
cannot start, the tests that need it are skipped with the reason (``pytest -ra`` prints it).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest


@pytest.fixture
def ages_csv(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("age\n" + "".join(f"{20 + i % 50}\n" for i in range(40)))
    return path


# ------------------------------------------------------------------------------------------ PostgreSQL


def _server_binaries() -> Path | None:
    found = shutil.which("initdb")
    candidates = [Path(found).resolve().parent] if found else []
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


@pytest.fixture(scope="session")
def postgres_server():
    """The libpq URL (without a budget name) of a throw-away cluster on a Unix socket."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the 'postgres' extra)")
    binaries = _server_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql")
    run_as: dict[str, int] = {}
    if os.geteuid() == 0:  # PostgreSQL refuses root: run it as the system user made by Debian's package
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and no 'postgres' system user to run the server as")
        run_as = {"user": user.pw_uid, "group": user.pw_gid}
    # Not under pytest's own temporary folder: that one is private to this user (0700), and the server
    # may run as another user.
    folder = Path(tempfile.mkdtemp(prefix="smoothdp-pg-"))
    data = folder / "data"
    env = {**os.environ, "LC_ALL": "C", "HOME": str(folder)}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), capture_output=True, text=True, env=env, cwd=folder, timeout=120, **run_as
        )

    try:
        if run_as:
            os.chown(folder, run_as["user"], run_as["group"])
        made = run(
            str(binaries / "initdb"),
            "-D",
            str(data),
            "-U",
            "smoothdp",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        if made.returncode != 0:
            pytest.skip(f"initdb failed: {(made.stderr or made.stdout).strip().splitlines()[-1:]}")
        options = f"-k {folder} -c listen_addresses='' -c max_connections=120"
        log = folder / "log"
        started = run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        if started.returncode != 0:
            why = log.read_text() if log.exists() else started.stderr
            pytest.skip(f"the PostgreSQL cluster did not start: {why.strip().splitlines()[-1:]}")
        try:
            yield f"postgresql://smoothdp@/postgres?host={folder}"
        finally:
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_ledger(postgres_server: str) -> str:
    """A fresh budget name on the session's cluster (``URL#name``); the budget does not exist yet."""
    return f"{postgres_server}#test-{uuid.uuid4().hex[:12]}"
