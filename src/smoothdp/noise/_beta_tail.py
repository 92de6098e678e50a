"""Tails of symmetric laws whose |Z|^k is beta-prime: Student's t and the generalized Cauchy.

For both families P(|Z| > t) = I_y(p, q), the regularized incomplete beta function at
y = 1/(1 + v) with v = (t/c)^k:

* Student's t(d): k = 2, c = √d, (p, q) = (d/2, 1/2);
* generalized Cauchy(γ): k = γ, c = 1, (p, q) = (1 − 1/γ, 1/γ)  (``docs/theory/noise.md#generalized-cauchy``).

Working with ln y and ln(1 − y) instead of y keeps both tails accurate: far out y underflows long before
the tail probability does, so there I_y(p, q) is replaced by its leading term y^p / (p·B(p, q))
(relative error O(y) < 1e-300). Near t = 0, where y rounds to 1, the complement I_{1−y}(q, p) is used
with 1 − y computed from its logarithm, never as 1 minus something.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special

__all__ = ["abs_sf", "abs_sf_inverse", "log_y_of"]

# Below e^{-690} the incomplete beta's argument is too close to the subnormals; switch to the asymptote.
_LOG_Y_ASYMPTOTE = -690.0


def log_y_of(log_v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return (ln y, ln(1 − y)) for y = 1/(1 + v), given ln v (−inf allowed)."""
    log_v = np.asarray(log_v, dtype=float)
    log_1pv = np.logaddexp(0.0, log_v)
    # At t = ±inf (ln v = +inf), ln(1 − y) = 0 exactly; inf − inf would give NaN.
    infinite = np.isposinf(log_v)
    log_1my = np.where(infinite, 0.0, log_v - np.where(infinite, 0.0, log_1pv))
    return -log_1pv, log_1my


def abs_sf(log_v: NDArray[np.float64], p: float, q: float) -> NDArray[np.float64]:
    """P(|Z| > t) = I_y(p, q) with y = 1/(1 + v), given ln v = k·ln(t/c)."""
    log_y, log_1my = log_y_of(log_v)
    far = log_y < _LOG_Y_ASYMPTOTE
    asymptote = np.exp(p * np.where(far, log_y, 0.0) - np.log(p) - special.betaln(p, q))
    # Near t = 0, y rounds to 1: use I_y(p, q) = 1 − I_{1−y}(q, p) with 1 − y from its logarithm.
    near_zero = log_y > -np.log(2.0)
    body = np.where(
        near_zero,
        1.0 - special.betainc(q, p, np.exp(log_1my)),
        special.betainc(p, q, np.exp(log_y)),
    )
    return np.where(far, asymptote, body)


def abs_sf_inverse(m: NDArray[np.float64], p: float, q: float) -> NDArray[np.float64]:
    """ln v such that I_{1/(1+v)}(p, q) = m, for m in [0, 1] (m = 0 gives +inf, m = 1 gives −inf)."""
    with np.errstate(divide="ignore"):
        log_m = np.log(m)
        log_y_far = (log_m + np.log(p) + special.betaln(p, q)) / p
        far = log_y_far < _LOG_Y_ASYMPTOTE
        # Small tail mass: y is small, invert I_y(p, q) = m directly.
        y = special.betaincinv(p, q, np.where(m <= 0.5, m, 0.5))
        log_v_small_m = np.log1p(-y) - np.log(y)
        # Large tail mass (t near 0): 1 − y is small, invert I_{1−y}(q, p) = 1 − m (exact for m ≥ 1/2).
        x = special.betaincinv(q, p, np.where(m > 0.5, 1.0 - m, 0.5))
        log_v_large_m = np.log(x) - np.log1p(-x)
    log_v = np.where(m <= 0.5, log_v_small_m, log_v_large_m)
    return np.where(far, -log_y_far, log_v)
