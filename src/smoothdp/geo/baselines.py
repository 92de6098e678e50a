r"""Baselines for local geo-privacy queries (docs/theory/geo-privacy.md#baselines).

After Liang & Yi, CCS 2024 ("LY"), Sections 4.1.1 and 5:

* :class:`GlobalLipschitz`: $f(x) + \mathrm{Lap}(L_f/\varepsilon)$, $L_f$ the global Lipschitz constant (LY
  Lemma 2.3, after Chatzikokolakis, Andrés, Bordenabe & Palamidessi, PETS 2013): $\varepsilon$-geo-privacy per
  query, unbiased, variance $2(L_f/\varepsilon)^2$ per user.
* :class:`NoiseAPriori`: the user sends $\tilde{x} = x + \mathrm{Lap}(1/\varepsilon)$ (1-D) or $x$ + planar
  $\mathrm{Laplace}(1/\varepsilon)$ (2-D, radius $\mathrm{Gamma}(2, 1/\varepsilon)$; Andrés, Bordenabe,
  Chatzikokolakis & Palamidessi, CCS 2013); the analyst computes $f(\tilde{x})$: $\varepsilon$-geo-privacy
  **once**, whatever the number of queries (post-processing). The estimate is biased. For a radial query (the
  KDE), ``variant="distance"`` privatizes $\ell = \Vert x - t\Vert$ per centre instead (a 1-Lipschitz map:
  $\varepsilon$ per centre) and computes f from $\tilde{\ell}$.
* :class:`LocalDP`: $f(x) + \mathrm{Lap}(\mathrm{range}/\varepsilon_L)$: $\varepsilon_L$-local DP per query
  (any two inputs), variance $2(\mathrm{range}/\varepsilon_L)^2$.

Released floats (every baseline, ``numerics="exact"``, the default): exactly the rounding onto a public grid
of the ideal report (:func:`smoothdp.exact.add_noise`): $R(f(x) + b \cdot Z)$ with R from the query's value
range and $f(x)$ the query's certified enclosure; $R(x + Z)$ for noise a priori with R from the noise scale
(planar Laplace in 2-D), and $R(\Vert x - t\Vert + Z)$ for its distance variant. The Laplace scales b are
rounded up. ``numerics="float"`` keeps the floating-point path (idealized arithmetic).

Expected errors: :meth:`NoiseAPriori.moments` gives the exact mean and variance of $f(\tilde{x})$ per user, in
closed form where the query has one (:meth:`~smoothdp.geo.GeoQuery._laplace_location_moments`; LY Section
4.1.1), by quadrature otherwise; :meth:`NoiseAPriori.mse` the MSE of the estimated sum and mean against the
soft or the hard query: $\sum \mathrm{Var} + (\sum \mathrm{bias})^2$
(docs/theory/geo-privacy.md#mean-squared-error-formulas).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from smoothdp.exact import OutputGrid, add_noise
from smoothdp.geo._common import USER_BLOCK, GeoEstimate, GeoMechanism, user_blocks
from smoothdp.geo._query import GeoQuery
from smoothdp.keywords import check_keywords_of
from smoothdp.noise import Laplace, PlanarLaplace
from smoothdp.privacy import GeoPrivacy, PureDP
from smoothdp.release import Release
from smoothdp.scale.engine import is_dask_collection
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


def _check_query(query: Any) -> GeoQuery:
    if not isinstance(query, GeoQuery):
        raise TypeError(f"query must be a smoothdp.geo query; got {type(query).__name__}")
    return query


def _scale_up(numerator: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """numerator/ε rounded up (numerator itself taken one ulp up): never below the exact ratio."""
    num = np.nextafter(np.asarray(numerator, dtype=np.float64), np.inf)
    return np.nextafter(num / epsilon, np.inf)


class _AdditiveLaplace(GeoMechanism):
    """f(x) + Lap(scale) with a per-query scale (shape ``param_shape``)."""

    scale: NDArray[np.float64]
    uses_pointwise_bound = False  # the declared global constant, or the public value range

    def _scale(self, user_ndim: int) -> NDArray[np.float64]:
        return self.query.expand(self.scale, user_ndim)

    def _privatize(self, pts: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """R(f(x) + scale·Z), Z ~ Lap(1), per user and query (shape P + U); f + scale·Z in floats."""
        shape = self.query.param_shape + self.query.user_shape(pts)
        if not self.query.user_shape(pts):  # one user as a scalar (1-D) or a point (2-D): a batch of one
            pts = pts[np.newaxis]
        scale = self._scale(len(self.query.user_shape(pts)))
        if self.numerics == "float":
            f = self.query._value(pts)
            return np.reshape(f + scale * _LAPLACE.sample(f.shape, rng, numerics="float"), shape)
        centre = self.query._enclosure(pts)
        sensitivity = np.broadcast_to(scale, self.query.param_shape + self.query.user_shape(pts))
        out = add_noise(centre, _LAPLACE, grid=self.grid, rng=rng, sensitivity=sensitivity, numerics="exact")
        return np.asarray(out, dtype=np.float64).reshape(shape)

    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        users = self.query.user_shape(x)
        return np.broadcast_to(2.0 * self._scale(len(users)) ** 2, self.query.param_shape + users).copy()

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        r"""$\ln p_x(y)$ for one user at x (single query)."""
        if self.query.param_shape:
            raise ValueError("log_density needs a single query (param_shape == ())")
        f = self.query.value(x)
        b = float(self.scale)
        return _LAPLACE.logpdf((np.asarray(y, dtype=np.float64) - f) / b) - math.log(b)


class GlobalLipschitz(_AdditiveLaplace):
    r"""$f(x) + \mathrm{Lap}(L_f/\varepsilon)$ per user and query: the noise-a-posteriori baseline.

    **Guarantee.** $\varepsilon$-geo-privacy per unit of Euclidean distance per report (neighbour relation
    ``"metric"``); ``guarantee`` is what one user spends on one call: $Q \cdot \varepsilon$ for a grid of Q
    queries. **Lemma.** LY Lemma 2.3 (after Chatzikokolakis et al., PETS 2013): an L-Lipschitz f plus
    $\mathrm{Lap}(L/\varepsilon)$ is $\varepsilon$-geo-private
    (docs/theory/geo-privacy.md#global-lipschitz-baseline).

    $L_f$ is the query's global Lipschitz constant ($1/\theta$, $1/\tau$, $e^{-1/2}/h$). Unbiased;
    $\mathrm{Var} = 2(L_f/\varepsilon)^2$.
    """

    name = "global Lipschitz"
    proof = "docs/theory/geo-privacy.md#global-lipschitz-baseline"
    source = (
        "Liang & Yi, CCS 2024, Lemma 2.3 (Chatzikokolakis, Andrés, Bordenabe & Palamidessi, PETS 2013): "
        "f(x) + Lap(L_f/ε)"
    )

    def __init__(self, query: GeoQuery, *, epsilon: float, numerics: str = "exact") -> None:
        self.query = _check_query(query)
        eps = check_epsilon(epsilon)
        self.scale = _scale_up(query.lipschitz, eps)
        self._set_guarantee(GeoPrivacy(eps))
        self._set_numerics(numerics, OutputGrid.for_bounds(*query.value_range))

    def _sensitivity_details(self) -> dict[str, Any]:
        return {"sensitivity_bound": "the query's global Lipschitz constant (rounded up)"}


class LocalDP(_AdditiveLaplace):
    r"""$f(x) + \mathrm{Lap}(\mathrm{range}/\varepsilon_L)$ per user and query: the local-DP baseline.

    **Guarantee.** $\varepsilon_L$-local differential privacy per report (neighbour relation ``"local"``: any
    two inputs of one user are $\varepsilon_L$-indistinguishable, whatever their distance); ``guarantee`` is
    ``PureDP(Q·ε_L, neighbours="local")`` for a grid of Q queries (charge it to an ``Accountant(...,
    neighbours="local")``). **Lemma.** The Laplace mechanism with sensitivity $\sup f - \inf f$ (Dwork,
    McSherry, Nissim & Smith, TCC 2006; docs/theory/geo-privacy.md#local-dp-baseline).

    ``epsilon`` is $\varepsilon_L$; LY tie it to the geo $\varepsilon$ by
    $\varepsilon_L = \varepsilon \cdot D$ (D in data units). Unbiased;
    $\mathrm{Var} = 2(\mathrm{range}/\varepsilon_L)^2$.
    """

    name = "local DP"
    proof = "docs/theory/geo-privacy.md#local-dp-baseline"
    source = (
        "Laplace mechanism with sensitivity sup f − inf f (Dwork, McSherry, Nissim & Smith, TCC 2006), "
        "as the local-DP baseline of Liang & Yi, CCS 2024, Section 5"
    )

    def __init__(self, query: GeoQuery, *, epsilon: float, numerics: str = "exact") -> None:
        self.query = _check_query(query)
        eps = check_epsilon(epsilon)
        lo, hi = query.value_range
        width = np.nextafter(hi - lo, np.inf)  # ≥ the exact width of the public value range
        self.scale = _scale_up(width, eps)
        self._set_guarantee(PureDP(eps, neighbours="local"))
        self._set_numerics(numerics, OutputGrid.for_bounds(lo, hi))

    def _sensitivity_details(self) -> dict[str, Any]:
        return {"sensitivity_bound": "the width of the query's public value range (rounded up)"}


@dataclass(frozen=True)
class GeoError:
    r"""Expected error of a biased estimator: $\mathrm{MSE} = \sum \mathrm{Var} + (\sum \mathrm{bias})^2$ for
    the sum ($\div n^2$ for the mean)."""

    mse_total: NDArray[np.float64]
    mse_mean: NDArray[np.float64]
    variance_total: NDArray[np.float64]
    bias_total: NDArray[np.float64]


def _apply_block(
    block: NDArray[np.float64], partition: int, *, mechanism: NoiseAPriori
) -> NDArray[np.float64]:
    """f(x̃) for one row block of noisy locations (an empty block gives an empty P + U array)."""
    if block.shape[0] == 0:
        return np.empty(mechanism.query.param_shape + mechanism.query.user_shape(block))
    return mechanism.apply(block)


class NoiseAPriori(GeoMechanism):
    r"""Noise a priori: each user sends $\tilde{x} = x$ + Laplace noise once; the analyst averages
    $f(\tilde{x})$ (biased).

    **Guarantee.** $\varepsilon$-geo-privacy per unit of Euclidean distance (neighbour relation ``"metric"``).
    The location report is a privatized point, and every query value $f(\tilde{x})$ is a post-processing of
    it, so one report answers the whole grid: ``guarantee`` is $\varepsilon$ **once**, whatever the number of
    queries (docs/theory/privacy-definitions.md#one-report-answers-every-query). The ``"distance"`` variant
    sends one report per centre: $Q \cdot \varepsilon$ for Q centres. **Lemma.** LY Lemma 2.3 with the
    identity map (docs/theory/geo-privacy.md#noise-a-priori): 1-D
    $\tilde{x} = x + \mathrm{Lap}(1/\varepsilon)$; 2-D $\tilde{x} = x$ + planar Laplace with density
    $\propto e^{-\varepsilon\Vert z\Vert}$ (radius $\mathrm{Gamma}(2, 1/\varepsilon)$; Andrés et al., CCS
    2013), never independent Laplace per coordinate, which would be $\ell_1$- not Euclidean geo-privacy.

    Parameters
    ----------
    query
        The query the analyst computes on $\tilde{x}$.
    epsilon
        $\varepsilon$ per unit of distance.
    hard
        Compute the hard query (indicator of the threshold or range) on x̃ instead of the soft one (LY:
        soft in the one-way experiment, hard in the two-way one); needs ``query.has_hard``.
    variant
        ``"location"`` (default) or ``"distance"`` (radial queries, e.g. GaussianKDE: report
        $\tilde{\ell} = \Vert x - t\Vert + \mathrm{Lap}(1/\varepsilon)$ per centre, then f of $\tilde{\ell}$;
        1-Lipschitz map, $\varepsilon$ per centre).
    quadrature
        Nodes per dimension of the quadrature used by :meth:`moments` where there is no closed form.
    numerics
        ``"exact"`` (default): reports exactly $R(x + Z)$ ($R(\Vert x - t\Vert + Z)$ for the distance
        variant), R the public grid ``OutputGrid.for_magnitude(1/ε)`` (spacing $\sim 2^{-36}/\varepsilon$ near
        0, relative $2^{-36}$ beyond); ``"float"``: $x + Z$ in floats (idealized arithmetic).
    """

    name = "noise a priori"
    proof = "docs/theory/geo-privacy.md#noise-a-priori"
    uses_pointwise_bound = False  # the location (or a 1-Lipschitz distance) is privatized
    source = "Liang & Yi, CCS 2024, Lemma 2.3 (noise a priori)"

    def __init__(
        self,
        query: GeoQuery,
        *,
        epsilon: float,
        hard: bool = False,
        variant: str = "location",
        quadrature: int = 96,
        numerics: str = "exact",
    ) -> None:
        self.query = _check_query(query)
        eps = check_epsilon(epsilon)
        if variant not in ("location", "distance"):
            raise ValueError(f"variant must be 'location' or 'distance'; got {variant!r}")
        if variant == "distance" and not query.radial:
            raise ValueError(
                f"variant='distance' needs a query that depends on a distance ‖x − t‖ alone (e.g. "
                f"GaussianKDE); the {query.name} does not"
            )
        if hard and not query.has_hard:
            raise ValueError(f"hard=True needs a query with a hard version; {query.name} has none")
        self.hard = bool(hard)
        self.variant = variant
        self.quadrature = check_int("quadrature", quadrature, minimum=4, maximum=4096)
        # One location report answers every query; the distance variant sends one report per centre.
        self._set_guarantee(GeoPrivacy(eps), reports=1 if variant == "location" else None)
        self.noise = (
            PlanarLaplace(1.0 / eps) if query.dimension == 2 and variant == "location" else Laplace(1.0 / eps)
        )
        self._set_numerics(numerics, OutputGrid.for_magnitude(self.noise.scale))
        self.source = (
            "Liang & Yi, CCS 2024, Lemma 2.3 applied to "
            + ("the distance ‖x − t‖ (1-Lipschitz)" if variant == "distance" else "the identity map")
            + (
                ": planar Laplace (Andrés, Bordenabe, Chatzikokolakis & Palamidessi, CCS 2013)"
                if self.noise.dimension == 2
                else ": Laplace"
            )
        )

    # -- reports and estimate -----------------------------------------------------------------------------
    def _privatize(self, pts: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """Noisy locations x̃ (shape of x), or noisy distances (shape P + U) for the distance variant."""
        exact = self.numerics == "exact"
        if self.variant == "distance":
            if exact:
                centre = self.query._distance_enclosure(pts)  # type: ignore[attr-defined]
                out = add_noise(centre, self.noise, grid=self.grid, rng=rng, numerics="exact")
                return np.asarray(out, dtype=np.float64).reshape(centre.lower.shape)
            dist = self.query._distance(pts)
            return dist + self.noise.sample(dist.shape, rng, numerics="float")
        if exact:
            out = add_noise(pts, self.noise, grid=self.grid, rng=rng, numerics="exact")
            return np.asarray(out, dtype=np.float64).reshape(pts.shape)
        return pts + self.noise.sample(self.query.user_shape(pts), rng, numerics="float")

    def _sensitivity_details(self) -> dict[str, Any]:
        return {"sensitivity_bound": "none needed (the location, or the 1-Lipschitz distance, is privatized)"}

    def _public_details(self) -> dict[str, Any]:
        return {**super()._public_details(), "variant": self.variant, "hard": self.hard}

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        r"""$\ln p_x(y)$ of the report of one user at x: y are noisy locations (or distances, single
        query)."""
        pts = self.query.check_points(x)
        if self.query.user_shape(pts) != ():
            raise ValueError(f"x must be one point; got shape {np.shape(x)}")
        y = np.asarray(y, dtype=np.float64)
        if self.variant == "distance":
            if self.query.param_shape:
                raise ValueError("log_density needs a single query (param_shape == ())")
            return self.noise.logpdf(y - self.query._distance(pts))
        return self.noise.logpdf(y - pts)

    def apply(self, reports: ArrayLike | Release) -> NDArray[np.float64]:
        """f(x̃) per query and user (shape P + U): what the analyst averages."""
        if self.variant == "distance":
            r = check_data(self._reports(reports), "reports")
            return self.query._of_distance(r, r.ndim - len(self.query.param_shape))
        pts = self.query.check_points(self._reports(reports), "reports")
        return self.query._hard(pts) if self.hard else self.query._value(pts)

    def estimate(self, reports: ArrayLike | Release, *, engine: Any = None) -> GeoEstimate:
        """Mean and sum of f(x̃) over users (biased for f(x): see :meth:`mse`).

        Reports in a dask array: f(x̃) block by block, then one sum reduction on ``engine``.
        """
        r = self._reports(reports)
        if is_dask_collection(r):
            return self._estimate_dask(self._apply_dask(r), engine)
        return super().estimate(self.apply(r))

    def _report_layout(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Noisy locations have the points' shape U (+ (2,)); noisy distances P + U."""
        if self.variant == "distance":
            return self.query.param_shape, ()
        return (), ((2,) if self.query.dimension == 2 else ())

    def _apply_dask(self, reports: Any) -> Any:
        """:meth:`apply` block by block on a dask array of reports (lazy, shape P + U)."""
        if self.variant == "distance":
            return reports.map_blocks(self.apply, dtype=np.float64)
        from smoothdp.scale.streams import map_rows, row_blocks

        r = row_blocks(reports, "reports")
        users_ndim = r.ndim - (1 if self.query.dimension == 2 else 0)
        apply = functools.partial(_apply_block, mechanism=self)
        return map_rows(apply, r, keep=users_ndim, lead=self.query.param_shape)

    # -- exact moments --------------------------------------------------------------------------------------
    def moments(self, x: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """E f(x̃) and Var f(x̃) per query and user (shape P + U), for the users at x."""
        return self._moments(self.query.check_points(x))

    def _moments(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self.variant == "location":
            closed = self.query._laplace_location_moments(
                x, self.noise.scale, hard=self.hard, quadrature=self.quadrature
            )
            if closed is not None:
                return closed
        return self._quadrature_moments(x)

    def _quadrature_moments(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Gauss–Laguerre quadrature of E f(x + Z), E f(x + Z)² (two-sided in 1-D, polar in 2-D)."""
        q, b, m = self.query, self.noise.scale, self.quadrature
        mean: NDArray[np.float64] = np.zeros(())
        second: NDArray[np.float64] = np.zeros(())
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
            return q._of_distance(q._distance(x) + shift, len(q.user_shape(x)))
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
            if not self.query.has_hard:
                raise ValueError(
                    f"truth='hard' needs a query with a hard version; {self.query.name} has none"
                )
            return self.query._hard(pts)
        return self.query._value(pts)

    def mse(self, x: ArrayLike, *, truth: str = "hard", block: int = USER_BLOCK) -> GeoError:
        r"""Exact MSE of the estimated sum $\sum f(\tilde{x}_i)$ (and mean) against
        $\sum \mathrm{truth}(x_i)$.

        LY Section 4.1.1 for the hard threshold: $\mathrm{MSE} = \sum p_i(1 - p_i) + (\sum s_i p_i)^2$,
        $p_i = \tfrac12 e^{-\varepsilon\vert x_i - t\vert}$. Users are processed in blocks (memory
        O(|P|·block)).
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
    r"""$(1/n) \cdot \#\{i : x_i > t\}$ for every t in ``thresholds`` in $O((n + m) \log m)$: hard one-way
    queries."""
    x = check_data(points, "points", ndim=1)
    t = check_data(thresholds, "thresholds")
    order = np.sort(t.ravel())
    below = np.searchsorted(order, x, side="left")  # number of thresholds strictly below x_i
    exceed = np.bincount(below, minlength=order.size + 1)[::-1].cumsum()[::-1]  # #{i : below_i ≥ k}
    # x_i > t  iff  every threshold ≤ t is below x_i  iff  below_i ≥ #{thresholds ≤ t}.
    return exceed[np.searchsorted(order, t.ravel(), side="right")].reshape(t.shape) / x.size


def quadrant_fractions(points: ArrayLike, t1: ArrayLike, t2: ArrayLike) -> NDArray[np.float64]:
    r"""$(1/n) \cdot \#\{i : x_{i1} > T_1, x_{i2} > T_2\}$ for every pair of the grid t1 × t2 (hard two-way
    queries).

    One 2-D histogram of the points on the threshold edges and a reverse cumulative sum: $O(n \log m + m^2)$
    instead of $O(n \cdot m^2)$. Returns shape (len(t1), len(t2)).
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


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
