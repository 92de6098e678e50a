"""Each noise family as a map of uniforms, with a certified float evaluator and an arb evaluator.

Conventions (``docs/theory/floating-point.md#the-samplers``): U ∈ [0, 1) is known as a dyadic interval;
symmetric laws take a sign bit and a tail probability q = U, |Z| = Q(q) with P(|Z| > Q(q)) = q, so small
q (the far tail) is reached by refining U's bits, with no 2⁻⁵³ floor. ``fast`` encloses |Z| (scale
included) over boxes of uniforms in the boxes' float format (:mod:`smoothdp.exact.arithmetic`: binary64,
or long double for the few elements binary64 leaves undecided): every float step is followed, or folded
into one constant, by an outward widening in the direction the monotone map needs
(docs/theory/floating-point.md#the-fused-kernel), so the returned pair encloses the exact value over the
whole box. ``ball`` evaluates the same map in arb.

* Laplace(b): |Z| = −b·ln q.
* Gaussian(σ): |Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2).
* PolyPlace(s, α): the closed-form inverse of P(|X| > su) (HT 2025, Definition 6), core and tail.
* Student's t(ν): polar form (Bailey 1994) with the angle explicit, |T| = σ√(ν(W^{−2/ν} − 1))·sin(πw/2),
  W, w uniform: two uniforms, monotone in each, no rejection.
* Generalized Cauchy(γ): :mod:`smoothdp.exact.cauchy` (rejection, each acceptance decided exactly).
* Planar Laplace(b): :mod:`smoothdp.exact.planar` (radius ~ Gamma(2, b), angle 2πU₃).
* Uniform[0, 1) itself (for ``uniform_on_grid``).
* Truncated exponential on [0, 1] with rate λ (for ``truncated_exponential_on_grid``): decreasing density
  W = −log1p(−U·(1 − e^{−λ}))/λ, increasing W = log1p(U·(e^λ − 1))/λ.
* Log-uniform on [u, v], 0 < u < v (for ``log_uniform_on_grid``): y = u + u·expm1(U·ln(v/u)).

The Gaussian's map and its certified tail function live in :mod:`smoothdp.exact.normal`.

``fast(u_lo, u_hi, scratch=None)`` returns per coordinate an enclosure (z⁻, z⁺) of |Z| with z⁻ ≥ 0 (a law
whose coordinates carry their own signs, planar noise, adds their sign bits as a third array). With a
:class:`Scratch` it writes its results and temporaries into the engine's reused buffers; every constant
is a 0-d array (a numpy call with a Python float costs about twice the call overhead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import BASIC_ERR as B
from smoothdp.exact._core import ELEM_ERR as E
from smoothdp.exact._core import F64, dyadic_to_float_bounds, end_fraction, hi, lo
from smoothdp.exact.arithmetic import Arithmetic, arithmetic_of

if TYPE_CHECKING:
    from flint import arb

__all__ = [
    "LaplaceLaw",
    "LawBase",
    "LogUniformLaw",
    "PolyPlaceLaw",
    "Scratch",
    "StudentTLaw",
    "TruncatedExponentialLaw",
    "UniformLaw",
    "arb_constant",
    "as_constants",
    "take",
    "take_integers",
]

_CONST_PREC = 256
#: Noise scales inside this range keep every product of the fast path a normal number, so that the
#: relative error bounds hold; outside it the fast path gives no enclosure and the slow path decides
#: (never reached by a calibrated release).
SCALE_RANGE = (2.0**-500, 2.0**500)
#: Shape parameters (PolyPlace α, Student's ν) at most this large keep the same guarantee.
SHAPE_MAX = 2.0**100


@lru_cache(maxsize=512)
def arb_constant(f: Callable[..., arb], *args: float) -> tuple[Fraction, Fraction]:
    """Exact rational bounds of the real constant f(*args) computed in arb at 256 bits (made once)."""
    with flint.ctx.workprec(_CONST_PREC):  # lower() and upper() round to the working precision too
        x = f(*args)
        return end_fraction(x.lower()), end_fraction(x.upper())


#: Widening constants per (law, parameters, format), made once per process (at most this many kept).
_CONSTANTS: dict[tuple[Any, ...], SimpleNamespace] = {}
_CONSTANTS_KEPT = 1024


def _in(ar: Arithmetic, bounds: tuple[Fraction, Fraction]) -> tuple[Any, Any]:
    """Outward-rounded bounds of a constant in the format of ``ar``."""
    return ar.bounds(bounds[0])[0], ar.bounds(bounds[1])[1]


class Scratch:
    """Float buffers a law's ``fast`` reuses from chunk to chunk (the engine's workspace).

    ``take(like, count)`` returns ``count`` buffers shaped like ``like`` (fresh arrays when ``like`` is not
    binary64 or longer than the buffers: the long-double pass, the tests).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._buffers: list[F64] = []
        self._integers: list[NDArray[np.int64]] = []

    def take(self, like: np.ndarray, count: int) -> list[Any]:
        m = like.shape[0]
        if like.dtype != np.float64 or m > self.size:
            return [np.empty_like(like) for _ in range(count)]
        while len(self._buffers) < count:
            self._buffers.append(np.empty(self.size))
        return [b[:m] for b in self._buffers[:count]]

    def integers(self, m: int, count: int) -> list[NDArray[np.int64]]:
        """``count`` int64 buffers of length m (fresh ones when m exceeds the buffers)."""
        if m > self.size:
            return [np.empty(m, dtype=np.int64) for _ in range(count)]
        while len(self._integers) < count:
            self._integers.append(np.empty(self.size, dtype=np.int64))
        return [b[:m] for b in self._integers[:count]]


