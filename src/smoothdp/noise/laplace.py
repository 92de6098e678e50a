"""Laplace(b): density e^{−|x|/b}/(2b), variance 2b²."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact.laws import LaplaceLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size

__all__ = ["Laplace"]


class Laplace(NoiseDistribution):
    r"""The Laplace distribution with location 0 and scale ``b``:
    $\mathrm{pdf}(x) = e^{-\vert x\vert/b} / (2b)$.

    Hardened sampling (default): a sign bit and $\vert Z\vert = -b \ln q$ from a lazily refined uniform q, so
    the tail has no floor (the float sampler's tail stopped near $\vert Z\vert \approx 36b$).
    ``numerics="float"``: numpy.
    """

    name = "laplace"

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.abs(z) - np.log(2.0)

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.where(q < 0.5, np.log(2.0 * q), -np.log(2.0 * (1.0 - q)))

    def _exact_law(self) -> LaplaceLaw:
        return LaplaceLaw(self.scale)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        return rng.laplace(0.0, 1.0, size)

    def breakpoints(self) -> tuple[float, ...]:
        """0, where the slope of the log density jumps from +1/b to −1/b."""
        return (0.0,)

    def _var_std(self) -> float:
        return 2.0


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
