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

#: Elements per chunk: each float64 buffer is 128 KiB, made once per release (so no allocation reaches the
#: C library's mmap threshold chunk after chunk); the working set of a chunk stays in the L2 cache.
CHUNK = 1 << 14
#: The sign bit of a float64's bit pattern.
SIGN_BIT = np.uint64(1 << 63)
# Constants as 0-d arrays: a numpy call costs about twice as much with a Python float operand.
_DN = np.asarray(1.0 - 2.0**-52)
_UP = np.asarray(1.0 + 2.0**-51)
_K = np.asarray(3.0 * 2.0**-53)
_TINY = np.asarray(TINY)
_ZERO = np.asarray(0.0)
_EXPONENT_BITS = np.asarray(np.uint64(0x7FF0000000000000))
_SHIFT63 = np.asarray(np.int64(63))


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
        c_lo, c_hi, s_lo = (_distinct(x) for x in (affine.c_lo, affine.c_hi, affine.s_lo))
        # (A first element decides most of these without a scan.)
        self.magnitude = not (c_lo.flat[0] or c_hi.flat[0] or np.any(c_lo) or np.any(c_hi))
        self.s_zero = not bool(np.all(s_lo))
        same_s = affine.s_lo is affine.s_hi
        self.s_one = same_s and not self.s_zero and s_lo.flat[0] == 1.0 and bool(np.all(s_lo == 1.0))
        self.round = _rounding(rounder, size)
        self.p_lo, self.p_hi, self.total, self.omega = (np.empty(size) for _ in range(4))
        self.mask = np.empty(size, dtype=np.uint64)
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
        rnd = self.round
        if self.magnitude:
            y_lo, y_hi = self._magnitudes(a, b, j, z_lo, z_hi)
            np.greater_equal(y_hi, rnd.limit, out=flag)  # nan: r_hi is nan, so r_lo != r_hi
            r_lo = rnd.pair(y_lo, y_hi, y_lo, out, sign_bits)
        else:
            y_lo, y_hi, total = self._affine(a, b, j, sign_bits, z_lo, z_hi)
            r_lo = rnd.pair(y_lo, y_hi, None, out)
            np.greater_equal(total, rnd.half_limit, out=flag)
        np.not_equal(r_lo, rnd.r_hi[:m], out=bad)
        np.logical_or(bad, flag, out=bad)
        np.logical_or(undecided, bad, out=undecided)

    def _products(self, a: int, b: int, j: int, z_lo: F64, z_hi: F64) -> tuple[F64, F64]:
        """p⁻ ≤ s⁻·z⁻ and p⁺ ≥ s⁺·z⁺ up to 2⁻¹⁰⁷⁴ (z⁻ ≥ 0; S = 0 gives exactly 0, even for z = inf)."""
        m = b - a
        aff = self.affine
        p_lo, p_hi = self.p_lo[:m], self.p_hi[:m]
        if self.s_one:
            np.copyto(p_lo, z_lo)
            np.copyto(p_hi, z_hi)
            return p_lo, p_hi
        np.multiply(aff.s_lo[a:b, j], z_lo, out=p_lo)
        np.multiply(p_lo, _DN, out=p_lo)
        np.multiply(aff.s_hi[a:b, j], z_hi, out=p_hi)
        np.multiply(p_hi, _UP, out=p_hi)
        if self.s_zero:
            zero = np.equal(aff.s_hi[a:b, j], _ZERO, out=self.flag[:m])
            np.copyto(p_lo, _ZERO, where=zero)
            np.copyto(p_hi, _ZERO, where=zero)
        return p_lo, p_hi

    def _magnitudes(self, a: int, b: int, j: int, z_lo: F64, z_hi: F64) -> tuple[F64, F64]:
        """[S·|Z|]'s ends for c = 0: the products moved by 2⁻¹⁰⁶⁰ (subnormal products)."""
        if self.s_one:
            return z_lo, z_hi
        p_lo, p_hi = self._products(a, b, j, z_lo, z_hi)
        np.subtract(p_lo, _TINY, out=p_lo)
        np.add(p_hi, _TINY, out=p_hi)
        return p_lo, p_hi

    def _affine(
        self, a: int, b: int, j: int, sign_bits: U64 | None, z_lo: F64, z_hi: F64
    ) -> tuple[F64, F64, F64]:
        """The ends of c + σ·S·|Z| (unordered for an exact center), and C + p⁺ ≥ |y| (the too-big test).

        C = |c| (exact center) or max(c⁺, −c⁻) ≥ |c|, per element; ω = (C + p⁺)·3u + 2⁻¹⁰⁶⁰.
        """
        m = b - a
        aff = self.affine
        p_lo, p_hi = self._products(a, b, j, z_lo, z_hi)
        c_lo, c_hi = aff.c_lo[a:b, j], aff.c_hi[a:b, j]
        total, omega = self.total[:m], self.omega[:m]
        if self.c_exact:
            np.abs(c_lo, out=total)
        else:
            np.negative(c_lo, out=total)
            np.maximum(total, c_hi, out=total)
        np.add(total, p_hi, out=total)  # nan stays nan
        np.multiply(total, _K, out=omega)
        np.add(omega, _TINY, out=omega)
        lo_bits, hi_bits = p_lo.view(np.uint64), p_hi.view(np.uint64)
        if sign_bits is not None:
            if self.c_exact:  # the ends' order does not matter: q = σ·p, and ω carries σ too
                omega_bits = omega.view(np.uint64)
                np.bitwise_xor(omega_bits, sign_bits, out=omega_bits)
            else:  # swap the ends where σ = − (an all-ones mask there), exactly
                mask = self.mask[:m]
                np.right_shift(sign_bits.view(np.int64), _SHIFT63, out=mask.view(np.int64))
                swap = np.bitwise_xor(lo_bits, hi_bits, out=self.round.other[:m].view(np.uint64))
                np.bitwise_and(swap, mask, out=swap)
                np.bitwise_xor(lo_bits, swap, out=lo_bits)
                np.bitwise_xor(hi_bits, swap, out=hi_bits)
            np.bitwise_xor(lo_bits, sign_bits, out=lo_bits)
            np.bitwise_xor(hi_bits, sign_bits, out=hi_bits)
        np.add(p_lo, c_lo, out=p_lo)
        np.subtract(p_lo, omega, out=p_lo)
        np.add(p_hi, c_hi, out=p_hi)
        np.add(p_hi, omega, out=p_hi)
        return p_lo, p_hi, total


