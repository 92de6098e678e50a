"""The pair reduction of δ_{ε,M_H}(h) for m ≥ 3 categories, vectorized (one table shared by every pair).

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023. Derivation:
``docs/theory/smoothed-dp.md#pair-reduction``.

**Lemma (pair reduction).** For the neighbour h' = h − e_a + e_b, the likelihood ratio of every output of M_H
depends only on the sampled (or removed) counts of a and b, and the law of w = u_a + u_b is the same under h
and h'. Hence D(h; a→b) = G(h_a + h_b, h_a) with

    G(s, k) = Σ_w law(w | s)·K(s, k, w),   law(w | s) = HG(w; n, s, L)   (Bin(w; T, s/n) with replacement),

K the binary kernel of :mod:`smoothdp.smoothed_dp.histogram_profile`. G depends on (n, L or T, ε, s, k) only —
not on the labels a, b nor on the other counts — so one table serves every pair, and

    δ(h) = max over unordered pairs {a, b} of Δ(h_a + h_b, h_a),
    Δ(s, k) = max{G(s, k), G(s, s−k+1) [k ≥ 1]; G(s, s−k), G(s, k+1) [k ≤ s−1]}.

**Certified truncation.** The w-sum is taken on a window of law(w | s); the mass outside it is bounded by the
geometric tail of the log-concave law at each edge and *added* (K ≤ 1), so every returned ln G is an upper
bound. The window widens until that slack is below e^-36 of the sum.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.smoothed_dp._logmath import log1mexp, log_binom_pmf, log_hypergeom_pmf
from smoothdp.smoothed_dp.histogram_profile import log_removal_kernel, log_replacement_kernel

__all__ = ["histograms_log_profile", "log_pair_divergence", "log_pair_profile", "log_tail_bound"]

_SLACK = 36.0  # a w-window is wide enough when its certified outside mass is below e^-36 of the sum
_ROWS = 2_000_000  # (s, k, w) rows evaluated at once


def _law_moments(n: int, param: int, s: NDArray[np.float64], replace: bool) -> tuple[NDArray, NDArray]:
    p = s / n
    if replace:
        return param * p, np.sqrt(param * p * (1.0 - p))
    return param * p, np.sqrt(param * p * (1.0 - p) * (n - param) / max(n - 1, 1))


def _log_law(n: int, param: int, s: NDArray[np.int64], w: NDArray[np.int64], replace: bool) -> NDArray:
    if replace:
        return log_binom_pmf(w, param, s / n)
    return log_hypergeom_pmf(w, n, s, param)


def _support(n: int, param: int, s: NDArray[np.int64], replace: bool) -> tuple[NDArray, NDArray]:
    if replace:
        return np.zeros_like(s), np.full_like(s, param)
    return np.maximum(0, param - (n - s)), np.minimum(s, param)


def _log_outside(
    n: int, param: int, s: NDArray[np.int64], lo: NDArray[np.int64], hi: NDArray[np.int64], replace: bool
) -> NDArray[np.float64]:
    """ln of an upper bound on P(w < lo) + P(w > hi) for the log-concave law(w | s) (edges past the mode).

    Beyond the edge e (one step outside the window) the pmf ratio is at most ρ = pmf(e')/pmf(e)
    (log-concavity), so the tail is at most pmf(e)/(1 − ρ).
    """
    sup_lo, sup_hi = _support(n, param, s, replace)
    out = np.full(s.shape, -np.inf)
    for edge, step, inside in ((hi + 1, 1, hi < sup_hi), (lo - 1, -1, lo > sup_lo)):
        rows = np.flatnonzero(inside)
        if rows.size == 0:
            continue
        e = edge[rows]
        lp = _log_law(n, param, s[rows], e, replace)
        lq = _log_law(n, param, s[rows], e + step, replace)
        with np.errstate(invalid="ignore"):
            rho = np.where(np.isfinite(lp), np.minimum(lq - lp, 0.0), -np.inf)
        bound = np.where(rho < -1e-12, lp - log1mexp(rho), lp + np.log(n + 1.0))  # crude if flat
        out[rows] = np.logaddexp(out[rows], bound)
    return out


def log_pair_divergence(
    n: int, param: int, epsilon: float, s: ArrayLike, k: ArrayLike, *, replace: bool
) -> NDArray[np.float64]:
    """ln G(s, k) (an upper bound, tight to e^-36 relative): D(h; a→b) for h_a = k, h_a + h_b = s.

    ``param`` is L = n − T without replacement, T with replacement. Needs 1 ≤ k ≤ s ≤ n.
    """
    s_arr, k_arr = np.broadcast_arrays(np.asarray(s, dtype=np.int64), np.asarray(k, dtype=np.int64))
    shape = s_arr.shape
    s_arr, k_arr = s_arr.ravel(), k_arr.ravel()
    if np.any((k_arr < 1) | (k_arr > s_arr) | (s_arr > n)):
        raise ValueError("log_pair_divergence needs 1 ≤ k ≤ s ≤ n")
    kernel = log_replacement_kernel if replace else log_removal_kernel
    pairs, where = np.unique(np.stack([s_arr, k_arr]), axis=1, return_inverse=True)
    us, uk = pairs[0], pairs[1]
    result = np.full(us.size, np.nan)
    sup_lo, sup_hi = _support(n, param, us, replace)
    mean, sd = _law_moments(n, param, us.astype(np.float64), replace)
    todo = np.arange(us.size)
    budget = 50.0
    while todo.size:
        half = np.ceil(math.sqrt(2.0 * budget) * sd[todo] + budget / 3.0 + 3.0).astype(np.int64)
        lo = np.maximum(sup_lo[todo], np.floor(mean[todo]).astype(np.int64) - half)
        hi = np.minimum(sup_hi[todo], np.ceil(mean[todo]).astype(np.int64) + half)
        widths = hi - lo + 1
        sums = np.full(todo.size, -np.inf)
        starts = np.concatenate([[0], np.cumsum(widths)])
        for c0 in range(0, todo.size, max(1, _ROWS // max(1, int(widths.max())))):
            c1 = min(todo.size, c0 + max(1, _ROWS // max(1, int(widths.max()))))
            wsz = widths[c0:c1]
            grp = np.repeat(np.arange(c0, c1), wsz)
            w = lo[grp] + (np.arange(grp.size) - np.repeat(starts[c0:c1] - starts[c0], wsz))
            rows = todo[grp]
            terms = _log_law(n, param, us[rows], w, replace) + kernel(us[rows], uk[rows], w, epsilon)
            first = starts[c0:c1] - starts[c0]
            peak = np.maximum.reduceat(terms, first)
            safe = np.where(np.isfinite(peak), peak, 0.0)
            with np.errstate(divide="ignore"):
                sums[c0:c1] = np.log(np.add.reduceat(np.exp(terms - np.repeat(safe, wsz)), first)) + safe
        slack = _log_outside(n, param, us[todo], lo, hi, replace)
        done = (slack < sums - _SLACK) | ~np.isfinite(slack) | (budget > 1500.0)
        result[todo[done]] = np.logaddexp(sums[done], slack[done])
        todo = todo[~done]
        budget *= 3.0
    return result[where].reshape(shape)


def log_pair_profile(
    n: int, param: int, epsilon: float, s: ArrayLike, k: ArrayLike, *, replace: bool
) -> NDArray[np.float64]:
    """ln Δ(s, k): the worst of the four divergences between h and a neighbour moving a record between two
    categories with counts k and s − k (0 ≤ k ≤ s ≤ n; −inf when s = 0)."""
    s_arr, k_arr = np.broadcast_arrays(np.asarray(s, dtype=np.int64), np.asarray(k, dtype=np.int64))
    shape = s_arr.shape
    s_arr, k_arr = s_arr.ravel(), k_arr.ravel()
    if np.any((k_arr < 0) | (k_arr > s_arr) | (s_arr > n)):
        raise ValueError("log_pair_profile needs 0 ≤ k ≤ s ≤ n")
    args = np.stack(
        [
            np.where(k_arr >= 1, k_arr, 0),
            np.where(k_arr >= 1, s_arr - k_arr + 1, 0),
            np.where(k_arr <= s_arr - 1, s_arr - k_arr, 0),
            np.where(k_arr <= s_arr - 1, k_arr + 1, 0),
        ]
    )
    ss = np.broadcast_to(s_arr, args.shape)
    present = args >= 1
    out = np.full(args.shape, -np.inf)
    if present.any():
        out[present] = log_pair_divergence(n, param, epsilon, ss[present], args[present], replace=replace)
    return out.max(axis=0).reshape(shape)


def histograms_log_profile(
    histograms: ArrayLike, param: int, epsilon: float, *, replace: bool
) -> NDArray[np.float64]:
    """ln δ(h) for many histograms at once (rows of an (N, m) array, all with the same total n).

    δ(h) = max over unordered pairs {a, b} of Δ(h_a + h_b, h_a) (the pair reduction above).
    """
    h = np.atleast_2d(np.asarray(histograms, dtype=np.int64))
    n = int(h[0].sum())
    if np.any(h.sum(axis=1) != n):
        raise ValueError("histograms_log_profile needs histograms with one total n")
    m = h.shape[1]
    pair_a, pair_b = np.triu_indices(m, 1)
    s = h[:, pair_a] + h[:, pair_b]
    values = log_pair_profile(n, param, epsilon, s, h[:, pair_a], replace=replace)
    return values.max(axis=1)


def log_tail_bound(log_edge: NDArray, log_next: NDArray) -> NDArray[np.float64]:
    """ln of pmf(e)/(1 − ρ), ρ = pmf(e')/pmf(e): the mass at and beyond an edge e of a log-concave pmf."""
    with np.errstate(invalid="ignore"):
        rho = np.where(np.isfinite(log_edge), np.minimum(log_next - log_edge, 0.0), -np.inf)
    return np.where(
        rho < -1e-12,
        log_edge - log1mexp(np.minimum(rho, -1e-300)),
        np.where(np.isfinite(log_edge), 0.0, -np.inf),
    )


def trinomial_log_expected_delta(
    n: int, param: int, epsilon: float, pi: ArrayLike, *, replace: bool
) -> float:
    """ln E_{h∼Multinomial(n, π)}[δ(h)] for m = 3 (an upper bound, tight to e^-36 relative).

    The sum runs over a window of histograms; the probability outside it (bounded by geometric tails of the
    log-concave binomial marginals) is added, since δ ≤ 1.
    """
    p = np.asarray(pi, dtype=np.float64)
    order = np.argsort(-p)
    p = p[order]
    if p[0] >= 1.0:  # a point mass at (n, 0, 0)
        return float(histograms_log_profile(np.array([[n, 0, 0]]), param, epsilon, replace=replace)[0])
    q1 = p[1] / (1.0 - p[0])
    budget = 45.0
    while True:
        radius = math.sqrt(2.0 * budget)
        sd0 = math.sqrt(n * p[0] * (1.0 - p[0]))
        h0 = np.arange(
            max(0, math.floor(n * p[0] - radius * sd0 - budget / 3 - 3)),
            min(n, math.ceil(n * p[0] + radius * sd0 + budget / 3 + 3)) + 1,
        )
        rest = n - h0
        sd1 = np.sqrt(rest * q1 * (1.0 - q1))
        lo1 = np.maximum(0, np.floor(rest * q1 - radius * sd1 - budget / 3 - 3)).astype(np.int64)
        hi1 = np.minimum(rest, np.ceil(rest * q1 + radius * sd1 + budget / 3 + 3)).astype(np.int64)
        widths = hi1 - lo1 + 1
        rep0 = np.repeat(h0, widths)
        starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
        h1 = np.repeat(lo1, widths) + np.arange(rep0.size) - np.repeat(starts, widths)
        hist = np.stack([rep0, h1, n - rep0 - h1], axis=1)
        log_p = log_binom_pmf(rep0, n, p[0]) + log_binom_pmf(h1, n - rep0, q1)
        log_d = histograms_log_profile(hist, param, epsilon, replace=replace)
        total = float(np.logaddexp.reduce(log_p + log_d))
        # mass outside the window: h0 beyond its ends, and h1 beyond its ends given each h0 inside
        log_h0 = log_binom_pmf(h0, n, p[0])
        out = [
            log_tail_bound(log_binom_pmf(h0[-1] + 1, n, p[0]), log_binom_pmf(h0[-1] + 2, n, p[0]))
            if h0[-1] < n
            else np.array(-np.inf),
            log_tail_bound(log_binom_pmf(h0[0] - 1, n, p[0]), log_binom_pmf(h0[0] - 2, n, p[0]))
            if h0[0] > 0
            else np.array(-np.inf),
        ]
        up = np.where(
            hi1 < rest,
            log_tail_bound(log_binom_pmf(hi1 + 1, rest, q1), log_binom_pmf(hi1 + 2, rest, q1)),
            -np.inf,
        )
        down = np.where(
            lo1 > 0,
            log_tail_bound(log_binom_pmf(lo1 - 1, rest, q1), log_binom_pmf(lo1 - 2, rest, q1)),
            -np.inf,
        )
        out.append(np.logaddexp.reduce(log_h0 + np.logaddexp(up, down)))
        slack = float(np.logaddexp.reduce(np.array([float(v) for v in out])))
        if slack < total - _SLACK or budget > 1500.0:
            return float(np.logaddexp(total, slack))
        budget *= 2.0
