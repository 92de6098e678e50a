"""One missing-value policy for every kind of input (issue 23): NaN, the masked entries of a numpy masked
array, pandas and polars nulls are the same missing records, imputed with the public midpoint.

The reference is the float array with NaN at the missing positions, whose treatment is the documented
policy (smoothdp.validation); every other container must give the same release for the same seed. The
hidden values under the mask (1e9, far outside the bounds) would move every statistic if they were used.
"""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp
from smoothdp.geo import NoiseAPriori, SmoothSensitivityMechanism, SoftThreshold
from smoothdp.rng import default_rng
from smoothdp.validation import as_float_array, prepare_records

VALUES = np.array([1.0, 2.0, 1e9, 3.0, 1e9, 5.0, 4.0, 6.0, 1e9, 2.0])  # integers: the int container too
MISSING = VALUES == 1e9
WITH_NAN = np.where(MISSING, np.nan, VALUES)
BOUNDS = (0.0, 100.0)


def _containers():
    """The same ten records, the three marked ones missing, in every supported container."""
    out = {"masked": np.ma.masked_array(VALUES, mask=MISSING)}
    out["masked int"] = np.ma.masked_array(VALUES.astype(np.int64), mask=MISSING)
    out["masked object"] = np.ma.masked_array(VALUES.astype(object), mask=MISSING)
    out["object array with np.ma.masked"] = np.array(
        [np.ma.masked if m else v for v, m in zip(VALUES, MISSING, strict=True)], dtype=object
    )
    pd = pytest.importorskip("pandas")
    out["pandas Float64"] = pd.Series(pd.array(WITH_NAN.tolist(), dtype="Float64")).mask(MISSING)
    out["pandas object None"] = pd.Series([None if m else v for v, m in zip(VALUES, MISSING, strict=True)])
    pl = pytest.importorskip("polars")
    out["polars null"] = pl.Series([None if m else v for v, m in zip(VALUES, MISSING, strict=True)])
    return out


CONTAINERS = [
    "masked",
    "masked int",
    "masked object",
    "object array with np.ma.masked",
    "pandas Float64",
    "pandas object None",
    "polars null",
]


@pytest.mark.parametrize("kind", CONTAINERS)
def test_every_container_gives_the_nan_array(kind):
    np.testing.assert_array_equal(as_float_array(_containers()[kind]), WITH_NAN)
    np.testing.assert_array_equal(
        prepare_records(_containers()[kind], *BOUNDS), np.where(MISSING, 50.0, VALUES)
    )


@pytest.mark.parametrize("kind", CONTAINERS)
@pytest.mark.parametrize(
    "release",
    [
        lambda x, rng: smoothdp.mean(x, epsilon=1.0, bounds=BOUNDS, rng=rng).value,
        lambda x, rng: smoothdp.median(x, epsilon=1.0, bounds=BOUNDS, rng=rng).value,
        lambda x, rng: smoothdp.trimmed_mean(x, 2, epsilon=1.0, bounds=BOUNDS, rng=rng).value,
        lambda x, rng: tuple(smoothdp.quantiles(x, [0.25, 0.75], epsilon=1.0, bounds=BOUNDS, rng=rng).value),
    ],
    ids=["mean", "median", "trimmed_mean", "quantiles"],
)
def test_central_releases_treat_every_container_as_the_nan_array(kind, release):
    assert release(_containers()[kind], default_rng(3)) == release(WITH_NAN, default_rng(3))


@pytest.mark.parametrize("kind", ["masked", "pandas Float64", "polars null"])
def test_geo_reports_treat_every_container_as_the_nan_array(kind):
    query = SoftThreshold(threshold=2.0, width=1.0)
    for mech in (SmoothSensitivityMechanism(query, epsilon=1.0), NoiseAPriori(query, epsilon=1.0)):
        got = mech.release(_containers()[kind], rng=default_rng(4)).value
        want = mech.release(WITH_NAN, rng=default_rng(4)).value
        np.testing.assert_array_equal(got, want)


def test_masked_points_in_the_plane_are_missing_coordinates():
    from smoothdp.geo import TwoWayThreshold

    points = np.array([[0.0, 1.0], [1e9, 1e9], [2.0, -1.0]])
    mask = np.array([[False, False], [True, True], [False, False]])
    query = TwoWayThreshold(np.array([0.5, 0.5]), 1.0)
    mech = SmoothSensitivityMechanism(query, epsilon=1.0)
    got = mech.release(np.ma.masked_array(points, mask=mask), rng=default_rng(5)).value
    want = mech.release(np.where(mask, np.nan, points), rng=default_rng(5)).value
    np.testing.assert_array_equal(got, want)


def test_dask_masked_arrays_are_missing_values_on_every_engine():
    da = pytest.importorskip("dask.array")
    lazy = da.ma.masked_array(da.from_array(VALUES, chunks=4), mask=da.from_array(MISSING, chunks=4))
    want = smoothdp.median(WITH_NAN, epsilon=1.0, bounds=BOUNDS, rng=default_rng(6)).value
    for engine in ("dask", "numpy"):
        got = smoothdp.median(lazy, epsilon=1.0, bounds=BOUNDS, rng=default_rng(6), engine=engine).value
        assert got == want
    want_mean = smoothdp.mean(WITH_NAN, epsilon=1.0, bounds=BOUNDS, rng=default_rng(6)).value
    assert (
        smoothdp.mean(lazy, epsilon=1.0, bounds=BOUNDS, rng=default_rng(6), engine="dask").value == want_mean
    )


def test_dask_masked_points_are_missing_coordinates_in_geo_reports():
    da = pytest.importorskip("dask.array")
    lazy = da.ma.masked_array(da.from_array(VALUES, chunks=4), mask=da.from_array(MISSING, chunks=4))
    mech = SmoothSensitivityMechanism(SoftThreshold(threshold=2.0, width=1.0), epsilon=1.0)
    got = mech.release(lazy, rng=default_rng(7), engine="dask").value.compute()
    want = mech.release(da.from_array(WITH_NAN, chunks=4), rng=default_rng(7), engine="dask").value.compute()
    np.testing.assert_array_equal(got, want)


def test_a_masked_array_of_strings_is_refused_by_its_dtype():
    with pytest.raises(TypeError, match=r"^x must be an array of real numbers"):
        as_float_array(np.ma.masked_array(["1", "2"], mask=[False, True]))
