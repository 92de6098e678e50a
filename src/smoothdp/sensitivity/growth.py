"""Growth functions G_β(t): how fast a smooth upper bound may grow with distance t.

A function S is a G_β-smooth upper bound on the local (or pointwise Lipschitz) sensitivity L when
S(x) ≥ L(x) and S(x) ≤ G_β(d(x, x'))·S(x') for all x, x' (docs/theory/geo-privacy.md#smooth-growth-functions;
Nissim, Raskhodnikova & Smith, STOC 2007 for e^{βt}; Liang & Yi, CCS 2024, Definition 8 for a general G).

* ``"exponential"``: G_β(t) = e^{βt} (the PolyPlace, Student's T and Cauchy rules).
* ``"linear"``: G_β(t) = 1 + βt (Liang & Yi, CCS 2024, Lemma 3.6: the Laplace rule under approximate
  geo-privacy; docs/theory/calibration.md#lemma-6-laplace-geo-privacy-rule).

The smooth sensitivity for G is S*(x) = sup_{x'} L(x') / G_β(d(x, x'))
(docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.validation import check_positive

__all__ = ["GROWTHS", "Growth", "check_growth", "growth", "log_growth", "smoothness_violation"]

Growth = Literal["exponential", "linear"]
GROWTHS: tuple[Growth, ...] = ("exponential", "linear")


def check_growth(growth: str) -> Growth:
    """The growth name must be one of ``"exponential"`` (e^{βt}) or ``"linear"`` (1 + βt)."""
    if growth not in GROWTHS:
        raise ValueError(f"growth must be one of {GROWTHS}; got {growth!r}")
    return growth


def growth(t: ArrayLike, beta: float, kind: Growth = "exponential") -> NDArray[np.float64]:
    """G_β(t) for t ≥ 0."""
    check_growth(kind)
    b = check_positive("beta", beta)
    t = np.asarray(t, dtype=np.float64)
    return np.exp(b * t) if kind == "exponential" else 1.0 + b * t


def log_growth(t: ArrayLike, beta: float, kind: Growth = "exponential") -> NDArray[np.float64]:
    """ln G_β(t), computed without overflow for large t."""
    check_growth(kind)
    b = check_positive("beta", beta)
    t = np.asarray(t, dtype=np.float64)
    return b * t if kind == "exponential" else np.log1p(b * t)


def smoothness_violation(
    s_x: ArrayLike, s_x_prime: ArrayLike, distance: ArrayLike, beta: float, growth: Growth = "exponential"
) -> float:
    """max over pairs of ln S(x) − ln S(x') − ln G_β(d(x, x')): ≤ 0 iff S is G_β-smooth on these pairs.

    The check of the second condition of a G_β-smooth upper bound
    (docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity).
    """
    check_growth(growth)
    s1 = np.asarray(s_x, dtype=np.float64)
    s2 = np.asarray(s_x_prime, dtype=np.float64)
    return float(np.max(np.log(s1) - np.log(s2) - log_growth(distance, beta, growth)))


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
