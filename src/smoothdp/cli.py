"""The ``smoothdp`` command (placeholder until the CLI issue lands)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("smoothdp: under construction")
    return 0
