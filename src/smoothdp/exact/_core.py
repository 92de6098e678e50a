"""The engine of the exact release path: lazy uniform bits, certified float enclosures, exact rounding.

Model (``docs/theory/floating-point.md#the-exact-release-path``). A noise draw is Z = g(U₁, …, U_k) for
independent uniforms U_j on [0, 1) and a fixed measurable map g (a monotone inverse CDF, a polar form,
or a rejection step). Each U_j is known only as a dyadic interval [k/2^m, (k+1)/2^m): its first m bits.
The release is y = c + S·Z rounded by a public monotone map R (an :class:`~smoothdp.exact.OutputGrid`).
If a certified enclosure [y⁻, y⁺] of y over the whole box of the bits
drawn so far has R(y⁻) = R(y⁺), then R(y) is that value for every completion of the bits; otherwise
more bits are drawn (64 at a time, only for the undecided element) and the enclosure recomputed at a
higher precision. The output is therefore R(c + S·g(U)) for the infinite bit strings U: a fixed function
of the ideal draw.

Two evaluators produce the enclosures:

* the **fast path**: numpy/scipy in binary64 on the first 64-bit word of each uniform (and again in
  long double for the few elements binary64 leaves undecided, :mod:`smoothdp.exact.arithmetic`), every
  operation followed by, or folded into, an outward widening by a documented relative error bound
  (:data:`ELEM_ERR` for the elementary functions, :data:`BASIC_ERR` for + − × ÷, which IEEE 754 rounds
  correctly);
* the **slow path**: python-flint ``arb`` ball arithmetic (rigorous) on exact dyadic balls, used only for
  the elements the fast path leaves undecided, with more bits and precision until decided.

This module holds the pieces (uniforms, rounders, the law protocol, candidates); the loop over the
elements is :func:`smoothdp.exact.engine.run`. Nothing caps the work: an element is refined until decided
(with probability 1 it is, since the ideal y hits a rounding boundary with probability 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import lazy_flint as flint

if TYPE_CHECKING:
    from flint import arb

__all__ = [
    "BASIC_ERR",
    "ELEM_ERR",
    "Candidates",
    "ExactLaw",
    "GridRounder",
    "Rounder",
    "Uniform",
    "accept_slow",
    "draw_accepted",
    "draw_words",
    "hi",
    "lo",
]

F64 = NDArray[np.float64]
U64 = NDArray[np.uint64]

#: Assumed bound on the relative error of one numpy elementary function call (log, log1p, exp, expm1,
#: sin, cos, sqrt) on the arguments the fast path uses: 2⁻⁴⁷ = 64 ulps. glibc and numpy's SIMD loops are
#: documented at ≤ 4 ulps; tests/exact measure the worst error against arb (docs/theory/floating-point.md).
ELEM_ERR = 2.0**-47
#: Assumed bound for scipy.special.ndtri (Cephes; documented ~1e-16): 2⁻⁴⁴, also measured in tests/exact.
NDTRI_ERR = 2.0**-44
#: One correctly rounded + − × ÷: 2⁻⁵³.
BASIC_ERR = 2.0**-53
#: Absolute slack for results that may be subnormal (only the final c + S·Z step can underflow).
TINY = 2.0**-1060
#: Bits of a uniform the fast path turns into floats: U ∈ [j·2⁻⁵², (j+1)·2⁻⁵²], both ends exact.
FLOAT_BITS = 52
_WORD = 64
_MASK64 = (1 << 64) - 1


def lo(x: F64, err: float) -> F64:
    """A float ≤ x·(1 ∓ err) for every real within relative error ``err`` of the float x.

    x − 2|x|·err rounds to nearest with error ≤ |x|·2⁻⁵³, so the result stays below x(1 − err) for
    err ≥ 2⁻⁵³ (the factor 2 covers the rounding of this subtraction itself).
    """
    return x - np.abs(x) * (2.0 * err)


def hi(x: F64, err: float) -> F64:
    """A float ≥ every real within relative error ``err`` of the float x (see :func:`lo`)."""
    return x + np.abs(x) * (2.0 * err)


def draw_words(rng: Any, n: int) -> U64:
    """n raw 64-bit words of the generator's stream (``random_raw`` when available, else ``integers``)."""
    bg = getattr(rng, "bit_generator", None)
    raw = getattr(bg, "random_raw", None)
    if raw is not None:
        return np.asarray(raw(n), dtype=np.uint64).reshape(n)
    return np.asarray(rng.integers(0, 2**64, size=n, dtype=np.uint64), dtype=np.uint64).reshape(n)


