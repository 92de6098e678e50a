"""Statistical (ε, δ) tests on adversarial neighbours, with broken twins.

Every mechanism is sampled on two neighbouring inputs chosen where the test has power (the local
sensitivity jumps, PTR at the threshold of its distance test, block outputs that flip the aggregate, the
ratio's most exposed count) and audited with :func:`smoothdp.audit.audit_mechanism`. Each has a broken twin
that must FAIL the same audit. 10⁵ samples per side here; 10⁶ behind ``@pytest.mark.slow``.

Twin strengths: a twin must really violate the claim on the chosen pair. PolyPlace is tight (noise × 0.8
suffices); Student's T, the Cauchy family and NRS's Laplace rule have slack in their constants, so their
noise-scale twins use × 0.5 (× 0.4 for Laplace), which the numerical checks in test_mechanisms.py confirm
are violations.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from smoothdp.audit import audit_mechanism
from smoothdp.central import (
    Median,
    PrivateRatio,
    ProposeTestRelease,
    SampleAndAggregate,
    SmoothSensitivityMechanism,
    distance_to_instability,
)
from smoothdp.noise import Laplace

N = 100_000
SIZES = [N, pytest.param(1_000_000, marks=pytest.mark.slow)]
REFUSED = -60  # PTR's ⊥, as an integer output below every rounded value


def audit(mech_x, mech_xp, epsilon, delta=0.0, n=N, seed=0):
    return audit_mechanism(mech_x, mech_xp, epsilon, delta, n_samples=n, rng=seed)


def _twin(mech, scale_factor=1.0, beta_factor=1.0):
    cal = mech.calibration
    cal = dataclasses.replace(
        cal, noise=cal.noise.with_scale(scale_factor * cal.noise.scale), beta=beta_factor * cal.beta
    )
    return SmoothSensitivityMechanism.from_calibration(mech.statistic, cal)


# -- smooth-sensitivity median, each noise family -----------------------------------------------------------
# x and x' differ in one record and the median jumps by the full smooth sensitivity (S = 1 on both).
JUMP_X, JUMP_XP = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
FAMILIES = [("polyplace", 0.0, 0.8), ("student_t", 0.0, 0.5), ("cauchy", 0.0, 0.5), ("laplace", 1e-6, 0.4)]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("family", "delta", "twin_scale"), FAMILIES)
def test_median_mechanism_passes_and_its_twin_fails(family, delta, twin_scale, n):
    mech = SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=1.0, noise=family, delta=delta)
    ok = audit(
        lambda k, g: mech.sample(JUMP_X, k, rng=g), lambda k, g: mech.sample(JUMP_XP, k, rng=g), 1.0, delta, n
    )
    assert ok.passed, ok
    twin = _twin(mech, scale_factor=twin_scale)
    bad = audit(
        lambda k, g: twin.sample(JUMP_X, k, rng=g), lambda k, g: twin.sample(JUMP_XP, k, rng=g), 1.0, delta, n
    )
    assert not bad.passed, bad


# A pair where S changes by the full e^β factor: the β twins (β × 3 here, β × 2 with 10⁶ samples) fail.
DILATE_X, DILATE_XP = np.array([0.05, 0.3, 1.0, 1.0, 1.0]), np.array([0.05, 0.3, 0.5, 1.0, 1.0])


@pytest.mark.parametrize(
    ("beta_factor", "n"), [(3.0, N), pytest.param(2.0, 1_000_000, marks=pytest.mark.slow)]
)
def test_polyplace_beta_twin_fails_where_the_sensitivity_dilates(beta_factor, n):
    mech = SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=1.0)
    ok = audit(
        lambda k, g: mech.sample(DILATE_X, k, rng=g),
        lambda k, g: mech.sample(DILATE_XP, k, rng=g),
        1.0,
        0.0,
        n,
    )
    assert ok.passed, ok
    twin = _twin(mech, beta_factor=beta_factor)
    bad = audit(
        lambda k, g: twin.sample(DILATE_X, k, rng=g),
        lambda k, g: twin.sample(DILATE_XP, k, rng=g),
        1.0,
        0.0,
        n,
    )
    assert not bad.passed, bad


# -- propose-test-release ------------------------------------------------------------------------------------
class _NoiselessTest(ProposeTestRelease):
    """Broken twin: the distance is tested without noise."""

    def _noisy_distance(self, distance, size, rng):
        return np.full(size, distance) if size is not None else distance


class _PdpThreshold(ProposeTestRelease):
    """Broken twin: the textbook threshold ln(2/δ)/(2ε₁) (Near & Abuah), which gives δ' = ½√(δ/2) > δ."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.threshold = math.log(2.0 / self.delta) / (2.0 * self.epsilon_test)


