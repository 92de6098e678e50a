"""The two float arithmetics of the fast path, and rigorous constants for each.

The fast path encloses c + S·Z in a float format with a documented error per operation
(docs/theory/floating-point.md#the-fast-path-and-its-error-bound): binary64 for every element, and, where
the platform's ``long double`` is the x87 80-bit format (64-bit significand: x86-64 Linux and macOS on
Intel), a second pass in that format for the few elements binary64 leaves undecided, before python-flint's
ball arithmetic. Per arithmetic:

* ``unit``: the relative error of one correctly rounded + − × ÷ or square root with a normal result
  (2⁻⁵³, 2⁻⁶⁴);
* ``elem``: the **assumed** relative error of one elementary function call (log, log1p, exp, expm1, tan,
  sin, cbrt) on the arguments the fast path uses: 2⁻⁴⁷ = 64 units of 2⁻⁵³ for numpy's binary64 loops,
  2⁻⁵⁸ = 64 units of 2⁻⁶⁴ for the C library's ``long double`` functions (glibc documents at most a few
  units for both); both are measured against arb in tests/exact/test_libm_bounds.py.

:func:`shrink` and :func:`grow` fold a chain of such errors, and the rounding of one final product, into
one constant: for x ≥ 0 computed with x ≤ t·Π(1 + δᵢ), fl(x·shrink(κ, δ…)) ≤ κ·t; for x ≥ t·Π(1 − δᵢ),
fl(x·grow(κ, δ…)) ≥ κ·t (for x ≤ 0 the two swap roles). The constants are computed in exact rationals
and rounded outward to the arithmetic's format, so the bounds hold whatever κ and δ are, as long as
the product is a normal number of the format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["BINARY64", "LONG_DOUBLE", "Arithmetic", "arithmetic_of"]


@dataclass(frozen=True)
class Arithmetic:
    """A float format and the error bounds the fast path assumes for it (module docstring)."""

    name: str
    dtype: type[np.floating[Any]]
    #: Significand bits (53 for binary64, 64 for x87 extended).
    bits: int
    elem: float
    #: The widest box of one uniform the engine evaluates in this format: 2⁻⁵² (the first 52 bits of a
    #: word, binary64) and 2⁻⁶³ (the whole first word: 63 or 64 bits, long double).
    box: float

    @property
    def unit(self) -> float:
        """The relative error of one correctly rounded operation: 2^−bits."""
        return 2.0**-self.bits

    def shrink(self, kappa: float | Fraction, *errors: float) -> Any:
        """κ′ ≤ κ/((1 + unit)·Π(1 + δᵢ)) in this format (module docstring)."""
        den = 1 + Fraction(self.unit)
        for d in errors:
            den *= 1 + Fraction(d)
        return self.bounds(Fraction(kappa) / den)[0]

    def grow(self, kappa: float | Fraction, *errors: float) -> Any:
        """κ″ ≥ κ/((1 − unit)·Π(1 − δᵢ)) in this format (module docstring)."""
        den = 1 - Fraction(self.unit)
        for d in errors:
            den *= 1 - Fraction(d)
        return self.bounds(Fraction(kappa) / den)[1]

    def down(self, delta: float) -> Any:
        """The largest number of the format ≤ 1 − δ (a widening factor, exact for δ = 2u, 2E)."""
        return self.bounds(1 - Fraction(delta))[0]

    def up(self, delta: float) -> Any:
        """The smallest number of the format ≥ 1 + δ."""
        return self.bounds(1 + Fraction(delta))[1]

    def bounds(self, q: Fraction) -> tuple[Any, Any]:
        """The largest number of the format ≤ q and the smallest ≥ q (q a normal number's size)."""
        return _bounds(q, self.bits, self.dtype)


def _bounds(q: Fraction, bits: int, dtype: type[np.floating[Any]]) -> tuple[Any, Any]:
    if q == 0:
        return dtype(0), dtype(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^(e−1) < a < 2^(e+1)
    if Fraction(2) ** e > a:
        e -= 1  # now 2^e ≤ a < 2^(e+1)
    shift = bits - 1 - e  # a·2^shift ∈ [2^(bits−1), 2^bits)
    scaled = a * (Fraction(2) ** shift)
    low = math.floor(scaled)
    high = low if low == scaled else low + 1
    lo_v, hi_v = (_scaled(m, -shift, dtype) for m in (low, high))
    return (lo_v, hi_v) if sign > 0 else (-hi_v, -lo_v)


def _scaled(m: int, exponent: int, dtype: type[np.floating[Any]]) -> Any:
    """m·2^exponent in ``dtype``, exactly (m < 2^64, within the format's range)."""
    value = np.asarray(m, dtype=np.uint64).astype(dtype) if m < 2**64 else dtype(2.0**64)
    return dtype(np.ldexp(value, exponent))


#: binary64: numpy's elementary functions assumed within 2⁻⁴⁷ (64 units of 2⁻⁵³).
BINARY64 = Arithmetic("binary64", np.float64, 53, 2.0**-47, 2.0**-52)


@lru_cache(maxsize=1)
def _long_double() -> Arithmetic | None:
    info = np.finfo(np.longdouble)
    if int(info.nmant) != 63:  # x87 extended only: binary128 is software (slow), 64-bit is binary64
        return None
    return Arithmetic("x87 extended", np.longdouble, 64, 2.0**-58, 2.0**-63)


#: The x87 80-bit format where ``long double`` is it (else None): functions assumed within 2⁻⁵⁸.
LONG_DOUBLE = _long_double()


def arithmetic_of(x: np.ndarray) -> Arithmetic:
    """The arithmetic of an array the fast path evaluates (binary64 or the long-double format)."""
    if x.dtype == np.float64 or LONG_DOUBLE is None:
        return BINARY64
    return LONG_DOUBLE
