"""Worst-case privacy loss of whole tables over adversarial neighbouring frames, from exact output laws
written out here (not from the code's samplers), with broken twins of the composition rules; and the exact
(ε, δ) of the private key selection (docs/theory/tables.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import smoothdp
from smoothdp.central.quantiles import ExponentialQuantile
from smoothdp.tables import composition, query
from smoothdp.tables.partition import selection_scale, selection_threshold

BOUNDS = (0.0, 10.0)
KEYS = ["A", "B", "C"]
ATOM_MASS_PER_SPACING = 2.0**-14  # docs/theory/quantiles.md#choosing-the-atom-mass


# -- the law of one group's median (add/remove exponential mechanism on the integer lattice) --------------
HEAVY_MASS_PER_SPACING = 64.0  # the atoms after a passed lattice test


def _tie_dist(xs: np.ndarray, t: float, y: np.ndarray) -> np.ndarray:
    below = np.array([np.sum(xs < v) for v in y], float)
    at_most = np.array([np.sum(xs <= v) for v in y], float)
    return np.maximum(0.0, np.maximum(below - t, t - at_most))


def _heavy_probability(xs: np.ndarray, epsilon_test: float) -> float:
    """P(S + Z ≥ 3t): S = 2·#(integers) − n, Z discrete Laplace of scale t = 1/ε_t (rounded up)."""
    t = math.nextafter(1.0 / epsilon_test, math.inf)
    stat = 2 * int(np.sum(xs == np.round(xs))) - xs.size
    alpha = math.exp(-1.0 / t)
    m = math.ceil(3.0 * t) - stat  # P(Z ≥ m)
    if m >= 1:
        return alpha**m / (1 + alpha)
    return 1.0 - alpha ** (1 - m) / (1 + alpha)