def float_bounds(k: U64, m: int) -> tuple[F64, F64]:
    """Exact float bounds [j·2⁻⁵², (j+1)·2⁻⁵²] ⊇ [k/2^m, (k+1)/2^m] for m-bit integers k (m ≥ 52);
    for m ≤ 53 the bounds are k/2^m and (k+1)/2^m themselves (k < 2^53 is an exact float)."""
    if m <= FLOAT_BITS + 1:
        u_lo = k.astype(np.float64) * 2.0**-m
        return u_lo, u_lo + 2.0**-m
    j = (k >> np.uint64(m - FLOAT_BITS)).astype(np.float64)
    u_lo = j * 2.0**-FLOAT_BITS
    return u_lo, u_lo + 2.0**-FLOAT_BITS


@dataclass
class Uniform:
    """A uniform on [0, 1) known as its first ``m`` bits ``k``: U ∈ [k/2^m, (k+1)/2^m]."""

    k: int
    m: int

    def refine(self, rng: Any) -> Uniform:
        """The same uniform with one more 64-bit word of its binary expansion."""
        w = int(draw_words(rng, 1)[0])
        return Uniform((self.k << _WORD) | w, self.m + _WORD)

    def ball(self) -> arb:
        """The exact arb ball [k/2^m, (k+1)/2^m] (needs ctx.prec ≥ m + 2): midpoint (2k+1)·2^−(m+1) and
        radius 2^−(m+1), both exact (built by exact operations, cheaper than from rationals)."""
        scale, radius = _dyadic_unit(self.m)
        return flint.arb(2 * self.k + 1) * scale + radius


_DYADIC_UNITS: dict[int, tuple[arb, arb]] = {}


def _dyadic_unit(m: int) -> tuple[arb, arb]:
    """(2^−(m+1), the ball 0 ± 2^−(m+1)): exact arbs, made once per m."""
    unit = _DYADIC_UNITS.get(m)
    if unit is None:
        scale = flint.arb(2) ** (-(m + 1))  # a power of two: exact at any precision
        unit = _DYADIC_UNITS[m] = (scale, flint.arb(0, scale))
    return unit


# -- exact rounding -----------------------------------------------------------------------------------------
class Rounder(Protocol):
    """A public monotone rounding map: vectorized on floats, exact on dyadics."""

    def round_float(self, y: F64) -> F64: ...

    def round_exact(self, man: int, exp: int) -> float: ...


@dataclass(frozen=True)
class GridRounder:
    """R of an :class:`~smoothdp.exact.OutputGrid` (exponent E, precision p); ±inf beyond the float range."""

    exponent: int
    precision: int

    def round_float(self, y: F64) -> F64:
        v = np.asarray(y, dtype=np.float64)
        _, e = np.frexp(v)
        shift = np.maximum(e - 1, self.exponent) - self.precision
        out: F64 = np.ldexp(np.rint(np.ldexp(v, -shift)), shift)
        return out

    def round_exact(self, man: int, exp: int) -> float:
        return grid_round_exact(man, exp, self.exponent, self.precision)


def grid_round_exact(man: int, exp: int, exponent: int, precision: int) -> float:
    """R(man·2^exp) on the grid (E, p), ties to even, exactly; ±inf when the grid point exceeds the floats."""
    if man == 0:
        return 0.0
    sign = -1.0 if man < 0 else 1.0
    a = -man if man < 0 else man
    b = a.bit_length() + exp  # |y| ∈ [2^(b−1), 2^b)
    shift = max(b - 1, exponent) - precision
    if exp >= shift:
        n = a << (exp - shift)
    else:
        d = shift - exp
        n = a >> d
        rem = a - (n << d)
        half = 1 << (d - 1)
        if rem > half or (rem == half and n & 1):
            n += 1
    try:
        return sign * math.ldexp(float(n), shift)
    except OverflowError:
        return sign * math.inf


