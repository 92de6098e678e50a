"""Exact integer noise for the counting queries (count, sum, histogram), calibrated to integer sensitivities.

* ``noise="laplace"`` (default): the discrete Laplace law with rate λ = ε/Δ₁ (pmf ∝ e^{−λ|k|}), pure ε-DP
  for an integer-valued query of ℓ1 sensitivity Δ₁ (docs/theory/counting-queries.md#discrete-laplace-noise).
  λ is the exact rational ε/Δ₁ (ε is a float, so a dyadic rational), rounded *down* onto denominators
  ≤ 2⁶² only when needed (:func:`smoothdp.noise.exact_integer.rate_at_most`): the noise is never narrower
  than the guarantee needs.
* ``noise="gaussian"``: the discrete Gaussian N_ℤ(0, σ²) with σ² = Δ₂²/(2ρ) exactly (a Fraction), ρ-zCDP for
  ℓ2 sensitivity Δ₂ (docs/theory/counting-queries.md#discrete-gaussian-noise; Canonne, Kamath & Steinke,
  NeurIPS 2020). Either ``rho=`` (the guarantee is :class:`~smoothdp.privacy.ZCDP`) or ``epsilon=`` with
  ``delta > 0`` (the guarantee is (ε, δ)-DP through the library's conversion
  :meth:`~smoothdp.privacy.ZCDP.as_approx_dp`: ρ is the largest value it maps within ε).

The samplers are exact (:mod:`smoothdp.noise.exact_integer`, :mod:`smoothdp.noise.discrete_gaussian`), so
the released integers follow the proved law exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.noise.discrete_gaussian import (
    MAX_SIGMA2,
    MIN_SIGMA2,
    discrete_gaussian,
    discrete_gaussian_variance,
)
from smoothdp.noise.exact_integer import MIN_RATE, discrete_laplace, rate_at_most
from smoothdp.privacy import ZCDP, ApproxDP, PrivacyGuarantee, PureDP, check_neighbours
from smoothdp.validation import check_delta, check_epsilon, check_positive

__all__ = ["NOISE_FAMILIES", "IntegerNoise", "calibrate_integer_noise", "rho_for_approx_dp"]

#: The ``noise=`` values of the counting queries.
NOISE_FAMILIES = ("laplace", "gaussian")


@dataclass(frozen=True)
class IntegerNoise:
    """Exact integer noise: ``"discrete_laplace"`` with rate λ (P(K = k) = tanh(λ/2)e^{−λ|k|}) or
    ``"discrete_gaussian"`` with variance parameter σ² (P(K = k) ∝ e^{−k²/(2σ²)}); ``parameter`` is λ or σ²,
    an exact Fraction."""

    family: str
    parameter: Fraction

    def sample(self, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> NDArray[np.int64]:
        """Exact int64 draws (``size=None``: a 0-d array)."""
        if self.family == "discrete_laplace":
            return discrete_laplace(self.parameter, size, rng)
        return discrete_gaussian(self.parameter, size, rng)

    def variance(self) -> float:
        """Var K: 2e^{−λ}/(1 − e^{−λ})² (discrete Laplace), or that of N_ℤ(0, σ²) (< σ²)."""
        if self.family == "discrete_laplace":
            lam = float(self.parameter)
            return 2.0 * math.exp(-lam) / math.expm1(-lam) ** 2
        return discrete_gaussian_variance(self.parameter)

    def std(self) -> float:
        return math.sqrt(self.variance())

    @property
    def scale(self) -> float:
        """1/λ (discrete Laplace) or σ (discrete Gaussian), in units of the query's lattice."""
        if self.family == "discrete_laplace":
            return float(1 / self.parameter)
        return math.sqrt(float(self.parameter))


