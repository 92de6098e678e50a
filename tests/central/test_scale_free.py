"""The scale-free exponential mechanism: base-measure masses, the atom at 0, the law of its draws."""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
from new_mechanism_cases import (  # the atoms, independently
    LATTICE_LEVELS,
    lattice_mass_between,
    lattice_point_mass,
    level_points_between,
)

from smoothdp.central.choose import choose_unbounded_method
from smoothdp.central.unbounded.ladder import CAP, prepare_unbounded
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile, lattice_counts, scale_free_pieces
from smoothdp.rng import default_rng

S = 2.0**-30


def _mu(u: float, v: float) -> mp.mpf:
    """μ([u, v]) in 80-digit arithmetic (the difference of the cumulative measure cancels)."""

    def g(y: float) -> mp.mpf:
        yy = mp.mpf(y)
        return yy / S if abs(yy) <= S else mp.sign(yy) * (1 + mp.log(abs(yy) / S))

    with mp.workdps(80):
        return g(v) - g(u)


def test_piece_masses_match_the_base_measure_to_many_digits():
    x = np.array([-3e7, -1.0, -1e-12, 0.0, 1e-9, 1.0, 1.0 + 2.0**-52, 5e300])
    starts, ends, masses, index, kind = scale_free_pieces(x, S)
    for a, b, m in zip(starts, ends, masses, strict=True):
        assert abs(m - float(_mu(a, b))) <= 2.0**-40 * float(_mu(a, b))
    total = math.fsum(masses)
    assert total == pytest.approx(2 * (1 + (1021 * math.log(2) - math.log(S))), rel=1e-12)
    assert set(kind.tolist()) == {-1, 0, 1} and index.max() == x.size


def test_tied_zeros_are_released_as_zero():
    mech = ScaleFreeQuantile(0.5, epsilon=1.0)
    data = prepare_unbounded(np.zeros(80))
    assert all(mech.sample(data, default_rng(s)) == 0.0 for s in range(30))


def _exact_law(
    x: np.ndarray, mech: ScaleFreeQuantile
) -> tuple[list[float], dict[float, mp.mpf], list[mp.mpf]]:
    """(edges, {atom value: probability}, [probability of each open interval]) from the definition: the
    base measure g + δ_0 + the lattice atoms, the tie-aware rank utility, mpmath."""
    n = x.size
    coef = 0.5 * mech.epsilon_used(n)
    t = math.ceil(mech.q * n) - 0.5
    edges = [-CAP, *x.tolist(), CAP]
    gaps = [
        (_mu(a, b) + mp.mpf(lattice_mass_between(a, b))) * mp.exp(-coef * abs(j - t))
        for j, (a, b) in enumerate(itertools.pairwise(edges))
    ]
    atoms = {}
    for v in sorted(set(x.tolist()) | {0.0}):
        mass = mp.mpf(1) if v == 0.0 else mp.mpf(lattice_point_mass(v))
        if mass > 0:
            lo, hi = float(np.sum(x < v)), float(np.sum(x <= v))
            atoms[v] = mass * mp.exp(-coef * max(0.0, lo - t, t - hi))
    total = sum(gaps) + sum(atoms.values())
    return edges, {v: p / total for v, p in atoms.items()}, [p / total for p in gaps]


def _chisquare(observed: list[int], probabilities: list[mp.mpf], draws: int) -> float:
    expected = np.array([float(p) for p in probabilities]) * draws
    keep = expected >= 5
    obs, exp = np.array(observed)[keep], expected[keep]
    exp *= obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def test_draws_follow_the_exact_law_over_the_pieces():
    """Frequencies of the open intervals and of the atoms at data values (0.5, 3, 40 and −2 are lattice
    points, 0 has its own atom) against their exact probabilities."""
    x = np.array([-2.0, 0.5, 3.0, 40.0])
    mech = ScaleFreeQuantile(0.5, epsilon=3.0, numerics="float")
    edges, atoms, gaps = _exact_law(x, mech)
    draws = np.array([mech.sample(x, default_rng(s)) for s in range(4000)])
    on_atom = np.isin(draws, list(atoms))
    counts = [int(np.sum((draws > a) & (draws < b) & ~on_atom)) for a, b in itertools.pairwise(edges)]
    counts += [int(np.sum(draws == v)) for v in atoms]
    assert _chisquare(counts, [*gaps, *atoms.values()], draws.size) > 1e-3


