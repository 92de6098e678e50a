"""Statistical audit of whole tables on neighbouring frames (smoothdp.audit), with a broken twin: a row
moves from group A to group B, and the released table of counts, projected to count_A − count_B (post-
processing), must stay within the table's ε (docs/theory/tables.md#the-whole-table). Slow: end-to-end
releases of the table, 3,000 per side (and as many for the bins)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import smoothdp
from smoothdp.audit import audit_mechanism
from smoothdp.tables import composition, query

pytestmark = pytest.mark.slow

BASE = pd.DataFrame({"g": ["A"] * 6 + ["B"] * 4, "v": np.arange(10.0)})
MOVED = BASE.assign(g=["A"] * 5 + ["B"] * 5)


def _sampler(frame: pd.DataFrame):
    def sample(n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(n)
        for i in range(n):
            t = smoothdp.aggregate(frame, "g", {"v": "count"}, epsilon=1.0, keys=["A", "B"], rng=rng)
            out[i] = t["v", "count"].iloc[0] - t["v", "count"].iloc[1]
        return out

    return sample


def _audit():
    return audit_mechanism(_sampler(BASE), _sampler(MOVED), epsilon=1.0, n_samples=3_000, rng=3)


def test_a_table_of_counts_passes_the_audit_under_substitution():
    assert _audit().passed


def test_a_table_that_does_not_halve_under_substitution_fails_it(monkeypatch):
    def no_halving(**kwargs):
        right = composition.table_budget(**kwargs)
        wrong = composition.table_budget(**{**kwargs, "neighbours": "add_remove"})
        return composition.TableBudget(right.guarantee, "add_remove", wrong.person_epsilon, 0.0, wrong.rows)

    monkeypatch.setattr(query, "table_budget", no_halving)
    assert not _audit().passed
