"""A certified bracket on E[δ(h)] of M_H (without replacement) for m = 3 at large n, and δ_SDP from it.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023. Proofs:
``docs/theory/smoothed-dp.md#monotone-bracket``.

Write g(x, y) = G(x + y, x) = D(h; a→b) for h_a = x, h_b = y (the pair kernel of
:mod:`smoothdp.smoothed_dp.pairs`). Then δ(h) = max over ordered pairs (a, b) of g(h_a, h_b) [h_a ≥ 1] and
g(h_a + 1, h_b − 1) [h_b ≥ 1]. Two facts make a coarse table enough:

1. **g is non-increasing in x and in y** (data processing: relabelling one random record of the third
   category is a post-processing that maps the pair (h, h') to the pair one step up).
2. Conditioning on u_a ∼ HG(n, x, L): g(x, y) = Σ_u HG(u; n, x, L)·W(u), W(0) = 1,
   W(u) = E_{v∼HG(N, y, L−u)}[(1 − e^ε u(y + 1)/(x(v + 1)))_+] with population N = n − x; W **does not
   decrease when N decreases** (coupling: removing a non-b record never lowers the sampled count of b).

So with ỹ ≤ y and Ñ ≤ n − x on a coarse grid, g(x, y) ≤ g(x, ỹ) ≤ Σ_u HG(u; n, x, L)·W(u; N = Ñ, y = ỹ),
exact in x (in HG and in e^ε u(ỹ + 1)/x); the grid points on the other side give a lower bound. The grid
keeps ``bits`` + 1 significant bits of a count and of n minus it; it is refined until the bracket
[lower, upper] on E[δ] is within ``rtol``. Every truncation is added to the upper bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.smoothed_dp._logmath import log1mexp, log_binom_pmf, log_hypergeom_pmf
from smoothdp.smoothed_dp.pairs import log_pair_divergence, log_tail_bound

__all__ = [
    "BRACKET_RTOL",
    "ExpectedDeltaBracket",
    "grid_ceil",
    "grid_floor",
    "trinomial_expected_delta_bracket",
    "trinomial_smoothed_delta",
]

BRACKET_RTOL = 1e-2  # the public path's relative width of the bracket
_FLOAT_MARGIN = (
    1e-9  # relative margin added to every upper bound: rounding (~1e-13) and kernel tails (< e^-39)
)
_MAX_BITS = 40
_TRACE = False


def _bit_length(v: NDArray[np.int64]) -> NDArray[np.int64]:
    _, e = np.frexp(v.astype(np.float64))  # exact for v < 2^53: v = m·2^e, m ∈ [½, 1)
    return np.where(v > 0, e, 0).astype(np.int64)


def grid_floor(v: ArrayLike, bits: int) -> NDArray[np.int64]:
    """The largest grid point ≤ v: v with all but its ``bits`` + 1 leading binary digits cleared."""
    v = np.asarray(v, dtype=np.int64)
    shift = np.maximum(_bit_length(v) - 1 - bits, 0)
    return (v >> shift) << shift


def grid_ceil(v: ArrayLike, bits: int) -> NDArray[np.int64]:
    """The smallest grid point ≥ v (a grid point of this or the next binade)."""
    v = np.asarray(v, dtype=np.int64)
    shift = np.maximum(_bit_length(v) - 1 - bits, 0)
    low = (v >> shift) << shift
    return np.where(low == v, v, low + (np.int64(1) << shift))


def _u_top(n: int, removed: int, x_max: int) -> int:
    mean = removed * x_max / n
    sd = math.sqrt(max(mean * (1 - x_max / n), 0.0))
    return int(min(removed, x_max, math.ceil(mean + 12.0 * sd + 20.0)))


def _w_block(
    n: int,
    removed: int,
    c: float,
    xs: NDArray[np.int64],
    pop: NDArray[np.int64],
    y_points: NDArray[np.int64],
    top: int,
    upper: bool,
) -> NDArray[np.float64]:
    """ln of a bound on W(u; x, y) = E_{v∼HG(n−x, y, L−u)}[(1 − C/(v + 1))_+], C = e^ε u(y + 1)/x, for every
    x of ``xs`` (one block), y in ``y_points`` and u = 0..top, with the population n − x of the v-law replaced
    by ``pop[y]``: an upper bound when pop ≤ n − x, a lower bound when pop ≥ n − x (coupling lemma). Shape
    (x, y, u). The v-law is summed once per (y, u) as suffix sums S0(k) = Σ_{v≥k} P(v) and
    S1(k) = Σ_{v≥k} P(v)/(v+1), so that W = S0(⌊C⌋) − C·S1(⌊C⌋) for every x at once.
    """
    ny, nu = y_points.size, top
    out = np.full((xs.size, ny, top + 1), -np.inf)
    out[:, :, 0] = 0.0
    if top == 0:
        return out
    yy = np.repeat(y_points, nu)
    uu = np.tile(np.arange(1, top + 1, dtype=np.int64), ny)
    big_n = np.repeat(pop, nu)
    d = removed - uu
    valid = (d >= 0) & (d <= big_n) & (yy <= big_n)
    cmat = (
        c * uu[:, None].astype(np.float64) * (yy[:, None] + 1.0) / xs[None, :].astype(np.float64)
    )  # (row, x)
    sup_lo = np.maximum(0, d - (big_n - yy))
    sup_hi = np.minimum(yy, d)
    k_lo = np.maximum(np.floor(np.minimum(cmat[:, -1], sup_hi + 1.0)).astype(np.int64), sup_lo)
    k_hi = np.floor(np.minimum(cmat[:, 0], sup_hi + 1.0)).astype(np.int64)
    nf, kf, df = big_n.astype(np.float64), yy.astype(np.float64), d.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = df * kf / np.maximum(nf, 1.0)
        sd = np.sqrt(
            np.maximum(mean * (1.0 - kf / np.maximum(nf, 1.0)) * (nf - df) / np.maximum(nf - 1.0, 1.0), 0.0)
        )
    mean, sd = np.where(valid, mean, 0.0), np.where(valid, np.nan_to_num(sd), 0.0)
    stop = np.minimum(sup_hi, np.maximum(k_hi + 2, np.ceil(mean + 12.0 * sd + 20.0).astype(np.int64)))
    rows = np.flatnonzero(valid & (k_lo <= sup_hi))
    w_log = np.full((yy.size, xs.size), -np.inf)
    if not valid.all():
        w_log[~valid] = 0.0  # W ≤ 1 is all we use there (upper); lower: −inf below
        if not upper:
            w_log[~valid] = -np.inf
    if rows.size:
        start = k_lo[rows]
        width = stop[rows] - start + 1
        wmax = int(width.max())
        j = np.arange(wmax + 1)
        v = start[:, None] + j[None, :]
        vf = v.astype(np.float64)
        n_, k_, d_ = nf[rows, None], kf[rows, None], df[rows, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log((k_ - vf) * (d_ - vf)) - np.log((vf + 1.0) * (n_ - k_ - d_ + vf + 1.0))
        inside = j[None, :] < width[:, None]
        steps = np.where(inside[:, 1:], ratio[:, :-1], 0.0)
        anchor = log_hypergeom_pmf(start, nf[rows], kf[rows], df[rows])
        lp = anchor[:, None] + np.concatenate([np.zeros((rows.size, 1)), np.cumsum(steps, axis=1)], axis=1)
        lp = np.where(inside, lp, -np.inf)
        peak = lp.max(axis=1, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0.0)
        with np.errstate(under="ignore"):
            e = np.exp(lp - peak)
        s0 = np.cumsum(e[:, ::-1], axis=1)[:, ::-1]
        s1 = np.cumsum((e / (vf + 1.0))[:, ::-1], axis=1)[:, ::-1]
        pick = np.arange(rows.size)
        last = width - 1
        lp_edge, rho = lp[pick, last], ratio[pick, last]
        more = stop[rows] < sup_hi[rows]
        with np.errstate(invalid="ignore"):
            tail = np.where(rho < 0, lp_edge + rho - log1mexp(np.minimum(rho, -1e-300)), 0.0)
        tail = np.where(more & np.isfinite(lp_edge), tail, -np.inf)
        if not upper:
            tail = np.full(rows.size, -np.inf)
        cm = cmat[rows]
        k = np.floor(np.minimum(cm, sup_hi[rows, None] + 1.0)).astype(np.int64)
        idx = np.clip(k - start[:, None], 0, wmax)
        beyond = k > stop[rows, None]  # the cut-off lies past the window: only the tail can be positive
        s0k = np.where(beyond, 0.0, np.take_along_axis(s0, idx, axis=1))
        s1k = np.where(beyond, 0.0, np.take_along_axis(s1, idx, axis=1))
        core = np.maximum(s0k - cm * s1k, 0.0)
        if upper:  # rounding of the suffix sums, and the terms that underflowed after scaling
            core = core + 1e-12 * (s0k + cm * s1k) + (wmax + 1) * 2.0**-1000
        with np.errstate(divide="ignore"):
            val = np.log(core) + peak
        none = k > sup_hi[rows, None]  # every (1 − C/(v+1))_+ is 0
        val = np.where(none, -np.inf, np.logaddexp(val, tail[:, None]))
        w_log[rows] = val
    out[:, :, 1:] = w_log.reshape(ny, nu, xs.size).transpose(2, 0, 1)
    return out


def _floor_two_sided(v: NDArray[np.int64], n: int, bits: int) -> NDArray[np.int64]:
    """The largest point ≤ v of the grid dense near 0 and near n: {grid points g} ∪ {n − g}."""
    return np.maximum(grid_floor(v, bits), n - grid_ceil(n - v, bits))


def _ceil_two_sided(v: NDArray[np.int64], n: int, bits: int) -> NDArray[np.int64]:
    """The smallest point ≥ v of the same grid."""
    return np.minimum(grid_ceil(v, bits), n - grid_floor(n - v, bits))


def _direction_table(
    n: int,
    removed: int,
    epsilon: float,
    x_lo: int,
    x_hi: int,
    y_points: NDArray[np.int64],
    bits: int,
    upper: bool,
    cache: dict[tuple[int, int], NDArray[np.float64]],
) -> tuple[NDArray[np.float64], int]:
    """ln of a bound on g(x, y) for x in x_lo..x_hi (rows) and the grid points y (columns), and the number
    of v-law rows summed.

    g(x, y) = Σ_u HG(u; n, x, L)·W(u; x, y), exact in HG and in C; only the population n − x of the v-law is
    moved to a point of the two-sided grid: max(the point below n − x, y) for the upper bound, the point
    above n − x for the lower one.
    """
    c = math.exp(epsilon)
    xs = np.arange(x_lo, x_hi + 1, dtype=np.int64)
    top = _u_top(n, removed, x_hi)
    uu = np.arange(top + 1, dtype=np.int64)
    if (x_lo, x_hi) not in cache:
        cache[(x_lo, x_hi)] = log_hypergeom_pmf(uu[None, :], n, xs[:, None], removed)  # (x, u)
    log_hg = cache[(x_lo, x_hi)]
    table = np.full((xs.size, y_points.size), -np.inf)
    pop_all = _floor_two_sided(n - xs, n, bits) if upper else _ceil_two_sided(n - xs, n, bits)
    beyond = np.full(xs.size, -np.inf)
    if upper:  # the mass of u > top, bounded by its geometric tail (W ≤ 1)
        e1 = log_hypergeom_pmf(top + 1, n, xs, removed)
        e2 = log_hypergeom_pmf(top + 2, n, xs, removed)
        beyond = log_tail_bound(e1, e2)
    rows = 0
    for key in np.unique(pop_all):
        sel = np.flatnonzero(pop_all == key)
        # upper: N̄ = max(grid point ≤ n − x, y) ≤ n − x for every looked-up (x, y ≤ n − x); lower: N̲ ≥ n − x
        pop = np.maximum(key, y_points) if upper else np.full(y_points.shape, key)
        w = _w_block(n, removed, c, xs[sel], pop, y_points, top, upper)  # (x, y, u)
        rows += y_points.size * top
        terms = log_hg[sel][:, None, :] + w
        peak = terms.max(axis=2, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0.0)
        with np.errstate(divide="ignore", under="ignore"):
            block = np.log(np.exp(terms - peak).sum(axis=2) + (top + 1) * 2.0**-1000 * upper) + peak[:, :, 0]
        if upper:
            block = np.logaddexp(block, beyond[sel, None])
        table[sel] = block
    return table, rows


@dataclass(frozen=True)
class ExpectedDeltaBracket:
    """ln of a lower and an upper bound on E[δ(h)] for one law of h, and how they were obtained."""

    log_lower: float
    log_upper: float
    bits: int
    histograms: int
    kernel_rows: int


def _directions() -> list[tuple[int, int, int]]:
    """(a, b, term): term 0 is g(h_a, h_b) [h_a ≥ 1], term 1 is g(h_a + 1, h_b − 1) [h_b ≥ 1]."""
    return [(a, b, t) for a in range(3) for b in range(3) if a != b for t in (0, 1)]


def _bracket_for_law(
    n: int,
    removed: int,
    epsilon: float,
    hist: NDArray[np.int64],
    log_p: NDArray[np.float64],
    log_outside: float,
    rtol: float,
    stop_below: float = -np.inf,
) -> ExpectedDeltaBracket:
    """Bracket Σ_h P(h)δ(h) + [outside mass] for histograms ``hist`` (N, 3) with ln P(h) = ``log_p``."""
    keep = np.isfinite(log_p)
    hist, log_p = hist[keep], log_p[keep]

    def arguments(a: int, b: int, t: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
        valid = (hist[:, a] >= 1) if t == 0 else (hist[:, b] >= 1)
        return hist[:, a] + t, hist[:, b] - t, valid

    dirs = [d for d in _directions() if arguments(*d)[2].any()]  # recomputed when used: memory
    # the floor: every g is ≥ its value at the window's top corner (monotone), where the term is always there
    sup_args, inf_args = [], []
    for d in dirs:
        x, y, valid = arguments(*d)
        sup_args.append((int(x[valid].min()), int(y[valid].min())))
        inf_args.append((int(x.max()), int(y.max())) if valid.all() else None)
    sups = log_pair_divergence(
        n, removed, epsilon, [a + b for a, b in sup_args], [a for a, _ in sup_args], replace=False
    )
    floors = [
        float(log_pair_divergence(n, removed, epsilon, a + b, a, replace=False)) - 1e-9
        for a, b in (arg for arg in inf_args if arg is not None)
        if a + b <= n
    ]
    log_floor = max(floors, default=-np.inf)
    log_mass = float(np.logaddexp.reduce(log_p))
    pruned = -np.inf
    kept = []
    for d, sup in zip(dirs, sups, strict=True):
        if sup < log_floor + math.log(rtol) - 12.0:  # below 6e-6·rtol of every δ(h): bounded by its sup
            pruned = np.logaddexp(pruned, sup)
        else:
            kept.append(d)
    bits = 3
    rows_summed = 0
    hg_cache: dict[tuple[int, int], NDArray[np.float64]] = {}
    while True:
        upper = np.full(hist.shape[0], -np.inf)
        lower = np.full(hist.shape[0], -np.inf)
        for d in kept:
            x, y, valid = arguments(*d)
            xv, yv = x[valid], y[valid]
            x_lo, x_hi = int(xv.min()), int(xv.max())
            y_dn = _floor_two_sided(yv, n, bits)
            y_up = np.minimum(_ceil_two_sided(yv, n, bits), n - xv)  # capped: still ≥ y, a valid argument
            pts_up = np.unique(y_dn)
            t_up, r1 = _direction_table(
                n, removed, epsilon, x_lo, x_hi, pts_up, bits, upper=True, cache=hg_cache
            )
            vals = t_up[xv - x_lo, np.searchsorted(pts_up, y_dn)]
            upper[valid] = np.maximum(upper[valid], vals)
            on_grid = y_up >= yv
            pts_lo = np.unique(y_up[on_grid])
            t_lo, r2 = _direction_table(
                n, removed, epsilon, x_lo, x_hi, pts_lo, bits, upper=False, cache=hg_cache
            )
            rows_summed += r1 + r2
            vals_lo = np.full(xv.shape, -np.inf)
            vals_lo[on_grid] = t_lo[xv[on_grid] - x_lo, np.searchsorted(pts_lo, y_up[on_grid])]
            lower[valid] = np.maximum(lower[valid], vals_lo)
        with np.errstate(invalid="ignore"):
            log_up = float(np.logaddexp.reduce(log_p + upper))
            log_lo = float(np.logaddexp.reduce(log_p + lower))
        log_up = float(np.logaddexp.reduce([log_up, log_outside, pruned + log_mass])) + _FLOAT_MARGIN
        gap = log_up - log_lo if log_lo > -np.inf else np.inf
        if _TRACE:
            print(
                "bits", bits, "gap", gap, "up", log_up, "lo", log_lo, "outside", log_outside, "pruned", pruned
            )
        if not np.isfinite(log_up) or gap <= -math.log1p(-rtol) or bits >= _MAX_BITS or log_up < stop_below:
            return ExpectedDeltaBracket(log_lo, log_up, bits, int(hist.shape[0]), rows_summed)
        # the gap halves with every bit (grid steps of relative size 2^-bits): jump to the level it needs
        want = -math.log1p(-rtol) * 0.7
        step = math.ceil(math.log2(gap / want)) if np.isfinite(gap) and gap > want else 2
        bits = min(_MAX_BITS, bits + max(1, min(step, 12)))


def _window_1d(count: int, p: float, budget: float) -> tuple[int, int]:
    sd = math.sqrt(count * p * (1.0 - p))
    radius = math.sqrt(2.0 * budget) * sd + budget / 3.0 + 3.0
    return max(0, math.floor(count * p - radius)), min(count, math.ceil(count * p + radius))


def _trinomial_window(
    count: int, pi: NDArray[np.float64], i: int, j: int, budget: float
) -> tuple[int, int, NDArray[np.float64], float]:
    """(first h_i, first h_j, ln P on the rectangle, ln of the mass outside) for Multinomial(count, π).

    h_i ∼ Bin(count, π_i), h_j | h_i ∼ Bin(count − h_i, π_j/(1 − π_i)); each window is cut where the
    log-concave pmf has fallen by ~e^-budget, and the mass beyond every edge is bounded by its geometric tail.
    """
    pi_i, pi_j = float(pi[i]), float(pi[j])
    lo_i, hi_i = _window_1d(count, pi_i, budget)
    hi_vals = np.arange(lo_i, hi_i + 1)
    rest = count - hi_vals
    q = 0.0 if pi_i >= 1.0 else min(1.0, pi_j / (1.0 - pi_i))
    sd = np.sqrt(rest * q * (1.0 - q))
    radius = math.sqrt(2.0 * budget) * sd + budget / 3.0 + 3.0
    lo_j = np.maximum(0, np.floor(rest * q - radius)).astype(np.int64)
    hi_j = np.minimum(rest, np.ceil(rest * q + radius)).astype(np.int64)
    first_j, last_j = int(lo_j.min()), int(hi_j.max())
    jj = np.arange(first_j, last_j + 1)
    log_pi = log_binom_pmf(hi_vals, count, pi_i)
    grid = log_pi[:, None] + log_binom_pmf(jj[None, :], rest[:, None], q)
    inside = (jj[None, :] >= lo_j[:, None]) & (jj[None, :] <= hi_j[:, None])
    grid = np.where(inside, grid, -np.inf)
    outs = []
    if hi_i < count:
        outs.append(
            float(log_tail_bound(log_binom_pmf(hi_i + 1, count, pi_i), log_binom_pmf(hi_i + 2, count, pi_i)))
        )
    if lo_i > 0:
        outs.append(
            float(log_tail_bound(log_binom_pmf(lo_i - 1, count, pi_i), log_binom_pmf(lo_i - 2, count, pi_i)))
        )
    up = np.where(
        hi_j < rest,
        log_tail_bound(log_binom_pmf(hi_j + 1, rest, q), log_binom_pmf(hi_j + 2, rest, q)),
        -np.inf,
    )
    down = np.where(
        lo_j > 0, log_tail_bound(log_binom_pmf(lo_j - 1, rest, q), log_binom_pmf(lo_j - 2, rest, q)), -np.inf
    )
    outs.append(float(np.logaddexp.reduce(log_pi + np.logaddexp(up, down))))
    return lo_i, first_j, grid, float(np.logaddexp.reduce(np.array(outs)))


def _mixture_law(
    counts: list[int], vertices: NDArray[np.float64], i: int, j: int, budget: float
) -> tuple[int, int, NDArray[np.float64], NDArray[np.float64], float]:
    """(first h_i, first h_j, ln P̂, ln of a per-entry absolute error bound, ln outside mass) of the sum of
    independent Multinomial(counts[v], vertices[v]): exact for one group, an FFT convolution with its
    certified error bound 8u·log2(size)·‖a‖₂‖b‖₂ (u = 2^-53) otherwise."""
    pieces = [_trinomial_window(c, vertices[v], i, j, budget) for v, c in enumerate(counts) if c > 0]
    lo_i, lo_j, law, outside = pieces[0]
    err = -np.inf
    if len(pieces) == 1:
        return lo_i, lo_j, law, np.full(law.shape, -np.inf), outside
    from scipy.signal import fftconvolve  # imported on first use

    top = float(law.max())
    lin = np.exp(law - top)
    lost = float(np.logaddexp.reduce(law[law < top - 700.0])) if np.any(law < top - 700.0) else -np.inf
    outside = float(np.logaddexp(outside, lost))
    for li, lj, other, out_other in pieces[1:]:
        o_top = float(other.max())
        o_lin = np.exp(other - o_top)
        lost = (
            float(np.logaddexp.reduce(other[other < o_top - 700.0]))
            if np.any(other < o_top - 700.0)
            else -np.inf
        )
        outside = float(np.logaddexp.reduce([outside, out_other, lost]))
        size = (lin.shape[0] + o_lin.shape[0] - 1) * (lin.shape[1] + o_lin.shape[1] - 1)
        bound = 8.0 * 2.0**-53 * math.log2(max(size, 2)) * float(np.linalg.norm(lin) * np.linalg.norm(o_lin))
        err_lin = (math.exp(err) if np.isfinite(err) else 0.0) * float(o_lin.sum()) + bound
        lin = fftconvolve(lin, o_lin)
        top += o_top
        err = math.log(err_lin)
        lo_i += li
        lo_j += lj
    with np.errstate(divide="ignore"):
        log_hat = np.log(np.maximum(lin, 0.0)) + top
    return lo_i, lo_j, log_hat, np.full(lin.shape, err + top), outside


def trinomial_expected_delta_bracket(
    n: int,
    removed: int,
    epsilon: float,
    counts: list[int],
    vertices: ArrayLike,
    *,
    rtol: float = 1e-3,
    stop_below: float = -np.inf,
) -> ExpectedDeltaBracket:
    """Certified bracket on E[δ_{ε,M_H}(h)], h = Σ_v Multinomial(counts[v], vertices[v]), m = 3, M_H without
    replacement removing ``removed`` = L of the n records; the bracket is refined until it is within ``rtol``,
    or until its upper end is below ``stop_below`` (ln; a mixture that cannot be the maximum).
    """
    pi = np.atleast_2d(np.asarray(vertices, dtype=np.float64))
    if pi.shape[1] != 3:
        raise ValueError("trinomial_expected_delta_bracket needs distributions over m = 3 categories")
    if sum(counts) != n:
        raise ValueError("counts must add up to n")
    means = np.asarray(counts, dtype=np.float64) @ pi
    big = int(np.argmax(means))
    i, j = (c for c in range(3) if c != big)
    budget = 30.0
    while True:
        lo_i, lo_j, log_hat, log_err, outside = _mixture_law(counts, pi, i, j, budget)
        ii, jj = np.indices(log_hat.shape)
        hist = np.zeros((log_hat.size, 3), dtype=np.int64)
        hist[:, i] = (ii + lo_i).ravel()
        hist[:, j] = (jj + lo_j).ravel()
        hist[:, big] = n - hist[:, i] - hist[:, j]
        ok = hist[:, big] >= 0
        log_p = np.where(ok, log_hat.ravel(), -np.inf)
        err = log_err.ravel()
        if np.isfinite(err).any():  # P ≤ P̂ + err (upper, where δ ≤ 1); P ≥ P̂ − err (lower)
            # both signs: Σ (P̂ + err)δ̄ = Σ (P̂ − err)δ̄ + 2Σ err·δ̄, and δ̄ ≤ 1
            outside = float(np.logaddexp(outside, math.log(2.0) + float(np.logaddexp.reduce(err[ok]))))
            with np.errstate(invalid="ignore", divide="ignore"):
                log_p = np.where(log_p > err, log_p + np.log1p(-np.exp(err - log_p)), -np.inf)
        result = _bracket_for_law(n, removed, epsilon, hist[ok], log_p[ok], outside, rtol, stop_below)
        if (
            outside < result.log_lower + math.log(rtol) - 5.0
            or result.log_upper < stop_below
            or budget > 700.0
            or not np.isfinite(result.log_lower)
        ):
            return result
        budget *= 2.0


def _mixture_candidates(n: int, ell: int, mixtures: str | int) -> list[tuple[int, ...]]:
    """The mixtures q (records per vertex) evaluated: the vertices, then (``"auto"``) the centre of every
    pair of vertices and of all of them, or (an int, two vertices) a grid of that many points."""
    eye = [tuple(n if i == j else 0 for i in range(ell)) for j in range(ell)]
    if mixtures == "all":
        raise ValueError(
            "mixtures='all' enumerates every mixture: only for small n (m ≥ 3 at large n takes 'auto', "
            "'vertices' or a grid size)"
        )
    if mixtures == "vertices" or ell == 1:
        return eye
    out = list(eye)
    if isinstance(mixtures, int) and ell == 2:
        out += [(int(a), n - int(a)) for a in np.unique(np.round(np.linspace(0, n, mixtures)).astype(int))]
    else:
        for a in range(ell):
            for b in range(a + 1, ell):
                q = [0] * ell
                q[a], q[b] = n // 2, n - n // 2
                out.append(tuple(q))
        if ell > 2:
            q = [n // ell] * ell
            q[0] += n - sum(q)
            out.append(tuple(q))
    return list(dict.fromkeys(out))


def trinomial_smoothed_delta(
    n: int,
    removed: int,
    epsilon: float,
    vertices: ArrayLike,
    mixtures: str | int = "auto",
    *,
    rtol: float = BRACKET_RTOL,
) -> tuple[float, float, tuple[int, ...], dict[tuple[int, ...], float]]:
    """(ln upper bound, ln lower bound, mixture, {mixture: log10 upper bound}) for δ_SDP of M_H, m = 3.

    Every mixture evaluated gets a certified bracket on E[δ] within ``rtol``; the returned pair is the
    bracket of the mixture with the largest upper bound. The mixtures are searched (see
    :func:`_mixture_candidates`), so the maximum over *all* mixtures is not certified.
    """
    pi = np.atleast_2d(np.asarray(vertices, dtype=np.float64))
    evaluated: dict[tuple[int, ...], float] = {}
    best: tuple[float, float, tuple[int, ...]] = (-np.inf, -np.inf, ())
    floor = -np.inf  # the largest lower end so far: δ_SDP is at least this
    candidates = _mixture_candidates(n, pi.shape[0], mixtures)
    # smallest expected category first (the largest δ, typically): it sets the floor for the others
    candidates.sort(key=lambda q: float((np.asarray(q, dtype=np.float64) @ pi).min()))
    for q in candidates:
        # a mixture whose upper end falls below the floor cannot be the maximum: its refinement stops early
        b = trinomial_expected_delta_bracket(n, removed, epsilon, list(q), pi, rtol=rtol, stop_below=floor)
        evaluated[q] = b.log_upper / math.log(10.0)
        floor = max(floor, b.log_lower)
        if b.log_upper > best[0]:
            best = (b.log_upper, b.log_lower, q)
    return best[0], best[1], best[2], evaluated