def take(scratch: Scratch | None, like: np.ndarray, count: int) -> list[Any]:
    """``count`` buffers like ``like``: from ``scratch`` when given, else fresh."""
    if scratch is None:
        return [np.empty_like(like) for _ in range(count)]
    return scratch.take(like, count)


def take_integers(scratch: Scratch | None, m: int, count: int) -> list[NDArray[np.int64]]:
    """``count`` int64 buffers of length m: from ``scratch`` when given, else fresh."""
    if scratch is None:
        return [np.empty(m, dtype=np.int64) for _ in range(count)]
    return scratch.integers(m, count)


def as_constants(k: SimpleNamespace) -> SimpleNamespace:
    """The same constants as 0-d arrays (pairs: tuples of them), cheaper operands for numpy calls."""
    out: dict[str, Any] = {}
    for name, v in vars(k).items():
        if isinstance(v, tuple):
            out[name] = tuple(np.asarray(x) if isinstance(x, float | np.floating) else x for x in v)
        elif isinstance(v, float | np.floating):
            out[name] = np.asarray(v)
        else:
            out[name] = v
    return SimpleNamespace(**out)


class LawBase:
    """Defaults: one signed uniform, one coordinate, no rejection; constants made once per format."""

    n_uniforms = 1
    signed = True
    dimension = 1
    rejection = False
    acceptance = 1.0
    #: Whether ``fast`` also evaluates in long double (the engine's second float pass).
    long_double = True
    #: Which uniforms' upper ends ``fast`` reads (None: all); the engine skips the others.
    uppers: tuple[bool, ...] | None = None

    def __init__(self, scale: float) -> None:
        self.scale = float(scale)
        #: Whether the fast path's products stay normal floats (else: no fast enclosure at all).
        self.in_range = SCALE_RANGE[0] <= self.scale <= SCALE_RANGE[1]

    def constants(self, ar: Arithmetic) -> SimpleNamespace:
        """The widening constants of ``fast`` in the format of ``ar`` as 0-d arrays (made once per
        parameters and process; looked up once per law object)."""
        memo: dict[str, SimpleNamespace] = self.__dict__.setdefault("_memo", {})
        k = memo.get(ar.name)
        if k is not None:
            return k
        key = (type(self), ar.name, *sorted((n, v) for n, v in vars(self).items() if n != "_memo"))
        k = _CONSTANTS.get(key)
        if k is None:
            if len(_CONSTANTS) >= _CONSTANTS_KEPT:  # a sweep over many scales: start afresh
                _CONSTANTS.clear()
            k = _CONSTANTS[key] = as_constants(self._make_constants(ar))
        memo[ar.name] = k
        return k

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        return SimpleNamespace()

    def accept_fast(self, u_lo: list[F64], u_hi: list[F64]) -> np.ndarray:
        return np.ones(u_lo[0].shape, dtype=np.int8)

    def accept_ball(self, us: Sequence[arb]) -> bool | None:
        return True

    def _b(self, x: arb) -> arb:
        return x * flint.arb(self.scale)

    def _nan(self, u_lo: list[F64]) -> list[tuple[F64, F64]]:
        nan = np.full(u_lo[0].shape, np.nan, dtype=u_lo[0].dtype)
        return [(nan, nan)] * self.dimension


