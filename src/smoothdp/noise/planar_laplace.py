"""Planar Laplace on ℝ²: density e^{−‖y‖/b} / (2πb²) (Andrés et al., geo-indistinguishability)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from smoothdp.exact.planar import PlanarLaplaceLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.validation import check_data

__all__ = ["PlanarLaplace"]


class PlanarLaplace(NoiseDistribution):
    r"""The planar (2-D, Euclidean) Laplace law with scale b: $f(y) = e^{-\Vert y\Vert/b} / (2\pi b^2)$,
    $y \in \mathbb{R}^2$.

    Adding it to a point gives $(1/b)$-geo-indistinguishability for the Euclidean metric. In polar coordinates
    the radius $R = \Vert Y\Vert$ is $\mathrm{Gamma}(2, b)$ (density $r e^{-r/b}/b^2$) and the angle is
    uniform on $[0, 2\pi)$, independent of R.

    Conventions (a 2-D law in a 1-D protocol; ``dimension = 2``)
    -------------------------------------------------------------
    * ``pdf``/``logpdf`` take points of shape (..., 2) and return shape (...).
    * ``cdf``, ``sf`` and ``ppf`` are those of the **radius** R: $P(R \le r) = 1 - e^{-r/b}(1 + r/b)$, via the
      regularized incomplete gamma functions (accurate in both tails).
    * ``sample(size)`` returns shape ``size + (2,)`` (shape (2,) for ``size=None``):
      $R \sim \mathrm{Gamma}(2, b)$ from numpy's ``standard_gamma`` and a uniform angle.
    * ``var()`` is the variance **of each coordinate**: $E\Vert Y\Vert^2 = E R^2 = 6b^2$, split evenly by
      symmetry, so $\mathrm{Var}\, Y_1 = \mathrm{Var}\, Y_2 = 3b^2$ (and the coordinates are uncorrelated).
      ``std()`` is $\sqrt{3} \cdot b$. ``mean()`` is 0 (each coordinate).
    """

    name = "planar_laplace"
    dimension = 2

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.hypot(z[..., 0], z[..., 1]) - math.log(2.0 * math.pi)

    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """ln f(y) for points y of shape (..., 2)."""
        points = np.asarray(x, dtype=np.float64)
        if points.ndim == 0 or points.shape[-1] != 2:
            check_data(points, "x", last_dim=2, min_size=0)  # raises the shape error
        # Two dimensions: the Jacobian of y = b·z is b².
        return self._logpdf_std(points / self.scale) - 2.0 * math.log(self.scale)

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return special.gammainc(2.0, np.maximum(z, 0.0))

    def _sf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return special.gammaincc(2.0, np.maximum(z, 0.0))

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        # Invert from the nearer tail (1 − q is exact for q ≥ 1/2).
        lower = special.gammaincinv(2.0, np.minimum(q, 0.5))
        upper = special.gammainccinv(2.0, np.minimum(1.0 - q, 0.5))
        return np.where(q <= 0.5, lower, upper)

    def _exact_law(self) -> PlanarLaplaceLaw:
        return PlanarLaplaceLaw(self.scale)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        radius = rng.standard_gamma(2.0, size)
        angle = rng.uniform(0.0, 2.0 * math.pi, size)
        return np.stack((radius * np.cos(angle), radius * np.sin(angle)), axis=-1)

    def _var_std(self) -> float:
        return 3.0


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
