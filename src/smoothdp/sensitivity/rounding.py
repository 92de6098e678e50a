"""Directed rounding for sensitivities: every computed sensitivity is rounded **up**, never down.

A smooth sensitivity is only useful as an upper bound; a float result a few ulps below the exact value
would void the guarantee. One helper, used by every module that returns a sensitivity.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ROUND_UP", "round_up"]

#: Relative safety margin added to every computed sensitivity (covers float error in gaps, exp and log).
ROUND_UP = 1e-12

_TINY = np.finfo(np.float64).tiny


def round_up(value: ArrayLike) -> NDArray[np.float64]:
    """Round a computed sensitivity up: ``value·(1 + 1e-12)``, one ulp more for subnormals (0 stays 0).

    The closed forms in smoothdp take at most a few dozen correctly rounded operations (relative error
    ≤ ~1.1e-16 each, ``exp`` of an exponent up to ~700 and ``log`` included), so a relative margin of
    1e-12 dominates their accumulated error; the product's own rounding (half an ulp) is far below the margin.
    Always returns an array (0-d for scalar input); callers that need a Python float wrap it in ``float``.
    """
    out = np.asarray(value, dtype=np.float64) * (1.0 + ROUND_UP)
    # For normal numbers the product is > value by ~1e-12 relative even after its own rounding; only
    # subnormals can round back to the input, so only they take the (slower) explicit step up. One
    # min-reduction rules them out for the usual all-normal array (NaN, 0 and negatives take the full check).
    if out.size and np.minimum.reduce(out, axis=None) >= _TINY:
        return out
    subnormal = (out > 0) & (out < _TINY)
    if subnormal.any():
        out = np.where(subnormal, np.nextafter(out, np.inf), out)
    return out
