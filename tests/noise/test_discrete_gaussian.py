"""The exact discrete Gaussian sampler: its law (chi-square, with a twin that must fail), its certified
enclosures (against exact rationals), its exact fallback path, and the Rényi divergence bound behind the
zCDP guarantee (docs/theory/counting-queries.md#discrete-gaussian-noise), computed from the pmf."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import logsumexp

import smoothdp.noise.discrete_gaussian as dg
from smoothdp.noise.discrete_gaussian import (
    acceptance_exponent_bounds,
    check_sigma2,
    discrete_gaussian,
    discrete_gaussian_logpmf,
    discrete_gaussian_variance,
)
from smoothdp.rng import default_rng

N = 200_000


def _pmf(sigma2: float, span: int) -> tuple[np.ndarray, np.ndarray]:
    """N_ℤ(0, σ²) on [−span, span] from the definition (normalized over a range wide enough)."""
    ks = np.arange(-span, span + 1)
    w = np.exp(-(ks.astype(float) ** 2) / (2 * sigma2))
    return ks, w / w.sum()


def _chi2_pvalue(draws: np.ndarray, sigma2: float) -> float:
    span = int(12 * math.sqrt(sigma2)) + 12
    ks, p = _pmf(sigma2, span)
    expected = p * draws.size
    observed = np.bincount(np.clip(draws, -span, span) + span, minlength=ks.size)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1] * obs[:-1].sum() / exp[:-1].sum()
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(1), Fraction(7, 3), Fraction(100)])
def test_law(sigma2):
    draws = discrete_gaussian(sigma2, N, default_rng(11))
    assert draws.dtype == np.int64
    assert _chi2_pvalue(draws, float(sigma2)) > 1e-4
    assert _chi2_pvalue(draws, float(sigma2) * 1.1) < 1e-4


def test_tiny_and_huge_variances():
    assert not discrete_gaussian(Fraction(1, 1000), 10_000, default_rng(12)).any()  # P(K ≠ 0) ≈ 2e^{−500}
    big = discrete_gaussian(Fraction(10**12), 20_000, default_rng(13)).astype(float)
    assert abs(big.std() / 1e6 - 1) < 0.03


def test_the_exact_fallback_gives_the_same_law(monkeypatch):
    """With enclosures widened to 2⁻¹² relative, many comparisons are decided by the rational fallback (more
    bits of U): the law must not change."""
    monkeypatch.setattr(dg, "_WIDEN", 2.0**-12)
    draws = discrete_gaussian(Fraction(3, 2), N, default_rng(14))
    assert _chi2_pvalue(draws, 1.5) > 1e-4
    assert _chi2_pvalue(draws, 1.65) < 1e-4


@settings(max_examples=300, deadline=None)
@given(
    y=st.integers(-(10**9), 10**9),
    num=st.integers(1, 10**12),
    den_bits=st.integers(0, 80),
)
def test_enclosures_contain_the_exact_exponent(y, num, den_bits):
    sigma2 = Fraction(num, 1 << den_bits)
    if not dg.MIN_SIGMA2 <= sigma2 <= dg.MAX_SIGMA2:
        return
    t = math.isqrt(math.floor(sigma2)) + 1
    lo, hi = acceptance_exponent_bounds(np.array([y], dtype=np.int64), sigma2, t)
    exact = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
    assert Fraction(float(lo[0])) <= exact <= Fraction(float(hi[0]))
    scale = (abs(y) + float(sigma2) / t) ** 2 / float(sigma2)  # the size of the terms before cancelling
    assert float(hi[0]) - float(lo[0]) <= 1e-12 * scale + 1e-300


def test_pmf_and_variance():
    for s2 in (0.3, 2.0, 50.0):
        span = int(40 * math.sqrt(s2)) + 40
        ks = np.arange(-span, span + 1)
        assert math.isclose(np.exp(discrete_gaussian_logpmf(ks, s2)).sum(), 1.0, rel_tol=1e-12)
        _, p = _pmf(s2, span)
        assert math.isclose(discrete_gaussian_variance(s2), float((ks**2 * p).sum()), rel_tol=1e-12)
        assert discrete_gaussian_variance(s2) <= s2 * (1 + 1e-14)
    assert discrete_gaussian_variance(0.3) < 0.3 * 0.99  # visibly below σ² for a narrow law


def renyi(sigma2: float, shift: int, alpha: float) -> float:
    """D_α(N_ℤ(0, σ²) ‖ N_ℤ(shift, σ²)) from the pmf on a wide integer range (log-sum-exp)."""
    span = int(60 * math.sqrt(sigma2)) + 60 + abs(shift)
    ks = np.arange(-span, span + 1).astype(float)
    lp = -(ks**2) / (2 * sigma2)
    lq = -((ks - shift) ** 2) / (2 * sigma2)
    lp, lq = lp - logsumexp(lp), lq - logsumexp(lq)
    return float(logsumexp(alpha * lp + (1 - alpha) * lq)) / (alpha - 1)


@pytest.mark.parametrize("sigma2", [0.2, 1.0, 3.7, 40.0])
def test_renyi_divergence_is_within_the_zcdp_bound(sigma2):
    """Lemma 2: D_α ≤ α·d²/(2σ²) for integer shifts d, nearly equal for a wide law (the bound is tight)."""
    for d in (1, 2, 5):
        for alpha in (1.01, 1.5, 2.0, 4.0, 16.0, 64.0):
            assert renyi(sigma2, d, alpha) <= alpha * d * d / (2 * sigma2) * (1 + 1e-12) + 1e-15
    if sigma2 >= 3:
        assert renyi(sigma2, 1, 2.0) >= 2.0 / (2 * sigma2) * (1 - 1e-9)
    # A law narrower than claimed breaks the bound (the broken twin of the lemma's use)
    assert renyi(sigma2 / 2, 1, 2.0) > 2.0 / (2 * sigma2) * 1.5


def test_bad_sigma2():
    for bad in (0, -1, Fraction(1, 2**31), 2.0**91):
        with pytest.raises(ValueError, match="sigma2"):
            check_sigma2(bad)
    with pytest.raises(TypeError, match="sigma2"):
        check_sigma2("wide")
