"""The database-dependent privacy profile δ_{ε,M}(x) (seed 003, Definition 2) of anonymous mechanisms.

    d_{ε,M}(x, x') = max_S Pr[M(x) ∈ S] − e^ε Pr[M(x') ∈ S]
                   = Σ_o (P_x(o) − e^ε P_{x'}(o))_+                        (discrete outputs)
    δ_{ε,M}(x)     = max(0, max_{x' ≃ x} d(x, x'), max_{x' ≃ x} d(x', x))   (x' replaces one record)

Theorem 1 of the seed: M is (ε, δ)-DP iff max_x δ_{ε,M}(x) ≤ δ. For an anonymous mechanism (output law a
function of the histogram h) the neighbours of h are h − e_a + e_b (a record of category a becomes b).

Paths of :func:`privacy_profile`:

* ``SamplingHistogram``: exact fast paths in log space (:mod:`smoothdp.smoothed_dp.histogram_profile`): the
  binary closed form, the general-m one-dimensional conditioning sum, and sampling with replacement through
  binomials.
* ``QuantizedSamplingAverage``: the exact sampled-sum recursion (:mod:`smoothdp.smoothed_dp.quantized`).
* any object with ``output_log_pmf(histogram) -> {output: ln P}`` (small cases): the generic path, which
  enumerates the outputs of h and of every neighbour. ``method="generic"`` forces it for M_H (a cross-check).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.smoothed_dp._logmath import log1mexp, logsumexp_or_neginf
from smoothdp.smoothed_dp.histogram_profile import binary_log_profile, histogram_log_profile
from smoothdp.smoothed_dp.mechanisms import (
    SOURCE,
    QuantizedSamplingAverage,
    SamplingAverage,
    SamplingHistogram,
    check_histogram,
)
from smoothdp.validation import check_epsilon, check_int

__all__ = [
    "AnonymousMechanism",
    "ProfileValue",
    "binary_privacy_profile",
    "log_divergence",
    "privacy_profile",
]


@runtime_checkable
class AnonymousMechanism(Protocol):
    """A mechanism whose output law depends on the histogram only, with discrete outputs it can enumerate."""

    def output_log_pmf(self, histogram: ArrayLike) -> dict[Any, float]: ...


@dataclass(frozen=True)
class ProfileValue:
    """δ_{ε,M}(h) with its logs (δ may be far below the float range: read ``log10_delta``).

    ``neighbour`` is (a, b, direction): the worst neighbour h − e_a + e_b and whether the worst divergence is
    d(h, h') ("forward") or d(h', h) ("backward"); (-1, -1, "") when h has no neighbour (δ = 0).
    """

    delta: float
    log_delta: float
    log10_delta: float
    epsilon: float
    histogram: tuple[int, ...]
    neighbour: tuple[int, int, str]
    method: str
    source: str = SOURCE + ", Definition 2"

    def __float__(self) -> float:
        return self.delta


def log_divergence(log_p: dict[Any, float], log_q: dict[Any, float], epsilon: float) -> float:
    """ln Σ_o (P(o) − e^ε Q(o))_+ for two discrete laws given as {output: ln probability}."""
    keys = list(log_p)
    lp = np.array([log_p[o] for o in keys], dtype=np.float64)
    lq = np.array([log_q.get(o, -np.inf) for o in keys], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        gap = epsilon + lq - lp  # ln(e^ε Q/P); the term is positive where gap < 0
    positive = (gap < 0) & np.isfinite(lp)
    if not positive.any():
        return -np.inf
    return float(logsumexp_or_neginf(lp[positive] + log1mexp(gap[positive])))


def _generic_log_profile(
    mechanism: Any, h: NDArray[np.int64], epsilon: float
) -> tuple[float, tuple[int, int, str]]:
    law = mechanism.output_log_pmf(h)
    best: tuple[float, tuple[int, int, str]] = (-np.inf, (-1, -1, ""))
    for a in np.flatnonzero(h >= 1):
        for b in range(h.size):
            if b == a:
                continue
            neighbour = h.copy()
            neighbour[a] -= 1
            neighbour[b] += 1
            other = mechanism.output_log_pmf(neighbour)
            for value, direction in (
                (log_divergence(law, other, epsilon), "forward"),
                (log_divergence(other, law, epsilon), "backward"),
            ):
                if value > best[0]:
                    best = (value, (int(a), int(b), direction))
    return best


def _make_value(
    log_delta: float, epsilon: float, h: NDArray[np.int64], neighbour: tuple, method: str
) -> ProfileValue:
    log_delta = min(float(log_delta), 0.0)  # δ ≤ 1; rounding can leave +1e-16
    return ProfileValue(
        delta=math.exp(log_delta) if np.isfinite(log_delta) else 0.0,
        log_delta=log_delta,
        log10_delta=log_delta / math.log(10.0),
        epsilon=epsilon,
        histogram=tuple(int(v) for v in h),
        neighbour=neighbour,
        method=method,
    )


def privacy_profile(
    mechanism: Any, histogram: ArrayLike, epsilon: float, *, method: str = "auto"
) -> ProfileValue:
    """δ_{ε,M}(h): the database-dependent privacy profile of an anonymous mechanism (seed 003, Definition 2).

    Parameters
    ----------
    mechanism
        A :class:`SamplingHistogram`, a :class:`QuantizedSamplingAverage` (histogram over its codes
        low..high), or any object with ``output_log_pmf(histogram) -> {output: ln probability}``.
    histogram
        Counts per category (m ≥ 2 non-negative integers, total n ≥ 1).
    epsilon
        ε > 0.
    method
        ``"auto"`` (the exact fast path when there is one) or ``"generic"`` (enumerate the outputs).

    Returns
    -------
    ProfileValue
        δ, ln δ, log10 δ and the worst neighbour. All computations are in log space (δ may be 1e-500).
    """
    eps = check_epsilon(epsilon)
    if method not in ("auto", "generic"):
        raise ValueError(f"method must be 'auto' or 'generic'; got {method!r}")
    if isinstance(mechanism, SamplingAverage):
        raise TypeError(
            "SamplingAverage has continuous outputs: its profile is T/n for almost every database "
            "(Theorem 4); use SamplingAverage.smoothed_delta(n)"
        )
    if isinstance(mechanism, QuantizedSamplingAverage):
        from smoothdp.smoothed_dp.quantized import quantized_average_profile

        h = check_histogram(histogram, categories=mechanism.high - mechanism.low + 1)
        return quantized_average_profile(mechanism, np.repeat(mechanism.levels, h), eps)
    h = check_histogram(histogram)
    if method == "auto" and isinstance(mechanism, SamplingHistogram):
        n = int(h.sum())
        t = mechanism.sample_size(n)
        param = t if mechanism.replace else n - t
        log_delta, neighbour = histogram_log_profile(h, param, eps, replace=mechanism.replace)
        label = "binary closed form" if h.size == 2 else "general-m conditioning sum"
        return _make_value(
            log_delta, eps, h, neighbour, label + (" (with replacement)" if mechanism.replace else "")
        )
    if not isinstance(mechanism, AnonymousMechanism):
        raise TypeError(
            "mechanism must be a SamplingHistogram, a QuantizedSamplingAverage, or have "
            f"output_log_pmf(histogram); got {type(mechanism).__name__}"
        )
    log_delta, neighbour = _generic_log_profile(mechanism, h, eps)
    return _make_value(log_delta, eps, h, neighbour, "generic enumeration of outputs")


def binary_privacy_profile(
    mechanism: SamplingHistogram, n: int, epsilon: float, counts: ArrayLike | None = None
) -> NDArray[np.float64]:
    """ln δ(k) (natural log) of M_H on binary databases with k records of category 1, for all k = 0..n.

    The vectorized form of :func:`privacy_profile` for m = 2 (Figure 1 and the inner step of Algorithm 1):
    δ(k) = max{A(k), A(n−k+1) [k ≥ 1]; A(n−k), A(k+1) [k ≤ n−1]} with A the closed-form kernel of
    :mod:`smoothdp.smoothed_dp.histogram_profile`. Divide by ln 10 for log10.

    Parameters
    ----------
    counts
        Only these k (default: every k in 0..n).
    """
    if not isinstance(mechanism, SamplingHistogram):
        raise TypeError(f"mechanism must be a SamplingHistogram; got {type(mechanism).__name__}")
    n = check_int("n", n, minimum=1)
    eps = check_epsilon(epsilon)
    t = mechanism.sample_size(n)
    return binary_log_profile(n, t if mechanism.replace else n - t, eps, counts, replace=mechanism.replace)
