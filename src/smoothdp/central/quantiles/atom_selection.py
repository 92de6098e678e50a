"""The private choice of heavy atoms for JointExp on a public lattice: which level of the lattice, if any,
holds nearly all the records (docs/theory/quantiles.md#choosing-the-heavy-level).

The candidates are "light" (every level keeps its light mass) and, for each level ℓ of the lattice in
coarse-to-fine order (spacing descending), "heavy on ℓ". With N_ℓ the number of records that are points of
level ℓ, C_ℓ the number that are points of a coarser level, N the number that are points of any level and
τ = 0.9n + 1/ε_t, the scores are

    q_light = τ − N,        q_ℓ = min(N_ℓ − τ, τ − C_ℓ),

so that the coarsest level holding more than τ records scores about 0.1n, every other candidate about
−0.1n or less. Each count moves by at most one under substitution and min is 1-Lipschitz, so every score
has sensitivity 1; the candidate is drawn with probability ∝ exp(ε_t·q/2) (the exponential mechanism,
ε_t-DP; :meth:`~smoothdp.central.quantiles.JointQuantiles.choose_atoms` draws it exactly from certified float
weights, docs/theory/quantiles.md#sampling-exactly-from-float-weights).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import Atoms

__all__ = [
    "TEST_FRACTION",
    "TEST_SHARE",
    "coarse_to_fine",
    "selected_level",
    "selection_confident",
    "selection_runs",
    "selection_scores",
]

#: Share of ε spent on the selection.
TEST_SHARE = 0.05
#: A level is heavy when more than this share of the records (plus 1/ε_t) are its points.
TEST_FRACTION = 0.9


def coarse_to_fine(atoms: Atoms) -> list[int]:
    """The indices of the levels by spacing, descending (public)."""
    return sorted(range(len(atoms.levels)), key=lambda i: -atoms.levels[i].value)


def _threshold(n: int, epsilon_test: float) -> float:
    return TEST_FRACTION * n + 1.0 / epsilon_test


def selection_runs(n: int, epsilon_test: float, n_levels: int) -> bool:
    """Whether ``atoms="auto"`` runs the selection on n records (public): when records that are all points
    of one level select it with probability above 1/2, i.e. ε_t·(0.1n − 1/ε_t) ≥ ln(L + 1) (then every
    other candidate scores at least 0.2n − 2/ε_t lower)."""
    return epsilon_test * ((1.0 - TEST_FRACTION) * n - 1.0 / epsilon_test) >= math.log(n_levels + 1.0)


def selection_confident(n: int, epsilon_test: float, n_levels: int) -> bool:
    """Whether records that are all points of one level would select it with probability at least
    1/(1 + e^-3) ≈ 0.95 (public): ε_t·(0.1n − 1/ε_t) ≥ ln L + 3. Below, ``quantiles(method="auto")``
    lets the data's evidence choose the heavy level instead, at no cost in ε
    (:class:`~smoothdp.central.quantiles.nested.NestedJointQuantiles`)."""
    return epsilon_test * ((1.0 - TEST_FRACTION) * n - 1.0 / epsilon_test) >= math.log(max(n_levels, 1)) + 3.0


def selection_scores(sorted_x: NDArray[np.float64], atoms: Atoms, n: int, epsilon_test: float) -> list[float]:
    """[q_light, q_ℓ for ℓ in coarse-to-fine order] on the (clipped) records."""
    tau = _threshold(n, epsilon_test)
    order = coarse_to_fine(atoms)
    on = np.array([atoms.levels[i].contains(sorted_x) for i in order]).reshape(len(order), sorted_x.size)
    coarser = np.zeros(sorted_x.size, dtype=bool)
    scores = [tau - float(np.count_nonzero(on.any(axis=0)))]
    for row in on:
        scores.append(min(float(np.count_nonzero(row)) - tau, tau - float(np.count_nonzero(coarser))))
        coarser |= row
    return scores


def selected_level(atoms: Atoms, pick: int) -> int | None:
    """The index in ``atoms.levels`` of candidate ``pick`` of :func:`selection_scores` (None: light)."""
    return None if pick == 0 else coarse_to_fine(atoms)[pick - 1]
