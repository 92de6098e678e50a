"""The scale-free exponential mechanism: base-measure masses, the atom at 0, the law of its draws."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from smoothdp.central.choose import choose_unbounded_method
from smoothdp.central.unbounded.ladder import CAP, prepare_unbounded
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile, scale_free_pieces
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


def test_draws_follow_the_exact_law_over_the_pieces():
    """Frequencies of the open intervals and of the atoms at data values against their exact probabilities
    (mpmath, from the base measure: g, the atom of mass 1 at 0, 2^-14 at every other integer)."""
    x = np.array([-2.0, 0.5, 3.0, 40.0])
    mech = ScaleFreeQuantile(0.5, epsilon=3.0, numerics="float")
    coef = 0.5 * mech.epsilon_used(4)
    t = 1.5  # ⌈0.5·4⌉ − 1/2
    c = 2.0**-14
    edges = [-CAP, *x.tolist(), CAP]
    inside = [0, 1, 2, 36, 2**20 - 40]  # integers strictly inside each interval, 1 ≤ |k| ≤ 2^20 (0 apart)
    inside[0] = 2**20 - 2
    probs = [
        (_mu(a, b) + c * m) * mp.exp(-coef * abs(j - t))
        for j, (a, b, m) in enumerate(zip(edges[:-1], edges[1:], inside, strict=True))
    ]
    atoms = {-2.0: (0, 1), 0.0: (1, 1), 3.0: (2, 3), 40.0: (3, 4)}  # value: (#{x < v}, #{x ≤ v})
    for v, (lo, hi) in atoms.items():
        mass = 1.0 if v == 0.0 else c
        probs.append(mass * mp.exp(-coef * max(0.0, lo - t, t - hi)))
    total = sum(probs)
    expected = np.array([float(p / total) for p in probs])
    draws = np.array([mech.sample(x, default_rng(s)) for s in range(4000)])
    on_atom = np.isin(draws, list(atoms))
    counts = [int(np.sum((draws > a) & (draws < b) & ~on_atom)) for a, b in itertools.pairwise(edges)]
    counts += [int(np.sum(draws == v)) for v in atoms]
    keep = expected * draws.size >= 5
    observed = np.array(counts)[keep]
    exp = expected[keep] * draws.size
    exp *= observed.sum() / exp.sum()
    assert stats.chisquare(observed, exp).pvalue > 1e-3


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
