"""The interface every geo-privacy query shares, and the broadcasting of query parameters over users.

A query f maps one user's private point x (a number, or a point in the plane) to a real number. Query
parameters (a threshold, a width, a KDE centre, ...) may be arrays: the query then stands for a *grid* of
queries with parameter shape P, and every method returns an array of shape ``P + U`` where U is the shape
of the users (x has shape U in 1-D and U + (2,) in 2-D). Grid points are separate queries; releasing all
of them from one user spends ε per query (docs/theory/privacy-definitions.md#geo-privacy-composition),
except for a noise-a-priori report, which answers every query at once
(docs/theory/privacy-definitions.md#one-report-answers-every-query).

What the mechanisms ask of a query are methods with a default here, overridden where a query has more to
offer (no ``isinstance`` dispatch in the mechanisms):

* :meth:`GeoQuery.value_and_smooth_sensitivity`: f(x) and S_β(x) together (a shared fast path);
* :attr:`GeoQuery.has_hard` and :meth:`GeoQuery._hard`: the hard query a soft one smooths;
* :meth:`GeoQuery._laplace_location_moments`: closed-form moments of f(x + Z) under the noise-a-priori
  location noise (``None``: no closed form, the mechanism integrates numerically);
* :attr:`GeoQuery.radial`, :meth:`GeoQuery._distance` and :meth:`GeoQuery._of_distance`: queries that
  depend on x only through a distance ‖x − t‖ (the "distance" variant of noise a priori).

Definitions: Liang & Yi, CCS 2024 ("LY"), Definitions 7–9 (docs/theory/geo-privacy.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import Enclosure
from smoothdp.sensitivity.growth import Growth, check_growth
from smoothdp.validation import as_float_array, check_data, check_positive

__all__ = ["UNIVERSE", "GeoQuery", "as_parameter", "point_array"]

#: Half-width of the public data universe of a query without a declared domain: every coordinate is
#: clipped to [−2^400, 2^400] (±inf included). Clipping onto a box is 1-Lipschitz in the Euclidean metric,
#: so it keeps every geo-privacy guarantee; 2^400 (≈ 2.6e120) keeps squares and sums of squares finite.
UNIVERSE = 2.0**400


def point_array(x: ArrayLike, name: str, dimension: int) -> NDArray[np.float64]:
    """Users' points as a float array of shape U (1-D) or U + (2,) (2-D), non-empty; NOT checked finite.

    Inputs as :func:`smoothdp.validation.as_float_array` (arrays, lists, pandas/polars Series and, in 1-D,
    one-column DataFrames; strings refused); in 2-D a two-column DataFrame gives the points (x, y).
    """
    if dimension == 2 and hasattr(x, "columns") and hasattr(x, "to_numpy"):
        x = x.to_numpy()  # two columns → points; the element check below still refuses strings
    arr = as_float_array(x, name)
    if dimension == 2 and (arr.ndim == 0 or arr.shape[-1] != 2):
        raise ValueError(f"{name} must have shape (..., 2); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least 1 point; got 0")
    return arr


#: Smallest positive query parameter (a width, a bandwidth): its reciprocal, a Lipschitz constant, and the
#: noise scales built from it stay far inside the float range.
_MIN_POSITIVE_PARAMETER = 2.0**-500


def as_parameter(name: str, value: ArrayLike, *, positive: bool = False, point_dim: int = 0) -> NDArray:
    """A query parameter as a finite float array (``point_dim`` trailing coordinates), checked."""
    if point_dim:
        arr = check_data(value, name, last_dim=point_dim)
    else:
        arr = check_data(value, name)
    if positive and np.any(arr < _MIN_POSITIVE_PARAMETER):
        bad = arr[arr < _MIN_POSITIVE_PARAMETER].ravel()[0]
        raise ValueError(f"{name} must be in [2^-500, inf); got {float(bad)!r}")
    return arr


class GeoQuery(ABC):
    """A real-valued query f on R (``dimension == 1``) or R² (``dimension == 2``), Euclidean metric.

    Subclasses set ``dimension``, ``param_shape`` and implement :meth:`_value`, :meth:`_lipschitz_at`
    and :meth:`_smooth_sensitivity` on checked inputs of shape ``U`` (1-D) or ``U + (2,)`` (2-D).
    """

    dimension: int = 1
    #: Shape of the grid of query parameters (``()`` for a single query).
    param_shape: tuple[int, ...] = ()
    #: Name used in releases and error messages.
    name: str = "query"
    #: True when the query smooths a hard (indicator) query, available as :meth:`_hard`.
    has_hard: bool = False
    #: True when f depends on x only through the distance to a centre (:meth:`_distance`).
    radial: bool = False

    # -- what the mechanisms need -------------------------------------------------------------------------
    @property
    @abstractmethod
    def lipschitz(self) -> NDArray[np.float64]:
        """The global Lipschitz constant L_f (per query; shape ``param_shape``)."""

    @property
    @abstractmethod
    def value_range(self) -> tuple[float, float]:
        """(inf f, sup f) over all inputs: the range the LDP baseline needs."""

    @property
    def range_width(self) -> float:
        lo, hi = self.value_range
        return hi - lo

    # -- public, checked API -----------------------------------------------------------------------------
    @property
    def domain(self) -> NDArray[np.float64]:
        """The public data universe as a box, shape (d, 2) of (lower, upper) per coordinate.

        Default: [−2^400, 2^400] per coordinate (:data:`UNIVERSE`); :class:`~smoothdp.geo.LipschitzQuery`
        declares its own box.
        """
        return np.tile(np.array([[-UNIVERSE, UNIVERSE]]), (self.dimension, 1))

    @property
    def default_point(self) -> NDArray[np.float64]:
        """The public point imputed for a NaN coordinate (shape () in 1-D, (2,) in 2-D).

        Default: the midpoint of the :attr:`domain`; the threshold, range and KDE queries use the middle
        of their parameters (docs/geo.md, "Data policy").
        """
        box = self.domain
        mid = 0.5 * box[:, 0] + 0.5 * box[:, 1]
        return mid if self.dimension == 2 else mid[0]

    def _middle_of(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Midpoint of [min, max] of a parameter over the grid (per coordinate in 2-D), inside the domain."""
        if self.dimension == 2:
            flat = values.reshape(-1, 2)
            mid = 0.5 * flat.min(axis=0) + 0.5 * flat.max(axis=0)
        else:
            mid = np.asarray(0.5 * values.min() + 0.5 * values.max())
        box = self.domain
        return np.clip(mid, box[:, 0], box[:, 1]) if self.dimension == 2 else np.clip(mid, *box[0])

    def check_points(self, x: ArrayLike, name: str = "x") -> NDArray[np.float64]:
        """Users' points, shape U (1-D) or U + (2,) (2-D), with the data policy applied.

        No exception depends on the data: a NaN coordinate is replaced by the same coordinate of the
        public :attr:`default_point`, then every coordinate is clipped into the public :attr:`domain`
        (±inf included). Only the shape is refused (a parameter error).
        """
        arr = point_array(x, name, self.dimension)
        box = self.domain
        lo, hi = (box[:, 0], box[:, 1]) if self.dimension == 2 else (box[0, 0], box[0, 1])
        # One pass decides whether anything must change (NaN compares False); the result is the same
        # function of the data either way.
        if bool(np.all((arr >= lo) & (arr <= hi))):
            return arr
        arr = np.where(np.isnan(arr), self.default_point, arr)
        return self._outside_domain(arr, lo, hi, name)

    def _outside_domain(self, arr: NDArray[np.float64], lo: Any, hi: Any, name: str) -> NDArray[np.float64]:
        """What to do with coordinates outside the domain: clip them (the default)."""
        return np.clip(arr, lo, hi)

    def user_shape(self, x: NDArray[np.float64]) -> tuple[int, ...]:
        return x.shape[:-1] if self.dimension == 2 else x.shape

    def expand(self, param: ArrayLike, user_ndim: int) -> NDArray[np.float64]:
        """A per-query array (shape P) reshaped to broadcast against users: P + (1,)·user_ndim."""
        p = np.broadcast_to(np.asarray(param, dtype=np.float64), self.param_shape)
        return p.reshape(self.param_shape + (1,) * user_ndim)

    def value(self, x: ArrayLike) -> NDArray[np.float64]:
        """f(x), shape ``param_shape + U``."""
        return self._value(self.check_points(x))

    def mean(self, x: ArrayLike, *, hard: bool = False, block: int = 1 << 16) -> NDArray[np.float64]:
        """(1/n) Σ_i f(x_i) per query (shape ``param_shape``), users in blocks: memory O(|P|·block).

        ``hard=True`` averages the hard query (thresholds and ranges) instead of the smoothed one.
        """
        pts = self.check_points(x)
        flat = pts.reshape((-1, 2) if self.dimension == 2 else (-1,))
        n_params = int(np.prod(self.param_shape, dtype=np.int64))
        blk = max(1, min(int(block), (1 << 22) // max(1, n_params)))
        if hard and not self.has_hard:
            raise ValueError(f"hard=True needs a query with a hard version; the {self.name} has none")
        evaluate = self._hard if hard else self._value
        total = np.zeros(self.param_shape)
        for start in range(0, flat.shape[0], blk):
            total += evaluate(flat[start : start + blk]).sum(axis=-1)
        return total / flat.shape[0]

    def pointwise_lipschitz(self, x: ArrayLike) -> NDArray[np.float64]:
        """L_f(x) = sup_{x'} |f(x) − f(x')|/‖x − x'‖ (LY Definition 7, Λ = ∞); rounded up.

        docs/theory/geo-privacy.md#pointwise-lipschitz-constant
        """
        return self._lipschitz_at(self.check_points(x))

    def smooth_sensitivity(
        self, x: ArrayLike, beta: float, growth: Growth = "exponential"
    ) -> NDArray[np.float64]:
        """S*(x) = sup_{x'} L_f(x')/G_β(‖x − x'‖) (LY Definition 9); never below the exact value.

        docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity
        """
        check_growth(growth)
        b = check_positive("beta", beta)
        return self._smooth_sensitivity(self.check_points(x), b, growth)

    # -- implemented by each query -----------------------------------------------------------------------
    @abstractmethod
    def _value(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...

    @abstractmethod
    def _lipschitz_at(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...

    @abstractmethod
    def _smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> NDArray[np.float64]: ...

    # -- the exact release path ------------------------------------------------------------------------------
    #: How the query value handed to :func:`smoothdp.exact.add_noise` relates to the exact f(x).
    value_note: str = "the float value as computed is taken as the query (no error bound)"
    #: How the pointwise Lipschitz bound and smooth sensitivity were obtained.
    sensitivity_note: str = "closed form, rounded up"
    #: True when the Lipschitz bound is not rigorous (the guarantee then rests on a heuristic).
    heuristic_sensitivity: bool = False

    def value_enclosure(self, x: ArrayLike) -> Enclosure | NDArray[np.float64]:
        """A certified enclosure of f(x) (shape ``param_shape + U``) for :func:`smoothdp.exact.add_noise`.

        lower ≤ f(x) ≤ upper in exact arithmetic, with ``refine(i, bits)`` giving element i (C order)
        exactly (a ``Fraction``) or as a python-flint ``arb`` ball. docs/geo.md, "Exact release path".
        """
        return self._enclosure(self.check_points(x))

    def _enclosure(self, x: NDArray[np.float64]) -> Enclosure | NDArray[np.float64]:
        """Default: the float value, taken as exact (see :attr:`value_note`)."""
        return self._value(x)

    def enclosure_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[Enclosure | NDArray[np.float64], NDArray[np.float64]]:
        """The enclosure of f(x) and S_β(x) on checked points (the exact path's fast entry)."""
        return self._enclosure(x), self._smooth_sensitivity(x, beta, growth)

    def _exact_value(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Any:
        """f at one point for query ``p_index``: a ``Fraction`` or an ``arb`` ball at ``bits`` precision."""
        raise NotImplementedError(f"the {self.name} has no exact evaluation")

    def _refiner(self, x: NDArray[np.float64], shape: tuple[int, ...]) -> Any:
        """``refine(i, bits)`` for an enclosure of shape ``shape`` = P + U over the checked points x."""
        p_ndim = len(self.param_shape)

        def refine(i: int, bits: int) -> Any:
            idx = np.unravel_index(int(i), shape)
            p_idx = tuple(int(k) for k in idx[:p_ndim])
            u_idx = tuple(int(k) for k in idx[p_ndim:])
            point = np.asarray(x[u_idx], dtype=np.float64)  # a scalar (1-D) or a (2,) point
            return self._exact_value(p_idx, point, bits)

        return refine

    # -- hooks with a default, overridden by the queries that have more to offer --------------------------
    def value_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """f(x) and S_β(x) on checked points (the mechanisms' fast path; queries share work when they can)."""
        return self._value(x), self._smooth_sensitivity(x, beta, growth)

    def _hard(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """The hard query on checked points (only when :attr:`has_hard`)."""
        raise ValueError(f"the {self.name} has no hard version")

    def _laplace_location_moments(
        self, x: NDArray[np.float64], scale: float, *, hard: bool, quadrature: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """E f(x + Z) and Var f(x + Z) per query and user in closed form, or ``None`` if there is none.

        Z is the noise-a-priori location noise of scale b = ``scale``: Laplace(b) in 1-D, planar Laplace
        (density ∝ e^{−‖z‖/b}) in 2-D; ``hard`` asks for the hard query instead of f; ``quadrature`` is
        the number of nodes a semi-closed form may use.
        Formulas: docs/theory/geo-privacy.md#mean-squared-error-formulas.
        """
        return None

    def _distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """‖x − t‖ per query and user, for a :attr:`radial` query (shape P + U)."""
        raise ValueError(f"the {self.name} does not depend on a distance alone")

    def _of_distance(self, distance: NDArray[np.float64], user_ndim: int) -> NDArray[np.float64]:
        """f as a function of the distance ‖x − t‖ (shape P + U), for a :attr:`radial` query."""
        raise ValueError(f"the {self.name} does not depend on a distance alone")
