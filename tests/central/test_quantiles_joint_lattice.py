"""JointExp on a public lattice with greedy splits and the private lattice test
(docs/theory/quantiles.md#jointexp-on-a-public-lattice): the programme's law against a brute force written
from the definition, the sampler's draws against that law, the worst privacy loss over adversarial
neighbours including the test stage (and a broken twin it catches), the within-cell draws, accuracy on tied
data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from atoms_law import atom_masses
from greedy_law import (
    definition_law,
    definition_locations,
    greedy_privacy_loss,
    sampler_state_law,
    selection_law,
    spec_levels,
)

from smoothdp.central.quantiles import JointQuantiles
from smoothdp.central.quantiles.greedy import GreedyChain, GreedyTables, greedy_sample
from smoothdp.rng import default_rng


def _definition_state_law(chain, x, qs, lower, upper, atoms, coef):
    """The definition's law, mapped to the sampler's states: a continuum piece or an atom that is not a
    record -> the gap state of its count; a record value that is an atom -> its knot state of count C."""
    locs = definition_locations(x, lower, upper, atoms)
    law: dict[tuple[int, ...], float] = {}
    for combo, counts, w in definition_law(x, qs, lower, upper, atoms, coef):
        seq = []
        for i, c in zip(combo, counts, strict=True):
            loc = locs[i]
            if loc["atom"] and loc["U"] > loc["L"]:
                block = np.flatnonzero(chain.knot_value == loc["value"])
                pos = np.flatnonzero(chain.knot & (chain.c2 == round(2 * c)) & np.isin(chain.bid, block))
            else:
                pos = np.flatnonzero(~chain.knot & (chain.gap == loc["L"]))
            assert pos.size == 1
            seq.append(int(pos[0]))
        law[tuple(seq)] = law.get(tuple(seq), 0.0) + w
    total = sum(law.values())
    return {k: v / total for k, v in law.items() if v > 0}


CASES = [
    ([0.0, 0.0, 1.0, 1.0, 1.0, 2.5, 3.0, 3.0], [0.3, 0.5, 0.8], (-1.5, 4.5), 1.0, 3.0),  # runs, off-lattice
    ([0.5, 0.5, 0.5, 0.25], [0.25, 0.75], (0.0, 1.0), 0.25, 30.0),  # two quantiles in one run
    ([1.0, 1.0, 0.0], [0.3, 0.5], (0.0, 1.0), 0.5, 20.0),  # records at both bounds
    ([2.0] * 5, [0.1, 0.2, 0.5, 0.9], (0.0, 3.0), 1.0, 4.0),  # four outputs in one run (clamped at U)
    ([0.1, 0.7], [0.5, 0.9], (0.0, 1.0), 0.25, 5.0),  # no ties: bound atoms only
    ([], [0.5, 0.75], (0.0, 2.0), 1.0, 1.0),  # n = 0
    ([0.5, 0.5, 0.3, 0.3, 0.3, 1.0], [0.4, 0.8], (0.0, 1.0), (0.5, 0.1), 6.0),  # two levels, a tenth tie
]


@pytest.mark.parametrize("atoms", ["heavy", "light"])
@pytest.mark.parametrize(("x", "qs", "bounds", "spacing", "eps"), CASES)
def test_programme_is_exactly_the_law_of_the_definition(x, qs, bounds, spacing, eps, atoms):
    mech = JointQuantiles(qs, epsilon=eps, bounds=bounds, lattice=spacing, atoms=atoms)
    d = mech._prepare(x).sorted_values()
    coef = (mech.epsilon_main(d.size) - mech.margin(d.size)) / 4.0
    factor = mech.atom_mass(atoms == "heavy")
    chain = GreedyChain(d, *bounds, mech.atoms_of(atoms == "heavy"))
    got = sampler_state_law(GreedyTables(chain, mech.unique_qs, coef))
    definition = atom_masses(spec_levels(spacing), factor, *bounds)
    expected = _definition_state_law(chain, d, mech.unique_qs, *bounds, definition, coef)
    assert set(got) == set(expected)
    for seq, p in expected.items():
        assert got[seq] == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_sampler_draws_follow_the_definition():
    """Chi-square of 4000 draws of the state sequence against the definition's exact law."""
    x = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 2.5, 3.0, 3.0])
    mech = JointQuantiles([0.3, 0.5, 0.8], epsilon=3.0, bounds=(-1.5, 4.5), atoms="heavy", lattice=1.0)
    coef = (mech.epsilon_main(x.size) - mech.margin(x.size)) / 4.0
    chain = GreedyChain(x, -1.5, 4.5, mech.atoms_of(True))
    tables = GreedyTables(chain, mech.unique_qs, coef)
    atoms = atom_masses([(1, 1)], mech.atom_mass(True), -1.5, 4.5)
    law = _definition_state_law(chain, x, mech.unique_qs, -1.5, 4.5, atoms, coef)
    rng = default_rng(11)
    total = 4000
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(total):
        seq = tuple(greedy_sample(tables, rng))
        assert seq in law
        counts[seq] = counts.get(seq, 0) + 1
    big = [k for k, p in law.items() if p * total >= 5]
    rest = 1.0 - sum(law[k] for k in big)
    obs = [counts.get(k, 0) for k in big] + [total - sum(counts.get(k, 0) for k in big)]
    exp = [law[k] * total for k in big] + [rest * total]
    chi2 = sum((o - e) ** 2 / e for o, e in zip(obs, exp, strict=True) if e > 0)
    df = len(big)
    assert chi2 < df + 5.0 * math.sqrt(2.0 * df)  # about 5 standard deviations


