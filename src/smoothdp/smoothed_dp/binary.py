"""Algorithm 1 of smoothed DP for two categories (m = 2): the fast exact path, in log space end to end.

Reference: LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; derivation and pitfalls in
``docs/theory/smoothed-dp.md#exact-delta-for-anonymous-mechanisms`` (the general path and the dispatcher
:func:`smoothdp.smoothed_dp.smoothed_delta` are in :mod:`smoothdp.smoothed_dp.algorithm1`).

For the mixture (n_1, n_2) of the two hull vertices the count k of category 0 is
Bin(n_1, p_1) + Bin(n_2, p_2). The sum Σ_k P(k) δ(k) is taken on windows of k around the peaks of P(k)δ(k):

1. a scan over ~540 values of k (all k near both ends included) bounds ln P(k) from above by Chernoff,
   ln P(k) ≤ K(θ_k) − θ_k k with K the cumulant generating function, and adds ln δ(k);
2. around each peak within e^-40 of the total, each group's exact pmf ln Bin(j; n_i, p_i) (Loader) is scaled
   by the exponential tilt e^{θ(j − j_i)} that centres the product there (local about the window centre j_i,
   so no O(n) terms cancel), trimmed, and the two pieces are convolved. The window grows until its edge terms
   are below e^-60 of its peak.
3. The convolution is first done by FFT, with the certified absolute error 8·u·log2(size)·‖a‖₂‖b‖₂
   (u = 2^-53). It is kept when that error, weighted by δ, is below e^-30 of the sum, or when the mixture
   cannot be the maximum even with the error added; otherwise the window is redone by **direct** convolution
   (every entry to ~1e-15 relative). An unchecked FFT would leave a false floor at 1e-17 of the maximum.

The exact δ(k) comes from :func:`smoothdp.smoothed_dp.histogram_profile.binary_log_profile` and is cached.

Maximum over mixtures: the two vertices first, then every n_1 ∈ 0..n when n ≤ 400 (``mixtures="all"`` forces
it), else a search: a grid of 33 values plus the 4 next to the vertices, then an integer golden-section
refinement around the best grid value (skipped when the values rise monotonically into a vertex). The search
returns a value attained by a real mixture, so it is a lower bound on the exact maximum; in every election
setting we checked (and in our tests against full enumeration) the maximum is at a vertex.

The functions here take the sampling parameters as integers (``param`` = T with replacement, L = n − T
without); :class:`~smoothdp.smoothed_dp.SamplingHistogram` calls them from its analysis methods.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit, logit

from smoothdp.smoothed_dp._logmath import log_binom_pmf, logsumexp_or_neginf
from smoothdp.smoothed_dp.base import SmoothedDPMechanism
from smoothdp.smoothed_dp.histogram_profile import binary_log_profile
from smoothdp.smoothed_dp.hull import check_distributions
from smoothdp.validation import check_epsilon, check_int

__all__ = ["binary_smoothed_delta", "mixture_expected_delta", "mixture_log_expected_delta"]

_NEGLIGIBLE = 40.0  # regions whose Chernoff bound is below e^-40 of the total are dropped
_FFT_TOLERANCE = 30.0  # an FFT window is kept when its error bound is below e^-30 (1e-13) of its sum
# A window extends until its edge terms are below e^-60 of its peak: the 20 extra nats exceed the Chernoff
# bound's overshoot (≤ ½ ln(2π·var) + 1), so the scan does not re-open its neighbourhood.
_EDGE = 60.0
_LN10 = math.log(10.0)


class _LogDeltaCache:
    """ln δ(k) for k = 0..n, computed on demand (NaN = not yet computed)."""

    def __init__(self, n: int, param: int, epsilon: float, replace: bool) -> None:
        self.n, self.param, self.epsilon, self.replace = n, param, epsilon, replace
        self.values = np.full(n + 1, np.nan)

    def __call__(self, k: NDArray[np.int64]) -> NDArray[np.float64]:
        k = np.asarray(k, dtype=np.int64)
        missing = np.unique(k[np.isnan(self.values[k])])
        if missing.size:
            self.values[missing] = binary_log_profile(
                self.n, self.param, self.epsilon, missing, replace=self.replace
            )
        return self.values[k]


class _BinaryMixture:
    """Count k of category 0 under n_1 records from Bernoulli(p_1) and n_2 from Bernoulli(p_2)."""

    def __init__(self, groups: list[tuple[int, float]]) -> None:
        self.offset = sum(count for count, p in groups if p == 1.0)
        self.groups = [(count, p) for count, p in groups if count > 0 and 0.0 < p < 1.0]
        self.span = sum(count for count, _ in self.groups)

    def cumulant(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """K(θ) = Σ n_i ln(1 − p_i + p_i e^θ) = Σ n_i [ln(1−p_i) − ln σ(−(logit p_i + θ))]."""
        return sum(n * (np.log1p(-p) - log_expit(-(logit(p) + theta))) for n, p in self.groups)

    def tilted_mean(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        return sum(n * expit(logit(p) + theta) for n, p in self.groups)

    def chernoff_log_pmf(self, k: NDArray[np.int64]) -> NDArray[np.float64]:
        """Upper bound on ln P(k): min_θ K(θ) − θ(k − offset), exact at both ends of the support."""
        j = (np.asarray(k) - self.offset).astype(np.float64)
        out = np.full(j.shape, -np.inf)
        inside = (j >= 0) & (j <= self.span)
        lo, hi = np.full(j.shape, -200.0), np.full(j.shape, 200.0)
        for _ in range(80):  # bisection on the tilted mean (monotone in θ)
            mid = 0.5 * (lo + hi)
            above = self.tilted_mean(mid) > j
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
        theta = 0.5 * (lo + hi)
        out[inside] = (self.cumulant(theta) - theta * j)[inside]
        out[j == 0] = sum(n * np.log1p(-p) for n, p in self.groups)
        out[j == self.span] = sum(n * np.log(p) for n, p in self.groups)
        return out

    def theta_at(self, k: int) -> float:
        """The tilt whose mean is k (clamped inside the support)."""
        j = min(max(k - self.offset, 0.5), self.span - 0.5)
        lo, hi = -200.0, 200.0
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if float(self.tilted_mean(np.array(mid))) > j:
                hi = mid
            else:
                lo = mid
        return 0.5 * (lo + hi)

    def log_pmf_window(
        self, theta: float, trim: float, *, direct: bool
    ) -> tuple[int, NDArray[np.float64], NDArray[np.float64]]:
        """(first k, ln P(k), ln of an absolute error bound on P(k)) where the θ-tilted law lives.

        Each group's exact pmf ln Bin(j; n_i, p_i) (Loader) is scaled by the *local* tilt e^{θ(j − j_i)} about
        its window centre j_i — local, so that no O(n) terms cancel — trimmed to within e^-trim of its
        maximum, and the scaled pieces are convolved. ``direct=True``: direct convolution (every entry to
        ~1e-15 relative; error bound −∞). ``direct=False``: FFT, whose entries carry an absolute error up to
        8·u·log2(size)·‖a‖₂‖b‖₂ (u = 2^-53) of the scaled pieces; the caller decides whether that is
        negligible.
        """
        from scipy.signal import fftconvolve  # imported on first use: scipy.signal is slow to import

        pieces = []
        start, centre_sum, scale = self.offset, 0, 0.0
        for n, p in self.groups:
            pt = float(expit(logit(p) + theta))
            mean, sd = n * pt, math.sqrt(n * pt * (1.0 - pt))
            # Gaussian width plus a linear margin for the skewed (Poisson-like) tail of small n·p
            half = math.ceil(1.1 * math.sqrt(2.0 * trim) * sd + 0.5 * trim + 5)
            lo, hi = max(0, int(mean) - half), min(n, int(mean) + half + 1)
            j = np.arange(lo, hi + 1)
            centre = min(max(round(mean), lo), hi)
            tilted = log_binom_pmf(j, n, p) + theta * (j - centre)
            keep = np.flatnonzero(tilted >= tilted.max() - trim)
            j, tilted = j[keep[0] : keep[-1] + 1], tilted[keep[0] : keep[-1] + 1]
            top = float(tilted.max())
            start += int(j[0])
            centre_sum += centre
            scale += top
            pieces.append(np.exp(tilted - top))
        conv = pieces[0]
        error = 0.0
        for other in pieces[1:]:
            if direct or min(conv.size, other.size) < 64:
                conv = np.convolve(conv, other)  # direct: every entry accurate, no FFT floor
                error = error * float(other.sum())
            else:
                size = conv.size + other.size - 1
                bound = 8.0 * 2.0**-53 * math.log2(size) * float(np.linalg.norm(conv) * np.linalg.norm(other))
                error = error * float(other.sum()) + bound
                conv = fftconvolve(conv, other)
        k = start + np.arange(conv.size)
        shift = scale - theta * (k - self.offset - centre_sum)
        with np.errstate(divide="ignore"):
            reliable = conv > error  # FFT entries at or below the error bound are dropped (counted in it)
            log_p = np.where(reliable, np.log(np.where(reliable, conv, 1.0)), -np.inf) + shift
            log_err = (math.log(error) if error > 0 else -math.inf) + shift
        return start, np.asarray(log_p, dtype=np.float64), np.asarray(log_err, dtype=np.float64)


def _scan_points(n: int) -> NDArray[np.int64]:
    ends = np.concatenate([np.arange(0, min(n, 12) + 1), np.arange(max(0, n - 12), n + 1)])
    return np.unique(np.concatenate([ends, np.round(np.linspace(0, n, 513)).astype(np.int64)]))


def _log_expected_delta_binary(
    mixture: _BinaryMixture, log_delta: _LogDeltaCache, scan: NDArray[np.int64], best_so_far: float = -np.inf
) -> float:
    """ln Σ_k P(k) δ(k) for the binary mixture (see the module docstring).

    A window is first convolved by FFT; it is kept when its certified error is below e^-30 of its sum, or
    when even sum + error is e^-5 below ``best_so_far`` (the mixture cannot be the maximum: its value is then
    only an estimate); otherwise it is redone by direct convolution.
    """
    if mixture.span == 0:
        return float(log_delta(np.array([mixture.offset]))[0])
    scan = scan[(scan >= mixture.offset) & (scan <= mixture.offset + mixture.span)]
    bound = mixture.chernoff_log_pmf(scan) + log_delta(scan)
    covered: list[tuple[int, int]] = []
    parts: list[float] = []
    total = -np.inf
    for _ in range(16):
        uncovered = np.array([not any(a <= k <= b for a, b in covered) for k in scan])
        if not uncovered.any():
            break
        candidate = np.where(uncovered, bound, -np.inf)
        peak = int(np.argmax(candidate))
        if candidate[peak] < total - _NEGLIGIBLE or not np.isfinite(candidate[peak]):
            break
        k_peak = int(scan[peak])
        theta = mixture.theta_at(k_peak)
        direct = False
        for trim in (60.0, 160.0, 400.0, 700.0):
            start, log_p, log_err = mixture.log_pmf_window(theta, trim, direct=direct)
            k = start + np.arange(log_p.size)
            ell = log_delta(k)
            terms = log_p + ell
            noise, value = logsumexp_or_neginf(log_err + ell), logsumexp_or_neginf(terms)
            if (
                not direct
                and noise > value - _FFT_TOLERANCE
                and np.logaddexp(noise, value) > best_so_far - 5.0
            ):
                direct = True  # the FFT error matters here: redo this window by direct convolution
                start, log_p, log_err = mixture.log_pmf_window(theta, trim, direct=True)
                terms = log_p + ell
            finite = np.isfinite(terms)
            top = terms[finite].max() if finite.any() else -np.inf
            at_lo = k[0] <= mixture.offset
            at_hi = k[-1] >= mixture.offset + mixture.span
            if (at_lo or terms[0] < top - _EDGE) and (at_hi or terms[-1] < top - _EDGE):
                break
        # keep the part of the window not already summed, on the side of this peak
        lo_k, hi_k = int(k[0]), int(k[-1])
        for a, b in covered:
            if b < k_peak:
                lo_k = max(lo_k, b + 1)
            elif a > k_peak:
                hi_k = min(hi_k, a - 1)
        sel = (k >= lo_k) & (k <= hi_k)
        parts.append(float(logsumexp_or_neginf(terms[sel])))
        covered.append((lo_k, hi_k))
        total = float(logsumexp_or_neginf(np.array(parts)))
    return total


def _golden_search(evaluate: Callable[[int], float], lo: int, hi: int) -> None:
    """Integer golden-section search for a maximum on [lo, hi] (results recorded by ``evaluate``)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    while hi - lo > 3:
        a = hi - round(ratio * (hi - lo))
        b = lo + round(ratio * (hi - lo))
        if a >= b:
            break
        if evaluate(a) >= evaluate(b):
            hi = b
        else:
            lo = a
    for x in range(lo, hi + 1):
        evaluate(x)


