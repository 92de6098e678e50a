"""One lattice choice for every group of a grouped quantile
(docs/theory/tables.md#one-lattice-choice-for-every-group).

Under add/remove a single-column median or quantile spends 7.5% of its ε on a private pre-stage (the
lattice test, then the choice of one heavy level) before the exponential mechanism, because tied data are
released exactly only on heavy atoms. Run per group, that pre-stage sees only the group's records, and a
small group's evidence is too weak against its noise: its ties stay on light atoms. Every statistic of the
pre-stage is a sum of per-record terms (:func:`~smoothdp.central.quantiles.heavy_level.heavy_level_counts`),
so a grouped release runs it **once on the pooled records of every group**, at the same share of the
statistic's per-group ε, and gives every group the chosen atoms as a public choice (``lattice=σ``,
``atoms="heavy"`` or ``atoms="light"``) with the rest of its ε:

    ε_pre = 0.075·ε_g (once, on the pooled column),   ε_main = ε_g − ε_pre (each group, in parallel).

A person's at most k rows move the pooled counts by at most k records, so the pre-stage costs k·ε_pre per
person by group privacy, as each group's call costs (its rows)·ε_main: with ε_g = ε_stat/k, ε_stat in all.

The pooled choice also offers the **round numbers**: the decimal levels 10, 100 and 1000 above the
integers (:data:`COARSE_SPACINGS`; incomes to the hundred, prices to the ten). A coarse level σ is given
to the groups together with every decimal level below it down to the integers, all heavy
(``lattice=(σ, …, 10, 1)``), so that a multiple of 100 weighs more than a multiple of 10, which weighs
more than an integer, and no integer of the column loses its atom
(docs/theory/tables.md#round-numbers).

The choice is a private output covered by the guarantee and is not reported: the table's public
description names the rule, never its outcome.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import (
    MULTISCALE,
    MULTISCALE_SPACINGS,
    ROUND_SPACINGS,
    Atoms,
    LatticeSpec,
    build_atoms,
)
from smoothdp.central.quantiles.heavy_level import atoms_from_counts, heavy_level_counts, pre_stage_epsilon
from smoothdp.keywords import check_keywords_of
from smoothdp.validation import prepare_records

__all__ = [
    "CHOICE_LEVELS",
    "COARSE_SPACINGS",
    "LATTICE_CHOICE_PROOF",
    "QUANTILE_STATISTICS",
    "LatticeChoice",
    "choice_atoms",
    "choose_lattice",
    "column_counts",
    "prepared_counts",
    "public_description",
    "round_numbers",
    "runs_lattice_choice",
]

#: The proof of the pooled pre-stage.
LATTICE_CHOICE_PROOF = "docs/theory/tables.md#one-lattice-choice-for-every-group"
#: The decimal levels above the integers that the pooled choice offers besides the default's levels.
COARSE_SPACINGS = tuple(float(s) for s in ROUND_SPACINGS)
#: Every level the pooled choice counts and may choose: the multi-scale default's, then the coarse ones.
CHOICE_LEVELS: tuple[float, ...] = tuple(p / q for p, q in MULTISCALE_SPACINGS) + COARSE_SPACINGS
#: The statistics whose single-column function runs the add/remove lattice pre-stage.
QUANTILE_STATISTICS = ("median", "quantile", "quantiles")
#: The details of a group's release that depend on the chosen atoms (scrubbed from the public description).
_CHOICE_DETAILS = ("lattice", "atoms", "epsilon_in_weights", "rank_cap", "lattice_test")


@dataclass(frozen=True)
class LatticeChoice:
    """What every group of one statistic receives: the lattice and the public atoms choice (from the pooled
    pre-stage), and the ε left for each group's call."""

    lattice: LatticeSpec
    atoms: str
    epsilon_main: float
    epsilon_pre: float

    def call_options(self) -> dict[str, Any]:
        return {"lattice": self.lattice, "atoms": self.atoms}

    def describe(self, meta: dict[str, Any]) -> dict[str, Any]:
        """:func:`public_description` of a group's release under this choice."""
        return public_description(meta, self)


