"""Helpers of the geo queries' certified enclosures: float error margins and python-flint ``arb`` balls.

The error bounds themselves are derived in docs/geo.md ("Exact release path"); this module holds the
shared constants and the ball operations (max, clip) that the exact evaluations need. A ball operation
returns a ball that contains every possible exact result, and its width shrinks with the inputs' widths,
so refining at a higher precision always converges.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import flint
import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import Enclosure

__all__ = [
    "ROUNDING_SLACK",
    "TINY",
    "arb_clip01",
    "arb_max",
    "arb_of",
    "arb_positive_part",
    "clip01",
    "enclosure_from_unclipped",
    "working_precision",
]

#: Absolute slack for values in [−4, 4]: covers a few roundings (each ≤ 2^-51 there) and the rounding of
#: the enclosure's own ends, with a wide margin.
ROUNDING_SLACK = 2.0**-48

#: Absolute slack for values that may underflow to 0 (exp of a large negative number): 2^-1073 ≥ the
#: smallest subnormal, so [0, TINY] holds every positive value that rounds to 0.
TINY = 2.0**-1073


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """python-flint's working precision set to ``bits`` (at least 64) inside the block."""
    with flint.ctx.workprec(max(64, int(bits))):
        yield


def arb_of(value: float | Fraction) -> Any:
    """An exact ``arb`` of a float or a ``Fraction`` (exact when representable at the precision)."""
    if isinstance(value, Fraction):
        return flint.arb(flint.fmpq(value.numerator, value.denominator))
    return flint.arb(float(value))


def arb_max(a: Any, b: Any) -> Any:
    """A ball holding max(α, β) for every α ∈ a, β ∈ b."""
    if a >= b:
        return a
    if b >= a:
        return b
    return a.union(b)


def arb_positive_part(a: Any) -> Any:
    """A ball holding max(α, 0) for α ∈ a."""
    return arb_max(a, flint.arb(0))


def arb_clip01(a: Any) -> Any:
    """A ball holding clip(α, 0, 1) for α ∈ a."""
    zero, one = flint.arb(0), flint.arb(1)
    low = arb_max(a, zero)
    if low <= one:
        return low
    if low >= one:
        return one
    return low.union(one)


def clip01(value: Fraction) -> Fraction:
    """clip(value, 0, 1) for an exact rational."""
    return min(max(value, Fraction(0)), Fraction(1))


def enclosure_from_unclipped(
    g: NDArray[np.float64], error: NDArray[np.float64] | float, refine: Any
) -> Enclosure:
    """[clip(g − e, 0, 1), clip(g + e, 0, 1)] for a computed g with |g − g*| ≤ e, f = clip(g*, 0, 1).

    Consumes ``g`` (its buffer becomes the upper end).
    """
    lower = np.subtract(g, error)
    np.clip(lower, 0.0, 1.0, out=lower)
    upper = np.add(g, error, out=g)
    np.clip(upper, 0.0, 1.0, out=upper)
    return Enclosure(lower, upper, refine)
