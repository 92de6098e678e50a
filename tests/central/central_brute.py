"""Brute-force references for the central statistics (independent of the code under test).

Statistics are recomputed from their definitions on every data set of a small grid domain; sensitivities
are maxima over explicit neighbours. The statistics here are monotone in each record, so the largest
change from substituting one record is reached by moving it to a bound: the grids always contain both.

Also the generic Hamming smooth sensitivity from a profile A^(k) (formerly ``smoothdp.sensitivity.hamming``,
used only as a test reference): S_β(x) = max_{k ≥ 0} A^(k)(x)/G_β(k), G_β(k) = e^{βk} or 1 + βk
(docs/theory/smooth-sensitivity.md#smooth-sensitivity), with the exact early stop of
docs/theory/smooth-sensitivity.md#why-the-smooth-sensitivity-is-a-smooth-upper-bound.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.sensitivity.growth import Growth, log_growth
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_int, check_positive


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


# -- generic Hamming smooth sensitivity from A^(k) (test reference) ----------------------------------------
def smooth_sensitivity_of_profile(
    local_sensitivity_at: ArrayLike,
    beta: float,
    *,
    tail: float | None = None,
    growth: Growth = "exponential",
) -> float:
    """S_β = max_k A^(k)/G_β(k) from a given profile A^(0), …, A^(K).

    Parameters
    ----------
    local_sensitivity_at
        The values A^(k) for k = 0..K (an upper bound on each is enough), non-decreasing in k.
    beta
        The smoothness β > 0.
    tail
        An upper bound on A^(k) for every k > K. ``None``: the profile is complete, i.e. A^(k) = A^(K) for
        k ≥ K (true under substitution once K ≥ n: every data set of size n is within n substitutions).
    growth
        ``"exponential"`` (e^{βk}) or ``"linear"`` (1 + βk).

    Returns
    -------
    float
        The smooth sensitivity, rounded up.
    """
    b = check_positive("beta", beta)
    a = np.asarray(local_sensitivity_at, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"local_sensitivity_at must be a non-empty 1-D profile; got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError("local_sensitivity_at must hold finite non-negative values")
    if np.any(np.diff(a) < 0):
        raise ValueError(
            "local_sensitivity_at must be non-decreasing in k (A^(k) is a max over a growing set)"
        )
    k = np.arange(a.size, dtype=np.float64)
    with np.errstate(divide="ignore"):
        best = float(np.max(np.exp(np.log(a) - log_growth(k, b, growth))))
    if tail is not None:
        t = check_positive("tail", tail) if tail != 0 else 0.0
        if t > 0:
            best = max(best, float(np.exp(np.log(t) - log_growth(float(a.size), b, growth))))
    return float(round_up(best))


def hamming_smooth_sensitivity(
    local_sensitivity_at: Callable[[NDArray[np.int64]], ArrayLike],
    beta: float,
    *,
    global_sensitivity: float,
    max_distance: int | None = None,
    growth: Growth = "exponential",
    chunk: int = 256,
) -> float:
    """The β-smooth sensitivity of any statistic, given its local sensitivity at distance k.

    S_β(x) = max_{k ≥ 0} A^(k)(x)/G_β(k)  (NRS07 Def. 2.1, Prop. 3.1), evaluated exactly: k runs in chunks
    until the global bound GS/G_β(k) can no longer beat the running maximum, or until ``max_distance``.

    Parameters
    ----------
    local_sensitivity_at
        Vectorized callable: an int array of distances k ↦ A^(k)(x) (or upper bounds on them that keep the
        properties of A: non-decreasing in k, and A^(k)(y) ≤ A^(k+1)(x) for neighbours).
    beta
        The smoothness β > 0.
    global_sensitivity
        GS ≥ A^(k) for every k (used to stop the search; must be finite).
    max_distance
        A distance K beyond which A^(k) no longer grows (K = n under substitution). ``None``: no such K; the
        search stops only when GS/G_β(k) falls below the running maximum.
    growth
        ``"exponential"`` or ``"linear"``.
    chunk
        How many distances the first call of ``local_sensitivity_at`` evaluates (doubled on each call).

    Returns
    -------
    float
        S_β(x), rounded up.
    """
    b = check_positive("beta", beta)
    gs = check_positive("global_sensitivity", global_sensitivity)
    if max_distance is not None:
        max_distance = check_int("max_distance", max_distance, minimum=0)
    step = check_int("chunk", chunk, minimum=1)
    best = 0.0
    start = 0
    while True:
        stop = start + step if max_distance is None else min(start + step, max_distance + 1)
        ks = np.arange(start, stop, dtype=np.int64)
        a = np.asarray(local_sensitivity_at(ks), dtype=np.float64)
        if a.shape != ks.shape or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError("local_sensitivity_at must return one finite non-negative value per distance")
        if np.any(a > gs * (1 + 1e-9)):
            raise ValueError("global_sensitivity must bound every A^(k); a larger A^(k) was returned")
        with np.errstate(divide="ignore"):
            best = max(best, float(np.max(np.exp(np.log(a) - log_growth(ks, b, growth)))))
        if max_distance is not None and stop > max_distance:
            return float(round_up(best))
        # Every later term is at most GS/G_β(stop): once that cannot win, the maximum is final.
        if gs * float(np.exp(-log_growth(float(stop), b, growth))) <= best:
            return float(round_up(best))
        start, step = stop, 2 * step  # doubling: O(log K) calls however far the search goes
