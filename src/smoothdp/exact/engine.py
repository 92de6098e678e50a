"""The engine of the exact release path: one fused pass over cache-sized chunks, then the arb slow path.

:func:`run` returns R(c + S·Z) for n i.i.d. draws Z of an exact law (docs/theory/floating-point.md#the-
exact-release-path). The **fused fast pass** (docs/theory/floating-point.md#the-fused-kernel) walks the
draws in chunks of :data:`CHUNK` elements, so that every temporary stays in the processor's cache: for each
chunk, the uniforms' first words become exact float boxes, the law encloses |Z| on the branch of its map
each box falls in (:mod:`smoothdp.exact.laws`), and the sign, the affine step c + S·Z (outward-rounded)
and the grid rounding of both ends follow on the same arrays. An element is decided where both ends round
to the same grid point; the others go to the **slow path**, python-flint ``arb`` ball arithmetic at 128
bits more than the bits drawn, with 64 more bits of each uniform per round until decided.

Which elements the fast pass decides changes nothing that is released: a decided element is R(y) for
every completion of its bits, and the slow path draws more bits for an element only when the arb
enclosure over its first 64-bit words straddles a rounding boundary, a property of the element's bits, not
of the fast pass. The words are drawn in the same order as ever (one block for the first words, then each
undecided element's refinements in index order), so a given stream gives the same floats
(tests/exact/test_frozen_releases.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import _flint as flint
from smoothdp.exact._core import (
    BASIC_ERR,
    F64,
    TINY,
    U64,
    Affine,
    ExactLaw,
    Rounder,
    Uniform,
    _Candidates,
    _draw_accepted,
    draw_words,
    float_bounds,
    round_ball,
)

__all__ = ["CHUNK", "LAST_STATS", "Stats", "run"]

#: Elements per chunk of the fused pass: about 15 float64 temporaries of 128 KiB stay in the L2 cache.
CHUNK = 1 << 14
_TWO_B = 2.0 * BASIC_ERR
_SIGN_BIT = np.uint64(1 << 63)
_MASK52 = np.uint64((1 << 52) - 1)
#: The bit pattern of 1.0: OR-ing a 52-bit integer j into it gives the float 1 + j·2⁻⁵² exactly.
_ONE_BITS = np.uint64(0x3FF0000000000000)
_ULP52 = 2.0**-52
_FLOAT_BITS = 52
_WORD = 64


@dataclass
class Stats:
    """Counts of the last run (for benchmarks): elements, and those the slow path decided."""

    elements: int = 0
    slow: int = 0


LAST_STATS = Stats()


@dataclass
class _Words:
    """The first words of n candidates of a law without rejection: uniform j of candidate i is word
    ``j·n + i``; for a signed law the top bit of uniform 0's word is the sign and it keeps 63 bits."""

    words: U64
    n: int
    n_uniforms: int
    signed: bool

    def chunk(self, a: int, b: int) -> tuple[NDArray[np.bool_] | None, list[F64], list[F64]]:
        """The signs and exact float boxes [j·2⁻⁵², (j+1)·2⁻⁵²] of the candidates a..b−1.

        j = the top 52 bits of the uniform's integer part (63 bits when signed, 64 otherwise), as in
        :func:`smoothdp.exact._core.float_bounds`; 1 + j·2⁻⁵² is built from its bit pattern and 1
        subtracted exactly, which is cheaper than an integer-to-float conversion.
        """
        neg = None
        lows: list[F64] = []
        highs: list[F64] = []
        for j in range(self.n_uniforms):
            w = self.words[j * self.n + a : j * self.n + b]
            if j == 0 and self.signed:
                neg = np.greater_equal(w, _SIGN_BIT)
                bits = np.right_shift(w, np.uint64(63 - _FLOAT_BITS))
                bits &= _MASK52
            else:
                bits = np.right_shift(w, np.uint64(64 - _FLOAT_BITS))
            bits |= _ONE_BITS
            u_lo = bits.view(np.float64)
            u_lo -= 1.0
            lows.append(u_lo)
            highs.append(u_lo + _ULP52)
        return neg, lows, highs

    def uniforms(self, i: int) -> tuple[bool, list[Uniform]]:
        """Candidate i's sign and uniforms (first words, exact integers)."""
        out = []
        neg = False
        for j in range(self.n_uniforms):
            w = int(self.words[j * self.n + i])
            if j == 0 and self.signed:
                neg = bool(w >> 63)
                out.append(Uniform(w & ((1 << 63) - 1), 63))
            else:
                out.append(Uniform(w, _WORD))
        return neg, out


@dataclass
class _Accepted:
    """Candidates of a rejection law after acceptance (:class:`~smoothdp.exact._core._Candidates`)."""

    cand: _Candidates
    signed: bool

    def chunk(self, a: int, b: int) -> tuple[NDArray[np.bool_] | None, list[F64], list[F64]]:
        bounds = [float_bounds(k[a:b], m) for k, m in zip(self.cand.ks, self.cand.ms, strict=True)]
        neg = self.cand.neg[a:b] if self.signed else None
        return neg, [lo for lo, _ in bounds], [hi for _, hi in bounds]

    def uniforms(self, i: int) -> tuple[bool, list[Uniform]]:
        us = self.cand.refined.get(i) or [
            Uniform(int(k[i]), m) for k, m in zip(self.cand.ks, self.cand.ms, strict=True)
        ]
        return bool(self.cand.neg[i]), us