def _pairs(n, grid):
    import itertools

    out = []
    for x in itertools.combinations_with_replacement(grid, n):
        for i in range(n):
            for v in grid:
                if v != x[i]:
                    out.append((list(x), [*x[:i], v, *x[i + 1 :]]))
    return out


@pytest.mark.parametrize(
    ("atoms", "lattice"), [("test", 0.25), ("heavy", 0.25), ("auto", 0.25), ("test", (0.5, 0.25))]
)
def test_worst_privacy_loss_over_adversarial_neighbours_is_within_epsilon(atoms, lattice):
    """Exact laws (definition, not the code) of the level selected and the values, every substitution pair
    of 3 records on a grid with points of each level, off-lattice values and the bounds."""
    mech = JointQuantiles([0.25, 0.75], epsilon=2.0, bounds=(0.0, 1.0), lattice=lattice, atoms=atoms)
    worst = max(greedy_privacy_loss(mech, x, x2) for x, x2 in _pairs(3, (0.0, 0.25, 0.3, 0.5, 1.0)))
    assert 0.5 < worst <= 2.0 + 1e-9


def _level(mech, x, rng):
    """The level index the mechanism's stage 1 selects (None: light)."""
    _, info = mech.choose_atoms(x, rng)
    spacing = info["lattice_test"]["level"]
    return None if spacing is None else [lv.spacing for lv in mech.atoms_of(False).levels].index(spacing)


def test_the_selection_law_and_its_draws():
    """The selection's draws against its law from the definition (chi-square), on records tied at halves:
    the level 1/2 dominates; continuous records select light atoms."""

    mech = JointQuantiles(
        [0.25, 0.75], epsilon=40.0, bounds=(0.0, 10.0), lattice=(1.0, 0.5, 0.1), atoms="test"
    )
    x = np.sort(np.array([0.5, 1.0, 1.5, 1.5, 2.5, 3.0, 4.5, 5.0, 6.5, 7.0, 0.3, 9.5] * 3))
    eps_t = mech.epsilon_test(x.size)
    law = selection_law(x, spec_levels(mech.lattice), x.size, eps_t)
    assert law[2] > 0.5  # [light, 1, 1/2, 1/10]: the halves
    order = {None: 0, 0: 1, 1: 2, 2: 3}  # levels of (1.0, 0.5, 0.1) are already coarse to fine
    rng = default_rng(4)
    draws = np.bincount([order[_level(mech, x, rng)] for _ in range(3000)], minlength=4)
    expected = law * 3000
    keep = expected > 5
    assert np.sum((draws[keep] - expected[keep]) ** 2 / expected[keep]) < 30
    cont = np.sort(np.random.default_rng(1).uniform(0.0, 10.0, 36))
    assert selection_law(cont, spec_levels(mech.lattice), 36, eps_t)[0] > 0.99


def test_the_check_catches_a_broken_twin():
    """The same check on the twin with density exp(ε′u/2) (the sensitivity 2 forgotten) exceeds ε."""
    mech = JointQuantiles([0.25, 0.75], epsilon=2.0, bounds=(0.0, 1.0), lattice=0.25, atoms="test")
    worst = max(
        greedy_privacy_loss(mech, x, x2, coef_scale=2.0) for x, x2 in _pairs(3, (0.0, 0.25, 0.3, 0.5, 1.0))
    )
    assert worst > 2.0 + 0.1


def test_tied_values_are_released_exactly_where_the_continuum_never_can():
    """Integers 0..5 with counts 100/150/200/300/150/100 (n = 1000), ε = 2: the test picks heavy atoms and
    every quantile is the tied value itself in nearly every trial; the continuum release never is."""
    x = np.repeat(np.arange(6.0), [100, 150, 200, 300, 150, 100])
    qs = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    truth = np.quantile(x, qs, method="inverted_cdf")
    rng = default_rng(7)
    lat = JointQuantiles(qs, epsilon=2.0, bounds=(0.0, 10.0))
    cont = JointQuantiles(qs, epsilon=1.0, bounds=(0.0, 10.0), lattice=None)
    rels = [lat.release(x, rng=rng) for _ in range(20)]
    assert all(r.details["lattice_test"]["atoms"] == "heavy" for r in rels)
    hits = np.array([r.value == truth for r in rels])
    assert hits.mean() >= 0.9
    assert not any(np.any(cont.release(x, rng=rng).value == truth) for _ in range(10))


