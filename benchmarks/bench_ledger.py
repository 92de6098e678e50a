"""Charge latency of the persistent ledger: milliseconds per ``Accountant.charge`` (one transaction).

In memory, on SQLite (a file in a temporary folder) and, given ``--postgres URL``, on PostgreSQL; on a
fresh ledger and on one that already holds ``--history`` charges (every charge re-reads and re-verifies
the whole chain). The stores are timed in interleaved rounds; the best round is reported, with the load::

    .venv/bin/python benchmarks/bench_ledger.py [--postgres postgresql://user@/db?host=/tmp/sock]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import smoothdp
from smoothdp.ledger import migrate


def _filled(target: str, history: int) -> smoothdp.Accountant:
    """A ledger of total ε = 1e9 holding ``history`` earlier charges (built in one step by ``migrate``)."""
    memory = smoothdp.Accountant(epsilon=1e9)
    for _ in range(history):
        memory.charge(smoothdp.PureDP(1e-3), label="earlier release")
    return migrate(memory.to_dict(), target)


def _rate(acc: smoothdp.Accountant, charges: int) -> float:
    start = time.perf_counter()
    for _ in range(charges):
        acc.charge(smoothdp.PureDP(1e-3), label="timed release")
    return (time.perf_counter() - start) / charges * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=None, help="a libpq URL of a server to time (optional)")
    parser.add_argument("--charges", type=int, default=50, help="charges per round (default 50)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--history", type=int, default=1000, help="earlier charges of the full ledger")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        stores: dict[str, Callable[[int], smoothdp.Accountant]] = {
            "memory": lambda n: _memory(n),
            "sqlite": lambda n: _filled(str(Path(folder) / f"{uuid.uuid4().hex}.db"), n),
        }
        if args.postgres:
            stores["postgresql"] = lambda n: _filled(f"{args.postgres}#bench-{uuid.uuid4().hex[:12]}", n)
        print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
        for history in (0, args.history):
            accountants = {name: make(history) for name, make in stores.items()}
            times: dict[str, list[float]] = {name: [] for name in stores}
            for _ in range(args.rounds):
                for name, acc in accountants.items():
                    times[name].append(_rate(acc, args.charges))
            base = min(times["memory"])
            for name, rates in times.items():
                print(
                    f"{name:<11} {history:>5} earlier charges: best {min(rates):8.3f} ms/charge, "
                    f"median {statistics.median(rates):8.3f}  ({min(rates) / base:,.0f}× memory)"
                )
            for acc in accountants.values():
                acc.close()


def _memory(history: int) -> smoothdp.Accountant:
    acc = smoothdp.Accountant(epsilon=1e9)
    for _ in range(history):
        acc.charge(smoothdp.PureDP(1e-3), label="earlier release")
    return acc


if __name__ == "__main__":
    main()
