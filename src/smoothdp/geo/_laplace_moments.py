"""Closed forms for ramps and indicators under Laplace location noise (noise a priori).

Used by the queries' :meth:`~smoothdp.geo.GeoQuery._laplace_location_moments`; the formulas are in
docs/theory/geo-privacy.md#mean-squared-error-formulas (Liang & Yi, CCS 2024, Section 4.1.1 for the hard
one-way threshold). Z ~ Lap(b) in 1-D; planar Laplace (radius Gamma(2, b), uniform angle) in 2-D.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import special

__all__ = ["above_probability", "quadrant_probability", "ramp_moments"]


def _plus_mean(m: NDArray, b: float) -> NDArray:
    """E (m + Z)^+ for Z ~ Lap(b): max(m, 0) + (b/2)e^{−|m|/b}."""
    return np.maximum(m, 0.0) + 0.5 * b * np.exp(-np.abs(m) / b)


def _plus_square(m: NDArray, b: float) -> NDArray:
    """E ((m + Z)^+)² for Z ~ Lap(b): b²e^{m/b} (m < 0), m² + 2b² − b²e^{−m/b} (m ≥ 0)."""
    e = np.exp(-np.abs(m) / b)
    return np.where(m < 0, b * b * e, m * m + 2 * b * b - b * b * e)


def ramp_moments(m: NDArray, w: NDArray, b: float) -> tuple[NDArray, NDArray]:
    """E r, E r² for r = clip((m + Z)/w, 0, 1) = ((m+Z)^+ − (m+Z−w)^+)/w, Z ~ Lap(b)."""
    mean = (_plus_mean(m, b) - _plus_mean(m - w, b)) / w
    second = (_plus_square(m, b) - _plus_square(m - w, b) - 2 * w * _plus_mean(m - w, b)) / (w * w)
    return mean, second


def above_probability(m: NDArray, b: float) -> NDArray:
    """P(m + Z > 0) for Z ~ Lap(b)."""
    return np.where(m > 0, 1.0 - 0.5 * np.exp(-m / b), 0.5 * np.exp(m / b))


def quadrant_probability(gap1: NDArray, gap2: NDArray, b: float, angles: int) -> NDArray:
    """P(Z₁ > gap1, Z₂ > gap2) for planar Laplace Z of scale b: the angular integral of radius-CDF gaps.

    For each direction θ the ray r(cos θ, sin θ) lies in the quadrant for r in [lo, hi]; the radius is
    Gamma(2, b), so the probability is the mean over ``angles`` midpoint angles of F(hi) − F(lo).
    """
    theta = (np.arange(angles) + 0.5) * (2 * np.pi / angles)
    total = np.zeros(np.broadcast_shapes(gap1.shape, gap2.shape))
    for th in theta:  # a loop over quadrature angles, vectorized over queries and users
        lo = np.zeros_like(total)
        hi = np.full_like(total, np.inf)
        for gap, comp in ((gap1, math.cos(th)), (gap2, math.sin(th))):
            if comp > 0:
                lo = np.maximum(lo, gap / comp)
            else:
                hi = np.minimum(hi, np.where(gap < 0, gap / comp, 0.0))
        total += np.where(hi > lo, special.gammainc(2.0, hi / b) - special.gammainc(2.0, lo / b), 0.0)
    return total / angles
