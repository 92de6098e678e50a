"""Independent exact references for the exact-release tests: the grid rounding of an exact rational,
written from the grid's definition, and the exact value of an mpmath number."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath as mp

from smoothdp.exact import OutputGrid


def ref_round(y: Fraction, grid: OutputGrid) -> float:
    """Nearest grid point (ties to even) of the exact rational y, computed from the grid's definition."""
    if y == 0:
        return 0.0
    a = abs(y)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    while Fraction(2) ** e > a:  # fix float log2 rounding: 2^e ≤ |y| < 2^(e+1)
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    step = Fraction(2) ** (max(e, grid.exponent) - grid.precision)
    t = y / step
    n = math.floor(t)
    frac = t - n
    if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return float(n * step)


def to_fraction(x: Any) -> Fraction:
    sign, man, exp, _ = mp.mpf(x)._mpf_
    v = Fraction(int(man) * 2**exp) if exp >= 0 else Fraction(int(man), 2 ** (-exp))
    return -v if sign else v
