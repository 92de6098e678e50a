"""Synthetic data models that stand in for data the reproductions cannot ship.

**Everything drawn here is synthetic**; every experiment that uses it says so in its outputs.

California 2022 household incomes (the IPUMS extract of Liang & Yi, CCS 2024, not redistributable)
----------------------------------------------------------------------------------------------------
A log-normal body with a Pareto tail (:func:`california_household_incomes`):

* Body: log-normal with μ₀ = 11.49399503122476, σ₀ = 0.8290709468895202 (median ≈ $98,125). These are
  the constants of the paper's reference code (``hkustDB/SmoothGP``, ``test_functions.py``), which the
  authors fitted by least squares of the log-normal quantile function to the HHWT-weighted percentiles
  p = 0.1, 0.3, 0.6, 0.8, 0.9 of the 2022 IPUMS USA California household incomes (the experiments of
  Liang & Yi, CCS 2024; ``docs/references.md#ly24``).
* Tail: above the body's 90th percentile (the highest percentile the fit used) the quantile function
  continues as a Pareto law with index α = 2: Q(u) = Q₀(0.9)·((1 − 0.9)/(1 − u))^{1/α}. α = 2 is the
  order of the inverted Pareto-Lorenz coefficient b = α/(α − 1) ≈ 2 reported for top US incomes
  (Atkinson, Piketty & Saez, "Top incomes in the long run of history", J. Econ. Lit. 2011). It is a
  round literature value, **not** a fit to California data; the body and tail join continuously.

Correlated income and debt (Liang & Yi, CCS 2024, Fig. 4)
----------------------------------------------------------
:func:`income_debt` reproduces the reference code's generator exactly: (ln income, ln debt) bivariate
normal with equal σ = σ₀, correlation ρ = 0.4, income log-mean μ₀ (above) and debt log-mean
μ₁ = ln(s·e^{μ₀+σ₀²/2}) − σ₀²/2 with s = 1.791, the 2022 California household debt-to-income ratio
the authors cite (Federal Reserve), so mean debt = 1.791 × mean income.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_in_range, check_int, check_positive

__all__ = [
    "CA_INCOME_LOG_MEAN",
    "CA_INCOME_LOG_SD",
    "CA_INCOME_PROVENANCE",
    "DEBT_TO_INCOME",
    "INCOME_DEBT_CORRELATION",
    "INCOME_DEBT_PROVENANCE",
    "PARETO_INDEX",
    "PARETO_START",
    "california_household_incomes",
    "california_income_quantile",
    "income_debt",
]

#: Log-normal body of the 2022 California household incomes (Liang & Yi's reference code, hkustDB/SmoothGP).
CA_INCOME_LOG_MEAN = 11.49399503122476
CA_INCOME_LOG_SD = 0.8290709468895202
#: The quantile level above which the Pareto tail replaces the log-normal body.
PARETO_START = 0.9
#: Pareto index of the tail (a round literature value for top US incomes, see the module docstring).
PARETO_INDEX = 2.0
#: 2022 California household debt-to-income ratio used by the reference code.
DEBT_TO_INCOME = 1.791
#: Correlation of log income and log debt in the reference code.
INCOME_DEBT_CORRELATION = 0.4

CA_INCOME_PROVENANCE = (
    "SYNTHETIC California-2022 household incomes: log-normal body (μ₀ = 11.494, σ₀ = 0.829, the constants "
    "Liang & Yi (CCS 2024) fitted to IPUMS 2022 CA percentiles) with a Pareto tail (α = 2) above the 90th "
    "percentile; see smoothdp/data/synthetic.py. Not real data; compare shapes, not levels."
)
INCOME_DEBT_PROVENANCE = (
    "SYNTHETIC correlated log-normal (income, debt) in USD with the constants of Liang & Yi's (CCS 2024) "
    "reference code (hkustDB/SmoothGP): "
    "μ₀ = 11.494, σ₀ = σ₁ = 0.829, debt-to-income 1.791, correlation ρ = 0.4 of the logs."
)


def _normal_ppf(u: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.special import ndtri

    return ndtri(u)


def california_income_quantile(u: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """Quantile function of the synthetic California household-income model at levels ``u`` in (0, 1)."""
    u = np.asarray(u, dtype=np.float64)
    if np.any(~((u > 0) & (u < 1))):
        raise ValueError("u must lie in the open interval (0, 1)")
    body = np.exp(CA_INCOME_LOG_MEAN + CA_INCOME_LOG_SD * _normal_ppf(u))
    start = math.exp(CA_INCOME_LOG_MEAN + CA_INCOME_LOG_SD * float(_normal_ppf(np.array(PARETO_START))))
    with np.errstate(divide="ignore"):
        tail = start * ((1.0 - PARETO_START) / (1.0 - u)) ** (1.0 / PARETO_INDEX)
    return np.where(u <= PARETO_START, body, tail)


def california_household_incomes(n: int, rng: SeedLike = None) -> NDArray[np.float64]:
    """Draw ``n`` SYNTHETIC 2022 California household incomes (USD) from the model above.

    Inverse-transform sampling of :func:`california_income_quantile`.
    """
    n = check_int("n", n, minimum=1)
    generator = resolve_rng(rng)
    u = generator.random(n)
    u = np.where(u == 0.0, np.nextafter(0.0, 1.0), u)  # random() is in [0, 1)
    return california_income_quantile(u)


def income_debt(
    n: int,
    rng: SeedLike = None,
    *,
    correlation: float = INCOME_DEBT_CORRELATION,
    debt_to_income: float = DEBT_TO_INCOME,
) -> NDArray[np.float64]:
    """Draw ``n`` SYNTHETIC (income, debt) pairs in USD, shape (n, 2), from the correlated log-normal model.

    ln(income) ~ N(μ₀, σ₀²), ln(debt) ~ N(μ₁, σ₀²), corr = ``correlation``, with
    μ₁ = ln(debt_to_income·e^{μ₀+σ₀²/2}) − σ₀²/2 (so E[debt] = debt_to_income·E[income]).
    """
    n = check_int("n", n, minimum=1)
    correlation = check_in_range("correlation", correlation, -1.0, 1.0)
    debt_to_income = check_positive("debt_to_income", debt_to_income)
    generator = resolve_rng(rng)
    mu0, sigma = CA_INCOME_LOG_MEAN, CA_INCOME_LOG_SD
    mu1 = math.log(debt_to_income) + mu0  # ln(s·e^{μ₀+σ²/2}) − σ²/2
    z = generator.standard_normal((n, 2))
    log_income = mu0 + sigma * z[:, 0]
    log_debt = mu1 + sigma * (correlation * z[:, 0] + math.sqrt(1.0 - correlation**2) * z[:, 1])
    return np.exp(np.column_stack([log_income, log_debt]))
