"""Exact δ of smoothed DP for anonymous mechanisms (LWX Algorithm 1), in log space end to end.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#exact-delta-for-anonymous-mechanisms``.

    δ_SDP(ε) = max_{π⃗ ∈ Π^n} E_{x∼π⃗}[δ_{ε,M}(x)]                       (LWX Definition 3)
             = max_{q ∈ Q} Σ_h Pr_q[hist(x) = h] · δ_{ε,M}(h)          (LWX Proposition 7 + anonymity)

where Q is the set of mixtures q = (n_1, …, n_ℓ*) of the ℓ* hull vertices (n_j records drawn i.i.d. from
π*_j), so that hist(x) ∼ Σ_j Multinomial(n_j, π*_j).

:func:`smoothed_delta` is a thin dispatcher: a smoothed-DP mechanism of this package computes δ_SDP in its
own ``_smoothed_delta`` method (:class:`~smoothdp.smoothed_dp.SamplingHistogram`: the binary fast path of
:mod:`smoothdp.smoothed_dp.binary` for m = 2, the general path below for m ≥ 3); any other object with
``output_log_pmf`` goes through the general path with the generic profile.

**General path** (:func:`general_smoothed_delta`): enumerate the C(n+m−1, m−1) histograms and the
C(n+ℓ*−1, ℓ*−1) mixtures, with the histogram law computed by log-domain convolution. Small n only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from smoothdp.keywords import check_keywords_of
from smoothdp.smoothed_dp._logmath import logsumexp_or_neginf
from smoothdp.smoothed_dp.base import (
    AnonymousMechanism,
    SmoothedDelta,
    SmoothedDPMechanism,
    generic_log_profile,
)
from smoothdp.smoothed_dp.binary import mixture_expected_delta
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.validation import check_epsilon, check_int

__all__ = ["SmoothedDelta", "general_smoothed_delta", "mixture_expected_delta", "smoothed_delta"]

_LN10 = math.log(10.0)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def _log_multinomial(counts: NDArray[np.int64], pi: NDArray[np.float64]) -> NDArray[np.float64]:
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log(pi)[None, :], 0.0)
    return gammaln(n + 1) - gammaln(counts + 1).sum(axis=1) + terms.sum(axis=1)


def _log_convolve(
    a_h: NDArray, a_l: NDArray, b_h: NDArray, b_l: NDArray, base: int
) -> tuple[NDArray, NDArray]:
    """Law of the sum of two independent histograms, in log space (exact grouping, no FFT)."""
    h = (a_h[:, None, :] + b_h[None, :, :]).reshape(-1, a_h.shape[1])
    lv = (a_l[:, None] + b_l[None, :]).ravel()
    keys = h @ (base ** np.arange(h.shape[1]))
    order = np.argsort(keys, kind="stable")
    keys, h, lv = keys[order], h[order], lv[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    peak = np.maximum.reduceat(lv, first)
    peak_rep = np.repeat(peak, np.diff(np.r_[first, lv.size]))
    with np.errstate(divide="ignore", invalid="ignore"):
        summed = (
            np.log(np.add.reduceat(np.exp(np.where(np.isfinite(peak_rep), lv - peak_rep, -np.inf)), first))
            + peak
        )
    return h[first], np.where(np.isfinite(peak), summed, -np.inf)


def general_smoothed_delta(
    log_profile: Callable[[NDArray[np.int64]], float] | None,
    n: int,
    vertices: NDArray[np.float64],
    *,
    log_profiles: Callable[[NDArray[np.int64]], NDArray[np.float64]] | None = None,
) -> tuple[float, tuple[int, ...], dict[tuple[int, ...], float]]:
    """(ln δ_SDP, maximising mixture, {mixture: log10 E[δ]}) by full enumeration.

    ``log_profile(h)`` is ln δ_{ε,M}(h) for a histogram h (the mechanism and ε are fixed by the caller);
    ``log_profiles(hists)``, when given, computes it for every row of an (N, m) array at once (vectorized).
    """
    m, ell = vertices.shape[1], vertices.shape[0]
    n_hist, n_mix = math.comb(n + m - 1, m - 1), math.comb(n + ell - 1, ell - 1)
    if n_mix * n_hist * n_hist > 5e8:
        raise ValueError(
            f"the exact general path enumerates {n_hist} histograms and {n_mix} mixtures: too large for "
            f"n = {n}, m = {m}, {ell} vertices (m = 2 has a fast path)"
        )
    hists = np.array(list(_compositions(n, m)), dtype=np.int64)
    if log_profiles is not None:
        log_delta = np.asarray(log_profiles(hists), dtype=np.float64)
    elif log_profile is not None:
        log_delta = np.array([log_profile(h) for h in hists])
    else:
        raise TypeError("general_smoothed_delta needs log_profile or log_profiles")
    base = n + 1
    lookup = {int(key): i for i, key in enumerate(hists @ (base ** np.arange(m)))}
    tables: dict[tuple[int, int], tuple[NDArray, NDArray]] = {}

    def table(j: int, count: int) -> tuple[NDArray, NDArray]:
        if (j, count) not in tables:
            hs = np.array(list(_compositions(count, m)), dtype=np.int64)
            tables[(j, count)] = (hs, _log_multinomial(hs, vertices[j]))
        return tables[(j, count)]

    evaluated: dict[tuple[int, ...], float] = {}
    for q in _compositions(n, ell):
        law_h, law_l = np.zeros((1, m), dtype=np.int64), np.zeros(1)
        for j, count in enumerate(q):
            if count:
                th, tl = table(j, count)
                law_h, law_l = _log_convolve(law_h, law_l, th, tl, base)
        idx = np.array([lookup[int(key)] for key in law_h @ (base ** np.arange(m))])
        evaluated[q] = float(logsumexp_or_neginf(law_l + log_delta[idx]))
    best = max(evaluated, key=lambda key: evaluated[key])
    return evaluated[best], best, {q: v / _LN10 for q, v in evaluated.items()}


# ------------------------------------------------------------------------------------------------ public


def smoothed_delta(
    mechanism: SmoothedDPMechanism | AnonymousMechanism,
    epsilon: float,
    n: int,
    distributions: ArrayLike,
    *,
    mixtures: str | int = "auto",
) -> SmoothedDelta:
    """δ_SDP(ε) of an anonymous mechanism for n records and a set Π of distributions (LWX Algorithm 1).

    Parameters
    ----------
    mechanism
        A :class:`SamplingHistogram` (fast exact path for m = 2 at any n; general path for m ≥ 3, small n), or
        any anonymous mechanism with ``output_log_pmf`` (general path, small n).
    epsilon
        ε > 0.
    n
        Number of records, n ≥ 1.
    distributions
        Π as an array (ℓ, m) of distributions over m ≥ 2 categories (or one distribution, shape (m,)). Only
        the vertices of its convex hull are used (LWX Proposition 7).
    mixtures
        Binary path only: ``"auto"`` (every mixture when n ≤ 400, else a grid of 33 plus a golden-section
        refinement), ``"all"`` (every mixture), ``"vertices"`` (n_1 ∈ {0, n}), or an int (grid size).

    Returns
    -------
    SmoothedDelta
        δ_SDP, ln δ_SDP, log10 δ_SDP, the maximising mixture, the vertices, the DP δ for comparison.

    Examples
    --------
    >>> from smoothdp.smoothed_dp import SamplingHistogram, smoothed_delta
    >>> r = smoothed_delta(SamplingHistogram(eta=0.998), 7.0, 100_000, [[0.9447, 0.0553], [0.2286, 0.7714]])
    >>> round(r.log10_delta, 2), r.mixture
    (-4.94, (0, 100000))
    """
    eps = check_epsilon(epsilon)
    n = check_int("n", n, minimum=1)
    if isinstance(mixtures, str):
        if mixtures not in ("auto", "all", "vertices"):
            raise ValueError(
                f"mixtures must be 'auto', 'all', 'vertices' or a grid size ≥ 2; got {mixtures!r}"
            )
    else:
        check_int("mixtures", mixtures, minimum=2)
    if isinstance(mechanism, SmoothedDPMechanism):
        return mechanism._smoothed_delta(eps, n, distributions, mixtures)
    if not isinstance(mechanism, AnonymousMechanism):
        raise TypeError(
            "mechanism must be a SamplingHistogram or have output_log_pmf(histogram); "
            f"got {type(mechanism).__name__}"
        )
    vertices = hull_vertices(distributions)
    anonymous = mechanism
    log_value, mixture, evaluated = general_smoothed_delta(
        lambda h: generic_log_profile(anonymous, h, eps)[0], n, vertices
    )
    return SmoothedDelta.from_log(
        log_value,
        mixture=mixture,
        vertices=vertices,
        epsilon=eps,
        n=n,
        dp_delta=float("nan"),
        mechanism=type(mechanism).__name__,
        method="general enumeration of histograms and mixtures",
        exact_max=True,
        evaluated=evaluated,
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
