"""One quantile over nested public bounds (docs/theory/quantiles.md#one-quantile-over-nested-bounds): the
weights of every candidate bounds read off one pass are the clipped problem's, the sampler draws the
written-out law, the calibration is public, and wide bounds stop ruining small samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

import smoothdp
from smoothdp.central.quantiles import ExponentialQuantile
from smoothdp.central.quantiles.atoms import build_atoms
from smoothdp.central.quantiles.em_samplers import (
    em_lattice_weights,
    em_quantile_index_weights,
    tie_distance,
)
from smoothdp.central.quantiles.nested import nested_bounds
from smoothdp.central.quantiles.nested_em import (
    _Base,
    _base_masses,
    _Blocks,
    _EndGeometry,
)
from smoothdp.rng import default_rng


def _base_mass(lo: float, hi: float, atoms) -> float:
    """μ([lo, hi]) from one scan of that pair alone: its length plus the atoms' mass in it."""
    if atoms is None:
        return hi - lo
    _, gap_mass, end_mass = atoms.scan(np.array([lo, hi]))
    return (hi - lo) + float(gap_mass[0]) + float(end_mass[0]) + float(end_mass[1])


def _with_own_ties_at_the_ends(logw, knots, x, bounds, atoms, target, coef, cap):
    """The clipped problem's log weights with the atoms at the ends of ``bounds`` re-weighted from the
    records' own tie ranges: ln(mass) − coef·min(dist(t, [#{x < v}, #{x ≤ v}]), cap)."""
    out = logw.copy()
    gaps = logw.size - knots.size
    for j in np.flatnonzero(np.isin(knots, bounds)):
        v = knots[j]
        mass = atoms.scan(np.array([v, v]))[2][0]
        below = np.array([float(np.searchsorted(x, v, side="left"))])
        at_most = np.array([float(np.searchsorted(x, v, side="right"))])
        out[gaps + j] = np.log(mass) - coef * tie_distance(below, at_most, target, 0.0, cap)[0]
    return out


def test_an_atom_at_the_end_of_a_halving_has_the_records_ranks():
    """10,000 hours tied at 40 in (0, 100) (the Adult data's median): the halving (0, 25) has an atom at 25.
    On the records clipped into (0, 25) that atom would hold the median (every record beyond 25 piled onto
    it) and win about one release in ten; with the records' own ranks it is 5,000 ranks away and never
    drawn."""
    x = np.concatenate((np.full(1000, 20.0), np.full(8000, 40.0), np.full(1000, 60.0)))
    gen = default_rng(7)
    out = np.array(
        [
            smoothdp.median(x, epsilon=1.0, bounds=(0.0, 100.0), neighbours="add_remove", rng=gen).value
            for _ in range(200)
        ]
    )
    assert np.all(out == 40.0)


@pytest.mark.parametrize("seed", range(40))
def test_each_block_has_the_clipped_problems_weights(seed):
    """The finite weights of B_k's block are, float for float, those of the single mechanism on the records
    clipped into B_k (its zero-length gaps have weight 0), except at the atoms on B_k's ends, which have
    the records' own tie ranges [#{x < v}, #{x ≤ v}] (:func:`_with_own_ties_at_the_ends`)."""
    gen = np.random.default_rng(seed)
    n = int(gen.integers(0, 40))
    lo0, hi0 = [(0.0, 100.0), (-50.0, 50.0), (-100.0, -1.0)][seed % 3]
    step = [1.0, 0.5, 0.25][seed % 3]
    centre = lo0 + (hi0 - lo0) * gen.uniform(0.0, 0.5)
    x = np.sort(np.clip(np.round(gen.normal(centre, 4.0, n) / step) * step, lo0, hi0))
    atoms = [None, build_atoms("multiscale"), build_atoms(0.5)][seed % 3]
    target, coef, cap = float(gen.uniform(0, max(n, 1))), 0.3, (math.inf if seed % 2 else 5.0)
    candidates = nested_bounds(lo0, hi0, 8)
    geometry = _EndGeometry(x, candidates)
    base_scan = pair_scan = None
    if atoms is not None:  # the sampler's one scan: the declared problem's edges, then the end pairs
        size = x.size + 2
        counts, gaps, knots = atoms.scan(np.concatenate(([lo0], x, [hi0], geometry.pairs)))
        base_scan = (counts[:, : size - 1], gaps[: size - 1], knots[:size])
        pair_scan = (counts[:, size:], gaps[size:], knots[size:])
        alone = em_lattice_weights(x, lo0, hi0, target, coef, atoms, 0.0, cap)[3]
        together = em_lattice_weights(x, lo0, hi0, target, coef, atoms, 0.0, cap, scanned=base_scan)[3]
        assert np.array_equal(alone, together)  # scanning beside other edges gives the same floats
    base = _Base(x, (lo0, hi0), target=target, coef=coef, atoms=atoms, offset=0.0, cap=cap, scanned=base_scan)
    assert _base_masses(candidates, atoms) == [_base_mass(lo, hi, atoms) for lo, hi in candidates]
    blocks = _Blocks(base, candidates, [0.0] * len(candidates), geometry, pair_scan)
    starts = np.concatenate(([0], np.cumsum(blocks.sizes)))
    for k, (lo, hi) in enumerate(candidates):
        mine = blocks.logw[starts[k] : starts[k + 1]]
        clipped = np.clip(x, lo, hi)
        if atoms is None:
            _, direct = em_quantile_index_weights(clipped, lo, hi, target, coef, 0.0, cap)
        else:
            _, _, knots, direct = em_lattice_weights(clipped, lo, hi, target, coef, atoms, 0.0, cap)
            direct = _with_own_ties_at_the_ends(direct, knots, x, (lo, hi), atoms, target, coef, cap)
        assert np.array_equal(np.sort(direct[np.isfinite(direct)]), np.sort(mine[np.isfinite(mine)]))
        for i in np.flatnonzero(np.isfinite(mine)):  # every piece that can be drawn decodes into B_k
            k_found, kind, a, b, _ = blocks.piece(base, int(starts[k] + i))
            assert k_found == k and lo <= a <= b <= hi and (kind == "gap") == (a < b)


