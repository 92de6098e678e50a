"""PTR, sample-and-aggregate, privately bounded local sensitivity, private ratios, baselines (with the zCDP
Gaussian mean) and the generic Hamming smooth sensitivity (a test reference in central_brute.py):
deterministic properties, derived independently of the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from central_brute import (
    brute_local_sensitivity_at,
    hamming_smooth_sensitivity,
    smooth_sensitivity_of_profile,
)
from scipy import stats

from smoothdp.accounting import Accountant, BudgetError
from smoothdp.central import (
    BoundedLocalSensitivity,
    GaussianMean,
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
    gaussian_mean,
    global_sensitivity_mean,
    global_sensitivity_median,
    private_count_interval,
    private_ratio,
    propose_test_release,
    ratio_local_sensitivity,
    ratio_local_sensitivity_laplace,
    ratio_sensitivity_bound,
    sample_and_aggregate,
)
from smoothdp.central.frameworks.sample_aggregate import random_blocks
from smoothdp.data import load_adult_ages
from smoothdp.privacy import ZCDP, ApproxDP, PureDP
from smoothdp.rng import default_rng


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
        got = distance_to_instability(Median(bounds=(0, 10)), x, bound)
        if brute is None:
            assert got >= 3
        else:
            assert got == brute


def test_ptr_distance_for_the_pdp_mean_example():
    # A(k) = 100/(n − k) > 0.005 ⟺ k > n − 20000; the bound at k = n − 20000 equals b and is rounded up,
    # so D is one step conservative (never an overestimate).
    ages = load_adult_ages()
    d = distance_to_instability(Mean(bounds=(0, 100)), ages, 0.005)
    assert ages.size - 20000 <= d <= ages.size - 20000 + 1


def test_ptr_budget_threshold_and_refusal_record():
    mech = ProposeTestRelease(
        Median(bounds=(0, 1)), proposed_bound=0.1, epsilon=2.0, delta=1e-6, test_fraction=0.25
    )
    assert mech.epsilon_test == 0.5 and mech.epsilon_release == 1.5
    assert mech.threshold == pytest.approx(math.log(1 / 2e-6) / 0.5)
    assert 0.5 * math.exp(-mech.epsilon_test * mech.threshold) == pytest.approx(1e-6)
    refused = mech.release([0.0, 1.0, 1.0], rng=1)  # D = 0: refused unless noise ≥ 26
    assert refused.refused and refused.value is None and "threshold" in refused.reason
    assert refused.guarantee == ApproxDP(2.0, 1e-6) and refused.guarantee.neighbours == "substitution"
    assert refused.not_private.noise_scale is None and refused.details["noisy_distance"] < mech.threshold
    assert refused.not_private.extra["distance_to_instability_capped"] == 0.0
    assert "distance_to_instability" not in refused.details
    with pytest.raises(ValueError, match="refused"):
        float(refused)


def test_ptr_releases_stable_data_with_laplace_of_the_proposed_bound():
    x = np.linspace(0.4, 0.6, 2001)
    rel = propose_test_release(Median(bounds=(0, 1)), x, proposed_bound=0.01, epsilon=1.0, delta=1e-6, rng=3)
    assert not rel.refused and rel.not_private.noise_scale == pytest.approx(0.01 / 0.5)
    assert rel.proof == "docs/theory/central-frameworks.md#propose-test-release"
    assert abs(rel.value - 0.5) < 1.0
    assert rel.details["noisy_distance"] >= rel.details["threshold"]


def test_ptr_with_bound_above_global_sensitivity_always_releases():
    assert distance_to_instability(Median(bounds=(0, 1)), [0.0, 1.0, 1.0], 1.5) == math.inf
    rel = propose_test_release(
        Median(bounds=(0, 1)), [0.0, 1.0, 1.0], proposed_bound=1.5, epsilon=1.0, delta=1e-9, rng=0
    )
    assert not rel.refused


def test_ptr_bad_input():
    med = Median(bounds=(0, 1))
    with pytest.raises(ValueError, match="delta"):
        ProposeTestRelease(med, proposed_bound=0.1, epsilon=1.0, delta=0.5)
    with pytest.raises(ValueError, match="delta"):
        ProposeTestRelease(med, proposed_bound=0.1, epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="proposed_bound"):
        ProposeTestRelease(med, proposed_bound=0.0, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="test_fraction"):
        ProposeTestRelease(med, proposed_bound=0.1, epsilon=1.0, delta=1e-6, test_fraction=1.0)
    with pytest.raises(TypeError, match="Statistic"):
        ProposeTestRelease(np.median, proposed_bound=0.1, epsilon=1.0, delta=1e-6)
    with pytest.raises(TypeError, match="positional"):
        ProposeTestRelease(med, 0.1, 1.0, 1e-6)
    with pytest.raises(TypeError, match="positional"):
        propose_test_release(med, [0.5], 0.1, 1.0, 1e-6)


def test_ptr_guarantee_takes_the_statistic_relation_and_charges_the_accountant():
    mean = ProposeTestRelease(Mean(bounds=(0, 100)), proposed_bound=0.5, epsilon=1.0, delta=1e-6)
    assert mean.guarantee == ApproxDP(1.0, 1e-6, neighbours="add_remove")
    acc = Accountant(epsilon=1.0, delta=1e-5)
    rel = propose_test_release(
        Median(bounds=(0, 1)),
        [0.0, 1.0, 1.0],
        proposed_bound=0.1,
        epsilon=0.6,
        delta=1e-6,
        accountant=acc,
        rng=0,
    )
    assert rel.refused and acc.spent == (0.6, 1e-6)  # a refusal spends the budget too
    with pytest.raises(BudgetError):
        propose_test_release(
            Median(bounds=(0, 1)), [0.5], proposed_bound=0.1, epsilon=0.6, delta=1e-6, accountant=acc, rng=0
        )
    assert len(acc) == 1


# -- sample-and-aggregate ----------------------------------------------------------------------------------
def test_random_partition_is_balanced_and_independent_of_position():
    rng = np.random.default_rng(0)
    order, starts = random_blocks(10, 3, rng)
    assert sorted(order) == list(range(10)) and list(np.diff(np.append(starts, 10))) == [4, 3, 3]
    for partition in ("balanced", "independent"):
        saa = SampleAndAggregate(
            lambda b: float(np.any(b == 1.0)), n_blocks=2, bounds=(0.0, 1.0), epsilon=1.0, partition=partition
        )
        x = np.zeros(10)
        x[0] = 1.0  # which block holds record 0? It must be block 0 half the time, whatever its position.
        draws = saa._block_outputs_many(x, 4000, rng)
        assert abs(draws[:, 0].mean() - 0.5) < 4 * math.sqrt(0.25 / 4000)


def test_fast_block_mean_equals_callable_path():
    x = np.random.default_rng(1).uniform(0, 1, 103)
    fast = SampleAndAggregate("mean", n_blocks=7, bounds=(0.0, 1.0), epsilon=1.0).block_outputs(x, rng=5)
    slow = SampleAndAggregate(np.mean, n_blocks=7, bounds=(0.0, 1.0), epsilon=1.0).block_outputs(x, rng=5)
    np.testing.assert_allclose(fast, slow, rtol=1e-13)


def test_block_outputs_are_clipped_and_empty_blocks_are_the_midpoint():
    saa = SampleAndAggregate("mean", n_blocks=5, bounds=(20.0, 80.0), epsilon=1.0, partition="balanced")
    z = saa.block_outputs(np.array([0.0, 100.0, 50.0]), rng=0)
    assert sorted(z) == [20.0, 50.0, 50.0, 50.0, 80.0]


def test_sample_and_aggregate_release_record_and_pdp_example():
    ages = load_adult_ages()
    rel = sample_and_aggregate("mean", ages, n_blocks=600, bounds=(20, 80), epsilon=1.0, rng=2)
    assert rel.guarantee == PureDP(1.0, neighbours="add_remove")
    assert rel.not_private.noise_scale == pytest.approx(60 / 600)
    assert rel.details["partition"] == "independent" and rel.details["neighbours"] == "add_remove"
    assert rel.proof == "docs/theory/central-frameworks.md#sample-and-aggregate"
    assert abs(rel.value - ages.mean()) < 1.5
    med = sample_and_aggregate(
        np.mean, ages, n_blocks=60, bounds=(20, 80), epsilon=1.0, aggregator="median", rng=2
    )
    assert med.guarantee == PureDP(1.0, neighbours="add_remove") and "median" in med.mechanism
    assert abs(med.value - ages.mean()) < 5
    assert med.not_private.smooth_sensitivity > 0 and med.beta == pytest.approx(1.0 / 9)


def test_sample_and_aggregate_neighbour_relation_of_each_partition():
    kw = {"n_blocks": 4, "bounds": (0.0, 1.0), "epsilon": 1.0}
    assert SampleAndAggregate("mean", **kw).guarantee.neighbours == "add_remove"
    sub = SampleAndAggregate("mean", neighbours="substitution", **kw)
    assert sub.guarantee == PureDP(1.0) and sub.guarantee.neighbours == "substitution"
    balanced = SampleAndAggregate("mean", partition="balanced", **kw)
    assert balanced.guarantee.neighbours == "substitution"
    med = SampleAndAggregate("mean", partition="balanced", aggregator="median", **kw)
    assert (
        med.guarantee == PureDP(1.0)
        and med.release(np.zeros(8), rng=0).details["neighbours"] == "substitution"
    )
    with pytest.raises(ValueError, match="independent"):
        SampleAndAggregate("mean", partition="balanced", neighbours="add_remove", **kw)
    with pytest.raises(ValueError, match="neighbours"):
        SampleAndAggregate("mean", neighbours="metric", **kw)
    # On a substitution accountant the add/remove statement costs 2ε; the substitution one costs ε.
    acc = Accountant(epsilon=3.0)
    SampleAndAggregate("mean", **kw).release(np.zeros(8), accountant=acc, rng=0)
    SampleAndAggregate("mean", neighbours="substitution", **kw).release(np.zeros(8), accountant=acc, rng=0)
    assert acc.spent == 3.0


def test_sample_and_aggregate_bad_input():
    kw = {"bounds": (0, 1), "epsilon": 1.0}
    with pytest.raises(ValueError, match="aggregator"):
        SampleAndAggregate("mean", n_blocks=5, aggregator="mode", **kw)
    with pytest.raises(ValueError, match="n_blocks"):
        SampleAndAggregate("mean", n_blocks=0, **kw)
    with pytest.raises(ValueError, match="lower < upper"):
        SampleAndAggregate("mean", n_blocks=5, bounds=(1, 0), epsilon=1.0)
    with pytest.raises(TypeError, match="func"):
        SampleAndAggregate("median", n_blocks=5, **kw)
    with pytest.raises(TypeError, match="positional"):
        SampleAndAggregate("mean", 5, (0, 1), 1.0)
    # Keywords that do not apply are errors naming the valid ones.
    with pytest.raises(TypeError, match=r"aggregator='mean'.*'noise'.*valid keywords: none"):
        SampleAndAggregate("mean", n_blocks=5, median_options={"noise": "student_t"}, **kw)
    with pytest.raises(TypeError, match=r"'beta'"):
        SampleAndAggregate("mean", n_blocks=5, median_options={"beta": 0.1}, **kw)
    with pytest.raises(TypeError, match=r"'df'.*keywords: none"):
        SampleAndAggregate("mean", n_blocks=5, aggregator="median", median_options={"df": 5}, **kw)
    with pytest.raises(TypeError, match=r"'colour'.*valid keywords: noise"):
        SampleAndAggregate("mean", n_blocks=5, aggregator="median", median_options={"colour": 5}, **kw)
    with pytest.raises(TypeError, match=r"did you mean 'median_options'"):
        SampleAndAggregate("mean", n_blocks=5, aggregator="median", median_option={"df": 5}, **kw)
    st = SampleAndAggregate(
        "mean", n_blocks=5, aggregator="median", median_options={"noise": "student_t", "df": 5}, **kw
    )
    assert st._median.calibration.family == "student_t"


# -- privately bounded local sensitivity ---------------------------------------------------------------------
@pytest.mark.parametrize(("eps", "p"), [(0.05, 1e-8), (0.5, 0.01), (1.0, 0.3), (3.0, 1e-3)])
def test_count_interval_halfwidth_is_the_smallest_safe_one(eps, p):
    law = stats.dlaplace(eps)  # pmf ∝ e^{−ε|k|}
    t = count_interval_halfwidth(epsilon=eps, failure_probability=p)
    tail = lambda t: 2 * law.sf(t)  # noqa: E731  (P(|K| > t))
    assert tail(t) <= p * (1 + 1e-9)
    assert t == 0 or tail(t - 1) > p


def test_private_count_interval_covers_the_count():
    _, lo, hi = private_count_interval(500, epsilon=0.2, failure_probability=0.05, rng=3, size=20000)
    covered = np.mean((lo <= 500) & (500 <= hi))
    assert covered >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / 20000)
    assert np.all(hi - lo == 2 * count_interval_halfwidth(epsilon=0.2, failure_probability=0.05))


def test_bounded_local_sensitivity_release():
    kw = {"epsilon_1": 0.1, "epsilon_2": 0.9, "delta": 1e-6}
    rel = bounded_local_sensitivity(3.0, lambda rng: 0.5, rng=1, label="x", **kw)
    assert rel.guarantee == ApproxDP(1.0, 1e-6) and rel.not_private.noise_scale == pytest.approx(0.5 / 0.9)
    assert rel.statistic == "x" and rel.details["sensitivity_bound"] == 0.5
    assert rel.proof == "docs/theory/central-frameworks.md#privately-bounded-local-sensitivity"
    assert bounded_local_sensitivity(3.0, lambda rng: 0.0, rng=1, **kw).value == 3.0
    with pytest.raises(ValueError, match="sensitivity_bound"):
        bounded_local_sensitivity(3.0, lambda rng: -1.0, **kw)
    with pytest.raises(TypeError, match="positional"):
        bounded_local_sensitivity(3.0, lambda rng: 0.5, 0.1, 0.9, 1e-6)
    ar = bounded_local_sensitivity(3.0, lambda rng: 0.5, neighbours="add_remove", rng=1, **kw)
    assert ar.guarantee.neighbours == "add_remove"


def test_bounded_local_sensitivity_mechanism_charges_before_drawing_the_bound():
    drawn = []

    def bound(x, rng):
        drawn.append(1)
        return float(np.ptp(x))

    mech = BoundedLocalSensitivity(np.mean, bound, epsilon_1=0.2, epsilon_2=0.8, delta=1e-6)
    acc = Accountant(epsilon=1.5, delta=1e-5)
    rel = mech.release(np.array([1.0, 2.0, 4.0]), accountant=acc, rng=0)
    assert drawn == [1] and acc.spent == (1.0, 1e-6) and rel.details["sensitivity_bound"] == 3.0
    with pytest.raises(BudgetError):
        mech.release(np.array([1.0, 2.0]), accountant=acc, rng=0)
    assert drawn == [1] and len(acc) == 1  # refused before the bound (the first randomness) was drawn


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
    """The paper's code (Harrison 2024): a_l in the a-term, a_u in the (b − a)-term (a broken twin of g)."""
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
    naive = private_ratio(300, 1000, epsilon=1.0, rng=0)
    assert naive.guarantee == PureDP(1.0, neighbours="add_remove") and naive.not_private.noise_scale == 2.0
    ksw = private_ratio(300, 1000, epsilon=1.0, method="ksw", rng=0, neighbours="substitution")
    assert ksw.guarantee == PureDP(1.0) and ksw.not_private.noise_scale == 2.0
    assert private_ratio(300, 1000, epsilon=1.0, method="ksw", rng=0).not_private.noise_scale == 1.0
    bls = private_ratio(300, 10**5, epsilon=1.0, method="bounded_local_sensitivity", delta=1e-6, rng=0)
    assert bls.guarantee == ApproxDP(1.0, 1e-6, neighbours="add_remove")
    assert not bls.details["fell_back_to_naive"]
    g = bls.details["sensitivity_bound"]
    assert g >= float(ratio_local_sensitivity(300, 10**5))
    assert bls.not_private.noise_scale == pytest.approx(g / 0.9)
    small = private_ratio(1, 3, epsilon=1.0, method="bounded_local_sensitivity", delta=1e-6, rng=0)
    assert small.details["fell_back_to_naive"] and small.guarantee == ApproxDP(
        1.0, 1e-6, neighbours="add_remove"
    )
    assert (
        naive.proof == "docs/theory/central-frameworks.md#private-ratios" and "#naive-ratio" in naive.source
    )
    # release((a, b)) and release(a, b) are the same release
    mech = PrivateRatio(epsilon=1.0)
    assert mech.release((3, 10), rng=4).value == mech.release(3, 10, rng=4).value


