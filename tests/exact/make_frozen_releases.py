"""Record ``frozen_releases.json`` from the release path **before** the fused kernel (run once, by hand).

The table must come from the old code, never from the code under test::

    git worktree add /tmp/smoothdp-old c12560b
    PYTHONPATH=/tmp/smoothdp-old/src:tests/exact .venv/bin/python tests/exact/make_frozen_releases.py

(c12560b is the last commit of main before the fused kernel; the script refuses to run on another tree
unless told where the old ``src`` is, and records which one it used.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main() -> None:
    from frozen_cases import CASES, SEEDS, digest

    import smoothdp

    source = str(Path(smoothdp.__file__).resolve().parent)
    if "smoothdp-old" not in source:
        sys.exit(f"refusing to record from {source}: run it against the old release path (see the docstring)")
    table: dict[str, dict[str, object]] = {}
    for name, case in CASES.items():
        for seed in SEEDS:
            values = case(seed)
            table[f"{name}@{seed}"] = {
                "n": int(values.size),
                "sha256": digest(values),
                "head": [float(v) for v in np.asarray(values).reshape(-1)[:6]],
            }
            print(f"{name}@{seed}: {values.size} values", flush=True)
    out = Path(__file__).with_name("frozen_releases.json")
    out.write_text(
        json.dumps(
            {"recorded_by": "commit c12560b (release path before the fused kernel)", "cases": table}, indent=1
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
