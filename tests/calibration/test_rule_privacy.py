"""Every rule passes the worst-case privacy-loss check; a deliberately broken twin of it fails the same check.

The check (smoothdp.audit.worst_case_privacy_loss) maximises the log density ratio (pure rules) or the
hockey-stick divergence (the (ε, δ) Laplace rules) over all neighbour pairs allowed by a β-smooth bound:
S'/S ∈ [1/G_β(d), G_β(d)], |f − f'| ≤ min(S, S')·d. Each twin is a real mistake someone could make:

* ``half``/``third``/``quarter``: the noise scale divided by 2/3/4 (a wrong η);
* ``double_beta``: the sensitivity bound twice as rough as the rule assumes (β doubled).

A twin is listed for a case only where the mistake exceeds the rule's slack: the LY/BS/NRS constants are
conservative (the true worst loss of T(3) at the default split is 0.78ε), so small mistakes can be
private after all; the listed ones must fail.
"""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from smoothdp.audit import hockey_stick_divergence, worst_case_privacy_loss
from smoothdp.calibration import calibrate
from smoothdp.noise import Laplace


def _scaled(factor):
    return lambda cal: dataclasses.replace(cal, noise=cal.noise.with_scale(cal.noise.scale * factor))


TWINS = {
    "half": _scaled(0.5),
    "third": _scaled(1 / 3),
    "quarter": _scaled(0.25),
    "double_beta": lambda cal: dataclasses.replace(cal, beta=2 * cal.beta),
}

# (family, ε, δ, β, shape keywords, twins that must fail)
CASES = [
    ("polyplace", 1.0, 0.0, None, {}, ("half", "double_beta")),
    ("polyplace", 1.0, 0.0, 0.9, {}, ("half", "double_beta")),
    ("polyplace", 2.0, 0.0, 0.5, {}, ("half", "double_beta")),
    ("polyplace", 0.3, 0.0, 0.1, {}, ("half", "double_beta")),
    ("polyplace", 0.5, 0.0, 0.01, {}, ("half", "double_beta")),
    ("student_t", 1.0, 0.0, None, {}, ("half",)),
    ("student_t", 0.5, 0.0, None, {}, ("half",)),
    ("student_t", 1.0, 0.0, 0.3, {}, ("double_beta",)),
    ("student_t", 2.0, 0.0, None, {"df": 0.5}, ("third",)),
    ("student_t", 1.0, 0.0, 0.05, {"df": 5}, ("half",)),
    ("student_t", 1.0, 0.0, None, {"df": 10}, ("half",)),
    ("student_t", 1.0, 0.0, None, {"constants": "bun_steinke"}, ("half",)),
    ("student_t", 1.0, 0.0, 0.2, {"constants": "bun_steinke"}, ("double_beta",)),
    ("cauchy", 1.0, 0.0, None, {}, ("half",)),
    ("cauchy", 2.0, 0.0, None, {}, ("half",)),
    ("cauchy", 1.0, 0.0, 0.1, {"gamma": 1.5}, ("half",)),
    ("cauchy", 1.0, 0.0, 0.05, {"gamma": 6}, ("half", "double_beta")),
    ("cauchy", 1.0, 0.0, None, {"constants": "nrs"}, ("quarter",)),
    ("cauchy", 1.0, 0.0, None, {"dimension": 2}, ("half",)),
    ("cauchy", 1.0, 0.0, 0.1, {"dimension": 2}, ("half", "double_beta")),
    ("cauchy", 0.5, 0.0, None, {"dimension": 3, "gamma": 3}, ("half", "double_beta")),
    ("laplace", 1.0, 1e-5, None, {}, ("half", "double_beta")),
    ("laplace", 0.1, 1e-6, None, {}, ("half",)),
    ("laplace", 8.0, 1e-5, 0.5, {}, ("third", "double_beta")),
    ("laplace", 20.0, 1e-6, None, {}, ("half", "double_beta")),
]


def _id(case):
    family, eps, delta, beta, kw, _ = case
    extra = ",".join(f"{k}={v}" for k, v in kw.items())
    return f"{family}-eps{eps:g}-d{delta:g}-b{beta}" + (f"-{extra}" if extra else "")