class _GridRound:
    """Both ends rounded with one constant from the end of smaller magnitude (module docstring)."""

    def __init__(self, rounder: GridRounder, size: int) -> None:
        self.floor_bits = np.asarray(np.float64(2.0**rounder.exponent).view(np.uint64))
        self.limit = np.asarray(2.0 ** (971 + rounder.precision))
        self.half_limit = np.asarray(2.0 ** (970 + rounder.precision))
        self.magic = np.asarray(np.uint64(((52 - rounder.precision) << 52) | (1 << 51)))
        self.abs_bits = np.asarray(np.uint64((1 << 63) - 1))
        self.work = np.empty(size)
        self.r_hi = np.empty(size)
        self.other = np.empty(size)

    def pair(self, y_lo: F64, y_hi: F64, smaller: F64 | None, out: F64, sign_bits: U64 | None = None) -> F64:
        """R(y_lo) into ``out`` and y_hi rounded alike into ``self.r_hi``; ``smaller`` = min(|y_lo|, |y_hi|)
        (computed here when None). Magnitudes are compared as bit patterns (monotone for floats ≥ 0).
        With ``sign_bits`` the ends are magnitudes whose signs are applied after M is made and before
        rounding (R(−y) = −R(y); a zero comes out +0.0 either way)."""
        m = y_lo.shape[0]
        mag = self.work[:m]
        bits = mag.view(np.uint64)
        if smaller is None:
            other = self.other[:m].view(np.uint64)
            np.bitwise_and(y_lo.view(np.uint64), self.abs_bits, out=bits)
            np.bitwise_and(y_hi.view(np.uint64), self.abs_bits, out=other)
            np.minimum(bits, other, out=bits)
            np.maximum(bits, self.floor_bits, out=bits)
        else:  # ≥ −2⁻¹⁰⁶⁰: a negative one only below the floor
            np.maximum(smaller, self.floor_bits.view(np.float64), out=mag)
        np.bitwise_and(bits, _EXPONENT_BITS, out=bits)
        np.add(bits, self.magic, out=bits)
        if sign_bits is not None:
            for y in (y_lo, y_hi):
                np.bitwise_xor(y.view(np.uint64), sign_bits, out=y.view(np.uint64))
        np.add(y_lo, mag, out=out)
        np.subtract(out, mag, out=out)
        r_hi = self.r_hi[:m]
        np.add(y_hi, mag, out=r_hi)
        np.subtract(r_hi, mag, out=r_hi)
        return out


class _FloatRound:
    """Any other rounder (a grid of precision above 50): its own ``round_float`` at both ends."""

    def __init__(self, rounder: Rounder, size: int) -> None:
        self.rounder = rounder
        self.limit = np.asarray(np.inf)
        self.half_limit = np.asarray(np.inf)
        self.work = np.empty(size)
        self.r_hi = np.empty(size)
        self.other = np.empty(size)

    def pair(self, y_lo: F64, y_hi: F64, smaller: F64 | None, out: F64, sign_bits: U64 | None = None) -> F64:
        if sign_bits is not None:
            for y in (y_lo, y_hi):
                np.bitwise_xor(y.view(np.uint64), sign_bits, out=y.view(np.uint64))
        out[...] = self.rounder.round_float(y_lo)
        out += 0.0  # −0.0 → +0.0
        self.r_hi[: y_hi.shape[0]] = self.rounder.round_float(y_hi)
        return out


def _distinct(x: np.ndarray) -> np.ndarray:
    """The view of ``x`` without its broadcast axes (stride 0), so a scan reads each element once."""
    return x[tuple(slice(0, 1) if st == 0 else slice(None) for st in x.strides)]


def _rounding(rounder: Rounder, size: int) -> Any:
    if isinstance(rounder, GridRounder) and rounder.precision <= 50:
        return _GridRound(rounder, size)
    return _FloatRound(rounder, size)