def _candidates(law: ExactLaw, n: int, rng: Any) -> _Words | _Accepted:
    if law.rejection or getattr(law, "draw_accepted", None) is not None:
        return _Accepted(_draw_accepted(law, n, rng), law.signed)
    return _Words(draw_words(rng, law.n_uniforms * n), n, law.n_uniforms, law.signed)


def run(law: ExactLaw, affine: Affine, n: int, rounder: Rounder, rng: Any) -> F64:
    """R(c + S·Z) for n i.i.d. draws Z of ``law``: an (n, dimension) float array, exactly.

    A zero is released as +0.0 whatever the sign of the enclosure that decided it (R(y) = 0 is one
    number; its sign bit must not depend on c).
    """
    source = _candidates(law, n, rng)
    out = np.empty((n, law.dimension))
    undecided = np.zeros(n, dtype=np.bool_)
    _fast_pass(law, source, affine, rounder, n, out, undecided)
    slow = np.flatnonzero(undecided)
    for i in slow:  # in index order: each draws its refinements from the stream in turn
        neg, us = source.uniforms(int(i))
        out[i] = _decide_slow(law, affine, int(i), neg, us, rounder, rng)
    out += 0.0  # −0.0 → +0.0
    LAST_STATS.elements = n
    LAST_STATS.slow = int(slow.size)
    return out


def _fast_pass(
    law: ExactLaw,
    source: _Words | _Accepted,
    affine: Affine,
    rounder: Rounder,
    n: int,
    out: F64,
    undecided: NDArray[np.bool_],
) -> None:
    """Decide what the float enclosures can, chunk by chunk; mark the rest in ``undecided``."""
    round_float: Callable[[F64], F64] = rounder.round_float
    same_s = affine.s_lo is affine.s_hi
    with np.errstate(all="ignore"):  # log 0 = −inf, overflow to inf, 0·inf = nan: all undecided
        for a in range(0, n, CHUNK):
            b = min(n, a + CHUNK)
            neg, lows, highs = source.chunk(a, b)
            encl = law.fast(lows, highs)
            for j, (z_lo, z_hi) in enumerate(encl):
                if neg is not None:  # Z = ±|Z|: the enclosure flips with the sign
                    z_lo, z_hi = np.where(neg, -z_hi, z_lo), np.where(neg, -z_lo, z_hi)
                c_lo, c_hi = affine.c_lo[a:b, j], affine.c_hi[a:b, j]
                s_lo, s_hi = affine.s_lo[a:b, j], affine.s_hi[a:b, j]
                y_lo = _end(c_lo, s_lo, s_hi, z_lo, same_s, lower=True)
                y_hi = _end(c_hi, s_lo, s_hi, z_hi, same_s, lower=False)
                r_lo = round_float(y_lo)
                r_hi = round_float(y_hi)
                out[a:b, j] = r_lo
                np.not_equal(r_lo, r_hi, out=y_lo)  # nan (no enclosure) is undecided too
                undecided[a:b] |= y_lo.astype(np.bool_)


def _end(c: F64, s_lo: F64, s_hi: F64, z: F64, same_s: bool, *, lower: bool) -> F64:
    """A certified lower (upper) end of c + S·z over S ∈ [s_lo, s_hi] (S ≥ 0), z a lower (upper) end.

    min over S of S·z is s_lo·z for z ≥ 0 and s_hi·z for z < 0 (max: the other way round). Each of the two
    roundings (S·z, then c + ·) is covered by a relative 2·2⁻⁵³ and an absolute 2⁻¹⁰⁶⁰ (subnormal
    results); S = 0 gives c exactly, whatever z is (0·inf).
    """
    if same_s:
        p = s_lo * z
    elif lower:
        p = np.where(z >= 0, s_lo, s_hi) * z
    else:
        p = np.where(z >= 0, s_hi, s_lo) * z
    w = np.abs(p)
    w *= _TWO_B
    w += TINY
    if lower:
        p -= w
    else:
        p += w
    y = np.add(c, p, out=p)
    np.abs(y, out=w)
    w *= _TWO_B
    w += TINY
    if lower:
        y -= w
    else:
        y += w
    zero = s_hi == 0
    if zero.any():
        y = np.where(zero, c, y)
    return y


def _decide_slow(
    law: ExactLaw, affine: Affine, i: int, neg: bool, us: list[Uniform], rounder: Rounder, rng: Any
) -> F64:
    """Refine element i's uniforms and the arb precision until every coordinate's rounding is decided."""
    prec = max(u.m for u in us) + 128
    res = np.empty(law.dimension)
    while True:
        if prec > 1 << 20:
            raise RuntimeError(
                "exact release: no decision at 2^20 bits of precision; an Enclosure.refine that does "
                "not converge to the statistic's value is a bug in the caller"
            )
        with flint.ctx.workprec(prec):
            zs = law.ball([u.ball() for u in us])
            s = affine.s_arb(i)
            done = True
            for j, z in enumerate(zs):
                zz = -z if neg else z
                y = affine.c_arb(i, j) + (s * zz if not s.is_zero() else flint.arb(0))
                r = round_ball(y, rounder)
                if r is None:
                    done = False
                    break
                res[j] = r
        if done:
            return res
        us = [u.refine(rng) for u in us]
        prec += _WORD
