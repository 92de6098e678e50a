"""One quantile under substitution with the selection of a heavy level first
(docs/theory/quantiles.md#the-heavy-level-of-one-quantile): when it runs (a public rule of n, ε and the
lattice), what it spends, that the levels drawn follow the selection's law from its definition, that the
values then follow the exponential mechanism with the atoms it set, and what it buys on tied data."""

from __future__ import annotations

import itertools
import math
from types import ModuleType

import numpy as np
from atoms_law import atom_masses
from greedy_law import selection_law, spec_levels

import smoothdp
from smoothdp.central.quantiles import ExponentialQuantile
from smoothdp.rng import default_rng

SHARE = 0.05  # the documented share of ε of the selection


def test_the_selection_runs_from_the_documented_rule_and_spends_its_share():
    """With ``atoms="auto"`` it runs where records all on one level would select it with probability above
    1/2: 0.05ε·(0.1n − 1/(0.05ε)) ≥ ln(L + 1), L the lattice's levels (ten for the multiscale lattice), up
    to n = 2^20; then ε′ = 0.95ε − 4η, and the report gives its ε."""
    levels = 10
    for n, eps in ((100, 1.0), (1000, 0.5), (1000, 1.0), (2000, 0.5), (20_000, 0.1)):
        mech = ExponentialQuantile(0.5, epsilon=eps, bounds=(0.0, 100.0))
        expected = SHARE * eps * (0.1 * n - 1.0 / (SHARE * eps)) >= math.log(levels + 1.0)
        assert mech.selects_level(n) == expected
        x = np.round(np.random.default_rng(n).uniform(20.0, 60.0, n), 1)
        release = smoothdp.median(x, epsilon=eps, bounds=(0.0, 100.0), rng=default_rng(1))
        report = release.details.get("lattice_test")
        assert (report is not None) == expected
        used = release.details["epsilon_in_weights"]
        share = SHARE * eps if expected else 0.0
        assert eps - share - 1e-6 < used <= eps - share
        if expected:
            assert report["epsilon"] == SHARE * eps
    light = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0), atoms="light")
    assert not light.selects_level(10**6)  # a public choice of masses: nothing to select
    auto = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0))
    assert auto.selects_level(1 << 20) and not auto.selects_level((1 << 20) + 1)  # light atoms suffice
    forced = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0), atoms="test")
    assert forced.selects_level(3)
    nested = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0), atoms="test", halvings=3)
    assert not nested.selects_level(10**4) and nested.epsilon_selection(10**4) == 0.0  # no selection runs


def test_the_levels_drawn_follow_the_selection_law():
    """Records tied at tenths (and some at halves): the level reported in 3000 releases against the law of
    the selection written from its definition (chi-square over the candidates with expected count > 5)."""
    lattice = (1.0, 0.5, 0.1)
    mech = ExponentialQuantile(0.5, epsilon=4.0, bounds=(0.0, 10.0), lattice=lattice, atoms="test")
    x = np.sort(np.array([0.3, 1.5, 2.5, 2.7, 3.1, 4.5, 4.9, 5.5, 6.1, 7.3] * 12))
    law = selection_law(x, spec_levels(lattice), x.size, SHARE * 4.0)
    assert law[3] > 0.5  # [light, 1, 1/2, 1/10]: the tenths
    names = {None: 0, 1.0: 1, 0.5: 2, 0.1: 3}
    rng = default_rng(5)
    picks = [mech.release(x, rng=rng).details["lattice_test"]["level"] for _ in range(3000)]
    draws = np.bincount([names[p] for p in picks], minlength=4)
    expected = law * 3000
    keep = expected > 5
    assert np.sum((draws[keep] - expected[keep]) ** 2 / expected[keep]) < 30