def runs_lattice_choice(name: str, call_neighbours: str) -> bool:
    """Whether a statistic of the table runs the pooled pre-stage (public: its name and the relation of the
    single-column calls)."""
    return name in QUANTILE_STATISTICS and call_neighbours == "add_remove"


def choice_atoms() -> Atoms:
    """The levels the pooled choice counts (:data:`CHOICE_LEVELS`) at their light masses."""
    atoms = build_atoms(CHOICE_LEVELS)
    assert atoms is not None
    return atoms


def round_numbers(spacing: float) -> tuple[float, ...]:
    """The lattice a group receives when the choice is the coarse level ``spacing`` (one of
    :data:`COARSE_SPACINGS`): that level and every coarse level below it, then the integers."""
    return (*(s for s in reversed(COARSE_SPACINGS) if s <= spacing), 1.0)


def prepared_counts(prepared: NDArray[np.float64]) -> NDArray[np.int64]:
    """The pre-stage's counts ([N, then N_ℓ and D_ℓ per level]) of records already under the data policy of
    the single-column functions (any order); counts of disjoint parts add up."""
    return heavy_level_counts(prepared, choice_atoms())


def column_counts(
    values: NDArray[np.float64], bounds: tuple[float, float], *, name: str
) -> NDArray[np.int64]:
    """:func:`prepared_counts` of one raw part of a column (NaN → the bounds' midpoint, clipped into the
    bounds, as the single-column functions prepare it)."""
    prepared = prepare_records(values, bounds[0], bounds[1], clip=True, name=f"column {name!r}", min_size=0)
    return prepared_counts(prepared)


def _split(epsilon_group: float) -> tuple[float, float]:
    """(ε_pre, ε_main) with ε_pre + ε_main ≤ ε_g exactly."""
    eps_pre = pre_stage_epsilon(epsilon_group)
    eps_main = epsilon_group - eps_pre
    while Fraction(eps_pre) + Fraction(eps_main) > Fraction(epsilon_group):
        eps_main = math.nextafter(eps_main, 0.0)
    return eps_pre, eps_main


def choose_lattice(
    counts: NDArray[np.int64], n: int, *, epsilon_group: float, rng: np.random.Generator
) -> LatticeChoice:
    """The pooled pre-stage (module docstring) on the counts of every kept record of the column (n of
    them, :func:`prepared_counts`): the lattice test at 5% of ε_g, the level choice among
    :data:`CHOICE_LEVELS` at 2.5%, with the exact samplers."""
    eps_pre, eps_main = _split(epsilon_group)
    light = choice_atoms()
    _, info = atoms_from_counts(counts, n, MULTISCALE, light, eps_pre, rng, numerics="exact")
    level = info["level"]
    if level is None:
        return LatticeChoice(MULTISCALE, "light", eps_main, eps_pre)
    if level == "every":
        return LatticeChoice(MULTISCALE, "heavy", eps_main, eps_pre)
    if level in COARSE_SPACINGS:
        return LatticeChoice(round_numbers(level), "heavy", eps_main, eps_pre)
    return LatticeChoice(float(level), "heavy", eps_main, eps_pre)


def public_description(meta: dict[str, Any], choice: LatticeChoice) -> dict[str, Any]:
    """A group's public description with every detail that depends on the (private) choice replaced by the
    rule that made it."""
    if not meta:
        return meta
    details = {k: v for k, v in meta.get("details", {}).items() if k not in _CHOICE_DETAILS}
    details["lattice"] = (
        "multiscale and round numbers (10, 100, 1000): one level chosen privately for the whole column"
    )
    details["lattice_choice"] = {
        "epsilon": choice.epsilon_pre,
        "epsilon_per_group": choice.epsilon_main,
        "proof": LATTICE_CHOICE_PROOF,
    }
    return {**meta, "details": details}


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