def binary_smoothed_delta(
    n: int,
    param: int,
    replace: bool,
    eps: float,
    vertices: NDArray[np.float64],
    mixtures: str | int,
) -> tuple[float, tuple[int, ...], dict[tuple[int, ...], float], bool]:
    """(ln δ_SDP, maximising mixture, {mixture: log10 E[δ]}, whether every mixture was evaluated).

    ``vertices`` has shape (ℓ*, 2) with ℓ* ≤ 2; ``param`` is T (with replacement) or L = n − T (without).
    """
    cache = _LogDeltaCache(n, param, eps, replace)
    scan = _scan_points(n)
    p = vertices[:, 0]
    if p.size == 1:
        value = _log_expected_delta_binary(_BinaryMixture([(n, float(p[0]))]), cache, scan)
        return value, (n,), {(n,): value / _LN10}, True
    values: dict[int, float] = {}

    def evaluate(n1: int) -> float:
        if n1 not in values:
            mix = _BinaryMixture([(n1, float(p[0])), (n - n1, float(p[1]))])
            best = max(values.values(), default=-np.inf)
            values[n1] = _log_expected_delta_binary(mix, cache, scan, best)
        return values[n1]

    evaluate(0)  # the vertices first: no convolution, and a bar that prunes the other mixtures
    evaluate(n)

    exhaustive = mixtures == "all" or (mixtures == "auto" and n + 1 <= 401)
    if mixtures == "vertices":
        evaluate(0)
        evaluate(n)
    elif exhaustive:
        for n1 in range(n + 1):
            evaluate(n1)
    else:
        points = 33 if mixtures == "auto" else int(mixtures)
        grid = np.unique(np.concatenate([np.round(np.linspace(0, n, points)), [1, 2, n - 2, n - 1]]))
        grid = grid[(grid >= 0) & (grid <= n)].astype(np.int64)
        for n1 in grid:
            evaluate(int(n1))
        best = int(grid[np.argmax([values[int(g)] for g in grid])])
        i = int(np.searchsorted(grid, best))
        # a unimodal f increasing into an end of [0, n] (the three end values 0,1,2 or n−2,n−1,n are on the
        # grid) has its maximum there; otherwise refine between the best grid value's neighbours
        at_end = (best == 0 and values[0] > values[1] > values[2]) or (
            best == n and values[n] > values[n - 1] > values[n - 2]
        )
        if not at_end:
            _golden_search(evaluate, int(grid[max(i - 1, 0)]), int(grid[min(i + 1, grid.size - 1)]))
    best_n1 = max(values, key=lambda key: values[key])
    evaluated: dict[tuple[int, ...], float] = {(k, n - k): v / _LN10 for k, v in sorted(values.items())}
    return values[best_n1], (best_n1, n - best_n1), evaluated, exhaustive


