"""Exact laws for the greedy lattice JointExp (docs/theory/quantiles.md#jointexp-on-a-public-lattice):
the law of the sampler's state sequence read off its float tables, and the law from the definition by
brute-force enumeration of ordered outputs on tiny data (written from the definition, not from the code)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
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


def definition_locations(x: Any, lower: float, upper: float, spacing: float, mass: float) -> list[dict]:
    """Every location of one output, in increasing order: continuum pieces between all cuts (bounds,
    records, lattice points; measure = length) and lattice atoms (measure = mass)."""
    x = np.sort(np.asarray(x, float))
    ks = np.arange(math.ceil(lower / spacing), math.floor(upper / spacing) + 1)
    pts = ks * spacing
    cuts = np.unique(np.concatenate(([lower, upper], pts, x)))
    locs = []
    for a, b in itertools.pairwise(cuts):
        if b > a:
            mid = 0.5 * (a + b)
            locs.append({"key": mid, "atom": False, "measure": b - a, "value": mid,
                         "L": int(np.sum(x < mid)), "U": int(np.sum(x < mid))})
    for v in pts:
        locs.append({"key": v, "atom": True, "measure": mass, "value": v,
                     "L": int(np.sum(x < v)), "U": int(np.sum(x <= v))})
    locs.sort(key=lambda d: d["key"])
    return locs


def definition_law(
    x: Any, qs: Any, lower: float, upper: float, spacing: float, mass: float, coef: float,
    *, rule: str = "greedy"
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
    locs = definition_locations(x, lower, upper, spacing, mass)
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


def _location_law(x: Any, locs: list[dict], qs: Any, coef: float, rule: str) -> dict[tuple[int, ...], float]:
    """Law of the released location tuple (counts and ρ summed out) on the given locations."""
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
    total = sum(law.values())
    return {k: v / total for k, v in law.items()}


def _shared_locations(x: Any, x2: Any, lower: float, upper: float, spacing: float, mass: float) -> list[dict]:
    both = np.concatenate((np.asarray(x, float), np.asarray(x2, float)))
    return definition_locations(both, lower, upper, spacing, mass)  # cuts at the records of both


def greedy_privacy_loss(
    mech: Any, x: Any, x2: Any, *, rule: str = "greedy", coef_scale: float = 1.0
) -> float:
    """Worst |log ratio| of the exact laws of everything JointQuantiles (lattice, ``atoms="test"`` or a
    public choice) releases on x and x′: the noisy count k (discrete Laplace of scale t around
    N = #records on the lattice) and the values given the atom mass chosen by k. Written from the
    definition with the mechanism's public parameters (ε, the test's ε and threshold, the margin).
    ``coef_scale`` = 2: the broken twin with density exp(ε′u/2) (sensitivity 2 ignored)."""
    from smoothdp.central.quantiles_greedy import test_scale, test_threshold

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    n = xa.size
    coef = coef_scale * (mech.epsilon_main(n) - mech.margin(n)) / 4.0
    s = mech.lattice

    def stage2(heavy: bool) -> tuple[float, float]:
        mass = mech.atom_mass(heavy)
        locs = _shared_locations(xa, xb, mech.lower, mech.upper, s, mass)
        pa = _location_law(xa, locs, mech.unique_qs, coef, rule)
        pb = _location_law(xb, locs, mech.unique_qs, coef, rule)
        keys = [k for k in pa if pa[k] > 0 or pb[k] > 0]
        assert all(pa[k] > 0 and pb[k] > 0 for k in keys)
        d = np.array([math.log(pa[k]) - math.log(pb[k]) for k in keys])
        return float(d.max()), float(-d.min())

    atoms = mech.stage_atoms(n)
    if atoms != "test":
        up, down = stage2(atoms == "heavy")
        return max(up, down)
    eps_t = mech.epsilon_test(n)
    t = test_scale(eps_t)
    thr = test_threshold(n, eps_t)
    on = [int(np.sum(np.isclose(np.round(v / s) * s, v) & (np.abs(v) < 2.0**50))) for v in (xa, xb)]
    heavy_loss, light_loss = stage2(True), stage2(False)
    worst = 0.0
    for k in range(min(on) - 3, math.ceil(thr) + max(on) + 3):
        tk = (abs(k - on[1]) - abs(k - on[0])) / t  # ln P_x(k) − ln P_x′(k)
        up, down = heavy_loss if k >= thr else light_loss
        worst = max(worst, tk + up, -tk + down)
    return worst
