"""Independent brute-force references for the geo tests (no code from smoothdp.geo or smooth.metric).

Every value here is a sup over a finite set of candidates, hence a LOWER bound of the true sup: a
correct smooth sensitivity is never below it.
"""

from __future__ import annotations

import numpy as np


def pointwise_lipschitz_on_grid(values: np.ndarray, nodes: np.ndarray, chunk: int = 512) -> np.ndarray:
    """L(g_j) ≥ max_k |f(g_j) − f(g_k)| / ‖g_j − g_k‖ over the other nodes (nodes: (N,) or (N, d))."""
    pts = nodes.reshape(nodes.shape[0], -1)
    out = np.zeros(pts.shape[0])
    for start in range(0, pts.shape[0], chunk):
        sl = slice(start, start + chunk)
        dist = np.sqrt(((pts[sl, None, :] - pts[None, :, :]) ** 2).sum(-1))
        diff = np.abs(values[sl, None] - values[None, :])
        ok = dist > 1e-7 * (1.0 + np.abs(pts[sl, None, :]).max(-1))  # no float-cancellation pairs
        out[sl] = np.max(np.where(ok, diff / np.where(ok, dist, 1.0), 0.0), axis=1)
    return out


def smooth_from_grid(
    x: np.ndarray, nodes: np.ndarray, lip: np.ndarray, beta: float, growth: str = "exponential"
) -> np.ndarray:
    """max_j L(g_j) / G_β(‖x − g_j‖): a lower bound of S*(x) from grid values of L."""
    pts = nodes.reshape(nodes.shape[0], -1)
    xs = np.asarray(x, dtype=float).reshape(-1, pts.shape[1])
    dist = np.sqrt(((xs[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    g = np.exp(beta * dist) if growth == "exponential" else 1.0 + beta * dist
    return np.max(lip[None, :] / g, axis=1)


def brute_smooth_sensitivity_1d(f, x, beta, nodes, growth="exponential"):
    """S*(x) ≥ this: pairs (x', x'') over a 1-D grid (the test points themselves included in the grid)."""
    grid = np.unique(np.concatenate([nodes, np.ravel(x)]))
    lip = pointwise_lipschitz_on_grid(f(grid), grid)
    return smooth_from_grid(np.ravel(x), grid, lip, beta, growth).reshape(np.shape(x))
