"""Noise distributions in the style of ``scipy.stats``: pdf, logpdf, cdf, sf, ppf, sample, mean, var, std.

Real-line families: :class:`Laplace`, :class:`Gaussian`, :class:`StudentT`, :class:`GeneralizedCauchy`,
:class:`PolyPlace`, :class:`Staircase` (the ε-DP noise of least E|Z| for a sensitivity Δ). On the
integers: :class:`DiscreteLaplace` (pdf is the pmf, samples are int64). In the plane:
:class:`PlanarLaplace` (points of shape (..., 2); cdf/sf/ppf are those of the radius). Exact integer
samplers (discrete Laplace, geometric, discrete Gaussian, in integer arithmetic): :mod:`.exact_integer`,
:mod:`.discrete_gaussian`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = [
    "FLOAT_SAMPLER",
    "HARDENED_SAMPLER",
    "DiscreteLaplace",
    "Gaussian",
    "GeneralizedCauchy",
    "Laplace",
    "NoiseDistribution",
    "PlanarLaplace",
    "PolyPlace",
    "Staircase",
    "StudentT",
]

_EXPORTS = {
    "FLOAT_SAMPLER": "smoothdp.noise._base",
    "HARDENED_SAMPLER": "smoothdp.noise._base",
    "NoiseDistribution": "smoothdp.noise._base",
    "DiscreteLaplace": "smoothdp.noise.discrete_laplace",
    "Gaussian": "smoothdp.noise.gaussian",
    "GeneralizedCauchy": "smoothdp.noise.generalized_cauchy",
    "Laplace": "smoothdp.noise.laplace",
    "PlanarLaplace": "smoothdp.noise.planar_laplace",
    "PolyPlace": "smoothdp.noise.polyplace",
    "Staircase": "smoothdp.noise.staircase",
    "StudentT": "smoothdp.noise.student_t",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "_base",
    "_beta_tail",
    "discrete_gaussian",
    "discrete_laplace",
    "exact_integer",
    "gaussian",
    "generalized_cauchy",
    "laplace",
    "planar_laplace",
    "polyplace",
    "staircase",
    "student_t",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.noise._base import FLOAT_SAMPLER, HARDENED_SAMPLER, NoiseDistribution
    from smoothdp.noise.discrete_laplace import DiscreteLaplace
    from smoothdp.noise.gaussian import Gaussian
    from smoothdp.noise.generalized_cauchy import GeneralizedCauchy
    from smoothdp.noise.laplace import Laplace
    from smoothdp.noise.planar_laplace import PlanarLaplace
    from smoothdp.noise.polyplace import PolyPlace
    from smoothdp.noise.staircase import Staircase
    from smoothdp.noise.student_t import StudentT
