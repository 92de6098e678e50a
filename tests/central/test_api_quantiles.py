"""The numpy-style entry points of the quantiles: methods, order, duplicates, clamping, private bounds,
parameter errors, accountant."""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.rng import default_rng

X = np.random.default_rng(0).normal(1.2, 1.0, 500)


@pytest.mark.parametrize("method", ["exponential", "smooth_sensitivity"])
def test_every_single_method_is_selectable_and_reported(method):
    r = smoothdp.median(X, epsilon=1.0, bounds=(-100, 100), method=method, rng=1)
    assert r.details["method"] == method
    assert -100 <= float(r) <= 100


def test_auto_reports_the_method_it_ran():
    low = smoothdp.median(X, epsilon=0.5, bounds=(-100, 100), rng=1)
    high = smoothdp.median(X, epsilon=2.0, bounds=(-100, 100), rng=1)
    assert low.details["method"] == "exponential"
    assert high.details["method"] == "heavy_level_or_smooth_sensitivity"
    assert high.details["lattice_test"]["atoms"] == "light"  # continuous data: the smooth-sensitivity branch
    few = smoothdp.median(X[:100], epsilon=2.0, bounds=(-100, 100), rng=1)
    assert few.details["method"] == "smooth_sensitivity"  # ε·n = 200: the selection does not run


@pytest.mark.parametrize("method", ["auto", "joint_exp", "recursive", "exponential", "smooth_sensitivity"])
def test_quantiles_keep_the_order_asked_and_duplicates(method):
    qs = [0.9, 0.1, 0.5, 0.1]
    r = smoothdp.quantiles(X, qs, epsilon=4.0, bounds=(-100, 100), method=method, rng=2)
    v = np.asarray(r.value)
    assert v.shape == (4,) and v[1] == v[3]
    truth = np.quantile(X, qs, method="inverted_cdf")
    assert np.all(np.abs(v - truth) < 1.0)
    assert r.guarantee.epsilon == 4.0 and r.neighbours == "substitution"


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0])
@pytest.mark.parametrize("qs", [[0.5], [0.1, 0.1]])
def test_one_distinct_quantile_is_the_single_quantile_default(epsilon, qs):
    # quantiles() with one distinct quantile must release what quantile() releases: the same mechanism
    # (exponential on the lattice below ε = 1.5, smooth sensitivity above) at the whole ε, the same draw.
    tied = np.round(np.random.default_rng(3).normal(15.0, 8.0, 400), 1)
    for x, bounds in [(X, (-100.0, 100.0)), (tied, (-50.0, 60.0))]:
        one = smoothdp.quantile(x, qs[0], epsilon=epsilon, bounds=bounds, rng=11)
        many = smoothdp.quantiles(x, qs, epsilon=epsilon, bounds=bounds, rng=11)
        assert np.all(np.asarray(many.value) == float(one.value))
        assert many.details["method"] == one.details["method"]


def test_one_quantile_of_tied_data_is_released_exactly():
    # 200 copies of 62.5 at ε = 1: the single-quantile default puts the lattice atom 62.5 first; the recursive
    # algorithm without a lattice (what quantiles([0.5]) used to run) draws uniformly over the bounds.
    x = np.full(200, 62.5)
    gen = default_rng(5)
    values = [
        float(smoothdp.quantiles(x, [0.5], epsilon=1.0, bounds=(0, 125), rng=gen).value[0]) for _ in range(40)
    ]
    assert np.mean(np.asarray(values) == 62.5) >= 0.9


def test_quantiles_honour_the_lattice_asked_for():
    x = np.full(200, 62.5)
    exact = smoothdp.quantiles(
        x, [0.5, 0.5], epsilon=1.0, bounds=(0, 125), method="exponential", lattice=0.5, atoms="heavy", rng=4
    )
    assert np.all(np.asarray(exact.value) == 62.5)
    gen = default_rng(6)
    continuum = [
        np.asarray(
            smoothdp.quantiles(
                x, [0.5], epsilon=1.0, bounds=(0, 125), method="exponential", lattice=None, rng=gen
            ).value
        )[0]
        for _ in range(20)
    ]
    assert np.mean(np.asarray(continuum) == 62.5) < 0.5  # no atom: a tie has no mass of its own


