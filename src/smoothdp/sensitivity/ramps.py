"""Closed-form pointwise Lipschitz constants and smooth sensitivities of ramps around a convex set.

A *ramp* is f(x) = max(0, 1 − dist(x, A)/w) for a closed convex set A ⊂ R^d and a width w > 0
(docs/theory/geo-privacy.md#ramps-around-a-convex-set). Its pointwise Lipschitz constant and its smooth
sensitivity depend on x only through the signed distance u(x) to A, which gives the soft one-way
threshold, the two-way threshold and the bounded range of Liang & Yi (CCS 2024, Lemmas 4.1 and 4.3,
Appendix C.3) in one formula each (:mod:`smoothdp.geo.thresholds`).

Definitions (Liang & Yi, CCS 2024, Definitions 7–9, with Λ = ∞;
docs/theory/geo-privacy.md#pointwise-lipschitz-constant)::

    L_f(x) = sup_{x' ≠ x} |f(x) − f(x')| / ‖x − x'‖,     S*(x) = sup_{x'} L_f(x') / G_β(‖x − x'‖).

Floating point: closed forms are rounded up once by :func:`~smoothdp.sensitivity.rounding.round_up`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.sensitivity.growth import Growth, check_growth, log_growth
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_positive

__all__ = ["convex_ramp_lipschitz", "convex_ramp_smooth_sensitivity"]


def _fresh(result: NDArray[np.float64] | np.float64) -> NDArray[np.float64]:
    """A ufunc's fresh result as an array (0-d inputs give a numpy scalar, which ``out=`` cannot take)."""
    return result if isinstance(result, np.ndarray) else np.array(result)


def _band_distance(u: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """d_band = dist(x, band) = max(u − w, −u, 0) = max(|u − w/2| − w/2, 0), as a fresh array.

    The second form takes four in-place passes and no temporary; it is 0 exactly in the band 0 ≤ u ≤ w
    (|u − w/2| ≤ w/2 survives rounding, w/2 being exact) and otherwise within an ulp or two of u − w or −u.
    """
    half = w * 0.5
    d = _fresh(np.subtract(u, half))
    np.abs(d, out=d)
    np.subtract(d, half, out=d)
    return np.maximum(d, 0.0, out=d)


def _ramp_lipschitz(d_band: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """L(x) = 1/(w + d_band), **not rounded** (callers round the final result up once), fresh array.

    The identity: w + d_band = max(w, u) = u for u ≥ w, = w in the band, = w − u for u ≤ 0 (the three
    secants of :func:`convex_ramp_lipschitz`). A few correctly rounded operations, far inside round_up's
    relative margin.
    """
    lip = _fresh(np.add(d_band, w))
    return np.divide(1.0, lip, out=lip)


def convex_ramp_lipschitz(signed_distance: ArrayLike, width: ArrayLike) -> NDArray[np.float64]:
    """Pointwise Lipschitz constant of f(x) = max(0, 1 − dist(x, A)/w) for a closed convex A (Λ = ∞).

    With u the signed distance to A (u = dist(x, A) ≥ 0 outside, u = −depth ≤ 0 inside)::

        L(x) = 1/u        if u ≥ w           (secant to the nearest point of A)
             = 1/w        if 0 ≤ u ≤ w       (in the band)
             = 1/(w − u)  if u ≤ 0           (secant to the outer edge of the band, along the normal)

    i.e. L(x) = 1/(w + d_band) with d_band = max(u − w, −u, 0). Rounded up once.

    Source: docs/theory/geo-privacy.md#ramps-around-a-convex-set (a reformulation of Liang & Yi, CCS 2024,
    Lemmas 4.1 and 4.3).
    """
    u = np.asarray(signed_distance, dtype=np.float64)
    w = np.asarray(width, dtype=np.float64)
    return round_up(_ramp_lipschitz(_band_distance(u, w), w))


def convex_ramp_smooth_sensitivity(
    signed_distance: ArrayLike, width: ArrayLike, beta: float, growth: Growth = "exponential"
) -> NDArray[np.float64]:
    """Smooth sensitivity S*(x) of the ramp f(x) = max(0, 1 − dist(x, A)/w) around a closed convex A.

    With u the signed distance to A and d_band = dist(x, band) = max(u − w, −u, 0)::

        S*(x) = max{ L(x),  (1/w) / G_β(d_band) },    L(x) = 1/(w + d_band)

    i.e. for G = e^{βt}: max{1/u, e^{−β(u−w)}/w} outside, 1/w in the band, max{1/(w+D), e^{−βD}/w} inside
    at depth D (Liang & Yi, CCS 2024, Lemmas 4.1, 4.3, Appendix C.3). Proof: every point x' has
    ‖x − x'‖ ≥ |u(x) − u(x')| (u is 1-Lipschitz; inside, the ball of radius D around x lies in A), with
    equality along the normal through x, so the sup reduces to one variable s = u(x'); there,
    ln L(s) + ln(1/G(|u − s|)) is convex in s on each side of the band for both growths, so the sup is at
    s = u (L(x)) or at the band edge.

    Floating point: both terms are computed unrounded and the max is rounded up once (:func:`round_up`),
    so the result is ≥ :func:`convex_ramp_lipschitz` elementwise. Fast path of the geo mechanisms: a
    handful of in-place passes and one ``exp`` per point.
    """
    check_growth(growth)
    b = check_positive("beta", beta)
    u = np.asarray(signed_distance, dtype=np.float64)
    w = np.asarray(width, dtype=np.float64)
    d_band = _band_distance(u, w)
    lip = _ramp_lipschitz(d_band, w)
    # The band edge term (1/w)/G_β(d_band), computed in d_band's buffer.
    if growth == "exponential":
        edge = np.multiply(d_band, -b, out=d_band)  # −ln G = −βd
    else:
        edge = np.negative(log_growth(d_band, b, growth), out=d_band)
    np.exp(edge, out=edge)
    np.divide(edge, w, out=edge)
    return round_up(np.maximum(lip, edge, out=lip))


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
