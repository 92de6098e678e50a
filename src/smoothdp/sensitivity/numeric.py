"""Numeric smooth sensitivity of any differentiable f on a box of R or R² (Euclidean metric).

The bound is rigorous only when a curvature bound M ≥ sup‖∇²f‖ is given (``curvature=``) or the caller
supplies per-cell gradient bounds; with neither, M is *estimated* from second differences on the grid and
the result is a heuristic that a feature narrower than the grid step can defeat.

The generic candidate-point procedure (Liang & Yi, CCS 2024, Section 3.3;
docs/theory/geo-privacy.md#generic-candidate-point-procedure) as a grid search over the candidate pairs
(x', x'') with a discretization error bound added on top, so the result is an upper bound when M is
a true curvature bound (docs/theory/geo-privacy.md#grid-lipschitz-bound):

* :class:`GridLipschitzBound`: upper bounds on the pointwise Lipschitz constant over the cells of a grid,
  built once per function, then the smooth sensitivity of any users;
* :func:`numeric_smooth_sensitivity`: the same in one call, with an attained lower value;
* :func:`numeric_pointwise_lipschitz`: an attained lower estimate of L_f, for cross-checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.sensitivity.growth import Growth, check_growth, log_growth
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_data, check_int, check_positive

__all__ = [
    "GridLipschitzBound",
    "NumericSmoothSensitivity",
    "numeric_pointwise_lipschitz",
    "numeric_smooth_sensitivity",
]


@dataclass(frozen=True)
class NumericSmoothSensitivity:
    """Result of :func:`numeric_smooth_sensitivity`.

    Attributes
    ----------
    upper
        A G_β-smooth upper bound at each point: the grid value plus the rigorous discretization error
        (given the curvature bound). This is what a mechanism may use.
    lower
        A value actually attained by the sup (best candidate found): the true S* lies in [lower, upper].
    grid_step, curvature
        The grid spacing and the curvature bound M (sup ‖∇²f‖) the error bound used.
    curvature_estimated
        True when M was estimated from the grid (second differences × 2), not given by the caller.
    """

    upper: NDArray[np.float64]
    lower: NDArray[np.float64]
    grid_step: float
    curvature: float
    curvature_estimated: bool


def _as_points(x: ArrayLike, dim: int, name: str = "x") -> NDArray[np.float64]:
    """Points as an array of shape (n, dim)."""
    if dim == 1:
        arr = check_data(x, name)
        return arr.reshape(-1, 1)
    arr = check_data(x, name, last_dim=2)
    return arr.reshape(-1, 2)


def _domain_box(bounds: ArrayLike, dim: int) -> NDArray[np.float64]:
    try:
        box = np.asarray(bounds, dtype=np.float64).reshape(dim, 2)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"bounds must be (lower, upper) per axis for dimension {dim}; got {bounds!r}"
        ) from err
    if not np.all(np.isfinite(box)) or np.any(box[:, 0] >= box[:, 1]):
        raise ValueError(f"bounds must be a finite box with lower < upper on every axis; got {bounds!r}")
    return box


class _Grid:
    """A uniform grid over a box with per-node values, gradient norms and node-pair secants."""

    def __init__(
        self,
        f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
        box: NDArray[np.float64],
        resolution: int,
        grad: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None,
    ) -> None:
        dim = box.shape[0]
        spans = box[:, 1] - box[:, 0]
        self.h = float(spans.max() / (resolution - 1))
        axes = [np.linspace(lo, hi, max(2, int(np.ceil((hi - lo) / self.h)) + 1)) for lo, hi in box]
        self.steps = np.array([a[1] - a[0] for a in axes])
        self.h = float(self.steps.max())
        mesh = np.meshgrid(*axes, indexing="ij")
        self.shape = mesh[0].shape
        self.nodes = np.stack([m.ravel() for m in mesh], axis=-1)  # (N, dim)
        self.dim = dim
        self.rho = float(np.linalg.norm(self.steps) / 2.0)  # every point of a cell is within ρ of its node
        self.values = _evaluate(f, self.nodes, dim)
        self.grad_given = grad is not None
        self.grad_norm = (
            _grad_norm(grad, self.nodes, dim) if grad is not None else self._central_difference_norm()
        )

    def _central_difference_norm(self) -> NDArray[np.float64]:
        vals = self.values.reshape(self.shape)
        comps = (
            np.gradient(vals, *self.steps, edge_order=2)
            if self.dim == 2
            else [np.gradient(vals, self.steps[0], edge_order=2)]
        )
        return np.sqrt(sum(c.ravel() ** 2 for c in comps))

    def curvature_estimate(self) -> float:
        """2 × the largest second difference on the grid (a heuristic bound on ‖∇²f‖)."""
        vals = self.values.reshape(self.shape)
        total = np.zeros(())
        if self.dim == 1:
            total = np.abs(np.diff(vals, 2)) / self.steps[0] ** 2
        else:
            fxx = np.abs(np.diff(vals, 2, axis=0))[:, 1:-1] / self.steps[0] ** 2
            fyy = np.abs(np.diff(vals, 2, axis=1))[1:-1, :] / self.steps[1] ** 2
            fxy = np.abs(np.diff(np.diff(vals, axis=0), axis=1))[:-1, :-1][:-1, :-1] / (
                self.steps[0] * self.steps[1]
            )
            total = fxx + fyy + 2 * fxy
        return float(2.0 * np.max(total)) if total.size else 0.0


def _evaluate(f: Callable, pts: NDArray[np.float64], dim: int) -> NDArray[np.float64]:
    out = np.asarray(f(pts[:, 0] if dim == 1 else pts), dtype=np.float64).reshape(-1)
    if out.shape[0] != pts.shape[0] or not np.all(np.isfinite(out)):
        raise ValueError("f must map an array of points to one finite value per point")
    return out


def _grad_norm(grad: Callable, pts: NDArray[np.float64], dim: int) -> NDArray[np.float64]:
    g = np.asarray(grad(pts[:, 0] if dim == 1 else pts), dtype=np.float64)
    g = g.reshape(pts.shape[0], -1)
    return np.sqrt(np.sum(g**2, axis=1))


def _range_max_table(g: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """Sparse table for range maxima of a 1-D array: table[l][i] = max g[i : i + 2^l]."""
    table = [g]
    width = 1
    while 2 * width <= g.size:
        prev = table[-1]
        table.append(np.maximum(prev[:-width], prev[width:]))
        width *= 2
    return table


def _range_max(table: list[NDArray[np.float64]], lo: NDArray[np.intp], hi: NDArray[np.intp]) -> NDArray:
    """max g[lo..hi] (inclusive) for arrays of index pairs, lo ≤ hi."""
    level = np.floor(np.log2(hi - lo + 1)).astype(np.intp)
    out = np.empty(lo.shape)
    for lev in np.unique(level):
        sel = level == lev
        row = table[lev]
        out[sel] = np.maximum(row[lo[sel]], row[hi[sel] - (1 << int(lev)) + 1])
    return out


def _local_gradient_max(grid: _Grid, radius: float) -> NDArray[np.float64]:
    """max of the node gradient norms within ``radius`` of each node (2-D near-pair bound)."""
    from scipy.ndimage import maximum_filter

    reach = np.ceil(radius / grid.steps).astype(int)
    ii, jj = np.meshgrid(*[np.arange(-r, r + 1) for r in reach], indexing="ij")
    footprint = (ii * grid.steps[0]) ** 2 + (jj * grid.steps[1]) ** 2 <= radius**2 + 1e-12
    vals = grid.grad_norm.reshape(grid.shape)
    return maximum_filter(vals, footprint=footprint, mode="nearest").ravel()


#: Node pairs closer than this many grid steps use the gradient bound (the secant bound is loose there).
_NEAR_STEPS = 8


def _cell_lipschitz(grid: _Grid, lipschitz: float, curvature: float, chunk: int) -> tuple[NDArray, NDArray]:
    """Upper bound of L over each cell, and the attained secant at each node (a lower bound of L there).

    For x' in the cell of node g_j and x'' in the cell of g_k (each within ρ of its node), with G the
    node gradient norms (+ the central-difference error √d·Mh/2 when estimated) and M = sup‖∇²f‖:

    * secant bound: |f(x') − f(x'')| ≤ |F_j − F_k| + (G_j + G_k)ρ + Mρ² (Taylor at the nodes) and
      ‖x' − x''‖ ≥ ‖g_j − g_k‖ − 2ρ;
    * gradient bound (mean value theorem): the secant is ≤ sup ‖∇f‖ on the segment [x', x''], which is
      ≤ max G over the nodes whose cells meet the hull of the two cells, + Mρ. In 1-D that is the range
      max of G between j and k; in 2-D, for pairs within 8 steps, the max of G within 8 steps + 2ρ.

    The bound for the pair is the smaller of the two, capped by the global Lipschitz constant K.
    """
    rho = grid.rho
    grad_err = 0.0 if grid.grad_given else np.sqrt(grid.dim) * curvature * grid.h / 2.0
    g = grid.grad_norm + grad_err
    near_radius = _NEAR_STEPS * grid.h
    if grid.dim == 1:
        table = _range_max_table(g)
    else:
        g_local = _local_gradient_max(grid, near_radius + 2 * rho) + curvature * rho
    cell = np.zeros(grid.nodes.shape[0])
    attained = np.zeros(grid.nodes.shape[0])
    nodes, vals = grid.nodes, grid.values
    idx = np.arange(nodes.shape[0])
    for start in range(0, nodes.shape[0], chunk):
        sl = slice(start, start + chunk)
        dist = np.sqrt(np.sum((nodes[sl, None, :] - nodes[None, :, :]) ** 2, axis=-1))
        dvals = np.abs(vals[sl, None] - vals[None, :])
        positive = dist > 0
        attained[sl] = np.max(np.where(positive, dvals / np.where(positive, dist, 1.0), 0.0), axis=1)
        gap = dist - 2 * rho
        secant = np.where(
            gap > 0,
            (dvals + (g[sl, None] + g[None, :]) * rho + curvature * rho**2) / np.where(gap > 0, gap, 1.0),
            np.inf,
        )
        if grid.dim == 1:
            lo = np.minimum(idx[sl, None], idx[None, :])
            hi = np.maximum(idx[sl, None], idx[None, :])
            gradient = _range_max(table, lo.ravel(), hi.ravel()).reshape(lo.shape) + curvature * rho
        else:
            gradient = np.where(dist <= near_radius, g_local[sl, None], np.inf)
        cell[sl] = np.max(np.minimum(secant, gradient), axis=1)
    return np.minimum(cell, lipschitz), attained


def _user_secants(grid: _Grid, pts: NDArray[np.float64], fx: NDArray[np.float64]) -> NDArray[np.float64]:
    """Attained candidates of types 2 and 4 at the user's own point: max secant from x to the nodes."""
    dist = np.sqrt(np.sum((pts[:, None, :] - grid.nodes[None, :, :]) ** 2, axis=-1))
    apart = dist > 1e-6 * grid.h  # closer pairs: float cancellation, and the gradient term covers them
    sec = np.where(apart, np.abs(fx[:, None] - grid.values[None, :]) / np.where(apart, dist, 1.0), 0.0)
    return sec.max(axis=1)


def _box_distance(pts: NDArray[np.float64], centres: NDArray[np.float64], half: NDArray) -> NDArray:
    """Distance from each point to each axis-aligned cell (centre ± half)."""
    gap = np.maximum(np.abs(pts[:, None, :] - centres[None, :, :]) - half, 0.0)
    return np.sqrt(np.sum(gap**2, axis=-1))


def numeric_pointwise_lipschitz(
    f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    x: ArrayLike,
    *,
    bounds: ArrayLike,
    dimension: int = 1,
    resolution: int = 801,
) -> NDArray[np.float64]:
    """An attained lower estimate of L_f(x) = sup_{x'} |f(x) − f(x')|/‖x − x'‖ over a grid of the domain.

    For cross-checks only (a grid sup is a lower bound of the true sup); the mechanisms use the upper
    bound of :func:`numeric_smooth_sensitivity`.
    """
    dim = check_int("dimension", dimension, minimum=1, maximum=2)
    box = _domain_box(bounds, dim)
    grid = _Grid(f, box, check_int("resolution", resolution, minimum=3), None)
    pts = _as_points(x, dim)
    return _user_secants(grid, pts, _evaluate(f, pts, dim))


class GridLipschitzBound:
    """Upper bounds on the pointwise Lipschitz constant of f over the cells of a grid on a box (rigorous
    with ``curvature=``; heuristic when the curvature is estimated, see ``curvature_estimated``).

    Built once per function (the cost is quadratic in the number of nodes), then used for any users, β
    and growth by :meth:`smooth_sensitivity`. Parameters as in :func:`numeric_smooth_sensitivity`.
    """

    def __init__(
        self,
        f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
        *,
        lipschitz: float,
        bounds: ArrayLike,
        dimension: int = 1,
        grad: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
        curvature: float | None = None,
        resolution: int | None = None,
        chunk: int = 256,
    ) -> None:
        self.dim = check_int("dimension", dimension, minimum=1, maximum=2)
        self.lipschitz = check_positive("lipschitz", lipschitz)
        self.box = _domain_box(bounds, self.dim)
        res = resolution if resolution is not None else (2001 if self.dim == 1 else 61)
        self.f = f
        self.chunk = check_int("chunk", chunk, minimum=1)
        self.grid = _Grid(f, self.box, check_int("resolution", res, minimum=3), grad)
        self.curvature_estimated = curvature is None
        self.curvature = (
            self.grid.curvature_estimate() if curvature is None else check_positive("curvature", curvature)
        )
        self.cell_bound, self.node_attained = _cell_lipschitz(
            self.grid, self.lipschitz, self.curvature, self.chunk
        )

    def points(self, x: ArrayLike) -> NDArray[np.float64]:
        """Users' points as (n, d), clipped into the domain (the bound holds only on it; clipping onto a
        box never increases distances, so it is part of the mechanism and no point is refused)."""
        pts = _as_points(x, self.dim)
        return np.clip(pts, self.box[:, 0], self.box[:, 1])

    def _nearest_node(self, pts: NDArray[np.float64]) -> NDArray[np.intp]:
        steps = self.grid.steps
        idx = np.rint((pts - self.box[:, 0]) / steps).astype(np.intp)
        idx = np.minimum(np.maximum(idx, 0), np.array(self.grid.shape) - 1)
        return np.ravel_multi_index(tuple(idx.T), self.grid.shape)

    def lipschitz_upper(self, pts: NDArray[np.float64]) -> NDArray[np.float64]:
        """An upper bound on L_f at each point: the bound of the cell holding it."""
        return round_up(self.cell_bound[self._nearest_node(pts)])

    def smooth_sensitivity(
        self, pts: NDArray[np.float64], beta: float, growth: Growth
    ) -> NumericSmoothSensitivity:
        """S(x) = max_j Lcell_j / G_β(dist(x, cell_j)) ≥ S*(x), and an attained lower value."""
        check_growth(growth)
        b = check_positive("beta", beta)
        grid = self.grid
        fx = _evaluate(self.f, pts, self.dim)
        upper = np.empty(pts.shape[0])
        lower = np.empty(pts.shape[0])
        half = grid.steps / 2.0
        for start in range(0, pts.shape[0], self.chunk):
            sl = slice(start, start + self.chunk)
            decay_up = np.exp(-log_growth(_box_distance(pts[sl], grid.nodes, half), b, growth))
            upper[sl] = np.max(self.cell_bound[None, :] * decay_up, axis=1)
            dist = np.sqrt(np.sum((pts[sl, None, :] - grid.nodes[None, :, :]) ** 2, axis=-1))
            decay = np.exp(-log_growth(dist, b, growth))
            lower[sl] = np.maximum(
                np.max(self.node_attained[None, :] * decay, axis=1), _user_secants(grid, pts[sl], fx[sl])
            )
        return NumericSmoothSensitivity(
            upper=round_up(upper),
            lower=lower,
            grid_step=grid.h,
            curvature=self.curvature,
            curvature_estimated=self.curvature_estimated,
        )


def numeric_smooth_sensitivity(
    f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    x: ArrayLike,
    beta: float,
    *,
    lipschitz: float,
    bounds: ArrayLike,
    dimension: int = 1,
    growth: Growth = "exponential",
    grad: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
    curvature: float | None = None,
    resolution: int | None = None,
    chunk: int = 256,
) -> NumericSmoothSensitivity:
    """Smooth sensitivity of a differentiable f on a box U ⊂ R^d (d = 1, 2) by a grid search (rigorous
    with ``curvature=``, heuristic without).

    Liang & Yi (CCS 2024), Section 3.3: S*(x) = sup_{x', x''} ψ_x(x', x'') with
    ψ_x(x', x'') = |f(x') − f(x'')| / (‖x' − x''‖·G_β(‖x − x'‖)) and ψ_x(x', x') = ‖∇f(x')‖/G_β(‖x − x'‖).
    The paper's four candidate types (x' = x or not, x'' = x' or not) are all covered by a grid over
    (x', x'') that includes the diagonal (gradients) and the user's own point.

    The sup is taken over the declared domain U (their Definition 9 takes it over the data universe); data
    outside U void the bound and are clipped into U. Upward safety: each cell's pointwise Lipschitz bound adds
    the discretization error of the grid (see ``_cell_lipschitz``: first order in the grid step, using the
    curvature bound M = sup‖∇²f‖ and the global Lipschitz constant); then
    S(x) = max_j Lcell_j / G_β(dist(x, cell_j)) ≥ S*(x). When ``curvature`` is None, M is estimated as
    twice the largest second difference on the grid: a heuristic that holds when the grid resolves f.

    Parameters
    ----------
    f
        Vectorized: an array of n scalars (d = 1) or of shape (n, 2) (d = 2) → n values.
    x
        Users' points: shape U (d = 1) or U + (2,) (d = 2), inside ``bounds``.
    lipschitz
        A global Lipschitz constant K of f on U (caps the bound; used in the error term).
    bounds
        The domain U: (lower, upper) for d = 1, ((lower1, upper1), (lower2, upper2)) for d = 2.
    grad
        Optional gradient (same input convention, returns n or (n, 2) values); else central differences.
    curvature
        Optional bound on ‖∇²f‖ (|f''| in 1-D) over U.
    resolution
        Nodes along the longest axis (default 2001 in 1-D, 61 in 2-D).

    Returns
    -------
    NumericSmoothSensitivity
        ``upper`` (use this) and ``lower`` (attained) of shape U.
    """
    bound = GridLipschitzBound(
        f,
        lipschitz=lipschitz,
        bounds=bounds,
        dimension=dimension,
        grad=grad,
        curvature=curvature,
        resolution=resolution,
        chunk=chunk,
    )
    pts = bound.points(x)
    res = bound.smooth_sensitivity(pts, beta, growth)
    shape = np.shape(x) if bound.dim == 1 else np.shape(x)[:-1]
    return NumericSmoothSensitivity(
        upper=res.upper.reshape(shape),
        lower=res.lower.reshape(shape),
        grid_step=res.grid_step,
        curvature=res.curvature,
        curvature_estimated=res.curvature_estimated,
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
