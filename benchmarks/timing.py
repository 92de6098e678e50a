"""Shared timing of the benchmark scripts: interleaved rounds, best of each, the machine's load beside it.

Every script times the commands it compares one after the other inside each round (A, B, A, B, ...), so a
slow moment of a shared machine hits all of them alike, and keeps the best of ``rounds`` (≥ 5) for each.
Single-threaded work is timed as process CPU time (``time.process_time``: it does not count the time the
process waits for a core, so a loaded machine changes it little) and as wall time; ratios are taken
between figures of the same round set. The 1-, 5- and 15-minute load averages (``/proc/loadavg``) are read
at the start and at the end of each row and printed with it: a row measured under a load above the
number of cores is marked with the load so a reader can discount it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Best", "header", "interleaved", "load"]


def load() -> str:
    """The load averages now, "1m/5m/15m" (or "n/a" where /proc/loadavg does not exist)."""
    try:
        with open("/proc/loadavg") as f:
            return "/".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def header(title: str, rounds: int) -> str:
    """A first line: title, date, machine, cores, best-of count."""
    stamp = time.strftime("%Y-%m-%d %H:%M")
    cpu = platform.processor() or platform.machine()
    return f"# {title} — {stamp}, {cpu}, {os.cpu_count()} cores, best of {rounds} interleaved rounds"


@dataclass
class Best:
    """Best CPU and wall seconds of one command over the rounds, and the load around the row."""

    cpu: float
    wall: float
    load: str


def interleaved(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, Best]:
    """Time each call once per round, the calls one after the other; the best of ``rounds`` for each."""
    if rounds < 1:
        raise ValueError(f"rounds must be ≥ 1; got {rounds}")
    before = load()
    cpu = dict.fromkeys(calls, float("inf"))
    wall = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            c0, w0 = time.process_time(), time.perf_counter()
            call()
            c1, w1 = time.process_time(), time.perf_counter()
            cpu[name] = min(cpu[name], c1 - c0)
            wall[name] = min(wall[name], w1 - w0)
    around = f"{before} → {load()}"
    return {name: Best(cpu[name], wall[name], around) for name in calls}