def _round_ball_end(end: arb, rounder: Rounder) -> float:
    """R of one exact end of an arb ball (nan when the ball is not finite)."""
    if not end.is_finite():
        return math.nan
    man, exp = end.man_exp()
    return rounder.round_exact(int(man), int(exp))


def round_ball(y: arb, rounder: Rounder) -> float | None:
    """R(y) if it is the same at both ends of the ball y, else None."""
    if y.is_nan() or not y.is_finite():
        return None
    a = _round_ball_end(y.lower(), rounder)
    b = _round_ball_end(y.upper(), rounder)
    if a == b and not math.isnan(a):
        return a
    return None


# -- the law protocol -------------------------------------------------------------------------------------
class ExactLaw(Protocol):
    """A noise law as a map of uniforms, with a certified float evaluator and an arb evaluator.

    ``n_uniforms`` words are drawn per candidate (uniform j of candidate i is word ``j·n + i`` of one
    block of ``n_uniforms·n`` words); when ``signed``, the top bit of uniform 0's word is the sign of Z
    and the uniform keeps the low 63 bits. ``dimension`` coordinates per draw (2: planar).
    """

    n_uniforms: int
    signed: bool
    dimension: int
    rejection: bool
    acceptance: float

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Any = None) -> Sequence[tuple[Any, ...]]:
        """Certified float enclosures (z⁻, z⁺), z⁻ ≥ 0, of each coordinate's magnitude (scale included)
        over the boxes [u_lo, u_hi]; nan or ±inf where the fast path cannot enclose it. A coordinate
        whose sign is not the draw's sign bit (planar noise) comes with its sign bits as a third array.
        ``scratch`` (:class:`smoothdp.exact.laws.Scratch`) lends reusable buffers for the results."""
        ...

    def ball(self, us: Sequence[arb]) -> list[arb]:
        """arb enclosures of each coordinate of the unsigned draw over the exact balls ``us``."""
        ...

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> NDArray[np.int8]:
        """Rejection laws: 1 accept, 0 reject, −1 undecided (others: all 1)."""
        ...

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        """Rejection laws: the exact decision over the balls, or None if undecided."""
        ...


# -- centers and multipliers ------------------------------------------------------------------------------
@dataclass
class Affine:
    """The exact center c and multiplier S of y = c + S·Z, flat over the output elements.

    ``c_lo ≤ c ≤ c_hi`` and ``s_lo ≤ S ≤ s_hi`` as floats (shape (n, d)); ``c_arb(i, j)`` and ``s_arb(i)``
    return arb balls containing the exact values at the current ctx.prec (tighter as it grows).
    """

    c_lo: F64
    c_hi: F64
    s_lo: F64
    s_hi: F64
    c_arb: Callable[[int, int], arb]
    s_arb: Callable[[int], arb]


def _unsigned_uniforms(law: ExactLaw, words: U64, n: int) -> tuple[NDArray[np.bool_], list[U64], list[int]]:
    """Split a word block (n_uniforms·n,) into the sign bits and the uniforms' integer parts."""
    ks: list[U64] = []
    ms: list[int] = []
    neg = np.zeros(n, dtype=np.bool_)
    for j in range(law.n_uniforms):
        w = words[j * n : (j + 1) * n]
        if j == 0 and law.signed:
            neg = (w >> np.uint64(63)).astype(np.bool_)
            ks.append(w & np.uint64((1 << 63) - 1))
            ms.append(63)
        else:
            ks.append(w)
            ms.append(64)
    return neg, ks, ms


@dataclass
class Candidates:
    neg: NDArray[np.bool_]
    ks: list[U64]
    ms: list[int]
    #: Elements whose uniforms the slow acceptance step refined beyond the first word.
    refined: dict[int, list[Uniform]]


