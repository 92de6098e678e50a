"""Run many ``smoothdp`` CLI processes at once, kill some, and touch files while they run (tests only).

``python ledger_processes.py < spec.json`` prints one JSON object. The launcher imports ``smoothdp.cli``
and the statistics once, then forks one process per job; each child waits at a common gate, then runs
``smoothdp.cli.main(argv)`` with its stdout and stderr in files, and exits with its status. The children
are separate processes (their own SQLite connections and locks), and they start within a millisecond of
each other without each paying the ~0.5 s import of the library, so fifty of them take seconds.

The spec::

    {"folder": DIR,                        # where the children's outputs go
     "jobs": [{"argv": [...], "kill_after": null | seconds}, ...],
     "actions": [{"at": seconds, "do": "link" | "unlink" | "rename" | "remove_if_exists", "args": [...]}],
     "slow": false}                        # random sleeps (0-15 ms) around the ledger's steps, to widen
                                           # the windows that kills and file actions can hit

The result: ``{"jobs": [{"status": exit status or -signal, "out": ..., "err": ...}], "seconds": ...}``.
This file also runs against an older smoothdp (benchmarks/ledger_attacks.py uses it on the old CLI).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
import time
from typing import Any

#: The steps slowed down in "slow" mode, where they exist (the ledger's and the old JSON file's).
SLOW_STEPS = {
    "smoothdp.ledger.sqlite": ("SQLiteStore", ("fetch", "append", "commit", "after_commit")),
    "smoothdp.cli": (None, ("_load_budget", "_save_budget", "_print_release_output")),  # older CLIs
    "smoothdp.cli.output": (None, ("print_release",)),
}


def _slow_down(rng: random.Random) -> None:
    import importlib

    for module_name, (owner, names) in SLOW_STEPS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        holder = getattr(module, owner) if owner else module
        for name in names:
            original = getattr(holder, name, None)
            if original is None:
                continue

            def slowed(*args: Any, __original: Any = original, **kwargs: Any) -> Any:
                time.sleep(rng.uniform(0.0, 0.015))
                return __original(*args, **kwargs)

            setattr(holder, name, slowed)


def _child(job: dict[str, Any], index: int, folder: str, gate: int, slow: bool) -> None:
    from smoothdp.cli import main

    os.read(gate, 1)  # every child waits here until the launcher closes the gate's other end
    for fd, suffix in ((1, "out"), (2, "err")):
        target = os.open(os.path.join(folder, f"job{index}.{suffix}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    if slow:
        _slow_down(random.Random(os.getpid()))
    status = 1
    try:
        status = main(job["argv"])
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


def _act(action: dict[str, Any]) -> None:
    what, args = action["do"], action["args"]
    with contextlib.suppress(FileNotFoundError, FileExistsError):
        if what == "link":
            os.link(*args)
        elif what == "unlink":
            os.unlink(*args)
        elif what == "rename":
            os.rename(*args)
        elif what == "remove_if_exists":
            for name in args:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(name)
        else:
            raise ValueError(f"unknown action {what!r}")


def _read(path: str) -> str:
    """What a child wrote ("" when it was killed before it opened its outputs)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def run(spec: dict[str, Any]) -> dict[str, Any]:
    import importlib

    for name in ("smoothdp.cli", "smoothdp.central.api"):  # imported once, before the forks
        importlib.import_module(name)

    folder, jobs, slow = spec["folder"], spec["jobs"], bool(spec.get("slow"))
    gate_read, gate_write = os.pipe()
    children = []
    for index, job in enumerate(jobs):
        pid = os.fork()
        if pid == 0:
            os.close(gate_write)
            _child(job, index, folder, gate_read, slow)
        children.append(pid)
    os.close(gate_read)
    start = time.monotonic()
    os.close(gate_write)  # the gate opens for every child at once
    events = [
        (job["kill_after"], "kill", pid)
        for job, pid in zip(jobs, children, strict=True)
        if job.get("kill_after") is not None
    ]
    events += [(action["at"], "act", action) for action in spec.get("actions", [])]
    for at, kind, what in sorted(events, key=lambda e: e[0]):
        time.sleep(max(0.0, start + at - time.monotonic()))
        if kind == "kill":
            with contextlib.suppress(ProcessLookupError):
                os.kill(what, signal.SIGKILL)
        else:
            _act(what)
    results = []
    for index, pid in enumerate(children):
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out, err = (_read(os.path.join(folder, f"job{index}.{suffix}")) for suffix in ("out", "err"))
        results.append({"status": code, "out": out, "err": err})
    return {"jobs": results, "seconds": time.monotonic() - start}


if __name__ == "__main__":
    print(json.dumps(run(json.load(sys.stdin))))
