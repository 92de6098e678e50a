"""The interface every geo-privacy query shares, and the broadcasting of query parameters over users.

A query f maps one user's private point x (a number, or a point in the plane) to a real number. Query
parameters (a threshold, a width, a KDE centre, ...) may be arrays: the query then stands for a *grid* of
queries with parameter shape P, and every method returns an array of shape ``P + U`` where U is the shape
of the users (x has shape U in 1-D and U + (2,) in 2-D). Grid points are separate queries; releasing all
of them from one user spends ε per query (basic composition).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.sensitivity.growth import Growth
from smoothdp.sensitivity.metric import check_growth
from smoothdp.validation import check_data, check_positive

__all__ = ["GeoQuery", "as_parameter"]


def as_parameter(name: str, value: ArrayLike, *, positive: bool = False, point_dim: int = 0) -> NDArray:
    """A query parameter as a finite float array (``point_dim`` trailing coordinates), checked."""
    if point_dim:
        arr = check_data(value, name, last_dim=point_dim)
    else:
        arr = check_data(value, name)
    if positive and np.any(arr <= 0):
        bad = arr[arr <= 0].ravel()[0]
        raise ValueError(f"{name} must be in (0, inf); got {bad!r}")
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
    def check_points(self, x: ArrayLike, name: str = "x") -> NDArray[np.float64]:
        """Validate users' points: finite, non-empty, shape U (1-D) or U + (2,) (2-D)."""
        if self.dimension == 2:
            return check_data(x, name, last_dim=2)
        return check_data(x, name)

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
        if hard and not hasattr(self, "_hard"):
            raise ValueError(f"hard=True needs a query with a hard version; the {self.name} has none")
        evaluate = self._hard if hard else self._value  # type: ignore[attr-defined]
        total = np.zeros(self.param_shape)
        for start in range(0, flat.shape[0], blk):
            total += evaluate(flat[start : start + blk]).sum(axis=-1)
        return total / flat.shape[0]

    def pointwise_lipschitz(self, x: ArrayLike) -> NDArray[np.float64]:
        """L_f(x) = sup_{x'} |f(x) − f(x')|/‖x − x'‖ (seed 000, Definition 7, Λ = ∞); rounded up."""
        return self._lipschitz_at(self.check_points(x))

    def smooth_sensitivity(
        self, x: ArrayLike, beta: float, growth: Growth = "exponential"
    ) -> NDArray[np.float64]:
        """S*(x) = sup_{x'} L_f(x')/G_β(‖x − x'‖) (seed 000, Definition 9); never below the exact value."""
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