def test_ratio_accuracy_orders_as_in_harrison_2024():
    # b = 10⁴, a/b = 0.5, ε = 1: the LS-bound method beats naive (Harrison 2024, Figure 1).
    err = {}
    for method, delta in [("naive", 0.0), ("bounded_local_sensitivity", 1e-8), ("ksw", 0.0)]:
        draws = PrivateRatio(epsilon=1.0, method=method, delta=delta).sample(5000, 10**4, 20000, rng=1)
        err[method] = np.mean(np.abs(draws - 0.5))
    assert err["bounded_local_sensitivity"] < err["naive"]
    assert err["ksw"] < err["naive"]


def test_ratio_bad_input():
    with pytest.raises(ValueError, match="0 ≤ a ≤ b"):
        private_ratio(5, 3, epsilon=1.0)
    with pytest.raises(ValueError, match="method"):
        private_ratio(1, 3, epsilon=1.0, method="exact")
    with pytest.raises(ValueError, match="delta"):
        private_ratio(1, 3, epsilon=1.0, method="bounded_local_sensitivity")
    with pytest.raises(ValueError, match="delta must be 0"):
        private_ratio(1, 3, epsilon=1.0, method="naive", delta=1e-6)
    with pytest.raises(ValueError, match="add_remove"):
        private_ratio(
            1, 3, epsilon=1.0, method="bounded_local_sensitivity", delta=1e-6, neighbours="substitution"
        )
    with pytest.raises(ValueError, match="neighbours"):
        private_ratio(1, 3, epsilon=1.0, neighbours="substitute")
    with pytest.raises(ValueError, match="a must be an integer"):
        private_ratio(-1, 3, epsilon=1.0)
    with pytest.raises(TypeError, match="epsilon_1_fraction"):
        PrivateRatio(epsilon=1.0, method="ksw", epsilon_1_fraction=0.2)
    with pytest.raises(TypeError, match="positional"):
        private_ratio(1, 3, 1.0)
    with pytest.raises(TypeError, match="counts"):
        PrivateRatio(epsilon=1.0).release(3)


