"""Adversarial neighbour pairs for the central mechanisms, and their privacy loss in normalized units.

For a smooth-sensitivity mechanism M(x) = f(x) + S(x)·Z, a pair (x, x') is summarized by
r = S(x')/S(x) and shift = (f(x') − f(x))/S(x): M(x) ↦ Z and M(x') ↦ shift + r·Z after the same affine
change of variables, which leaves the privacy loss unchanged.
"""

from __future__ import annotations

import itertools

import numpy as np

GRID = np.array([0.0, 0.05, 0.1, 0.3, 0.5, 0.55, 0.9, 1.0])


def multisets(n: int, grid: np.ndarray = GRID) -> np.ndarray:
    """All sorted data sets of n values from the grid."""
    return np.array(list(itertools.combinations_with_replacement(grid, n)), dtype=float)


def pair_configurations(stat, beta: float, n: int, grid: np.ndarray = GRID) -> np.ndarray:
    """Distinct (r, |shift|) over every data set of n grid values and every substitution neighbour.

    One direction per pair suffices: the reverse pair (x', x) is also enumerated. For symmetric noise the
    sign of the shift does not matter.
    """
    sets = multisets(n, grid)
    key = {tuple(row): i for i, row in enumerate(sets)}
    values = np.array([stat.value(row) for row in sets])
    scales = np.array([stat.smooth_sensitivity(row, beta) for row in sets])
    pairs = set()
    for i, row in enumerate(sets):
        for pos in range(n):
            for v in grid:
                y = row.copy()
                y[pos] = v
                j = key[tuple(np.sort(y))]
                if j != i:
                    pairs.add((i, j))
    i, j = np.array(sorted(pairs)).T
    configs = np.column_stack([scales[j] / scales[i], np.abs(values[j] - values[i]) / scales[i]])
    return np.unique(np.round(configs, 12), axis=0)


def output_grid(noise) -> np.ndarray:
    """A wide output grid in units of S(x) = 1: a fine core and geometric tails."""
    s = noise.scale
    core = np.linspace(-40.0, 40.0, 8001) * s
    tails = np.geomspace(40.0, 1e9, 600) * s
    return np.unique(np.concatenate([-tails, core, tails]))


def max_pure_loss(noise, configs: np.ndarray, max_log_density_ratio, chunk: int = 64) -> float:
    """max over configurations of the log density ratio ln p_x − ln p_x', via the audit tool."""
    y = output_grid(noise)
    worst = -np.inf
    for c0 in range(0, len(configs), chunk):
        r = configs[c0 : c0 + chunk, 0][:, None]
        shift = configs[c0 : c0 + chunk, 1][:, None]
        grid = np.broadcast_to(y, (r.size, y.size))
        lp_xp = lambda t, r=r, shift=shift: noise.logpdf((t - shift) / r) - np.log(r)  # noqa: E731
        worst = max(worst, max_log_density_ratio(noise.logpdf, lp_xp, grid))
    return float(worst)
