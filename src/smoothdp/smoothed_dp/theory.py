"""LWX's theoretical statements about M_H as functions, to set next to the exact values in reports.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#sampling-histogram-mechanism``.

* :func:`theorem3_epsilon_threshold`, :func:`in_theorem3_regime`: LWX Theorem 3(i) holds for
  ε ≥ ln(1/(1−η)) + c.
* :func:`remark8_delta_bound`: the non-asymptotic bound of LWX Remark 8. It is extremely loose (0.989 at
  n = 1e6, ε = 7, η = 0.998, where the exact δ_SDP is 1e-49.4): never use it as a reference value.
* :func:`large_epsilon_delta`: the exact large-ε value (ours:
  ``docs/theory/smoothed-dp.md#binary-hypergeometric-closed-form``), a cheap oracle for tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from smoothdp.smoothed_dp.base import exact_rate
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.validation import check_epsilon, check_in_range, check_int

__all__ = [
    "in_theorem3_regime",
    "large_epsilon_delta",
    "remark8_delta_bound",
    "theorem3_epsilon_threshold",
]


def theorem3_epsilon_threshold(eta: Any) -> float:
    """ln(1/(1−η)): Theorem 3(i) gives an exponentially small δ_SDP for ε ≥ this + c (6.21 at η = 0.998)."""
    return -math.log1p(-float(exact_rate(eta)))


def in_theorem3_regime(epsilon: float, eta: Any, margin: float = 0.0) -> bool:
    """True when ε ≥ ln(1/(1−η)) + ``margin`` (Theorem 3(i)'s condition with c = margin)."""
    return check_epsilon(epsilon) >= theorem3_epsilon_threshold(eta) + margin


def remark8_delta_bound(epsilon: float, eta: Any, f: float, n: int, m: int) -> float:
    """Remark 8: M_H is (ε, exp(−g·f·n/6) + m·exp(−f·n/8), Π)-smoothed DP for ε > ln(1/(1−η)),

    with g(η, ε) = (η⁻¹(1 − e^{−ε}) − 1)² and Π f-strictly positive (every π(X) ≥ f on its support). Returned
    capped at 1.

    Raises
    ------
    ValueError
        If ε ≤ ln(1/(1−η)) (the remark does not apply) or f ∉ (0, 1/m].
    """
    eps = check_epsilon(epsilon)
    rate = float(exact_rate(eta))
    m = check_int("m", m, minimum=2)
    n = check_int("n", n, minimum=1)
    f = check_in_range("f", f, 0.0, 1.0 / m, low_open=True, high_open=False)
    threshold = -math.log1p(-rate)
    if eps <= threshold:
        raise ValueError(f"Remark 8 needs epsilon > ln(1/(1-eta)) = {threshold:.6g}; got {epsilon!r}")
    g = ((-math.expm1(-eps)) / rate - 1.0) ** 2
    return min(1.0, math.exp(-g * f * n / 6.0) + m * math.exp(-f * n / 8.0))


def large_epsilon_delta(removed: int, distributions: ArrayLike) -> float:
    """log10 of max over the hull vertices π and categories a of (1 − π(a))^L (ours; module docstring).

    For e^ε ≥ h_a·L/(h_b+1) only "no record of category a was removed" survives in D(h; a→b), which is
    C(n−h_a, L)/C(n, L), and its mean over h ∼ Multinomial(n, π) is exactly (1 − π(a))^L. Hence, for e^ε ≥ n·L
    and strictly positive Π, δ_SDP ≥ this value, with equality up to the probability that the smallest
    category of the database is not the smallest of π (negligible for large n). Returned as log10 (it
    underflows).

    Parameters
    ----------
    removed
        L = n − T.
    distributions
        Π (rows); every probability must be > 0 (a category of probability 0 gives δ_SDP = T/n instead).
    """
    big_l = check_int("removed", removed, minimum=0)
    vertices = hull_vertices(distributions)
    if np.any(vertices <= 0):
        raise ValueError(
            "distributions must be strictly positive for the large-epsilon value (see docstring)"
        )
    return big_l * math.log10(1.0 - float(vertices.min()))
