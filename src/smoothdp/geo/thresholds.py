r"""Threshold-type queries: soft one-way threshold, two-way threshold, bounded range.

From Liang & Yi, CCS 2024 ("LY"), Sections 4.1–4.2 and Appendix C.3. Each is a ramp
$f(x) = \max(0, 1 - \mathrm{dist}(x, A)/w)$ around a closed convex set A
(docs/theory/geo-privacy.md#ramps-around-a-convex-set), so its pointwise Lipschitz constant and smooth
sensitivity come from the signed distance u(x) to A alone
(:func:`smoothdp.sensitivity.ramps.convex_ramp_smooth_sensitivity`):

* ``SoftThreshold``: $A = [t + w/2, \infty)$, $u(x) = t + w/2 - x$;
* ``BoundedRange``: $A = [a + w/2, b - w/2]$, $u(x) = \max(a + w/2 - x, x - b + w/2)$;
* ``TwoWayThreshold``: $A = \{y : \mathrm{dist}(y, Q_0) \le R_1\}$, $Q_0 = \{y \ge c\}$,
  $u(x) = \mathrm{sd}_{Q_0}(x) - R_1$;

with, for the two-way threshold (LY Section 4.2): $R_1 = w/\sqrt{2}$, $R_2 = R_1 + w$,
$c = T + (R_1 + w/2)(1, 1)$, so that A is the quadrant $\{x_1 \ge T_1 + w/2, x_2 \ge T_2 + w/2\}$ with its
corner rounded by the disc $(c, R_1)$, and the outer arc (radius $R_2$) passes through the hard corner T
($f(T) = 0$).

Exact release path: the query is f in exact arithmetic of the float parameters (t, w, ...). The float value
$g = 1 - u/w$ (before the clip) is within a per-query bound E of the exact $g^*$, derived in docs/geo.md
("Exact release path"): $E = 2 \cdot \mathrm{ulp}(\mathrm{edge})/w + 2^{-48}$ for the 1-D ramps
($\mathrm{edge} = t + w/2$, or the plateau ends),
$E = (3 \cdot \mathrm{ulp}(\max\vert c\vert) + 4 \cdot \mathrm{ulp}(R_1 + w)$
$+ 16 \cdot \mathrm{ulp}(4w))/w + 2^{-48}$
for the two-way threshold. The enclosure is $[\mathrm{clip}(g - E), \mathrm{clip}(g + E)]$; an undecided user
is refined exactly (``Fraction``) in 1-D and in python-flint ``arb`` in 2-D ($R_1 = w/\sqrt{2}$ is
irrational).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import Enclosure
from smoothdp.geo._exact import (
    ROUNDING_SLACK,
    arb_clip01,
    arb_max,
    arb_of,
    arb_positive_part,
    clip01,
    enclosure_from_unclipped,
    working_precision,
)
from smoothdp.geo._laplace_moments import above_probability, quadrant_probability, ramp_moments
from smoothdp.geo._query import GeoQuery, as_parameter
from smoothdp.keywords import check_keywords_of
from smoothdp.sensitivity.growth import Growth
from smoothdp.sensitivity.ramps import convex_ramp_lipschitz, convex_ramp_smooth_sensitivity

__all__ = ["BoundedRange", "SoftThreshold", "TwoWayThreshold"]


class _ConvexRamp(GeoQuery):
    """A ramp of width w around a convex set, given by its signed distance :meth:`signed_distance`."""

    width: NDArray[np.float64]
    has_hard = True
    value_note = (
        "certified float enclosure (per-query error bound, docs/geo.md), exact refinement when undecided"
    )
    sensitivity_note = "closed form (convex ramp), rounded up"
    #: E per query (shape P): |g − g*| ≤ E for the unclipped float value g = 1 − u/w.
    _value_error: NDArray[np.float64]

    @property
    def lipschitz(self) -> NDArray[np.float64]:
        """Global Lipschitz constant 1/w (LY Claim 4.2 for the two-way threshold)."""
        return np.broadcast_to(1.0 / self.width, self.param_shape)

    @property
    def value_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def signed_distance(self, x: ArrayLike) -> NDArray[np.float64]:
        """u(x): distance to A outside it, minus the depth inside it (shape ``param_shape + U``)."""
        return self._signed_distance(self.check_points(x))

    def hard_value(self, x: ArrayLike) -> NDArray[np.float64]:
        """The hard (indicator) query this ramp smooths, as 0.0/1.0 (shape ``param_shape + U``)."""
        return self._hard(self.check_points(x))

    def _w(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.expand(self.width, len(self.user_shape(x)))

    def _value(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip(1.0 - self._signed_distance(x) / self._w(x), 0.0, 1.0)

    def _lipschitz_at(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return convex_ramp_lipschitz(self._signed_distance(x), self._w(x))

    def _smooth_sensitivity(self, x: NDArray[np.float64], beta: float, growth: Growth) -> NDArray[np.float64]:
        return convex_ramp_smooth_sensitivity(self._signed_distance(x), self._w(x), beta, growth)

    def value_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """f(x) and S*(x) from one signed-distance computation (checked input; the mechanisms' fast path)."""
        u = self._signed_distance(x)
        w = self._w(x)
        return np.clip(1.0 - u / w, 0.0, 1.0), convex_ramp_smooth_sensitivity(u, w, beta, growth)

    def _enclosure_of(self, x: NDArray[np.float64], u: NDArray[np.float64], w: NDArray) -> Enclosure:
        """The enclosure from the signed distance u (consumed: its buffer is reused)."""
        g = np.divide(u, w, out=u if u.flags.writeable and u.dtype == np.float64 else None)
        np.subtract(1.0, g, out=g)
        error = self.expand(self._value_error, len(self.user_shape(x)))
        return enclosure_from_unclipped(g, error, self._refiner(x, g.shape))

    def _enclosure(self, x: NDArray[np.float64]) -> Enclosure:
        return self._enclosure_of(x, self._signed_distance(x), self._w(x))

    def enclosure_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[Enclosure, NDArray[np.float64]]:
        """Enclosure of f(x) and S*(x) from one signed-distance computation (the exact path's fast entry)."""
        u = self._signed_distance(x)
        w = self._w(x)
        s = convex_ramp_smooth_sensitivity(u, w, beta, growth)
        return self._enclosure_of(x, u, w), s

    @staticmethod
    def _edge_error(edges: NDArray[np.float64], width: NDArray[np.float64]) -> NDArray[np.float64]:
        """E = 2·ulp(edge)/w + 2^-48 (docs/geo.md): the float error of g = 1 − (edge − x)/w."""
        return 2.0 * np.spacing(np.abs(edges)) / width + ROUNDING_SLACK

    def _signed_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _hard(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError


class SoftThreshold(_ConvexRamp):
    r"""Soft one-way threshold $f_\theta(x) = \mathrm{clip}((x - t)/\theta + 1/2, 0, 1)$ on R (LY Section
    4.1.2).

    Smooths the hard threshold $\mathbf{1}[x > t]$ over the band $[t - \theta/2, t + \theta/2]$ ($\theta$ =
    ``width``, the *full* band width). Global Lipschitz constant $1/\theta$. LY Lemma 4.1 ($\Lambda = \infty$,
    $G = e^{\beta t}$; docs/theory/geo-privacy.md#soft-one-way-threshold):

    $$
    L(x) = 1/\theta \text{ if } \vert x - t\vert \le \theta/2, \text{ else } 1/(\vert x - t\vert + \theta/2),
    $$

    $$
    S^*(x) = 1/\theta \text{ in the band, else }
    \max\{ 1/(\vert x - t\vert + \theta/2), e^{-\beta(\vert x - t\vert - \theta/2)}/\theta \},
    $$

    and for $G = 1 + \beta t$ the second term is $1/(\theta(1 + \beta(\vert x - t\vert - \theta/2)))$.

    Parameters
    ----------
    threshold, width
        Scalars or arrays (broadcast together to the grid of queries ``param_shape``); $\mathrm{width} > 0$.
    """

    name = "soft one-way threshold"

    def __init__(self, threshold: ArrayLike, width: ArrayLike) -> None:
        t = as_parameter("threshold", threshold)
        w = as_parameter("width", width, positive=True)
        self.param_shape = np.broadcast_shapes(t.shape, w.shape)
        self.threshold = np.broadcast_to(t, self.param_shape)
        self.width = np.broadcast_to(w, self.param_shape)
        self._edge = self.threshold + self.width / 2.0
        self._value_error = self._edge_error(self._edge, self.width)

    @property
    def default_point(self) -> NDArray[np.float64]:
        """The middle of the thresholds (f = 1/2 there for a single query)."""
        return self._middle_of(self.threshold)

    def _signed_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.expand(self._edge, x.ndim) - x

    def _exact_value(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Fraction:
        """clip((x − t)/w + 1/2, 0, 1) in rationals."""
        t, w = Fraction(float(self.threshold[p_index])), Fraction(float(self.width[p_index]))
        return clip01((Fraction(float(point)) - t) / w + Fraction(1, 2))

    def _hard(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return (x > self.expand(self.threshold, x.ndim)).astype(np.float64)

    def _laplace_location_moments(
        self, x: NDArray[np.float64], scale: float, *, hard: bool, quadrature: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Closed form (LY Section 4.1.1 for the hard threshold; a ramp under Laplace noise otherwise)."""
        edge = self.expand(self.threshold, x.ndim)
        if hard:
            p = above_probability(x - edge, scale)
            return p, p * (1.0 - p)
        w = self.expand(self.width, x.ndim)
        mean, second = ramp_moments(x - edge + w / 2.0, w, scale)
        return mean, np.maximum(second - mean * mean, 0.0)


class BoundedRange(_ConvexRamp):
    r"""Soft range query $\approx \mathbf{1}[a \le x \le b]$ on R: the trapezoid
    $\max(0, 1 - \mathrm{dist}(x, [a + \theta/2, b - \theta/2])/\theta)$.

    LY Appendix C.3 (docs/theory/geo-privacy.md#bounded-range); needs $b - a \ge \theta$. Ramps
    $[a - \theta/2, a + \theta/2]$ and $[b - \theta/2, b + \theta/2]$, plateau 1, global Lipschitz constant
    $1/\theta$. With $\delta$ the distance to the plateau and D the depth inside it: $S^* = 1/\theta$ on the
    ramps, $\max\{1/\delta, e^{-\beta(\delta-\theta)}/\theta\}$ outside,
    $\max\{1/(D+\theta), e^{-\beta D}/\theta\}$ on the plateau.

    Parameters
    ----------
    bounds
        (a, b): the range, scalars or arrays (broadcast with ``width`` to the grid of queries).
    width
        $\theta > 0$, scalar or array.
    """

    name = "bounded range"

    def __init__(self, bounds: tuple[ArrayLike, ArrayLike], width: ArrayLike) -> None:
        if isinstance(bounds, str) or not hasattr(bounds, "__len__") or len(bounds) != 2:
            raise ValueError(f"bounds must be a pair (lower, upper); got {bounds!r}")
        a = as_parameter("bounds[0] (lower)", bounds[0])
        b = as_parameter("bounds[1] (upper)", bounds[1])
        w = as_parameter("width", width, positive=True)
        self.param_shape = np.broadcast_shapes(a.shape, b.shape, w.shape)
        self.lower, self.upper, self.width = (np.broadcast_to(v, self.param_shape) for v in (a, b, w))
        if np.any(self.upper - self.lower < self.width):
            raise ValueError(
                "upper - lower must be >= width (the plateau [lower + width/2, upper - width/2] must "
                f"exist); got bounds={bounds!r}, width={width!r}"
            )
        self._plateau_lo = self.lower + self.width / 2.0
        self._plateau_hi = self.upper - self.width / 2.0
        self._value_error = np.maximum(
            self._edge_error(self._plateau_lo, self.width), self._edge_error(self._plateau_hi, self.width)
        )

    @property
    def default_point(self) -> NDArray[np.float64]:
        """The middle of [min lower, max upper] over the grid (the range's midpoint for one query)."""
        return self._middle_of(np.concatenate([self.lower.ravel(), self.upper.ravel()]))

    def _exact_value(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Fraction:
        """clip(1 − max(a + w/2 − x, x − b + w/2)/w, 0, 1) in rationals."""
        a, b = Fraction(float(self.lower[p_index])), Fraction(float(self.upper[p_index]))
        w, x = Fraction(float(self.width[p_index])), Fraction(float(point))
        u = max(a + w / 2 - x, x - b + w / 2)
        return clip01(1 - u / w)

    @property
    def bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(lower, upper), each of shape ``param_shape``."""
        return self.lower, self.upper

    def _signed_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        lo = self.expand(self._plateau_lo, x.ndim)
        hi = self.expand(self._plateau_hi, x.ndim)
        return np.maximum(lo - x, x - hi)

    def _hard(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        lo, hi = self.expand(self.lower, x.ndim), self.expand(self.upper, x.ndim)
        return ((x >= lo) & (x <= hi)).astype(np.float64)

    def _laplace_location_moments(
        self, x: NDArray[np.float64], scale: float, *, hard: bool, quadrature: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Closed form: the range is the difference of two one-way ramps (or indicators)."""
        lo, hi = self.expand(self.lower, x.ndim), self.expand(self.upper, x.ndim)
        if hard:  # P(lo ≤ x + Z ≤ hi)
            p = above_probability(x - lo, scale) - above_probability(x - hi, scale)
            return p, p * (1.0 - p)
        w = self.expand(self.width, x.ndim)
        m1, s1 = ramp_moments(x - lo + w / 2.0, w, scale)
        m2, s2 = ramp_moments(x - hi + w / 2.0, w, scale)
        mean = m1 - m2
        return mean, np.maximum(s1 + s2 - 2.0 * m2 - mean * mean, 0.0)


class TwoWayThreshold(_ConvexRamp):
    r"""Two-way threshold $f_\tau \approx \mathbf{1}[x_1 > T_1] \cdot \mathbf{1}[x_2 > T_2]$ on R² (LY Section
    4.2, Claim 4.2, Lemma 4.3).

    The rounded-corner construction with band width $\tau$ (``width``): $R_1 = \tau/\sqrt{2}$,
    $R_2 = R_1 + \tau$, $c = T + (R_1 + \tau/2)(1, 1)$. $f_\tau = 1$ on the quadrant $\{x \ge T + \tau/2\}$
    with its corner rounded by the disc $(c, R_1)$; $f_\tau = (R_2 - \Vert x - c\Vert)/\tau$ on the annular
    quarter, $(x_1 - T_1 + \tau/2)/\tau$ and $(x_2 - T_2 + \tau/2)/\tau$ on the straight strips; 0 elsewhere.
    Equivalently $f_\tau = \max(0, 1 - \mathrm{dist}(x, A)/\tau)$ with A convex, so Lemma 4.3's region table
    is :func:`~smoothdp.sensitivity.ramps.convex_ramp_smooth_sensitivity` of the distance to the rounded band
    (arcs around c in the corner regions, not axis-aligned distances);
    docs/theory/geo-privacy.md#two-way-threshold.

    Parameters
    ----------
    thresholds
        $(T_1, T_2)$, or an array of shape P + (2,) for a grid of queries.
    width
        $\tau > 0$, scalar or shape P.
    """

    dimension = 2
    name = "two-way threshold"

    def __init__(self, thresholds: ArrayLike, width: ArrayLike) -> None:
        t = as_parameter("thresholds", thresholds, point_dim=2)
        w = as_parameter("width", width, positive=True)
        self.param_shape = np.broadcast_shapes(t.shape[:-1], w.shape)
        self.thresholds = np.broadcast_to(t, (*self.param_shape, 2))
        self.width = np.broadcast_to(w, self.param_shape)
        self.inner_radius = self.width / np.sqrt(2.0)
        self.outer_radius = self.inner_radius + self.width
        self.centre = self.thresholds + (self.inner_radius + self.width / 2.0)[..., None]
        w4 = 4.0 * self.width
        self._value_error = (
            3.0 * np.spacing(np.abs(self.centre).max(axis=-1))
            + 4.0 * np.spacing(self.inner_radius + self.width)
            + 16.0 * np.spacing(w4)
        ) / self.width + ROUNDING_SLACK

    @property
    def default_point(self) -> NDArray[np.float64]:
        """The middle of the thresholds (T for a single query), per coordinate."""
        return self._middle_of(self.thresholds)

    def _exact_value(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Any:
        """f_τ(x) as an ``arb`` ball: R₁ = τ/√2 exactly, c = T + (R₁ + τ/2)(1, 1), ramp of the distance."""
        with working_precision(bits):
            w = arb_of(float(self.width[p_index]))
            r1 = w / arb_of(2.0).sqrt()
            shift = r1 + w / 2
            p = [arb_of(float(self.thresholds[p_index][k])) + shift - arb_of(float(point[k])) for k in (0, 1)]
            q = [arb_positive_part(pk) for pk in p]
            outside = (q[0] * q[0] + q[1] * q[1]).sqrt()
            inside = arb_max(p[0], p[1])
            if p[0] > 0 or p[1] > 0:
                sd = outside
            elif p[0] < 0 and p[1] < 0:
                sd = inside
            else:  # a coordinate at the quadrant's edge at this precision: both forms agree there
                sd = outside.union(inside)
            return arb_clip01(1 - (sd - r1) / w)

    def _coords(self, values: NDArray[np.float64], user_ndim: int) -> tuple[NDArray, NDArray]:
        shape = self.param_shape + (1,) * user_ndim
        return values[..., 0].reshape(shape), values[..., 1].reshape(shape)

    def _signed_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        user_ndim = x.ndim - 1
        c1, c2 = self._coords(self.centre, user_ndim)
        p1, p2 = c1 - x[..., 0], c2 - x[..., 1]  # > 0: below the quadrant Q₀ = {y ≥ c} in that axis
        q1, q2 = np.maximum(p1, 0.0), np.maximum(p2, 0.0)
        outside = np.sqrt(q1 * q1 + q2 * q2)
        sd_quadrant = np.where(outside > 0, outside, np.maximum(p1, p2))
        return sd_quadrant - self.expand(self.inner_radius, user_ndim)

    def _hard(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        t1, t2 = self._coords(self.thresholds, x.ndim - 1)
        return ((x[..., 0] > t1) & (x[..., 1] > t2)).astype(np.float64)

    def _laplace_location_moments(
        self, x: NDArray[np.float64], scale: float, *, hard: bool, quadrature: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """The hard quadrant under planar Laplace: an angular integral (4·``quadrature`` angles).

        None for the soft query (the mechanism integrates it numerically).
        """
        if not hard:
            return None
        t1, t2 = self._coords(self.thresholds, x.ndim - 1)
        p = quadrant_probability(t1 - x[..., 0], t2 - x[..., 1], scale, 4 * quadrature)
        return p, p * (1.0 - p)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
