"""Exact privacy profile δ_{ε,M_H}(h) of the sampling-histogram mechanism, in log space (fast paths).

Notation (``docs/theory/smoothed-dp.md#sampling-histogram-mechanism``): n records, histogram h over m
categories, T sampled, L = n − T removed, c = e^ε. A neighbour replaces one record of category a by one of
category b: h' = h − e_a + e_b.

**Binary kernel, without replacement.** With N records of which k are of category a, and L removed, the
removed count u of category a is HG(N, k, L) and the likelihood ratio of the neighbour with k−1 is
(u/k)·(N−k+1)/(L−u+1), so

    A(N, k, L) = d(x_k, x_{k−1}) = Σ_u HG(u; N, k, L) · (1 − c·(u/k)(N−k+1)/(L−u+1))_+ ,

a lower-tail sum (u < u* = k(L+1)/((N−k+1)c + k)).

**Binary kernel, with replacement.** The sampled count j of category a is Bin(T, k/N) and the ratio
((k−1)/k)^j ((N−k+1)/(N−k))^{T−j} decreases in j, so

    B(N, k, T) = Σ_j (Bin(j; T, k/N) − c·Bin(j; T, (k−1)/N))_+ , an upper-tail sum.

**Profile.** Binary (m = 2, k records of category 1): δ(k) = max{K(k), K(n−k+1) [k ≥ 1]; K(n−k), K(k+1)
[k ≤ n−1]} (K = A or B; label symmetry). General m: condition on w = u_a + u_b (resp. s_a + s_b), whose law
HG(n, h_a+h_b, L) (resp. Bin(T, (h_a+h_b)/n)) is the same under h and h':

    D(h; a→b) = Σ_w law(w) · K(h_a+h_b, h_a, w),   D(h'; b→a) = Σ_w law(w) · K(h_a+h_b, h_b+1, w),

and δ(h) = max over ordered pairs (a, b), h_a ≥ 1, of both. Derivations:
``docs/theory/smoothed-dp.md#binary-hypergeometric-closed-form``,
``docs/theory/smoothed-dp.md#general-number-of-categories`` and
``docs/theory/smoothed-dp.md#sampling-with-replacement``; brute-force checks: ``tests/smoothed_dp``.

**Summation.** Each kernel is a tail of a log-concave pmf. We sum a window starting at the cut-off and widen
it until the geometric bound on the rest, pmf(edge)·ρ/(1−ρ) with ρ the pmf ratio at the edge, is below e^-40
of the sum (relative truncation error < 5e-18). The pmf in the window is one Loader anchor plus cumulative log
ratios.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.smoothed_dp._logmath import log1mexp, log_binom_pmf, log_hypergeom_pmf, logsumexp_or_neginf

__all__ = [
    "binary_log_profile",
    "histogram_log_profile",
    "log_removal_kernel",
    "log_replacement_kernel",
]

_TAIL_CUTOFF = 40.0  # widen a window until the rest is below e^-40 of the sum
_CHUNK = 250_000  # rows × window elements processed at once


def _tail_logsum(
    anchor: NDArray[np.int64],
    limit: NDArray[np.int64],
    step: int,
    log_pmf_anchor: NDArray[np.float64],
    log_ratio: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]],
    log_weight: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]],
    max_initial_window: int,
) -> NDArray[np.float64]:
    """ln Σ_{j ≥ 0} pmf_r(u_j)·w_r(u_j), u_j = anchor_r + step·j up to limit_r, for every row r.

    ``log_ratio(rows, u)`` = ln pmf(u + step)/pmf(u); ``log_weight(rows, u)`` = ln w(u), w ∈ [0, 1]. The pmf
    must be log-concave along the walk. Each row sums a window, then extends it (doubling) until the geometric
    bound on the rest, pmf(edge)·ρ/(1−ρ) with ρ = pmf(edge+step)/pmf(edge) < 1, is below e^-40 of its sum.
    """
    rows_total = anchor.size
    total = np.full(rows_total, -np.inf)
    remaining = (limit - anchor) * step + 1  # number of terms not yet summed
    next_u = anchor.copy()
    next_lp = log_pmf_anchor.astype(np.float64).copy()
    todo = np.flatnonzero(remaining >= 1)
    with np.errstate(all="ignore"):
        # first window per row: enough terms for the pmf to fall by e^-42 at the anchor's decay rate
        first = log_ratio(todo, next_u[todo])
        width = np.full(rows_total, max_initial_window, dtype=np.int64)
        width[todo] = np.where(
            first < -1e-3,
            np.minimum(np.ceil(42.0 / -np.minimum(first, -1e-3)) + 3, max_initial_window),
            width[todo],
        ).astype(np.int64)
        while todo.size:
            w_rows = np.minimum(width[todo], remaining[todo])
            failed = []
            for start in range(0, todo.size, max(1, _CHUNK // max(1, int(w_rows.max())))):
                rows = todo[start : start + max(1, _CHUNK // max(1, int(w_rows.max())))]
                w_r = np.minimum(width[rows], remaining[rows])
                w = int(w_r.max())
                j = np.arange(w)
                u = next_u[rows, None] + step * j[None, :]
                valid = j[None, :] < w_r[:, None]
                ratio = log_ratio(rows, u)  # ln pmf(u + step)/pmf(u)
                steps = np.where(valid[:, 1:], ratio[:, :-1], 0.0)  # step into element j+1 if it is summed
                lp = next_lp[rows, None] + np.concatenate(
                    [np.zeros((rows.size, 1)), np.cumsum(steps, axis=1)], axis=1
                )
                lw = np.where(valid, log_weight(rows, u), -np.inf)
                total[rows] = np.logaddexp(total[rows], logsumexp_or_neginf(lp + lw, axis=1))
                last = w_r - 1
                pick = np.arange(rows.size)
                lp_edge, rho = lp[pick, last], ratio[pick, last]
                remaining[rows] -= w_r
                next_u[rows] = u[pick, last] + step
                next_lp[rows] = lp_edge + rho
                bound = lp_edge + rho - log1mexp(np.minimum(rho, -1e-300))
                done = (remaining[rows] == 0) | ((rho < 0) & (bound < total[rows] - _TAIL_CUTOFF))
                failed.append(rows[~done])
            todo = np.concatenate(failed)
            width[todo] *= 2
    if np.isnan(total).any():  # never hand back a silent NaN
        raise FloatingPointError("tail summation produced NaN; please report the arguments")
    return total


def _as_int_arrays(*arrays: ArrayLike) -> tuple[NDArray[np.int64], ...]:
    out = np.broadcast_arrays(*(np.asarray(a, dtype=np.int64) for a in arrays))
    return tuple(np.ascontiguousarray(a).ravel() for a in out)


def _initial_window(epsilon: float) -> int:
    # below the cut-off the pmf falls at least by e^-ε per step: 40/ε terms reach e^-40
    return int(np.ceil(40.0 / max(epsilon, 1e-3))) + 8


def log_removal_kernel(
    total: ArrayLike, count: ArrayLike, removed: ArrayLike, epsilon: float
) -> NDArray[np.float64]:
    """ln A(N, k, L): the without-replacement binary kernel d(x_k, x_{k−1}) (see module docstring).

    Broadcast over ``total`` N, ``count`` k (1 ≤ k ≤ N) and ``removed`` L (0 ≤ L ≤ N).
    """
    shape = np.broadcast_shapes(np.shape(total), np.shape(count), np.shape(removed))
    big_n, k, big_l = _as_int_arrays(total, count, removed)
    if np.any((k < 1) | (k > big_n) | (big_l < 0) | (big_l > big_n)):
        raise ValueError("log_removal_kernel needs 1 ≤ count ≤ total and 0 ≤ removed ≤ total")
    c = float(np.exp(epsilon))
    nf, kf, lf = big_n.astype(np.float64), k.astype(np.float64), big_l.astype(np.float64)
    u_lo = np.maximum(0, big_l - (big_n - k))
    u_hi = np.minimum(k, big_l)
    u_star = kf * (lf + 1.0) / ((nf - kf + 1.0) * c + kf)
    top = np.minimum(
        u_hi, np.floor(u_star).astype(np.int64) + 1
    )  # one past the cut-off: its weight is masked
    has_terms = top >= u_lo
    top = np.where(has_terms, top, u_lo)

    def log_ratio(rows: NDArray[np.int64], u: NDArray[np.int64]) -> NDArray[np.float64]:
        # ln HG(u−1)/HG(u) = ln u(N−k−L+u) / ((k−u+1)(L−u+1))
        n_, k_, l_ = (a[rows].reshape(rows.shape + (1,) * (u.ndim - 1)) for a in (nf, kf, lf))
        uf = u.astype(np.float64)
        # one log of a product of exact integers (< 2^53 each factor pair for n up to ~9e7)
        return np.log((uf * (n_ - k_ - l_ + uf)) / ((k_ - uf + 1.0) * (l_ - uf + 1.0)))

    def log_weight(rows: NDArray[np.int64], u: NDArray[np.int64]) -> NDArray[np.float64]:
        n_, k_, l_ = (a[rows].reshape(rows.shape + (1,) * (u.ndim - 1)) for a in (nf, kf, lf))
        uf = u.astype(np.float64)
        # x = c·(u/k)(N−k+1)/(L−u+1); ln(1 − x) by log1p: as accurate as the exact-integer difference
        # (both lose ~1e-16/(1−x) relative near the cut-off, where the term itself is small)
        x = (c * uf * (n_ - k_ + 1.0)) / (k_ * (l_ - uf + 1.0))
        return np.log1p(-np.minimum(x, 1.0))

    anchor_lp = log_hypergeom_pmf(top, big_n, k, big_l)
    out = np.full(big_n.shape, -np.inf)
    rows = np.flatnonzero(has_terms)
    if rows.size:
        sub = _tail_logsum(
            top[rows],
            u_lo[rows],
            -1,
            anchor_lp[rows],
            lambda r, u: log_ratio(rows[r], u),
            lambda r, u: log_weight(rows[r], u),
            _initial_window(epsilon),
        )
        out[rows] = sub
    return out.reshape(shape)


def log_replacement_kernel(
    total: ArrayLike, count: ArrayLike, draws: ArrayLike, epsilon: float
) -> NDArray[np.float64]:
    """ln B(N, k, T): the with-replacement binary kernel Σ_j (Bin(j;T,k/N) − e^ε Bin(j;T,(k−1)/N))_+ .

    Broadcast over N, k (1 ≤ k ≤ N) and T ≥ 0.
    """
    shape = np.broadcast_shapes(np.shape(total), np.shape(count), np.shape(draws))
    big_n, k, big_t = _as_int_arrays(total, count, draws)
    if np.any((k < 1) | (k > big_n) | (big_t < 0)):
        raise ValueError("log_replacement_kernel needs 1 ≤ count ≤ total and draws ≥ 0")
    nf, kf, tf = big_n.astype(np.float64), k.astype(np.float64), big_t.astype(np.float64)
    p = kf / nf
    with np.errstate(divide="ignore", invalid="ignore"):
        # ln ratio(j) = j·α + T·β, α = ln((k−1)/k) − ln((N−k+1)/(N−k)) < 0, β = ln((N−k+1)/(N−k)) > 0
        alpha = np.log((kf - 1.0) / kf) - np.log1p(1.0 / (nf - kf))
        beta = np.log1p(1.0 / (nf - kf))
        # first j with ε + jα + Tβ < 0 (weight > 0); α = −∞ (k = 1) or β = ∞ (k = N) handled below
        start = np.floor((epsilon + tf * beta) / (-alpha)).astype(np.float64)
        log_down = np.log((kf - 1.0) / kf)  # ln((k−1)/k), −∞ for k = 1
        log_odds = np.log(p) - np.log1p(-p)
    start = np.where(k == 1, 0.0, start)
    start = np.where(k == big_n, tf, start)  # all mass at j = T
    start = np.where(np.isnan(start), 0.0, np.where(np.isposinf(start), tf, start))
    start = np.clip(start, 0.0, tf).astype(np.int64)

    def log_ratio(rows: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.float64]:
        # ln Bin(j+1)/Bin(j) = ln (T−j)/(j+1) + ln p/(1−p)
        t_, lo_ = (a[rows].reshape(rows.shape + (1,) * (j.ndim - 1)) for a in (tf, log_odds))
        jf = j.astype(np.float64)
        return np.log(t_ - jf) - np.log(jf + 1.0) + lo_

    def log_weight(rows: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.float64]:
        d_, b_, t_, k_, n_ = (
            arr[rows].reshape(rows.shape + (1,) * (j.ndim - 1)) for arr in (log_down, beta, tf, kf, nf)
        )
        jf = j.astype(np.float64)
        # ln(c·ratio(j)) = ε + j ln((k−1)/k) + (T−j) ln((N−k+1)/(N−k))
        expo = epsilon + np.where(jf > 0, jf * d_, 0.0) + np.where(t_ - jf > 0, (t_ - jf) * b_, 0.0)
        # k = 1: ratio is 0 for j ≥ 1; k = N: ratio is ((N−1)/N)^j·[j = T]
        expo = np.where((k_ == 1) & (jf >= 1), -np.inf, expo)
        expo = np.where((k_ == n_) & (jf == t_), epsilon + t_ * np.log1p(-1.0 / n_), expo)
        return np.where(expo < 0, log1mexp(np.minimum(expo, 0.0)), -np.inf)

    anchor_lp = log_binom_pmf(start, tf, p)
    out = _tail_logsum(start, big_t, +1, anchor_lp, log_ratio, log_weight, _initial_window(epsilon) + 2)
    return out.reshape(shape)


def binary_log_profile(
    n: int, removed_or_draws: int, epsilon: float, counts: ArrayLike | None = None, *, replace: bool = False
) -> NDArray[np.float64]:
    """ln δ(k) of M_H on binary databases with k records of category 1, for k in ``counts`` (default 0..n).

    ``removed_or_draws`` is L = n − T without replacement, T with replacement.
    """
    k = np.arange(n + 1, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    if np.any((k < 0) | (k > n)):
        raise ValueError(f"counts must lie in [0, n] = [0, {n}]")
    kernel = log_replacement_kernel if replace else log_removal_kernel
    # the four kernel arguments of δ(k), -1 where the neighbour does not exist
    args = np.stack(
        [
            np.where(k >= 1, k, -1),
            np.where(k >= 1, n - k + 1, -1),
            np.where(k <= n - 1, n - k, -1),
            np.where(k <= n - 1, k + 1, -1),
        ]
    )
    present = args >= 1
    out = np.full(args.shape, -np.inf)
    if 8 * args.size >= n:  # many k (arguments lie in 1..n): a dense mask is faster than np.unique
        seen = np.zeros(n + 2, dtype=bool)
        seen[args[present]] = True
        needed = np.flatnonzero(seen)
        table = np.full(n + 2, -np.inf)
        table[needed] = kernel(n, needed, removed_or_draws, epsilon)
        out[present] = table[args[present]]
    elif present.any():  # a few k of a huge n (Figure 1: n ≈ 1.5e8): no O(n) arrays
        needed, where = np.unique(args[present], return_inverse=True)
        out[present] = kernel(n, needed, removed_or_draws, epsilon)[where]
    return out.max(axis=0)


def histogram_log_profile(
    histogram: NDArray[np.int64], removed_or_draws: int, epsilon: float, *, replace: bool
) -> tuple[float, tuple[int, int, str]]:
    """ln δ(h) of M_H for a histogram over m ≥ 2 categories, and the worst neighbour (a, b, direction).

    direction "forward" is d(h, h − e_a + e_b), "backward" is d(h − e_a + e_b, h).
    """
    h = np.asarray(histogram, dtype=np.int64)
    n = int(h.sum())
    m = h.size
    kernel = log_replacement_kernel if replace else log_removal_kernel
    pairs = [(a, b) for a in range(m) for b in range(m) if a != b and h[a] >= 1]
    if not pairs:
        return -np.inf, (-1, -1, "")
    best = (-np.inf, (-1, -1, ""))
    rows_a = np.array([a for a, _ in pairs])
    rows_b = np.array([b for _, b in pairs])
    n_ab = h[rows_a] + h[rows_b]
    if m == 2:  # the conditioning is trivial: w = L (or T)
        fwd = kernel(n_ab, h[rows_a], removed_or_draws, epsilon)
        bwd = kernel(n_ab, h[rows_b] + 1, removed_or_draws, epsilon)
    else:
        fwd = np.empty(len(pairs))
        bwd = np.empty(len(pairs))
        for i, (n_pair, ha, hb) in enumerate(zip(n_ab, h[rows_a], h[rows_b], strict=True)):
            if replace:
                w = np.arange(removed_or_draws + 1)
                log_law = log_binom_pmf(w, removed_or_draws, n_pair / n)
            else:
                w = np.arange(max(0, removed_or_draws - (n - n_pair)), min(n_pair, removed_or_draws) + 1)
                log_law = log_hypergeom_pmf(w, n, n_pair, removed_or_draws)
            fwd[i] = logsumexp_or_neginf(log_law + kernel(n_pair, ha, w, epsilon))
            bwd[i] = logsumexp_or_neginf(log_law + kernel(n_pair, hb + 1, w, epsilon))
    for i, (a, b) in enumerate(pairs):
        if fwd[i] > best[0]:
            best = (float(fwd[i]), (a, b, "forward"))
        if bwd[i] > best[0]:
            best = (float(bwd[i]), (a, b, "backward"))
    return best
