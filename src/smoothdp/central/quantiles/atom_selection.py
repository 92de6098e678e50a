"""The private choice of heavy atoms for JointExp on a public lattice: which level of the lattice, if any,
holds nearly all the records (docs/theory/quantiles.md#choosing-the-heavy-level).

The candidates are "light" (every level keeps its light mass) and, for each level ℓ of the lattice in
coarse-to-fine order (spacing descending), "heavy on ℓ". With N_ℓ the number of records that are points of
level ℓ, C_ℓ the number that are points of a coarser level, N the number that are points of any level and
τ = 0.9n + 1/ε_t, the scores are

    q_light = τ − N,        q_ℓ = min(N_ℓ − τ, τ − C_ℓ),

so that the coarsest level holding more than τ records scores about 0.1n, every other candidate about
−0.1n or less.

On the default multi-scale lattice the candidates also include the **round numbers**: for σ in 10, 100,
1000, "the integers and every round level up to σ heavy"
(:meth:`~smoothdp.central.quantiles.atoms.Atoms.with_round_numbers`), with R_σ the records that are integer
multiples of σ and

    q_σ = min(q_1, R_σ − (ρn + 1/ε_t)),   ρ = 0.4,

q_1 the integers' score: a round level ties with the integers when at most about half the records are
integers off its multiples, and scores far below otherwise. Each is offered 2, 4 and 8 times (a public prior
that prefers the coarsest round level among those that tie).

Each count moves by at most one under substitution and min is 1-Lipschitz, so every score has sensitivity 1;
the candidate is drawn with probability ∝ prior·exp(ε_t·q/2) (the exponential mechanism with a public base
measure, ε_t-DP; drawn exactly from certified float weights,
docs/theory/quantiles.md#sampling-exactly-from-float-weights).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import MULTISCALE, ROUND_SPACINGS, Atoms, Level
from smoothdp.central.quantiles.exact_draws import exact_categorical, log_weight_margin
from smoothdp.scale.engine import Records

__all__ = [
    "ROUND_PRIOR",
    "ROUND_THRESHOLD",
    "TEST_FRACTION",
    "TEST_SHARE",
    "coarse_to_fine",
    "offers_round_numbers",
    "round_counts",
    "round_scores",
    "scores_from_counts",
    "select_heavy_level",
    "selected_level",
    "selection_confident",
    "selection_counts",
    "selection_outcomes",
    "selection_runs",
    "selection_scores",
]

#: Share of ε spent on the selection.
TEST_SHARE = 0.05
#: A level is heavy when more than this share of the records (plus 1/ε_t) are its points.
TEST_FRACTION = 0.9
#: ρ: a round level ties with the integers when more than this share of the records (plus 1/ε_t) are integer
#: multiples of it (and the integers hold more than TEST_FRACTION).
ROUND_THRESHOLD = 0.4
#: How many times each round level of ROUND_SPACINGS is offered (a public prior for the coarsest).
ROUND_PRIOR = (2, 4, 8)
#: The integers, whose index the round counts read.
_INTEGERS = Level(1, 1)


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


def _finer_supersets(levels: Sequence[Level]) -> list[tuple[int, float] | None]:
    """For each level ℓ, a finer level j whose points include ℓ's within |v| ≤ R_j, and R_j (public): the
    finest level whose spacing divides σ_ℓ exactly (σ_ℓ/σ_j an integer). A point p_ℓ(k) = fl(k·σ_ℓ) is
    then fl(k′·σ_j) with k′ = k·σ_ℓ/σ_j (both correctly rounded from the same rational), a point of level j
    when |k′| ≤ K_j, which |v| ≤ R_j = (K_j − 1)·fl(σ_j)·(1 − 2^-40) ensures (|p_j(k′) − k′σ_j| ≤ σ_j/8)."""
    out: list[tuple[int, float] | None] = []
    for level in levels:
        best: tuple[int, float] | None = None
        for j, finer in enumerate(levels):
            ratio = level.value / finer.value
            if finer is not level and ratio.denominator == 1 and ratio > 1:
                if best is None or finer.value < levels[best[0]].value:
                    best = (j, (finer.reach - 1.0) * finer.spacing * (1.0 - 2.0**-40))
        out.append(best)
    return out


def _derivations(
    atoms: Atoms, bounds: tuple[float, float] | None
) -> tuple[tuple[int, float, float] | None, ...]:
    """For each level ℓ: (j, r, r·K_ℓ) when its membership follows from a finer level j's index on every
    record in ``bounds`` (public: the levels and the bounds), else None (tested directly). j is ℓ's finest
    divisor level (:func:`_finer_supersets`), which has no finer divisor itself; within |v| ≤ R_j,
    v ∈ Λ_ℓ ⇔ v = p_j(k) with r | k and |k| ≤ r·K_ℓ, r = σ_ℓ/σ_j (both points correctly rounded from the
    same rational k·σ_j). Without bounds, or with bounds beyond R_j, ℓ is tested directly."""
    return _derivation_plan(tuple((level.numer, level.denom) for level in atoms.levels), bounds)


@functools.lru_cache(maxsize=256)
def _derivation_plan(
    fractions: tuple[tuple[int, int], ...], bounds: tuple[float, float] | None
) -> tuple[tuple[int, float, float] | None, ...]:
    """:func:`_derivations` of the levels P/Q in ``fractions`` (cached: public values in, a tuple out)."""
    levels = [Level(numer, denom) for numer, denom in fractions]
    reach = None if bounds is None else max(abs(bounds[0]), abs(bounds[1]))
    out: list[tuple[int, float, float] | None] = []
    for level, sup in zip(levels, _finer_supersets(levels), strict=True):
        if sup is None or reach is None or reach > sup[1]:
            out.append(None)
            continue
        ratio = level.value / levels[sup[0]].value
        out.append((sup[0], float(ratio), float(ratio) * float(level.reach)))
    return tuple(out)


def selection_counts(
    block: NDArray[np.float64], atoms: Atoms, bounds: tuple[float, float] | None = None
) -> NDArray[np.int64]:
    """[N, N_ℓ and C_ℓ for ℓ in coarse-to-fine order] of a block of records (any order) in the public
    ``bounds``: blocks' counts add up (a per-block counter of
    :meth:`smoothdp.scale.engine.Records.block_totals`), in chunks. The same numpy work on every block of a
    given size: the levels with a finer divisor level read their membership off its index
    (:func:`_derivations`: one exact divisibility test per record), the others are tested on every record
    (:meth:`~smoothdp.central.quantiles.atoms.Level.index_of`)."""
    values = np.asarray(block, dtype=np.float64).ravel()
    order = coarse_to_fine(atoms)
    plan = _derivations(atoms, bounds)
    levels = len(order)
    out = np.zeros(1 + 2 * levels, dtype=np.int64)
    chunk = 1 << 16
    for i in range(0, values.size, chunk):
        part = values[i : i + chunk]
        index: dict[int, tuple[NDArray[np.float64], NDArray[np.bool_]]] = {}
        rows: dict[int, NDArray[np.bool_]] = {}
        for ell, how in enumerate(plan):
            if how is None:
                index[ell] = atoms.levels[ell].index_of(part)
                rows[ell] = index[ell][1]
        for ell, how in enumerate(plan):
            if how is not None:
                j, ratio, limit = how
                k, on = index[j]
                # r | k ⇔ rint(k/r)·r = k: every product is an integer below 2^53, so exact
                rows[ell] = on & (np.rint(k / ratio) * ratio == k) & (np.abs(k) <= limit)
        coarser = np.zeros(part.size, dtype=bool)
        for position, ell in enumerate(order):
            out[1 + levels + position] += int(np.count_nonzero(coarser))
            out[1 + position] += int(np.count_nonzero(rows[ell]))
            coarser |= rows[ell]
        out[0] += int(np.count_nonzero(coarser))
    return out


def offers_round_numbers(atoms: Atoms) -> bool:
    """Whether the selection on these light atoms offers the round numbers (public): on the default
    multi-scale lattice, which holds the integers."""
    return atoms.spec == MULTISCALE


def round_counts(block: NDArray[np.float64]) -> NDArray[np.int64]:
    """[R_σ for σ in ROUND_SPACINGS]: the records of a block that are integer multiples of σ; blocks' counts
    add up. The same numpy work on every block of a given size. Exact: for an integer k with |k| ≤ 2^51
    (the integers' reach), fl(k·fl(1/σ)) is within |k|·2^-52/σ ≤ 1/16 of k/σ, so rint of it is k/σ when σ | k
    and is not otherwise, and rint(·)·σ == k decides σ | k (products of integers below 2^53: exact)."""
    values = np.asarray(block, dtype=np.float64).ravel()
    out = np.zeros(len(ROUND_SPACINGS), dtype=np.int64)
    chunk = 1 << 16
    for i in range(0, values.size, chunk):
        k, on = _INTEGERS.index_of(values[i : i + chunk])
        for j, spacing in enumerate(ROUND_SPACINGS):
            out[j] += int(np.count_nonzero(on & (np.rint(k * (1.0 / spacing)) * spacing == k)))
    return out


def scores_from_counts(counts: NDArray[np.int64], n: int, epsilon_test: float) -> list[float]:
    """[q_light, q_ℓ for ℓ in coarse-to-fine order] from :func:`selection_counts` of the records."""
    tau = _threshold(n, epsilon_test)
    levels = (len(counts) - 1) // 2
    scores = [tau - float(counts[0])]
    for k in range(levels):
        scores.append(min(float(counts[1 + k]) - tau, tau - float(counts[1 + levels + k])))
    return scores


def selection_scores(sorted_x: NDArray[np.float64], atoms: Atoms, n: int, epsilon_test: float) -> list[float]:
    """[q_light, q_ℓ for ℓ in coarse-to-fine order] on the (clipped) records."""
    return scores_from_counts(selection_counts(sorted_x, atoms), n, epsilon_test)


def selected_level(atoms: Atoms, pick: int) -> int | None:
    """The index in ``atoms.levels`` of candidate ``pick`` of :func:`selection_scores` (None: light)."""
    return None if pick == 0 else coarse_to_fine(atoms)[pick - 1]


def _integers_index(light: Atoms) -> int:
    return next(i for i, level in enumerate(light.levels) if level.value == 1)


def round_scores(
    scores: Sequence[float], light: Atoms, rounds: NDArray[np.int64], n: int, epsilon_test: float
) -> list[float]:
    """[q_σ for σ in ROUND_SPACINGS] = min(q_1, R_σ − (ρn + 1/ε_t)) from the candidates' ``scores``
    (:func:`scores_from_counts`) and :func:`round_counts` (module docstring)."""
    q_integers = scores[1 + coarse_to_fine(light).index(_integers_index(light))]
    threshold = ROUND_THRESHOLD * n + 1.0 / epsilon_test
    return [min(q_integers, float(r) - threshold) for r in rounds]


def selection_outcomes(light: Atoms, heavy_mass: float) -> list[Atoms]:
    """Every atom measure the selection may set (public): ``light``, then each level made heavy
    (``heavy_mass``·σ) in the order of ``light.levels``, then (on the multi-scale lattice) the integers and
    the round levels up to each σ of ROUND_SPACINGS heavy."""
    out = [light] + [light.with_level_factor(i, heavy_mass) for i in range(len(light.levels))]
    if offers_round_numbers(light):
        integers = _integers_index(light)
        out += [light.with_round_numbers(integers, s, heavy_mass) for s in ROUND_SPACINGS]
    return out


def select_heavy_level(
    data: Records | NDArray[np.float64],
    light: Atoms,
    *,
    n: int,
    epsilon_test: float,
    heavy_mass: float,
    bounds: tuple[float, float],
    rng: np.random.Generator,
) -> tuple[Atoms, dict[str, Any]]:
    """The selection on the records clipped into the public ``bounds``
    (:class:`~smoothdp.scale.engine.Records`, or values in any order; one pass of
    :func:`selection_counts`, with :func:`round_counts` on the multi-scale lattice): the exponential
    mechanism over the scores (sensitivity 1 under substitution) and the public prior, drawn exactly from
    its certified float weights at ε_t − 4η. Returns the atoms it sets (``light``; ``light`` with the chosen
    level's mass ``heavy_mass``·σ; or the integers and the round levels up to σ heavy) and its report (a
    private output, covered by the guarantee: ``level`` is the coarsest heavy level's spacing, 10, 100 or
    1000 for the round numbers)."""
    rounding = offers_round_numbers(light)
    kernel = functools.partial(_counts_kernel, atoms=light, bounds=bounds, rounding=rounding)
    counts = data.block_totals(kernel) if isinstance(data, Records) else kernel(data)
    size = 1 + 2 * len(light.levels)
    scores = scores_from_counts(counts[:size], n, epsilon_test)
    # the round levels, each offered ROUND_PRIOR times (an exact public prior: equal float weights)
    rounds = round_scores(scores, light, counts[size:], n, epsilon_test) if rounding else []
    offered = (
        [s for s, times in zip(ROUND_SPACINGS, ROUND_PRIOR, strict=True) for _ in range(times)]
        if rounding
        else []
    )
    all_scores = scores + [rounds[ROUND_SPACINGS.index(s)] for s in offered]
    coef = 0.5 * (epsilon_test - 4.0 * log_weight_margin(epsilon=epsilon_test, n=n, width=None))
    pick = exact_categorical(coef * np.array(all_scores), rng)
    if pick >= len(scores):
        spacing = offered[pick - len(scores)]
        atoms = light.with_round_numbers(_integers_index(light), spacing, heavy_mass)
        return atoms, {"epsilon": epsilon_test, "atoms": "heavy", "level": float(spacing)}
    level = selected_level(light, pick)
    atoms = light if level is None else light.with_level_factor(level, heavy_mass)
    info = {
        "epsilon": epsilon_test,
        "atoms": "light" if level is None else "heavy",
        "level": None if level is None else light.levels[level].spacing,
    }
    return atoms, info


def _counts_kernel(
    block: NDArray[np.float64], atoms: Atoms, bounds: tuple[float, float], rounding: bool
) -> NDArray[np.int64]:
    """:func:`selection_counts`, then :func:`round_counts` when the round numbers are offered."""
    counts = selection_counts(block, atoms, bounds)
    return np.concatenate([counts, round_counts(block)]) if rounding else counts