def _ptr_sampler(mech, x):
    """PTR outputs post-processed onto the integers: round(10·y) clipped to [−50, 60], ⊥ ↦ −60.

    Post-processing cannot raise the privacy loss, and one bin per integer keeps the rare releases of an
    unstable data set apart from the point mass of refusals (equal-mass bins would merge them).
    """

    def sample(k, g):
        y = mech.sample(x, k, rng=g)
        return np.where(np.isnan(y), REFUSED, np.clip(np.round(10 * np.nan_to_num(y)), -50, 60)).astype(
            np.int64
        )

    return sample


@pytest.mark.parametrize("n", SIZES)
def test_ptr_at_the_threshold_and_its_noiseless_twin(n):
    # D(x) = 7 ≥ T = ln(1/(2δ))/ε₁ = 6.21 > D(x') = 6: a noiseless test releases on x, refuses on x'.
    eps, delta = 2.0, 1e-3
    stat = Median(bounds=(0, 1))
    x = np.array([0.0] * 3 + [0.5] * 7 + [1.0] * 3)
    xp = np.array([0.0] * 4 + [0.5] * 6 + [1.0] * 3)
    # (Gaps of 0.5 are not > b = 0.6; only a span from a 0 to a 1 is, which needs 7 resp. 6 steps.)
    assert distance_to_instability(stat, x, 0.6) == 7 and distance_to_instability(stat, xp, 0.6) == 6
    mech = ProposeTestRelease(stat, proposed_bound=0.6, epsilon=eps, delta=delta)
    assert 6 < mech.threshold < 7
    ok = audit(_ptr_sampler(mech, x), _ptr_sampler(mech, xp), eps, delta, n)
    assert ok.passed, ok
    twin = _NoiselessTest(stat, proposed_bound=0.6, epsilon=eps, delta=delta)
    bad = audit(_ptr_sampler(twin, x), _ptr_sampler(twin, xp), eps, delta, n)
    assert not bad.passed and bad.delta_lower > 0.5, bad