def mixture_log_expected_delta(
    n: int, param: int, replace: bool, eps: float, groups: list[tuple[int, float]]
) -> float:
    """ln Σ_k P(k) δ(k) for one mixture: ``groups`` = [(records, P(category 0))], at most two distinct."""
    cache = _LogDeltaCache(n, param, eps, replace)
    if len(groups) > 2:  # merge equal probabilities; more than two distinct ones is not the binary fast path
        merged: dict[float, int] = {}
        for c, p in groups:
            merged[p] = merged.get(p, 0) + c
        groups = [(c, p) for p, c in merged.items() if c]
        if len(groups) > 2:
            raise ValueError("mixture_expected_delta handles at most two distinct distributions")
    return _log_expected_delta_binary(_BinaryMixture(groups), cache, _scan_points(n))


def mixture_expected_delta(
    mechanism: SmoothedDPMechanism, epsilon: float, counts: ArrayLike, distributions: ArrayLike
) -> float:
    """ln E[δ_{ε,M_H}(x)] for one mixture: counts[j] records drawn i.i.d. from distributions[j] (m = 2).

    The inner step of Algorithm 1 for a single q ∈ Q (binary fast path), e.g. to plot δ against the mixture.
    Returns the natural log (divide by ln 10 for log10). ``mechanism``: a
    :class:`~smoothdp.smoothed_dp.SamplingHistogram` (the only mechanism with this path).
    """
    eps = check_epsilon(epsilon)
    if not isinstance(mechanism, SmoothedDPMechanism):
        raise TypeError(f"mechanism must be a SamplingHistogram; got {type(mechanism).__name__}")
    return mechanism._mixture_log_expected_delta(eps, counts, distributions)


def check_mixture(counts: ArrayLike, distributions: ArrayLike) -> tuple[int, list[tuple[int, float]]]:
    """(n, [(records, P(category 0))]) from one mixture's counts and its (ℓ, 2) distributions."""
    pi = check_distributions(distributions)
    if pi.shape[1] != 2:
        raise ValueError(f"mixture_expected_delta handles two categories; got shape {pi.shape}")
    q = np.asarray(counts)
    if q.shape != (pi.shape[0],) or np.any(q < 0) or np.any(q != np.round(q)):
        raise ValueError(
            f"counts must be {pi.shape[0]} non-negative integers (one per distribution); got {counts!r}"
        )
    n = check_int("n (the total of counts)", int(q.sum()), minimum=1)
    return n, [(int(c), float(row[0])) for c, row in zip(q, pi, strict=True)]
