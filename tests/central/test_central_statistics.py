"""Central statistics: values, A^(k) and smooth sensitivity against brute force and the O(n²) definition."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from central_brute import (
    brute_local_sensitivity_at,
    brute_smooth_sensitivity,
    local_sensitivity_rows,
    trimmed_rows,
)
from scipy import stats

from smoothdp.central import Max, Mean, Median, Min, Quantile, TrimmedMean
from smoothdp.central.smooth_sensitivity._pairs import pair_max_quadratic

LO, HI = 0.0, 10.0


def _cases(rng, n_cases, n_range, integer=True):
    for _ in range(n_cases):
        n = int(rng.integers(*n_range))
        x = rng.integers(1, 9, n).astype(float) if integer else rng.uniform(LO, HI, n)
        yield x


def _stat_and_reference(kind, n, rng):
    """A statistic object and an independent row-wise reference implementation of it."""
    if kind == "median":
        return Median(bounds=(LO, HI)), lambda rows: np.sort(rows, axis=1)[:, (rows.shape[1] - 1) // 2]
    if kind == "quantile":
        q = float(rng.choice([0.0, 0.1, 0.3, 0.5, 0.75, 1.0]))
        return Quantile(q, bounds=(LO, HI)), lambda rows: np.quantile(rows, q, axis=1, method="inverted_cdf")
    if kind == "min":
        return Min(bounds=(LO, HI)), lambda rows: rows.min(axis=1)
    if kind == "max":
        return Max(bounds=(LO, HI)), lambda rows: rows.max(axis=1)
    m = int(rng.integers(0, (n + 1) // 2))
    return TrimmedMean(m, bounds=(LO, HI)), lambda rows: trimmed_rows(rows, m)


KINDS = ["median", "quantile", "min", "max", "trimmed"]


# -- values and index rules ------------------------------------------------------------------------------
def test_median_is_the_lower_middle_order_statistic_not_np_median():
    assert Median(bounds=(0, 10)).value([4.0, 1.0, 3.0, 2.0]) == 2.0  # np.median would give 2.5
    assert Median(bounds=(0, 10)).value([5.0, 1.0, 3.0]) == 3.0


def test_quantile_matches_numpy_inverted_cdf():
    rng = np.random.default_rng(1)
    for q in [0.0, 0.5, 1.0, *rng.uniform(0, 1, 20)]:
        for n in [1, 2, 3, 7, 10, 20, 101]:
            x = rng.uniform(0, 1, n)
            assert Quantile(q, bounds=(0, 1)).value(x) == np.quantile(x, q, method="inverted_cdf")


def test_quantile_rank_uses_the_decimal_q_exactly():
    x = np.arange(1.0, 11.0)
    assert Quantile(0.3, bounds=(0, 100)).value(x) == 3.0  # 0.3·10 = 3.0000000000000004 in floats
    assert Quantile(0.1, bounds=(0, 100)).value(x) == 1.0  # the double 0.1 is slightly above 1/10
    assert Quantile(0.7, bounds=(0, 100)).value(x) == 7.0


def test_trimmed_mean_matches_scipy():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 5, 57)
    assert TrimmedMean(0.1, bounds=(0, 5)).value(x) == pytest.approx(stats.trim_mean(x, 0.1), rel=1e-14)
    assert TrimmedMean(3, bounds=(0, 5)).value(x) == pytest.approx(np.sort(x)[3:-3].mean(), rel=1e-14)


def test_clipping_is_the_default_and_clip_false_is_strict_without_a_count():
    assert Median(bounds=(0, 1)).value([0.5, 2.0, 3.0]) == 1.0
    assert Median(bounds=(0, 1)).value([-np.inf, np.inf, np.inf]) == 1.0  # ±inf clip like any value
    with pytest.raises(ValueError, match="outside the declared bounds") as err:
        Median(bounds=(0, 1), clip=False).value([0.5, 2.0, 0.1, 7.0])
    assert "trusted data" in str(err.value) and not re.search(r"\b2\b", str(err.value))  # no count


# -- A^(k) against brute force -----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_local_sensitivity_at_distance_k_matches_brute_force(kind):
    rng = np.random.default_rng(hash(kind) % 2**32)
    grid_extra = np.array([LO, HI, 2.5, 7.5])
    checked = 0
    for x in _cases(rng, 40, (2, 7)):
        stat, ref = _stat_and_reference(kind, x.size, rng)
        grid = np.unique(np.concatenate([grid_extra, x]))
        for k in range(3):
            expected = brute_local_sensitivity_at(x, ref, grid, k)
            got = stat.local_sensitivity(x, k)
            assert got >= expected, (kind, x, k)
            assert got <= expected * (1 + 1e-11) + 1e-300, (kind, x, k, got, expected)
            checked += 1
    assert checked == 120


# -- S_β against brute force over the whole domain --------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_smooth_sensitivity_matches_brute_force_over_domain(kind):
    rng = np.random.default_rng(7 + len(kind))
    for x in _cases(rng, 12, (2, 6)):
        stat, ref = _stat_and_reference(kind, x.size, rng)
        grid = np.unique(np.concatenate([[LO, HI], x]))
        beta = float(rng.choice([0.05, 0.3, 1.0, 2.5]))
        expected = brute_smooth_sensitivity(x, ref, grid, beta)
        got = stat.smooth_sensitivity(x, beta)
        assert expected <= got <= expected * (1 + 1e-11), (kind, x, beta, got, expected)


# -- O(n log n) against O(n²) ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["median", "quantile", "trimmed"])
def test_divide_and_conquer_equals_quadratic_definition_with_ties(kind):
    rng = np.random.default_rng(11)
    for trial in range(150):
        n = int(rng.integers(1, 400))
        if trial % 3 == 0:
            x = rng.integers(0, 5, n).astype(float) * 2.0  # heavy ties
        elif trial % 3 == 1:
            x = np.round(rng.normal(5, 1.5, n).clip(LO, HI), 1)
        else:
            x = rng.uniform(LO, HI, n)
        stat, _ = _stat_and_reference(kind, n, rng)
        beta = float(np.exp(rng.uniform(math.log(1e-4), math.log(3.0))))
        reference = pair_max_quadratic(stat._problem(stat.prepare(x)), beta)
        got = stat.smooth_sensitivity(x, beta)
        assert reference <= got <= reference * (1 + 1e-11) + 1e-300, (kind, n, beta)


def test_smooth_sensitivity_is_max_over_k_of_decayed_local_sensitivity():
    # The k-form max_k e^{−βk} A^(k) (k from 0) on larger data, crossing the windowed search's cutoffs.
    rng = np.random.default_rng(5)
    for n, beta in [(3001, 0.002), (2000, 0.05), (999, 1.0)]:
        x = np.round(rng.gamma(2.0, 1.5, n).clip(LO, HI), 2)
        stat = Median(bounds=(LO, HI))
        d = stat.prepare(x)
        kform = max(math.exp(-beta * k) * stat._local_sensitivity(d, k) for k in range(n + 2))
        assert kform <= stat.smooth_sensitivity(d, beta) <= kform * (1 + 1e-11)


def test_all_equal_data_gives_tiny_positive_smooth_sensitivity():
    x = np.full(1001, 4.0)
    s = Median(bounds=(LO, HI)).smooth_sensitivity(x, 0.5)
    assert 0 < s <= 6.0 * math.exp(-0.5 * 500) * (1 + 1e-11) + np.finfo(float).tiny


# -- smoothness and upper bound on random neighbours ------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_smoothness_and_upper_bound_on_random_neighbours(kind):
    rng = np.random.default_rng(99 + len(kind))
    for _ in range(300):
        n = int(rng.integers(1, 30))
        x = rng.integers(0, 11, n).astype(float)
        stat, ref = _stat_and_reference(kind, n, rng)
        beta = float(rng.choice([0.01, 0.2, 1.0]))
        y = x.copy()
        y[rng.integers(n)] = rng.choice([LO, HI, float(rng.integers(0, 11))])
        sx, sy = stat.smooth_sensitivity(x, beta), stat.smooth_sensitivity(y, beta)
        assert sx <= math.exp(beta) * sy * (1 + 1e-11)
        assert sy <= math.exp(beta) * sx * (1 + 1e-11)
        grid = np.array([LO, HI])
        ls_x = float(local_sensitivity_rows(x[None, :], ref, grid)[0])
        assert ls_x <= stat.local_sensitivity(x, 0) * (1 + 1e-12) <= sx * (1 + 1e-11)


# -- mean under add/remove --------------------------------------------------------------------------------
def _mean_ls_exact(y, lo, hi):
    """Exact LS of the mean under add/remove (empty mean = midpoint), by enumeration of the neighbours."""
    y = np.asarray(y, float)
    m = y.mean() if y.size else (lo + hi) / 2
    cands = [abs(np.append(y, v).mean() - m) for v in (lo, hi)]
    for i in range(y.size):
        z = np.delete(y, i)
        cands.append(abs((z.mean() if z.size else (lo + hi) / 2) - m))
    return max(cands)


def test_mean_bound_covers_removals_that_pdp_ignores():
    y = np.array([100.0] + [0.0] * 9)
    exact = _mean_ls_exact(y, 0.0, 100.0)
    assert exact > 100.0 / 11  # the textbook's u/(n+1) (Near & Abuah) is not an upper bound
    assert exact <= Mean(bounds=(0, 100)).local_sensitivity(y, 0)


def test_mean_local_sensitivity_at_distance_k_bounds_brute_force():
    rng = np.random.default_rng(3)
    grid = [0.0, 3.0, 10.0]
    starts = [[]] + [list(rng.choice(grid, int(rng.integers(1, 5)))) for _ in range(30)]  # n = 0 too
    for x in starts:
        frontier, seen = [tuple(sorted(x))], {tuple(sorted(x))}
        for k in range(3):
            worst = max(_mean_ls_exact(list(y), 0.0, 10.0) for y in seen)
            assert worst <= Mean(bounds=(0, 10)).local_sensitivity(x, k) * (1 + 1e-12)
            nxt = []
            for y in frontier:
                moves = [(*y, v) for v in grid] + [y[:i] + y[i + 1 :] for i in range(len(y))]
                for z in moves:
                    z = tuple(sorted(z))
                    if z not in seen:
                        seen.add(z)
                        nxt.append(z)
            frontier = nxt


def test_mean_smooth_sensitivity_closed_form_and_smoothness():
    for n in [0, 1, 2, 5, 50, 1000]:
        for beta in [0.001, 0.1, 1.0]:
            direct = max(10.0 / max(n - k, 1) * math.exp(-beta * k) for k in range(n + 5))
            s = Mean(bounds=(0, 10)).smooth_sensitivity(np.full(n, 3.0), beta)
            assert direct <= s <= direct * (1 + 1e-11)
            if n >= 1:  # neighbour with one record removed (the empty data set for n = 1)
                s_minus = Mean(bounds=(0, 10)).smooth_sensitivity(np.full(n - 1, 3.0), beta)
                assert s_minus <= math.exp(beta) * s * (1 + 1e-11)
                assert s <= math.exp(beta) * s_minus * (1 + 1e-11)


# -- bad input --------------------------------------------------------------------------------------------
def test_bad_input_gets_clear_errors():
    with pytest.raises(ValueError, match="lower < upper"):
        Median(bounds=(5, 1))
    with pytest.raises(ValueError, match="at least 1"):  # n is public under substitution
        Median(bounds=(0, 1)).value([])
    with pytest.raises(ValueError, match="ndim"):
        Median(bounds=(0, 1)).value([[0.1, 0.2]])
    with pytest.raises(ValueError, match="too many for n=4"):
        TrimmedMean(2, bounds=(0, 1)).value([0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="trim"):
        TrimmedMean(0.5, bounds=(0, 1))
    with pytest.raises(ValueError, match="q must be in"):
        Quantile(1.5, bounds=(0, 1))
    with pytest.raises(ValueError, match="beta"):
        Median(bounds=(0, 1)).smooth_sensitivity([0.5], 0.0)
    with pytest.raises(ValueError, match="k must be"):
        Median(bounds=(0, 1)).local_sensitivity([0.5], -1)
    with pytest.raises(TypeError, match="clip"):
        Median(bounds=(0, 1), clip="yes")
