"""The fused binary64 pass of the exact release path: the affine step, the grid rounding and the decision.

For each chunk of :data:`CHUNK` draws the engine (:mod:`smoothdp.exact.engine`) has the law enclose |Z|
over the uniforms' float boxes (:mod:`smoothdp.exact.laws`); :class:`Decider` then turns the enclosure
[z⁻, z⁺] ∋ |Z| and the sign σ of each draw into an enclosure of y = c + σ·S·|Z|, rounds both ends to the
public grid and marks the element decided where they round to the same point
(docs/theory/floating-point.md#the-fused-kernel). Every array it writes is a buffer made once per release
and reused from chunk to chunk; the sign is a bit, applied and used by integer operations on the floats'
bit patterns, never by a mask and a selection.

The bounds (u = 2⁻⁵³, each + − × correctly rounded):

* **Products.** For S ∈ [s⁻, s⁺], S ≥ 0, and z⁻ ≥ 0: p⁻ = fl(fl(s⁻·z⁻)·(1 − 2⁻⁵²)) ≤ s⁻·z⁻ and
  p⁺ = fl(fl(s⁺·z⁺)·(1 + 2⁻⁵¹)) ≥ s⁺·z⁺ when the products are normal floats ((1 − 2u)(1 + u)² < 1 <
  (1 + 4u)(1 − u)²); a subnormal product is off by at most 2⁻¹⁰⁷⁴, covered below.
* **Sign.** σ·S·|Z| ∈ [p⁻, p⁺] (σ = +) or [−p⁺, −p⁻] (σ = −): the ends are swapped where σ = − by an
  exclusive-or under an all-ones mask and their sign bits flipped, exactly.
* **Center and sums.** c ∈ [c⁻, c⁺]; y⁻ = fl(fl(c⁻ + q⁻) − ω), y⁺ = fl(fl(c⁺ + q⁺) + ω) with q the signed
  ends and ω = fl(fl(C + p⁺)·3u), C ≥ max(|c⁻|, |c⁺|) over the chunk and C ≥ 2⁻¹⁰⁰⁰. Each of the two
  roundings of an end is at most u·(C + p⁺)(1 + 4u), so ω ≥ 3u(C + p⁺)(1 − u)² covers both, and
  ω ≥ 2⁻¹⁰⁵¹ covers a subnormal product. With an exact center (c⁻ = c⁺) the ends need no swap: the
  rounding decision does not depend on which end is lower, so q and ω carry σ's sign bit instead.
  For c = 0 everywhere the magnitudes are rounded and the sign applied afterwards (R(−y) = −R(y)):
  y⁻ = p⁻ − 2⁻¹⁰⁶⁰ and y⁺ = p⁺ + 2⁻¹⁰⁶⁰.
* **Rounding.** On a grid of precision p ≤ 50 both ends are rounded with the one constant
  M = 1.5·2^(e − 1 − p + 52), e the binade of max(min(|y⁻|, |y⁺|), 2^E): (y + M) − M rounds y, ties
  to even, to a multiple of the spacing at the end of smaller magnitude — the finest spacing over the
  enclosure. That end's result is its exact R; if the other end rounds to the same point, the whole
  enclosure lies within half a fine spacing of that grid point, inside its cell, so R is that point
  everywhere (when the point is 2^e, the cell above it is twice as wide). It needs |y| < 2^(971 + p):
  C + p⁺ ≥ 2^(970 + p) (and any nan) leaves the element undecided.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact._core import F64, TINY, U64, Affine, GridRounder, Rounder
from smoothdp.exact.laws import Scratch

__all__ = ["CHUNK", "SIGN_BIT", "Decider", "Workspace"]

#: Elements per chunk: each float64 buffer is 64 KiB, so the working set of a chunk stays in the L2 cache.
CHUNK = 1 << 13
#: The sign bit of a float64's bit pattern.
SIGN_BIT = np.uint64(1 << 63)
_DN = 1.0 - 2.0**-52
_UP = 1.0 + 2.0**-51
_K = 3.0 * 2.0**-53
_C_FLOOR = 2.0**-1000
_EXPONENT_BITS = np.uint64(0x7FF0000000000000)
_SHIFT63 = np.int64(63)


class Workspace:
    """Buffers of one release, reused by every chunk: the uniforms' boxes and the decision's arrays."""

    def __init__(self, n_uniforms: int, size: int) -> None:
        self.lows = [np.empty(size) for _ in range(n_uniforms)]
        self.highs = [np.empty(size) for _ in range(n_uniforms)]
        self.sign_bits = np.empty(size, dtype=np.uint64)
        #: The law's own buffers (results and temporaries of ``fast``).
        self.scratch = Scratch(size)


class Decider:
    """The affine step, the rounding and the decision for one coordinate of a chunk (module docstring).

    ``decide(a, b, j, sign_bits, z_lo, z_hi, out, undecided)`` writes R(y) of elements a..b−1,
    coordinate j, into ``out`` and ORs into ``undecided`` the elements whose ends round apart (``out``
    then holds a value to be overwritten).
    """

    def __init__(self, affine: Affine, rounder: Rounder, size: int) -> None:
        self.affine = affine
        self.c_exact = affine.c_lo is affine.c_hi
        self.magnitude = not (np.any(affine.c_lo) or np.any(affine.c_hi))
        self.s_zero = not bool(np.all(affine.s_lo))
        same_s = affine.s_lo is affine.s_hi
        self.s_one = same_s and not self.s_zero and bool(np.all(affine.s_lo == 1.0))
        self.round = _rounding(rounder, size)
        self.p_lo, self.p_hi, self.total, self.omega = (np.empty(size) for _ in range(4))
        self.mask = np.empty(size, dtype=np.int64)
        self.swap = np.empty(size, dtype=np.uint64)
        self.bad = np.empty(size, dtype=np.bool_)
        self.flag = np.empty(size, dtype=np.bool_)

    def decide(
        self,
        a: int,
        b: int,
        j: int,
        sign_bits: U64 | None,
        z_lo: F64,
        z_hi: F64,
        out: F64,
        undecided: NDArray[np.bool_],
    ) -> None:
        m = b - a
        bad, flag = self.bad[:m], self.flag[:m]
        if self.magnitude:
            y_lo, y_hi = self._magnitudes(a, b, j, z_lo, z_hi)
            r_lo = self.round.pair(y_lo, y_hi, y_lo, out)
            np.greater_equal(y_hi, self.round.limit, out=flag)  # nan: r_hi is nan, so r_lo != r_hi
        else:
            y_lo, y_hi, total = self._affine(a, b, j, sign_bits, z_lo, z_hi)
            r_lo = self.round.pair(y_lo, y_hi, None, out)
            np.greater_equal(total, 0.5 * self.round.limit, out=flag)
        np.not_equal(r_lo, self.round.r_hi[:m], out=bad)
        bad |= flag
        undecided |= bad
        if self.magnitude and sign_bits is not None:  # R(−|y|) = −R(|y|): flip the sign bit
            r_lo.view(np.uint64)[...] ^= sign_bits

    def _products(self, a: int, b: int, j: int, z_lo: F64, z_hi: F64) -> tuple[F64, F64]:
        """p⁻ ≤ s⁻·z⁻ and p⁺ ≥ s⁺·z⁺ up to 2⁻¹⁰⁷⁴ (z⁻ ≥ 0; S = 0 gives exactly 0, even for z = inf)."""
        m = b - a
        aff = self.affine
        p_lo = np.multiply(aff.s_lo[a:b, j], z_lo, out=self.p_lo[:m])
        p_lo *= _DN
        p_hi = np.multiply(aff.s_hi[a:b, j], z_hi, out=self.p_hi[:m])
        p_hi *= _UP
        if self.s_zero:
            zero = np.equal(aff.s_hi[a:b, j], 0.0, out=self.flag[:m])
            np.copyto(p_lo, 0.0, where=zero)
            np.copyto(p_hi, 0.0, where=zero)
        return p_lo, p_hi

    def _magnitudes(self, a: int, b: int, j: int, z_lo: F64, z_hi: F64) -> tuple[F64, F64]:
        """[S·|Z|]'s ends for c = 0: the products moved by 2⁻¹⁰⁶⁰ (subnormal products)."""
        if self.s_one:
            return z_lo, z_hi
        p_lo, p_hi = self._products(a, b, j, z_lo, z_hi)
        p_lo -= TINY
        p_hi += TINY
        return p_lo, p_hi

    def _affine(
        self, a: int, b: int, j: int, sign_bits: U64 | None, z_lo: F64, z_hi: F64
    ) -> tuple[F64, F64, F64]:
        """The ends of c + σ·S·|Z| (unordered for an exact center), and C + p⁺ (the too-big test)."""
        m = b - a
        aff = self.affine
        if self.s_one:
            p_lo, p_hi = self.p_lo[:m], self.p_hi[:m]
            p_lo[...] = z_lo
            p_hi[...] = z_hi
        else:
            p_lo, p_hi = self._products(a, b, j, z_lo, z_hi)
        c_lo, c_hi = aff.c_lo[a:b, j], aff.c_hi[a:b, j]
        c_abs = max(float(c_hi.max()), -float(c_lo.min()), _C_FLOOR)
        total = np.add(p_hi, c_abs, out=self.total[:m])  # ≥ |c| + p⁺; nan stays nan
        omega = np.multiply(total, _K, out=self.omega[:m])
        if sign_bits is not None:
            if self.c_exact:  # the ends' order does not matter: q = σ·p, ω carries σ too
                omega.view(np.uint64)[...] ^= sign_bits
            else:  # swap the ends where σ = −: mask all ones there
                mask = np.right_shift(sign_bits.view(np.int64), _SHIFT63, out=self.mask[:m])
                swap = np.bitwise_xor(p_lo.view(np.uint64), p_hi.view(np.uint64), out=self.swap[:m])
                swap &= mask.view(np.uint64)
                p_lo.view(np.uint64)[...] ^= swap
                p_hi.view(np.uint64)[...] ^= swap
            p_lo.view(np.uint64)[...] ^= sign_bits
            p_hi.view(np.uint64)[...] ^= sign_bits
        p_lo += c_lo
        p_lo -= omega
        p_hi += c_hi
        p_hi += omega
        return p_lo, p_hi, total


