"""Gaussian N(0, σ²): density e^{−x²/(2σ²)} / (σ√(2π)), variance σ²."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import special

from smoothdp.exact.normal import GaussianLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size

__all__ = ["Gaussian"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class Gaussian(NoiseDistribution):
    r"""The centred normal law with standard deviation ``scale`` $= \sigma$.

    ``cdf`` uses :func:`scipy.special.ndtr` on the negative half-line ($\mathrm{sf}(x) = \mathrm{cdf}(-x)$),
    ``ppf`` uses :func:`scipy.special.ndtri`, accurate in both tails. Sampling: numpy's ``standard_normal``.
    """

    name = "gaussian"

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(over="ignore"):
            return -0.5 * z * z - _LOG_SQRT_2PI

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        lower = special.ndtr(-np.abs(z))
        return np.where(z < 0, lower, 1.0 - lower)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        magnitude = -special.ndtri(np.minimum(q, 1.0 - q))
        return np.sign(q - 0.5) * magnitude + 0.0  # + 0.0 turns −0.0 into 0.0

    def _exact_law(self) -> GaussianLaw:
        return GaussianLaw(self.scale)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        return rng.standard_normal(size)

    def _var_std(self) -> float:
        return 1.0


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
