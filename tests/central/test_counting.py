"""smoothdp.count, smoothdp.sum, smoothdp.histogram and their batch forms: behaviour, data policy, errors,
exactness of the lattice sum, tightness of its sensitivity, and statistical audits on neighbouring inputs
(each with a broken twin that must fail). The registry cases (worst-case loss) are in
tests/mechanisms/counting_cases.py."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

import smoothdp
from smoothdp.accounting import Accountant
from smoothdp.audit import audit_mechanism
from smoothdp.central import NoisyCount, NoisyHistogram, NoisySum
from smoothdp.central.counting.batch import (
    SumQuantizer,
    add_integer_noise,
    bin_codes,
    category_codes,
    cell_counts,
    check_categories,
    grouped_sums,
    noisy_grouped_sums,
)
from smoothdp.central.counting.noise import IntegerNoise, calibrate_integer_noise, rho_for_approx_dp
from smoothdp.noise.exact_integer import rate_at_most
from smoothdp.privacy import ZCDP, ApproxDP, PureDP
from smoothdp.rng import default_rng

nan, inf = float("nan"), float("inf")


# -- count ------------------------------------------------------------------------------------------------
def test_count_counts_every_record_and_huge_epsilon_is_nearly_exact():
    r = smoothdp.count([1.0, nan, None, "x", inf], epsilon=40.0, rng=1)
    assert r.value == 5 and isinstance(r.value, int)
    assert r.guarantee == PureDP(40.0, neighbours="add_remove")
    assert r.statistic == "count" and r.proof.endswith("#the-noisy-count")


@pytest.mark.parametrize(
    "data",
    [np.zeros((7, 3)), list(range(7)), tuple("abcdefg")],
)
def test_count_of_rows(data):
    assert smoothdp.count(data, epsilon=40.0, rng=2).value == 7


def test_count_of_frames():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"]})
    assert smoothdp.count(frame, epsilon=40.0, rng=3).value == 3
    assert smoothdp.count(frame["b"], epsilon=40.0, rng=3).value == 3


def test_count_of_dask_collections():
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    pd = pytest.importorskip("pandas")
    frame = dd.from_pandas(pd.DataFrame({"a": np.arange(100.0)}), npartitions=4)
    assert smoothdp.count(frame, epsilon=40.0, rng=3).value == 100
    column = da.from_array(np.arange(50.0), chunks=10)
    assert smoothdp.count(column[column > 10], epsilon=40.0, rng=3).value == 39  # unknown chunk sizes


def test_empty_inputs_release_noise_around_zero():
    values = [smoothdp.count([], epsilon=1.0, rng=k).value for k in range(200)]
    assert abs(np.mean(values)) < 0.5 and len(set(values)) > 3
    assert np.isfinite(smoothdp.sum([], epsilon=1.0, bounds=(0, 1), rng=4).value)
    assert smoothdp.histogram([], epsilon=1.0, bins=[0, 1, 2], rng=5).value.shape == (2,)


def test_count_under_substitution_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"neighbours='substitution'.*len\(x\)"):
        smoothdp.count([1, 2], epsilon=1.0, neighbours="substitution")


def test_count_refuses_a_string_or_a_scalar():
    with pytest.raises(TypeError, match="string"):
        smoothdp.count("abc", epsilon=1.0)
    with pytest.raises(TypeError, match="records"):
        smoothdp.count(np.float64(3.0), epsilon=1.0)


def test_count_noise_has_the_discrete_laplace_variance():
    mech = NoisyCount(epsilon=0.5)
    draws = mech.sample([0.0] * 10, 100_000, rng=6) - 10
    var = 2 * math.exp(-0.5) / math.expm1(-0.5) ** 2
    assert abs(draws.var() / var - 1) < 0.03
    assert mech.noise.parameter == Fraction(1, 2)  # the rate is ε itself, exactly


# -- budgets and guarantees --------------------------------------------------------------------------------
def test_gaussian_budgets():
    g = smoothdp.count([1, 2], noise="gaussian", rho=0.25, rng=7).guarantee
    assert g == ZCDP(0.25, neighbours="add_remove")
    r = smoothdp.count([1, 2], noise="gaussian", epsilon=1.0, delta=1e-6, rng=7)
    assert r.guarantee == ApproxDP(1.0, 1e-6, neighbours="add_remove")
    rho = rho_for_approx_dp(1.0, 1e-6)
    assert ZCDP(rho).as_approx_dp(1e-6).epsilon <= 1.0
    assert ZCDP(rho * (1 + 1e-9)).as_approx_dp(1e-6).epsilon > 1.0 - 1e-6  # the largest ρ, nearly
    noise, _ = calibrate_integer_noise(l1=1, l2_squared=2, epsilon=None, rho=0.25, noise="gaussian")
    assert noise.parameter == Fraction(2) / (2 * Fraction(0.25))  # σ² = Δ₂²/(2ρ), exactly


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"noise": "gaussian", "epsilon": 1.0}, TypeError, "delta"),
        ({"noise": "gaussian", "epsilon": 1.0, "rho": 0.1}, TypeError, "rho"),
        ({"noise": "gaussian"}, TypeError, "rho"),
        ({}, TypeError, "epsilon"),
        ({"epsilon": 1.0, "delta": 0.1}, ValueError, "delta"),
        ({"epsilon": 1.0, "noise": "laplacian"}, ValueError, "noise"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": 1e-300}, ValueError, "epsilon"),
        ({"epsilon": 1.0, "neighbors": "add_remove"}, TypeError, "neighbors"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        smoothdp.count([1.0], **kwargs)


def test_the_epsilon_charged_is_the_epsilon_passed():
    acc = Accountant(epsilon=1.0, neighbours="add_remove")
    smoothdp.count([1, 2], epsilon=0.25, accountant=acc, rng=8)
    smoothdp.sum([1, 2], epsilon=0.25, bounds=(0, 3), accountant=acc, rng=8)
    smoothdp.histogram(["a"], epsilon=0.5, categories=["a", "b"], accountant=acc, rng=8)
    assert acc.spent.epsilon == 1.0
    with pytest.raises(smoothdp.BudgetError):
        smoothdp.count([1], epsilon=0.1, accountant=acc, rng=8)


# -- sum ----------------------------------------------------------------------------------------------------
def test_sum_is_a_multiple_of_the_public_quantum_and_close_with_a_large_epsilon():
    x = np.array([0.1, 0.2, 0.3, 5.0, -7.0, nan])  # clipped into (-1, 3); NaN → 1
    r = smoothdp.sum(x, epsilon=1e4, bounds=(-1.0, 3.0), rng=9)
    q = r.details["quantum"]
    assert q == 2.0**-19  # 2^(⌊log2 3⌋ − 20), from the bounds only
    assert (r.value / q) == int(r.value / q)
    assert abs(r.value - (0.1 + 0.2 + 0.3 + 3.0 - 1.0 + 1.0)) < 0.05
    assert smoothdp.sum(x, epsilon=0.1, bounds=(-1.0, 3.0), rng=9).details["quantum"] == q


def test_sum_lattice_values_match_exact_rationals():
    """f = ⌊A/2^s + 1/2⌋ with A = Σ rint(x/r), against Fractions written from the definition."""
    gen = np.random.default_rng(10)
    for bounds in [(-1.0, 3.0), (0.1, 2.5), (1e6, 1e6 + 1), (-1e-3, 2e-3), (-1e300, 1e300)]:
        for neighbours in ("add_remove", "substitution"):
            quant = SumQuantizer.for_bounds(bounds, neighbours)
            lo, hi = bounds
            x = gen.uniform(lo - (hi - lo) * 0.1, hi + (hi - lo) * 0.1, 300)
            x[:3] = [nan, inf, -inf]
            r = Fraction(2) ** quant.record_exponent
            clipped = [min(max(0.5 * lo + 0.5 * hi if math.isnan(v) else v, lo), hi) for v in x]
            total = sum(round(Fraction(v) / r) for v in clipped)
            s = quant.quantum_exponent - quant.record_exponent
            expected = math.floor(Fraction(total, 2**s) + Fraction(1, 2))
            assert grouped_sums(x, None, 1, quant)[0] == expected
            exact = sum(Fraction(v) for v in clipped)
            # the lattice moves the sum by at most q/2 + n·r/2
            assert abs(expected * Fraction(quant.quantum) - exact) <= Fraction(quant.quantum) / 2 + 150 * r


@pytest.mark.parametrize("neighbours", ["add_remove", "substitution"])
@pytest.mark.parametrize("bounds", [(-1.0, 3.0), (0.1, 2.5), (-5.0, -0.3), (1e6, 1e6 + 1)])
def test_sum_sensitivity_is_an_upper_bound_and_tight(bounds, neighbours):
    """Brute force over neighbours built from extreme and random records: max |f(x) − f(x′)| ≤ Δ_q, and
    ≥ Δ_q − 1 (the bound is not loose)."""
    quant = SumQuantizer.for_bounds(bounds, neighbours)
    lo, hi = bounds
    gen = np.random.default_rng(11)
    worst = 0
    extremes = [lo, hi, nan, inf, -inf, 0.5 * lo + 0.5 * hi]
    for _ in range(300):
        base = list(gen.uniform(lo, hi, gen.integers(0, 5)))
        for v in [*extremes, float(gen.uniform(lo, hi))]:
            if neighbours == "add_remove":
                a, b = base, [*base, v]
            else:  # the record replaced is an extreme one or a random one
                a, b = [*base, lo if v != lo else hi], [*base, v]
            f, f2 = grouped_sums(a, None, 1, quant)[0], grouped_sums(b, None, 1, quant)[0]
            worst = max(worst, abs(int(f2 - f)))
    assert worst <= quant.sensitivity
    assert worst >= quant.sensitivity - 1


def test_sum_epsilon_floor_is_named():
    with pytest.raises(ValueError, match="epsilon"):
        smoothdp.sum([1.0], epsilon=1e-12, bounds=(0, 1))


# -- histogram -----------------------------------------------------------------------------------------------
def test_histogram_categories_strings_drop_the_rest():
    x = ["a", "b", "a", None, 3, nan, "c", "A"]
    r = smoothdp.histogram(x, epsilon=50.0, categories=["b", "a"], rng=12)
    assert r.value.tolist() == [1, 2] and r.value.dtype == np.int64
    assert r.details["categories"] == ["b", "a"]
    assert r.guarantee == PureDP(50.0, neighbours="add_remove")


def test_histogram_numeric_categories_compare_as_floats():
    x = np.array([1, 1.0, 2, nan, 2.5, 3])
    assert smoothdp.histogram(x, epsilon=50.0, categories=[3, 1], rng=13).value.tolist() == [1, 2]
    assert category_codes(x, check_categories([3, 1])[1]).tolist() == [1, 1, -1, -1, -1, 0]


def test_histogram_categories_on_pandas_and_polars_strings():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    keys = check_categories(["x", "y"])[1]
    assert category_codes(pd.Series(["x", None, "y", "z"]), keys).tolist() == [0, -1, 1, -1]
    assert category_codes(pd.Series(["x", None, "y"], dtype="string"), keys).tolist() == [0, -1, 1]
    assert category_codes(pl.Series(["y", None, "x"]), keys).tolist() == [1, -1, 0]
    with pytest.raises(TypeError, match="kinds"):  # a numeric column cannot hold string categories
        category_codes(np.array([1.0, 2.0]), keys)
    with pytest.raises(TypeError, match="kinds"):
        category_codes(np.array(["1", "2"]), check_categories([1, 2])[1])
    # an object column mixing kinds: the records of another kind match nothing (dropped), never an error
    mixed = np.array([1, "1", None, 2.0, True, pd.NA, np.int64(2)], dtype=object)
    assert category_codes(mixed, check_categories([2, 1])[1]).tolist() == [1, -1, -1, 0, 1, -1, 0]
    assert category_codes(pd.Series([1, None, 2], dtype="Int64"), check_categories([2])[1]).tolist() == [
        -1,
        -1,
        0,
    ]


def test_masked_entries_are_missing_records():
    """A masked entry is a missing record: counted by count, no category, the midpoint's bin, the midpoint in
    a sum; what it hides (1e9 here) is never read."""
    x = np.ma.masked_array([1.0, 1e9, 2.0, 1e9], mask=[False, True, False, True])
    assert smoothdp.count(x, epsilon=40.0, rng=21).value == 4
    assert smoothdp.histogram(x, epsilon=50.0, categories=[1e9, 1.0], rng=21).value.tolist() == [0, 1]
    labels = np.ma.masked_array(np.array(["a", "b", "a"], dtype=object), mask=[False, True, False])
    assert category_codes(labels, check_categories(["b", "a"])[1]).tolist() == [1, -1, 1]
    assert smoothdp.histogram(x, epsilon=50.0, bins=[0, 2, 3], rng=21).value.tolist() == [3, 1]  # mid 1.5
    quant = SumQuantizer.for_bounds((0.0, 4.0))
    assert grouped_sums(x, None, 1, quant)[0] == grouped_sums([1.0, 2.0, 2.0, 2.0], None, 1, quant)[0]


def test_histogram_bins_clip_and_impute_the_midpoint():
    x = [-5, 0.0, 0.5, 1.0, 1.99, 2.0, 7, nan, inf, -inf]
    codes = bin_codes(x, np.array([0.0, 1.0, 2.0]))
    # NaN → midpoint 1.0 (second bin); the last edge belongs to the last bin; ±inf clipped
    assert codes.tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 1, 0]
    r = smoothdp.histogram(x, epsilon=50.0, bins=[0, 1, 2], rng=14)
    assert r.value.tolist() == [4, 6] and r.details["bins"] == [0.0, 1.0, 2.0]


def test_histogram_substitution_and_gaussian_guarantees():
    r = smoothdp.histogram([0.5], bins=[0, 1], epsilon=1.0, neighbours="substitution", rng=15)
    assert r.guarantee == PureDP(1.0) and r.neighbours == "substitution"
    mech = NoisyHistogram(bins=[0, 1], epsilon=1.0, neighbours="substitution")
    assert mech.noise.parameter == Fraction(1, 2)  # ℓ1 sensitivity 2
    mech = NoisyHistogram(bins=[0, 1], rho=0.5, noise="gaussian", neighbours="substitution")
    assert mech.noise.parameter == Fraction(2)  # σ² = Δ₂²/(2ρ) = 2/1


# -- batch forms ---------------------------------------------------------------------------------------------
def test_grouped_sums_equal_one_group_at_a_time():
    gen = np.random.default_rng(16)
    x = gen.normal(1.0, 3.0, 5000)
    x[::97] = nan
    groups = gen.integers(0, 7, x.size)
    quant = SumQuantizer.for_bounds((-2.0, 5.0))
    together = grouped_sums(x, groups, 8, quant)
    for g in range(8):
        assert together[g] == grouped_sums(x[groups == g], None, 1, quant)[0]
    assert together[7] == 0  # an empty group


def test_grouped_sums_are_exact_beyond_float_precision():
    """10⁶ records at the bound: A = 10⁶·2⁵¹·3 exceeds 2⁵³ by far, and is still exact."""
    quant = SumQuantizer.for_bounds((-1.0, 3.0))
    f = grouped_sums(np.full(1_000_000, 3.0), None, 1, quant)[0]
    assert f == 1_000_000 * 3 * 2**19


def test_grouped_sums_blocks_and_flushes(monkeypatch):
    """Blocks of 4 records flushed every 8 (instead of 2²⁰ and 2²⁵): the same exact sums."""
    import smoothdp.central.counting.batch as cb

    gen = np.random.default_rng(20)
    x = gen.uniform(-3.0, 7.0, 103)
    groups = gen.integers(0, 5, x.size)
    quant = SumQuantizer.for_bounds((-2.0, 5.0))
    whole = grouped_sums(x, groups, 5, quant)
    monkeypatch.setattr(cb, "_SUM_BLOCK", 4)
    monkeypatch.setattr(cb, "_SUM_FLUSH", 8)
    assert grouped_sums(x, groups, 5, quant).tolist() == whole.tolist()
    r = Fraction(2) ** quant.record_exponent
    s = quant.quantum_exponent - quant.record_exponent
    for g in range(5):
        total = sum(round(Fraction(min(max(v, -2.0), 5.0)) / r) for v in x[groups == g])
        assert whole[g] == math.floor(Fraction(total, 2**s) + Fraction(1, 2))


def test_cell_counts_and_noise():
    counts = cell_counts([0, 2, 2, -1, 2], 4)
    assert counts.tolist() == [1, 0, 3, 0]
    noise = IntegerNoise("discrete_laplace", Fraction(1000))  # practically no noise
    assert add_integer_noise(counts, noise, default_rng(17)).tolist() == [1, 0, 3, 0]
    with pytest.raises(ValueError, match="n_cells"):
        cell_counts([5], 4)
    with pytest.raises(TypeError, match="integers"):
        add_integer_noise(np.array([1.5]), noise, default_rng(17))


def test_noisy_grouped_sums_and_group_errors():
    quant = SumQuantizer.for_bounds((0.0, 10.0))
    noise, _ = calibrate_integer_noise(l1=quant.sensitivity, l2_squared=1, epsilon=1e4)
    out = noisy_grouped_sums([1.0, 2.0, 4.0], np.array([0, 1, 1]), 3, quant, noise, default_rng(18))
    assert out.dtype == np.float64 and np.allclose(out, [1.0, 6.0, 0.0], atol=0.05)
    with pytest.raises(ValueError, match="groups"):
        grouped_sums([1.0], np.array([3]), 3, quant)
    with pytest.raises(ValueError, match="groups"):
        grouped_sums([1.0, 2.0], np.array([0]), 3, quant)


# -- statistical audits on neighbouring inputs, with broken twins ------------------------------------------
def _narrower(mech, factor):
    import copy

    twin = copy.copy(mech)
    twin.noise = dataclasses.replace(
        mech.noise, parameter=rate_at_most(mech.noise.parameter * Fraction(factor))
    )
    return twin


def _audit(mech, x, x_prime, epsilon, delta=0.0, seed=0):
    return audit_mechanism(
        lambda k, g: np.asarray(mech.sample(x, k, rng=g)).reshape(k, -1)[:, 0],
        lambda k, g: np.asarray(mech.sample(x_prime, k, rng=g)).reshape(k, -1)[:, 0],
        epsilon,
        delta,
        n_samples=100_000,
        rng=seed,
    )


def test_count_audit_and_twin():
    mech = NoisyCount(epsilon=1.0)
    x, x_prime = [1.0, 2.0], [1.0, 2.0, nan]
    assert _audit(mech, x, x_prime, 1.0).passed
    assert not _audit(_narrower(mech, 1.6), x, x_prime, 1.0).passed


def test_sum_audit_and_twin():
    """The sum at the bound: one record of value U = 3 moves it by the whole sensitivity."""
    mech = NoisySum(bounds=(-1.0, 3.0), epsilon=1.0)
    x, x_prime = [0.5], [0.5, 3.0]
    # On the lattice the outputs are floats spread over ~10⁶ values: the audit bins them by quantiles.
    assert _audit(mech, x, x_prime, 1.0).passed
    assert not _audit(_narrower(mech, 1.6), x, x_prime, 1.0).passed


def test_histogram_substitution_audit_and_twin():
    """A record moved from cell 0 to cell 1 moves each cell by 1; each cell's noise has rate ε/2 (ℓ1
    sensitivity 2), so each cell alone must pass an ε/2 audit, and a rate 1.6× too large must fail it."""
    mech = NoisyHistogram(bins=[0.0, 1.0, 2.0], epsilon=1.0, neighbours="substitution")
    x, x_prime = [0.5, 0.5], [0.5, 1.5]
    for twin, passes in ((mech, True), (_narrower(mech, 1.6), False)):
        report = audit_mechanism(
            lambda k, g, m=twin: m.sample(x, k, rng=g)[:, 1],
            lambda k, g, m=twin: m.sample(x_prime, k, rng=g)[:, 1],
            0.5,
            n_samples=100_000,
            rng=19,
        )
        assert report.passed is passes, report
