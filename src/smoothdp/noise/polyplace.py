"""PolyPlace(s, α): the pure-DP smooth-sensitivity noise of Hladík & Tětek (HT = Hladík & Tětek, *Smooth
Sensitivity Revisited: Towards Optimality*, FORC 2025).

Formulas: ``docs/theory/noise.md#polyplace`` (HT Definition 6, Lemma 13, Lemma 15). With u = |x|/s,
K_α = 2((α−1)/α)^α + α − 1 and N = α/(2K_α s),

    f(x) = N (α−1) (1 − u)^{α−1}               if u < 1/α   (core),
    f(x) = N (α+1) (1 − 1/α²)^α (1 + u)^{−α−1}   if u ≥ 1/α   (tail).

Everything is computed in log space with log1p/expm1 (``docs/theory/noise.md#polyplace-sampler``), so the
law stays accurate for huge shapes α (it tends to Laplace(s/α), HT Lemma 15) and far into the polynomial tail.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.validation import check_in_range

__all__ = ["PolyPlace"]


class PolyPlace(NoiseDistribution):
    """PolyPlace noise with scale ``s`` and shape ``α > 1`` (HT Definition 6).

    HT Theorem 8: with a γ-smooth upper bound S on the local sensitivity and 0 < γ < ε,
    ``q(D) + PolyPlace(S(D)/γ, ε/γ)`` is ε-DP. (The mechanism lives in :mod:`smoothdp.calibration`.)

    Parameters
    ----------
    scale
        s > 0. The density's core is |x| < s/α; it behaves like Laplace(s/α) for large α.
    shape
        α > 1. The tail decays like |x|^{−α−1}: the mean exists for every α > 1, the variance iff α > 2.

    Notes
    -----
    * CDF in closed form (``docs/theory/noise.md#polyplace``): P(|X| > s u) = 1 − ((α−1)/K_α)(1 − (1−u)^α)
      in the core and ((α+1)/K_α)(1 − 1/α²)^α (1+u)^{−α} in the tail; ``cdf`` and ``sf`` use the tail
      mass directly, so both are accurate far out.
    * Sampling is exact inverse transform (``docs/theory/noise.md#polyplace-sampler``) driven by an
      exponential variate E = −ln P(|X| > |x|): the core and tail inverses are written with log1p/expm1,
      and the ziggurat exponential has no 2⁻⁵³ floor, so the polynomial tail is reached without
      truncation.
    * Variance (HT Lemma 13), finite iff α > 2:
      σ² = 2s²[(19α²+5)r + (α−2)(α−1)²] / [(2r+α−1)(α²−1)(α²−4)], r = (1−1/α)^α.
    """

    name = "polyplace"

    def __init__(self, scale: float = 1.0, shape: float = 2.0) -> None:
        super().__init__(scale)
        alpha = check_in_range("shape", shape, 1.0, math.inf)
        self.shape = alpha
        # Constants of the standardized law (s = 1); they depend on α only, so with_scale keeps them.
        log_r = alpha * math.log1p(-1.0 / alpha)  # ln (1 − 1/α)^α
        log_k = math.log(2.0 * math.exp(log_r) + alpha - 1.0)  # ln K_α
        self._log_k = log_k
        self._log_norm = math.log(alpha) - math.log(2.0) - log_k  # ln N_{1,α}
        self._log_tail_coef = math.log(alpha + 1.0) + alpha * math.log1p(-1.0 / alpha**2) - log_k
        # Core: P(|X| > u) = 1 − c·(1 − (1−u)^α) with c = (α−1)/K_α.
        self._core_coef = (alpha - 1.0) / math.exp(log_k)
        # E = −ln P(|X| > u) at the breakpoint u = 1/α (tail mass (α+1) r / K_α).
        self._exp_break = log_k - math.log(alpha + 1.0) - log_r

    def breakpoints(self) -> tuple[float, ...]:
        """s/α, where core and tail meet: |d/dx ln pdf| rises to α/s there and falls beyond (HT Def. 6)."""
        return (self.scale / self.shape,)

    # -- |X| in terms of E = −ln P(|X| > u), shared by ppf and the sampler -------------------------------
    def _abs_from_exp(
        self, e: NDArray[np.float64], out: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """u with P(|X| > u) = e^{−E}, elementwise (``out``: where to write, may be ``e`` itself).

        Each branch is evaluated on its own draws only (gathered by index, then scattered back): the core
        inverse takes three transcendental calls, the tail one, and computing both everywhere would cost
        four per draw. A NaN goes to the tail branch and stays NaN.
        """
        alpha = self.shape
        e = np.asarray(e, dtype=np.float64)
        flat = e.reshape(-1)
        if out is not None and out.flags.c_contiguous and out.shape == e.shape:
            res = out.reshape(-1)  # a view: writing res writes out
        else:
            res = np.empty_like(flat)
        in_core = flat < self._exp_break
        core_idx = in_core.nonzero()[0]
        tail_idx = np.logical_not(in_core, out=in_core).nonzero()[0]
        core = flat[core_idx]
        tail = flat[tail_idx]
        # Core: 1 − c(1 − (1−u)^α) = e^{−E}  ⇔  (1−u)^α = 1 − (1 − e^{−E})/c.
        np.negative(core, out=core)
        np.expm1(core, out=core)
        np.divide(core, self._core_coef, out=core)
        np.log1p(core, out=core)
        np.divide(core, alpha, out=core)
        np.expm1(core, out=core)
        np.negative(core, out=core)
        # Tail: ((α+1)/K)(1−1/α²)^α (1+u)^{−α} = e^{−E}  ⇔  ln(1+u) = (ln tail_coef + E)/α.
        np.add(tail, self._log_tail_coef, out=tail)
        np.divide(tail, alpha, out=tail)
        with np.errstate(over="ignore"):
            np.expm1(tail, out=tail)
        res[core_idx] = core
        res[tail_idx] = tail
        return res.reshape(e.shape)

    def _log_abs_sf(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """ln P(|Z| > u) for u ≥ 0 (standardized)."""
        alpha = self.shape
        in_core = u < 1.0 / alpha
        uc = np.where(in_core, u, 0.0)
        core = np.log1p(self._core_coef * np.expm1(alpha * np.log1p(-uc)))
        tail = self._log_tail_coef - alpha * np.log1p(u)
        return np.where(in_core, core, tail)

    # -- standardized law ------------------------------------------------------------------------------
    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        alpha = self.shape
        u = np.abs(z)
        in_core = u < 1.0 / alpha
        uc = np.where(in_core, u, 0.0)
        core = math.log(alpha - 1.0) + (alpha - 1.0) * np.log1p(-uc)
        tail = self._log_tail_coef + self._log_k + -(alpha + 1.0) * np.log1p(u)
        return self._log_norm + np.where(in_core, core, tail)

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        half_tail = 0.5 * np.exp(self._log_abs_sf(np.abs(z)))  # P(X > |z|) = P(X < −|z|)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        # P(|X| > u) = 2·min(q, 1−q); 1 − q is exact for q ≥ 1/2, so both tails keep full precision.
        tail_mass = 2.0 * np.minimum(q, 1.0 - q)
        with np.errstate(divide="ignore"):
            u = self._abs_from_exp(-np.log(tail_mass))
        return np.sign(q - 0.5) * u + 0.0  # + 0.0 turns −0.0 into 0.0

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        draws = np.asarray(rng.standard_exponential(size), dtype=np.float64)
        draws = self._abs_from_exp(draws, out=draws)
        # A fair sign per draw (one random bit each), applied by copysign: no branch, no temporary mask.
        negative = rng.integers(0, 2, size, dtype=np.bool_)
        return np.copysign(draws, np.subtract(0.5, negative, dtype=np.float64), out=draws)

    def _var_std(self) -> float:
        alpha = self.shape
        if alpha <= 2.0:
            return math.inf
        r = math.exp(alpha * math.log1p(-1.0 / alpha))
        # Lemma 13 divided through by α⁵ so that huge α neither overflows nor cancels.
        num = (19.0 / alpha + 5.0 / alpha**3) * r + (1.0 - 2.0 / alpha) * (1.0 - 1.0 / alpha) ** 2
        den = (2.0 * r / alpha + 1.0 - 1.0 / alpha) * (1.0 - 1.0 / alpha**2) * (1.0 - 4.0 / alpha**2)
        return 2.0 / alpha**2 * num / den

    def _params(self) -> str:
        return f"scale={self.scale:g}, shape={self.shape:g}"