def test_clamp_keeps_default_releases_in_bounds_and_clamp_false_does_not_force_it():
    x = np.random.default_rng(3).normal(1.2, 1.0, 5)
    outs = [
        float(smoothdp.median(x, epsilon=0.3, bounds=(0.0, 2.0), method="smooth_sensitivity", rng=s))
        for s in range(200)
    ]
    assert min(outs) >= 0.0 and max(outs) <= 2.0
    raw = [
        float(
            smoothdp.median(
                x, epsilon=0.3, bounds=(0.0, 2.0), method="smooth_sensitivity", clamp=False, rng=s
            )
        )
        for s in range(200)
    ]
    assert min(raw) < 0.0 or max(raw) > 2.0


def test_private_bounds_report_their_split_and_bounds():
    r = smoothdp.median(X, epsilon=1.0, bounds="private", rng=4)
    lo, hi = r.details["bounds"]
    assert lo < np.median(X) < hi
    assert r.details["epsilon_bounds"] + r.details["epsilon_statistic"] == pytest.approx(1.0)
    assert r.guarantee.epsilon == 1.0


def test_private_bounds_charge_the_whole_budget_once_before_any_noise():
    acc = Accountant(epsilon=0.5)
    gen = default_rng(5)
    before = repr(gen.bit_generator.state)
    with pytest.raises(BudgetError):
        smoothdp.median(X, epsilon=1.0, bounds="private", rng=gen, accountant=acc)
    assert repr(gen.bit_generator.state) == before and len(acc) == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"method": "laplace"}, ValueError, "method"),
        ({"bounds": "public"}, ValueError, "bounds"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"method": "exponential", "beta": 0.1}, TypeError, "beta"),
        ({"numerics": "fast"}, ValueError, "numerics"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, error, name):
    with pytest.raises(error, match=name):
        smoothdp.median(X, **{"epsilon": 1.0, "bounds": (-100, 100), **kwargs})


def test_bad_quantile_lists():
    with pytest.raises(ValueError, match="qs"):
        smoothdp.quantiles(X, [0.5, 1.5], epsilon=1.0, bounds=(-100, 100))
    with pytest.raises(ValueError, match="qs"):
        smoothdp.quantiles(X, [], epsilon=1.0, bounds=(-100, 100))
    with pytest.raises(ValueError, match="method"):
        smoothdp.quantiles(X, [0.5], epsilon=1.0, bounds=(-100, 100), method="tree")


# -- several quantiles: JointExp over nested bounds when ε·n < 72·m ------------------------------------------
def test_evidence_rule_reads_public_parameters_only():
    """The heavy level is chosen by evidence (no ε) where the private selection would not be confident:
    ε_t·(0.1n − 1/ε_t) < ln L + 3, ε_t = 0.05ε, L levels (10 for the default, 1 for one spacing)."""
    from smoothdp.central.choose import evidence_chooses_atoms

    assert evidence_chooses_atoms(n=1000, epsilon=1.0, lattice="multiscale")  # 0.05·(100 − 20) = 4 < 5.3
    assert not evidence_chooses_atoms(n=1300, epsilon=1.0, lattice="multiscale")  # 0.05·110 = 5.5
    assert not evidence_chooses_atoms(n=1000, epsilon=1.0, lattice=1.0)  # 4 ≥ ln 1 + 3
    assert not evidence_chooses_atoms(n=10, epsilon=1.0, lattice=None)  # no atoms to choose
    assert not evidence_chooses_atoms(n=0, epsilon=1.0, lattice="multiscale")


def test_narrowing_rule_reads_public_parameters_only():
    from smoothdp.central.choose import NARROW_BELOW, narrow_bounds_first

    assert NARROW_BELOW == 72.0
    assert narrow_bounds_first(n=1000, epsilon=0.1, n_quantiles=9)  # ε·n = 100 < 648
    assert not narrow_bounds_first(n=1000, epsilon=1.0, n_quantiles=9)  # 1000 ≥ 648
    assert not narrow_bounds_first(n=10, epsilon=0.1, n_quantiles=1)  # never for one quantile
    assert not narrow_bounds_first(n=0, epsilon=0.1, n_quantiles=9)  # nothing to narrow
    assert narrow_bounds_first(n=719, epsilon=0.1, n_quantiles=1 + 1) is (0.1 * 719 < 144)
    with pytest.raises(ValueError, match="n_quantiles"):
        narrow_bounds_first(n=10, epsilon=0.1, n_quantiles=0)


