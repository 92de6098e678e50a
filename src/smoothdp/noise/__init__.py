"""Noise distributions in the style of ``scipy.stats``: pdf, logpdf, cdf, sf, ppf, sample, mean, var, std."""

from smoothdp.noise._base import FLOAT_SAMPLER, NoiseDistribution
from smoothdp.noise.laplace import Laplace

__all__ = ["FLOAT_SAMPLER", "Laplace", "NoiseDistribution"]
