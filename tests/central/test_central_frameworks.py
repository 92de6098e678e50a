"""PTR, sample-and-aggregate, privately bounded local sensitivity, private ratios, baselines and the generic
Hamming smooth sensitivity: deterministic properties, derived independently of the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from central_brute import brute_local_sensitivity_at
from scipy import stats

from smoothdp.central import (
    GlobalSensitivityMean,
    GlobalSensitivityMedian,
    Mean,
    Median,
    PrivateRatio,
    ProposeTestRelease,
    SampleAndAggregate,
    TrimmedMean,
    bounded_local_sensitivity,
    count_interval_halfwidth,
    distance_to_instability,
    private_count_interval,
    private_ratio,
    propose_test_release,
    ratio_local_sensitivity,
    ratio_sensitivity_bound,
    sample_and_aggregate,
)
from smoothdp.central.sample_aggregate import random_blocks
from smoothdp.data import load_adult_ages
from smoothdp.privacy import ApproxDP, PureDP
from smoothdp.sensitivity import hamming_smooth_sensitivity, smooth_sensitivity_of_profile


# -- propose-test-release ----------------------------------------------------------------------------------
def test_distance_to_instability_matches_brute_force():
    rng = np.random.default_rng(4)
    grid_extra = np.array([0.0, 10.0])
    for _ in range(25):
        x = rng.integers(0, 11, int(rng.integers(3, 6))).astype(float)
        grid = np.unique(np.concatenate([grid_extra, x]))
        bound = float(rng.choice([0.5, 1.5, 2.5, 5.5]))  # off the integer lattice: no ties
        ref = lambda rows: np.sort(rows, axis=1)[:, (rows.shape[1] - 1) // 2]  # noqa: E731
        brute = next((k for k in range(3) if brute_local_sensitivity_at(x, ref, grid, k) > bound), None)
        got = distance_to_instability(Median(0, 10), x, bound)
        if brute is None:
            assert got >= 3
        else:
            assert got == brute


def test_ptr_distance_for_the_pdp_mean_example():
    # A(k) = 100/(n − k) > 0.005 ⟺ k > n − 20000; the bound at k = n − 20000 equals b and is rounded up,
    # so D is one step conservative (never an overestimate).
    ages = load_adult_ages()
    d = distance_to_instability(Mean(0, 100), ages, 0.005)
    assert ages.size - 20000 <= d <= ages.size - 20000 + 1


def test_ptr_budget_threshold_and_refusal_record():
    mech = ProposeTestRelease(Median(0, 1), 0.1, 2.0, 1e-6, test_fraction=0.25)
    assert mech.epsilon_test == 0.5 and mech.epsilon_release == 1.5
    assert mech.threshold == pytest.approx(math.log(1 / 2e-6) / 0.5)
    assert 0.5 * math.exp(-mech.epsilon_test * mech.threshold) == pytest.approx(1e-6)
    refused = mech.release([0.0, 1.0, 1.0], rng=1)  # D = 0: refused unless noise ≥ 26
    assert refused.refused and refused.value is None and "threshold" in refused.reason
    assert refused.guarantee == ApproxDP(2.0, 1e-6)
    with pytest.raises(ValueError, match="refused"):
        float(refused)


def test_ptr_releases_stable_data_with_laplace_of_the_proposed_bound():
    x = np.linspace(0.4, 0.6, 2001)
    rel = propose_test_release(Median(0, 1), x, 0.01, 1.0, 1e-6, rng=3)
    assert not rel.refused and rel.noise_scale == pytest.approx(0.01 / 0.5)
    assert abs(rel.value - 0.5) < 1.0
    assert rel.details["noisy_distance"] >= rel.details["threshold"]


def test_ptr_with_bound_above_global_sensitivity_always_releases():
    assert distance_to_instability(Median(0, 1), [0.0, 1.0, 1.0], 1.5) == math.inf
    assert not propose_test_release(Median(0, 1), [0.0, 1.0, 1.0], 1.5, 1.0, 1e-9, rng=0).refused


def test_ptr_bad_input():
    with pytest.raises(ValueError, match="delta"):
        ProposeTestRelease(Median(0, 1), 0.1, 1.0, 0.5)
    with pytest.raises(ValueError, match="delta"):
        ProposeTestRelease(Median(0, 1), 0.1, 1.0, 0.0)
    with pytest.raises(ValueError, match="proposed_bound"):
        ProposeTestRelease(Median(0, 1), 0.0, 1.0, 1e-6)
    with pytest.raises(ValueError, match="test_fraction"):
        ProposeTestRelease(Median(0, 1), 0.1, 1.0, 1e-6, test_fraction=1.0)
    with pytest.raises(TypeError, match="Statistic"):
        ProposeTestRelease(np.median, 0.1, 1.0, 1e-6)


# -- sample-and-aggregate ----------------------------------------------------------------------------------
def test_random_partition_is_balanced_and_independent_of_position():
    rng = np.random.default_rng(0)
    order, starts = random_blocks(10, 3, rng)
    assert sorted(order) == list(range(10)) and list(np.diff(np.append(starts, 10))) == [4, 3, 3]
    for partition in ("balanced", "independent"):
        saa = SampleAndAggregate(lambda b: float(np.any(b == 1.0)), 2, (0.0, 1.0), 1.0, partition=partition)
        x = np.zeros(10)
        x[0] = 1.0  # which block holds record 0? It must be block 0 half the time, whatever its position.
        draws = saa._block_outputs_many(x, 4000, rng)
        assert abs(draws[:, 0].mean() - 0.5) < 4 * math.sqrt(0.25 / 4000)


def test_fast_block_mean_equals_callable_path():
    x = np.random.default_rng(1).uniform(0, 1, 103)
    fast = SampleAndAggregate("mean", 7, (0.0, 1.0), 1.0).block_outputs(x, 5)
    slow = SampleAndAggregate(np.mean, 7, (0.0, 1.0), 1.0).block_outputs(x, 5)
    np.testing.assert_allclose(fast, slow, rtol=1e-13)


def test_block_outputs_are_clipped_and_empty_blocks_are_the_midpoint():
    saa = SampleAndAggregate("mean", 5, (20.0, 80.0), 1.0, partition="balanced")
    z = saa.block_outputs(np.array([0.0, 100.0, 50.0]), 0)
    assert sorted(z) == [20.0, 50.0, 50.0, 50.0, 80.0]


def test_sample_and_aggregate_release_record_and_pdp_example():
    ages = load_adult_ages()
    rel = sample_and_aggregate("mean", ages, 600, (20, 80), 1.0, rng=2)
    assert rel.guarantee == PureDP(1.0) and rel.noise_scale == pytest.approx(60 / 600)
    assert abs(rel.value - ages.mean()) < 1.5
    med = sample_and_aggregate(np.mean, ages, 60, (20, 80), 1.0, aggregator="median", rng=2)
    assert med.guarantee == PureDP(1.0) and "median" in med.mechanism and abs(med.value - ages.mean()) < 5


def test_sample_and_aggregate_bad_input():
    with pytest.raises(ValueError, match="aggregator"):
        SampleAndAggregate("mean", 5, (0, 1), 1.0, aggregator="mode")
    with pytest.raises(ValueError, match="n_blocks"):
        SampleAndAggregate("mean", 0, (0, 1), 1.0)
    with pytest.raises(ValueError, match="lower < upper"):
        SampleAndAggregate("mean", 5, (1, 0), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        sample_and_aggregate(lambda b: float("nan"), np.ones(10), 2, (0, 1), 1.0, rng=0)
    with pytest.raises(TypeError, match="func"):
        SampleAndAggregate("median", 5, (0, 1), 1.0)


# -- privately bounded local sensitivity ---------------------------------------------------------------------
@pytest.mark.parametrize(("eps", "p"), [(0.05, 1e-8), (0.5, 0.01), (1.0, 0.3), (3.0, 1e-3)])
def test_count_interval_halfwidth_is_the_smallest_safe_one(eps, p):
    law = stats.dlaplace(eps)  # pmf ∝ e^{−ε|k|}
    t = count_interval_halfwidth(eps, p)
    tail = lambda t: 2 * law.sf(t)  # noqa: E731  (P(|K| > t))
    assert tail(t) <= p * (1 + 1e-9)
    assert t == 0 or tail(t - 1) > p


def test_private_count_interval_covers_the_count():
    _, lo, hi = private_count_interval(500, 0.2, 0.05, rng=3, size=20000)
    covered = np.mean((lo <= 500) & (500 <= hi))
    assert covered >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / 20000)
    assert np.all(hi - lo == 2 * count_interval_halfwidth(0.2, 0.05))


def test_bounded_local_sensitivity_release():
    rel = bounded_local_sensitivity(3.0, lambda rng: 0.5, 0.1, 0.9, 1e-6, rng=1, statistic="x")
    assert rel.guarantee == ApproxDP(1.0, 1e-6) and rel.noise_scale == pytest.approx(0.5 / 0.9)
    assert bounded_local_sensitivity(3.0, lambda rng: 0.0, 0.1, 0.9, 1e-6, rng=1).value == 3.0
    with pytest.raises(ValueError, match="sensitivity_bound"):
        bounded_local_sensitivity(3.0, lambda rng: -1.0, 0.1, 0.9, 1e-6)


# -- private ratios ---------------------------------------------------------------------------------------
def _brute_ratio_ls(a, b):
    """max |a/b − a'/b'| over the add/remove neighbours that exist (0 ≤ a' ≤ b', b' ≥ 1)."""
    out = 0.0
    for da, db in [(1, 1), (0, 1), (-1, -1), (0, -1)]:
        a2, b2 = a + da, b + db
        if 0 <= a2 <= b2 and b2 >= 1:
            out = max(out, abs(a / b - a2 / b2))
    return out


def test_ratio_local_sensitivity_bounds_brute_force_and_is_exact_inside():
    for b in range(2, 40):
        for a in range(b + 1):
            ls = float(ratio_local_sensitivity(a, b))
            brute = _brute_ratio_ls(a, b)
            assert brute <= ls * (1 + 1e-12)
            if 1 <= a <= b - 1:
                assert ls == pytest.approx(brute, rel=1e-12)


def _swapped_bound(al, au, bl, bu):
    """The seed's code: a_l in the a-term and a_u in the (b − a)-term (a broken twin of the proof's g)."""
    first = al / (bl * bl - bl)
    return max([first] + [(bb - au) / (bb * bb - bb) for bb in range(bl, bu + 1)])


def test_ratio_sensitivity_bound_covers_every_count_in_the_intervals_and_the_swapped_one_does_not():
    rng = np.random.default_rng(6)
    swapped_failures = 0
    for _ in range(400):
        bl = int(rng.integers(2, 40))
        bu = bl + int(rng.integers(0, 15))
        al = int(rng.integers(0, bu + 1))
        au = al + int(rng.integers(0, 15))
        g = float(ratio_sensitivity_bound(al, au, bl, bu))
        worst = (
            max(
                float(ratio_local_sensitivity(a, b))
                for a in range(al, au + 1)
                for b in range(bl, bu + 1)
                if a <= b
            )
            if any(a <= b for a in range(al, au + 1) for b in range(bl, bu + 1))
            else 0.0
        )
        assert worst <= g
        swapped_failures += _swapped_bound(al, au, bl, bu) < worst
    assert swapped_failures > 50


def test_ratio_methods_guarantees_and_records():
    naive = private_ratio(300, 1000, 1.0, rng=0)
    assert naive.guarantee == PureDP(1.0) and naive.noise_scale == 2.0
    ksw = private_ratio(300, 1000, 1.0, "ksw", rng=0, adjacency="substitute")
    assert ksw.guarantee == PureDP(1.0) and ksw.noise_scale == 2.0
    bls = private_ratio(300, 10**5, 1.0, "bounded_local_sensitivity", 1e-6, rng=0)
    assert bls.guarantee == ApproxDP(1.0, 1e-6) and not bls.details["fell_back_to_naive"]
    g = bls.details["sensitivity_bound"]
    assert g >= float(ratio_local_sensitivity(300, 10**5))
    assert bls.noise_scale == pytest.approx(g / 0.9)
    small = private_ratio(1, 3, 1.0, "bounded_local_sensitivity", 1e-6, rng=0)
    assert small.details["fell_back_to_naive"] and small.guarantee == ApproxDP(1.0, 1e-6)


def test_ratio_accuracy_orders_as_in_seed_002():
    # b = 10⁴, a/b = 0.5, ε = 1: the LS-bound method beats naive (seed 002, Figure 1).
    err = {}
    for method, delta in [("naive", 0.0), ("bounded_local_sensitivity", 1e-8), ("ksw", 0.0)]:
        draws = PrivateRatio(1.0, method, delta).sample(5000, 10**4, 20000, rng=1)
        err[method] = np.mean(np.abs(draws - 0.5))
    assert err["bounded_local_sensitivity"] < err["naive"]
    assert err["ksw"] < err["naive"]


def test_ratio_bad_input():
    with pytest.raises(ValueError, match="0 ≤ a ≤ b"):
        private_ratio(5, 3, 1.0)
    with pytest.raises(ValueError, match="method"):
        private_ratio(1, 3, 1.0, "exact")
    with pytest.raises(ValueError, match="delta"):
        private_ratio(1, 3, 1.0, "bounded_local_sensitivity")
    with pytest.raises(ValueError, match="delta must be 0"):
        private_ratio(1, 3, 1.0, "naive", 1e-6)
    with pytest.raises(ValueError, match="add_remove"):
        private_ratio(1, 3, 1.0, "bounded_local_sensitivity", 1e-6, adjacency="substitute")
    with pytest.raises(ValueError, match="a must be an integer"):
        private_ratio(-1, 3, 1.0)


# -- baselines ----------------------------------------------------------------------------------------------
def test_global_sensitivity_baselines():
    ages = load_adult_ages()
    m = GlobalSensitivityMean((0, 100), 1.0)
    draws = m.sample(ages, 20000, rng=0)
    assert abs(np.median(draws) - ages.mean()) < 0.05
    assert m.release(ages, rng=0).guarantee == PureDP(1.0) and m.sum_sensitivity == 100
    med = GlobalSensitivityMedian((0, 100), 1.0).release(ages, rng=0)
    assert med.noise_scale == 100.0 and med.guarantee == PureDP(1.0)


# -- generic Hamming smooth sensitivity ------------------------------------------------------------------
def test_generic_smooth_sensitivity_equals_closed_forms():
    rng = np.random.default_rng(8)
    for stat in [Median(0, 1), TrimmedMean(2, 0, 1)]:
        x = np.round(rng.uniform(0, 1, 41), 2)
        d = stat.prepare(x)
        a_k = lambda ks, d=d, stat=stat: np.array([stat._local_sensitivity(d, int(k)) for k in ks])  # noqa: E731
        for beta in [0.01, 0.3, 2.0]:
            generic = hamming_smooth_sensitivity(a_k, beta, global_sensitivity=stat.global_sensitivity(41))
            profile = smooth_sensitivity_of_profile(a_k(np.arange(43)), beta)
            closed = stat.smooth_sensitivity(d, beta)
            assert generic == pytest.approx(closed, rel=1e-11) and profile == pytest.approx(closed, rel=1e-11)


def test_generic_smooth_sensitivity_linear_growth_and_tail():
    a = np.array([1.0, 2.0, 4.0, 4.0])
    direct = max(a[k] / (1 + 0.5 * k) for k in range(4))
    assert smooth_sensitivity_of_profile(a, 0.5, growth="linear") == pytest.approx(direct, rel=1e-11)
    assert smooth_sensitivity_of_profile(a, 0.01, tail=100.0) == pytest.approx(
        100 * math.exp(-0.04), rel=1e-11
    )
    f = lambda ks: np.minimum(1.0 + ks, 50.0)  # noqa: E731
    direct = max(min(1.0 + k, 50.0) * math.exp(-0.05 * k) for k in range(2000))
    assert hamming_smooth_sensitivity(f, 0.05, global_sensitivity=50.0) == pytest.approx(direct, rel=1e-11)
    with pytest.raises(ValueError, match="non-decreasing"):
        smooth_sensitivity_of_profile([2.0, 1.0], 0.1)
    with pytest.raises(ValueError, match="global_sensitivity"):
        hamming_smooth_sensitivity(f, 0.05, global_sensitivity=10.0)
