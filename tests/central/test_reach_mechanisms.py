"""Inverse sensitivity and piecewise Laplace: their laws, ties released exactly, any statistic's reach."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import smoothdp
from smoothdp.central.frameworks.inverse_sensitivity import InverseSensitivity, quantile_reach
from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace
from smoothdp.rng import default_rng

X = np.array([0.1, 0.15, 0.4, 0.42, 0.7, 0.95, 0.99])


def _cdf(mech, x, y, continuous):
    """The exact CDF of the output at y, from the definition (piecewise constant or exponential density)."""
    a, b = mech.lower, mech.upper
    xs = np.sort(x)
    n = xs.size
    r = max(1, math.ceil(mech.q * n))
    coef = 0.5 * mech.epsilon_used(n)
    up = [xs[r - 1 + k] if r - 1 + k < n else b for k in range(max(r - 1, n - r) + 2)]
    down = [xs[r - 1 - k] if r - 1 - k >= 0 else a for k in range(max(r - 1, n - r) + 2)]

    def mass(lo, hi, k_at_lo, k_at_hi):  # ∫ of e^{−coef·ℓ} over [lo, hi], ℓ linear from k_at_lo to k_at_hi
        if hi <= lo:
            return 0.0
        if not continuous or k_at_lo == k_at_hi:
            return (hi - lo) * math.exp(-coef * max(k_at_lo, k_at_hi))
        slope = coef * (k_at_hi - k_at_lo) / (hi - lo)
        return math.exp(-coef * k_at_lo) * (-math.expm1(-slope * (hi - lo))) / slope

    pieces = [(down[0], up[0], 0.0, 0.0)]
    for k in range(1, len(up)):
        lo_k = (k - 1) if continuous else k
        pieces.append((up[k - 1], up[k], lo_k, k))
        pieces.append((down[k], down[k - 1], k, lo_k))
    pieces = [p for p in pieces if p[1] > p[0]]
    total = sum(mass(*p) for p in pieces)
    acc = 0.0
    for lo, hi, k0, k1 in pieces:
        if y >= hi:
            acc += mass(lo, hi, k0, k1)
        elif y > lo:
            k_y = k0 + (k1 - k0) * (y - lo) / (hi - lo) if continuous else k1
            acc += mass(lo, y, k0, k_y)
    return acc / total


@pytest.mark.parametrize(("cls", "continuous"), [(InverseSensitivity, False), (PiecewiseLaplace, True)])
def test_draws_follow_the_closed_form_law(cls, continuous):
    mech = cls(0.5, epsilon=4.0, bounds=(0.0, 1.0), rho=0.0)
    draws = np.array([mech.sample(X, default_rng(s)) for s in range(3000)])
    cdf = np.vectorize(lambda y: _cdf(mech, X, y, continuous))
    assert stats.kstest(draws, cdf).pvalue > 1e-3


def test_inverse_sensitivity_without_smoothing_is_the_exponential_mechanism_quantile():
    """Same density: ln p_IS − ln p_EM is constant over the pieces (both normalised: zero)."""
    from smoothdp.central import ExponentialQuantile

    em = ExponentialQuantile(0.5, epsilon=2.0, bounds=(0.0, 1.0), lattice=None)
    ism = InverseSensitivity(0.5, epsilon=2.0, bounds=(0.0, 1.0), rho=0.0)
    ys = np.array([0.05, 0.12, 0.3, 0.41, 0.5, 0.8, 0.97, 0.995])
    log_em = em.log_density(X, ys)
    cdf_is = np.array([_cdf(ism, X, y, False) for y in ys])
    eps_y = 1e-7
    dens_is = (np.array([_cdf(ism, X, y + eps_y, False) for y in ys]) - cdf_is) / eps_y
    np.testing.assert_allclose(np.log(dens_is), log_em, atol=1e-5)


@pytest.mark.parametrize("cls", [InverseSensitivity, PiecewiseLaplace])
def test_200_tied_copies_are_released_exactly(cls):
    hits = sum(
        cls(0.5, epsilon=1.0, bounds=(0.0, 125.0)).sample(np.full(200, 62.5), default_rng(s)) == 62.5
        for s in range(50)
    )
    assert hits >= 45


def test_piecewise_laplace_is_at_least_as_accurate_as_inverse_sensitivity_on_spread_data():
    x = np.sort(np.random.default_rng(2).normal(0.0, 1.0, 60))
    kw = {"epsilon": 1.0, "bounds": (-50.0, 50.0), "rho": 0.0}
    err = {}
    for cls in (InverseSensitivity, PiecewiseLaplace):
        m = cls(0.5, **kw)
        err[cls] = np.mean([abs(m.sample(x, default_rng(s)) - x[29]) for s in range(600)])
    assert err[PiecewiseLaplace] < err[InverseSensitivity]


def test_a_reach_callable_gives_the_same_release_as_q():
    x = np.random.default_rng(3).uniform(0, 10, 41)
    by_q = PiecewiseLaplace(0.25, epsilon=1.0, bounds=(0.0, 10.0))
    by_reach = PiecewiseLaplace(
        reach=lambda s: quantile_reach(s, 0.25, 0.0, 10.0), epsilon=1.0, bounds=(0.0, 10.0)
    )
    prepared = by_q._prepare(x)
    assert by_q.sample(prepared, default_rng(5)) == by_reach.sample(prepared, default_rng(5))


def test_a_malformed_reach_and_conflicting_arguments_are_refused():
    with pytest.raises(TypeError, match="exactly one of q"):
        InverseSensitivity(0.5, epsilon=1.0, bounds=(0, 1), reach=lambda s: (s, s))
    bad = InverseSensitivity(reach=lambda s: (np.array([0.1]), np.array([0.2])), epsilon=1.0, bounds=(0, 1))
    with pytest.raises(ValueError, match="L_0 = U_0"):
        bad.sample(np.array([0.5]), default_rng(0))


def test_the_api_dispatches_both_methods_with_declared_bounds():
    x = np.random.default_rng(4).normal(50.0, 5.0, 500)
    for method in ("inverse_sensitivity", "piecewise_laplace"):
        rel = smoothdp.median(x, epsilon=1.0, bounds=(0, 100), method=method, rng=6)
        assert rel.details["method"] == method and 40 < rel.value < 60
        assert rel.proof.startswith("docs/theory/instance-optimal.md#")
