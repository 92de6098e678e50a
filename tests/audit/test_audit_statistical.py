"""smoothdp.audit.audit_mechanism: the statistical (ε, δ) test on neighbouring inputs."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from smoothdp.audit import AuditReport, audit_mechanism
from smoothdp.calibration import calibrate


def laplace_mechanism(value, scale):
    return lambda n, rng: value + rng.laplace(0.0, scale, n)


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_correct_laplace_passes_and_undernoised_fails(epsilon):
    # f(x) = 0, f(x') = 1 (sensitivity 1): Lap(1/ε) is ε-DP; Lap(0.8/ε) has δ(ε) ≈ 0.05–0.11.
    good = audit_mechanism(
        laplace_mechanism(0, 1 / epsilon), laplace_mechanism(1, 1 / epsilon), epsilon, rng=1
    )
    assert good.passed, str(good)
    assert good.delta_lower == 0.0 and good.delta_estimate < 0.03
    bad = audit_mechanism(
        laplace_mechanism(0, 0.8 / epsilon), laplace_mechanism(1, 0.8 / epsilon), epsilon, rng=2
    )
    assert not bad.passed, str(bad)
    # The true divergence of the under-noised mechanism lies inside the reported bounds.
    b = 0.8 / epsilon
    y_star = (1 - epsilon * b) / 2
    true = stats.laplace.cdf(y_star, scale=b) - math.exp(epsilon) * stats.laplace.cdf(y_star - 1, scale=b)
    assert bad.delta_lower <= true <= bad.delta_upper


@pytest.mark.slow
def test_laplace_at_a_million_samples():
    eps = 1.0
    good = audit_mechanism(laplace_mechanism(0, 1.0), laplace_mechanism(1, 1.0), eps, n_samples=10**6, rng=3)
    assert good.passed
    bad = audit_mechanism(laplace_mechanism(0, 0.95), laplace_mechanism(1, 0.95), eps, n_samples=10**6, rng=4)
    assert not bad.passed


def test_false_alarms_are_rare():
    # α = 1e-3 per run: 20 runs of a correct mechanism at a loose confidence still all pass.
    for seed in range(20):
        report = audit_mechanism(
            laplace_mechanism(0, 1.0),
            laplace_mechanism(1, 1.0),
            1.0,
            n_samples=10_000,
            confidence=0.99,
            rng=seed,
        )
        assert report.passed, (seed, str(report))


def test_integer_outputs_get_exact_bins():
    def geometric(value, eps):
        p = 1 - math.exp(-eps)
        return lambda n, rng: value + rng.geometric(p, n) - rng.geometric(p, n)

    good = audit_mechanism(geometric(0, 1.0), geometric(1, 1.0), 1.0, rng=5)
    assert good.passed and good.n_bins < 60  # one bin per observed integer, plus the tails
    bad = audit_mechanism(geometric(0, 1.25), geometric(1, 1.25), 1.0, rng=6)
    assert not bad.passed


def test_approximate_claims_use_delta():
    # P_x = (0.5, 0.45, 0.05), P_x' = (0.5, 0.5, 0): δ(ε = 0.1) = 0.05 exactly.
    def categorical(probs):
        return lambda n, rng: rng.choice(3, size=n, p=probs)

    x, xp = categorical([0.5, 0.45, 0.05]), categorical([0.5, 0.5, 0.0])
    assert audit_mechanism(x, xp, 0.1, 0.05, rng=7).passed
    report = audit_mechanism(x, xp, 0.1, 0.01, rng=8)
    assert not report.passed and report.direction == "x>x'"
    assert report.delta_lower <= 0.05 <= report.delta_upper


@pytest.mark.parametrize("family", ["polyplace", "student_t", "cauchy"])
def test_calibrated_noise_at_adversarial_neighbours(family):
    # The pair S'/S = e^{−β}, f' − f = S' (the largest shift at the smaller scale) is where the
    # under-noised twin leaks most mass (δ(ε) ≈ 0.08–0.3 for these rules at ε = 1).
    cal = calibrate(family, epsilon=1.0)
    r = math.exp(-cal.beta)

    def pair(c):
        return (lambda n, rng: c.noise.sample(n, rng)), (lambda n, rng: r + r * c.noise.sample(n, rng))

    assert audit_mechanism(*pair(cal), 1.0, rng=9).passed
    twin = dataclasses.replace(cal, noise=cal.noise.with_scale(cal.noise.scale / 2))
    assert not audit_mechanism(*pair(twin), 1.0, rng=10).passed


def test_votes_and_report():
    report = audit_mechanism(
        laplace_mechanism(0, 0.7), laplace_mechanism(1, 0.7), 1.0, n_samples=20_000, repetitions=3, rng=11
    )
    assert isinstance(report, AuditReport)
    assert report.repetitions == 3 and report.failures == 3 and not report.passed
    assert str(report).startswith("FAIL") and "3/3" in str(report)


def test_bad_input():
    ok = laplace_mechanism(0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        audit_mechanism(ok, ok, 0.0)
    with pytest.raises(ValueError, match="delta"):
        audit_mechanism(ok, ok, 1.0, 1.0)
    with pytest.raises(ValueError, match="n_samples"):
        audit_mechanism(ok, ok, 1.0, n_samples=10)
    with pytest.raises(ValueError, match="confidence"):
        audit_mechanism(ok, ok, 1.0, confidence=1.0)
    with pytest.raises(ValueError, match="n_bins"):
        audit_mechanism(ok, ok, 1.0, n_bins=1)
    with pytest.raises(TypeError, match="callables"):
        audit_mechanism(ok, np.zeros(10), 1.0)
    with pytest.raises(ValueError, match="1-D array"):
        audit_mechanism(ok, lambda n, rng: np.zeros((n, 2)), 1.0, rng=0)
    with pytest.raises(ValueError, match="NaN"):
        audit_mechanism(ok, lambda n, rng: np.full(n, np.nan), 1.0, rng=0)
    with pytest.raises(TypeError, match="real or integer"):
        audit_mechanism(ok, lambda n, rng: np.array(["a"] * n), 1.0, rng=0)
