"""Record a frozen table from an **older** release path (run once, by hand, never on the code under test).

``frozen_releases.json`` comes from the release path before the fused kernel (commit c12560b)::

    git worktree add /tmp/smoothdp-old c12560b
    PYTHONPATH=/tmp/smoothdp-old/src:tests/exact .venv/bin/python tests/exact/make_frozen_releases.py

``frozen_releases_fused.json`` (the cases of ``CASES_FUSED``) comes from the fused kernel as first merged
(commit 9baa64b), before its second speed pass::

    git worktree add --detach /tmp/smoothdp-old-fused 9baa64b
    PYTHONPATH=/tmp/smoothdp-old-fused/src:tests/exact \
        .venv/bin/python tests/exact/make_frozen_releases.py --fused

The script refuses to run unless ``smoothdp`` is imported from such an old tree (a path containing
``smoothdp-old``), and records which commit it was told it is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

TABLES = {
    "": ("frozen_releases.json", "commit c12560b (release path before the fused kernel)"),
    "--fused": (
        "frozen_releases_fused.json",
        "commit 9baa64b (the fused kernel as first merged, before its second speed pass)",
    ),
}


def main() -> None:
    from frozen_cases import CASES, CASES_FUSED, SEEDS, digest

    import smoothdp

    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which not in TABLES:
        sys.exit(f"usage: make_frozen_releases.py [--fused]; got {which!r}")
    source = str(Path(smoothdp.__file__).resolve().parent)
    if "smoothdp-old" not in source:
        sys.exit(f"refusing to record from {source}: run it against the old release path (see the docstring)")
    name, recorded_by = TABLES[which]
    cases = CASES_FUSED if which else CASES
    table: dict[str, dict[str, object]] = {}
    for case_name, case in cases.items():
        for seed in SEEDS:
            values = case(seed)
            table[f"{case_name}@{seed}"] = {
                "n": int(values.size),
                "sha256": digest(values),
                "head": [float(v) for v in np.asarray(values).reshape(-1)[:6]],
            }
            print(f"{case_name}@{seed}: {values.size} values", flush=True)
    out = Path(__file__).with_name(name)
    out.write_text(json.dumps({"recorded_by": recorded_by, "cases": table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
