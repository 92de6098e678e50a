"""The heavy atoms of the add/remove quantiles: the lattice test, then a private choice of ONE heavy level
(docs/theory/quantiles.md#the-heavy-level-without-n).

After the lattice test (:func:`~smoothdp.central.quantiles.em_samplers.lattice_test_from_counts`) says
"heavy", the candidates are "every level heavy" and, for each level ℓ of the lattice in coarse-to-fine order,
"heavy on ℓ" (every other level light). With N the records that are atoms (points of any level), N_ℓ those
that are points of level ℓ and D_ℓ those that are points of ℓ and of a coarser level, the scores are

    q_every = 0,        q_ℓ = clamp(2·N_ℓ − D_ℓ − N, −C, C)

(the records ℓ covers, minus the atoms it misses, minus the records a coarser level covers too), integers
capped at a public C. No n is read: an added record z changes q_ℓ by 1 − [z on a coarser level] ∈ {0, 1}
if z is on ℓ, by −1 if z is an atom off ℓ, by 0 otherwise, so every score has sensitivity 1 under
add/remove; the candidate is drawn with probability ∝ exp(coef·q) with 2·coef + 4η ≤ ε_s
(:func:`~smoothdp.central.quantiles.em_samplers.capped_calibration`, every parameter public): ε_s-DP.
On data tied at one level the coarsest level holding them scores about (1 − share on coarser levels)·n,
every other candidate 0 or less; "every level heavy" (the previous behaviour) wins while that evidence is
weak against 1/ε_s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atom_selection import coarse_to_fine
from smoothdp.central.quantiles.atoms import HEAVY_MASS, Atoms, LatticeSpec
from smoothdp.central.quantiles.em_samplers import (
    capped_calibration,
    heavy_atoms,
    lattice_test_from_counts,
)
from smoothdp.central.quantiles.exact_draws import exact_categorical
from smoothdp.keywords import check_keywords_of

__all__ = [
    "ADD_REMOVE_ATOMS_PROOF",
    "LEVEL_SHARE",
    "PRE_STAGE_SHARE",
    "add_remove_atoms",
    "atoms_from_counts",
    "heavy_level_counts",
    "heavy_level_scores",
    "level_choice_calibration",
    "pre_stage_epsilon",
    "sample_heavy_level",
]

#: The proof of the add/remove quantiles with atoms: the test, the level choice, then Lemma 9 (or 10).
ADD_REMOVE_ATOMS_PROOF = "docs/theory/quantiles.md#the-heavy-level-without-n"
#: The share of ε of the add/remove pre-stage: the lattice test (5% of ε, as before the level choice, so
#: that its threshold is unchanged) and the level choice (2.5% of ε); the main mechanism keeps 92.5%.
PRE_STAGE_SHARE = 0.075
#: The share of the pre-stage's ε spent on choosing the level; the rest tests.
LEVEL_SHARE = 1.0 / 3.0


def pre_stage_epsilon(epsilon: float) -> float:
    """The ε of the add/remove pre-stage (test and level choice) out of the caller's ε."""
    return PRE_STAGE_SHARE * epsilon


def level_choice_calibration(epsilon_select: float) -> tuple[float, float, float]:
    """(coef, cap, η) of the level choice, public: :func:`capped_calibration` at ε_s with the scores'
    add/remove sensitivity 1 (W = 1: no logarithm of a length)."""
    return capped_calibration(epsilon=epsilon_select, sensitivity=1.0, width=None)


def heavy_level_counts(sorted_x: NDArray[np.float64], light: Atoms) -> NDArray[np.int64]:
    """[N, then N_ℓ and D_ℓ for each ℓ coarse to fine] of the records (module docstring), in chunks."""
    order = coarse_to_fine(light)
    out = np.zeros(1 + 2 * len(order), dtype=np.int64)
    chunk = 1 << 16
    for i in range(0, sorted_x.size, chunk):
        part = sorted_x[i : i + chunk]
        coarser = np.zeros(part.size, dtype=bool)
        for k, index in enumerate(order):
            on = light.levels[index].contains(part)
            out[1 + 2 * k] += int(np.count_nonzero(on))
            out[2 + 2 * k] += int(np.count_nonzero(on & coarser))
            coarser |= on
        out[0] += int(np.count_nonzero(coarser))
    return out


def heavy_level_scores(counts: NDArray[np.int64], cap: float) -> list[float]:
    """[q_every = 0, q_ℓ = clamp(2N_ℓ − D_ℓ − N, −C, C) for ℓ coarse to fine] from
    :func:`heavy_level_counts` (integers: exact in Python ints, then exact floats once capped, C < 2^53)."""
    levels = (len(counts) - 1) // 2
    total = int(counts[0])
    bound = int(cap)
    scores = [0.0]
    for k in range(levels):
        raw = 2 * int(counts[1 + 2 * k]) - int(counts[2 + 2 * k]) - total
        scores.append(float(max(-bound, min(bound, raw))))
    return scores


def sample_heavy_level(
    counts: NDArray[np.int64], light: Atoms, epsilon_select: float, rng: np.random.Generator
) -> int | None:
    """The exponential mechanism over the candidates (module docstring) from :func:`heavy_level_counts`:
    the index in ``light.levels`` of the heavy level, or None for every level heavy."""
    coef, cap, _ = level_choice_calibration(epsilon_select)
    scores = heavy_level_scores(counts, cap)
    logw = coef * np.array(scores, dtype=np.float64)
    logw[0] = math.log(len(scores) - 1)  # base measure: mass L on "every level heavy", 1 on each level
    pick = exact_categorical(logw, rng)
    return None if pick == 0 else coarse_to_fine(light)[pick - 1]


def add_remove_atoms(
    sorted_x: NDArray[np.float64],
    lattice: LatticeSpec,
    light: Atoms,
    epsilon_pre: float,
    rng: np.random.Generator,
    *,
    numerics: str,
) -> tuple[Atoms, dict[str, Any]]:
    """The atoms of the add/remove mechanism and the report (a private output, covered by the guarantee:
    ``epsilon`` the test's, ``epsilon_level`` the choice's): the lattice test at (1 − LEVEL_SHARE)·ε_pre;
    if heavy, the level choice at LEVEL_SHARE·ε_pre (spent whatever the test says: the split is public)."""
    counts = heavy_level_counts(sorted_x, light)
    return atoms_from_counts(counts, sorted_x.size, lattice, light, epsilon_pre, rng, numerics=numerics)


def atoms_from_counts(
    counts: NDArray[np.int64],
    n: int,
    lattice: LatticeSpec,
    light: Atoms,
    epsilon_pre: float,
    rng: np.random.Generator,
    *,
    numerics: str,
) -> tuple[Atoms, dict[str, Any]]:
    """:func:`add_remove_atoms` from the records' counts (:func:`heavy_level_counts`, summed over any
    partition of the records) and their number n: every statistic of the pre-stage is a sum of per-record
    terms, so pooled counts of disjoint parts give the same mechanism (a grouped release runs it once on
    the whole column, docs/theory/tables.md#one-lattice-choice-for-every-group)."""
    eps_select = LEVEL_SHARE * epsilon_pre
    info = lattice_test_from_counts(int(counts[0]), n, epsilon_pre - eps_select, rng, numerics=numerics)
    info["epsilon_level"] = eps_select
    if info["atoms"] != "heavy":
        info["level"] = None
        return light, info
    level = sample_heavy_level(counts, light, eps_select, rng)
    if level is None:
        info["level"] = "every"
        return heavy_atoms(lattice), info
    info["level"] = light.levels[level].spacing
    return light.with_level_factor(level, HEAVY_MASS), info


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