# Geo-privacy is ε per unit of distance: check a short and a long distance (both are valid tests).
GEO_DISTANCES = (0.25, 2.0)


@pytest.mark.parametrize("model", ["dp", "geo"])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_rule_passes_and_its_broken_twins_fail(case, model):
    family, eps, delta, beta, kw, twins = case
    cal = calibrate(family, epsilon=eps, delta=delta, beta=beta, model=model, **kw)
    distance = None if model == "dp" else GEO_DISTANCES
    report = worst_case_privacy_loss(cal, distance=distance)
    assert report.passed, str(report)
    if cal.is_pure:
        assert report.max_loss <= report.epsilon_bound * (1 + 1e-9) + 1e-9
        assert report.relative_loss > 0.4  # the check sees a real loss, not a degenerate zero
    else:
        assert 0.0 < report.hockey_stick <= delta
    for name in twins:
        broken = worst_case_privacy_loss(TWINS[name](cal), distance=distance)
        assert not broken.passed, f"{name} twin passed: {broken}"


def test_polyplace_loss_reaches_epsilon_in_the_tail():
    # The supremum is exactly ε: as y → ∞ with S'/S = e^{−β} the ratio tends to e^{αβ} = e^ε. (Notes
    # §7.2 report 0.95ε at β = 0.9ε from an output grid that stops too early.)
    report = worst_case_privacy_loss(calibrate("polyplace", epsilon=1.0, beta=0.9))
    assert report.relative_loss == pytest.approx(1.0, abs=1e-6)
    assert report.worst.scale_ratio == pytest.approx(math.exp(-0.9), rel=1e-9)
    assert abs(report.worst.output) > 1e6


@pytest.mark.parametrize("distance", [0.01, 1.0, 10.0])
def test_polyplace_geo_holds_at_every_distance(distance):
    # docs/calibration.md §3: the two-point constraints at distance d are HT's at (βd, εd), so the
    # endpoint test is exact at every d (no false alarms at large d).
    for beta in (0.05, 0.5, 0.95):
        report = worst_case_privacy_loss(
            calibrate("polyplace", epsilon=1.0, beta=beta, model="geo"), distance=distance
        )
        assert report.passed, str(report)


def test_uncapped_nrs_laplace_fails_at_large_epsilon():
    # NRS07's β = ε/(2 ln(2/δ)) with Lap(2/ε) is not (ε, δ)-DP at ε = 20, δ = 1e-5; this library's rule
    # (capped by docs Lemma 5) is.
    eps, delta = 20.0, 1e-5
    cal = calibrate("laplace", epsilon=eps, delta=delta)
    nrs = dataclasses.replace(cal, beta=eps / (2 * math.log(2 / delta)), noise=Laplace(2 / eps))
    report = worst_case_privacy_loss(nrs)
    assert not report.passed
    # Independent check of the divergence at the worst pair, by adaptive quadrature of the densities.
    r, shift = report.worst.scale_ratio, report.worst.shift
    b = 2 / eps

    def excess(y):
        p = math.exp(-abs(y) / b) / (2 * b)
        q = math.exp(-abs(y - shift) / (r * b)) / (2 * r * b)
        return max(0.0, p - math.exp(eps) * q)

    edges = [-np.inf, -50, -5, 0, shift, 5, 50, np.inf]
    quad = sum(integrate.quad(excess, a, c, limit=500, epsabs=1e-14)[0] for a, c in itertools.pairwise(edges))
    assert quad == pytest.approx(report.hockey_stick, rel=1e-5)
    assert quad > 4 * delta
    assert worst_case_privacy_loss(cal).passed


def test_hockey_stick_of_the_calibrated_laplace_rule_at_the_worst_pair():
    # The divergence found by the search, recomputed with the vectorized function directly.
    cal = calibrate("laplace", epsilon=1.0, delta=1e-5)
    report = worst_case_privacy_loss(cal)
    w = report.worst
    direct = hockey_stick_divergence(cal.noise, w.scale_ratio, w.shift, cal.epsilon)
    assert float(direct) == pytest.approx(report.hockey_stick, rel=1e-9)
    assert w.scale_ratio == pytest.approx(math.exp(-cal.beta), rel=1e-6)  # x' has the smaller scale