class LaplaceLaw(LawBase):
    """|Z| = −b·ln q: ln q ≤ 0 within a relative E, so b·|ln q| lies in [fl(ln q_hi·(−κ′)),
    fl(ln q_lo·(−κ″))] with κ′ = shrink(b, E), κ″ = grow(b, E) (+inf at q = 0)."""

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        return SimpleNamespace(lo=-ar.shrink(self.scale, ar.elem), hi=-ar.grow(self.scale, ar.elem))

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        k = self.constants(arithmetic_of(u_lo[0]))
        a_lo, a_hi = take(scratch, u_lo[0], 2)
        np.log(u_hi[0], out=a_lo)
        np.multiply(a_lo, k.lo, out=a_lo)
        np.log(u_lo[0], out=a_hi)
        np.multiply(a_hi, k.hi, out=a_hi)
        return [(a_lo, a_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(-us[0].log())]


def _polyplace_arb(alpha: float, which: int) -> arb:
    a = flint.arb(alpha)
    r = (a * (-1 / a).log1p()).exp()
    k = 2 * r + a - 1
    if which == 0:
        return (a + 1).log() + a * (-1 / (a * a)).log1p() - k.log()
    return (a - 1) / k if which == 1 else (a + 1) * r / k


@lru_cache(maxsize=64)
def _polyplace_constants(alpha: float) -> tuple[tuple[Fraction, Fraction], ...]:
    """Exact bounds of A, c, q_b and 1/c of PolyPlace(α), computed once per α in arb."""
    parts = (_polyplace_a, _polyplace_c, _polyplace_qb, _polyplace_inv_c)
    return tuple(arb_constant(f, alpha) for f in parts)


def _polyplace_a(alpha: float) -> arb:
    return _polyplace_arb(alpha, 0)


def _polyplace_c(alpha: float) -> arb:
    return _polyplace_arb(alpha, 1)


def _polyplace_qb(alpha: float) -> arb:
    return _polyplace_arb(alpha, 2)


def _polyplace_inv_c(alpha: float) -> arb:
    return 1 / _polyplace_arb(alpha, 1)


@lru_cache(maxsize=256)
def _polyplace_balls(alpha: float, prec: int) -> tuple[arb, arb, arb]:
    """A, c, q_b as arb balls at the precision ``prec`` (the current one), made once per (α, prec)."""
    return _polyplace_arb(alpha, 0), _polyplace_arb(alpha, 1), _polyplace_arb(alpha, 2)


class PolyPlaceLaw(LawBase):
    """PolyPlace(s, α): tail q ≤ q_b: u = expm1((A − ln q)/α); core q ≥ q_b: u = −expm1(log1p(−(1−q)/c)/α).

    A = ln[(α+1)(1 − 1/α²)^α / K_α], c = (α−1)/K_α, q_b = (α+1)(1 − 1/α)^α / K_α (the tail mass),
    K_α = 2(1 − 1/α)^α + α − 1, all enclosed in arb (HT 2025, Definition 6; docs/theory/noise.md#polyplace).
    Each box is evaluated on its own branch only (a box straddling q_b gets no enclosure).
    """

    def __init__(self, scale: float, alpha: float) -> None:
        super().__init__(scale)
        self.alpha = float(alpha)
        self.in_range = self.in_range and self.alpha <= SHAPE_MAX

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        exact = _polyplace_constants(self.alpha)
        big_a, qb, inv_c = _in(ar, exact[0]), _in(ar, exact[2]), exact[3]
        s, inv_a, e, r = self.scale, 1 / Fraction(self.alpha), ar.elem, ar.unit
        return SimpleNamespace(
            A=big_a,
            qb=qb,
            # Tail: −ln q ≥ 0 (one call), + A (one rounding), × 1/α (one product), expm1, × s.
            neg_log_lo=-ar.shrink(1, e),
            neg_log_hi=-ar.grow(1, e),
            t_lo=ar.shrink(inv_a, r),
            t_hi=ar.grow(inv_a, r),
            # Core: x = (1 − q)/c (1 − q exact), log1p(−x) ≤ 0 (one call) × 1/α, expm1 ≤ 0, × −s.
            x_lo=ar.shrink(inv_c[0]),
            x_hi=ar.grow(inv_c[1]),
            v_lo=ar.shrink(inv_a, e),  # on a value ≤ 0: the upper end
            v_hi=ar.grow(inv_a, e),
            k_lo=ar.shrink(s, e),
            k_hi=ar.grow(s, e),
            neg_k_lo=-ar.shrink(s, e),
            neg_k_hi=-ar.grow(s, e),
        )

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        k = self.constants(arithmetic_of(u_lo[0]))
        q_lo, q_hi = u_lo[0], u_hi[0]
        a_lo, a_hi = take(scratch, q_lo, 2)
        a_lo.fill(np.nan)
        a_hi.fill(np.nan)
        tail = np.flatnonzero(q_hi <= k.qb[0])
        if tail.size:
            a_lo[tail], a_hi[tail] = self._tail(q_lo[tail], q_hi[tail], k)
        core = np.flatnonzero(q_lo >= k.qb[1])
        if core.size:
            a_lo[core], a_hi[core] = self._core(q_lo[core], q_hi[core], k)
        return [(a_lo, a_hi)]

    @staticmethod
    def _tail(q_lo: F64, q_hi: F64, k: SimpleNamespace) -> tuple[F64, F64]:
        """u = expm1((A − ln q)/α), decreasing in q; A − ln q ≥ α·ln(1 + 1/α) ≥ ln 2 > 0 on the tail."""
        lo_ = np.log(q_hi)
        np.multiply(lo_, k.neg_log_lo, out=lo_)
        np.add(lo_, k.A[0], out=lo_)
        np.multiply(lo_, k.t_lo, out=lo_)
        np.expm1(lo_, out=lo_)
        np.multiply(lo_, k.k_lo, out=lo_)
        hi_ = np.log(q_lo)
        np.multiply(hi_, k.neg_log_hi, out=hi_)
        np.add(hi_, k.A[1], out=hi_)
        np.multiply(hi_, k.t_hi, out=hi_)
        np.expm1(hi_, out=hi_)
        np.multiply(hi_, k.k_hi, out=hi_)
        return lo_, hi_

    @staticmethod
    def _core(q_lo: F64, q_hi: F64, k: SimpleNamespace) -> tuple[F64, F64]:
        """u = −expm1(log1p(−(1 − q)/c)/α), decreasing in q (q − 1 is exact: q is a multiple of its box)."""
        lo_ = np.subtract(q_hi, 1.0)
        np.multiply(lo_, k.x_lo, out=lo_)  # −x, x = (1 − q)/c at its lower end
        np.log1p(lo_, out=lo_)  # ≤ 0: times shrink(1/α, E) is an upper end of ln(1 − x)/α
        np.multiply(lo_, k.v_lo, out=lo_)
        np.expm1(lo_, out=lo_)  # ≤ 0: times −shrink(s, E) is a lower end of −s·expm1
        np.multiply(lo_, k.neg_k_lo, out=lo_)
        hi_ = np.subtract(q_lo, 1.0)
        np.multiply(hi_, k.x_hi, out=hi_)
        np.log1p(hi_, out=hi_)
        np.multiply(hi_, k.v_hi, out=hi_)
        np.expm1(hi_, out=hi_)
        np.multiply(hi_, k.neg_k_hi, out=hi_)
        return lo_, hi_

    def ball(self, us: Sequence[arb]) -> list[arb]:
        q = us[0]
        big_a, c, qb = _polyplace_balls(self.alpha, flint.ctx.prec)
        a = flint.arb(self.alpha)
        if q < qb:
            u = ((big_a - q.log()) / a).expm1()
        elif q > qb:
            u = -((-(1 - q) / c).log1p() / a).expm1()
        else:
            return [flint.arb.nan()]
        return [self._b(u)]


def _two_over(df: float) -> arb:
    return 2 / flint.arb(df)


def _two_sqrt(df: float) -> arb:
    return 2 * flint.arb(df).sqrt()


def _quarter_pi() -> arb:
    return flint.arb.pi() / 4


@lru_cache(maxsize=256)
def _student_balls(df: float, prec: int) -> tuple[arb, arb]:
    """ν and 2/ν as arb balls at the precision ``prec`` (the current one)."""
    d = flint.arb(df)
    return d, 2 / d


class StudentTLaw(LawBase):
    """|T| = σ·√(ν·expm1(−(2/ν)·ln W))·sin(πw/2): Bailey's polar form with the angle explicit.

    The radius is decreasing in W and evaluated at both corners, as √(expm1(g)) with the factor 2σ√ν
    folded into the last product. sin θ, θ = πw/2 ∈ [0, π/2], comes from t = tan(θ/2) ∈ [0, 1] at the
    box's lower corner θ₁: h = t/(1 + t²) = sin θ₁/2 within a relative 2E + 4u (nothing cancels), and
    sin θ/2 ≤ sin θ₁/2 + (θ − θ₁)/2 (|cos| ≤ 1) over the box.
    """

    n_uniforms = 2
    #: The angle's box is used by its lower end only.
    uppers = (True, False)

    def __init__(self, scale: float, df: float) -> None:
        super().__init__(scale)
        self.df = float(df)
        # ν ≥ 1/8: the lower end of expm1((2/ν)·(−ln W)) ≤ e⁵⁷⁷ never overflows (−ln W ≤ 36.05 on the
        # first word), and r·σ stays below 2⁹¹⁵; ν ≤ 2¹⁰⁰ keeps (2/ν)·(−ln W) normal.
        self.in_range = self.in_range and 0.125 <= self.df <= SHAPE_MAX

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        df = self.df
        two_over = arb_constant(_two_over, df)
        two_sqrt = arb_constant(_two_sqrt, df)
        quarter_pi = arb_constant(_quarter_pi)
        e, r, sin_err = ar.elem, ar.unit, 2 * ar.elem + 4 * ar.unit
        scale = Fraction(self.scale)
        return SimpleNamespace(
            # g = −(2/ν)·ln W ≥ 0 (one call, one product).
            g_lo=-ar.shrink(two_over[0], e),
            g_hi=-ar.grow(two_over[1], e),
            # expm1 (one call), √ (one rounding), × h (within sin_err; one product), × 2σ√ν.
            k_lo=ar.shrink(scale * two_sqrt[0], e, r, sin_err, r),
            k_hi=ar.grow(scale * two_sqrt[1], e, r, r),
            half_lo=ar.shrink(quarter_pi[0]),  # θ₁/2 = fl(w_lo·(π/4)⁻) ≤ πw_lo/4
            one=1.0,
            # sin θ/2 ≤ h/(1 − sin_err) + (θ − θ₁)/2, computed as fl(fl(h·A) + W) (two roundings):
            # θ − θ₁ ≤ (π/2)(w_hi − w_lo) + (πw_lo/2 − θ₁) ≤ (π/2)·2.5·box ≤ 4·box.
            sin_up=ar.grow(1, sin_err, r, r),
            width=ar.grow(Fraction(ar.box) * 2, r),
        )

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if not self.in_range:
            return self._nan(u_lo)
        k = self.constants(arithmetic_of(u_lo[0]))
        r_lo, r_hi, h, den = take(scratch, u_lo[0], 4)
        # Radius / (2σ√ν): √expm1(g), decreasing in W.
        np.log(u_hi[0], out=r_lo)
        np.multiply(r_lo, k.g_lo, out=r_lo)
        np.expm1(r_lo, out=r_lo)
        np.sqrt(r_lo, out=r_lo)
        np.log(u_lo[0], out=r_hi)
        np.multiply(r_hi, k.g_hi, out=r_hi)
        np.expm1(r_hi, out=r_hi)
        np.sqrt(r_hi, out=r_hi)
        # Angle: h = sin θ₁/2 = t/(1 + t²), t = tan(θ₁/2).
        np.multiply(u_lo[1], k.half_lo, out=h)
        np.tan(h, out=h)
        np.square(h, out=den)
        np.add(den, k.one, out=den)
        np.divide(h, den, out=h)
        np.multiply(r_lo, h, out=r_lo)
        np.multiply(r_lo, k.k_lo, out=r_lo)
        np.multiply(h, k.sin_up, out=h)  # an upper end of sin θ/2 over the box
        np.add(h, k.width, out=h)
        np.multiply(r_hi, h, out=r_hi)
        np.multiply(r_hi, k.k_hi, out=r_hi)
        return [(r_lo, r_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        d, two_over = _student_balls(self.df, flint.ctx.prec)
        r = (d * (-two_over * us[0].log()).expm1()).sqrt()
        return [self._b(r * (us[1] / 2).sin_pi())]


class UniformLaw(LawBase):
    """Z = U on [0, 1) (``uniform_on_grid`` puts c = lower and S = upper − lower)."""

    signed = False

    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.in_range = True  # no product: the box itself

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        return [(u_lo[0], u_hi[0])]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [us[0]]


def _float_constant(f: Callable[[], arb]) -> tuple[float, float]:
    """binary64 bounds of a real constant computed in arb at 256 bits."""
    with flint.ctx.workprec(_CONST_PREC):
        return dyadic_to_float_bounds(f())


class TruncatedExponentialLaw(LawBase):
    """W on [0, 1] with density ∝ e^{−λw} (``increasing=False``) or ∝ e^{λw} (``increasing=True``), by
    inversion: W = −log1p(−U·(1 − e^{−λ}))/λ, or W = log1p(U·(e^λ − 1))/λ; both increase with U.
    0 < λ ≤ 700 (e^λ a finite float). binary64 only (every element the binary64 pass leaves undecided goes
    to the ball arithmetic)."""

    signed = False
    long_double = False

    def __init__(self, rate: float, *, increasing: bool) -> None:
        super().__init__(1.0)
        self.rate = float(rate)
        self.increasing = bool(increasing)
        lam = self.rate
        # c = 1 − e^{−λ} (decreasing) or e^λ − 1 (increasing), enclosed.
        self._c = _float_constant(
            lambda: (flint.arb(lam).exp() - 1) if self.increasing else (1 - (-flint.arb(lam)).exp())
        )

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if u_lo[0].dtype != np.float64:
            return self._nan(u_lo)
        c_lo, c_hi = self._c
        a_lo = lo(u_lo[0] * c_lo, B)
        a_hi = hi(u_hi[0] * c_hi, B)
        if self.increasing:  # log1p(a)/λ, increasing in a ≥ 0
            w_lo = lo(lo(np.log1p(np.maximum(a_lo, 0.0)), E) / self.rate, B)
            w_hi = hi(hi(np.log1p(a_hi), E) / self.rate, B)
        else:  # −log1p(−a)/λ, increasing in a ∈ [0, 1 − e^{−λ}]
            w_lo = lo(-hi(np.log1p(-np.maximum(a_lo, 0.0)), E) / self.rate, B)
            w_hi = hi(-lo(np.log1p(-np.minimum(a_hi, c_hi)), E) / self.rate, B)
        return [(np.clip(w_lo, 0.0, 1.0), np.clip(w_hi, 0.0, 1.0))]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        lam = flint.arb(self.rate)
        if self.increasing:
            return [(us[0] * lam.expm1()).log1p() / lam]
        return [-(-(us[0] * -((-lam).expm1()))).log1p() / lam]


class LogUniformLaw(LawBase):
    """Z = expm1(U·L), L = ln(v/u) for 0 < u < v: u + u·Z is log-uniform on [u, v] (density ∝ 1/y).
    binary64 only (as :class:`TruncatedExponentialLaw`)."""

    signed = False
    long_double = False

    def __init__(self, lower: float, upper: float) -> None:
        super().__init__(1.0)
        self.lower, self.upper = float(lower), float(upper)
        self._l = _float_constant(lambda: (flint.arb(self.upper) / flint.arb(self.lower)).log())

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        if u_lo[0].dtype != np.float64:
            return self._nan(u_lo)
        l_lo, l_hi = self._l
        t_lo = lo(u_lo[0] * l_lo, B)
        t_hi = hi(u_hi[0] * l_hi, B)
        with np.errstate(over="ignore"):
            z_lo = np.maximum(lo(np.expm1(np.maximum(t_lo, 0.0)), E), 0.0)
            z_hi = hi(np.expm1(t_hi), E)
        return [(z_lo, z_hi)]

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [(us[0] * (flint.arb(self.upper) / flint.arb(self.lower)).log()).expm1()]