@pytest.mark.parametrize("n", SIZES)
def test_ptr_unstable_pair_releases_with_probability_delta_and_pdp_threshold_fails(n):
    # Both at distance 0 (LS = 1 > b); their medians differ by 1, so every release on x is exposed.
    eps, delta = 2.0, 1e-3
    stat = Median(bounds=(0, 1))
    x, xp = np.array([0.0, 0.0, 1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    assert distance_to_instability(stat, x, 0.1) == 0 == distance_to_instability(stat, xp, 0.1)
    mech = ProposeTestRelease(stat, proposed_bound=0.1, epsilon=eps, delta=delta)
    released = np.isfinite(mech.sample(x, n, rng=1)).mean()
    assert abs(released - delta) < 6 * math.sqrt(delta / n)  # ½e^{−ε₁T} = δ exactly
    ok = audit(_ptr_sampler(mech, x), _ptr_sampler(mech, xp), eps, delta, n)
    assert ok.passed, ok
    twin = _PdpThreshold(stat, proposed_bound=0.1, epsilon=eps, delta=delta)
    bad = audit(_ptr_sampler(twin, x), _ptr_sampler(twin, xp), eps, delta, n)
    assert not bad.passed, bad


# -- sample-and-aggregate ----------------------------------------------------------------------------------
def _saa_twin_mean(saa):
    """Broken twin: the aggregator's Laplace noise × 0.8."""
    saa._noise = Laplace(0.8 * saa._noise.scale)
    return saa


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    ("neighbours", "partition"),
    [("substitution", "balanced"), ("substitution", "independent"), ("add_remove", "independent")],
)
def test_sample_and_aggregate_mean_passes_and_its_twin_fails(neighbours, partition, n):
    # One record turns one block's clipped output from 0 to 1: the aggregate moves by (u − l)/k.
    # (Add/remove is claimed only for the independent partition: see test_sample_aggregate_neighbours.py.)
    x = np.zeros(20)
    xp = np.append(np.zeros(19), 100.0) if neighbours == "substitution" else np.append(np.zeros(20), 100.0)
    kw = {
        "n_blocks": 5,
        "bounds": (0.0, 1.0),
        "epsilon": 1.0,
        "partition": partition,
        "neighbours": neighbours,
    }
    saa = SampleAndAggregate("mean", **kw)
    assert saa.guarantee.neighbours == neighbours
    ok = audit(lambda k, g: saa.sample(x, k, rng=g), lambda k, g: saa.sample(xp, k, rng=g), 1.0, 0.0, n)
    assert ok.passed, ok
    twin = _saa_twin_mean(SampleAndAggregate("mean", **kw))
    bad = audit(lambda k, g: twin.sample(x, k, rng=g), lambda k, g: twin.sample(xp, k, rng=g), 1.0, 0.0, n)
    assert not bad.passed, bad


@pytest.mark.parametrize("n", SIZES)
def test_sample_and_aggregate_median_passes_and_its_twin_fails(n):
    # Blocks of one record (balanced partition, substitution pair): the block outputs are the records,
    # whose median jumps from 0 to 1.
    kw = {
        "n_blocks": 3,
        "bounds": (0.0, 1.0),
        "epsilon": 1.0,
        "aggregator": "median",
        "partition": "balanced",
    }
    saa = SampleAndAggregate("mean", **kw)
    ok = audit(
        lambda k, g: saa.sample(JUMP_X, k, rng=g), lambda k, g: saa.sample(JUMP_XP, k, rng=g), 1.0, 0.0, n
    )
    assert ok.passed, ok
    twin = SampleAndAggregate("mean", **kw)
    twin._median = _twin(twin._median, scale_factor=0.8)
    bad = audit(
        lambda k, g: twin.sample(JUMP_X, k, rng=g), lambda k, g: twin.sample(JUMP_XP, k, rng=g), 1.0, 0.0, n
    )
    assert not bad.passed, bad


# -- private ratios ----------------------------------------------------------------------------------------
class _ScaledRatio(PrivateRatio):
    """Broken twin: every Laplace noise of the ratio mechanism × factor."""

    factor = 0.8

    def _naive(self, a, b, eps, n, rng):
        return super()._naive(a, b, eps / self.factor, n, rng)

    def _ksw(self, a, b, n, rng):
        saved = self.epsilon
        self.epsilon = saved / self.factor
        try:
            return super()._ksw(a, b, n, rng)
        finally:
            self.epsilon = saved

    def _bounded(self, a, b, n, rng):
        saved = self.epsilon_2
        self.epsilon_2 = saved / self.factor
        try:
            return super()._bounded(a, b, n, rng)
        finally:
            self.epsilon_2 = saved


def _ratio_audit(cls, method, pair, epsilon_claim, delta, n, **kw):
    (a, b), (a2, b2) = pair
    mech = cls(epsilon=1.0, method=method, delta=delta, **kw)
    return audit(
        lambda k, g: mech.sample(a, b, k, rng=g),
        lambda k, g: mech.sample(a2, b2, k, rng=g),
        epsilon_claim,
        delta,
        n,
    )


# (method, neighbour pair, ε claimed on that pair, δ, options). The naive method's a-count alone differs on
# (0, b) ~ (1, b), so the output is ε/2-DP there; KSW's add/remove pair changes only ã; the bounded-LS
# pair removes a 0-user where LS = a/(b² − b) is reached.
RATIO_CASES = [
    ("naive", ((0, 10**6), (1, 10**6)), 0.5, 0.0, {}),
    ("ksw", ((0, 10**6), (1, 10**6 + 1)), 1.0, 0.0, {}),
    ("ksw", ((5 * 10**5, 10**6), (5 * 10**5 + 1, 10**6)), 1.0, 0.0, {"neighbours": "substitution"}),
    ("bounded_local_sensitivity", ((5 * 10**5, 10**6), (5 * 10**5, 10**6 - 1)), 1.0, 1e-6, {}),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("method", "pair", "eps_claim", "delta", "kw"), RATIO_CASES)
def test_ratio_mechanisms_pass_and_their_twins_fail(method, pair, eps_claim, delta, kw, n):
    ok = _ratio_audit(PrivateRatio, method, pair, eps_claim, delta, n, **kw)
    assert ok.passed, ok
    twin_cls = _ScaledRatio if not kw else type("_Half", (_ScaledRatio,), {"factor": 0.5})
    bad = _ratio_audit(twin_cls, method, pair, eps_claim, delta, n, **kw)
    assert not bad.passed, bad