def test_given_the_heavy_level_the_values_follow_the_exponential_mechanism():
    """On data all at quarters the selection picks the quarters in most releases; given that, the share of
    releases at each record value is the law of the exponential mechanism with those atoms heavy (64 per
    unit of spacing), written from its definition: mass × exp(−coef·dist(t, [#{x < v}, #{x ≤ v}])) over the
    atoms and the gaps."""
    x = np.sort(np.array([0.25, 0.5, 0.5, 0.75, 0.75, 0.75, 1.0, 1.25] * 15))
    eps, bounds = 4.0, (0.0, 2.0)
    mech = ExponentialQuantile(0.5, epsilon=eps, bounds=bounds, lattice=0.25, atoms="test")
    coef = 0.5 * mech.epsilon_used(x.size)
    atoms = atom_masses(spec_levels(0.25), [64.0], *bounds)
    t = math.ceil(0.5 * x.size) - 0.5

    def weight(v: float) -> float:
        below, at_most = np.sum(x < v), np.sum(x <= v)
        return math.exp(-coef * max(0.0, below - t, t - at_most))

    cuts = np.unique(np.concatenate((bounds, x)))
    gaps = sum((b - a) * weight(0.5 * (a + b)) for a, b in itertools.pairwise(cuts))
    z = gaps + sum(m * weight(v) for v, m in atoms.items())
    rng = default_rng(8)
    releases = [mech.release(x, rng=rng) for _ in range(2000)]
    heavy = [r.value for r in releases if r.details["lattice_test"]["level"] == 0.25]
    assert len(heavy) > 1000  # the quarters are selected in most releases
    for v in (0.5, 0.75, 1.0):
        p = atoms[v] * weight(v) / z
        share = np.mean(np.array(heavy) == v)
        assert abs(share - p) < 4.0 * math.sqrt(p * (1.0 - p) / len(heavy)) + 1e-3


def test_temperatures_to_one_decimal_are_released_exactly():
    """2,000 temperatures to one decimal (N(15, 8)), about ten records per tenth at the median: at ε = 1
    the median is the exact tenth in most releases (light atoms alone: about 1%); continuous records
    select the light atoms and are released as before."""
    gen = np.random.default_rng(3)
    temps = np.round(gen.normal(15.0, 8.0, 2000), 1)
    truth = float(np.quantile(temps, 0.5, method="inverted_cdf"))
    rng = default_rng(9)
    out = np.array(
        [smoothdp.median(temps, epsilon=1.0, bounds=(-50.0, 60.0), rng=rng).value for _ in range(200)]
    )
    assert np.mean(out == truth) > 0.5
    cont = gen.normal(15.0, 8.0, 2000)
    levels = [
        smoothdp.median(cont, epsilon=1.0, bounds=(-50.0, 60.0), rng=rng).details["lattice_test"]["level"]
        for _ in range(50)
    ]
    assert levels.count(None) >= 48


def test_from_epsilon_one_and_a_half_a_heavy_level_replaces_smooth_sensitivity():
    """At ε = 2 (where ``method="auto"`` is the smooth-sensitivity quantile) the same selection runs first
    (docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity): temperatures to a tenth come out exact
    in most releases (smooth sensitivity alone: never), continuous records stay light and get the
    smooth-sensitivity release at ε_s = 0.95ε; where the selection does not run (ε·n small) the
    smooth-sensitivity quantile runs alone at the whole ε."""
    gen = np.random.default_rng(4)
    temps = np.round(gen.normal(15.0, 8.0, 2000), 1)
    truth = float(np.quantile(temps, 0.5, method="inverted_cdf"))
    rng = default_rng(11)
    runs = [smoothdp.median(temps, epsilon=2.0, bounds=(-50.0, 60.0), rng=rng) for _ in range(100)]
    assert {r.details["method"] for r in runs} == {"heavy_level_or_smooth_sensitivity"}
    assert np.mean([r.value == truth for r in runs]) > 0.8
    alone = smoothdp.median(temps, epsilon=2.0, bounds=(-50.0, 60.0), method="smooth_sensitivity", rng=rng)
    assert alone.value != truth and alone.details["method"] == "smooth_sensitivity"
    cont = gen.normal(15.0, 8.0, 2000)
    light = [smoothdp.median(cont, epsilon=2.0, bounds=(-50.0, 60.0), rng=rng) for _ in range(30)]
    assert sum(r.details["lattice_test"]["atoms"] == "light" for r in light) >= 28
    first = light[0]
    assert first.details["epsilon_selection"] + first.details["epsilon_smooth_sensitivity"] <= 2.0
    assert first.details["epsilon_smooth_sensitivity"] == 0.95 * 2.0
    errors = np.abs([r.value - np.median(cont) for r in light])
    assert np.median(errors) < 0.05  # smooth sensitivity's accuracy (width 110, n = 2000)
    small = smoothdp.median(cont[:100], epsilon=2.0, bounds=(-50.0, 60.0), rng=rng)
    assert small.details["method"] == "smooth_sensitivity"  # ε·n = 200: no selection
    q = smoothdp.quantile(temps, 0.3, epsilon=2.0, bounds=(-50.0, 60.0), rng=rng)
    assert q.details["method"] == "heavy_level_or_smooth_sensitivity" and q.statistic == "quantile(0.3)"


