"""The exact law of JointExp's backward draws (interval, then repeats), read off the sampler's float
tables: shared by the continuum and the lattice tests."""

from __future__ import annotations

from typing import Any

import numpy as np


def sampler_law(tables: Any, m: int, end: int) -> dict[tuple[int, ...], float]:
    """Probability of each sequence of m cells drawn backwards from the cell ``end`` (normalised)."""
    law: dict[tuple[int, ...], float] = {}

    def walk(j: int, last: int, suffix: list[int], prob: float) -> None:
        if j < 0:
            law[tuple(suffix)] = law.get(tuple(suffix), 0.0) + prob
            return
        wi = np.exp(tables.interval_weights(j, last))
        for i in np.flatnonzero(wi > 0):
            wr = np.exp(tables.repeat_weights(j, int(i)))
            for r in np.flatnonzero(wr > 0):
                p = prob * wi[i] / wi.sum() * wr[r] / wr.sum()
                walk(j - int(r) - 1, int(i), [int(i)] * (int(r) + 1) + suffix, p)

    walk(m - 1, end, [], 1.0)
    total = sum(law.values())
    return {s: p / total for s, p in law.items()}
