"""A user's own Lipschitz query on a box of R or R², through the generic candidate-point procedure.

Liang & Yi, CCS 2024, Section 3.3; docs/theory/geo-privacy.md#generic-lipschitz-query.

The grid bound is rigorous only with information about f between the grid nodes: a curvature bound
M ≥ sup‖∇²f‖ (``curvature``, a declared constant) or an interval evaluation of ‖∇f‖ over boxes
(``grad_bound``). Without either, the query is **refused** (a ``ValueError`` saying how to supply one):
estimating M from the grid's second differences misses any feature narrower than the grid step, so no
guarantee would hold. ``heuristic=True`` keeps that estimate on explicit request; every release whose
noise rests on it then says "NOT PRIVATE" in its guarantee text (``Release.caveat``), and is still
charged to an accountant (docs/geo.md, "Generic Lipschitz query").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.geo._query import GeoQuery
from smoothdp.sensitivity.growth import Growth
from smoothdp.sensitivity.numeric import GridLipschitzBound
from smoothdp.validation import check_bool, check_bounds, check_positive

__all__ = ["LipschitzQuery"]

#: The refusal of a query without a certified bound: what to supply instead.
UNCERTIFIED = (
    "LipschitzQuery needs a certified bound on how f varies between its grid nodes, or no guarantee holds "
    "(a feature narrower than the grid step is invisible to the grid). Supply one: curvature=M, a declared "
    "constant M ≥ sup over the box of ‖∇²f‖ (|f''| in 1-D); or grad_bound=g, an interval evaluation "
    "g(lower, upper) ≥ sup of ‖∇f‖ on each box (grad_bound=lambda lower, upper: np.full(len(lower), K) "
    "declares the global constant K everywhere: certified, without adaptivity). heuristic=True keeps the "
    "estimate from the grid's second differences, and every release resting on it says NOT PRIVATE"
)

#: The curvature passed to the grid bound on the ``grad_bound`` route, where the node "gradients" are
#: already sups over the cells and no Taylor term is needed (a positive number: the bound only grows).
_NO_CURVATURE = float(np.finfo(np.float64).tiny)


class LipschitzQuery(GeoQuery):
    """Any differentiable, globally K-Lipschitz f on a box U of R or R² (the data universe).

    Its pointwise Lipschitz constant and smooth sensitivity are upper bounds from
    :class:`~smoothdp.sensitivity.numeric.GridLipschitzBound` (a grid over the candidate pairs (x', x'')
    with the discretization error added; Liang & Yi, CCS 2024, Section 3.3 and Lemma 3.7: the sup is
    over U). The discretization error is bounded **rigorously** only from what the caller supplies:

    * ``curvature`` M ≥ sup_U ‖∇²f‖ (Taylor terms at the nodes), or
    * ``grad_bound(lower, upper)``: an interval evaluation of ‖∇f‖, returning for each box
      [lower_i, upper_i] an upper bound of sup ‖∇f‖ on it (vectorized over boxes); the node gradients are
      then replaced by these cell sups, and no curvature is needed.

    With neither, the query is **refused** at construction (a ``ValueError`` naming ``curvature``,
    ``grad_bound`` and ``heuristic``): the only estimate left, twice the largest second difference on
    the grid, fails for features narrower than the grid step (a bump of slope 3.4 between two nodes gets
    a bound of 1e−11), so no guarantee would hold. ``heuristic=True`` keeps that estimate on explicit
    request: the query then has ``heuristic_sensitivity = True``, and every release whose noise rests on
    the pointwise bound (:class:`~smoothdp.geo.SmoothSensitivityMechanism`) carries the caveat "HEURISTIC
    bound, NOT PRIVATE" in its guarantee text, ``str`` and ``to_dict`` (``Release.caveat``), like a
    seeded release; an accountant is still charged what the mechanism would spend. The baselines
    (:class:`~smoothdp.geo.GlobalLipschitz`, :class:`~smoothdp.geo.LocalDP`,
    :class:`~smoothdp.geo.NoiseAPriori`) use only the declared K, the value range (rigorous given K) or
    no bound, and keep their guarantee.

    Either way the bound assumes the float values of f (and ``grad``) at the grid nodes are accurate to
    far below the discretization terms (their rounding is not in the bound), and the released query value
    is the float f(x) as the callable returns it (taken as exact; see :attr:`value_note`).

    Data policy: U is the query's :attr:`domain`. A NaN coordinate takes the box's midpoint; with
    ``clip=True`` (default) points outside U (±inf included) are clipped onto it (projection onto a box
    is 1-Lipschitz, so every geo-privacy guarantee is kept). ``clip=False`` refuses them instead: a strict
    check for trusted data only, since the exception depends on the data (its message carries no count).

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
    grad_bound
        Interval evaluation of ‖∇f‖ over boxes (see above): ``grad_bound(lower, upper)`` with arrays of
        shape (n,) (d = 1) or (n, 2) (d = 2), returning n upper bounds.
    clip
        Clip users' points to U (default) instead of refusing them.
    heuristic
        ``True``: without ``curvature`` and ``grad_bound``, estimate the curvature from the grid (not a
        bound: releases resting on it say NOT PRIVATE). Default ``False``: refuse the query instead. An
        error with ``curvature`` or ``grad_bound`` (there is nothing to estimate).
    """

    name = "Lipschitz query"
    value_note = "the float value returned by f is taken as the query value (no error bound)"

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
        grad_bound: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]] | None = None,
        resolution: int | None = None,
        clip: bool = True,
        heuristic: bool = False,
    ) -> None:
        if not callable(f):
            raise TypeError(f"f must be callable; got {type(f).__name__}")
        if grad_bound is not None and not callable(grad_bound):
            raise TypeError(f"grad_bound must be callable; got {type(grad_bound).__name__}")
        if grad_bound is not None and (grad is not None or curvature is not None):
            raise ValueError("grad_bound replaces grad and curvature; pass grad_bound alone")
        certified = grad_bound is not None or curvature is not None
        if check_bool("heuristic", heuristic) and certified:
            raise ValueError(
                "heuristic=True applies only without curvature= and grad_bound= (with either, the bound is "
                "certified); drop heuristic=True"
            )
        if not certified and not heuristic:
            raise ValueError(UNCERTIFIED)
        self.dimension = dimension
        self.f = f
        self.clip = bool(clip)
        self.grad_bound = grad_bound
        node_grad = grad
        if grad_bound is not None:
            node_grad = self._cell_gradient_sup(grad_bound, bounds, dimension, resolution)
        self.bound = GridLipschitzBound(
            f,
            lipschitz=lipschitz,
            bounds=bounds,
            dimension=dimension,
            grad=node_grad,
            curvature=_NO_CURVATURE if grad_bound is not None else curvature,
            resolution=resolution,
        )
        self._lipschitz = check_positive("lipschitz", lipschitz)
        if value_range is None:
            slack = self._lipschitz * self.bound.grid.rho
            vals = self.bound.grid.values
            value_range = (float(vals.min()) - slack, float(vals.max()) + slack)
        self._range = check_bounds(value_range, "value_range")
        self.heuristic_sensitivity = not certified
        if grad_bound is not None:
            self.sensitivity_note = (
                "grid bound, rigorous given the caller's interval evaluation of |grad f| (grad_bound)"
            )
        elif curvature is not None:
            self.sensitivity_note = (
                f"grid bound, rigorous given the caller's curvature bound M = {self.bound.curvature:g}"
            )
        else:
            self.sensitivity_note = (
                "HEURISTIC bound, NOT PRIVATE (heuristic=True): the curvature of f was estimated from the "
                f"grid's second differences (M ≈ {self.bound.curvature:g}); a feature narrower than the grid "
                f"step ({self.bound.grid.h:g}) is missed, so the stated guarantee does not hold. Pass "
                "curvature= or grad_bound= for a certified bound"
            )

    @staticmethod
    def _cell_gradient_sup(
        grad_bound: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
        bounds: ArrayLike,
        dimension: int,
        resolution: int | None,
    ) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        """The node 'gradient' the grid bound uses: sup ‖∇f‖ over the node's cell (node ± step/2)."""
        box = np.asarray(bounds, dtype=np.float64).reshape(dimension, 2)
        res = resolution if resolution is not None else (2001 if dimension == 1 else 61)
        h = float((box[:, 1] - box[:, 0]).max() / (res - 1))
        steps = np.array([(hi - lo) / max(1, int(np.ceil((hi - lo) / h))) for lo, hi in box])
        # The grid (smoothdp.sensitivity.numeric) spaces each axis by span / ceil(span / h); a cell is
        # its node ± step/2. Widen by a relative 1e-12 so that float rounding of the steps cannot shrink it.
        half = steps / 2.0 * (1.0 + 1e-12)

        def node_gradient(nodes: NDArray[np.float64]) -> NDArray[np.float64]:
            pts = nodes.reshape(-1, dimension)
            lower, upper = pts - half, pts + half
            if dimension == 1:
                lower, upper = lower[:, 0], upper[:, 0]
            out = np.asarray(grad_bound(lower, upper), dtype=np.float64).reshape(-1)
            if out.shape[0] != pts.shape[0] or not np.all(out >= 0):
                raise ValueError("grad_bound must return one non-negative bound per box")
            return out

        return node_gradient

    @property
    def lipschitz(self) -> NDArray[np.float64]:
        return np.asarray(self._lipschitz)

    @property
    def value_range(self) -> tuple[float, float]:
        return self._range

    @property
    def domain(self) -> NDArray[np.float64]:
        """The box U, shape (d, 2)."""
        return np.asarray(self.bound.box, dtype=np.float64)

    def _outside_domain(self, arr: NDArray[np.float64], lo: Any, hi: Any, name: str) -> NDArray[np.float64]:
        if self.clip:
            return np.clip(arr, lo, hi)
        if not bool(np.all((arr >= lo) & (arr <= hi))):
            raise ValueError(
                f"{name} has point(s) outside the domain {self.bound.box.tolist()}; clip=False is a strict "
                "check for trusted data only (this error depends on the data); pass clip=True (the "
                "default) to clip points onto the domain"
            )
        return arr

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
