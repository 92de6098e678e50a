"""A user's own Lipschitz query on a box of R or R², through the generic candidate-point procedure.

Liang & Yi, CCS 2024, Section 3.3; docs/theory/geo-privacy.md#generic-lipschitz-query.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.geo._query import GeoQuery
from smoothdp.sensitivity.growth import Growth
from smoothdp.sensitivity.numeric import GridLipschitzBound
from smoothdp.validation import check_bounds, check_positive

__all__ = ["LipschitzQuery"]


class LipschitzQuery(GeoQuery):
    """Any differentiable, globally K-Lipschitz f on a box U of R or R² (the data universe).

    Its pointwise Lipschitz constant and smooth sensitivity are certified upper bounds from
    :class:`~smoothdp.sensitivity.numeric.GridLipschitzBound` (a grid over the candidate pairs (x', x'')
    with the discretization error added; Liang & Yi, CCS 2024, Section 3.3 and Lemma 3.7: the sup is
    over U). Users' points
    must lie in U: they are refused otherwise, or clipped to U when ``clip=True`` (clipping is a
    post-processing of the point and keeps the guarantee, since the metric on U is the Euclidean one and
    projection onto a box is 1-Lipschitz).

    Parameters
    ----------
    f
        Vectorized: n scalars (d = 1) or an (n, 2) array (d = 2) → n values.
    lipschitz
        A global Lipschitz constant K of f on U (used by the global-Lipschitz baseline and as a cap).
    bounds
        The box U: (lower, upper) for d = 1; ((lower1, upper1), (lower2, upper2)) for d = 2.
    value_range
        (inf f, sup f) over U, for the local-DP baseline; estimated from the grid if None (then widened
        by K times the grid step, which bounds the variation between nodes).
    grad, curvature, resolution
        See :func:`~smoothdp.sensitivity.numeric.numeric_smooth_sensitivity`.
    clip
        Clip users' points to U instead of refusing them.
    """

    name = "Lipschitz query"

    def __init__(
        self,
        f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
        *,
        lipschitz: float,
        bounds: ArrayLike,
        dimension: int = 1,
        value_range: tuple[float, float] | None = None,
        grad: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
        curvature: float | None = None,
        resolution: int | None = None,
        clip: bool = False,
    ) -> None:
        if not callable(f):
            raise TypeError(f"f must be callable; got {type(f).__name__}")
        self.dimension = dimension
        self.f = f
        self.clip = bool(clip)
        self.bound = GridLipschitzBound(
            f,
            lipschitz=lipschitz,
            bounds=bounds,
            dimension=dimension,
            grad=grad,
            curvature=curvature,
            resolution=resolution,
        )
        self._lipschitz = check_positive("lipschitz", lipschitz)
        if value_range is None:
            slack = self._lipschitz * self.bound.grid.rho
            vals = self.bound.grid.values
            value_range = (float(vals.min()) - slack, float(vals.max()) + slack)
        self._range = check_bounds(value_range, "value_range")

    @property
    def lipschitz(self) -> NDArray[np.float64]:
        return np.asarray(self._lipschitz)

    @property
    def value_range(self) -> tuple[float, float]:
        return self._range

    def check_points(self, x: ArrayLike, name: str = "x") -> NDArray[np.float64]:
        pts = super().check_points(x, name)
        if self.clip:
            box = self.bound.box
            return np.clip(pts, box[:, 0], box[:, 1]) if self.dimension == 2 else np.clip(pts, *box[0])
        return pts

    def _flat(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.bound.points(x)

    def _value(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        pts = self._flat(x)
        out = np.asarray(self.f(pts[:, 0] if self.dimension == 1 else pts), dtype=np.float64)
        return out.reshape(self.user_shape(x))

    def _lipschitz_at(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.bound.lipschitz_upper(self._flat(x)).reshape(self.user_shape(x))

    def _smooth_sensitivity(self, x: NDArray[np.float64], beta: float, growth: Growth) -> NDArray[np.float64]:
        res = self.bound.smooth_sensitivity(self._flat(x), beta, growth)
        return res.upper.reshape(self.user_shape(x))
