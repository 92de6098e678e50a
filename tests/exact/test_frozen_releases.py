"""The exact release path releases, bit for bit, what it released before the fused kernel.

``frozen_releases.json`` was recorded by the old code (see ``make_frozen_releases.py``), never by the code
under test; each case of ``frozen_cases.py`` is recomputed here from the same seeds and its SHA-256
compared. A faster kernel may change how a value is computed, never which value is released for a given
stream of uniform bits (docs/theory/floating-point.md#the-fused-kernel).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from frozen_cases import CASES, SEEDS, digest

TABLE = json.loads(Path(__file__).with_name("frozen_releases.json").read_text())["cases"]


def test_table_covers_every_case() -> None:
    assert set(TABLE) == {f"{name}@{seed}" for name in CASES for seed in SEEDS}


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_unchanged(name: str) -> None:
    for seed in SEEDS:
        recorded = TABLE[f"{name}@{seed}"]
        values = CASES[name](seed)
        head = [float(v) for v in np.asarray(values).reshape(-1)[:6]]
        assert values.size == recorded["n"]
        assert head == recorded["head"], f"{name}@{seed}: first values differ"
        assert digest(values) == recorded["sha256"], f"{name}@{seed}: released values differ"
