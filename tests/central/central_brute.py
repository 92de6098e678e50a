"""Brute-force references for the central statistics (independent of the code under test).

Statistics are recomputed from their definitions on every data set of a small grid domain; sensitivities
are maxima over explicit neighbours. The statistics here are monotone in each record, so the largest
change from substituting one record is reached by moving it to a bound: the grids always contain both.
"""

from __future__ import annotations

import itertools

import numpy as np


def order_stat_rows(rows: np.ndarray, rank: int) -> np.ndarray:
    return np.sort(rows, axis=1)[:, rank - 1]


def trimmed_rows(rows: np.ndarray, m: int) -> np.ndarray:
    s = np.sort(rows, axis=1)
    n = rows.shape[1]
    return s[:, m : n - m].mean(axis=1)


def local_sensitivity_rows(rows: np.ndarray, stat, grid: np.ndarray) -> np.ndarray:
    """LS(y) for each row y: max over positions i and values v in grid of |f(y) − f(y with y_i = v)|."""
    base = stat(rows)
    best = np.zeros(rows.shape[0])
    for i in range(rows.shape[1]):
        for v in grid:
            changed = rows.copy()
            changed[:, i] = v
            best = np.maximum(best, np.abs(stat(changed) - base))
    return best


def all_rows(grid: np.ndarray, n: int) -> np.ndarray:
    """Every tuple of n values from grid, shape (len(grid)^n, n)."""
    return np.array(list(itertools.product(grid, repeat=n)), dtype=float)


def within_k(x: np.ndarray, grid: np.ndarray, k: int) -> np.ndarray:
    """Every data set within k substitutions of x with new values from grid."""
    n = x.size
    out = [x.copy()]
    for size in range(1, k + 1):
        for pos in itertools.combinations(range(n), size):
            for vals in itertools.product(grid, repeat=size):
                y = x.copy()
                y[list(pos)] = vals
                out.append(y)
    return np.array(out)


def brute_local_sensitivity_at(x, stat, grid, k):
    """A^(k)(x) by enumeration."""
    return float(np.max(local_sensitivity_rows(within_k(x, grid, k), stat, grid)))


def brute_smooth_sensitivity(x, stat, grid, beta):
    """S_β(x) = max over the whole domain grid^n of LS(y)·e^{−β·d(x, y)} (positional Hamming distance;
    every ordering of y is enumerated, so this equals the multiset distance)."""
    rows = all_rows(grid, x.size)
    dist = np.count_nonzero(rows != x[None, :], axis=1)
    return float(np.max(local_sensitivity_rows(rows, stat, grid) * np.exp(-beta * dist)))