def draw_accepted(law: ExactLaw, n: int, rng: Any) -> Candidates:
    """n accepted candidates (all of them for a law without rejection), in stream order.

    A law with its own candidate layout provides ``draw_accepted(n, rng) -> Candidates``
    (:class:`~smoothdp.exact.laws.GeneralizedCauchyLaw`: one word per candidate).
    """
    custom: Callable[[int, Any], Candidates] | None = getattr(law, "draw_accepted", None)
    if custom is not None:
        return custom(n, rng)
    if not law.rejection:
        words = draw_words(rng, law.n_uniforms * n)
        neg, ks, ms = _unsigned_uniforms(law, words, n)
        return Candidates(neg, ks, ms, {})
    neg_parts: list[NDArray[np.bool_]] = []
    k_parts: list[list[U64]] = [[] for _ in range(law.n_uniforms)]
    refined: dict[int, list[Uniform]] = {}
    filled = 0
    ms = [63 if law.signed else 64] + [64] * (law.n_uniforms - 1)
    while filled < n:
        missing = n - filled
        m = int(missing / law.acceptance + 6.0 * math.sqrt(missing) + 16)
        words = draw_words(rng, law.n_uniforms * m)
        neg, ks, ms = _unsigned_uniforms(law, words, m)
        bounds = [float_bounds(k, mb) for k, mb in zip(ks, ms, strict=True)]
        with np.errstate(all="ignore"):
            state = law.accept_fast([b[0] for b in bounds], [b[1] for b in bounds])
        this_round: dict[int, list[Uniform]] = {}
        for i in np.flatnonzero(state < 0):
            ok, us = accept_slow(law, [Uniform(int(k[i]), mb) for k, mb in zip(ks, ms, strict=True)], rng)
            state[i] = 1 if ok else 0
            this_round[int(i)] = us
        take = np.flatnonzero(state == 1)[:missing]
        for idx, us_idx in this_round.items():  # the few slow-decided ones, not a loop over all elements
            pos = int(np.searchsorted(take, idx))
            if pos < take.size and take[pos] == idx:
                refined[filled + pos] = us_idx
        neg_parts.append(neg[take])
        for j in range(law.n_uniforms):
            k_parts[j].append(ks[j][take])
        filled += take.size
    return Candidates(np.concatenate(neg_parts), [np.concatenate(p) for p in k_parts], ms, refined)


def accept_slow(law: ExactLaw, us: list[Uniform], rng: Any) -> tuple[bool, list[Uniform]]:
    prec = max(u.m for u in us) + 64
    while True:
        with flint.ctx.workprec(prec):
            decision = law.accept_ball([u.ball() for u in us])
        if decision is not None:
            return decision, us
        us = [u.refine(rng) for u in us]
        prec += _WORD


def end_fraction(end: arb) -> Fraction:
    """The exact value of an exact (zero-radius) finite arb as a Fraction."""
    man, exp = end.man_exp()
    m, e = int(man), int(exp)
    return Fraction(m << e) if e >= 0 else Fraction(m, 1 << -e)


def dyadic_to_float_bounds(x: arb) -> tuple[float, float]:
    """Floats lo ≤ x⁻ and hi ≥ x⁺ for the ends of the arb ball x (±inf if it is not finite)."""
    if not x.is_finite() or x.is_nan():
        return -math.inf, math.inf
    a = end_fraction(x.lower())
    b = end_fraction(x.upper())
    f_lo, f_hi = float(a), float(b)
    if Fraction(f_lo) > a:
        f_lo = math.nextafter(f_lo, -math.inf)
    if Fraction(f_hi) < b:
        f_hi = math.nextafter(f_hi, math.inf)
    return f_lo, f_hi


def fraction_float_bounds(q: Fraction) -> tuple[float, float]:
    """Floats lo ≤ q ≤ hi, both equal to q when q is a float."""
    f = float(q)
    lo_f = f if Fraction(f) <= q else math.nextafter(f, -math.inf)
    hi_f = f if Fraction(f) >= q else math.nextafter(f, math.inf)
    return lo_f, hi_f
