"""The engine of the exact release path: one fused pass over cache-sized chunks, then the arb slow path.

:func:`run` returns R(c + S·Z) for n i.i.d. draws Z of an exact law
(docs/theory/floating-point.md#the-exact-release-path). The **fused fast pass**
(docs/theory/floating-point.md#the-fused-kernel) walks the draws in chunks of :data:`CHUNK` elements, so
that every temporary stays in the processor's cache: for each chunk, the uniforms' first words become
exact float boxes, the law encloses |Z| on the branch of its map each box falls in
(:mod:`smoothdp.exact.laws`), and the sign, the affine step c + S·Z (outward-rounded) and the grid
rounding of both ends follow on the same arrays. An element is decided where both ends round to the same
grid point. The few others are evaluated again in long double where it is the x87 format
(:mod:`smoothdp.exact.arithmetic`), and what remains goes to the **slow path**, python-flint ``arb`` ball
arithmetic at 128 bits more than the bits drawn, with 64 more bits of each uniform per round until
decided.

Which elements the float passes decide changes nothing that is released: a decided element is R(y) for
every completion of its bits, and the slow path draws more bits for an element only when the arb
enclosure over its first 64-bit words straddles a rounding boundary, a property of the element's bits, not
of the float passes. The words are drawn in the same order as ever (one block for the first words, then each
undecided element's refinements in index order), so a given stream gives the same floats
(tests/exact/test_frozen_releases.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import (
    F64,
    U64,
    Affine,
    Candidates,
    ExactLaw,
    GridRounder,
    Rounder,
    Uniform,
    draw_accepted,
    draw_words,
    float_bounds,
    round_ball,
)
from smoothdp.exact.arithmetic import LONG_DOUBLE
from smoothdp.exact.fused import CHUNK, SIGN_BIT, Decider, Workspace

__all__ = ["CHUNK", "LAST_STATS", "Stats", "run"]

_SIGN_BIT = np.asarray(SIGN_BIT)
_SHIFT1 = np.asarray(np.uint64(1))
_SHIFT12 = np.asarray(np.uint64(12))
_SHIFT63 = np.uint64(63)
#: The bit pattern of 1.0: OR-ing a 52-bit integer j into it gives the float 1 + j·2⁻⁵² exactly.
_ONE_BITS = np.asarray(np.uint64(0x3FF0000000000000))
_ONE = np.asarray(1.0)
_ULP52 = np.asarray(2.0**-52)
_FLOAT_BITS = 52
_WORD = 64


@dataclass
class Stats:
    """Counts of the last run (for benchmarks): elements, those binary64 left undecided, and those the
    arb slow path decided (the rest of the undecided ones were decided in long double)."""

    elements: int = 0
    binary64_undecided: int = 0
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

    def chunk(
        self, a: int, b: int, ws: Workspace, uppers: tuple[bool, ...] | None = None
    ) -> tuple[U64 | None, list[F64], list[F64]]:
        """The sign bits and exact float boxes [j·2⁻⁵², (j+1)·2⁻⁵²] of the candidates a..b−1 (in ``ws``;
        an upper end the law does not read, ``uppers[j]`` False, is left unset).

        j = the top 52 bits of the uniform's integer part (63 bits when signed, 64 otherwise), as in
        :func:`smoothdp.exact._core.float_bounds`; 1 + j·2⁻⁵² is built from its bit pattern and 1
        subtracted exactly, which is cheaper than an integer-to-float conversion. The sign is the word's
        top bit, kept in place (a float's sign bit).
        """
        m = b - a
        sign_bits = None
        lows, highs = [], []
        for j in range(self.n_uniforms):
            w = self.words[j * self.n + a : j * self.n + b]
            u_lo, u_hi = ws.lows[j][:m], ws.highs[j][:m]
            bits = u_lo.view(np.uint64)
            if j == 0 and self.signed:
                sign_bits = np.bitwise_and(w, _SIGN_BIT, out=ws.sign_bits[:m])
                np.left_shift(w, _SHIFT1, out=bits)  # the low 63 bits, then their top 52
                np.right_shift(bits, _SHIFT12, out=bits)
            else:
                np.right_shift(w, _SHIFT12, out=bits)
            np.bitwise_or(bits, _ONE_BITS, out=bits)
            np.subtract(u_lo, _ONE, out=u_lo)
            if uppers is None or uppers[j]:
                np.add(u_lo, _ULP52, out=u_hi)
            lows.append(u_lo)
            highs.append(u_hi)
        return sign_bits, lows, highs

    def long_double_boxes(
        self, idx: NDArray[np.intp]
    ) -> tuple[NDArray[np.bool_] | None, list[Any], list[Any]]:
        """Signs and exact long-double boxes [k/2^m, (k+1)/2^m] of the candidates ``idx`` (first words)."""
        neg = None
        lows, highs = [], []
        for j in range(self.n_uniforms):
            w = self.words[j * self.n + idx]
            if j == 0 and self.signed:
                neg = np.greater_equal(w, _SIGN_BIT)
                k, m = w & np.uint64((1 << 63) - 1), 63
            else:
                k, m = w, _WORD
            lo, hi = _long_double_box(k, m)
            lows.append(lo)
            highs.append(hi)
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
    """Candidates of a rejection law after acceptance (:class:`~smoothdp.exact._core.Candidates`)."""

    cand: Candidates
    signed: bool

    def chunk(
        self, a: int, b: int, ws: Workspace, uppers: tuple[bool, ...] | None = None
    ) -> tuple[U64 | None, list[F64], list[F64]]:
        """Sign bits and exact float boxes of the accepted candidates a..b−1 (in ``ws``)."""
        m = b - a
        lows, highs = [], []
        for j, (k, bits) in enumerate(zip(self.cand.ks, self.cand.ms, strict=True)):
            u_lo, u_hi = ws.lows[j][:m], ws.highs[j][:m]
            if bits <= _FLOAT_BITS + 1:  # k < 2⁵³: k·2^−m and (k + 1)·2^−m exactly
                np.multiply(k[a:b], 2.0**-bits, out=u_lo)
                np.add(u_lo, 2.0**-bits, out=u_hi)
            else:
                lo, hi = float_bounds(k[a:b], bits)
                u_lo[...], u_hi[...] = lo, hi
            lows.append(u_lo)
            highs.append(u_hi)
        sign_bits = None
        if self.signed:
            sign_bits = ws.sign_bits[:m]
            sign_bits[...] = self.cand.neg[a:b]
            sign_bits <<= _SHIFT63
        return sign_bits, lows, highs

    def long_double_boxes(
        self, idx: NDArray[np.intp]
    ) -> tuple[NDArray[np.bool_] | None, list[Any], list[Any]]:
        lows, highs = [], []
        for k, m in zip(self.cand.ks, self.cand.ms, strict=True):
            lo, hi = _long_double_box(k[idx], m)
            lows.append(lo)
            highs.append(hi)
        return (self.cand.neg[idx] if self.signed else None), lows, highs

    def refined(self, idx: NDArray[np.intp]) -> NDArray[np.bool_]:
        """Which of the candidates ``idx`` had a uniform refined while their acceptance was decided."""
        return np.isin(idx, np.fromiter(self.cand.refined, dtype=np.intp, count=len(self.cand.refined)))

    def uniforms(self, i: int) -> tuple[bool, list[Uniform]]:
        us = self.cand.refined.get(i) or [
            Uniform(int(k[i]), m) for k, m in zip(self.cand.ks, self.cand.ms, strict=True)
        ]
        return bool(self.cand.neg[i]), us


def _candidates(law: ExactLaw, n: int, rng: Any) -> _Words | _Accepted:
    if law.rejection or getattr(law, "draw_accepted", None) is not None:
        return _Accepted(draw_accepted(law, n, rng), law.signed)
    return _Words(draw_words(rng, law.n_uniforms * n), n, law.n_uniforms, law.signed)


def run(law: ExactLaw, affine: Affine, n: int, rounder: Rounder, rng: Any) -> F64:
    """R(c + S·Z) for n i.i.d. draws Z of ``law``: an (n, dimension) float array, exactly.

    A zero is released as +0.0 whatever the sign of the enclosure that decided it (R(y) = 0 is one
    number; its sign bit must not depend on c).
    """
    source = _candidates(law, n, rng)
    out = np.empty((n, law.dimension))
    undecided = np.zeros(n, dtype=np.bool_)
    decider = Decider(affine, rounder, min(n, CHUNK))
    _fast_pass(law, source, decider, n, out, undecided)
    slow = np.flatnonzero(undecided)
    LAST_STATS.binary64_undecided = int(slow.size)
    long_double = LONG_DOUBLE is not None and getattr(law, "long_double", False)
    if slow.size and long_double and isinstance(rounder, GridRounder):
        slow = slow[~_long_double_pass(law, source, decider, rounder, slow, out)]
    for i in slow:  # in index order: each draws its refinements from the stream in turn
        neg, us = source.uniforms(int(i))
        out[i] = _decide_slow(law, affine, int(i), neg, us, rounder, rng) + 0.0  # −0.0 → +0.0
    LAST_STATS.elements = n
    LAST_STATS.slow = int(slow.size)
    return out


def _fast_pass(
    law: ExactLaw,
    source: _Words | _Accepted,
    decider: Decider,
    n: int,
    out: F64,
    undecided: NDArray[np.bool_],
) -> None:
    """Decide what the float enclosures can, chunk by chunk; mark the rest in ``undecided``.

    ``law.fast`` returns, per coordinate, an enclosure of |Z| (z⁻ ≥ 0) and, for a law whose coordinates
    carry their own signs (planar noise), their sign bits; a signed law's sign is the source's.
    """
    size = min(n, CHUNK)
    law_uppers = getattr(law, "uppers", None)
    ws = Workspace(law.n_uniforms, size)
    with np.errstate(all="ignore"):  # log 0 = −inf, overflow to inf, 0·inf = nan: all undecided
        for a in range(0, n, CHUNK):
            b = min(n, a + CHUNK)
            sign_bits, lows, highs = source.chunk(a, b, ws, law_uppers)
            for j, enclosure in enumerate(law.fast(lows, highs, ws.scratch)):
                signs: U64 | None = enclosure[2] if len(enclosure) == 3 else sign_bits
                decider.decide(a, b, j, signs, enclosure[0], enclosure[1], out[a:b, j], undecided[a:b])


def _long_double_box(k: U64, m: int) -> tuple[Any, Any]:
    """[k/2^m, (k+1)/2^m] in long double, exactly (k < 2^64 and k + 1 ≤ 2^64 fit its 64-bit significand)."""
    low = k.astype(np.longdouble)
    return np.ldexp(low, -m), np.ldexp(low + 1, -m)


def _long_double_pass(
    law: ExactLaw,
    source: _Words | _Accepted,
    decider: Decider,
    rounder: GridRounder,
    idx: NDArray[np.intp],
    out: F64,
) -> NDArray[np.bool_]:
    """Decide the elements ``idx`` from their whole first words in long double; return which it decided.

    The same enclosures as the binary64 pass (the law's ``fast``, then c + S·Z outward) in the x87
    format: one rounding is within 2⁻⁶⁴, an elementary function within 2⁻⁵⁸, and the uniforms' boxes are
    their first 63 or 64 bits exactly, so an enclosure is about 2⁻⁵⁶ wide where binary64's is about 2⁻⁴⁵.
    An element is decided when both ends round to the same grid point, which is then R(y) exactly (and
    a float: grid points have at most 52 significant bits; beyond 2¹⁰²⁴ it is ±inf, as the grid says).
    With c = 0 everywhere the magnitudes are rounded and the sign applied (R(−y) = −R(y)).
    """
    affine = decider.affine
    decided = np.ones(idx.size, dtype=np.bool_)
    if isinstance(source, _Accepted):
        decided &= ~source.refined(idx)  # candidates with refined uniforms go to arb as they are
    with np.errstate(all="ignore"):
        neg, lows, highs = source.long_double_boxes(idx)
        # Widening factors for one or two roundings (u = 2⁻⁶⁴): fl(fl(a·b)·(1 − 2u)) ≤ a·b and
        # fl(fl(a·b)·(1 + 4u)) ≥ a·b; y ± 4u·|y| after a rounded product or sum covers it too.
        two_u, four_u = np.longdouble(2.0**-63), np.longdouble(2.0**-62)
        results = []
        for j, enclosure in enumerate(law.fast(lows, highs)):
            z_lo, z_hi = enclosure[0], enclosure[1]
            neg_j = enclosure[2] != 0 if len(enclosure) == 3 else neg
            s_lo = affine.s_lo[idx, j].astype(np.longdouble)
            s_hi = affine.s_hi[idx, j].astype(np.longdouble)
            if decider.magnitude:  # |y| = S·|Z| ≥ 0; the sign afterwards
                if not decider.s_one:
                    z_lo = np.where(s_hi == 0, 0, s_lo * z_lo * (1 - two_u))
                    z_hi = np.where(s_hi == 0, 0, s_hi * z_hi * (1 + four_u))
                r_lo, r_hi = _grid_round_long(z_lo, rounder), _grid_round_long(z_hi, rounder)
                decided &= r_lo == r_hi  # nan: undecided
                results.append(r_lo if neg_j is None else np.where(neg_j, -r_lo, r_lo))
                continue
            if neg_j is not None:
                z_lo, z_hi = np.where(neg_j, -z_hi, z_lo), np.where(neg_j, -z_lo, z_hi)
            c_lo = affine.c_lo[idx, j].astype(np.longdouble)
            c_hi = affine.c_hi[idx, j].astype(np.longdouble)
            ends = []
            for c, z, near, far, sign in ((c_lo, z_lo, s_lo, s_hi, -1), (c_hi, z_hi, s_hi, s_lo, 1)):
                y = np.where(z >= 0, near, far) * z  # S·z at its lower (upper) end over S
                y += sign * (np.abs(y) * four_u)
                y += c
                y += sign * (np.abs(y) * four_u)
                y = np.where(s_hi == 0, c, y)  # S = 0: exactly c (0·inf)
                ends.append(_grid_round_long(y, rounder))
            decided &= ends[0] == ends[1]  # nan: undecided
            results.append(ends[0])
    for j, r in enumerate(results):
        out[idx[decided], j] = r[decided].astype(np.float64) + 0.0  # −0.0 → +0.0
    return decided


def _grid_round_long(y: Any, rounder: GridRounder) -> Any:
    """R(y) for long-double y: the grid spacing 2^(max(e−1, E) − p), ties to even (``np.rint``)."""
    _, e = np.frexp(y)
    shift = np.maximum(e - 1, rounder.exponent) - rounder.precision
    return np.ldexp(np.rint(np.ldexp(y, -shift)), shift)


def _decide_slow(
    law: ExactLaw, affine: Affine, i: int, neg: bool, us: list[Uniform], rounder: Rounder, rng: Any
) -> F64:
    """Refine element i's uniforms and the arb precision until every coordinate's rounding is decided."""
    prec = max(u.m for u in us) + 128
    res = np.empty(law.dimension)
    cell = _GridCell(rounder) if isinstance(rounder, GridRounder) else None
    ctx = flint.ctx
    saved = ctx.prec
    try:
        while True:
            if prec > 1 << 20:
                raise RuntimeError(
                    "exact release: no decision at 2^20 bits of precision; an Enclosure.refine that does "
                    "not converge to the statistic's value is a bug in the caller"
                )
            ctx.prec = prec  # (cheaper than the workprec context manager; restored below)
            if _decide_at_precision(law, affine, i, neg, us, rounder, cell, res):
                return res
            us = [u.refine(rng) for u in us]
            prec += _WORD
    finally:
        ctx.prec = saved


def _decide_at_precision(
    law: ExactLaw,
    affine: Affine,
    i: int,
    neg: bool,
    us: list[Uniform],
    rounder: Rounder,
    cell: _GridCell | None,
    res: F64,
) -> bool:
    """Every coordinate of element i rounded from arb balls at the current precision, if decided."""
    zs = law.ball([u.ball() for u in us])
    s = affine.s_arb(i)
    for j, z in enumerate(zs):
        zz = -z if neg else z
        y = affine.c_arb(i, j) + (s * zz if not s.is_zero() else flint.arb(0))
        r = cell(y) if cell is not None else None
        if r is None:
            r = round_ball(y, rounder)
        if r is None:
            return False
        res[j] = r
    return True


class _GridCell:
    """A quick exact test that an arb ball lies inside one rounding cell of the grid (E, p).

    r = R(float(mid)) is a grid point; every real within w = 2^(max(e−2, E) − p − 1) of r rounds to r,
    e the binade of |r| (2^(e−1) ≤ |r| < 2^e; w is half the smaller of the two spacings next to r, and the
    exact fixed-point half spacing 2^(E−p−1) below 2^E). If the ball is strictly inside (r − w, r + w),
    R(ball) = {r}: the same answer as rounding both ends exactly, found with two ball comparisons. When the
    test fails (the ball near or across a cell's edge, r not finite) the exact rounding of both ends
    decides (:func:`~smoothdp.exact._core.round_ball`), so the result is always R of the ends.
    """

    def __init__(self, rounder: GridRounder) -> None:
        self.exponent = rounder.exponent
        self.precision = rounder.precision

    def __call__(self, y: Any) -> float | None:
        if not y.is_finite():
            return None
        m = float(y.mid())
        if not math.isfinite(m):
            return None
        e = math.frexp(m)[1]
        shift = max(e - 1, self.exponent) - self.precision
        r = math.ldexp(round(math.ldexp(m, -shift)), shift)
        if not math.isfinite(r):
            return None
        half = flint.arb(2) ** (max(math.frexp(r)[1] - 2, self.exponent) - self.precision - 1)
        center = flint.arb(r)
        if y > center - half and y < center + half:
            return r
        return None