class _GridRound:
    """Both ends rounded with one constant from the end of smaller magnitude (module docstring)."""

    def __init__(self, rounder: GridRounder, size: int) -> None:
        self.floor = 2.0**rounder.exponent
        self.limit = 2.0 ** (971 + rounder.precision)
        self.magic = np.uint64(((52 - rounder.precision) << 52) | (1 << 51))
        self.work = np.empty(size)
        self.r_hi = np.empty(size)
        self.other = np.empty(size)

    def pair(self, y_lo: F64, y_hi: F64, smaller: F64 | None, out: F64) -> F64:
        """R(y_lo) into ``out`` and y_hi rounded alike into ``self.r_hi``; ``smaller`` = min(|y_lo|, |y_hi|)
        (computed here when None)."""
        m = y_lo.shape[0]
        mag = self.work[:m]
        if smaller is None:
            np.abs(y_lo, out=mag)
            other = np.abs(y_hi, out=self.other[:m])
            np.minimum(mag, other, out=mag)
            np.maximum(mag, self.floor, out=mag)
        else:
            np.maximum(smaller, self.floor, out=mag)
        bits = mag.view(np.uint64)
        bits &= _EXPONENT_BITS
        bits += self.magic
        np.add(y_lo, mag, out=out)
        out -= mag
        r_hi = np.add(y_hi, mag, out=self.r_hi[:m])
        r_hi -= mag
        return out


class _FloatRound:
    """Any other rounder (a grid of precision above 50): its own ``round_float`` at both ends."""

    def __init__(self, rounder: Rounder, size: int) -> None:
        self.rounder = rounder
        self.limit = float("inf")
        self.work = np.empty(size)
        self.r_hi = np.empty(size)

    def pair(self, y_lo: F64, y_hi: F64, smaller: F64 | None, out: F64) -> F64:
        out[...] = self.rounder.round_float(y_lo)
        self.r_hi[: y_hi.shape[0]] = self.rounder.round_float(y_hi)
        return out


def _rounding(rounder: Rounder, size: int) -> Any:
    if isinstance(rounder, GridRounder) and rounder.precision <= 50:
        return _GridRound(rounder, size)
    return _FloatRound(rounder, size)
