"""Issue 11 regressions for central DP: exact statistics, the exact release path, no data-dependent errors.

Finding 1: float rounding of a trimmed mean separated two neighbours by far more than a tiny smooth
sensitivity. Finding 5: exceptions that depended on one record (NaN block outputs, ±inf with clipping,
empty data under add/remove, the out-of-bounds count in a message).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest

from smoothdp.central import (
    GaussianMean,
    GlobalSensitivityMean,
    GlobalSensitivityMedian,
    Mean,
    Median,
    PrivateRatio,
    ProposeTestRelease,
    SampleAndAggregate,
    SmoothSensitivityMechanism,
    TrimmedMean,
    bounded_local_sensitivity,
)
from smoothdp.exact import FLOAT_SAMPLER_LABEL, HARDENED_SAMPLER_LABEL, OutputGrid
from smoothdp.rng import default_rng
from smoothdp.sums import exact_sum


# -- exact sums -------------------------------------------------------------------------------------------
def test_exact_sum_equals_the_rational_sum_of_the_floats():
    rng = np.random.default_rng(11)
    for _ in range(30):
        n = int(rng.integers(0, 200))
        x = rng.normal(size=n) * 10.0 ** rng.integers(-320, 300, n)  # subnormals to near the max
        x[rng.random(n) < 0.1] = 0.0
        reference = sum((Fraction(float(v)) for v in x), Fraction(0))
        assert exact_sum(x) == reference
    extremes = [np.finfo(float).max] * 3 + [5e-324, -5e-324, 5e-324, -0.0, -np.finfo(float).max]
    assert exact_sum(extremes) == sum(map(Fraction, extremes))
    big = np.full(50_000, 0.1)  # several chunks
    assert exact_sum(big) == 50_000 * Fraction(0.1)


# -- finding 1: the trimmed mean of 0.1 vs 0.1 + ulp ------------------------------------------------------
def _finding_1_pair() -> tuple[np.ndarray, np.ndarray]:
    up = np.nextafter(0.1, 1.0)
    x = np.array([0.1] * 1404 + [up] * 596)  # kept (m = 500): 904 × 0.1 and 96 × (0.1 + ulp)
    x_prime = x.copy()
    x_prime[0] = up  # one record substituted: kept 903 × 0.1 and 97 × (0.1 + ulp)
    return x, x_prime


def test_finding_1_trimmed_mean_neighbours_release_the_same_grid_value():
    x, x_prime = _finding_1_pair()
    stat = TrimmedMean(500, bounds=(0.0, 1.0))
    mech = SmoothSensitivityMechanism(stat, epsilon=1.0)
    ulp = np.nextafter(0.1, 1.0) - 0.1
    # The statistic used is exact: the kept records' means differ by exactly ulp/1000 ...
    assert stat.exact_value(x_prime) - stat.exact_value(x) == Fraction(ulp) / 1000
    # ... while the float means of the old code differ by a whole ulp, far above S·|Z|.
    old = [float(np.mean(np.sort(v)[500:1500])) for v in (x, x_prime)]
    assert old[0] != old[1] and abs(old[1] - old[0]) >= ulp
    s = max(mech.smooth_sensitivity(x), mech.smooth_sensitivity(x_prime))
    assert s < 1e-17  # S·Z is below half an ulp of 0.1: the old release was the float mean itself
    assert old[0] + s * 3.0 == old[0] and old[1] + s * 3.0 == old[1]  # never overlapped: loss unbounded
    # Hardened: both neighbours release the same public grid point (S·Z ≪ the grid spacing 2^-35).
    grid = OutputGrid.for_bounds(0.0, 1.0)
    expected = float(grid.round(0.1))
    gen = default_rng(5)
    for data in (x, x_prime):
        values = {mech.release(data, rng=gen).value for _ in range(30)}
        assert values == {expected}


# -- finding 5: every formerly data-dependent exception now releases --------------------------------------
def _is_grid_float(value: object, grid: OutputGrid) -> bool:
    return type(value) is float and math.isfinite(value) and float(grid.round(value)) == value


def test_sample_and_aggregate_non_finite_block_outputs_take_the_public_default():
    def nan_on_big_blocks(block: np.ndarray) -> float:
        return float("nan") if block.size > 3 else float(np.mean(block))

    kw = {"n_blocks": 4, "bounds": (0.0, 1.0), "epsilon": 1.0}
    for func in (nan_on_big_blocks, lambda b: math.inf, lambda b: -math.inf):
        mech = SampleAndAggregate(func, **kw)
        assert _is_grid_float(mech.release(np.full(20, 0.3), rng=1).value, mech.grid)
        z = mech.block_outputs(np.full(400, 0.3), rng=2)
        assert np.all(z == 0.5)  # every block has > 3 records (or f is infinite): the midpoint
    # NaN and ±inf records, and empty data under add/remove: no error.
    mech = SampleAndAggregate("mean", **kw)
    for data in ([0.2, np.nan, np.inf, -np.inf, 0.4], [], np.full(9, np.nan)):
        assert _is_grid_float(mech.release(np.array(data), rng=3).value, mech.grid)
    median = SampleAndAggregate(np.mean, aggregator="median", **kw)
    assert _is_grid_float(median.release(np.array([np.nan, 1.0, 2.0]), rng=4).value, median.grid)


@pytest.mark.parametrize(
    "build",
    [
        lambda: SmoothSensitivityMechanism(Median(bounds=(0.0, 10.0)), epsilon=1.0),
        lambda: SmoothSensitivityMechanism(TrimmedMean(1, bounds=(0.0, 10.0)), epsilon=1.0),
        lambda: SmoothSensitivityMechanism(Mean(bounds=(0.0, 10.0)), epsilon=1.0),
        lambda: GlobalSensitivityMedian(bounds=(0.0, 10.0), epsilon=1.0),
        lambda: GlobalSensitivityMean(bounds=(0.0, 10.0), epsilon=1.0),
        lambda: GaussianMean(bounds=(0.0, 10.0), rho=0.5),
        lambda: ProposeTestRelease(Median(bounds=(0.0, 10.0)), proposed_bound=1.0, epsilon=4.0, delta=1e-3),
    ],
)
def test_infinite_and_nan_records_are_clipped_or_imputed_not_refused(build):
    mech = build()
    for data in ([1.0, np.inf, -np.inf, 4.0, 5.0], [np.nan, 2.0, 3.0, np.nan, 9.0], [np.inf] * 5):
        release = mech.release(np.array(data), rng=6)
        assert release.refused or type(release.value) is float
        assert release.sampler == HARDENED_SAMPLER_LABEL


def test_nan_is_imputed_with_the_midpoint_and_inf_clipped():
    assert Median(bounds=(0.0, 10.0)).value([np.nan, np.nan, 1.0]) == 5.0
    assert Mean(bounds=(0.0, 10.0)).exact_value([np.nan, np.inf, -np.inf]) == Fraction(15, 3)
    # NaN is imputed before the strict check too: clip=False never refuses a NaN.
    assert Median(bounds=(0.0, 10.0), clip=False).value([np.nan, 2.0, 3.0]) == 3.0


def test_add_remove_mean_on_empty_data_releases_around_the_midpoint():
    stat = Mean(bounds=(2.0, 6.0))
    assert stat.exact_value([]) == 4 and 4.0 <= stat.smooth_sensitivity([], 0.3) <= 4.0 * (1 + 1e-11)
    mech = SmoothSensitivityMechanism(stat, epsilon=1.0)
    gen = default_rng(8)
    values = np.array([mech.release(np.array([]), rng=gen).value for _ in range(400)])
    assert np.all(np.isfinite(values)) and abs(np.median(values) - 4.0) < 1.5
    gs = GlobalSensitivityMean(bounds=(2.0, 6.0), epsilon=1.0)
    assert type(gs.release([], rng=1).value) is float


def test_clip_false_message_has_no_count_and_says_trusted_data():
    messages = set()
    for data in ([0.5, 20.0], [20.0, 30.0, -4.0, 0.5]):
        with pytest.raises(ValueError, match="trusted data") as err:
            Median(bounds=(0.0, 10.0), clip=False).value(data)
        messages.add(str(err.value))
        assert not re.search(r"\b[1-3] value", str(err.value))
    assert len(messages) == 1  # the same message whatever the number of records outside


def test_output_type_does_not_depend_on_the_data():
    mech = SmoothSensitivityMechanism(TrimmedMean(0.1, bounds=(0.0, 1.0)), epsilon=1.0)
    types = {type(mech.release(np.array(d), rng=2).value) for d in ([0.5] * 20, [np.nan] * 20, [9.0] * 20)}
    assert types == {float}
    ratio = PrivateRatio(epsilon=1.0, method="bounded_local_sensitivity", delta=1e-6)
    assert {type(ratio.release((a, b), rng=3).value) for a, b in [(0, 0), (3, 4), (500, 1000)]} == {float}
    assert (
        type(
            bounded_local_sensitivity(
                math.nan, lambda g: 1.0, epsilon_1=0.5, epsilon_2=0.5, delta=1e-6, rng=1
            ).value
        )
        is float
    )


# -- the exact path and the float opt-in -------------------------------------------------------------------
def test_releases_are_grid_points_and_numerics_float_is_labelled():
    x = np.random.default_rng(3).uniform(0, 10, 101)
    for numerics, label in (("exact", HARDENED_SAMPLER_LABEL), ("float", FLOAT_SAMPLER_LABEL)):
        mechs = [
            SmoothSensitivityMechanism(Median(bounds=(0.0, 10.0)), epsilon=1.0, numerics=numerics),
            GlobalSensitivityMedian(bounds=(0.0, 10.0), epsilon=1.0, numerics=numerics),
            GaussianMean(bounds=(0.0, 10.0), rho=1.0, numerics=numerics),
            SampleAndAggregate("mean", n_blocks=5, bounds=(0.0, 10.0), epsilon=1.0, numerics=numerics),
            ProposeTestRelease(
                Median(bounds=(0.0, 10.0)), proposed_bound=2.0, epsilon=4.0, delta=1e-3, numerics=numerics
            ),
        ]
        for mech in mechs:
            release = mech.release(x, rng=1)
            assert release.sampler == label
            if numerics == "exact" and not release.refused:
                assert _is_grid_float(release.value, OutputGrid.for_bounds(0.0, 10.0))
    with pytest.raises(ValueError, match="numerics"):
        GlobalSensitivityMean(bounds=(0.0, 1.0), epsilon=1.0, numerics="fast")


def test_ptr_noisy_distance_is_capped_and_on_its_public_grid():
    mech = ProposeTestRelease(Mean(bounds=(0.0, 1.0)), proposed_bound=2.0, epsilon=2.0, delta=1e-4)
    release = mech.release(np.full(5, 0.5), rng=1)  # D = ∞ (LS ≤ 1 < 2 everywhere): capped at C
    noisy = release.details["noisy_distance"]
    assert math.isfinite(noisy) and float(mech.distance_grid.round(noisy)) == noisy
    assert abs(noisy - mech.distance_cap) < 60.0 / mech.epsilon_test and not release.refused
