"""Statistical (ε, 0) audits on neighbouring inputs of the mechanisms without bounds and of piecewise
Laplace, each with a broken twin that must fail (smoothdp.audit.audit_mechanism; slow: one Python-level
release per sample)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from smoothdp.audit import audit_mechanism
from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace
from smoothdp.central.unbounded.ladder import UnboundedQuantile
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile

N = 20_000
pytestmark = pytest.mark.slow


def _audit(sample_x, sample_xp, epsilon):
    return audit_mechanism(sample_x, sample_xp, epsilon, 0.0, n_samples=N, rng=0)


def _walks(mech, x):
    """The walk's whole output (direction, step) as one integer per draw."""
    prepared = mech._prepare(x)

    def sample(k, g):
        out = np.empty(k, dtype=np.int64)
        for i in range(k):
            direction, step = mech.walk(prepared, g)
            out[i] = step if direction == "up" else -1 - step
        return out

    return sample


def _values(mech, x):
    prepared = mech._prepare(x)
    return lambda k, g: np.array([mech.sample(prepared, g) for _ in range(k)])


# A substitution that moves the median across a ladder step (ladder 0, 1/4, 1/2, 1, 2, ...).
X, XP = np.array([0.3, 0.3, 0.3, 5.0, 5.0]), np.array([0.3, 0.3, 5.0, 5.0, 5.0])


def test_unbounded_quantile_passes_and_its_twin_fails():
    mech = UnboundedQuantile(0.5, epsilon=1.0, ratio=2.0, floor=0.25)
    assert _audit(_walks(mech, X), _walks(mech, XP), 1.0).passed
    twin = copy.copy(mech)
    twin.epsilon_queries *= 4.0
    twin.epsilon_threshold *= 4.0
    assert not _audit(_walks(twin, X), _walks(twin, XP), 1.0).passed


def test_scale_free_quantile_passes_and_its_twin_fails():
    """A substitution that moves the median by one record: the interval (5, 6) changes its utility by 1.
    The outputs are clipped to [−10³, 10³] (post-processing) so that the bins are not set by the tails."""
    mech = ScaleFreeQuantile(0.5, epsilon=2.0, numerics="float")
    x, xp = np.arange(1.0, 10.0), np.array([1.0, 1, 2, 3, 4, 5, 6, 7, 8])

    def clipped(m, data):
        values = _values(m, data)
        return lambda k, g: np.clip(values(k, g), -1e3, 1e3)

    assert _audit(clipped(mech, x), clipped(mech, xp), 2.0).passed
    twin = copy.copy(mech)
    twin.epsilon = 6.0
    assert not _audit(clipped(twin, x), clipped(twin, xp), 2.0).passed


def test_piecewise_laplace_passes_and_its_twin_fails():
    mech = PiecewiseLaplace(0.5, epsilon=1.0, bounds=(0.0, 1.0), rho=0.0, numerics="float")
    x, xp = np.array([0.1, 0.2, 0.2, 0.9, 0.9]), np.array([0.1, 0.2, 0.9, 0.9, 0.9])
    assert _audit(_values(mech, x), _values(mech, xp), 1.0).passed
    twin = copy.copy(mech)
    twin.epsilon = 4.0
    assert not _audit(_values(twin, x), _values(twin, xp), 1.0).passed
