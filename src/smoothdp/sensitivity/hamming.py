"""Smooth sensitivity under the Hamming metric, from the local sensitivity at distance k.

For a statistic f on data sets with a neighbour relation (one record substituted, or one record added or
removed), the local sensitivity at distance k is

    A^(k)(x) = max_{y : d(x, y) ≤ k} LS_f(y),      A^(0) = LS_f,

and the β-smooth sensitivity is (NRS07, Definition 2.1 and Proposition 3.1)

    S_β(x) = max_{k ≥ 0} A^(k)(x) / G_β(k),       G_β(k) = e^{βk} (or 1 + βk, see ``smooth.growth``).

k starts at 0 (PDP's Definition 19 starts at 1, which can put S below LS: notes/noise_and_ss.md §0).

Any upper bound on A^(k) that is non-decreasing in k and satisfies A^(k)(y) ≤ A^(k+1)(x) for neighbours
x, y gives a β-smooth upper bound by the same formula. If GS bounds every A^(k), then

    max( max_{k < k0} A^(k)(x)/G_β(k),  GS/G_β(k0) )

is still a β-smooth upper bound for any k0 (notes §4.1, "early stopping"); when GS/G_β(k0) is at most the
running maximum the truncation is *exact*, and that is how :func:`hamming_smooth_sensitivity` stops.

Floating point: every value returned here is rounded **up** by :func:`round_up`, so it is never below the
real-number smooth sensitivity (the rounding adds at most a relative 1e-12 to the smoothness, i.e. the bound
is (β + 1e-12)-smooth; see docs/central.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.sensitivity.growth import Growth, log_growth
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_int, check_positive

__all__ = ["hamming_smooth_sensitivity", "smooth_sensitivity_of_profile"]


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
