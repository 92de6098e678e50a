"""The synthetic data models of smoothdp.data.synthetic (used by geo-threshold and geo-two-way)."""

import math

import numpy as np
import pytest
from scipy import stats

from smoothdp.data.synthetic import (
    CA_INCOME_LOG_MEAN,
    CA_INCOME_LOG_SD,
    california_household_incomes,
    california_income_quantile,
    income_debt,
)


def test_california_model_is_lognormal_below_p90_and_pareto_2_above():
    body = stats.lognorm(s=CA_INCOME_LOG_SD, scale=math.exp(CA_INCOME_LOG_MEAN))
    u = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(california_income_quantile(u), body.ppf(u), rtol=1e-12)
    # continuous at the splice, and a Pareto(2) tail: Q(1 − p/4) = 2·Q(1 − p) above the splice
    q90 = body.ppf(0.9)
    assert california_income_quantile(np.nextafter(0.9, 1)) == pytest.approx(q90, rel=1e-9)
    ratio = california_income_quantile(0.99) / california_income_quantile(0.96)
    assert ratio == pytest.approx(2.0, rel=1e-12)
    draws = california_household_incomes(200_000, 3)
    assert abs(np.median(draws) / math.exp(CA_INCOME_LOG_MEAN) - 1) < 0.02
    assert abs(np.mean(draws > q90) - 0.1) < 0.005


def test_income_debt_has_the_reference_constants():
    pairs = income_debt(400_000, 5)
    logs = np.log(pairs)
    assert abs(np.corrcoef(logs.T)[0, 1] - 0.4) < 0.01
    np.testing.assert_allclose(logs.std(axis=0), CA_INCOME_LOG_SD, rtol=0.01)
    assert abs(pairs[:, 1].mean() / pairs[:, 0].mean() - 1.791) < 0.03


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="n"):
        california_household_incomes(0)
    with pytest.raises(ValueError, match="correlation"):
        income_debt(10, correlation=1.5)
    with pytest.raises(ValueError, match="open interval"):
        california_income_quantile(1.0)