def test_ratio_budget_error_draws_nothing():
    acc = Accountant(epsilon=1.0, neighbours="add_remove")
    private_ratio(3, 10, epsilon=0.8, accountant=acc, rng=0)
    gen, twin = default_rng(4), default_rng(4)
    with pytest.raises(BudgetError):
        private_ratio(3, 10, epsilon=0.8, accountant=acc, rng=gen)
    assert gen.random(3).tolist() == twin.random(3).tolist()  # no noise drawn
    assert acc.spent == 0.8 and len(acc) == 1


# -- baselines ----------------------------------------------------------------------------------------------
def test_global_sensitivity_baselines():
    ages = load_adult_ages()
    m = GlobalSensitivityMean(bounds=(0, 100), epsilon=1.0)
    draws = m.sample(ages, 20000, rng=0)
    assert abs(np.median(draws) - ages.mean()) < 0.05
    rel = m.release(ages, rng=0)
    assert rel.guarantee == PureDP(1.0, neighbours="add_remove") and m.sum_sensitivity == 100
    assert rel.details["neighbours"] == "add_remove"
    med = GlobalSensitivityMedian(bounds=(0, 100), epsilon=1.0).release(ages, rng=0)
    assert med.not_private.noise_scale == 100.0 and med.guarantee == PureDP(1.0)
    assert med.guarantee.neighbours == "substitution"
    assert global_sensitivity_median(ages, bounds=(0, 100), epsilon=1.0, rng=0).value == med.value
    assert global_sensitivity_mean(ages, bounds=(0, 100), epsilon=1.0, rng=0).value == rel.value
    with pytest.raises(TypeError, match="positional"):
        GlobalSensitivityMedian((0, 100), 1.0)
    with pytest.raises(TypeError, match="positional"):
        global_sensitivity_mean(ages, (0, 100), 1.0)


