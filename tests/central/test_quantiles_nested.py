"""JointExp over nested public bounds (docs/theory/quantiles.md#jointexp-over-nested-bounds): the family of
bounds, the law of the outcome drawn against the definition (brute force), its draws, the margin, and the
accuracy it buys with wide bounds. The worst privacy loss and its broken twin are in the registry case
(tests/mechanisms/mechanism_cases.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from atoms_law import atom_masses
from greedy_law import _location_weights, _shared_locations, definition_nested_bounds, spec_levels

from smoothdp.central.quantiles import JointQuantiles
from smoothdp.central.quantiles.nested import NestedJointQuantiles, nested_bounds
from smoothdp.rng import default_rng


@pytest.mark.parametrize(
    ("lower", "upper"), [(0.0, 100.0), (-1e4, 1e4), (-50.0, -2.0), (-1.0, 30.0), (3.0, 3.5)]
)
def test_the_family_of_bounds_is_the_documented_one(lower, upper):
    got = nested_bounds(lower, upper, 6)
    assert got == definition_nested_bounds(lower, upper, 6)
    assert got[0] == (lower, upper) and all(lower <= lo < hi <= upper for lo, hi in got)
    assert all(a[1] - a[0] > b[1] - b[0] for a, b in itertools.pairwise(got))


def _definition_outcome_law(mech, x, coef, prior=3.0):
    """P(outcome) from the definition: prior × Z/μ(B)^m, Z summed over every ordered location tuple."""
    xs = np.sort(np.asarray(x, float))
    n, m = xs.size, mech.declared.unique_qs.size
    levels = spec_levels(mech.lattice)
    light, heavy = mech.declared.atom_mass(False), mech.declared.atom_mass(True)
    rows = [
        (b, [light] * len(levels), 0.0 if k == 0 else -0.5 * k * math.log(2.0) - prior)
        for k, b in enumerate(definition_nested_bounds(mech.lower, mech.upper, mech.halvings))
    ]
    for i in range(len(levels)):
        factors = [light] * len(levels)
        factors[i] = heavy
        rows.append(((mech.lower, mech.upper), factors, -prior - math.log(len(levels))))
    weights = []
    for (lo, hi), factors, log_prior in rows:
        atoms = atom_masses(levels, factors, lo, hi)
        clipped = np.clip(xs, lo, hi)
        locs = _shared_locations(clipped, clipped, lo, hi, atoms)
        z = sum(_location_weights(clipped, locs, mech.declared.unique_qs, coef, "greedy").values())
        weights.append(math.exp(log_prior) * z / ((hi - lo) + sum(atoms.values())) ** m)
    del n
    w = np.array(weights)
    return w / w.sum()


CASES = [
    ([0.25, 0.25, 0.3, 0.75], [0.25, 0.75], (0.0, 1.0), 0.25, 2.0),
    ([0.5, 0.5, 0.5], [0.3, 0.6], (0.0, 4.0), 0.5, 3.0),  # tied, wide bounds: heavy outcomes count
    ([-0.3, 0.1, 0.2], [0.5, 0.9], (-2.0, 2.0), 1.0, 1.0),  # centred family
]


@pytest.mark.parametrize(("x", "qs", "bounds", "lattice", "eps"), CASES)
def test_the_outcome_law_is_the_definitions(x, qs, bounds, lattice, eps):
    """The code's float weights ln π − m·ln μ(B) + ln Z of every outcome against the definition's brute-force
    law (prior × normaliser / volume^m), on tiny data."""
    mech = NestedJointQuantiles(qs, epsilon=eps, bounds=bounds, lattice=lattice, halvings=3)
    d = mech._prepare(np.array(x))
    n = d.size
    atoms, _ = mech.declared.choose_atoms(d, default_rng(1))
    coef = (mech.declared.epsilon_main(n) - mech.margin(n)) / 4.0
    outcomes = mech.outcomes(n, atoms)
    w, _ = mech.log_weights(d, outcomes, coef)
    got = np.exp(w - w.max())
    got /= got.sum()
    expected = _definition_outcome_law(mech, d, coef)
    assert got.size == expected.size
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-300)


def test_the_outcome_draws_follow_the_law():
    mech = NestedJointQuantiles([0.3, 0.6], epsilon=3.0, bounds=(0.0, 4.0), lattice=0.5, halvings=3)
    d = mech._prepare(np.array([0.5, 0.5, 0.5, 1.3]))
    n = d.size
    coef = (mech.declared.epsilon_main(n) - mech.margin(n)) / 4.0
    law = _definition_outcome_law(mech, d, coef)
    rng = default_rng(2)
    total = 600
    names = [(o.bounds_index, o.heavy_level) for o in mech.outcomes(n, mech.declared.atoms_of(False))]
    counts = np.zeros(law.size)
    for _ in range(total):
        _, used, info = mech.sample_with_bounds(d, rng)
        level = info["lattice_test"]["level"]
        k = next(i for i, c in enumerate(mech.candidates) if (c.lower, c.upper) == used)
        heavy = None if level is None else 0
        counts[names.index((k, heavy))] += 1
    big = law * total >= 5
    assert np.sum((counts[big] - law[big] * total) ** 2 / (law[big] * total)) < big.sum() + 6 * math.sqrt(
        2 * big.sum()
    )


def test_margin_covers_every_candidate_and_is_public():
    mech = NestedJointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=0.5, bounds=(-1e4, 1e4))
    for n in (10, 100, 1000):
        atoms = mech._atoms_options(n)
        worst = max(c.margin_for(n, a) for c in mech.candidates for a in atoms)
        assert worst < mech.margin(n) <= 1e-4 and mech.admissible(n)
    assert len(mech.candidates) == 17 and len(mech.outcomes(100, mech.declared.atoms_of(False))) == 27


def test_nothing_changes_when_the_data_fill_the_bounds():
    """Data spread over the declared bounds: the declared bounds with the light atoms carry nearly all the
    weight; narrower bounds are negligible; the heavy outcomes keep about their prior e^-3 (on these data a
    fine heavy level is about the continuum, a coarse one snaps to within half its spacing)."""
    x = np.random.default_rng(3).uniform(5.0, 95.0, 200)
    mech = NestedJointQuantiles([0.25, 0.5, 0.75], epsilon=1.0, bounds=(0.0, 100.0))
    d = mech._prepare(x)
    n = d.size
    coef = (mech.declared.epsilon_main(n) - mech.margin(n)) / 4.0
    w, _ = mech.log_weights(d, mech.outcomes(n, mech.declared.atoms_of(False)), coef)
    p = np.exp(w - w.max())
    p /= p.sum()
    k = len(mech.candidates)
    assert p[0] > 0.9 and p[1:k].sum() < 1e-5 and p[k:].sum() < 1.5 * math.exp(-3.0)


def test_wide_bounds_cost_nothing():
    """Ages of 100 adults in bounds (0, 10⁴), deciles at ε = 1: JointExp's outputs follow the bounds' volume
    (median error in the thousands); over nested bounds they follow the data (error of a few years)."""
    from smoothdp.data import load_adult_ages

    x = np.random.default_rng(4).choice(load_adult_ages(), 100)
    qs = np.linspace(0.1, 0.9, 9)
    truth = np.quantile(x, qs, method="inverted_cdf")
    nested = NestedJointQuantiles(qs, epsilon=1.0, bounds=(0.0, 1e4))
    plain = JointQuantiles(qs, epsilon=1.0, bounds=(0.0, 1e4))
    rng = default_rng(5)
    d = nested._prepare(x)
    err_n = [np.mean(np.abs(nested.sample(d, rng) - truth)) for _ in range(5)]
    err_p = [np.mean(np.abs(plain.sample(d, rng) - truth)) for _ in range(5)]
    assert np.median(err_n) < 10.0 < 500.0 < np.median(err_p)


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="halvings"):
        NestedJointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), halvings=61)
    with pytest.raises(TypeError, match="halvings"):
        NestedJointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), halvings=2.0)
    with pytest.raises(ValueError, match="atoms"):
        NestedJointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), atoms="medium")