def _log_law(xs: np.ndarray, coef: float, epsilon_test: float, pieces: np.ndarray, atoms: np.ndarray):
    """ln of the output law of the median (target n/2, the lattice test then the EM with heavy or light
    atoms on the integers): the density on the continuum pieces and the mass of each integer atom."""
    lo, hi = BOUNDS
    t = 0.5 * xs.size
    cuts = np.unique(np.concatenate(([lo, hi], xs)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    lattice = np.arange(lo, hi + 1.0)
    cont = np.sum(np.diff(cuts) * np.exp(-coef * _tie_dist(xs, t, mids)))
    grid = float(np.sum(np.exp(-coef * _tie_dist(xs, t, lattice))))
    p_heavy = _heavy_probability(xs, epsilon_test)
    dens, mass = np.zeros(pieces.size), np.zeros(atoms.size)
    for p, c in ((p_heavy, HEAVY_MASS_PER_SPACING), (1 - p_heavy, ATOM_MASS_PER_SPACING)):
        z = cont + c * grid
        dens += p * np.exp(-coef * _tie_dist(xs, t, pieces)) / z
        mass += p * c * np.exp(-coef * _tie_dist(xs, t, atoms)) / z
    return np.log(dens), np.log(mass)


def _group_loss(a: np.ndarray, b: np.ndarray, coef: float, epsilon_test: float) -> tuple[float, float]:
    """sup ln P_a/P_b and the reverse over every piece (densities) and lattice point (masses)."""
    lo, hi = BOUNDS
    cuts = np.unique(np.concatenate(([lo, hi], a, b)))
    pieces, atoms = 0.5 * (cuts[:-1] + cuts[1:]), np.arange(lo, hi + 1.0)
    da, ma = _log_law(np.sort(a), coef, epsilon_test, pieces, atoms)
    db, mb = _log_law(np.sort(b), coef, epsilon_test, pieces, atoms)
    d = np.concatenate((da - db, ma - mb))
    return float(d.max()), float(-d.min())


def _table_loss(frame_a: pd.DataFrame, frame_b: pd.DataFrame, per_group_epsilon: float) -> float:
    """The table of medians is a product over groups: its loss is the larger of the two directions' sums."""
    mech = ExponentialQuantile(0.5, epsilon=per_group_epsilon, bounds=BOUNDS, neighbours="add_remove")
    coef, epsilon_test = mech.capped[0], mech.epsilon_test
    forward = backward = 0.0
    for key in KEYS:
        a = frame_a.loc[frame_a["g"] == key, "v"].to_numpy(float)
        b = frame_b.loc[frame_b["g"] == key, "v"].to_numpy(float)
        f, r = _group_loss(a, b, coef, epsilon_test)
        forward, backward = forward + f, backward + r
    return max(forward, backward)


def _frame(rows: list[tuple[str, float, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["g", "v", "person"])


#: Bimodal groups, where one row flips the median (the exponential mechanism's worst case).
BASE = [
    *[("A", v, i) for i, v in enumerate((1.0, 1.0, 1.0, 10.0, 10.0, 10.0))],
    *[("B", v, 10 + i) for i, v in enumerate((0.0, 0.0, 9.0, 9.0, 9.0))],
    ("C", 1.0, 20),
]
#: (relation, k, frame, neighbour): a row moving between groups, a row moving to another value of its
#: group, a row added, a person with three rows in two groups added or removed, and a person with three
#: rows replaced by one with three rows in other groups.
PAIRS = [
    ("substitution", None, BASE, [*BASE[:5], ("B", 10.0, 5), *BASE[6:]]),
    ("substitution", None, BASE, [*BASE[:5], ("A", 1.0, 5), *BASE[6:]]),
    ("add_remove", None, BASE, [*BASE, ("A", 10.0, 30)]),
    ("add_remove", 3, BASE, [*BASE, ("A", 10.0, 30), ("A", 10.0, 30), ("B", 0.0, 30)]),
    ("add_remove", 3, [*BASE, ("A", 1.0, 30), ("B", 9.0, 30), ("B", 9.0, 30)], BASE),
    (
        "substitution",
        3,
        [*BASE, ("A", 1.0, 30), ("A", 1.0, 30), ("C", 0.0, 30)],
        [*BASE, ("B", 0.0, 31), ("B", 0.0, 31), ("C", 10.0, 31)],
    ),
]


def _per_group_epsilon(frame: pd.DataFrame, relation: str, k: int | None, epsilon: float) -> float:
    unit = {} if k is None else {"privacy_unit": "person", "contributions": k}
    release = smoothdp.aggregate(
        frame, "g", {"v": "median"}, bounds={"v": BOUNDS}, epsilon=epsilon, keys=KEYS,
        neighbours=relation, rng=0, return_release=True, **unit,
    )  # fmt: skip
    (share,) = release.statistics
    assert share.neighbours == "add_remove" and release.guarantee.epsilon == epsilon
    assert release.neighbours == relation
    return share.epsilon_per_group


@pytest.mark.parametrize(("relation", "k", "rows_a", "rows_b"), PAIRS)
def test_a_table_of_medians_stays_within_its_guarantee(relation, k, rows_a, rows_b):
    eps = 1.0
    a, b = _frame(rows_a), _frame(rows_b)
    loss = _table_loss(a, b, _per_group_epsilon(a, relation, k, eps))
    assert loss <= eps * (1 + 1e-9)


def _no_halving(**kwargs):
    """Broken twin: the substitution table charged ε but each person given ε under add/remove."""
    right = _original_budget(**kwargs)
    wrong = _original_budget(**{**kwargs, "neighbours": "add_remove"})
    return composition.TableBudget(right.guarantee, "add_remove", wrong.person_epsilon, 0.0, wrong.rows)


def _no_group_privacy(**kwargs):
    """Broken twin: each group's call gets ε_stat, not ε_stat/k, for persons with k rows."""
    right = _original_budget(**kwargs)
    return composition.TableBudget(right.guarantee, right.call_neighbours, right.person_epsilon, 0.0, 1)


_original_budget = composition.table_budget


@pytest.mark.parametrize(
    ("twin", "pair"),
    [
        (_no_halving, PAIRS[0]),
        (_no_halving, PAIRS[5]),
        (_no_group_privacy, PAIRS[4]),
        (_no_group_privacy, PAIRS[5]),
    ],
)
def test_broken_composition_rules_exceed_the_guarantee(monkeypatch, twin, pair):
    monkeypatch.setattr(query, "table_budget", twin)
    relation, k, rows_a, rows_b = pair
    a, b = _frame(rows_a), _frame(rows_b)
    assert _table_loss(a, b, _per_group_epsilon(a, relation, k, 1.0)) > 1.1


# -- private key selection ----------------------------------------------------------------------------------
def _survive(count: int, scale: float, threshold: int) -> float:
    """P(count + Z ≥ τ) for Z discrete Laplace of scale t, summed from the pmf."""
    alpha = math.exp(-1.0 / scale)
    z = np.arange(-4000, 4001)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    return float(pmf[count + z >= threshold].sum())


def _subset_law(counts: dict[str, int], scale: float, threshold: int) -> dict[frozenset[str], float]:
    keys = sorted(counts)
    p = {k: _survive(counts[k], scale, threshold) for k in keys}
    law = {}
    for bits in itertools.product((0, 1), repeat=len(keys)):
        chosen = frozenset(k for k, bit in zip(keys, bits, strict=True) if bit)
        law[chosen] = math.prod(p[k] if bit else 1 - p[k] for k, bit in zip(keys, bits, strict=True))
    return law


def _hockey(p: dict, q: dict, eps: float) -> float:
    return sum(max(0.0, p.get(s, 0.0) - math.exp(eps) * q.get(s, 0.0)) for s in set(p) | set(q))


#: Person counts per key before, and after adding one person who holds two keys (l = 2).
SELECTION_PAIRS = [
    ({"A": 3, "B": 1}, {"A": 3, "B": 1, "N1": 1, "N2": 1}),
    ({"A": 3, "B": 1}, {"A": 4, "B": 1, "N1": 1}),
    ({"A": 3, "B": 1}, {"A": 4, "B": 2}),
    ({"A": 12, "B": 12}, {"A": 13, "B": 13}),
    ({}, {"N1": 1, "N2": 1}),
]


def _worst_delta(eps: float, delta: float, scale: float, threshold: int) -> float:
    worst = 0.0
    for before, after in SELECTION_PAIRS:
        p, q = _subset_law(before, scale, threshold), _subset_law(after, scale, threshold)
        worst = max(worst, _hockey(p, q, eps), _hockey(q, p, eps))
    return worst


def test_the_key_selection_is_epsilon_delta_private():
    for eps, delta in ((1.0, 0.05), (0.5, 1e-3), (2.0, 1e-6)):
        scale = selection_scale(eps, 2)
        threshold = selection_threshold(epsilon=eps, delta=delta, max_groups=2)
        assert _worst_delta(eps, delta, scale, threshold) <= delta


def test_a_selection_that_forgets_the_groups_per_person_is_not():
    """Broken twin: scale and threshold computed for l = 1 while a person holds two keys."""
    eps, delta = 1.0, 0.05
    scale = selection_scale(eps, 1)
    threshold = selection_threshold(epsilon=eps, delta=delta, max_groups=1)
    assert _worst_delta(eps, delta, scale, threshold) > 1.2 * delta


def test_the_threshold_is_the_smallest_that_holds():
    for eps, delta, groups in ((1.0, 1e-6, 1), (0.1, 1e-8, 3), (3.0, 0.01, 2)):
        t = selection_scale(eps, groups)
        alpha = math.exp(-1.0 / t)
        m = selection_threshold(epsilon=eps, delta=delta, max_groups=groups) - 1
        assert groups * alpha**m / (1 + alpha) <= delta
        assert m == 1 or groups * alpha ** (m - 1) / (1 + alpha) > delta * (1 + 1e-9)


# -- a table of counts: one discrete Laplace per group ------------------------------------------------------
def _count_loss(frame_a: pd.DataFrame, frame_b: pd.DataFrame, per_group_epsilon: float) -> float:
    """Each group's noisy count has pmf ∝ e^{−|y − c|/t}: the table's loss is Σ_g |c_g − c'_g|/t, with t the
    scale smoothdp.histogram uses at the per-group ε."""
    t = smoothdp.histogram([0], categories=[0], epsilon=per_group_epsilon, rng=0).not_private.noise_scale
    a = frame_a["g"].value_counts().reindex(KEYS, fill_value=0)
    b = frame_b["g"].value_counts().reindex(KEYS, fill_value=0)
    return float(np.abs(a - b).sum() / t)


def _count_epsilon(frame: pd.DataFrame, relation: str, k: int | None, epsilon: float) -> float:
    unit = {} if k is None else {"privacy_unit": "person", "contributions": k}
    release = smoothdp.aggregate(
        frame, "g", {"v": "count"}, epsilon=epsilon, keys=KEYS, neighbours=relation, rng=0,
        return_release=True, **unit,
    )  # fmt: skip
    (share,) = release.statistics
    assert share.mechanism.startswith("noisy histogram")
    return share.epsilon_per_group


@pytest.mark.parametrize(("relation", "k", "rows_a", "rows_b"), PAIRS)
def test_a_table_of_counts_stays_within_its_guarantee(relation, k, rows_a, rows_b):
    a, b = _frame(rows_a), _frame(rows_b)
    assert _count_loss(a, b, _count_epsilon(a, relation, k, 1.0)) <= 1.0 + 1e-12


@pytest.mark.parametrize(("twin", "pair"), [(_no_halving, PAIRS[0]), (_no_group_privacy, PAIRS[3])])
def test_broken_count_tables_exceed_the_guarantee(monkeypatch, twin, pair):
    monkeypatch.setattr(query, "table_budget", twin)
    relation, k, rows_a, rows_b = pair
    a, b = _frame(rows_a), _frame(rows_b)
    assert _count_loss(a, b, _count_epsilon(a, relation, k, 1.0)) > 1.5
