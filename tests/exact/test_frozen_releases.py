"""The exact release path releases, bit for bit, what older release paths released for the same seeds.

``frozen_releases.json`` was recorded by the release path before the fused kernel (commit c12560b) and
``frozen_releases_fused.json`` by the fused kernel as first merged (commit 9baa64b), each by
``make_frozen_releases.py`` run against that commit's ``src``, never by the code under test; each case of
``frozen_cases.py`` (``CASES``, ``CASES_FUSED``) is recomputed here from the same seeds and its SHA-256
compared. A faster kernel may change how a value is computed, never which value is released for a given
stream of uniform bits (docs/theory/floating-point.md#the-fused-kernel).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from frozen_cases import CASES, CASES_FUSED, SEEDS, digest


def _table(name: str) -> dict[str, dict[str, object]]:
    return json.loads(Path(__file__).with_name(name).read_text())["cases"]


TABLE = _table("frozen_releases.json")
TABLE_FUSED = _table("frozen_releases_fused.json")


def test_tables_cover_every_case() -> None:
    assert set(TABLE) == {f"{name}@{seed}" for name in CASES for seed in SEEDS}
    assert set(TABLE_FUSED) == {f"{name}@{seed}" for name in CASES_FUSED for seed in SEEDS}


def _check(name: str, case, table: dict[str, dict[str, object]]) -> None:
    for seed in SEEDS:
        recorded = table[f"{name}@{seed}"]
        values = case(seed)
        head = [float(v) for v in np.asarray(values).reshape(-1)[:6]]
        assert values.size == recorded["n"]
        assert head == recorded["head"], f"{name}@{seed}: first values differ"
        assert digest(values) == recorded["sha256"], f"{name}@{seed}: released values differ"


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_unchanged(name: str) -> None:
    _check(name, CASES[name], TABLE)


@pytest.mark.parametrize("name", sorted(CASES_FUSED))
def test_release_is_unchanged_since_the_fused_kernel(name: str) -> None:
    _check(name, CASES_FUSED[name], TABLE_FUSED)