def test_inside_a_piece_the_lattice_points_and_the_continuum_share_its_mass():
    """Around 10^5 the lattice atoms outweigh the log-uniform continuum (about 10·2^-14 per unit against
    10^-5): releases inside (10^5, 10^5 + 10) are lattice points with the exact probability of the atoms'
    share of the piece; the two data values are atoms of their own."""
    x = np.repeat([1.0e5, 1.0e5 + 10.0], 50)
    mech = ScaleFreeQuantile(0.5, epsilon=2.0, numerics="float")
    _, atoms, gaps = _exact_law(x, mech)
    a, b = 1.0e5, 1.0e5 + 10.0
    piece = gaps[2]  # (a, b): utility |50 − 49.5|
    share = mp.mpf(lattice_mass_between(a, b)) / (_mu(a, b) + mp.mpf(lattice_mass_between(a, b)))
    probabilities = [piece * share, piece * (1 - share), atoms[a], atoms[b]]
    draws = np.array([mech.sample(x, default_rng(s)) for s in range(3000)])
    inside = (draws > a) & (draws < b)
    on_lattice = np.array([lattice_point_mass(float(y)) > 0 for y in draws])
    counts = [
        int(np.sum(inside & on_lattice)),
        int(np.sum(inside & ~on_lattice)),
        int(np.sum(draws == a)),
        int(np.sum(draws == b)),
    ]
    assert sum(counts) >= 2900  # the rest of the line is out of reach at ε·n = 200
    assert _chisquare(counts, probabilities, sum(counts)) > 1e-3


@pytest.mark.parametrize("value", [62.5, 9.99, 0.25, -3.75, 1994.0, 12.3456, -3.14159265, 40.712776])
def test_values_tied_at_few_digits_are_released_exactly(value):
    # 200 copies at ε = 1: the atom at the value has utility 0 and the rest of the line utility 100
    mech = ScaleFreeQuantile(0.5, epsilon=1.0)
    data = mech._prepare(np.full(200, value))
    assert all(mech.sample(data, default_rng(s)) == value for s in range(20))


def test_tied_integers_far_from_zero_are_released_exactly():
    x = np.repeat(np.arange(1990.0, 1999.0), 100)  # nine years, 100 records each: rank 450 inside 1994
    mech = ScaleFreeQuantile(0.5, epsilon=1.0)
    data = mech._prepare(x)
    assert sum(mech.sample(data, default_rng(s)) == 1994.0 for s in range(40)) >= 36


def test_the_exact_and_float_paths_release_the_same_quantile_neighbourhood():
    x = np.random.default_rng(1).normal(1.2, 1.0, 1000)
    mech = ScaleFreeQuantile(0.5, epsilon=1.0)
    errs = [abs(mech.sample(mech._prepare(x), default_rng(s)) - np.median(x)) for s in range(40)]
    assert np.median(errs) < 0.05


def test_auto_picks_the_scale_free_mechanism_only_for_enough_epsilon_n():
    assert choose_unbounded_method(n=1000, epsilon=0.1) == "exponential"
    assert choose_unbounded_method(n=100, epsilon=0.5) == "unbounded"
    assert choose_unbounded_method(n=None, epsilon=10.0) == "unbounded"


class _Counter:
    """A stand-in generator whose bounded integers run through 0, 1, 2, … (to list every point a draw
    can return)."""

    def __init__(self) -> None:
        self.next = 0

    def integers(self, low: int, high: int) -> int:
        value, self.next = self.next, self.next + 1
        assert low <= value < high
        return value


@pytest.mark.parametrize(("level", "lo", "hi"), [(1, -1.0, 1.0), (6, -0.35, 0.2), (0, -3.5, -1.5)])
def test_a_piece_around_zero_draws_each_lattice_point_but_zero_once(level, lo, hi):
    # with a floor of 1 the core piece (−1, 1) holds lattice points; 0 among them belongs to its own atom
    m = level_points_between(*LATTICE_LEVELS[level], lo, hi)
    rng = _Counter()
    drawn = [ScaleFreeQuantile._lattice_point(level, lo, m, rng) for _ in range(m)]
    spacing = [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.1][level]
    ks = range(math.floor(lo / spacing) - 1, math.ceil(hi / spacing) + 2)
    expected = [k * spacing if level < 6 else k / 10 for k in ks]
    assert drawn == [y for y in expected if lo < y < hi and y != 0.0]


@pytest.mark.parametrize("floor", [S, 2.0**-20, 1.0])
def test_each_piece_holds_the_lattice_points_an_independent_count_finds(floor):
    # pieces end at order statistics or at ±s; each level's count against exact rational counting (0 left
    # out), on records that are lattice points, near them, beyond the reach, and on both sides of 0
    gen = np.random.default_rng(13)
    x = np.sort(
        np.concatenate(
            [
                gen.normal(0.0, 3.0, 40).round(3),
                gen.uniform(-1e-3, 1e-3, 10),
                [-(2.0**20), 2.0**20, 2.0**20 + 0.5, -3e6, 1e-9, 0.0, 0.1, 0.1 + 2.0**-50],
            ]
        )
    )
    pieces = scale_free_pieces(x, floor)
    edges = np.concatenate(([-CAP], x, [CAP]))
    counts, edge_mass = lattice_counts(edges, pieces, floor)
    for i, (lo, hi) in enumerate(zip(pieces[0], pieces[1], strict=True)):
        expected = [level_points_between(p, q, lo, hi) for p, q in LATTICE_LEVELS]
        assert counts[:, i].tolist() == expected, (lo, hi)
    assert [Fraction(m) for m in edge_mass] == pytest.approx(
        [lattice_point_mass(e) for e in edges], rel=2**-48
    )