def _written_law(x, mech):
    """P(k, cell) of the nested draw from its definition (continuum, no atoms): the cells of B_k are the
    gaps between the records clipped into it."""
    coef, cap, _ = mech.capped
    t = mech.q * x.size
    cells, logp = [], []
    for k, (lo, hi) in enumerate(mech.nested):
        clipped = np.clip(x, lo, hi)
        cuts = np.unique(np.concatenate(([lo, hi], clipped)))
        mids = 0.5 * (cuts[:-1] + cuts[1:])
        below = np.searchsorted(clipped, mids, side="left").astype(float)
        dist = np.minimum(np.abs(below - t), cap)
        prior = 0.0 if k == 0 else -3.0 - 0.5 * k * math.log(2.0)
        for a, b, d in zip(cuts[:-1], cuts[1:], dist, strict=True):
            cells.append((k, a, b))
            logp.append(prior - math.log(hi - lo) + math.log(b - a) - coef * d)
    logp = np.array(logp)
    return cells, np.exp(logp - np.logaddexp.reduce(logp))


def test_the_sampler_draws_the_written_out_law():
    x = np.array([0.3, 1.1, 1.2, 2.0, 7.5, 40.0])
    mech = ExponentialQuantile(
        0.5, epsilon=2.0, bounds=(0.0, 64.0), lattice=None, neighbours="add_remove", halvings=4
    )
    cells, probs = _written_law(x, mech)
    index = {(k, a, b): i for i, (k, a, b) in enumerate(cells)}
    rng = default_rng(17)
    total = 20000
    counts = np.zeros(len(cells))
    for _ in range(total):
        release = mech.release(x, rng=rng)
        lo, hi = release.details["bounds_used"]
        k = mech.nested.index((lo, hi))
        clipped = np.clip(x, lo, hi)
        cuts = np.unique(np.concatenate(([lo, hi], clipped)))
        j = min(max(int(np.searchsorted(cuts, release.value, side="right")) - 1, 0), cuts.size - 2)
        counts[index[(k, float(cuts[j]), float(cuts[j + 1]))]] += 1
    keep = probs * total >= 5
    expected = probs[keep] * total
    stat = float(np.sum((counts[keep] - expected) ** 2 / expected))
    dof = int(keep.sum()) - 1
    assert stat < dof + 6 * math.sqrt(2 * dof) + 10
    assert counts[~keep].sum() <= 5 * max(1, (~keep).sum()) + 20


def test_the_calibration_is_public_under_add_remove():
    mech = ExponentialQuantile(0.5, epsilon=0.7, bounds=(-1e5, 1e7), neighbours="add_remove", halvings=16)
    coef, _, eta = mech.capped
    assert 2 * 0.5 * coef + 4 * eta <= 0.7 * (1 - 0.075)  # Δ = 1/2 for the median; the lattice pre-stage 7.5%
    for n in (0, 1, 10, 10**4):
        assert mech.weight_margin(n) == eta and mech.epsilon_used(n) == mech.epsilon_used(0)


def test_wide_bounds_no_longer_swamp_a_small_sample():
    """150 incomes in (−10^5, 10^7) at ε = 0.1 under add/remove: without the halvings the median is a draw
    over the ten million (median |error| 8·10^5 on these seeds); with them, a few thousand."""
    gen = np.random.default_rng(0)
    x = np.round(gen.lognormal(10.3, 0.8, 150))
    truth = np.sort(x)[74]
    errors = {}
    for halvings in (0, 16):
        mech = ExponentialQuantile(
            0.5, epsilon=0.1, bounds=(-1e5, 1e7), neighbours="add_remove", halvings=halvings
        )
        values = np.array([mech.release(x, rng=s).value for s in range(200)])
        errors[halvings] = float(np.median(np.abs(values - truth)))
    assert errors[16] < errors[0] / 20
    assert errors[16] < 2e4
