"""Noise distributions in the style of ``scipy.stats``: pdf, logpdf, cdf, sf, ppf, sample, mean, var, std.

Real-line families: :class:`Laplace`, :class:`Gaussian`, :class:`StudentT`, :class:`GeneralizedCauchy`,
:class:`PolyPlace`. On the integers: :class:`DiscreteLaplace` (pdf is the pmf, samples are int64). In the
plane: :class:`PlanarLaplace` (points of shape (..., 2); cdf/sf/ppf are those of the radius).
"""

from smoothdp.noise._base import FLOAT_SAMPLER, HARDENED_SAMPLER, NoiseDistribution
from smoothdp.noise.discrete_laplace import DiscreteLaplace
from smoothdp.noise.gaussian import Gaussian
from smoothdp.noise.generalized_cauchy import GeneralizedCauchy
from smoothdp.noise.laplace import Laplace
from smoothdp.noise.planar_laplace import PlanarLaplace
from smoothdp.noise.polyplace import PolyPlace
from smoothdp.noise.student_t import StudentT

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
    "StudentT",
]
