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

from smoothdp.exact.laws import PolyPlaceLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.validation import check_in_range

__all__ = ["PolyPlace"]


class PolyPlace(NoiseDistribution):
    r"""PolyPlace noise with scale ``s`` and shape ``α > 1`` (HT Definition 6).

    HT Theorem 8: with a $\beta$-smooth upper bound S on the local sensitivity and
    $0 < \beta < \varepsilon$, $q(D) + \mathrm{PolyPlace}(S(D)/\beta, \varepsilon/\beta)$ is
    $\varepsilon$-DP. (The mechanism lives in :mod:`smoothdp.calibration`.)

    Parameters
    ----------
    scale
        $s > 0$. The density's core is $\vert x\vert < s/\alpha$; it behaves like $\mathrm{Laplace}(s/\alpha)$
        for large $\alpha$.
    shape
        $\alpha > 1$. The tail decays like $\vert x\vert^{-\alpha-1}$: the mean exists for every $\alpha > 1$,
        the variance iff $\alpha > 2$.

    Notes
    -----
    * CDF in closed form (``docs/theory/noise.md#polyplace``):
      $P(\vert X\vert > s u) = 1 - ((\alpha-1)/K_\alpha)(1 - (1-u)^\alpha)$ in the core and
      $((\alpha+1)/K_\alpha)(1 - 1/\alpha^2)^\alpha (1+u)^{-\alpha}$ in the tail; ``cdf`` and ``sf`` use the
      tail mass directly, so both are accurate far out.
    * Hardened sampling (default): exact inverse transform from lazily refined uniform bits
      (:class:`smoothdp.exact.laws.PolyPlaceLaw`), rounded onto the public grid; no support cap.
      ``numerics="float"``: inverse transform of a numpy exponential variate
      $E = -\ln P(\vert X\vert > \vert x\vert)$.
    * The float CDF and inverse are written without cancellation for every $\alpha > 1$ (the core tail mass is
      $(2r + (\alpha-1)(1-u)^\alpha)/K_\alpha$, a sum of positive terms) and clipped at the breakpoint, so
      they are monotone across it and NaN-free as $\alpha \to 1^+$ ($\beta \to \varepsilon$) and for huge
      $\alpha$.
    * Variance (HT Lemma 13), finite iff $\alpha > 2$:
      $\sigma^2 = 2s^2[(19\alpha^2+5)r + (\alpha-2)(\alpha-1)^2] / [(2r+\alpha-1)(\alpha^2-1)(\alpha^2-4)]$,
      $r = (1-1/\alpha)^\alpha$.
    """

    name = "polyplace"

    def __init__(self, scale: float = 1.0, shape: float = 2.0) -> None:
        super().__init__(scale)
        alpha = check_in_range("shape", shape, 1.0, math.inf)
        self.shape = alpha
        # Constants of the standardized law (s = 1); they depend on α only, so with_scale keeps them.
        # Written so that none cancels or overflows for any α in (1, max float]: α − 1 is exact
        # (Sterbenz) near 1, and ln(1 − 1/α) = ln(α − 1) − ln α there.
        am1 = alpha - 1.0
        log_am1 = math.log(am1)
        log_r = alpha * (log_am1 - math.log(alpha)) if alpha < 2.0 else alpha * math.log1p(-1.0 / alpha)
        r = math.exp(log_r)  # r = (1 − 1/α)^α ∈ (0, 1/e]
        log_k = math.log(2.0 * r + am1)  # ln K_α
        self._r = r
        self._log_k = log_k
        self._log_am1 = log_am1
        self._log_norm = math.log(alpha) - math.log(2.0) - log_k  # ln N_{1,α}
        # Tail mass at the breakpoint: T_b = (α+1) r / K_α; ln(1 + 1/α) for the tail inverse.
        self._log_tb = math.log1p(alpha) + log_r - log_k
        self._tb = math.exp(self._log_tb)
        self._log1p_inv = math.log1p(1.0 / alpha)
        self._k_over_am1 = math.exp(log_k - log_am1)  # K_α/(α − 1)
        # E = −ln P(|X| > u) at the breakpoint u = 1/α.
        self._exp_break = -self._log_tb
        # The core inverse switches form at m = (1 + T_b)/2, where both give (1−u)^α = (1 + r)/2; each
        # side is clipped at u there so that the inverse stays monotone.
        self._m_switch = 0.5 * (1.0 + self._tb)
        self._u_switch = -math.expm1(math.log(0.5 * (1.0 + r)) / alpha)

    def breakpoints(self) -> tuple[float, ...]:
        r"""$s/\alpha$, where core and tail meet: $\vert d/dx \ln\, \mathrm{pdf}\vert$ rises to $\alpha/s$
        there and falls beyond (HT Def. 6)."""
        return (self.scale / self.shape,)

    # -- |X| from the tail mass, shared by ppf and the float sampler ----------------------------------------
    def _abs_from_log_mass(self, log_m: NDArray[np.float64]) -> NDArray[np.float64]:
        """u with P(|X| > u) = m, given ln m ∈ [−inf, 0] (standardized; monotone, no NaN for valid input).

        Core (m ≥ T_b): P(|X| > u) = (2r + (α−1)(1−u)^α)/K_α (a sum of positive terms), so
        (1−u)^α = r + (K_α/(α−1))·(m − T_b) — no cancellation at the breakpoint however close α is to
        1 — and, near m = 1, (1−u)^α = 1 − (1 − m)K_α/(α−1) (no cancellation there); u = −expm1(ln(·)/α).
        Tail (m ≤ T_b): ln(1+u) = ln(1 + 1/α) + (ln T_b − ln m)/α. Each branch is clipped at the
        breakpoint 1/α (and the core's two forms at their switch), so the inverse is monotone.
        """
        alpha = self.shape
        log_m = np.asarray(log_m, dtype=np.float64)
        u_break = 1.0 / alpha
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            in_core = log_m >= self._log_tb
            m = np.exp(np.where(in_core, log_m, self._log_tb))
            near_one = m >= self._m_switch
            # Near the breakpoint: (1−u)^α = r + (K/(α−1))(m − T_b); near m = 1: 1 − (1 − m)/c.
            low = np.log(self._r + self._k_over_am1 * (m - self._tb))
            high = np.log1p(np.expm1(log_m) * self._k_over_am1)  # 1 − m = −expm1(ln m), accurate
            core = -np.expm1(np.where(near_one, high, low) / alpha)
            core = np.where(near_one, np.minimum(core, self._u_switch), np.maximum(core, self._u_switch))
            core = np.clip(core, 0.0, u_break)
            tail = np.maximum(np.expm1(self._log1p_inv + (self._log_tb - log_m) / alpha), u_break)
        out: NDArray[np.float64] = np.where(in_core, core, tail)
        return out

    def _abs_from_exp(
        self, e: NDArray[np.float64], out: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """u with P(|X| > u) = e^{−E}, elementwise (``out``: where to write; NaN stays NaN)."""
        e = np.asarray(e, dtype=np.float64)
        res = self._abs_from_log_mass(-e)
        res = np.where(np.isnan(e), np.nan, res)
        if out is not None:
            out[...] = res
            return out
        return res

    def _log_abs_sf(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """ln P(|Z| > u) for u ≥ 0 (standardized), monotone across the breakpoint.

        Core, u ≤ u_switch: ln(1 − c(1 − (1−u)^α)) = log1p(c·expm1(α·log1p(−u))), accurate near u = 0;
        core beyond: ln(2r + (α−1)(1−u)^α) − ln K_α (positive terms, accurate up to the breakpoint);
        tail: ln T_b − α(log1p(u) − log1p(1/α)). Each piece is clipped at its ends' common values.
        """
        alpha = self.shape
        in_core = u < 1.0 / alpha
        uc = np.where(in_core, u, 0.0)
        near_zero = uc <= self._u_switch
        log_switch = math.log(self._m_switch)
        with np.errstate(divide="ignore", over="ignore"):
            small = np.log1p(np.expm1(alpha * np.log1p(-uc)) / self._k_over_am1)
            large = np.logaddexp(math.log(2.0 * self._r), self._log_am1 + alpha * np.log1p(-uc)) - self._log_k
            tail = self._log_tb - alpha * (np.log1p(u) - self._log1p_inv)
        core = np.where(near_zero, np.maximum(small, log_switch), np.minimum(large, log_switch))
        return np.where(in_core, np.maximum(core, self._log_tb), np.minimum(tail, self._log_tb))

    # -- standardized law ------------------------------------------------------------------------------
    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        alpha = self.shape
        u = np.abs(z)
        in_core = u < 1.0 / alpha
        uc = np.where(in_core, u, 0.0)
        # Tail: (α+1)(1 − 1/α²)^α = (α+1) r (1 + 1/α)^α = T_b K_α (1 + 1/α)^α.
        with np.errstate(over="ignore"):
            core = self._log_am1 + (alpha - 1.0) * np.log1p(-uc)
            tail = self._log_tb + self._log_k + alpha * self._log1p_inv - (alpha + 1.0) * np.log1p(u)
        return self._log_norm + np.where(in_core, core, tail)

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        half_tail = 0.5 * np.exp(self._log_abs_sf(np.abs(z)))  # P(X > |z|) = P(X < −|z|)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        # P(|X| > u) = 2·min(q, 1−q); 1 − q is exact for q ≥ 1/2, so both tails keep full precision.
        tail_mass = 2.0 * np.minimum(q, 1.0 - q)
        with np.errstate(divide="ignore"):
            u = self._abs_from_log_mass(np.log(tail_mass))
        return np.sign(q - 0.5) * u + 0.0  # + 0.0 turns −0.0 into 0.0

    def _exact_law(self) -> PolyPlaceLaw:
        return PolyPlaceLaw(self.scale, self.shape)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        draws = np.asarray(rng.standard_exponential(size), dtype=np.float64)
        draws = np.asarray(self._abs_from_exp(draws), dtype=np.float64)
        # A fair sign per draw (one random bit each), applied by copysign: no branch, no temporary mask.
        negative = rng.integers(0, 2, size, dtype=np.bool_)
        return np.copysign(draws, np.subtract(0.5, negative, dtype=np.float64), out=draws)

    def _var_std(self) -> float:
        alpha = self.shape
        if alpha <= 2.0:
            return math.inf
        r = self._r
        inv = 1.0 / alpha
        # Lemma 13 divided through by α⁵ so that huge α neither overflows nor cancels.
        num = (19.0 * inv + 5.0 * inv * inv * inv) * r + (1.0 - 2.0 * inv) * (1.0 - inv) ** 2
        den = (2.0 * r * inv + 1.0 - inv) * (1.0 - inv * inv) * (1.0 - 4.0 * inv * inv)
        return 2.0 * inv * inv * num / den

    def _params(self) -> str:
        return f"scale={self.scale:g}, shape={self.shape:g}"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
