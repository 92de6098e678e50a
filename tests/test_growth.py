import numpy as np
import pytest

from smoothdp.sensitivity import growth, log_growth


def test_growth_functions_match_their_definitions():
    t = np.array([0.0, 0.5, 3.0])
    np.testing.assert_allclose(growth(t, 0.2), np.exp(0.2 * t))
    np.testing.assert_allclose(growth(t, 0.2, "linear"), 1 + 0.2 * t)
    np.testing.assert_allclose(log_growth(t, 0.2, "linear"), np.log(1 + 0.2 * t))


def test_log_growth_does_not_overflow():
    assert np.isfinite(log_growth(1e6, 1.0)) and log_growth(1e6, 1.0) == pytest.approx(1e6)


def test_linear_growth_is_below_exponential_growth():
    # 1 + βt ≤ e^{βt}: a 1+βt-smooth bound is also e^{βt}-smooth, never the other way round.
    t = np.linspace(0, 50, 101)
    assert np.all(growth(t, 0.3, "linear") <= growth(t, 0.3))


def test_bad_growth_arguments():
    with pytest.raises(ValueError, match="growth must be one of"):
        growth(1.0, 0.1, "quadratic")
    with pytest.raises(ValueError, match="beta"):
        growth(1.0, 0.0)