def test_the_test_keeps_light_atoms_on_continuous_data():
    x = np.random.default_rng(2).normal(0.0, 1.0, 2000)
    mech = JointQuantiles([0.25, 0.5, 0.75], epsilon=1.0, bounds=(-10.0, 10.0))
    rel = mech.release(x, rng=default_rng(5))
    test = rel.details["lattice_test"]
    assert test["atoms"] == "light" and test["epsilon"] == pytest.approx(0.05) and test["level"] is None
    assert rel.details["atoms"] == "auto" and rel.details["epsilon_float_margin"] < 1e-6


def test_within_cell_draws_are_exact_on_the_lattice_and_in_bounds():
    """Outputs are lattice points, continuum points of the chosen gap, or bounds; a duplicated quantile is
    released twice; the release reports the lattice."""
    x = np.array([2.0, 2.0, 2.0, 3.5, 7.0])
    mech = JointQuantiles([0.5, 0.1, 0.5], epsilon=3.0, bounds=(0.0, 10.0))
    rel = mech.release(x, rng=default_rng(3))
    assert rel.value.shape == (3,) and rel.value[0] == rel.value[2]
    assert rel.details["lattice"] == "multiscale"
    for seed in range(50):
        v = mech.sample(mech._prepare(x), default_rng(seed))
        assert np.all((v >= 0.0) & (v <= 10.0)) and v[1] <= v[0]


def test_margin_is_public_small_and_covers_both_atom_masses():
    deciles = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0), atoms="test")
    heavy = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0), atoms="heavy")
    light = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0), atoms="light")
    for n in (10, 10**3, 10**5, 10**6):
        assert deciles.margin(n) <= 1e-4 and deciles.admissible(n)
        assert deciles.margin(n) >= max(heavy.margin(n) * 0.95, light.margin(n) * 0.95)
    assert deciles.epsilon_test(10) == pytest.approx(0.05) and heavy.epsilon_test(10) == 0.0
    assert deciles.epsilon_main(10) + deciles.epsilon_test(10) <= 1.0


@pytest.mark.parametrize(("lattice", "levels", "first"), [("multiscale", 10, 680), (1.0, 1, 339)])
def test_auto_runs_the_selection_only_where_tied_data_select_their_level(lattice, levels, first):
    """atoms="auto" (default): the selection runs iff ε_t·(0.1n − 1/ε_t) ≥ ln(L + 1), ε_t = 0.05ε (then
    records all on one level select it with probability above 1/2): at ε = 1 from n = 680 on for the
    ten levels of the default, 339 for one level; below, all of ε goes to JointExp with light atoms."""
    auto = JointQuantiles([0.25, 0.5], epsilon=1.0, bounds=(0.0, 10.0), lattice=lattice)
    assert auto.atoms == "auto"
    runs = [n for n in range(first - 40, first + 41) if auto.stage_atoms(n) == "test"]
    expected = [n for n in range(first - 40, first + 41) if 0.05 * (0.1 * n - 20.0) >= math.log(levels + 1)]
    assert runs == expected == list(range(first, first + 41))
    assert auto.epsilon_test(first - 1) == 0.0 and auto.epsilon_main(first - 1) == 1.0
    assert auto.epsilon_test(first) == pytest.approx(0.05) and auto.epsilon_main(first) == pytest.approx(0.95)


@pytest.mark.parametrize(("n", "twin"), [(200, "light"), (800, "test")])
def test_auto_releases_exactly_what_the_rule_names(n, twin):
    """Same seed, same data: "auto" draws exactly what the explicitly chosen stage would."""
    x = np.repeat(np.arange(4.0), n // 4)
    auto = JointQuantiles([0.3, 0.6], epsilon=1.0, bounds=(0.0, 10.0))
    named = JointQuantiles([0.3, 0.6], epsilon=1.0, bounds=(0.0, 10.0), atoms=twin)
    for seed in range(3):
        a, b = auto.release(x, rng=default_rng(seed)), named.release(x, rng=default_rng(seed))
        assert np.array_equal(a.value, b.value)
        assert a.details["lattice_test"]["epsilon"] == (0.05 if twin == "test" else 0.0)


def test_lattice_and_atoms_are_validated_from_public_values_alone():
    with pytest.raises(ValueError, match="lattice"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), lattice=1 / 3)
    with pytest.raises(ValueError, match="lattice"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), lattice="1")
    with pytest.raises(TypeError, match="lattice"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), lattice=[1.0, None])
    with pytest.raises(ValueError, match="atoms"):
        JointQuantiles([0.5, 0.6], epsilon=1.0, bounds=(0.0, 1.0), atoms="medium")
