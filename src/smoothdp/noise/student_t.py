"""Student's t with real degrees of freedom d > 0 and a scale σ: density ∝ (1 + (x/σ)²/d)^{−(d+1)/2}."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import special

from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.noise._beta_tail import abs_sf, abs_sf_inverse, log_y_of
from smoothdp.validation import check_positive

__all__ = ["StudentT"]


class StudentT(NoiseDistribution):
    """Student's t law T(d, 0, σ) (``notes/noise_and_ss.md`` §2, ``notes/gp_paper.md`` §1.1).

    pdf(x) = Γ((d+1)/2) / (Γ(d/2) √(dπ) σ) · (1 + (x/σ)²/d)^{−(d+1)/2}, for any real d > 0.

    Moments: mean 0 for d > 1 (``nan`` for d ≤ 1); variance σ² d/(d−2) for d > 2 and ``inf`` for d ≤ 2.

    Notes
    -----
    Tails through the incomplete beta function: P(|T| > t) = I_{d/(d+t²)}(d/2, 1/2), evaluated and
    inverted in log space (:mod:`smoothdp.noise._beta_tail`), so ``cdf``, ``sf`` and ``ppf`` stay accurate
    however far out (``scipy.special.stdtrit`` returns wrong values below about 1e-300). ``logpdf`` never
    squares x, so it is finite up to the largest double. Sampling: numpy's ``standard_t`` (a normal over
    the root of an independent chi-square), which accepts real d.
    """

    name = "student_t"

    def __init__(self, df: float, scale: float = 1.0) -> None:
        super().__init__(scale)
        self.df = check_positive("df", df)
        d = self.df
        self._log_norm = special.gammaln((d + 1) / 2) - special.gammaln(d / 2) - 0.5 * math.log(d * math.pi)

    def _log_v(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return 2.0 * np.log(np.abs(z)) - math.log(self.df)  # ln(z²/d), z² never formed

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        log_y, _ = log_y_of(self._log_v(z))  # ln 1/(1 + z²/d)
        return self._log_norm + 0.5 * (self.df + 1.0) * log_y

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        half_tail = 0.5 * abs_sf(self._log_v(z), 0.5 * self.df, 0.5)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        log_v = abs_sf_inverse(2.0 * np.minimum(q, 1.0 - q), 0.5 * self.df, 0.5)
        with np.errstate(over="ignore"):
            magnitude = np.exp(0.5 * (log_v + math.log(self.df)))
        return np.sign(q - 0.5) * magnitude + 0.0  # + 0.0 turns −0.0 into 0.0

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        return rng.standard_t(self.df, size)

    def _var_std(self) -> float:
        return self.df / (self.df - 2.0) if self.df > 2.0 else math.inf

    def mean(self) -> float:
        return 0.0 if self.df > 1.0 else math.nan

    def _params(self) -> str:
        return f"df={self.df:g}, scale={self.scale:g}"