def test_heavy_level_or_smooth_has_the_same_public_fields_on_neighbours():
    """The mechanism's name, proof, β and every detail but the selection's report are public: equal on a data
    set on one level and its neighbour (one record moved off the lattice), whichever branch ran."""
    from smoothdp.central.quantiles import HeavyLevelOrSmoothQuantile

    x = np.round(np.random.default_rng(6).uniform(0.0, 10.0, 1500), 1)
    x2 = x.copy()
    x2[0] = math.pi
    mech = HeavyLevelOrSmoothQuantile(0.5, epsilon=2.0, bounds=(0.0, 10.0))
    seen, reference = set(), None
    rng = default_rng(13)
    for data in (x, x2, np.full(1500, 5.0), np.random.default_rng(7).uniform(0.0, 10.0, 1500)):
        for _ in range(3):
            r = mech.release(data, rng=rng)
            seen.add(r.details["lattice_test"]["atoms"])
            public = {k: v for k, v in r.details.items() if k != "lattice_test"}
            fields = (r.mechanism, r.proof, r.beta, r.statistic, type(r.value), tuple(sorted(public.items())))
            reference = reference or fields
            assert fields == reference
    assert seen == {"heavy", "light"}


def test_each_stage_of_heavy_level_or_smooth_keeps_its_share():
    """Lemma 7b composes three shares, and each stage is checked against its own on every substitution pair of
    three records (on quarters, tenths, both or neither): the selection's log ratios ≤ ε_t, the exponential
    mechanism with each heavy outcome ≤ ε − ε_t, the smooth-sensitivity stage ≤ ε_s. The composed check in the
    registry cannot see a small over-spend of one stage (its worst pairs differ); this one does: the
    smooth-sensitivity stage at the whole ε fails it."""
    _mechanism_cases()  # puts tests/mechanisms on the path
    from mechanism_cases import _substitution_pairs, location_scale_loss
    from quantile_cases import (
        ATOM_MASS_PER_SPACING,
        HEAVY_PER_SPACING,
        _lattice_em_stage,
        _pieces,
        _rank_target,
    )

    from smoothdp.central.quantiles import HeavyLevelOrSmoothQuantile

    lattice, bounds, eps = (0.25, 0.1), (0.0, 1.0), 2.0
    mech = HeavyLevelOrSmoothQuantile(0.5, epsilon=eps, bounds=bounds, lattice=lattice)
    levels = spec_levels(lattice)
    eps_t = SHARE * eps  # the documented shares, not the mechanism's own attributes
    eps_s = eps - eps_t
    smooth, em = mech.smooth_mechanism(3), mech.exponential
    stat, noise = smooth.statistic, smooth.calibration.noise
    worst = {"selection": 0.0, "exponential": 0.0, "smooth": 0.0}
    for x, x2, _ in _substitution_pairs(3, (0.0, 0.25, 0.3, 1 / 3, 0.5, 1.0)):
        a, b = selection_law(x, levels, 3, eps_t), selection_law(x2, levels, 3, eps_t)
        worst["selection"] = max(worst["selection"], float(np.max(np.abs(np.log(a) - np.log(b)))))
        f, s = stat.value(x), smooth.smooth_sensitivity(x)
        f2, s2 = stat.value(x2), smooth.smooth_sensitivity(x2)
        both = (
            location_scale_loss(noise, f, s, f2, s2, True, 0.0),
            location_scale_loss(noise, f2, s2, f, s, True, 0.0),
        )
        worst["smooth"] = max(worst["smooth"], *both)
        coef = 0.5 * em.epsilon_used(3)
        stage = _lattice_em_stage(x, x2, bounds, _rank_target(0.5, 3), coef, levels, _pieces(x, x2, *bounds))
        for pick in range(len(levels)):
            factors = [ATOM_MASS_PER_SPACING] * len(levels)
            factors[pick] = HEAVY_PER_SPACING
            worst["exponential"] = max(worst["exponential"], *stage(factors))
    assert worst["selection"] <= eps_t + 1e-9
    assert worst["exponential"] <= eps - eps_t + 1e-9
    assert worst["smooth"] <= eps_s + 1e-9
    assert worst["smooth"] > 0.9 * eps_s and worst["exponential"] > 0.5 * (
        eps - eps_t
    )  # the pairs reach them


