"""The scale-free exponential mechanism: base-measure masses, the atom at 0, the law of its draws."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from smoothdp.central.choose import choose_unbounded_method
from smoothdp.central.scale_free import ScaleFreeQuantile, scale_free_pieces
from smoothdp.central.unbounded import CAP, prepare_unbounded
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
    """Frequencies of the pieces (and the atom) against their exact probabilities, computed in mpmath."""
    x = np.array([-2.0, 0.5, 3.0, 40.0])
    mech = ScaleFreeQuantile(0.5, epsilon=3.0, numerics="float")
    coef = 0.5 * mech.epsilon_used(4)
    t = 1.5  # ⌈0.5·4⌉ − 1/2
    edges = [-CAP, *x.tolist(), CAP]
    probs = [_mu(a, b) * mp.exp(-coef * abs(j - t)) for j, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]
    probs.append(mp.exp(-coef * 0.5))  # the atom: #{x < 0} = 1, #{x ≤ 0} = 1, dist(1.5, [1, 1]) = 0.5
    total = sum(probs)
    expected = np.array([float(p / total) for p in probs])
    draws = np.array([mech.sample(x, default_rng(s)) for s in range(4000)])
    counts = [int(np.sum((draws > a) & (draws < b))) for a, b in zip(edges[:-1], edges[1:])]
    counts.append(int(np.sum(draws == 0.0)))
    keep = expected * draws.size >= 5
    observed = np.array(counts)[keep]
    exp = expected[keep] * draws.size
    exp *= observed.sum() / exp.sum()
    assert stats.chisquare(observed, exp).pvalue > 1e-3


def test_the_exact_and_float_paths_release_the_same_quantile_neighbourhood():
    x = np.random.default_rng(1).normal(1.2, 1.0, 1000)
    mech = ScaleFreeQuantile(0.5, epsilon=1.0)
    errs = [abs(mech.sample(mech._prepare(x), default_rng(s)) - np.median(x)) for s in range(40)]
    assert np.median(errs) < 0.05


def test_auto_picks_the_scale_free_mechanism_only_for_enough_epsilon_n():
    assert choose_unbounded_method(n=1000, epsilon=0.1) == "exponential"
    assert choose_unbounded_method(n=100, epsilon=0.5) == "unbounded"
    assert choose_unbounded_method(n=None, epsilon=10.0) == "unbounded"