def test_nested_quantiles_spend_epsilon_once_and_report_the_bounds_used():
    """Wide bounds at ε·n = 100: the bounds are drawn with the outputs (no share of ε spent on them), the
    release reports them, every value lies inside them; above the threshold or with a named method the
    plain JointExp runs."""
    y = np.random.default_rng(6).normal(1.2, 1.0, 1000)
    qs = [0.1, 0.5, 0.9]
    acc = Accountant(epsilon=1.0)
    r = smoothdp.quantiles(y, qs, epsilon=0.1, bounds=(-1e4, 1e4), rng=7, accountant=acc)
    lo, hi = r.details["bounds_used"]
    assert -1e4 <= lo < hi <= 1e4 and hi - lo <= 2e4 / 2**8  # the data fill a few units of ±1e4
    assert r.details["bounds"] == (-1e4, 1e4) and "epsilon_bounds" not in r.details
    assert r.guarantee.epsilon == 0.1 and acc.spent == pytest.approx(0.1) and len(acc) == 1
    assert r.mechanism == "joint exponential mechanism over nested bounds"
    v = np.asarray(r.value)
    assert np.all((v >= lo) & (v <= hi))
    assert abs(v[1] - np.quantile(y, 0.5, method="inverted_cdf")) < 0.5  # ±1e4 would give thousands
    # ε·n = 1000 ≥ 72m: no halvings, but the heavy levels are still drawn by evidence (the selection would
    # not be confident below ε·n ≈ 1260); ε·n = 2000: plain JointExp with the private selection.
    mid = smoothdp.quantiles(y, qs, epsilon=1.0, bounds=(-1e4, 1e4), rng=7).details
    assert mid["bounds_used"] == (-1e4, 1e4) and mid["halvings"] == 0
    assert "bounds_used" not in smoothdp.quantiles(y, qs, epsilon=2.0, bounds=(-1e4, 1e4), rng=7).details
    named = smoothdp.quantiles(y, qs, epsilon=0.1, bounds=(-1e4, 1e4), method="joint_exp", rng=7)
    assert "bounds_used" not in named.details


def test_nested_quantiles_keep_the_declared_bounds_when_the_data_fill_them():
    """Uniform data on (20, 80) in (0, 100), n = 100, ε = 1 (the case where spending ε/4 on a private range
    cost 2-5×): the declared bounds are drawn in nearly every release, so the law is JointExp's."""
    y = np.random.default_rng(12).uniform(20.0, 80.0, 100)
    used = [
        smoothdp.quantiles(y, [0.25, 0.5, 0.75], epsilon=1.0, bounds=(0.0, 100.0), rng=s).details[
            "bounds_used"
        ]
        for s in range(20)
    ]
    assert sum(u == (0.0, 100.0) for u in used) >= 18


def test_nested_quantiles_never_collapse_far_from_the_data():
    """The quartiles of 1..10 in (0, 100): the previous private narrowing could return (0, 2.8e-17); every
    candidate now holds the bounds' anchor and has a prior that shrinks with its width, and the bounds
    drawn keep the quartiles."""
    y = np.arange(1.0, 11.0)
    for s in range(20):
        r = smoothdp.quantiles(y, [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 100.0), rng=s)
        lo, hi = r.details["bounds_used"]
        assert lo == 0.0 and hi >= 100.0 / 2**6


def test_narrowing_applies_the_declared_data_policy_first():
    """NaN is imputed with the midpoint of the DECLARED bounds and ±inf clipped into them, before the
    draw of the bounds."""
    y = np.concatenate([np.random.default_rng(10).normal(1.2, 1.0, 300), [np.nan, np.inf, -np.inf]])
    r = smoothdp.quantiles(y, [0.2, 0.8], epsilon=0.2, bounds=(-50.0, 50.0), rng=11)
    assert np.all(np.isfinite(np.asarray(r.value))) and "bounds_used" in r.details