# The round numbers (docs/theory/quantiles.md#round-numbers): on the default multi-scale lattice the
# selection also offers "the integers and every round level up to 10, 100 or 1000 heavy".

ROUND_MIX = np.sort(
    np.concatenate(
        [
            np.repeat([1000.0, 2000.0, 3000.0, 5000.0], 20),  # 40% multiples of 1000
            np.repeat([1100.0, 1700.0, 2300.0], 20),  # 70% multiples of 100
            np.arange(1, 61, dtype=float) * 37.0,  # other integers
        ]
    )
)


def _mechanism_cases() -> tuple[ModuleType, ModuleType]:
    """The privacy-case modules of tests/mechanisms (put on the path)."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "mechanisms"))
    import mechanism_cases
    import quantile_cases

    return mechanism_cases, quantile_cases


def test_the_round_numbers_drawn_follow_the_selection_law():
    """Records 40% at multiples of 1000, 70% at multiples of 100: the level reported in 2000 releases against
    the law written from its definition (the round levels tie with the integers, weighted 2, 4 and 8; the
    thousands lose 20 units of score), chi-square over the outcomes with expected count > 5."""
    from atoms_law import MULTISCALE_LEVELS

    eps = 4.0
    law = selection_law(ROUND_MIX, MULTISCALE_LEVELS, ROUND_MIX.size, SHARE * eps, rounds=True)
    assert law[-2] > 0.4 and law[-3] > 0.2 and law[-1] > 0.1  # the hundreds, the tens, the thousands
    order = sorted(MULTISCALE_LEVELS, key=lambda pq: -pq[0] / pq[1])
    names: dict[float | None, int] = {None: 0}
    names.update({p / q: 1 + i for i, (p, q) in enumerate(order)})
    names.update({10.0: len(order) + 1, 100.0: len(order) + 2, 1000.0: len(order) + 3})
    mech = ExponentialQuantile(0.5, epsilon=eps, bounds=(0.0, 10_000.0), atoms="test")
    rng = default_rng(11)
    picks = [mech.release(ROUND_MIX, rng=rng).details["lattice_test"]["level"] for _ in range(2000)]
    draws = np.bincount([names[p] for p in picks], minlength=law.size)
    expected = law * 2000
    keep = expected > 5
    assert np.sum((draws[keep] - expected[keep]) ** 2 / expected[keep]) < 30


def test_the_round_selection_keeps_its_share_and_its_broken_twin_does_not():
    """The selection's law (from its definition, round levels included) on every substitution pair of four
    records among 1/3 (on no level), a half, integers, multiples of 10, 100 and 1000: log ratios ≤ ε_t, and
    close to it (a record moved from 1000 to 1/3 lowers the round scores and raises the light one). The twin
    that forgets the 1/2 of the exponential mechanism on the round levels spends about 1.5·ε_t."""
    from atoms_law import MULTISCALE_LEVELS

    mechanism_cases, _ = _mechanism_cases()
    eps_t = 2.0
    worst, twin = 0.0, 0.0
    for x, x2, _ in mechanism_cases._substitution_pairs(4, (1 / 3, 0.5, 7.0, 30.0, 200.0, 1000.0)):
        a = selection_law(x, MULTISCALE_LEVELS, 4, eps_t, rounds=True)
        b = selection_law(x2, MULTISCALE_LEVELS, 4, eps_t, rounds=True)
        worst = max(worst, float(np.max(np.abs(np.log(a) - np.log(b)))))
        a2 = selection_law(x, MULTISCALE_LEVELS, 4, eps_t, rounds=True, round_coef_scale=2.0)
        b2 = selection_law(x2, MULTISCALE_LEVELS, 4, eps_t, rounds=True, round_coef_scale=2.0)
        twin = max(twin, float(np.max(np.abs(np.log(a2) - np.log(b2)))))
    assert 0.9 * eps_t < worst <= eps_t + 1e-9
    assert twin > 1.2 * eps_t, twin


def test_given_round_numbers_the_values_keep_the_second_share():
    """The exponential mechanism on the base measure a round outcome sets (integers, 10, 100, 1000 at 64 per
    unit of spacing; the finer levels' light masses are the same on both sides and left out here), from its
    definition, on substitution pairs of three records: log ratios ≤ ε − ε_t."""
    mechanism_cases, quantile_cases = _mechanism_cases()
    eps, bounds = 1.0, (0.0, 2000.0)
    levels = [(1, 1), (10, 1), (100, 1), (1000, 1)]
    coef = 0.5 * (eps - SHARE * eps)
    worst = 0.0
    for x, x2, _ in mechanism_cases._substitution_pairs(3, (0.5, 7.0, 100.0, 1000.0, 1234.5))[:40]:
        stage = quantile_cases._lattice_em_stage(
            x,
            x2,
            bounds,
            quantile_cases._rank_target(0.5, 3),
            coef,
            levels,
            quantile_cases._pieces(x, x2, *bounds),
        )
        worst = max(worst, *stage([quantile_cases.HEAVY_PER_SPACING] * 4))
    assert 0.4 * (eps - SHARE * eps) < worst <= eps - SHARE * eps + 1e-9


def test_incomes_at_round_numbers_get_their_round_medians():
    """The California incomes (92% multiples of 100, 57% of 1000; the median 18,000 a run of 88 ties) at
    ε = 0.1: the default's median is exact in most releases; with the integers heavy alone (the selection's
    best outcome before the round numbers) in almost none: the integers between the round incomes, each as
    heavy as 18,000, outweigh its run. Fails if the round levels are not offered."""
    from smoothdp.data import load_ca_incomes

    x = load_ca_incomes()
    truth = float(np.sort(x)[math.ceil(0.5 * x.size) - 1])
    bounds = (-1e5, 1e7)
    rounded = [smoothdp.median(x, epsilon=0.1, bounds=bounds, rng=default_rng(s)) for s in range(60)]
    exact = np.mean([float(r.value) == truth for r in rounded])
    integers = ExponentialQuantile(0.5, epsilon=0.1 * (1 - SHARE), bounds=bounds, lattice=1.0, atoms="heavy")
    exact_integers = np.mean([integers.release(x, rng=default_rng(s)).value == truth for s in range(60)])
    assert exact >= 0.4 and exact_integers <= 0.1


def test_integers_off_round_numbers_keep_the_integers():
    """Distinct integers (a census weight) give the round levels no weight to speak of: from the definition
    their selection probability is below 1e-7 at ε = 1, and the releases report the integers."""
    from atoms_law import MULTISCALE_LEVELS

    g = np.random.default_rng(9)
    x = np.sort(g.integers(10_000, 1_000_000, 2000).astype(float))
    law = selection_law(x, MULTISCALE_LEVELS, x.size, SHARE * 1.0, rounds=True)
    assert law[-3:].sum() < 1e-7 and law[1] > 0.9
    picks = {
        smoothdp.median(x, epsilon=1.0, bounds=(0.0, 1e6), rng=default_rng(s)).details["lattice_test"][
            "level"
        ]
        for s in range(20)
    }
    assert picks <= {1.0}