def test_ratio_local_sensitivity_laplace_is_a_plain_function():
    draws = ratio_local_sensitivity_laplace(3, 10, epsilon=1.0, size=5, rng=0)
    assert draws.shape == (5,)
    with pytest.raises(TypeError, match="positional"):
        ratio_local_sensitivity_laplace(3, 10, 1.0, 5)


# -- the zCDP Gaussian mean -------------------------------------------------------------------------------
def _renyi_gaussian(sigma: float, shift: float, alpha: float) -> float:
    """D_α(N(0, σ²) ‖ N(shift, σ²)) by quadrature (independent of the closed form α·shift²/(2σ²))."""
    from scipy import integrate

    def integrand(t):
        lp = stats.norm.logpdf(t, 0.0, sigma)
        lq = stats.norm.logpdf(t, shift, sigma)
        return math.exp(alpha * lp + (1 - alpha) * lq)

    val, _ = integrate.quad(integrand, -40 * sigma - abs(shift), 40 * sigma + abs(shift), limit=400)
    return math.log(val) / (alpha - 1)


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_gaussian_mean_is_rho_zcdp_and_its_twin_is_not(n):
    rho = 0.3
    mech = GaussianMean(bounds=(-2.0, 3.0), rho=rho)
    sigma = mech.sigma(n)
    shift = 5.0 / n  # the largest change of the clipped mean when one of n records is substituted
    for alpha in [1.5, 2.0, 5.0, 20.0]:
        assert _renyi_gaussian(sigma, shift, alpha) <= rho * alpha * (1 + 1e-9)
        # The twin with σ × 0.9 breaks ρ-zCDP at every α.
        assert _renyi_gaussian(0.9 * sigma, shift, alpha) > rho * alpha * 1.1


