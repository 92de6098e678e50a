"""Speed of the central smooth sensitivities (pytest-benchmark).

Target: the smooth sensitivity of the median for n = 10⁷ (validation, sort and the windowed divide and
conquer, from raw unsorted data) within 3× the time ``numpy.sort`` takes on the same data.

Run: ``.venv/bin/python -m pytest benchmarks/test_central_speed.py --benchmark-columns=min,mean,rounds -s``
"""

from __future__ import annotations

import timeit

import numpy as np
import pytest

from smoothdp.calibration import calibrate
from smoothdp.central import Median, Quantile, TrimmedMean
from smoothdp.central.smooth_sensitivity._pairs import PairProblem, smooth_sensitivity_pairs

N = 10_000_000
TARGET_RATIO = 3.0
BETA = calibrate("polyplace", epsilon=1.0).beta  # the default smoothness at ε = 1 (ε/9)


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    rng = np.random.default_rng(2024)
    return np.clip(rng.normal(40.0, 12.0, N), 0.0, 100.0)


def _best_seconds(fn, repeat: int = 5) -> float:
    fn()
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def test_numpy_sort_baseline(benchmark, data) -> None:
    out = benchmark.pedantic(np.sort, args=(data,), rounds=5, iterations=1)
    assert out.size == N


@pytest.mark.parametrize(
    "stat",
    [Median(bounds=(0.0, 100.0)), Quantile(0.9, bounds=(0.0, 100.0)), TrimmedMean(0.1, bounds=(0.0, 100.0))],
    ids=lambda s: s.name,
)
def test_smooth_sensitivity_speed(benchmark, data, stat) -> None:
    s = benchmark.pedantic(stat.smooth_sensitivity, args=(data, BETA), rounds=5, iterations=1)
    assert s > 0


@pytest.mark.parametrize("beta", [BETA, 1e-3])
def test_median_smooth_sensitivity_within_3x_numpy_sort(data, beta) -> None:
    """Median S_β from raw data ≤ 3 × np.sort on the same data (interleaved best-of-5 timings)."""
    stat = Median(bounds=(0.0, 100.0))
    sort_s = _best_seconds(lambda: np.sort(data))
    ours_s = _best_seconds(lambda: stat.smooth_sensitivity(data, beta))
    ratio = ours_s / sort_s
    print(f"\nn = {N:.0e}, β = {beta:.4g}: np.sort {sort_s:.3f} s, median S_β {ours_s:.3f} s ({ratio:.2f}x)")
    assert ratio <= TARGET_RATIO, (
        f"median smooth sensitivity is {ratio:.2f}x np.sort (target {TARGET_RATIO}x)"
    )


def test_sorted_part_is_small(data) -> None:
    """After sorting, the windowed divide and conquer alone (β = ε/9) costs a small fraction of the sort."""
    s = np.sort(data)
    problem = PairProblem(s, 0.0, 100.0, i_hi=(N + 1) // 2, gap=1, scale=1.0)
    sort_s = _best_seconds(lambda: np.sort(data), repeat=3)
    pairs_s = _best_seconds(lambda: smooth_sensitivity_pairs(problem, BETA), repeat=3)
    print(f"\nsorted-data median S_β: {pairs_s * 1e3:.2f} ms (np.sort {sort_s:.3f} s)")
    assert pairs_s < 0.2 * sort_s
