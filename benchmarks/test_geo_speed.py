"""Speed of the geo-privacy mechanisms (pytest-benchmark), one core, seeded ChaCha20 generator.

Targets (docs/geo.md §Speed):

* ``privatize`` of the one-way threshold: ≥ 10⁷ users per second (10⁷ users per call);
* ``privatize`` of the 2-D Gaussian KDE: ≥ 2·10⁶ users per second (2·10⁶ users per call);
* the KDE smooth sensitivity for a 50 × 50 grid of centres × 10⁵ users (2.5·10⁸ pairs, chunked, reduced to
  the per-centre variance): < 10 s.

The noise draw dominates: ChaCha20 (20 rounds) costs ~20 ns per uniform double here. PolyPlace takes one
exponential, one random sign bit and its inverse CDF on the core or the tail branch only (~50 ns per
draw); T(3) takes two uniforms and one ``tan`` (``StudentT._sample_std``, exact polar form, ~55 ns against
~95 ns for numpy's ``standard_t``); the soft threshold's value and smooth sensitivity take ~12 ns per
user. The threshold target is asserted for PolyPlace and T(3); the generalized Cauchy (rejection
sampler) is reported only.

Run: ``.venv/bin/python -m pytest benchmarks/test_geo_speed.py --benchmark-columns=min,mean,rounds -s``
"""

from __future__ import annotations

import numpy as np
import pytest

from smoothdp.geo import GaussianKDE, SmoothSensitivityMechanism, SoftThreshold
from smoothdp.rng import default_rng

N_THRESHOLD = 10_000_000
N_KDE = 2_000_000


@pytest.fixture(scope="module")
def incomes() -> np.ndarray:
    return np.random.default_rng(686987).lognormal(11.49399503122476, 0.8290709468895202, N_THRESHOLD)


@pytest.fixture(scope="module")
def locations() -> np.ndarray:
    return np.random.default_rng(686987).normal(0.0, 8000.0, (N_KDE, 2))


@pytest.mark.parametrize("noise", ["polyplace", "student_t", "cauchy"])
def test_threshold_privatize(benchmark, incomes, noise) -> None:
    mech = SmoothSensitivityMechanism(SoftThreshold(10_000.0, 1_600.0), epsilon=1 / 800, noise=noise)
    gen = default_rng(1)
    out = benchmark.pedantic(mech.privatize, args=(incomes,), kwargs={"rng": gen}, rounds=3, iterations=1)
    rate = N_THRESHOLD / benchmark.stats.stats.min
    benchmark.extra_info["users_per_second"] = rate
    print(f"\nthreshold privatize ({noise}): {rate / 1e6:.1f} M users/s")
    assert out.shape == incomes.shape
    if noise in ("polyplace", "student_t"):
        assert rate >= 1e7


@pytest.mark.parametrize("noise", ["student_t", "polyplace"])
def test_kde_privatize(benchmark, locations, noise) -> None:
    mech = SmoothSensitivityMechanism(GaussianKDE([0.0, 0.0], 1452.0), epsilon=1 / 1000, noise=noise)
    mech.privatize(locations[:10], rng=0)  # build the Λ and envelope tables once
    gen = default_rng(2)
    out = benchmark.pedantic(mech.privatize, args=(locations,), kwargs={"rng": gen}, rounds=3, iterations=1)
    rate = N_KDE / benchmark.stats.stats.min
    benchmark.extra_info["users_per_second"] = rate
    print(f"\nKDE 2-D privatize ({noise}): {rate / 1e6:.1f} M users/s")
    assert out.shape == (N_KDE,)
    assert rate >= 2e6


def test_kde_grid_smooth_sensitivity(benchmark, locations) -> None:
    axis = np.linspace(-30_000.0, 30_000.0, 50)
    centres = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1)
    # T(3), the paper's noise (the default before the mechanism contract made it PolyPlace).
    mech = SmoothSensitivityMechanism(GaussianKDE(centres, 1452.0), epsilon=1 / 1000, noise="student_t")
    users = locations[:100_000]
    mech.variance(users[:10], per_user=False)  # tables
    result = benchmark.pedantic(
        mech.variance, args=(users,), kwargs={"per_user": False}, rounds=2, iterations=1
    )
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["pairs_per_second"] = 2500 * 100_000 / seconds
    print(f"\nKDE S* 50x50 centres x 1e5 users: {seconds:.2f} s")
    assert result.total.shape == (50, 50)
    assert seconds < 10.0
