import math

import numpy as np
import pytest

from smoothdp.validation import (
    check_beta,
    check_bounds,
    check_data,
    check_int,
    check_positive,
    clip_or_check,
    impute_missing,
    prepare_records,
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
