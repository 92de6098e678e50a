"""Contribution bounding: each person keeps at most k rows in at most l groups, chosen at random
(docs/theory/tables.md#contribution-bounding).

For every person independently: first l of their groups, uniformly at random among the groups they have
rows in; then k of their rows in those groups, uniformly at random. The choice for one person depends on
their own rows and on the random bits only, never on another person's rows: that is what the proof needs.

Vectorised, no loop over persons: a uniformly random permutation of the items (rows, or (person, group)
pairs) from the library's generator, then a stable sort by person, puts each person's items in a uniformly
random order; an item is kept when its rank within its person is below the limit.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["bound_contributions", "rank_within"]


def rank_within(owner: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
    """For each item, its rank (0, 1, …) in a uniformly random order of the items of its owner.

    A uniform permutation, then a stable sort by owner: within one owner the items keep the permutation's
    order, which is uniform over their orderings, independently across owners.
    """
    n = owner.size
    rank = np.empty(n, dtype=np.int64)
    if n == 0:
        return rank
    perm = rng.permutation(n)
    order = perm[np.argsort(owner[perm], kind="stable")]
    sorted_owner = owner[order]
    new = np.concatenate(([True], sorted_owner[1:] != sorted_owner[:-1]))
    starts = np.flatnonzero(new)
    lengths = np.diff(np.concatenate((starts, [n])))
    rank[order] = np.arange(n) - np.repeat(starts, lengths)
    return rank


def bound_contributions(
    units: NDArray[np.int64],
    groups: NDArray[np.int64],
    *,
    rows: int,
    max_groups: int | None,
    rng: np.random.Generator,
) -> NDArray[np.intp]:
    """The indices (ascending) of the rows kept: for each person (``units``: one code per row), at most
    ``max_groups`` of their groups (``groups``: one code per row, ≥ 0) at random, then at most ``rows`` of
    their rows in those groups at random."""
    keep = np.ones(units.size, dtype=bool)
    if max_groups is not None and max_groups < rows and units.size:
        width = int(groups.max()) + 1
        if (int(units.max()) + 1) * width < 2**62:  # one int64 per (person, group) pair
            pairs, pair_of_row = np.unique(units * width + groups, return_inverse=True)
            owner = pairs // width
        else:
            both, pair_of_row = np.unique(np.stack((units, groups), 1), axis=0, return_inverse=True)
            owner = both[:, 0]
        keep = (rank_within(owner, rng) < max_groups)[pair_of_row.ravel()]
    kept = np.flatnonzero(keep)
    chosen = rank_within(units[kept], rng) < rows
    return kept[chosen]
