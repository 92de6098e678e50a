"""Growth functions G_β(t): how fast a smooth upper bound may grow with distance t.

A function S is a G_β-smooth upper bound on the local (or pointwise Lipschitz) sensitivity L when
S(x) ≥ L(x) and S(x) ≤ G_β(d(x, x'))·S(x') for all x, x' (seed 000, Definition 8; NRS07 for e^{βt}).

* ``"exponential"``: G_β(t) = e^{βt} (NRS07; the PolyPlace, Student's T and Cauchy rules).
* ``"linear"``: G_β(t) = 1 + βt (seed 000, Lemma 3.6: the Laplace rule under approximate GP).

The smooth sensitivity for G is S*(x) = sup_{x'} L(x') / G_β(d(x, x')).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.validation import check_positive

__all__ = ["GROWTHS", "Growth", "growth", "log_growth"]

Growth = Literal["exponential", "linear"]
GROWTHS: tuple[Growth, ...] = ("exponential", "linear")


def _check_growth(kind: str) -> None:
    if kind not in GROWTHS:
        raise ValueError(f"growth must be one of {GROWTHS}; got {kind!r}")


def growth(t: ArrayLike, beta: float, kind: Growth = "exponential") -> NDArray[np.float64]:
    """G_β(t) for t ≥ 0."""
    _check_growth(kind)
    b = check_positive("beta", beta)
    t = np.asarray(t, dtype=np.float64)
    return np.exp(b * t) if kind == "exponential" else 1.0 + b * t


def log_growth(t: ArrayLike, beta: float, kind: Growth = "exponential") -> NDArray[np.float64]:
    """ln G_β(t), computed without overflow for large t."""
    _check_growth(kind)
    b = check_positive("beta", beta)
    t = np.asarray(t, dtype=np.float64)
    return b * t if kind == "exponential" else np.log1p(b * t)
