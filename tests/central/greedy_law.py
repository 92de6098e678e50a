"""Exact laws for the greedy lattice JointExp (docs/theory/quantiles.md#jointexp-on-a-public-lattice):
the law of the sampler's state sequence read off its float tables, and the law from the definition by
brute-force enumeration of ordered outputs on tiny data (written from the definition, not from the code)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np


def sampler_state_law(tables: Any) -> dict[tuple[int, ...], float]:
    """Probability of every state sequence of the backward draws (the same weights as greedy_sample)."""
    ch, k, t, big_g, m = tables.chain, tables.k, tables.t, tables.big_g, tables.m
    c2, c2f = ch.c2, ch.c2.astype(float)
    law: dict[tuple[int, ...], float] = {}

    def norm(w: np.ndarray) -> np.ndarray:
        p = np.exp(w - np.max(w))
        return p / p.sum()

    def walk(j: int, nxt: tuple[int, int] | None, suffix: list[int], prob: float) -> None:
        if j < 0:
            law[tuple(suffix)] = law.get(tuple(suffix), 0.0) + prob
            return
        if nxt is None or nxt[1] == 0:
            if nxt is None:
                lim = ch.size
                trans = -k * np.abs(2.0 * ch.n - c2f - t[m])
            else:
                s1 = nxt[0]
                lim = int(ch.first[s1])
                trans = -k * np.abs(c2f[s1] - c2f[:lim] - t[j + 1])
                if ch.knot[s1]:
                    ok = np.clip(c2[:lim] + big_g[j + 1], ch.l2[s1], ch.u2[s1]) == c2[s1]
                    trans = np.where(ok, trans, -np.inf)
            ps = norm(tables.tot[j, :lim] + trans)
            for s in np.flatnonzero(ps > 0):
                pr = norm(tables.rows_at(j, int(s)))
                for r in np.flatnonzero(pr > 0):
                    walk(j - 1, (int(s), int(r)), [int(s), *suffix], prob * ps[s] * pr[r])
        else:
            s1, r1 = nxt
            if not ch.knot[s1]:
                walk(j - 1, (s1, r1 - 1), [s1, *suffix], prob)
                return
            block = np.arange(ch.first[s1], ch.first[s1] + (ch.u2[s1] - ch.l2[s1]) + 1)
            rows = tables.block_rows(j, block)[r1 - 1]
            ok = np.clip(c2[block] + big_g[j + 1], ch.l2[s1], ch.u2[s1]) == c2[s1]
            ps = norm(np.where(ok, rows - k * np.abs(c2f[s1] - c2f[block] - t[j + 1]), -np.inf))
            for i in np.flatnonzero(ps > 0):
                walk(j - 1, (int(block[i]), r1 - 1), [int(block[i]), *suffix], prob * ps[i])

    walk(m - 1, None, [], 1.0)
    return law


def spec_levels(spec: Any) -> list[tuple[int, int]]:
    """The levels (P, Q) of a ``lattice=`` value, as documented: "multiscale" → dyadic 1..1/32 and decimal
    1/10..1/10⁴; a spacing → the fraction its shortest repr spells."""
    from fractions import Fraction

    from atoms_law import MULTISCALE_LEVELS

    if spec == "multiscale":
        return list(MULTISCALE_LEVELS)
    values = spec if isinstance(spec, tuple | list) else (spec,)
    out = []
    for v in values:
        f = Fraction(repr(float(v)))
        out.append((f.numerator, f.denominator))
    return out


def definition_locations(x: Any, lower: float, upper: float, atoms: dict[float, float]) -> list[dict]:
    """Every location of one output, in increasing order: continuum pieces between all cuts (bounds,
    records, atoms; measure = length) and the atoms (measure = their mass)."""
    x = np.sort(np.asarray(x, float))
    pts = np.array(sorted(atoms), dtype=float)
    cuts = np.unique(np.concatenate(([lower, upper], pts, x)))
    locs = []
    for a, b in itertools.pairwise(cuts):
        if b > a:
            mid = 0.5 * (a + b)
            locs.append(
                {
                    "key": mid,
                    "atom": False,
                    "measure": b - a,
                    "value": mid,
                    "L": int(np.sum(x < mid)),
                    "U": int(np.sum(x < mid)),
                }
            )
    for v in pts:
        locs.append(
            {
                "key": v,
                "atom": True,
                "measure": atoms[v],
                "value": v,
                "L": int(np.sum(x < v)),
                "U": int(np.sum(x <= v)),
            }
        )
    locs.sort(key=lambda d: d["key"])
    return locs


def definition_law(
    x: Any,
    qs: Any,
    lower: float,
    upper: float,
    atoms: dict[float, float],
    coef: float,
    *,
    rule: str = "greedy",
) -> list[tuple[tuple[int, ...], tuple[float, ...], float]]:
    """(location ids, counts, unnormalised weight) of every ordered m-tuple of locations: measure of the
    ordered cone (r equal locations: measure^r/r!) × exp(−coef·Σ_j |C_j − C_{j−1} − g_j|), with
    C_j = clamp(C_{j−1} + ĝ_j, L(o_j), U(o_j)) (``rule="greedy"``) or a broken rule for twins:
    ``"no_clamp_up"`` (C_j = max(C_{j−1} + ĝ_j, L), no upper clamp)."""
    x = np.sort(np.asarray(x, float))
    n = x.size
    qs = np.asarray(qs, float)
    g = np.concatenate(([qs[0]], np.diff(qs), [1.0 - qs[-1]])) * n
    g_hat = np.floor(2.0 * g + 0.5) / 2.0
    locs = definition_locations(x, lower, upper, atoms)
    out = []
    for combo in itertools.combinations_with_replacement(range(len(locs)), qs.size):
        meas = 1.0
        for i, r in Counter(combo).items():
            meas *= locs[i]["measure"] ** r / math.factorial(r)
        c_prev, cost, counts = 0.0, 0.0, []
        for j, i in enumerate(combo):
            lo, hi = locs[i]["L"], locs[i]["U"]
            y = c_prev + g_hat[j]
            c = max(lo, min(y, hi)) if rule == "greedy" else max(lo, y)
            cost += abs(c - c_prev - g[j])
            counts.append(c)
            c_prev = c
        cost += abs(n - c_prev - g[-1])
        out.append((combo, tuple(counts), meas * math.exp(-coef * cost)))
    return out


def _location_weights(
    x: Any, locs: list[dict], qs: Any, coef: float, rule: str
) -> dict[tuple[int, ...], float]:
    """Unnormalised weight of every released location tuple (counts and ρ summed out) on the locations."""
    x = np.sort(np.asarray(x, float))
    n = x.size
    qs = np.asarray(qs, float)
    g = np.concatenate(([qs[0]], np.diff(qs), [1.0 - qs[-1]])) * n
    g_hat = np.floor(2.0 * g + 0.5) / 2.0
    lows = [int(np.sum(x < d["value"])) for d in locs]
    highs = [int(np.sum(x <= d["value"])) if d["atom"] else lows[i] for i, d in enumerate(locs)]
    law = {}
    for combo in itertools.combinations_with_replacement(range(len(locs)), qs.size):
        meas = 1.0
        for i, r in Counter(combo).items():
            meas *= locs[i]["measure"] ** r / math.factorial(r)
        c_prev, cost = 0.0, 0.0
        for j, i in enumerate(combo):
            y = c_prev + g_hat[j]
            c = max(lows[i], min(y, highs[i])) if rule == "greedy" else max(lows[i], y)
            cost += abs(c - c_prev - g[j])
            c_prev = c
        cost += abs(n - c_prev - g[-1])
        law[combo] = meas * math.exp(-coef * cost)
    return law


def _location_law(x: Any, locs: list[dict], qs: Any, coef: float, rule: str) -> dict[tuple[int, ...], float]:
    law = _location_weights(x, locs, qs, coef, rule)
    total = sum(law.values())
    return {k: v / total for k, v in law.items()}


def _shared_locations(x: Any, x2: Any, lower: float, upper: float, atoms: dict[float, float]) -> list[dict]:
    both = np.concatenate((np.asarray(x, float), np.asarray(x2, float)))
    return definition_locations(both, lower, upper, atoms)  # cuts at the records of both


def _log_ratio_range(pa: dict, pb: dict) -> tuple[float, float]:
    keys = [k for k in pa if pa[k] > 0 or pb[k] > 0]
    assert all(pa[k] > 0 and pb[k] > 0 for k in keys)
    d = np.array([math.log(pa[k]) - math.log(pb[k]) for k in keys])
    return float(d.max()), float(-d.min())


#: The documented round numbers of the multi-scale selection: spacings, how many times each is offered, ρ.
ROUND_LEVELS = [(10, 1), (100, 1), (1000, 1)]
ROUND_PRIOR = [2, 4, 8]
ROUND_RHO = 0.4


def selection_law(
    x: Any,
    levels: list[tuple[int, int]],
    n: int,
    eps_t: float,
    *,
    rounds: bool = False,
    round_coef_scale: float = 1.0,
) -> np.ndarray:
    """The selection's law over [light, heavy on each level in coarse-to-fine order] (then, with ``rounds``,
    the round numbers 10, 100, 1000), from the definition: τ = 0.9n + 1/ε_t, q_light = τ − N,
    q_ℓ = min(N_ℓ − τ, τ − C_ℓ), q_σ = min(q_1, R_σ − (0.4n + 1/ε_t)) with R_σ the records that are
    multiples of σ, weights prior·exp(ε′q/2), ε′ = ε_t − 4η, prior 1 (2, 4, 8 for the round levels).
    ``round_coef_scale`` = 2: the broken twin with exp(ε′q) on the round levels."""
    from fractions import Fraction

    from smoothdp.central.quantiles import log_weight_margin

    x = np.asarray(x, float)
    order = sorted(levels, key=lambda pq: -Fraction(*pq))
    on = [np.array([any(v == float(Fraction(k * p, q)) for k in _ks(v, p, q)) for v in x]) for p, q in order]
    tau = 0.9 * n + 1.0 / eps_t
    any_on = np.any(on, axis=0) if on else np.zeros(x.size, bool)
    scores = [tau - float(np.sum(any_on))]
    coarser = np.zeros(x.size, bool)
    for row in on:
        scores.append(min(float(np.sum(row)) - tau, tau - float(np.sum(coarser))))
        coarser |= row
    coef = 0.5 * (eps_t - 4.0 * log_weight_margin(epsilon=eps_t, n=n, width=None))
    logw = [coef * q for q in scores]
    if rounds:
        q_integers = scores[1 + order.index((1, 1))]
        for (p, _), prior in zip(ROUND_LEVELS, ROUND_PRIOR, strict=True):
            multiples = sum(1 for v in x if float(v).is_integer() and int(v) % p == 0)
            q = min(q_integers, multiples - (ROUND_RHO * n + 1.0 / eps_t))
            logw.append(math.log(prior) + round_coef_scale * coef * q)
    w = np.exp(np.array(logw) - max(logw))
    return w / w.sum()


def _ks(v: float, p: int, q: int) -> range:
    from fractions import Fraction

    k = math.floor(Fraction(v) * q / p)
    return range(k - 1, k + 2)


def greedy_privacy_loss(
    mech: Any, x: Any, x2: Any, *, rule: str = "greedy", coef_scale: float = 1.0
) -> float:
    """Worst |log ratio| of the exact laws of everything JointQuantiles (a lattice; the selection of a heavy
    level, ``atoms="test"``, or a public choice) releases on x and x′: the level selected (written from the
    definition, :func:`selection_law`) and the values given the atoms it sets. ``coef_scale`` = 2: the
    broken twin with density exp(ε′u/2) (sensitivity 2 ignored)."""

    from atoms_law import atom_masses

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    n = xa.size
    coef = coef_scale * (mech.epsilon_main(n) - mech.margin(n)) / 4.0
    levels = spec_levels(mech.lattice)
    light, heavy = mech.atom_mass(False), mech.atom_mass(True)

    def stage2(factors: list[float]) -> tuple[float, float]:
        atoms = atom_masses(levels, factors, mech.lower, mech.upper)
        locs = _shared_locations(xa, xb, mech.lower, mech.upper, atoms)
        pa = _location_law(xa, locs, mech.unique_qs, coef, rule)
        pb = _location_law(xb, locs, mech.unique_qs, coef, rule)
        return _log_ratio_range(pa, pb)

    stage = mech.stage_atoms(n)
    if stage != "test":
        up, down = stage2([heavy if stage == "heavy" else light] * len(levels))
        return max(up, down)
    return selection_composed_loss(xa, xb, levels, mech.epsilon_test(n), light, heavy, stage2)


def selection_composed_loss(
    x: Any,
    x2: Any,
    levels: list[tuple[int, int]],
    eps_t: float,
    light: float,
    heavy: float,
    stage2: Callable[[list[float]], tuple[float, float]],
    *,
    rounds: bool = False,
) -> float:
    """The worst log ratio of the selection of a heavy level followed by a mechanism with the atoms it sets:
    for each outcome (every level light, or one level heavy, coarse to fine; with ``rounds``, the integers
    and the round levels up to 10, 100 or 1000 heavy) the log ratio of its probability
    (:func:`selection_law`) plus ``stage2``'s sup log ratios (x over x2, x2 over x) given the outcome's mass
    factors per unit of spacing (over ``levels``, then the round levels when ``rounds``), both directions."""
    from fractions import Fraction

    n = len(x)
    sel_a = selection_law(x, levels, n, eps_t, rounds=rounds)
    sel_b = selection_law(x2, levels, n, eps_t, rounds=rounds)
    order = sorted(range(len(levels)), key=lambda i: -Fraction(*levels[i]))
    extra = len(ROUND_LEVELS) if rounds else 0
    outcomes = []
    for pick in range(len(levels) + 1):
        factors = [light] * len(levels) + [0.0] * extra
        if pick:
            factors[order[pick - 1]] = heavy
        outcomes.append(factors)
    for r in range(extra):
        factors = [light] * len(levels) + [heavy if j <= r else 0.0 for j in range(extra)]
        factors[levels.index((1, 1))] = heavy
        outcomes.append(factors)
    worst = 0.0
    for pick, factors in enumerate(outcomes):
        up, down = stage2(factors)
        t = math.log(sel_a[pick]) - math.log(sel_b[pick])
        worst = max(worst, t + up, -t + down)
    return worst


def definition_nested_bounds(lower: float, upper: float, halvings: int) -> list[tuple[float, float]]:
    """The documented family: B_0 = [a, b]; B_k halves the width, anchored at a (a ≥ 0), at b (b ≤ 0), or
    centred at 0 and cut by the bounds; repeated bounds dropped."""
    out = [(lower, upper)]
    for k in range(1, halvings + 1):
        w = (upper - lower) / 2**k
        if lower >= 0:
            b = (lower, min(upper, lower + w))
        elif upper <= 0:
            b = (max(lower, upper - w), upper)
        else:
            r = max(-lower, upper) / 2**k
            b = (max(lower, -r), min(upper, r))
        if b[0] < b[1] and b != out[-1]:
            out.append(b)
    return out


def nested_privacy_loss(mech: Any, x: Any, x2: Any, *, coef_scale: float = 1.0, prior: float = 3.0) -> float:
    """Worst |log ratio| of the exact joint laws of (outcome, released locations) of NestedJointQuantiles on
    x and x′, from the definition: outcomes (B_k with the light atoms, prior 2^(−k/2)·e^-λ off B_0; B_0
    with heavy atoms on one of L levels, prior e^-λ/L), weight prior·Z/μ(B)^m, Z the definition's JointExp
    normaliser on B with the records clipped into it. ``coef_scale`` = 2: the twin that forgets the
    sensitivity 2."""
    from atoms_law import atom_masses

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    n = xa.size
    assert mech.declared.stage_atoms(n) != "test"  # the selection has its own check
    coef = coef_scale * (mech.declared.epsilon_main(n) - mech.margin(n)) / 4.0
    qs = mech.declared.unique_qs
    m = qs.size
    levels = spec_levels(mech.lattice) if mech.lattice is not None else []
    light, heavy = mech.declared.atom_mass(False), mech.declared.atom_mass(True)
    base = [heavy if mech.declared.stage_atoms(n) == "heavy" else light] * len(levels)
    outcomes = []
    for k, b in enumerate(definition_nested_bounds(mech.lower, mech.upper, mech.halvings)):
        outcomes.append((b, base, 0.0 if k == 0 else -0.5 * k * math.log(2.0) - prior))
    if levels and mech.atoms == "auto":
        for i in range(len(levels)):
            factors = [light] * len(levels)
            factors[i] = heavy
            outcomes.append(((mech.lower, mech.upper), factors, -prior - math.log(len(levels))))
    tables = {}
    totals = [0.0, 0.0]
    for idx, ((lo, hi), factors, log_prior) in enumerate(outcomes):
        atoms = atom_masses(levels, factors, lo, hi) if levels else {}
        ca, cb = np.clip(xa, lo, hi), np.clip(xb, lo, hi)
        locs = _shared_locations(ca, cb, lo, hi, atoms)
        scale = math.exp(log_prior) / ((hi - lo) + sum(atoms.values())) ** m
        wa = {c: w * scale for c, w in _location_weights(ca, locs, qs, coef, "greedy").items()}
        wb = {c: w * scale for c, w in _location_weights(cb, locs, qs, coef, "greedy").items()}
        tables[idx] = (wa, wb)
        totals[0] += sum(wa.values())
        totals[1] += sum(wb.values())
    worst = 0.0
    for wa, wb in tables.values():
        for c in wa:
            if wa[c] > 0 or wb[c] > 0:
                assert wa[c] > 0 and wb[c] > 0
                d = (math.log(wa[c]) - math.log(totals[0])) - (math.log(wb[c]) - math.log(totals[1]))
                worst = max(worst, abs(d))
    return worst
