"""JointExp on a public lattice (docs/theory/quantiles.md#jointexp-on-a-public-lattice): the dynamic
programme's law against a brute force written from the definition, the within-cell draws, and accuracy on
tied integer data. Privacy (worst loss over adversarial neighbours, broken twin): the registry case in
tests/mechanisms/quantile_cases.py."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from jointexp_law import sampler_law

from smoothdp.central.quantiles import JointQuantiles, _LatticeCells
from smoothdp.rng import default_rng

C_PER_SPACING = 2.0**-14  # the documented atom mass per unit of spacing


def _brute_cell_law(x, qs, lower, upper, spacing, coef):
    """Law of the cell sequence (cell = 2·C) from the definition: outputs are continuum points (measure
    Lebesgue) or (lattice point v, split s ∈ {0..n}) (measure c/(n+1)), lexicographically ordered, with
    C = #{x < o} + min(s + 1/2, #{x = o}) and density ∝ exp(−coef·2·Σ_j |C_j − C_{j−1} − g_j|)·…"""
    x = np.sort(np.asarray(x, float))
    n, m = x.size, len(qs)
    k = np.arange(math.ceil(lower / spacing), math.floor(upper / spacing) + 1)
    pts = k * spacing
    cuts = np.unique(np.concatenate(([lower, upper], pts, x)))
    c = C_PER_SPACING * spacing
    locs = []  # (sort key, measure, cell, continuum-piece id or None)
    for a, b in itertools.pairwise(cuts):
        if b > a:
            mid = 0.5 * (a + b)
            locs.append(((mid, 0), b - a, 2 * int(np.sum(x < mid)), ("piece", a)))
    for v in pts:
        below, equal = int(np.sum(x < v)), int(np.sum(x == v))
        for s in range(n + 1):
            cc = below + min(s + 0.5, equal)
            locs.append(((v, s), c / (n + 1), round(2 * cc), ("atom", v, s)))
    locs.sort(key=lambda t: t[0])
    targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
    law: dict[tuple[int, ...], float] = {}
    for combo in itertools.combinations_with_replacement(range(len(locs)), m):
        cells = [locs[i][2] for i in combo]
        counts = np.diff(np.concatenate(([0.0], np.array(cells) / 2.0, [float(n)])))
        meas = 1.0
        for i in set(combo):
            r = combo.count(i)
            meas *= locs[i][1] ** r / math.factorial(r)  # the ordered cone of r equal diffuse locations
        w = meas * math.exp(-coef * float(np.sum(np.abs(counts - targets))))
        law[tuple(cells)] = law.get(tuple(cells), 0.0) + w
    total = sum(law.values())
    return {s: p / total for s, p in law.items() if p > 0}


@pytest.mark.parametrize(
    ("x", "qs", "eps", "spacing"),
    [
        ([0.5, 0.5, 0.5, 0.25], [0.25, 0.75], 30.0, 0.25),  # a run of ties on the lattice
        ([0.5, 0.5, 0.3], [0.4, 0.6], 40.0, 0.5),  # two quantiles inside one run; a record off the lattice
        ([1.0, 1.0, 0.0], [0.3, 0.5], 20.0, 0.5),  # records at both bounds
        ([0.1, 0.7], [0.5, 0.9], 5.0, 0.25),  # no ties
    ],
)
def test_programme_is_exactly_the_law_of_the_definition(x, qs, eps, spacing):
    mech = JointQuantiles(qs, epsilon=eps, bounds=(0.0, 1.0), lattice=spacing)
    d = mech._prepare(x)
    coef = (eps - mech.margin(d.size)) / 4.0
    cells = _LatticeCells(d, 0.0, 1.0, mech._lattice)
    expected = _brute_cell_law(d, list(mech.unique_qs), 0.0, 1.0, spacing, coef)
    got = sampler_law(mech._tables(d, coef, cells), len(qs), cells.log_mass.size)
    assert set(got) == set(expected)
    for seq, p in expected.items():
        assert got[seq] == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_tied_values_are_released_exactly_where_the_continuum_never_can():
    """Integers 0..5 with counts 100/150/200/300/150/100 (n = 1000), ε = 1. The decile 0.6 sits 150 ranks
    inside the run of 3s: the lattice release is exactly 3 in nearly every trial, and over all seven
    quantiles a large share of the values are the tied values themselves; the continuum release never is.
    (Not every decile is exact: JointExp's utility lets all outputs shift together into the gaps next to
    their runs at the cost of one shift, docs/theory/quantiles.md#jointexp-on-a-public-lattice.)"""
    x = np.repeat(np.arange(6.0), [100, 150, 200, 300, 150, 100])
    qs = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    truth = np.quantile(x, qs, method="inverted_cdf")
    rng = default_rng(7)
    lat = JointQuantiles(qs, epsilon=1.0, bounds=(0.0, 10.0))
    cont = JointQuantiles(qs, epsilon=1.0, bounds=(0.0, 10.0), lattice=None)
    hits = np.array([lat.release(x, rng=rng).value == truth for _ in range(40)])
    assert hits[:, 4].mean() >= 0.9
    assert hits.mean() >= 0.4
    assert not any(np.any(cont.release(x, rng=rng).value == truth) for _ in range(10))


def test_within_cell_draws_are_exact_on_the_lattice_and_in_bounds():
    """Outputs are lattice points, continuum points of the chosen gap, or bounds; a duplicated quantile is
    released twice; the release reports the lattice."""
    x = np.array([2.0, 2.0, 2.0, 3.5, 7.0])
    mech = JointQuantiles([0.5, 0.1, 0.5], epsilon=3.0, bounds=(0.0, 10.0))
    rel = mech.release(x, rng=default_rng(3))
    assert rel.value.shape == (3,) and rel.value[0] == rel.value[2]
    assert rel.details["lattice"] == 1.0
    for _ in range(50):
        v = mech.sample(mech._prepare(x), default_rng(_))
        assert np.all((v >= 0.0) & (v <= 10.0)) and v[1] <= v[0]


def test_lattice_is_validated_from_the_spacing_alone():
    with pytest.raises(ValueError, match="lattice"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), lattice=0.1)
    with pytest.raises(TypeError, match="lattice"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), lattice="1")
