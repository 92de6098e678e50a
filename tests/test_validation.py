import math

import numpy as np
import pytest

from smoothdp.validation import (
    as_float_array,
    check_beta,
    check_bounds,
    check_data,
    check_int,
    check_positive,
    clip_or_check,
    impute_missing,
    prepare_records,
    to_float_array,
)


def test_check_data_accepts_finite_arrays_and_returns_floats():
    out = check_data([1, 2, 3])
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf], [-math.inf, 0.0]])
def test_check_data_refuses_nan_and_inf(bad):
    with pytest.raises(ValueError, match="x must be finite"):
        check_data(bad)


def test_check_data_refuses_empty_and_wrong_shapes():
    with pytest.raises(ValueError, match="at least 1"):
        check_data([])
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 2\)"):
        check_data(np.zeros((4, 3)), last_dim=2)
    with pytest.raises(ValueError, match="ndim"):
        check_data(np.zeros((2, 2)), ndim=1)
    with pytest.raises(TypeError, match="real numbers"):
        check_data(["a", "b"])


def test_check_bounds():
    assert check_bounds((0, 1)) == (0.0, 1.0)
    with pytest.raises(ValueError, match="lower < upper"):
        check_bounds((1, 0))
    with pytest.raises(ValueError, match="finite"):
        check_bounds((0, math.inf))
    with pytest.raises(TypeError, match="pair"):
        check_bounds(3)


def test_clip_or_check_clips_only_when_asked_and_never_counts():
    x = np.array([-1.0, 0.5, 2.0, np.inf, -np.inf])
    np.testing.assert_array_equal(clip_or_check(x, 0, 1, clip=True), [0.0, 0.5, 1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="outside the declared bounds") as err:
        clip_or_check(x, 0, 1, clip=False)
    assert "trusted data" in str(err.value) and not any(c.isdigit() for c in str(err.value).split("]")[1])
    with pytest.raises(TypeError, match="clip"):
        clip_or_check(x, 0, 1, clip="yes")


def test_check_data_message_has_no_count():
    with pytest.raises(ValueError) as err:
        check_data([np.nan, np.inf, 1.0])
    assert not any(c.isdigit() for c in str(err.value))


def test_prepare_records_imputes_nan_first_then_clips():
    out = prepare_records([np.nan, 3.0, np.inf, -np.inf, 0.5], 0.0, 2.0)
    np.testing.assert_array_equal(out, [1.0, 2.0, 2.0, 0.0, 0.5])  # NaN -> midpoint 1, n kept
    # NaN is imputed before the strict check: clip=False refuses only values outside the bounds.
    np.testing.assert_array_equal(prepare_records([np.nan, 0.5], 0.0, 2.0, clip=False), [1.0, 0.5])
    with pytest.raises(ValueError, match="trusted data"):
        prepare_records([np.inf, 0.5], 0.0, 2.0, clip=False)
    assert prepare_records([], 0.0, 1.0, min_size=0).size == 0
    with pytest.raises(ValueError, match="at least 1"):
        prepare_records([], 0.0, 1.0)
    with pytest.raises(ValueError, match="ndim"):
        prepare_records([[0.5]], 0.0, 1.0)
    np.testing.assert_array_equal(impute_missing(np.array([np.nan, 4.0]), 7.0), [7.0, 4.0])


def test_scalar_checks_name_parameter_and_range():
    with pytest.raises(ValueError, match=r"beta must be in \(0, 0\.5\) for rule X; got 0\.7"):
        check_beta(0.7, 0.5, rule="rule X")
    with pytest.raises(ValueError, match=r"width must be in \(0, inf\)"):
        check_positive("width", 0.0)
    with pytest.raises(TypeError, match="width must be a real number"):
        check_positive("width", "1")
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, inf\]"):
        check_int("n", 0, minimum=1)
    with pytest.raises(TypeError, match="n must be an integer"):
        check_int("n", 1.5)


# ------------------------------------------------------------------ inputs: lists, Series, DataFrames


@pytest.mark.parametrize(
    "bad", [["1", "2"], [1.0, "2"], np.array(["1.5"]), np.array([1.0, "a"], dtype=object), [b"1"]]
)
def test_strings_are_refused_even_numeric_ones(bad):
    for convert in (to_float_array, check_data):
        with pytest.raises(TypeError, match=r"^data must .*real numbers"):
            convert(bad, "data")
    with pytest.raises(TypeError, match=r"^data must"):
        prepare_records(bad, 0.0, 1.0, name="data")


@pytest.mark.parametrize(
    "bad", [[1j, 2.0], np.array(["2020-01-01"], dtype="datetime64[D]"), [[1.0], [1.0, 2.0]]]
)
def test_other_non_numbers_are_refused(bad):
    with pytest.raises(TypeError, match=r"^values must .*real numbers"):
        as_float_array(bad, "values")


def test_none_becomes_nan_then_the_midpoint():
    np.testing.assert_array_equal(as_float_array([1.0, None, 3]), [1.0, np.nan, 3.0])
    np.testing.assert_array_equal(prepare_records([None, 3.0, 0.5], 0.0, 2.0), [1.0, 2.0, 0.5])


def test_numeric_arrays_keep_shape_and_values():
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    out = as_float_array(x)
    assert out.dtype == np.float64 and out.shape == (3, 2) and out.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert as_float_array([True, False]).tolist() == [1.0, 0.0]