def rho_for_approx_dp(epsilon: float, delta: float) -> float:
    """The largest ρ (to within 2⁻⁴⁰ relative) whose (ε, δ) conversion ρ + 2√(ρ ln(1/δ)) is at most ε.

    ρ = (√(L + ε) − √L)² = ε²/(√(L + ε) + √L)², L = ln(1/δ) (the root of ρ + 2√(ρL) = ε), shrunk by
    2⁻⁴⁰ so that the float evaluation of the conversion (:meth:`ZCDP.as_approx_dp`) stays within ε;
    checked, and stepped down further if it did not.
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=False)
    log_inv = math.log(1.0 / d)
    rho = eps * eps / (math.sqrt(log_inv + eps) + math.sqrt(log_inv)) ** 2 * (1.0 - 2.0**-40)
    while ZCDP(rho).as_approx_dp(d).epsilon > eps:
        rho = rho * (1.0 - 2.0**-40)
    return rho


def check_noise_family(noise: Any) -> str:
    if not isinstance(noise, str) or noise not in NOISE_FAMILIES:
        raise ValueError(f"noise must be one of {NOISE_FAMILIES}; got {noise!r}")
    return noise


def calibrate_integer_noise(
    *,
    l1: int,
    l2_squared: int,
    epsilon: float | None,
    delta: float = 0.0,
    rho: float | None = None,
    noise: str = "laplace",
    neighbours: str = "add_remove",
) -> tuple[IntegerNoise, PrivacyGuarantee]:
    """The noise and the guarantee of an integer query with ℓ1 sensitivity ``l1`` and squared ℓ2
    sensitivity ``l2_squared`` (integers ≥ 1) under ``neighbours`` (module docstring for the rules).

    Raises ValueError/TypeError naming ``epsilon``, ``delta``, ``rho`` or ``noise`` for a bad or missing
    budget, and for a budget whose noise would leave the samplers' range (a discrete Laplace scale above
    2⁵⁰ or σ² outside [2⁻³⁰, 2⁹⁰]).
    """
    family = check_noise_family(noise)
    relation = check_neighbours(neighbours, allowed=("add_remove", "substitution"))
    dlt = check_delta(delta)
    if family == "laplace":
        if rho is not None:
            raise TypeError("rho applies to noise='gaussian' only (the discrete Laplace is pure ε-DP)")
        if epsilon is None:
            raise TypeError("epsilon is required (noise='laplace': pure ε-DP)")
        if dlt:
            raise ValueError(
                "delta applies only to noise='gaussian' (the (ε, δ) conversion of zCDP); noise='laplace' is "
                f"pure (δ = 0): leave delta at 0 or choose noise='gaussian'; got delta={delta!r}"
            )
        eps = check_epsilon(epsilon)
        rate = rate_at_most(Fraction(eps) / l1)
        if rate < MIN_RATE:
            low = float(MIN_RATE * l1)
            raise ValueError(
                f"epsilon must be at least {low:.3g} here (a discrete Laplace scale Δ/ε of at most 2^50); "
                f"got {epsilon!r}"
            )
        return IntegerNoise("discrete_laplace", rate), PureDP(eps, neighbours=relation)
    guarantee: PrivacyGuarantee
    if rho is not None:
        if epsilon is not None or dlt:
            raise TypeError("pass either rho (ρ-zCDP) or epsilon with delta > 0 ((ε, δ)-DP), not both")
        r = check_positive("rho", rho)
        guarantee, name = ZCDP(r, neighbours=relation), "rho"
    else:
        if epsilon is None or not dlt:
            raise TypeError(
                "noise='gaussian' needs rho= (ρ-zCDP) or epsilon= with delta > 0 ((ε, δ)-DP through zCDP)"
            )
        eps = check_epsilon(epsilon)
        r = rho_for_approx_dp(eps, dlt)
        guarantee, name = ApproxDP(eps, dlt, neighbours=relation), "epsilon"
    sigma2 = Fraction(l2_squared) / (2 * Fraction(r))
    if not MIN_SIGMA2 <= sigma2 <= MAX_SIGMA2:
        raise ValueError(
            f"{name} gives a discrete Gaussian σ² = {float(sigma2):.3g} outside [2^-30, 2^90] "
            f"(σ² = Δ₂²/(2ρ), Δ₂² = {l2_squared}); got {name}={rho if name == 'rho' else epsilon!r}"
        )
    return IntegerNoise("discrete_gaussian", sigma2), guarantee
