"""Baselines for local geo-privacy queries (seed 000, §4.1.1, §5; notes/gp_paper.md §2.1).

* :class:`GlobalLipschitz`: f(x) + Lap(L_f/ε), L_f the global Lipschitz constant (Lemma 2.3, [CABP13]):
  ε-geo-privacy, unbiased, variance 2(L_f/ε)² per user.
* :class:`NoiseAPriori`: the user sends x̃ = x + Lap(1/ε) (1-D) or x + planar Laplace(1/ε) (2-D, radius
  Gamma(2, 1/ε)); the analyst computes f(x̃) (ε-geo-privacy by Lemma 2.3 with the identity map). One
  report serves every query, but the estimate is biased. For the KDE, ``variant="distance"`` privatizes
  ℓ = ‖x − t‖ instead (a 1-Lipschitz map: ε-geo-privacy) and computes exp(−ℓ̃²/(2h²)).
* :class:`LocalDP`: f(x) + Lap(range/ε_L): ε_L-local DP (any two inputs), variance 2(range/ε_L)².

Expected errors: :meth:`NoiseAPriori.moments` gives the exact mean and variance of f(x̃) per user, in
closed form for the 1-D thresholds and ranges under Laplace noise (Section 4.1.1), by quadrature
otherwise; :meth:`NoiseAPriori.mse` the MSE of the estimated sum and mean against the soft or the hard
query: Σ Var + (Σ bias)².
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from smoothdp.geo._common import USER_BLOCK, GeoEstimate, GeoMechanism, user_blocks
from smoothdp.geo._query import GeoQuery
from smoothdp.geo.kde import GaussianKDE
from smoothdp.geo.thresholds import BoundedRange, SoftThreshold, TwoWayThreshold
from smoothdp.noise import Laplace, PlanarLaplace
from smoothdp.privacy import GeoPrivacy, PureDP
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_data, check_epsilon, check_int

__all__ = [
    "GeoError",
    "GlobalLipschitz",
    "LocalDP",
    "NoiseAPriori",
    "quadrant_fractions",
    "threshold_fractions",
]

_LAPLACE = Laplace(1.0)


class _AdditiveLaplace(GeoMechanism):
    """f(x) + Lap(scale) with a per-query scale (shape ``param_shape``)."""

    scale: NDArray[np.float64]

    def _scale(self, user_ndim: int) -> NDArray[np.float64]:
        return self.query.expand(self.scale, user_ndim)

    def privatize(self, x: ArrayLike, rng: SeedLike = None) -> NDArray[np.float64]:
        """f(x) + Lap(scale) per user and query (shape P + U). ``rng=None``: secure generator."""
        pts = self.query.check_points(x)
        gen = resolve_rng(rng)
        f = self.query._value(pts)
        return f + self._scale(len(self.query.user_shape(pts))) * _LAPLACE.sample(f.shape, gen)

    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        users = self.query.user_shape(x)
        return np.broadcast_to(2.0 * self._scale(len(users)) ** 2, self.query.param_shape + users).copy()

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """ln p_x(y) for one user at x (single query)."""
        if self.query.param_shape:
            raise ValueError("log_density needs a single query (param_shape == ())")
        f = self.query.value(x)
        b = float(self.scale)
        return _LAPLACE.logpdf((np.asarray(y, dtype=np.float64) - f) / b) - math.log(b)


class GlobalLipschitz(_AdditiveLaplace):
    """f(x) + Lap(L_f/ε): (ε, 0)-geo-privacy (seed 000, Lemma 2.3 [CABP13]; the paper's noise a posteriori).

    L_f is the query's global Lipschitz constant (1/θ, 1/τ, e^{−1/2}/h). Unbiased; Var = 2(L_f/ε)².
    """

    name = "global Lipschitz"
    source = "Liang & Yi, CCS'24 (seed 000), Lemma 2.3 (Chatzikokolakis et al. 2013): f(x) + Lap(L_f/ε)"

    def __init__(self, query: GeoQuery, epsilon: float) -> None:
        self.query = query
        eps = check_epsilon(epsilon)
        self.scale = np.asarray(query.lipschitz, dtype=np.float64) / eps
        self.guarantee = GeoPrivacy(eps)


class LocalDP(_AdditiveLaplace):
    """f(x) + Lap(range/ε_L): ε_L-local differential privacy (any two inputs are ε_L-indistinguishable).

    ``epsilon`` is ε_L; the paper ties it to the geo ε by ε_L = ε·D (D in data units). Unbiased;
    Var = 2(range/ε_L)².
    """

    name = "local DP"
    source = "Laplace mechanism with sensitivity sup f − inf f (local DP; seed 000, §5)"

    def __init__(self, query: GeoQuery, epsilon: float) -> None:
        self.query = query
        eps = check_epsilon(epsilon)
        self.scale = np.asarray(query.range_width / eps, dtype=np.float64)
        self.guarantee = PureDP(eps)


@dataclass(frozen=True)
class GeoError:
    """Expected error of a biased estimator: MSE = Σ Var + (Σ bias)² for the sum (÷ n² for the mean)."""

    mse_total: NDArray[np.float64]
    mse_mean: NDArray[np.float64]
    variance_total: NDArray[np.float64]
    bias_total: NDArray[np.float64]


# -- closed forms for 1-D ramps under Laplace noise (Section 4.1.1) ----------------------------------------
def _plus_mean(m: NDArray, b: float) -> NDArray:
    """E (m + Z)^+ for Z ~ Lap(b): max(m, 0) + (b/2)e^{−|m|/b}."""
    return np.maximum(m, 0.0) + 0.5 * b * np.exp(-np.abs(m) / b)


def _plus_square(m: NDArray, b: float) -> NDArray:
    """E ((m + Z)^+)² for Z ~ Lap(b): b²e^{m/b} (m < 0), m² + 2b² − b²e^{−m/b} (m ≥ 0)."""
    e = np.exp(-np.abs(m) / b)
    return np.where(m < 0, b * b * e, m * m + 2 * b * b - b * b * e)


def _ramp_moments(m: NDArray, w: NDArray, b: float) -> tuple[NDArray, NDArray]:
    """E r, E r² for r = clip((m + Z)/w, 0, 1) = ((m+Z)^+ − (m+Z−w)^+)/w."""
    mean = (_plus_mean(m, b) - _plus_mean(m - w, b)) / w
    second = (_plus_square(m, b) - _plus_square(m - w, b) - 2 * w * _plus_mean(m - w, b)) / (w * w)
    return mean, second


def _above_probability(m: NDArray, b: float) -> NDArray:
    """P(m + Z > 0) for Z ~ Lap(b)."""
    return np.where(m > 0, 1.0 - 0.5 * np.exp(-m / b), 0.5 * np.exp(m / b))


class NoiseAPriori(GeoMechanism):
    """Noise a priori: each user sends x̃ = x + Laplace noise; the analyst averages f(x̃) (biased).

    1-D: x̃ = x + Lap(1/ε); 2-D: x̃ = x + planar Laplace with density ∝ e^{−ε‖z‖} (radius Gamma(2, 1/ε),
    never independent Laplace per coordinate, which would be ℓ1- not Euclidean geo-privacy). The report
    is a privatized location, so ε-geo-privacy holds by Lemma 2.3 with the identity map, and one report
    serves every query (no composition over a grid of queries).

    Parameters
    ----------
    query
        The query the analyst computes on x̃.
    epsilon
        ε per unit of distance.
    hard
        Compute the hard query (``query.hard_value``: indicator of the threshold or range) on x̃ instead of
        the soft one (the paper: soft in the one-way experiment, hard in the two-way one).
    variant
        ``"location"`` (default) or ``"distance"`` (GaussianKDE only: report ℓ̃ = ‖x − t‖ + Lap(1/ε) per
        centre, then exp(−ℓ̃²/(2h²))).
    quadrature
        Nodes per dimension of the quadrature used by :meth:`moments` where there is no closed form.
    """

    name = "noise a priori"

    def __init__(
        self,
        query: GeoQuery,
        epsilon: float,
        *,
        hard: bool = False,
        variant: str = "location",
        quadrature: int = 96,
    ) -> None:
        self.query = query
        eps = check_epsilon(epsilon)
        if variant not in ("location", "distance"):
            raise ValueError(f"variant must be 'location' or 'distance'; got {variant!r}")
        if variant == "distance" and not isinstance(query, GaussianKDE):
            raise ValueError("variant='distance' is only defined for the GaussianKDE query")
        if hard and not hasattr(query, "hard_value"):
            raise ValueError(f"hard=True needs a query with a hard version; {query.name} has none")
        self.hard = bool(hard)
        self.variant = variant
        self.quadrature = check_int("quadrature", quadrature, minimum=4, maximum=4096)
        self.guarantee = GeoPrivacy(eps)
        self.noise = (
            PlanarLaplace(1.0 / eps) if query.dimension == 2 and variant == "location" else Laplace(1.0 / eps)
        )
        self.source = (
            "Liang & Yi, CCS'24 (seed 000), Lemma 2.3 applied to "
            + ("the distance ‖x − t‖ (1-Lipschitz)" if variant == "distance" else "the identity map")
            + (": planar Laplace [CABP13]" if self.noise.dimension == 2 else ": Laplace")
        )

    # -- reports and estimate -----------------------------------------------------------------------------
    def privatize(self, x: ArrayLike, rng: SeedLike = None) -> NDArray[np.float64]:
        """Noisy locations x̃ (shape of x), or noisy distances (shape P + U) for the distance variant."""
        pts = self.query.check_points(x)
        gen = resolve_rng(rng)
        if self.variant == "distance":
            dist = self.query._scaled_distance(pts) * self.query.expand(
                self.query.bandwidth, len(self.query.user_shape(pts))
            )
            return dist + self.noise.sample(dist.shape, gen)
        users = self.query.user_shape(pts)
        return pts + self.noise.sample(users, gen)

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """ln p_x(y) of the report of one user at x: y are noisy locations (or distances, single query)."""
        pts = self.query.check_points(x)
        if self.query.user_shape(pts) != ():
            raise ValueError(f"x must be one point; got shape {np.shape(x)}")
        y = np.asarray(y, dtype=np.float64)
        if self.variant == "distance":
            if self.query.param_shape:
                raise ValueError("log_density needs a single query (param_shape == ())")
            dist = self.query._scaled_distance(pts) * self.query.bandwidth
            return self.noise.logpdf(y - dist)
        return self.noise.logpdf(y - pts)

    def apply(self, reports: ArrayLike) -> NDArray[np.float64]:
        """f(x̃) per query and user (shape P + U): what the analyst averages."""
        if self.variant == "distance":
            r = check_data(reports, "reports")
            h = self.query.expand(self.query.bandwidth, r.ndim - len(self.query.param_shape))
            return np.exp(-0.5 * (r / h) ** 2)
        pts = self.query.check_points(reports, "reports")
        return self.query._hard(pts) if self.hard else self.query._value(pts)

    def estimate(self, reports: ArrayLike) -> GeoEstimate:
        """Mean and sum of f(x̃) over users (biased for f(x): see :meth:`mse`)."""
        return super().estimate(self.apply(reports))

    # -- exact moments --------------------------------------------------------------------------------------
    def moments(self, x: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """E f(x̃) and Var f(x̃) per query and user (shape P + U), for the users at x."""
        return self._moments(self.query.check_points(x))

    def _moments(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        q, b = self.query, self.noise.scale
        user_ndim = len(q.user_shape(x))
        if self.variant == "location" and isinstance(q, SoftThreshold):
            edge = q.expand(q.threshold, user_ndim)
            if self.hard:
                p = _above_probability(x - edge, b)
                return p, p * (1.0 - p)
            w = q.expand(q.width, user_ndim)
            mean, second = _ramp_moments(x - edge + w / 2.0, w, b)
            return mean, np.maximum(second - mean * mean, 0.0)
        if self.variant == "location" and isinstance(q, BoundedRange):
            lo, hi = q.expand(q.low, user_ndim), q.expand(q.high, user_ndim)
            if self.hard:  # P(lo ≤ x + Z ≤ hi)
                p = _above_probability(x - lo, b) - _above_probability(x - hi, b)
                return p, p * (1.0 - p)
            w = q.expand(q.width, user_ndim)
            m1, s1 = _ramp_moments(x - lo + w / 2.0, w, b)
            m2, s2 = _ramp_moments(x - hi + w / 2.0, w, b)
            mean = m1 - m2
            return mean, np.maximum(s1 + s2 - 2.0 * m2 - mean * mean, 0.0)
        if self.variant == "location" and isinstance(q, TwoWayThreshold) and self.hard:
            p = self._quadrant_probability(x)
            return p, p * (1.0 - p)
        return self._quadrature_moments(x)

    def _quadrant_probability(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(x̃₁ > T₁, x̃₂ > T₂) under planar Laplace: ∫ over the angle of the radius-CDF differences."""
        q, b = self.query, self.noise.scale
        k = 4 * self.quadrature
        theta = (np.arange(k) + 0.5) * (2 * np.pi / k)
        shape = q.param_shape + (1,) * (x.ndim - 1)
        gap1 = q.thresholds[..., 0].reshape(shape) - x[..., 0]
        gap2 = q.thresholds[..., 1].reshape(shape) - x[..., 1]
        total = np.zeros(np.broadcast_shapes(gap1.shape, gap2.shape))
        for th in theta:  # a loop over quadrature angles, vectorized over queries and users
            lo = np.zeros_like(total)
            hi = np.full_like(total, np.inf)
            for gap, comp in ((gap1, math.cos(th)), (gap2, math.sin(th))):
                if comp > 0:
                    lo = np.maximum(lo, gap / comp)
                else:
                    hi = np.minimum(hi, np.where(gap < 0, gap / comp, 0.0))
            r_cdf = lambda r: special.gammainc(2.0, r / b)  # noqa: E731
            total += np.where(hi > lo, r_cdf(hi) - r_cdf(lo), 0.0)
        return total / k

    def _quadrature_moments(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Gauss–Laguerre quadrature of E f(x + Z), E f(x + Z)² (two-sided in 1-D, polar in 2-D)."""
        q, b, m = self.query, self.noise.scale, self.quadrature
        mean = 0.0
        second = 0.0
        if self.variant == "distance" or q.dimension == 1:
            nodes, weights = special.roots_laguerre(m)  # ∫_0^∞ e^{−u} g(u) du
            for u, wgt in zip(nodes, weights, strict=True):
                for sign in (1.0, -1.0):
                    val = self._shifted_value(x, sign * b * u)
                    mean = mean + 0.5 * wgt * val
                    second = second + 0.5 * wgt * val * val
        else:
            nodes, weights = special.roots_genlaguerre(m, 1.0)  # ∫_0^∞ r e^{−r} g(r) dr: Gamma(2, 1)
            angles = (np.arange(2 * m) + 0.5) * (np.pi / m)
            for r, wgt in zip(nodes, weights, strict=True):
                for th in angles:
                    shift = b * r * np.array([math.cos(th), math.sin(th)])
                    val = q._value(x + shift)
                    mean = mean + wgt * val / angles.size
                    second = second + wgt * val * val / angles.size
        mean = np.asarray(mean)
        return mean, np.maximum(np.asarray(second) - mean * mean, 0.0)

    def _shifted_value(self, x: NDArray[np.float64], shift: float) -> NDArray[np.float64]:
        if self.variant == "distance":
            q = self.query
            h = q.expand(q.bandwidth, len(q.user_shape(x)))
            dist = q._scaled_distance(x) * h + shift
            return np.exp(-0.5 * (dist / h) ** 2)
        return self.query._hard(x + shift) if self.hard else self.query._value(x + shift)

    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._moments(x)[1]

    def bias(self, x: ArrayLike, *, truth: str = "soft") -> NDArray[np.float64]:
        """E f(x̃) − truth(x) per query and user; ``truth`` is ``"soft"`` (the query) or ``"hard"``."""
        pts = self.query.check_points(x)
        return self._moments(pts)[0] - self._truth(pts, truth)

    def _truth(self, pts: NDArray[np.float64], truth: str) -> NDArray[np.float64]:
        if truth not in ("soft", "hard"):
            raise ValueError(f"truth must be 'soft' or 'hard'; got {truth!r}")
        if truth == "hard":
            if not hasattr(self.query, "_hard"):
                raise ValueError(
                    f"truth='hard' needs a query with a hard version; {self.query.name} has none"
                )
            return self.query._hard(pts)
        return self.query._value(pts)

    def mse(self, x: ArrayLike, *, truth: str = "hard", block: int = USER_BLOCK) -> GeoError:
        """Exact MSE of the estimated sum Σ f(x̃_i) (and mean) against Σ truth(x_i).

        Section 4.1.1 for the hard threshold: MSE = Σ p_i(1 − p_i) + (Σ s_i p_i)², p_i = ½e^{−ε|x_i − t|}.
        Users are processed in blocks (memory O(|P|·block)).
        """
        pts = self.query.check_points(x)
        flat = pts.reshape((-1, 2) if self.query.dimension == 2 else (-1,))
        var_total = np.zeros(self.query.param_shape)
        bias_total = np.zeros(self.query.param_shape)
        n_params = int(np.prod(self.query.param_shape, dtype=np.int64))
        blk = max(1, min(check_int("block", block, minimum=1), (1 << 20) // max(1, n_params)))
        for _, chunk in user_blocks(flat, self.query.dimension, blk):
            mean, var = self._moments(chunk)
            var_total += var.sum(axis=-1)
            bias_total += (mean - self._truth(chunk, truth)).sum(axis=-1)
        n = flat.shape[0]
        mse_total = var_total + bias_total**2
        return GeoError(
            mse_total=mse_total, mse_mean=mse_total / n**2, variance_total=var_total, bias_total=bias_total
        )


# -- fast aggregate counts over grids of thresholds (experiments) ----------------------------------------
def threshold_fractions(points: ArrayLike, thresholds: ArrayLike) -> NDArray[np.float64]:
    """(1/n)·#{i : x_i > t} for every t in ``thresholds`` in O((n + m) log m): hard one-way queries."""
    x = check_data(points, "points", ndim=1)
    t = check_data(thresholds, "thresholds")
    order = np.sort(t.ravel())
    below = np.searchsorted(order, x, side="left")  # number of thresholds strictly below x_i
    exceed = np.bincount(below, minlength=order.size + 1)[::-1].cumsum()[::-1]  # #{i : below_i ≥ k}
    # x_i > t  iff  every threshold ≤ t is below x_i  iff  below_i ≥ #{thresholds ≤ t}.
    return exceed[np.searchsorted(order, t.ravel(), side="right")].reshape(t.shape) / x.size


def quadrant_fractions(points: ArrayLike, t1: ArrayLike, t2: ArrayLike) -> NDArray[np.float64]:
    """(1/n)·#{i : x_i1 > T₁, x_i2 > T₂} for every pair of the grid t1 × t2 (hard two-way queries).

    One 2-D histogram of the points on the threshold edges and a reverse cumulative sum: O(n log m + m²)
    instead of O(n·m²). Returns shape (len(t1), len(t2)).
    """
    x = check_data(points, "points", ndim=2, last_dim=2)
    a = check_data(t1, "t1", ndim=1)
    b = check_data(t2, "t2", ndim=1)
    oa, ob = np.sort(a), np.sort(b)
    i = np.searchsorted(oa, x[:, 0], side="left")
    j = np.searchsorted(ob, x[:, 1], side="left")
    hist = np.bincount(i * (ob.size + 1) + j, minlength=(oa.size + 1) * (ob.size + 1))
    hist = hist.reshape(oa.size + 1, ob.size + 1)
    tail = hist[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]  # tail[k, l] = #{i ≥ k, j ≥ l}
    ra = np.searchsorted(oa, a, side="right")
    rb = np.searchsorted(ob, b, side="right")
    return tail[np.ix_(ra, rb)] / x.shape[0]