def test_pandas_series_and_one_column_frames():
    pd = pytest.importorskip("pandas")
    np.testing.assert_array_equal(to_float_array(pd.Series([1, 2, 3]), ndim=1), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(to_float_array(pd.DataFrame({"age": [4.0, 5.0]}), ndim=1), [4.0, 5.0])
    # Pandas missing values (NA of the nullable dtypes, None in object columns) are NaN, then the midpoint.
    for series in (
        pd.Series([10, None, 200], dtype="Int64"),
        pd.Series([10.0, pd.NA, 200.0], dtype="Float64"),
        pd.Series([10.0, None, 200.0], dtype=object),
        pd.DataFrame({"age": pd.array([10, None, 200], dtype="Int64")}),
    ):
        np.testing.assert_array_equal(prepare_records(series, 0.0, 100.0), [10.0, 50.0, 100.0])
    with pytest.raises(TypeError, match=r"^ages must hold real numbers, not strings"):
        to_float_array(pd.Series(["1", "2"]), "ages")
    with pytest.raises(TypeError, match=r"^ages must hold real numbers, not strings"):
        to_float_array(pd.Series(["1", "2"], dtype="string"), "ages")
    with pytest.raises(TypeError, match=r"^ages must be an array of real numbers"):
        to_float_array(pd.Series(pd.to_datetime(["2020-01-01"])), "ages")
    with pytest.raises(
        ValueError, match=r"^ages must be a one-column DataFrame or a Series; got a DataFrame with 2"
    ):
        to_float_array(pd.DataFrame({"a": [1.0], "b": [2.0]}), "ages")


def test_polars_series_and_one_column_frames():
    pl = pytest.importorskip("polars")
    np.testing.assert_array_equal(to_float_array(pl.Series([1, 2, 3]), ndim=1), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(
        prepare_records(pl.Series([10, None, 200]), 0.0, 100.0), [10.0, 50.0, 100.0]
    )
    frame = pl.DataFrame({"age": [10.0, None, 200.0]})
    np.testing.assert_array_equal(prepare_records(frame, 0.0, 100.0), [10.0, 50.0, 100.0])
    with pytest.raises(TypeError, match=r"^ages must hold real numbers, not strings"):
        to_float_array(pl.Series(["1", "2"]), "ages")
    with pytest.raises(ValueError, match=r"^ages must be a one-column DataFrame"):
        to_float_array(pl.DataFrame({"a": [1.0], "b": [2.0]}), "ages")


def test_entry_points_take_a_one_column_frame_like_the_array():
    pd = pytest.importorskip("pandas")
    import smoothdp

    ages = np.arange(200.0)
    frame = pd.DataFrame({"age": ages})
    for f in (smoothdp.median, smoothdp.mean):
        a = f(ages, epsilon=1.0, bounds=(0.0, 250.0), rng=7, numerics="float")
        b = f(frame, epsilon=1.0, bounds=(0.0, 250.0), rng=7, numerics="float")
        assert a.value == b.value
    with pytest.raises(TypeError, match="must hold real numbers, not strings"):
        smoothdp.median(pd.Series(["1", "2"]), epsilon=1.0, bounds=(0.0, 2.0), rng=7)


def test_range_messages_show_ends_that_differ_as_different():
    """':g' printed both ends of (1e15, 1e15 + 1) as 1e+15; round ends keep their short form."""
    from smoothdp.validation import check_in_range

    with pytest.raises(ValueError, match=r"^q must be in \(1e\+15, 1000000000000001\.0\); got"):
        check_in_range("q", 0.0, 1e15, 1e15 + 1)
    with pytest.raises(ValueError, match=r"^q must be in \(0, 1\); got 2"):
        check_in_range("q", 2, 0.0, 1.0)


def test_data_policy_is_impute_then_clip_and_its_work_ignores_nan(monkeypatch):
    """apply_data_policy(clip=True) equals "NaN → midpoint, then clip, −0 → +0", and runs the same numpy
    steps whether the data hold no NaN or some (the old early return skipped the imputation pass when there
    was no NaN: one NaN record changed the work)."""
    import smoothdp.validation as v

    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 5.0, size=400)
    x[rng.integers(0, 400, 30)] = np.nan
    x[:4] = [np.inf, -np.inf, -0.0, 1e308]
    expected = np.clip(np.where(np.isnan(x), 0.5, x), -2.0, 3.0) + 0.0
    got = v.apply_data_policy(x, -2.0, 3.0, clip=True)
    assert np.array_equal(got, expected)
    assert np.all(np.signbit(got) == np.signbit(expected))

    calls: list[str] = []
    real_copyto, real_isnan = np.copyto, np.isnan
    monkeypatch.setattr(v.np, "copyto", lambda *a, **k: (calls.append("copyto"), real_copyto(*a, **k))[1])
    monkeypatch.setattr(v.np, "isnan", lambda *a, **k: (calls.append("isnan"), real_isnan(*a, **k))[1])
    clean = rng.normal(size=400)
    one_nan = clean.copy()
    one_nan[7] = np.nan
    v.apply_data_policy(clean, -2.0, 3.0, clip=True)
    steps_clean = list(calls)
    calls.clear()
    v.apply_data_policy(one_nan, -2.0, 3.0, clip=True)
    assert calls == steps_clean == ["isnan", "copyto"]
