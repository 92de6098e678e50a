"""The certified bracket for m = 3 (smoothdp.smoothed_dp.bracket) against exact rational enumeration.

References: tests/smoothed_dp/smoothed_brute.py (Fractions, every output, neighbour and histogram enumerated)
and, at n = 1000, the window sum of the pair path (a different algorithm: every histogram, exact profile).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import smoothed_brute as brute

from smoothdp.smoothed_dp.bracket import grid_ceil, grid_floor, trinomial_expected_delta_bracket
from smoothdp.smoothed_dp.pairs import log_pair_divergence, trinomial_log_expected_delta


def _ln(x: Fraction) -> float:
    return -math.inf if x == 0 else math.log(x.numerator) - math.log(x.denominator)


def _exact_expected(n, t, eps, groups):
    """Σ_h P(h)δ(h) for h = Σ_v Multinomial(count_v, π_v), by enumeration in rationals."""
    law = {(0, 0, 0): Fraction(1)}
    for count, pi in groups:
        pf = tuple(Fraction(float(p)) for p in pi)
        new = {}
        for h0, p0 in law.items():
            for h1 in brute.compositions(count, 3):
                key = tuple(a + b for a, b in zip(h0, h1, strict=True))
                new[key] = new.get(key, 0) + p0 * brute.multinomial(h1, pf)
        law = new
    return sum((p * brute.shm_profile(h, t, eps) for h, p in law.items() if p), Fraction(0))


def test_grid_points():
    v = np.arange(0, 5000)
    for bits in (0, 3, 7):
        lo, hi = grid_floor(v, bits), grid_ceil(v, bits)
        assert np.all(lo <= v) and np.all(hi >= v)
        assert np.all(grid_floor(lo, bits) == lo) and np.all(grid_floor(hi, bits) == hi)
        assert np.all(v[v < 2 ** (bits + 1)] == lo[v < 2 ** (bits + 1)])  # small counts are exact
        # consecutive values share their floor in runs no longer than 2^-bits of the value
        assert np.all((v - lo) <= np.maximum(v, 1) / 2**bits)


@pytest.mark.parametrize("eps", [0.4, 1.5])
@pytest.mark.parametrize(
    "groups",
    [
        [(9, (0.5, 0.3, 0.2))],
        [(8, (0.7, 0.2, 0.1))],
        [(5, (0.6, 0.3, 0.1)), (4, (0.2, 0.2, 0.6))],  # a mixture (convolved law)
        [(9, (0.6, 0.4, 0.0))],  # a vertex on the boundary: one empty category
    ],
)
def test_bracket_contains_enumeration(eps, groups):
    n = sum(c for c, _ in groups)
    t = n - 2
    exact = _ln(_exact_expected(n, t, eps, groups))
    b = trinomial_expected_delta_bracket(
        n, n - t, eps, [c for c, _ in groups], [p for _, p in groups], rtol=1e-6
    )
    assert b.log_upper >= exact - 1e-13  # never below the exact value
    assert b.log_lower <= exact + 1e-13
    assert b.log_upper - exact < 1e-6


def test_monotone_in_both_counts():
    """The lemma behind the grid: g(x, y) = G(x + y, x) does not increase in x or y (checked on the exact pair
    path, an independent computation)."""
    n, removed = 60, 6
    for eps in (0.3, 2.0):
        x, y = np.meshgrid(np.arange(1, 40), np.arange(0, 20), indexing="ij")
        ok = x + y <= n
        g = np.full(x.shape, np.nan)
        g[ok] = log_pair_divergence(n, removed, eps, (x + y)[ok], x[ok], replace=False)
        dx = np.diff(g, axis=0)
        dy = np.diff(g, axis=1)
        assert np.nanmax(dx) <= 1e-12 and np.nanmax(dy) <= 1e-12


@pytest.mark.parametrize("eps", [1.0, 7.0])
def test_agrees_with_pair_path_at_n_1000(eps):
    n = 1000
    removed = 4
    pi = [0.7, 0.2, 0.1]
    ref = trinomial_log_expected_delta(n, removed, eps, pi, replace=False)
    b = trinomial_expected_delta_bracket(n, removed, eps, [n], [pi], rtol=1e-4)
    assert b.log_lower - 1e-9 <= ref <= b.log_upper + 1e-9
    assert b.log_upper - b.log_lower <= 1.1e-4


def test_public_call_takes_the_bracket_at_large_n():
    """smoothed_delta for m = 3 beyond the enumeration reaches the bracket and says it is an upper bound."""
    from smoothdp.smoothed_dp import SamplingHistogram, smoothed_delta

    n, pi = 400, [0.7, 0.2, 0.1]
    mech = SamplingHistogram(size=390)
    r = smoothed_delta(mech, 1.0, n, [pi])
    ref = trinomial_log_expected_delta(n, 10, 1.0, pi, replace=False) / math.log(10)
    assert r.upper_bound and r.exact_max and "upper bound" in r.method
    assert r.log10_lower - 1e-12 <= ref <= r.log10_delta + 1e-12
    assert r.log10_delta - ref <= math.log10(1 / (1 - 1e-2))
