"""Registry cases of the exponential-mechanism quantiles, the recursive and joint quantiles and the private
range, with exact privacy losses computed from closed-form output densities (not from the code's sampler).

Every output density here is piecewise constant between the data points of x and x' (and, for two
outputs, on products of such pieces), so the supremum of the log ratio is a maximum over the pieces.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

BOUNDS = (0.0, 1.0)
GRID = (0.0, 0.1, 0.5, 0.55, 1.0)


def _log_em_density(
    xs: np.ndarray, lower: float, upper: float, target: float, coef: float, y: np.ndarray
) -> np.ndarray:
    """ln of the density ∝ exp(−coef·|#{x < y} − target|) on [lower, upper], written out from scratch."""
    xs = np.sort(np.asarray(xs, float))
    edges = np.concatenate(([lower], xs, [upper]))
    lengths = np.diff(edges)
    weights = lengths * np.exp(-coef * np.abs(np.arange(lengths.size) - target))
    below = np.array([np.sum(xs < v) for v in np.atleast_1d(y)], float)
    return -coef * np.abs(below - target) - math.log(weights.sum())


def _pieces(x: Any, x2: Any, lower: float, upper: float) -> np.ndarray:
    """One point inside each piece between the data points of both data sets."""
    cuts = np.unique(np.concatenate(([lower, upper], np.asarray(x, float), np.asarray(x2, float))))
    cuts = cuts[(cuts >= lower) & (cuts <= upper)]
    return 0.5 * (cuts[:-1] + cuts[1:])


def _rank_target(q: float, n: int) -> float:
    return max(1, math.ceil(q * n - 1e-12)) - 0.5


#: The documented atom mass per unit of spacing (docs/theory/quantiles.md#choosing-the-atom-mass).
ATOM_MASS_PER_SPACING = 2.0**-14


@functools.lru_cache(maxsize=16)
def _atoms_of(
    spec: Any, lower: float, upper: float, per_spacing: float = ATOM_MASS_PER_SPACING
) -> dict[float, float]:
    """The atoms of a ``lattice=`` value in [lower, upper] with their masses, from the documented definition
    (tests/central/atoms_law.py: correctly rounded fl(k·P/Q), mass per_spacing·fl(P/Q) summed over the
    levels; 2^-14 light, 64 heavy)."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "central"))
    from atoms_law import atom_masses
    from greedy_law import spec_levels

    return atom_masses(spec_levels(spec), per_spacing, lower, upper)


def _spacings(spec: Any) -> list[float]:
    """The documented spacings fl(P/Q) of a ``lattice=`` value's levels."""
    _atoms_of(spec, 0.0, 1.0)  # puts tests/central on the path
    from greedy_law import spec_levels

    return [p / q for p, q in spec_levels(spec)]


def _tie_dist(xs: np.ndarray, t: float, y: np.ndarray) -> np.ndarray:
    """dist(t, [#{x < y}, #{x ≤ y}]) (counts by binary search in the sorted records)."""
    below = np.searchsorted(xs, y, side="left").astype(float)
    at_most = np.searchsorted(xs, y, side="right").astype(float)
    return np.maximum(0.0, np.maximum(below - t, t - at_most))


def _log_lattice_em_density(
    xs: Any,
    lower: float,
    upper: float,
    t: float,
    coef: float,
    atoms: dict[float, float],
    y: np.ndarray,
) -> np.ndarray:
    """ln of the density ∝ exp(−coef·dist(t, [#{x < y}, #{x ≤ y}])) w.r.t. μ = Lebesgue on [lower, upper]
    + Σ mass·δ_atom, written out from scratch: Z = Σ over the pieces between the distinct data values of
    length × weight, + Σ over the atoms of mass × weight. (The density at y is the same w.r.t. either
    part of μ: the ratio of the laws of any set is bounded by the sup of the density ratio.)"""
    xs = np.sort(np.asarray(xs, float))
    cuts = np.unique(np.concatenate(([lower, upper], xs)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    z = float(np.sum(np.diff(cuts) * np.exp(-coef * _tie_dist(xs, t, mids))))
    pts = np.array(list(atoms), dtype=float)
    mass = np.array(list(atoms.values()), dtype=float)
    z += float(np.sum(mass * np.exp(-coef * _tie_dist(xs, t, pts))))
    return -coef * _tie_dist(xs, t, np.atleast_1d(y)) - math.log(z)


def em_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """Exponential-mechanism quantile: continuous (max over pieces), with the lattice atoms (max over the
    pieces and the lattice points: the densities w.r.t. the common base measure), or over candidates."""
    n = len(x)
    coef = 0.5 * mech.epsilon_used(n)
    t = _rank_target(mech.q, n)
    if mech.candidates is not None:

        def log_p(data: Any) -> np.ndarray:
            data = np.asarray(data, float)
            below = np.array([np.sum(data < g) for g in mech.candidates], float)
            at_most = np.array([np.sum(data <= g) for g in mech.candidates], float)
            dist = np.maximum(0.0, np.maximum(below - t, t - at_most))
            lw = -coef * dist
            return lw - np.log(np.sum(np.exp(lw)))

        return float(np.max(np.abs(log_p(x) - log_p(x2))))
    y = _pieces(x, x2, mech.lower, mech.upper)
    if mech.lattice is None:
        a = _log_em_density(x, mech.lower, mech.upper, t, coef, y)
        b = _log_em_density(x2, mech.lower, mech.upper, t, coef, y)
        return float(np.max(np.abs(a - b)))
    if mech.selects_level(n):
        return _selection_em_loss(mech, x, x2, t, coef, y)
    # the documented masses: light 2^-14 per unit of spacing, or heavy 64 (``atoms="heavy"``)
    assert mech.atom_mass == (HEAVY_PER_SPACING if mech.atom_choice == "heavy" else ATOM_MASS_PER_SPACING)
    atoms = _atoms_of(mech.lattice, mech.lower, mech.upper, mech.atom_mass)
    y = np.concatenate((y, np.array(list(atoms), dtype=float)))
    a = _log_lattice_em_density(x, mech.lower, mech.upper, t, coef, atoms, y)
    b = _log_lattice_em_density(x2, mech.lower, mech.upper, t, coef, atoms, y)
    return float(np.max(np.abs(a - b)))


#: The documented share of ε of the selection of a heavy level under substitution.
SELECTION_SHARE = 0.05


def _selection_em_loss(mech: Any, x: Any, x2: Any, t: float, coef: float, y: np.ndarray) -> float:
    """The substitution quantile with the selection of a heavy level first (docs/theory/quantiles.md#the-
    heavy-level-of-one-quantile): for each outcome (every level light, or level ℓ heavy, 64 per unit of
    spacing) the log ratio of its probability (the selection's law written from its definition,
    tests/central/greedy_law.py) plus the sup log ratio of the exponential mechanism's densities with the
    atoms it sets, both directions."""
    from greedy_law import selection_composed_loss, spec_levels

    levels = spec_levels(mech.lattice)
    stage2 = _lattice_em_stage(x, x2, (mech.lower, mech.upper), t, coef, levels, y)
    eps_t = SELECTION_SHARE * mech.epsilon
    return selection_composed_loss(x, x2, levels, eps_t, ATOM_MASS_PER_SPACING, HEAVY_PER_SPACING, stage2)


def _lattice_em_stage(
    x: Any, x2: Any, bounds: tuple[float, float], t: float, coef: float, levels: Any, y: np.ndarray
) -> Any:
    """The exponential mechanism's sup log ratios (x over x2, x2 over x) given the selection's mass factors
    per level: densities written from the definition, over the pieces y and every atom."""
    from atoms_law import atom_masses

    def stage2(factors: list[float]) -> tuple[float, float]:
        atoms = atom_masses(levels, factors, *bounds)
        points = np.concatenate((y, np.array(list(atoms), dtype=float)))
        a = _log_lattice_em_density(x, *bounds, t, coef, atoms, points)
        b = _log_lattice_em_density(x2, *bounds, t, coef, atoms, points)
        return float(np.max(a - b)), float(np.max(b - a))

    return stage2


def heavy_or_smooth_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """A heavy level selected first, then the exponential mechanism on its atoms, or the smooth-sensitivity
    quantile when every level stays light (docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity):
    for each outcome the log ratio of its probability (the selection's law written from its definition)
    plus the sup log ratio of the second stage that outcome runs, both directions. The smooth-sensitivity
    stage: f + S_β·Z on both sides, from the statistic and the smooth sensitivity of the mechanism at ε_s."""
    from greedy_law import selection_composed_loss, spec_levels
    from mechanism_cases import location_scale_loss

    em = mech.exponential
    n = len(x)
    levels = spec_levels(em.lattice)
    coef, t = 0.5 * em.epsilon_used(n), _rank_target(em.q, n)
    y = _pieces(x, x2, em.lower, em.upper)
    smooth = mech.smooth_mechanism(n)
    stat, noise = smooth.statistic, smooth.calibration.noise
    f, f2 = stat.value(x), stat.value(x2)
    s, s2 = smooth.smooth_sensitivity(x), smooth.smooth_sensitivity(x2)

    exponential = _lattice_em_stage(x, x2, (em.lower, em.upper), t, coef, levels, y)

    def stage2(factors: list[float]) -> tuple[float, float]:
        if all(factor == ATOM_MASS_PER_SPACING for factor in factors):  # every level light
            up = location_scale_loss(noise, f, s, f2, s2, True, 0.0)
            return up, location_scale_loss(noise, f2, s2, f, s, True, 0.0)
        return exponential(factors)

    eps_t = SELECTION_SHARE * mech.epsilon
    return selection_composed_loss(x, x2, levels, eps_t, ATOM_MASS_PER_SPACING, HEAVY_PER_SPACING, stage2)


def _broken_heavy_or_smooth(mech: Any) -> Any:
    """Both stages at twice their ε: the exponential mechanism's weights and the smooth-sensitivity noise."""
    import copy

    from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism

    twin = copy.copy(mech)
    twin.exponential = copy.copy(mech.exponential)
    twin.exponential.epsilon = 2.0 * mech.exponential.epsilon
    twin.exponential.__dict__.pop("_margins", None)
    twin._smooth = {}
    original = mech.smooth_mechanism

    def doubled(n: int) -> Any:
        inner = original(n)
        return SmoothSensitivityMechanism(
            inner.statistic, epsilon=2.0 * inner.guarantee.epsilon, beta=inner.calibration.beta
        )

    twin.smooth_mechanism = doubled
    return twin


def recursive_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """KSS on two quantiles (two levels): p(v1)·p(v2 | v1), with the node rule written out from scratch:
    level 1 is quantile qs[0] on all data with ε/(2L)/max(q, 1−q); level 2 is qs[1] rescaled on x ≥ v1."""
    q1, q2 = (float(q) for q in mech.unique_qs)
    levels = 2
    eps_node = mech.epsilon / (2.0 * levels)

    def node(data: np.ndarray, lo: float, hi: float, q: float, v: np.ndarray) -> np.ndarray:
        sens = max(q, 1.0 - q)
        eps_eff = eps_node / sens
        from smoothdp.central.quantiles import log_weight_margin

        eta = log_weight_margin(epsilon=eps_eff, n=data.size, width=hi - lo)
        return _log_em_density(data, lo, hi, q * data.size, 0.5 * (eps_eff - 4 * eta), v)

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    worst = 0.0
    for v1 in _pieces(xa, xb, mech.lower, mech.upper):
        l1 = node(xa, mech.lower, mech.upper, q1, np.array([v1]))[0]
        l1b = node(xb, mech.lower, mech.upper, q1, np.array([v1]))[0]
        ra, rb = xa[xa >= v1], xb[xb >= v1]
        q_rel = (q2 - q1) / (1.0 - q1)
        v2 = _pieces(ra, rb, v1, mech.upper)
        l2 = node(ra, v1, mech.upper, q_rel, v2)
        l2b = node(rb, v1, mech.upper, q_rel, v2)
        worst = max(worst, float(np.max(np.abs((l1 + l2) - (l1b + l2b)))))
    return worst


def joint_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """JointExp on two quantiles: density ∝ exp(−ε′/4·Σ_j |c_j − g_j n|) on o1 ≤ o2, normalised by the
    exact integral over pairs of intervals (|I|·|I′|, or |I|²/2 on the diagonal)."""
    q1, q2 = (float(q) for q in mech.unique_qs)

    def log_density_table(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = data.size
        coef = (mech.epsilon - mech.margin(n)) / 4.0
        edges = np.concatenate(([mech.lower], np.sort(data), [mech.upper]))
        lengths = np.diff(edges)
        i = np.arange(n + 1)[:, None]
        k = np.arange(n + 1)[None, :]
        u = -(np.abs(i - q1 * n) + np.abs(k - i - (q2 - q1) * n) + np.abs(n - k - (1 - q2) * n))
        vol = np.where(k > i, lengths[:, None] * lengths[None, :], 0.0)
        vol = vol + np.diag(lengths**2 / 2.0)
        log_z = math.log(float(np.sum(vol * np.exp(coef * u))))
        return edges, coef, log_z

    def log_p(data: np.ndarray, o1: float, o2: float) -> float:
        edges, coef, log_z = log_density_table(data)
        n = data.size
        c1 = np.sum(data < o1)
        c2 = np.sum((data >= o1) & (data < o2))
        c3 = n - c1 - c2
        u = -(abs(c1 - q1 * n) + abs(c2 - (q2 - q1) * n) + abs(c3 - (1 - q2) * n))
        del edges
        return coef * u - log_z

    xa, xb = np.asarray(x, float), np.asarray(x2, float)
    pts = _pieces(xa, xb, mech.lower, mech.upper)
    worst = 0.0
    for o1, o2 in itertools.combinations_with_replacement(pts, 2):
        worst = max(worst, abs(log_p(xa, o1, o2) - log_p(xb, o1, o2)))
    return worst


def range_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """PrivateRange: the EM on clamped log-magnitudes (G is post-processing of its output y)."""
    lo, hi = mech.log_bounds
    la, lb = mech._prepare(x), mech._prepare(x2)
    n = la.size
    from smoothdp.central.quantiles import log_weight_margin

    eta = log_weight_margin(epsilon=mech.epsilon, n=n, width=hi - lo)
    coef = 0.5 * (mech.epsilon - 4.0 * eta)
    y = _pieces(la, lb, lo, hi)
    t = mech.coverage * n
    return float(
        np.max(np.abs(_log_em_density(la, lo, hi, t, coef, y) - _log_em_density(lb, lo, hi, t, coef, y)))
    )


# -- add/remove neighbours (docs/theory/quantiles.md#adding-or-removing-a-record) -----------------------
def _log_capped_density(
    xs: Any,
    lower: float,
    upper: float,
    q: float,
    coef: float,
    cap: float,
    atoms: dict[float, float] | None,
    y: Any,
) -> np.ndarray:
    """ln of the density ∝ exp(−coef·min(dist(q·n, [#{x < y}, #{x ≤ y}]), cap)) w.r.t. Lebesgue on
    [lower, upper] (+ Σ mass·δ_atom), written out from scratch; the target q·n moves with n."""
    xs = np.sort(np.asarray(xs, float))
    t = q * xs.size

    def dist(v: np.ndarray) -> np.ndarray:
        return np.minimum(_tie_dist(xs, t, np.atleast_1d(v)), cap)

    cuts = np.unique(np.concatenate(([lower, upper], xs)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    z = float(np.sum(np.diff(cuts) * np.exp(-coef * dist(mids))))
    if atoms is not None:
        pts = np.array(list(atoms), dtype=float)
        z += float(np.sum(np.array(list(atoms.values())) * np.exp(-coef * dist(pts))))
    return -coef * dist(np.asarray(y, float)) - math.log(z)


#: The atom masses per unit of spacing of the add/remove lattice test's outcomes (heavy: 64).
HEAVY_PER_SPACING = 64.0


def _test_losses(
    x: Any, x2: Any, atoms: dict[float, float], epsilon_test: float
) -> dict[str, tuple[float, float]]:
    """The add/remove lattice test written out: S = 2·#(records that are atoms) − n plus discrete Laplace
    noise of scale t = 1/ε_t (rounded up), reported exactly, heavy atoms iff S + Z ≥ 3t. For each outcome
    (heavy, light): the sup over the reports leading to it of ln P(report | x)/P(report | x'), and the
    reverse. (Records lie in the bounds, so membership in the atoms of the bounds decides.)"""
    t = math.nextafter(1.0 / epsilon_test, math.inf)

    def stat(data: Any) -> int:
        data = np.asarray(data, float)
        return int(2 * sum(float(v) in atoms for v in data) - data.size)

    s1, s2 = stat(x), stat(x2)
    # beyond both statistics the ratio is constant: the reports below, between and above them all appear
    v = np.arange(min(s1, s2, math.floor(3.0 * t)) - 40, max(s1, s2, math.ceil(3.0 * t)) + 41)
    ratio = (np.abs(v - s2) - np.abs(v - s1)) / t  # ln pmf(v − s1) − ln pmf(v − s2)
    heavy = v >= 3.0 * t
    return {
        "heavy": (float(ratio[heavy].max()), float(-ratio[heavy].min())),
        "light": (float(ratio[~heavy].max()), float(-ratio[~heavy].min())),
    }


#: The documented split of the add/remove pre-stage (7.5% of ε): 5% tests, 2.5% chooses the heavy level.
PRE_STAGE_SHARE = 0.075
LEVEL_SHARE_OF_TEST = 1.0 / 3.0


@functools.lru_cache(maxsize=16)
def _level_points(spec: Any, lower: float, upper: float) -> list[tuple[int, frozenset[float]]]:
    """(index in the spec's levels, the level's points in [lower, upper]), coarse to fine."""
    _atoms_of(spec, 0.0, 1.0)  # puts tests/central on the path
    from atoms_law import atom_masses
    from greedy_law import spec_levels

    levels = spec_levels(spec)
    order = sorted(range(len(levels)), key=lambda i: -levels[i][0] / levels[i][1])
    return [(i, frozenset(atom_masses([levels[i]], 1.0, lower, upper))) for i in order]


def level_choice_log_law(x: Any, spec: Any, lower: float, upper: float, coef: float) -> dict[Any, float]:
    """The documented choice of the heavy level, written out: candidates "every" (score 0, base mass L)
    and each level ℓ (score 2N_ℓ − D_ℓ − N, N the records on any level, N_ℓ on ℓ, D_ℓ on ℓ and a coarser
    level; base mass 1), probabilities ∝ mass·exp(coef·score). Returns ln P per candidate (levels by index
    in the spec)."""
    pts = _level_points(spec, lower, upper)
    data = [float(v) for v in np.asarray(x, float)]
    union = frozenset().union(*(p for _, p in pts))
    n_any = sum(v in union for v in data)
    logw: dict[Any, float] = {"every": math.log(len(pts))}
    coarser: frozenset[float] = frozenset()
    for index, points in pts:
        on = sum(v in points for v in data)
        both = sum(v in points and v in coarser for v in data)
        logw[index] = coef * (2 * on - both - n_any)
        coarser |= points
    top = max(logw.values())
    log_z = top + math.log(sum(math.exp(w - top) for w in logw.values()))
    return {k: w - log_z for k, w in logw.items()}


def _outcome_losses(
    x: Any, x2: Any, spec: Any, lower: float, upper: float, epsilon_pre: float
) -> dict[Any, tuple[float, float]]:
    """For each outcome of the pre-stage ("light", "every", a level index): the sup log ratio of its
    probability (test report and level choice), both directions. The test runs at (1 − s)·ε_pre, the level
    choice at s·ε_pre with coef by the public rule (capped_calibration, sensitivity 1)."""
    from smoothdp.central.quantiles.em_samplers import capped_calibration

    eps_select = LEVEL_SHARE_OF_TEST * epsilon_pre
    tests = _test_losses(x, x2, _atoms_of(spec, lower, upper), epsilon_pre - eps_select)
    coef = capped_calibration(epsilon=eps_select, sensitivity=1.0, width=None)[0]
    la, lb = (
        level_choice_log_law(x, spec, lower, upper, coef),
        level_choice_log_law(x2, spec, lower, upper, coef),
    )
    out: dict[Any, tuple[float, float]] = {"light": tests["light"]}
    hf, hb = tests["heavy"]
    for k in la:
        out[k] = (hf + la[k] - lb[k], hb + lb[k] - la[k])
    return out


def _branch_atoms(spec: Any, lower: float, upper: float, branch: Any) -> dict[float, float]:
    """The atoms of an outcome: every level light, every level heavy, or level ``branch`` heavy."""
    if branch in ("light", "every", "heavy"):
        per_spacing = ATOM_MASS_PER_SPACING if branch == "light" else HEAVY_PER_SPACING
        return _atoms_of(spec, lower, upper, per_spacing)
    from atoms_law import atom_masses
    from greedy_law import spec_levels

    levels = spec_levels(spec)
    factors = [HEAVY_PER_SPACING if i == branch else ATOM_MASS_PER_SPACING for i in range(len(levels))]
    return atom_masses(levels, factors, lower, upper)


def em_add_remove_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """The add/remove exponential-mechanism quantile (each data set with its own target q·n), at the
    mechanism's public coefficient and cap: max over the pieces, atoms or candidates; with atoms, the
    test's report, the level choice and the atoms they pick (every level light, every level heavy, or one
    level heavy) are part of the output (both directions)."""
    coef, cap, _ = mech.capped
    if mech.candidates is not None:

        def log_p(data: Any) -> np.ndarray:
            data = np.asarray(data, float)
            lw = -coef * np.minimum(_tie_dist(data, mech.q * data.size, mech.candidates), cap)
            return lw - np.log(np.sum(np.exp(lw)))

        return float(np.max(np.abs(log_p(x) - log_p(x2))))
    y = _pieces(x, x2, mech.lower, mech.upper)
    if mech.lattice is None:
        a = _log_capped_density(x, mech.lower, mech.upper, mech.q, coef, cap, None, y)
        b = _log_capped_density(x2, mech.lower, mech.upper, mech.q, coef, cap, None, y)
        return float(np.max(np.abs(a - b)))
    light = _atoms_of(mech.lattice, mech.lower, mech.upper)
    y = np.concatenate((y, np.array(list(light), dtype=float)))
    if mech.atom_choice in ("light", "heavy"):  # a public choice: no test, one base measure
        per = HEAVY_PER_SPACING if mech.atom_choice == "heavy" else ATOM_MASS_PER_SPACING
        atoms = _atoms_of(mech.lattice, mech.lower, mech.upper, per)
        a = _log_capped_density(x, mech.lower, mech.upper, mech.q, coef, cap, atoms, y)
        b = _log_capped_density(x2, mech.lower, mech.upper, mech.q, coef, cap, atoms, y)
        return float(np.max(np.abs(a - b)))
    worst = 0.0
    for branch, (forward, backward) in _outcome_losses(
        x, x2, mech.lattice, mech.lower, mech.upper, mech.epsilon_test
    ).items():
        atoms = _branch_atoms(mech.lattice, mech.lower, mech.upper, branch)
        a = _log_capped_density(x, mech.lower, mech.upper, mech.q, coef, cap, atoms, y)
        b = _log_capped_density(x2, mech.lower, mech.upper, mech.q, coef, cap, atoms, y)
        worst = max(worst, forward + float(np.max(a - b)), backward + float(np.max(b - a)))
    return worst


def _nested_log_law(xs: Any, mech: Any, coef: float, cap: float, ys: np.ndarray) -> list[np.ndarray]:
    """ln P(k, y) of the exponential mechanism over nested bounds under add/remove, written out from its
    definition (docs/theory/quantiles.md#one-quantile-over-nested-bounds): for each candidate B_k, the capped
    add/remove utility of the records themselves at every y of B_k (target q·n; the gaps of B_k are those
    between the records clipped into it), the base measure Lebesgue + the atoms on B_k normalised to one,
    the prior π_0 = 1, π_k = e^{-3}·2^{-k/2}; the densities at ``ys`` (the points of B_k among them) w.r.t.
    that base measure."""
    xs = np.sort(np.asarray(xs, float))
    per = HEAVY_PER_SPACING if mech.atom_choice == "heavy" else ATOM_MASS_PER_SPACING
    parts = []
    for k, (lo, hi) in enumerate(mech.nested):
        clipped = np.clip(xs, lo, hi)
        atoms = None if mech.lattice is None else _atoms_of(mech.lattice, lo, hi, per)
        t = mech.q * xs.size

        def dist(v: np.ndarray, t: float = t) -> np.ndarray:
            return np.minimum(_tie_dist(xs, t, np.atleast_1d(v)), cap)

        cuts = np.unique(np.concatenate(([lo, hi], clipped)))
        mids = 0.5 * (cuts[:-1] + cuts[1:])
        z = float(np.sum(np.diff(cuts) * np.exp(-coef * dist(mids))))
        mass = hi - lo
        if atoms:
            pts = np.array(list(atoms), dtype=float)
            weights = np.array(list(atoms.values()))
            z += float(np.sum(weights * np.exp(-coef * dist(pts))))
            mass += float(np.sum(weights))
        log_prior = 0.0 if k == 0 else -3.0 - 0.5 * k * math.log(2.0)
        inside = ys[(ys >= lo) & (ys <= hi)]
        shift = log_prior - math.log(mass)
        parts.append((shift + math.log(z), shift - coef * dist(inside)))
    log_total = float(np.logaddexp.reduce([w for w, _ in parts]))
    return [dens - log_total for _, dens in parts]


def em_nested_add_remove_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """The nested add/remove exponential mechanism (a public atoms choice or none): the sup over the outputs
    (k, y) of the log ratio of the written-out laws, y over the pieces of both data sets, the atoms and the
    candidate bounds' ends."""
    coef, cap, _ = mech.capped
    ends = np.array([v for pair in mech.nested for v in pair])
    ys = np.concatenate((_pieces(x, x2, mech.lower, mech.upper), ends))
    if mech.lattice is not None:
        points = np.array(list(_atoms_of(mech.lattice, mech.lower, mech.upper)), dtype=float)
        ys = np.concatenate((ys, points))
    ys = np.unique(ys)
    a, b = _nested_log_law(x, mech, coef, cap, ys), _nested_log_law(x2, mech, coef, cap, ys)
    return max(float(np.max(np.abs(pa - pb), initial=0.0)) for pa, pb in zip(a, b, strict=True))


def _twice_the_coefficient(mech: Any) -> Any:
    import copy

    twin = copy.copy(mech)
    coef, cap, eta = mech.capped
    twin.capped = (2.0 * coef, cap, eta)
    return twin


def recursive_add_remove_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """KSS on two quantiles under add/remove: level 1 is qs[0] on all data at ε/L (L = 2 levels, one node per
    level meets the added record) with Δ = max(q, 1 − q); level 2 is qs[1] rescaled on x ≥ v1. Each node's
    cap and coefficient by the public rule (capped_calibration) at its own ε, Δ and bounds; with atoms the
    test and the level choice (7.5% of ε) run first and pick the atoms of every node."""
    q1, q2 = (float(q) for q in mech.unique_qs)
    spec = mech.lattice
    eps_test = PRE_STAGE_SHARE * mech.epsilon if spec is not None else 0.0  # test and level choice
    eps_node = (mech.epsilon - eps_test) / 2.0
    if spec is None:
        branches = {"none": (0.0, 0.0)}
    else:
        branches = _outcome_losses(x, x2, spec, mech.lower, mech.upper, eps_test)
    worst = 0.0
    for branch, (forward, backward) in branches.items():
        f, b = _recursive_branch(mech, x, x2, q1, q2, spec, eps_node, branch)
        worst = max(worst, forward + f, backward + b)
    return worst


def _recursive_branch(
    mech: Any, x: Any, x2: Any, q1: float, q2: float, spec: Any, eps_node: float, branch: Any
) -> tuple[float, float]:
    """The two-level recursive law's sup log ratios (both directions) for one outcome of the test."""
    from smoothdp.central.quantiles.em_samplers import capped_calibration

    def node_atoms(lo: float, hi: float) -> dict[float, float] | None:
        return None if spec is None else _branch_atoms(spec, lo, hi, branch)

    def width(lo: float, hi: float) -> float:
        # W of the heavy atoms bounds the logarithms whatever the test says (public)
        if spec is None:
            return hi - lo
        sigmas = _spacings(spec)
        return (hi - lo) + sum(HEAVY_PER_SPACING * s * ((hi - lo) / s + 2.0) for s in sigmas)

    def node(data: np.ndarray, lo: float, hi: float, q: float, v: np.ndarray) -> np.ndarray:
        coef, cap, _ = capped_calibration(epsilon=eps_node, sensitivity=max(q, 1.0 - q), width=width(lo, hi))
        return _log_capped_density(data, lo, hi, q, coef, cap, node_atoms(lo, hi), v)

    def points(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> np.ndarray:
        pts = _pieces(a, b, lo, hi)
        return pts if spec is None else np.concatenate((pts, np.array(list(node_atoms(lo, hi) or {}), float)))

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    forward = backward = -math.inf
    for v1 in points(xa, xb, mech.lower, mech.upper):
        l1 = node(xa, mech.lower, mech.upper, q1, np.array([v1]))[0]
        l1b = node(xb, mech.lower, mech.upper, q1, np.array([v1]))[0]
        ra, rb = xa[xa >= v1], xb[xb >= v1]
        q_rel = (q2 - q1) / (1.0 - q1)
        v2 = points(ra, rb, v1, mech.upper)
        diff = (l1 + node(ra, v1, mech.upper, q_rel, v2)) - (l1b + node(rb, v1, mech.upper, q_rel, v2))
        forward, backward = max(forward, float(diff.max())), max(backward, float(-diff.min()))
    return forward, backward


#: (q, lattice, atoms) of the nested add/remove cases: the continuum, heavy tenths, light quarters.
NESTED_CASES = ((0.5, None, "auto"), (0.3, 0.1, "heavy"), (0.9, 0.25, "light"))


def _add_remove_cases(case: Any, add_remove_pairs: Any, attr_times: Any) -> list[Any]:
    from smoothdp.central import ExponentialQuantile, RecursiveQuantiles

    grid = (0.0, 0.25, 0.5, 0.55, 1.0)

    def pairs() -> list[Any]:  # the empty data set, one record, three records, and one more of each
        return [p for n in (0, 1, 3) for p in add_remove_pairs(n, grid)]

    bad = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"neighbours": "metric"}, ValueError, "neighbours"),
    ]
    ar = {"neighbours": "add_remove"}

    def nested(q: float, lattice: Any, atoms: str) -> Any:
        return case(
            mechanism=ExponentialQuantile,
            label=f"add/remove, nested bounds (3 halvings), q={q}, lattice {lattice} {atoms}",
            build=lambda epsilon, **kw: ExponentialQuantile(
                q,
                **{
                    "epsilon": epsilon,
                    "bounds": BOUNDS,
                    "lattice": lattice,
                    "atoms": atoms,
                    "halvings": 3,
                    **ar,
                    **kw,
                },
            ),
            data=np.array([0.05, 0.1, 0.1, 0.9]),
            neighbours=lambda: [p for n in (0, 1, 3) for p in add_remove_pairs(n, (0.0, 0.1, 0.2, 0.5, 0.9))],
            privacy_loss=em_nested_add_remove_loss,
            broken=_twice_the_coefficient,
            bad_parameters=[*bad, ({"halvings": -1}, ValueError, "halvings")],
        )

    return [
        case(
            mechanism=ExponentialQuantile,
            label=f"add/remove, q={q}, lattice {lattice}",
            build=lambda epsilon, q=q, lattice=lattice, **kw: ExponentialQuantile(
                q, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": lattice, **ar, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.9]),
            neighbours=pairs,
            privacy_loss=em_add_remove_loss,
            broken=_twice_the_coefficient,
            bad_parameters=bad,
        )
        for q, lattice in ((0.5, None), (0.3, 0.25), (0.9, 0.25))
    ] + [
        case(
            mechanism=ExponentialQuantile,
            label="add/remove, median, multiscale atoms",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": "multiscale", **ar, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.9]),
            # 1/3 is no atom of any level, 0.55 one of the cents' only
            neighbours=lambda: [p for n in (0, 1, 2) for p in add_remove_pairs(n, (0.0, 1 / 3, 0.5, 0.55))],
            privacy_loss=em_add_remove_loss,
            broken=_twice_the_coefficient,
            bad_parameters=[*bad, ({"lattice": "dyadic"}, ValueError, "lattice")],
        ),
        case(
            mechanism=ExponentialQuantile,
            label="add/remove, median, heavy atoms on one level (public choice, no test)",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": 0.25, "atoms": "heavy", **ar, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.9]),
            neighbours=lambda: [p for n in (0, 1, 2) for p in add_remove_pairs(n, (0.0, 1 / 3, 0.5, 0.55))],
            privacy_loss=em_add_remove_loss,
            broken=_twice_the_coefficient,
            bad_parameters=[*bad, ({"atoms": "every"}, ValueError, "atoms")],
        ),
        *[nested(q, lattice, atoms) for q, lattice, atoms in NESTED_CASES],
        case(
            mechanism=ExponentialQuantile,
            label="add/remove, candidates",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.3, **{"epsilon": epsilon, "bounds": BOUNDS, "candidates": [0.0, 0.25, 0.5, 1.0], **ar, **kw}
            ),
            data=np.array([0.25, 0.5]),
            neighbours=pairs,
            privacy_loss=em_add_remove_loss,
            broken=_twice_the_coefficient,
            bad_parameters=bad,
        ),
        case(
            mechanism=RecursiveQuantiles,
            label="add/remove, lattice (0.25, 0.1)",
            build=lambda epsilon, **kw: RecursiveQuantiles(
                **{
                    "qs": [0.25, 0.75],
                    "epsilon": epsilon,
                    "bounds": BOUNDS,
                    "lattice": (0.25, 0.1),
                    **ar,
                    **kw,
                }
            ),
            data=np.array([0.25, 0.5, 0.5, 0.9]),
            neighbours=lambda: [
                p for n in (0, 1, 2) for p in add_remove_pairs(n, (0.0, 0.25, 0.5, 0.55, 1.0))
            ],  # 0.55: on neither level
            privacy_loss=recursive_add_remove_loss,
            broken=attr_times("epsilon", 2.0),
            bad_parameters=[*bad, ({"lattice": 1 / 3}, ValueError, "lattice")],
            epsilon=2.0,
        ),
    ]


def quantile_cases() -> list[Any]:
    """The cases (built on call: mechanism_cases imports this module at its end)."""
    from mechanism_cases import Case, _add_remove_pairs, _attr_times, _substitution_pairs

    from smoothdp.central import ExponentialQuantile, JointQuantiles, PrivateRange, RecursiveQuantiles
    from smoothdp.central.quantiles import HeavyLevelOrSmoothQuantile

    data = np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3])
    bad_eps = [({"epsilon": 0.0}, ValueError, "epsilon"), ({"epsilon": -1.0}, ValueError, "epsilon")]
    return [
        Case(
            mechanism=ExponentialQuantile,
            label="median, continuous",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": None, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(4, GRID),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
                ({"numerics": "fast"}, ValueError, "numerics"),
                ({"clamp": "yes"}, TypeError, "clamp"),
            ],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="median, lattice 0.25, heavy atoms (public choice)",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": 0.25, "atoms": "heavy", **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.5, 0.75, 0.3]),
            neighbours=lambda: _substitution_pairs(4, (0.0, 0.1, 0.25, 0.5, 0.55, 1.0)),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"atoms": "every"}, ValueError, "atoms"),
                ({"lattice": None}, ValueError, "atoms"),  # heavy atoms of no lattice
            ],
        ),
        *[
            Case(
                mechanism=ExponentialQuantile,
                label=f"q={q}, lattice {lattice}, the selection of a heavy level first (atoms='test')",
                build=lambda epsilon, q=q, lattice=lattice, **kw: ExponentialQuantile(
                    q, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": lattice, "atoms": "test", **kw}
                ),
                data=np.array([0.25, 0.5, 0.5, 0.5, 0.75, 0.3]),
                # 0.3 is on the tenths only, 0.25 on the quarters only, 0.5 on both, 1/3 on neither
                neighbours=lambda: _substitution_pairs(3, (0.0, 0.25, 0.3, 1 / 3, 0.5, 1.0)),
                privacy_loss=em_loss,
                broken=_attr_times("epsilon", 2.0),
                bad_parameters=[*bad_eps, ({"atoms": "every"}, ValueError, "atoms")],
            )
            for q, lattice in ((0.5, (0.25, 0.1)), (0.3, 0.25))
        ],
        Case(
            mechanism=HeavyLevelOrSmoothQuantile,
            label="median, lattice (0.25, 0.1): a heavy level selected, else smooth sensitivity",
            build=lambda epsilon, **kw: HeavyLevelOrSmoothQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": (0.25, 0.1), **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.5, 0.75, 0.3]),
            # 0.3 is on the tenths only, 0.25 on the quarters only, 0.5 on both, 1/3 on neither
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.25, 0.3, 1 / 3, 0.5, 1.0)),
            privacy_loss=heavy_or_smooth_loss,
            broken=_broken_heavy_or_smooth,
            epsilon=2.0,
            bad_parameters=[
                *bad_eps,
                ({"lattice": None}, ValueError, "lattice"),
                ({"beta": -1.0}, ValueError, "beta"),
                ({"noise": "laplace"}, TypeError, "noise"),
            ],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="median, lattice 0.25, ties",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": 0.25, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.5, 0.75, 0.3]),
            neighbours=lambda: _substitution_pairs(4, (0.0, 0.1, 0.25, 0.5, 0.55, 1.0)),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"lattice": 1 / 3}, ValueError, "lattice"),
                ({"lattice": 0.0}, ValueError, "lattice"),
                ({"lattice": "1"}, ValueError, "lattice"),
                ({"lattice": True}, TypeError, "lattice"),
            ],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="q=0.4, multiscale default, ties at tenths and halves",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.4, **{"epsilon": epsilon, "bounds": BOUNDS, **kw}
            ),
            data=np.array([0.3, 0.3, 0.5, 0.5, 0.25, 0.71]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.3, 0.5, 0.55, 0.71, 1.0)),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"lattice": []}, ValueError, "lattice")],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="q=0.3, candidates",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.3, **{"epsilon": epsilon, "bounds": BOUNDS, "candidates": [0.0, 0.1, 0.5, 0.75, 1.0], **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(4, GRID),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"candidates": [2.0]}, ValueError, "candidates")],
        ),
        Case(
            mechanism=RecursiveQuantiles,
            build=lambda epsilon, **kw: RecursiveQuantiles(
                **{"qs": [0.25, 0.75], "epsilon": epsilon, "bounds": BOUNDS, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.1, 0.5, 1.0)),
            privacy_loss=recursive_loss,
            broken=_attr_times("epsilon", 3.0),
            bad_parameters=[*bad_eps, ({"qs": [1.5]}, ValueError, "qs")],
            epsilon=2.0,
        ),
        Case(
            mechanism=JointQuantiles,
            label="continuum",
            build=lambda epsilon, **kw: JointQuantiles(
                **{"qs": [0.25, 0.75], "epsilon": epsilon, "bounds": BOUNDS, "lattice": None, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.1, 0.5, 1.0)),
            privacy_loss=joint_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"qs": []}, ValueError, "qs")],
            epsilon=2.0,
        ),
        Case(
            mechanism=PrivateRange,
            build=lambda epsilon, **kw: PrivateRange(
                **{"epsilon": epsilon, "scale": 1.0, "octaves": 4, **kw}
            ),
            data=data * 10,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.3, 1.0, 5.0, 100.0)),
            privacy_loss=range_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"scale": 0.0}, ValueError, "scale"),
                ({"octaves": 0}, ValueError, "octaves"),
                ({"coverage": 1.0}, ValueError, "coverage"),
            ],
        ),
        *_add_remove_cases(Case, _add_remove_pairs, _attr_times),
    ]