def test_gaussian_mean_release_and_the_accountant_zcdp_path():
    x = np.random.default_rng(5).uniform(0, 10, 400)
    mech = GaussianMean(bounds=(0, 10), rho=0.02)
    assert mech.guarantee == ZCDP(0.02) and mech.guarantee.neighbours == "substitution"
    rel = mech.release(x, rng=0)
    assert rel.not_private.noise_std == mech.sigma(400) >= 10 / 400 / math.sqrt(0.04)
    assert rel.proof == "docs/theory/central-frameworks.md#global-sensitivity-baselines"
    assert f"{rel.not_private.noise_std:.6g}" not in repr(rel) + str(rel) + repr(rel.to_dict())
    draws = mech.sample(x, 20000, rng=1)
    assert abs(np.std(draws) / mech.sigma(400) - 1) < 0.03 and abs(np.mean(draws) - x.mean()) < 0.01
    with pytest.raises(ValueError, match="slack"):  # zCDP needs a conversion slack on the accountant
        gaussian_mean(x, bounds=(0, 10), rho=0.02, accountant=Accountant(epsilon=1.0, delta=1e-6))
    acc = Accountant(epsilon=2.0, delta=1e-6, slack=1e-6)
    gaussian_mean(x, bounds=(0, 10), rho=0.02, accountant=acc, rng=0)
    gaussian_mean(x, bounds=(0, 10), rho=0.02, accountant=acc, rng=1)
    rho = 0.04
    assert acc.spent.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)), rel=1e-9)
    with pytest.raises(BudgetError):
        gaussian_mean(x, bounds=(0, 10), rho=0.5, accountant=acc, rng=2)
    with pytest.raises(ValueError, match="rho"):
        GaussianMean(bounds=(0, 10), rho=0.0)
    with pytest.raises(TypeError, match="positional"):
        GaussianMean((0, 10), 0.1)


# -- generic Hamming smooth sensitivity ------------------------------------------------------------------
def test_generic_smooth_sensitivity_equals_closed_forms():
    rng = np.random.default_rng(8)
    for stat in [Median(bounds=(0, 1)), TrimmedMean(2, bounds=(0, 1))]:
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
