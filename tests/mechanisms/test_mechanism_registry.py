"""Generic tests over every registered mechanism (smoothdp.mechanism.REGISTRY).

Each mechanism has one Case in mechanism_cases.py (the template is in CONTRIBUTING.md). For each, the
same checks run: worst-case privacy loss over adversarial neighbours within the guarantee, the broken twin
outside it, named errors for bad parameters, a Release that carries the declared guarantee and hides its
data-dependent values, and an accountant charged before any noise is drawn.
"""

from __future__ import annotations

import math

import pytest
from mechanism_cases import CASES, Case, loss_bound

import smoothdp
from smoothdp.accounting import Accountant, BudgetError
from smoothdp.mechanism import REGISTRY
from smoothdp.privacy import Guarantee
from smoothdp.rng import default_rng

IDS = [case.mechanism.__name__ + (f"[{case.label}]" if case.label else "") for case in CASES]


def test_the_registry_holds_the_library_mechanisms():
    names = {cls.__name__ for cls in REGISTRY.values()}
    expected = {"ProposeTestRelease", "SampleAndAggregate", "GlobalLipschitz", "NoiseAPriori", "LocalDP"}
    assert expected <= names
    assert sum(cls.__name__ == "SmoothSensitivityMechanism" for cls in REGISTRY.values()) == 2  # central, geo


def test_every_registered_mechanism_has_a_test_case():
    covered = {case.mechanism for case in CASES}
    missing = sorted(name for name, cls in REGISTRY.items() if cls not in covered)
    assert not missing, f"registered mechanisms without a Case in mechanism_cases.py: {missing}"


def _worst_ratio(case: Case, mechanism) -> float:
    """max over the adversarial neighbours of loss / bound (≤ 1 when the guarantee holds)."""
    worst = 0.0
    for x, x_prime, d in case.neighbours():
        bound = loss_bound(mechanism.guarantee, d)
        worst = max(worst, case.privacy_loss(mechanism, x, x_prime, d) / bound)
    return worst


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_worst_case_privacy_loss_is_within_the_guarantee(case: Case):
    mechanism = case.build(epsilon=case.epsilon)
    assert _worst_ratio(case, mechanism) <= 1.0 + 1e-6


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_broken_twin_fails_the_same_check(case: Case):
    twin = case.broken(case.build(epsilon=case.epsilon))
    assert _worst_ratio(case, twin) > 1.0 + 1e-3


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_parameters_raise_errors_that_name_them(case: Case):
    assert case.bad_parameters, "every case lists bad parameters"
    for kwargs, error, name in case.bad_parameters:
        with pytest.raises(error, match=name):
            case.build(**{"epsilon": case.epsilon, **kwargs})


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_release_carries_the_declared_guarantee_and_hides_private_values(case: Case):
    mechanism = case.build(epsilon=case.epsilon)
    release = mechanism.release(case.data, rng=default_rng(1))
    assert isinstance(release, smoothdp.Release)
    assert release.guarantee == mechanism.guarantee
    assert release.neighbours == mechanism.neighbours == mechanism.guarantee.neighbours
    assert release.proof == mechanism.proof and release.source
    shown = repr(release) + str(release) + repr(release.to_dict())
    secret = release.not_private
    for value in (secret.smooth_sensitivity, secret.noise_scale, secret.noise_std):
        # Values short enough to appear by coincidence (2.0, 0.5) are not checked.
        if isinstance(value, float) and math.isfinite(value) and len(f"{value:.6g}") >= 5:
            assert repr(value) not in shown and f"{value:.6g}" not in shown


def _too_small_accountant(guarantee) -> Accountant:
    if guarantee.neighbours == "metric":
        return Accountant(epsilon=guarantee.epsilon / 2, neighbours="metric", metric=guarantee.metric)
    if isinstance(guarantee, Guarantee):
        return Accountant(epsilon=guarantee.epsilon / 2, delta=0.99, neighbours=guarantee.neighbours)
    return Accountant(epsilon=1e-6, delta=0.5, slack=0.5, neighbours=guarantee.neighbours)


def _enough_accountant(guarantee) -> Accountant:
    if guarantee.neighbours == "metric":
        return Accountant(epsilon=1e6, neighbours="metric", metric=guarantee.metric)
    if guarantee.neighbours == "local":
        return Accountant(epsilon=1e6, delta=0.99, neighbours="local")
    return Accountant(epsilon=1e6, delta=0.99, slack=0.5, neighbours=guarantee.neighbours)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_accountant_is_charged_before_any_noise_is_drawn(case: Case):
    mechanism = case.build(epsilon=case.epsilon)
    acc = _too_small_accountant(mechanism.guarantee)
    gen = default_rng(7)
    before = repr(gen.bit_generator.state)
    with pytest.raises(BudgetError):
        mechanism.release(case.data, accountant=acc, rng=gen)
    assert repr(gen.bit_generator.state) == before, "noise was drawn before the budget check"
    assert len(acc) == 0 and acc.spent.epsilon == 0.0
    enough = _enough_accountant(mechanism.guarantee)
    mechanism.release(case.data, accountant=enough, rng=gen)
    assert len(enough) == 1 and enough.charges[0].guarantee == mechanism.guarantee
