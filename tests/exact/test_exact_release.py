"""The exact release path: grid rounding, agreement with an independent mpmath computation from the same
bits, fast/slow path agreement, distribution per family, exact centers, and the tail regressions.

Expected values come from mpmath (50+ digit arithmetic on formulas written here from the notes' closed
forms), scipy.stats, or exact rational arithmetic — never from the code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath as mp
import numpy as np
import pytest
from exact_reference import ref_round, to_fraction
from scipy import stats

from smoothdp.exact import Enclosure, OutputGrid, _core, add_noise, engine, uniform_on_grid
from smoothdp.noise import (
    DiscreteLaplace,
    Gaussian,
    GeneralizedCauchy,
    Laplace,
    PlanarLaplace,
    PolyPlace,
    StudentT,
)
from smoothdp.rng import default_rng


@pytest.fixture(autouse=True)
def _mp_precision() -> Any:
    """400-bit mpmath in every test here (other modules change the global precision)."""
    with mp.workprec(400):
        yield


# The independent grid rounding in exact rationals (ref_round) lives in exact_reference.py.


# -- grid ----------------------------------------------------------------------------------------------------
def test_grid_rounding_properties() -> None:
    grid = OutputGrid(exponent=3, precision=10)
    rng = np.random.default_rng(0)
    y = np.sort(np.concatenate([rng.normal(0, 4, 5000), rng.normal(0, 1e4, 2000), [0.0, -0.0, 8.0, -8.0]]))
    r = grid.round(y)
    assert np.all(np.diff(r) >= 0)  # monotone
    np.testing.assert_array_equal(grid.round(r), r)  # idempotent
    small = r[np.abs(r) < 8]
    np.testing.assert_array_equal(np.ldexp(small, 7), np.rint(np.ldexp(small, 7)))  # spacing 2^(3-10)
    assert np.max(np.abs(r - y)[np.abs(y) < 8]) <= 2.0**-8
    big = np.abs(y) >= 16
    assert np.all(np.abs(r - y)[big] <= np.abs(y[big]) * 2.0**-10)
    for v in rng.normal(0, 50, 300):
        assert float(grid.round(v)) == ref_round(Fraction(float(v)), grid)


def test_exact_grid_rounding_matches_reference() -> None:
    grid = OutputGrid(exponent=-2, precision=12)
    rng = np.random.default_rng(1)
    for _ in range(500):
        num = int(rng.integers(-(10**12), 10**12))
        den = int(rng.integers(1, 10**9))
        y = Fraction(num, den)
        # man·2^exp form: exact dyadic just around y, then compare on dyadics only.
        d = Fraction(round(y * 2**80), 2**80)
        man, exp = d.numerator * (2**80 // d.denominator), -80
        assert _core.grid_round_exact(man, exp, grid.exponent, grid.precision) == ref_round(d, grid)
    # Overflow: beyond the float range the grid point is ±inf.
    assert _core.grid_round_exact(1, 1100, 0, 36) == math.inf
    assert _core.grid_round_exact(-1, 1100, 0, 36) == -math.inf


# -- independent reference quantiles (mpmath, closed forms from the notes) -----------------------------------
def ref_abs_laplace(q: Any) -> Any:
    return -mp.log(q)


def ref_abs_gauss(q: Any) -> Any:
    return mp.sqrt(2) * mp.erfinv(1 - q)


def ref_abs_polyplace(alpha: float) -> Any:
    def quantile(q: Any) -> Any:
        a = mp.mpf(alpha)  # constants at the caller's precision
        k = 2 * ((a - 1) / a) ** a + a - 1
        p_c = (a - 1) * (1 - (1 - 1 / a) ** a) / k
        v = 1 - q  # P(|X| ≤ u)
        if v <= p_c:
            return 1 - (1 - v * k / (a - 1)) ** (1 / a)
        return (1 - 1 / a**2) * ((a + 1) / (k * (1 - v))) ** (1 / a) - 1

    return quantile


FAMILIES_1D = [
    ("laplace", Laplace(1.3), ref_abs_laplace),
    ("gaussian", Gaussian(0.7), ref_abs_gauss),
    ("polyplace", PolyPlace(2.0, 3.0), ref_abs_polyplace(3.0)),
    ("polyplace-near1", PolyPlace(1.0, 1.0 + 1e-6), ref_abs_polyplace(1.0 + 1e-6)),
]


@pytest.mark.parametrize(("name", "dist", "ref"), FAMILIES_1D, ids=[f[0] for f in FAMILIES_1D])
def test_release_equals_independent_mpmath_rounding(name: str, dist: Any, ref: Any) -> None:
    """Each value is R(c + S·sign·Q(q)) for q the first word's 63 bits, recomputed in mpmath."""
    n = 400
    c, s = 0.3, 0.9
    grid = OutputGrid.for_magnitude(4.0)
    out = add_noise(c, dist, grid=grid, rng=default_rng(7), sensitivity=s, size=n)
    words = default_rng(7).bit_generator.random_raw(n)
    checked = 0
    for i in range(n):
        w = int(words[i])
        neg, k = w >> 63, w & ((1 << 63) - 1)
        ends = []
        for kk in (k, k + 1):
            q = mp.mpf(kk) / mp.mpf(2) ** 63
            z = mp.mpf(dist.scale) * ref(q)
            y = mp.mpf(c) + mp.mpf(s) * (-z if neg else z)
            ends.append(ref_round(to_fraction(y), grid))
        if ends[0] == ends[1]:
            assert out[i] == ends[0], (i, out[i], ends)
            checked += 1
    assert checked >= n - 4


