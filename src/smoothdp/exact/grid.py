"""The public output grid: a floating-point format with ``precision`` significant bits and a fixed-point
floor of spacing 2^(exponent − precision) below 2^exponent.

R(y) rounds a real y to the nearest grid point (ties to even): for |y| < 2^E the spacing is 2^(E−p); for
2^e ≤ |y| < 2^(e+1) with e ≥ E it is 2^(e−p). R is monotone, so when both ends of a certified enclosure
[a, b] of y round to the same grid point, that point is R(y). The grid is built from public values only
(bounds, parameters), never from the data or a smooth sensitivity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["OutputGrid"]

#: Default significant bits: coarse enough that the float fast path's certified error (about 2^-46
#: relative) almost never straddles a rounding boundary, fine enough (relative 2^-36 ≈ 1.5e-11) to be
#: far below any noise a release adds.
DEFAULT_PRECISION = 36


@dataclass(frozen=True)
class OutputGrid:
    """A public rounding grid (see the module docstring).

    Parameters
    ----------
    exponent
        E: below 2^E in magnitude the grid is fixed-point with spacing 2^(E − precision).
    precision
        p: significant bits of the floating part of the grid.
    """

    exponent: int
    precision: int = DEFAULT_PRECISION

    def __post_init__(self) -> None:
        # Grid points must be floats: at most 53 significant bits, and the fixed-point step 2^(E−p) a
        # normal float.
        if not 1 <= int(self.precision) <= 52:
            raise ValueError(f"precision must be an integer in [1, 52]; got {self.precision!r}")
        if not -1000 <= int(self.exponent) <= 1024:
            raise ValueError(f"exponent must be an integer in [-1000, 1024]; got {self.exponent!r}")

    @classmethod
    def for_magnitude(cls, magnitude: float, *, precision: int = DEFAULT_PRECISION) -> OutputGrid:
        """The grid whose fixed-point part covers |y| < 2^⌈log2 magnitude⌉ (``magnitude`` public, > 0)."""
        m = float(magnitude)
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"magnitude must be a finite positive number; got {magnitude!r}")
        return cls(exponent=math.frexp(m)[1], precision=precision)

    @classmethod
    def for_bounds(cls, lower: float, upper: float, *, precision: int = DEFAULT_PRECISION) -> OutputGrid:
        """The grid for a statistic with public bounds: magnitude max(|lower|, |upper|, upper − lower)."""
        magnitude = max(abs(lower), abs(upper), upper - lower)
        if not (math.isfinite(magnitude) and magnitude >= 2.0**-1001):  # exponent in [-1000, 1024]
            raise ValueError(
                "bounds must have max(|lower|, |upper|, upper − lower) finite and at least 2^-1001 (the "
                f"public output grid needs it); got ({lower!r}, {upper!r})"
            )
        return cls.for_magnitude(magnitude, precision=precision)

    def round(self, y: ArrayLike) -> NDArray[np.float64]:
        """R(y) for float y (exact: only power-of-two scalings and ``np.rint``)."""
        v = np.asarray(y, dtype=np.float64)
        _, e = np.frexp(v)  # |v| in [2^(e-1), 2^e)
        shift = np.maximum(e - 1, self.exponent) - self.precision
        out: NDArray[np.float64] = np.ldexp(np.rint(np.ldexp(v, -shift)), shift)
        return out
