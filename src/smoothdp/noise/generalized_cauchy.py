"""Generalized Cauchy GC(γ, σ): density C_γ / (σ(1 + |x/σ|^γ)), γ > 1 (Rider 1957; Liang & Yi CCS'24)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact.cauchy import GeneralizedCauchyLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.noise._beta_tail import abs_sf, abs_sf_inverse, log_y_of
from smoothdp.validation import check_in_range

__all__ = ["GeneralizedCauchy"]

# Coarse acceptance bits per candidate word, and the Pareto-tail point beyond which the sampler draws a
# fresh exponential (so the tail has no floor at 2⁻⁵³).
_COARSE = 1024
_FAR = 2.0**-10
_LOG_FAR = math.log(_FAR)
# Rejection rounds of the sampler: each round draws enough candidates for all missing draws with high
# probability, so more than a few rounds never happen in practice; the cap only guards a broken rng.
_MAX_ROUNDS = 200


class GeneralizedCauchy(NoiseDistribution):
    r"""The generalized Cauchy law $\mathrm{GC}(\gamma, \sigma)$ (Rider 1957; Liang & Yi, CCS 2024).

    Formulas: ``docs/theory/noise.md#generalized-cauchy``.

    $$
    \mathrm{pdf}(x) = C_\gamma / (\sigma (1 + \vert x/\sigma\vert^\gamma)), \quad C_\gamma = \gamma
    \sin(\pi/\gamma) / (2\pi), \quad \gamma > 1.
    $$

    $\mathrm{GC}(2, \sigma)$ is the Cauchy law; $\mathrm{GC}(4, \sigma)$ has variance exactly $\sigma^2$.

    Moments: $E\vert X\vert^k = \sigma^k \sin(\pi/\gamma)/\sin((k+1)\pi/\gamma)$ for $k < \gamma - 1$, so the
    mean is 0 for $\gamma > 2$ (``nan`` otherwise) and the variance is
    $\sigma^2 \sin(\pi/\gamma)/\sin(3\pi/\gamma)$ for $\gamma > 3$ (``inf`` otherwise).

    Notes
    -----
    * CDF: $F(z) = 1/2 + \operatorname{sgn}(z)/2 \cdot I_w(1/\gamma, 1-1/\gamma)$ with
      $w = \vert z\vert^\gamma/(1+\vert z\vert^\gamma)$. We evaluate the tail
      $P(\vert Z\vert > t) = I_{1/(1+t^\gamma)}(1-1/\gamma, 1/\gamma)$ in log space
      (:mod:`smoothdp.noise._beta_tail`), so ``cdf`` and ``sf`` keep full relative precision far out; ``ppf``
      inverts it with ``betaincinv``.
    * Sampling (``docs/theory/noise.md#generalized-cauchy-sampler``) is exact rejection from a uniform/Pareto
      envelope of $\vert Z\vert$: height 1 on $[0, 1)$ and $x^{-\gamma}$ beyond, i.e. $U[0, 1)$ with
      probability $(\gamma-1)/\gamma$ and $\mathrm{Pareto}(\gamma-1)$ on $[1, \infty)$ otherwise; accept with
      probability $1/(1 + x^\gamma)$, resp. $1/(1 + x^{-\gamma})$ (both $\ge 1/2$). The acceptance rate is
      $(1/\gamma)(1-1/\gamma)\pi/\sin(\pi/\gamma) \ge \pi/4$, the same as Jöhnk's algorithm for the
      $\mathrm{Beta}(1/\gamma, 1-1/\gamma)$ transform of the CDF above, but each candidate costs one 64-bit
      word instead of two exponentials: 53 bits make the proposal, 1 bit the sign and 10 bits a coarse
      acceptance uniform that decides unless its cell of width 1/1024 holds the threshold, when a fresh 53-bit
      uniform refines it (exact). The ChaCha20 stream costs ~25 ns a word, so this is ~1.7× numpy's Laplace
      per draw, against ~2.6× for Jöhnk and ~4.5× for the two-gamma ratio $G_1/G_2$. The Pareto tail beyond
      the $2^{-10}$ tail quantile of the envelope is redrawn from a fresh exponential (memorylessness of the
      Pareto), so the polynomial tail has no $2^{-53}$ floor. Not root finding, and not the Beta transform
      itself: the tests check the law (KS, $\chi^2$ on equal-probability bins, extreme $\gamma$) against the
      CDF.
    * Hardened sampling (default, :class:`~smoothdp.exact.cauchy.GeneralizedCauchyLaw`): the same envelope
      and acceptance ratio with one 64-bit word per candidate too (sign, the first 10 bits of V, the
      first 53 bits of U), but each uniform is an infinite bit string continued by fresh words when a
      decision needs them: "V < a(x(U))" is decided on certified float bounds, then on V's next word,
      then in arb, and the accepted x(U) is rounded exactly (``docs/theory/floating-point.md#the-samplers``).
    """

    name = "generalized_cauchy"

    def __init__(self, gamma: float, scale: float = 1.0) -> None:
        super().__init__(scale)
        g = check_in_range("gamma", gamma, 1.0, math.inf)
        self.gamma = g
        self._log_c = math.log(g * math.sin(math.pi / g) / (2.0 * math.pi))  # ln C_γ
        self._acceptance = (1.0 / g) * (1.0 - 1.0 / g) * math.pi / math.sin(math.pi / g)

    def _log_v(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return self.gamma * np.log(np.abs(z))  # ln |z|^γ, never overflows

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        log_y, _ = log_y_of(self._log_v(z))  # −ln(1 + |z|^γ)
        return self._log_c + log_y

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        g = self.gamma
        half_tail = 0.5 * abs_sf(self._log_v(z), 1.0 - 1.0 / g, 1.0 / g)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        g = self.gamma
        log_v = abs_sf_inverse(2.0 * np.minimum(q, 1.0 - q), 1.0 - 1.0 / g, 1.0 / g)
        with np.errstate(over="ignore"):
            magnitude = np.exp(log_v / g)
        return np.sign(q - 0.5) * magnitude + 0.0  # + 0.0 turns −0.0 into 0.0

    def _exact_law(self) -> GeneralizedCauchyLaw:
        return GeneralizedCauchyLaw(self.scale, self.gamma)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        n = 1 if size is None else int(np.prod(size))
        draws = np.empty(n)
        filled = 0
        for _ in range(_MAX_ROUNDS):
            missing = n - filled
            if missing == 0:
                return draws[0] if size is None else draws.reshape(size)
            # Candidates for all missing draws with a margin of ~6 standard deviations.
            m = int(missing / self._acceptance + 6.0 * math.sqrt(missing) + 16)
            kept = self._candidates(m, rng)[:missing]
            draws[filled : filled + kept.size] = kept
            filled += kept.size
        raise RuntimeError("generalized Cauchy sampler: rejection did not converge (broken generator?)")

    def _candidates(self, m: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """Signed draws from m candidates of the uniform/Pareto envelope (the accepted ones, in order)."""
        g = self.gamma
        w0 = (g - 1.0) / g  # envelope mass of the uniform part
        words = rng.bit_generator.random_raw(m)  # m raw 64-bit words of the stream
        u = (words >> np.uint64(11)).astype(np.float64) * 2.0**-53  # bits 11..63: the proposal
        coarse = ((words >> np.uint64(1)) & np.uint64(_COARSE - 1)).astype(np.float64)  # bits 1..10
        negative = (words & np.uint64(1)).astype(np.bool_)  # bit 0: the sign
        core = u < w0
        # Uniform part: x = u/w0. Pareto part: s uniform on (0, 1], x = s^{−1/(γ−1)} on [1, ∞).
        # One logarithm serves both: t = ln(u/w0) or ln s.
        with np.errstate(divide="ignore"):
            t = np.log(np.where(core, u / w0, (1.0 - u) / (1.0 - w0)))
        far = ~core & (t < _LOG_FAR)
        if np.any(far):
            # Pareto given x > x₀ = _FAR^{−1/(γ−1)} is x₀ e^{E/(γ−1)}: a fresh exponential, no 2⁻⁵³ floor
            # (in t = ln s units, t = ln _FAR − E).
            t[far] = _LOG_FAR - rng.standard_exponential(np.count_nonzero(far))
        # Acceptance: target/envelope = 1/(1 + x^γ) under the uniform, 1/(1 + x^{−γ}) = 1/(1 + s^{γ/(γ−1)})
        # under the Pareto.
        with np.errstate(over="ignore"):
            accept_prob = 1.0 / (1.0 + np.exp(t * np.where(core, g, g / (g - 1.0))))
        # Lazy acceptance uniform V = (coarse + V')/1024: the 10 coarse bits decide unless V's cell holds
        # the threshold (probability ≤ 1/1024); then a fresh 53-bit V' decides, compared exactly
        # (1024·p − coarse is exact by Sterbenz).
        threshold = accept_prob * _COARSE - coarse
        accept = threshold >= 1.0
        undecided = np.flatnonzero((threshold > 0.0) & ~accept)
        if undecided.size:
            accept[undecided] = rng.random(undecided.size) < threshold[undecided]
        t, core = t[accept], core[accept]
        with np.errstate(over="ignore"):  # |Z| beyond the largest double is +inf, as it should be
            magnitude = np.exp(np.where(core, t, t / (1.0 - g)))
        return np.where(negative[accept], -magnitude, magnitude)

    def _var_std(self) -> float:
        g = self.gamma
        return math.sin(math.pi / g) / math.sin(3.0 * math.pi / g) if g > 3.0 else math.inf

    def mean(self) -> float:
        return 0.0 if self.gamma > 2.0 else math.nan

    def breakpoints(self) -> tuple[float, ...]:
        r"""$\sigma(\gamma-1)^{1/\gamma}$, where
        $\vert d/dx \ln\, \mathrm{pdf}\vert = \gamma\vert z\vert^{\gamma-1}/(1 + \vert z\vert^\gamma)$
        ($z = x/\sigma$) is largest."""
        g = self.gamma
        return (self.scale * (g - 1.0) ** (1.0 / g),)

    def _params(self) -> str:
        return f"gamma={self.gamma:g}, scale={self.scale:g}"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