def test_student_t_equals_independent_polar_formula() -> None:
    n, df = 300, 3.0
    grid = OutputGrid.for_magnitude(8.0)
    out = add_noise(0.0, StudentT(df, 2.0), grid=grid, rng=default_rng(3), size=n)
    words = default_rng(3).bit_generator.random_raw(2 * n)
    checked = 0
    for i in range(n):
        w0, w1 = int(words[i]), int(words[n + i])
        neg, k = w0 >> 63, w0 & ((1 << 63) - 1)
        vals = []
        for kk, jj in ((k + 1, w1), (k, w1 + 1)):  # |T| decreasing in W, increasing in w
            big_w = mp.mpf(kk) / mp.mpf(2) ** 63
            small_w = mp.mpf(jj) / mp.mpf(2) ** 64
            t = 2 * mp.sqrt(df * (big_w ** (-2 / mp.mpf(df)) - 1)) * mp.sin(mp.pi * small_w / 2)
            vals.append(ref_round(to_fraction(-t if neg else t), grid))
        if vals[0] == vals[1]:
            assert out[i] == vals[0]
            checked += 1
    assert checked >= n - 3


# -- fast path vs slow path ----------------------------------------------------------------------------------
ALL = [
    Laplace(1.3),
    Gaussian(0.7),
    PolyPlace(2.0, 3.0),
    PolyPlace(1.0, 1.0 + 1e-9),
    StudentT(3, 2.0),
    StudentT(0.8, 1.0),
    GeneralizedCauchy(4, 1.0),
    GeneralizedCauchy(1.5, 2.0),
    PlanarLaplace(1.5),
]


@pytest.mark.parametrize("dist", ALL, ids=repr)
def test_slow_path_alone_gives_the_same_release(dist: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forcing every element through the arb path (fast path returns no enclosure) changes nothing."""
    grid = OutputGrid.for_magnitude(2.0)
    center = np.array([0.25, -1.0]) if dist.dimension == 2 else 0.25
    n = 60
    ref = add_noise(center, dist, grid=grid, rng=default_rng(11), sensitivity=1.5, size=n)
    law_type = type(dist._exact_law())

    def no_enclosure(self: Any, u_lo: Any, u_hi: Any) -> Any:
        nan = np.full(u_lo[0].shape, np.nan)
        return [(nan, nan)] * self.dimension

    monkeypatch.setattr(law_type, "fast", no_enclosure)
    slow = add_noise(center, dist, grid=grid, rng=default_rng(11), sensitivity=1.5, size=n)
    assert engine.LAST_STATS.slow == n
    np.testing.assert_array_equal(slow, ref)


@pytest.mark.parametrize("dist", ALL, ids=repr)
def test_long_double_pass_alone_gives_the_same_release(dist: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaving every element to the long-double pass (binary64 gives no enclosure) changes nothing."""
    from smoothdp.exact.arithmetic import LONG_DOUBLE

    if LONG_DOUBLE is None or not getattr(dist._exact_law(), "long_double", False):
        pytest.skip("no long-double pass for this law or platform")
    grid = OutputGrid.for_magnitude(2.0)
    center = np.array([0.25, -1.0]) if dist.dimension == 2 else 0.25
    n = 400
    ref = add_noise(center, dist, grid=grid, rng=default_rng(12), sensitivity=1.5, size=n)
    law_type = type(dist._exact_law())
    real_fast = law_type.fast

    def binary64_undecided(self: Any, u_lo: Any, u_hi: Any) -> Any:
        if u_lo[0].dtype == np.float64:
            nan = np.full(u_lo[0].shape, np.nan)
            return [(nan, nan)] * self.dimension
        return real_fast(self, u_lo, u_hi)

    monkeypatch.setattr(law_type, "fast", binary64_undecided)
    alone = add_noise(center, dist, grid=grid, rng=default_rng(12), sensitivity=1.5, size=n)
    assert engine.LAST_STATS.binary64_undecided == n
    assert engine.LAST_STATS.slow <= n // 20  # the long-double pass decided almost all
    np.testing.assert_array_equal(alone, ref)


# -- distributions on the grid -------------------------------------------------------------------------------
KS_CASES = [
    (Laplace(1.3), stats.laplace(scale=1.3)),
    (Gaussian(0.7), stats.norm(scale=0.7)),
    (StudentT(3, 2.0), stats.t(3, scale=2.0)),
    (StudentT(0.7, 1.0), stats.t(0.7)),
    (GeneralizedCauchy(2, 1.5), stats.cauchy(scale=1.5)),
    (GeneralizedCauchy(4, 1.0), None),
    (PolyPlace(2.0, 3.0), None),
    (PolyPlace(1.0, 1.0 + 1e-9), None),
]


@pytest.mark.parametrize(("dist", "ref"), KS_CASES, ids=[repr(c[0]) for c in KS_CASES])
def test_hardened_draws_follow_the_law(dist: Any, ref: Any) -> None:
    draws = dist.sample(20_000, rng=default_rng(2024))
    cdf = dist.cdf if ref is None else ref.cdf
    assert stats.kstest(draws, cdf).pvalue > 1e-4
    # Broken twin: the same draws read as a 10% wider law are rejected.
    twin = dist.with_scale(1.1 * dist.scale)
    assert stats.kstest(draws, twin.cdf).pvalue < 1e-4


def test_planar_laplace_radius_and_angle() -> None:
    draws = PlanarLaplace(1.5).sample(20_000, rng=default_rng(5))
    radius = np.hypot(draws[:, 0], draws[:, 1])
    angle = np.arctan2(draws[:, 1], draws[:, 0])
    assert stats.kstest(radius, stats.gamma(2, scale=1.5).cdf).pvalue > 1e-4
    assert stats.kstest(angle, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 1e-4
    assert stats.kstest(radius, stats.gamma(2, scale=1.65).cdf).pvalue < 1e-4


def test_discrete_laplace_is_exact_and_follows_its_pmf() -> None:
    dist = DiscreteLaplace(2.5)
    draws = dist.sample(100_000, rng=default_rng(9))
    assert draws.dtype == np.int64
    ks = np.arange(-12, 13)
    observed = np.array([np.count_nonzero(draws == k) for k in ks])
    r = math.exp(-1 / 2.5)
    expected = (1 - r) / (1 + r) * r ** np.abs(ks)
    expected = expected / expected.sum() * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    wrong = (1 - r**0.9) / (1 + r**0.9) * r ** (0.9 * np.abs(ks))
    assert stats.chisquare(observed, wrong / wrong.sum() * observed.sum()).pvalue < 1e-4


def test_uniform_on_grid_is_exact_and_uniform() -> None:
    grid = OutputGrid.for_bounds(0.0, 10.0)
    out = uniform_on_grid(np.full(20_000, 1.0), np.full(20_000, 3.5), grid=grid, rng=default_rng(4))
    np.testing.assert_array_equal(grid.round(out), out)
    assert stats.kstest(out, stats.uniform(1.0, 2.5).cdf).pvalue > 1e-4
    words = default_rng(4).bit_generator.random_raw(50)
    lo_, hi_ = Fraction(1.0), Fraction(3.5)
    for i in range(50):
        ends = [ref_round(lo_ + (hi_ - lo_) * Fraction(int(words[i]) + d, 2**64), grid) for d in (0, 1)]
        if ends[0] == ends[1]:
            assert out[i] == ends[0]
    assert uniform_on_grid(2.0, 2.0, grid=grid, rng=default_rng(1)) == 2.0


# -- centers -------------------------------------------------------------------------------------------------
def test_fraction_and_enclosure_centers_are_exact() -> None:
    grid = OutputGrid(exponent=1, precision=36)  # spacing 2^-35 below 2
    midpoint = Fraction(2 * 1000 + 1, 2**36)  # halfway between 1000 and 1001 steps: ties go to 1000
    center = midpoint + Fraction(1, 2**90)  # just above: rounds to 1001 steps; its float is the midpoint
    expect = ref_round(center, grid)
    assert expect == 1001 * 2.0**-35
    assert add_noise(center, Laplace(1.0), grid=grid, rng=default_rng(1), sensitivity=0.0) == expect
    assert float(grid.round(float(center))) == 1000 * 2.0**-35  # the float center would not: not vacuous
    third = Fraction(1, 3)
    # An enclosure refined on demand gives the same release as the exact Fraction, draw by draw.
    a = add_noise(third, Laplace(1.0), grid=grid, rng=default_rng(2), sensitivity=1e-10, size=200)
    enc = Enclosure(np.array(0.333), np.array(0.334), refine=lambda i, prec: third)
    b = add_noise(enc, Laplace(1.0), grid=grid, rng=default_rng(2), sensitivity=1e-10, size=200)
    np.testing.assert_array_equal(a, b)
    assert len(set(a.tolist())) > 1  # S·Z is above the grid spacing here


def test_tiny_sensitivity_releases_the_rounded_statistic() -> None:
    """S·Z far below the grid step: the release is R(c) for every draw (post-processing, no leak)."""
    grid = OutputGrid.for_bounds(0.0, 1.0)
    c1, c2 = 0.1, math.nextafter(0.1, 1.0)
    r1 = add_noise(c1, Laplace(1.0), grid=grid, rng=default_rng(3), sensitivity=1.4e-20, size=1000)
    r2 = add_noise(c2, Laplace(1.0), grid=grid, rng=default_rng(4), sensitivity=1.4e-20, size=1000)
    assert set(r1.tolist()) == set(r2.tolist()) == {float(grid.round(0.1))}


# -- tails ------------------------------------------------------------------------------------------------
class _Forced:
    """A generator stand-in that serves given 64-bit words, then zeros... then ones."""

    def __init__(self, words: list[int]) -> None:
        self.words = list(words)
        self.bit_generator = self

    def random_raw(self, n: int) -> np.ndarray:
        out = [self.words.pop(0) if self.words else (1 << 62) for _ in range(n)]
        return np.array(out, dtype=np.uint64)


def test_laplace_tail_is_not_cut_at_36() -> None:
    grid = OutputGrid.for_magnitude(1.0)
    # Sign 0, q ∈ [1, 2)·2⁻⁶³: |Z| = −ln q ≈ 43.3 (the float sampler stopped near 36.7).
    z = add_noise(0.0, Laplace(1.0), grid=grid, rng=_Forced([1]))  # type: ignore[arg-type]
    assert 43.0 < z < 43.7
    # q's first word is 0: more words are drawn; q = 2⁻⁶³·(2⁻² + …) gives |Z| ≈ 45.1.
    z = add_noise(0.0, Laplace(1.0), grid=grid, rng=_Forced([0, 1 << 62]))  # type: ignore[arg-type]
    assert abs(z - float(-mp.log(mp.mpf(2) ** -65))) < 1e-9
    # Negative sign bit, far out: q = 2⁻²⁵⁵·(1 + 2⁻² + …) after three more words.
    z = add_noise(0.0, Laplace(1.0), grid=grid, rng=_Forced([1 << 63, 0, 0, 1]))  # type: ignore[arg-type]
    assert abs(z - float(mp.log(mp.mpf(1.25) * mp.mpf(2) ** -255))) < 1e-6


def test_polyplace_tail_has_no_support_cap() -> None:
    grid = OutputGrid.for_magnitude(1.0)
    dist = PolyPlace(1.0, 3.0)
    z = add_noise(0.0, dist, grid=grid, rng=_Forced([0, 0, 0, 1 << 62]))  # type: ignore[arg-type]
    expect = ref_abs_polyplace(3.0)(mp.mpf(2) ** -(63 + 128 + 2))
    assert abs(z - float(expect)) <= 1e-9 * float(expect)
    assert z > 1e19  # far beyond numpy's exponential cap (E ≈ 37 ⇒ |Z| ≈ 2e5 here)


def test_overflow_is_released_as_infinity() -> None:
    grid = OutputGrid.for_magnitude(1.0)
    z = add_noise(0.0, StudentT(0.05), grid=grid, rng=_Forced([1, 1 << 63]))  # type: ignore[arg-type]
    assert z == math.inf
