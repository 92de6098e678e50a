"""The Gaussian law on the exact path: |Z| = σ·x(q), x(q) = √2·erfc⁻¹(q) = −ndtri(q/2), q = U.

binary64 (:meth:`GaussianLaw.fast` on binary64 boxes): one ``ndtri`` per draw, at the box's lower corner
q⁻, where x is largest (docs/theory/floating-point.md#the-fused-kernel). With N = ndtri(q⁻/2) ≤ 0 within
a relative NDTRI_ERR: x(q⁻) ∈ [−N·(1 − ·), −N·(1 + ·)], and since |dx/dq| = √(2π)/2·e^{x²/2} is largest
at q⁻ over the box, x(q⁺) ≥ x(q⁻) − (q⁺ − q⁻)·√(2π)/2·e^{x(q⁻)²/2}: the far corner from an ``exp``
instead of a second ``ndtri`` (the gap is second order in the box's width, far below the first).

long double (the engine's second pass, for the few draws binary64 leaves undecided): scipy has no
long-double ``ndtri``, so x(q) is enclosed from the tail function Q(x) = P(N > x) = erfc(x/√2)/2,
which decreases: with x₀ = −ndtri(q⁻/2) (binary64, a mere starting point) and a certified enclosure of
Q(x₀), the mean value theorem gives x(q) = x₀ + (Q(x₀) − q/2)/φ(ξ) for some ξ between x₀ and x(q); a
posteriori |x(q) − x₀| ≤ ρ = (x₀ + 1)·2⁻⁴⁰ (else no enclosure), so φ(ξ) = φ(x₀)·(1 ± 2⁻³³). Q(x₀) comes
from a table made once per process in arb (:func:`tail_table`): the degree-12 Taylor polynomial of Q at
the nearest node i/32 (|h| ≤ 1/64, 0 ≤ x ≤ 9.5), Q^{(k)} = (−1)^k·He_{k−1}(x)·φ(x), evaluated by Horner
in long double; each node's absolute error bound covers the Taylor remainder (|He₁₂·φ|/13!·h¹³ over the
node's interval, bounded in arb), the coefficients' rounding and Horner's (γ_{2K+4}·Σ|a_k|h^k). Of the
library functions this path assumes only binary64 ``exp`` within 2⁻³³ (for φ(x₀)), and nothing of
``ndtri`` (docs/theory/floating-point.md#the-fused-kernel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import F64, NDTRI_ERR
from smoothdp.exact.arithmetic import BINARY64, LONG_DOUBLE, Arithmetic, arithmetic_of
from smoothdp.exact.laws import LawBase, Scratch, arb_constant, take

if TYPE_CHECKING:
    from flint import arb

__all__ = ["GaussianLaw", "TailTable", "tail_table"]

_ZERO = np.int64(0)
#: Nodes of the tail table per unit of x, its last node, and the Taylor polynomials' degree.
NODES_PER_UNIT = 32
X_MAX = 9.5
DEGREE = 12
#: x(q) for q/2 ≥ 2⁻⁶⁵ (the long-double pass's boxes) is below 9.3 < X_MAX.
_TABLE_PREC = 192


def _half_sqrt_two_pi() -> arb:
    return (2 * flint.arb.pi()).sqrt() / 2


def _inv_sqrt_two() -> arb:
    return 1 / flint.arb(2).sqrt()


class GaussianLaw(LawBase):
    """|Z| = σ·√2·erfc⁻¹(q) = −σ·ndtri(q/2): ndtri(q/2) ≤ 0 within a relative NDTRI_ERR (q/2 is exact).

    binary64: one ``ndtri`` and one ``exp``; long double: the tail table (module docstring)."""

    #: binary64 reads the box's lower end only (the far corner from the derivative bound).
    uppers = (False,)

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        e, r = NDTRI_ERR, ar.unit
        half_pi = arb_constant(_half_sqrt_two_pi)
        inv_sqrt2 = arb_constant(_inv_sqrt_two)
        scale = Fraction(self.scale)
        return SimpleNamespace(
            half=0.5,
            # Upper end: σ·x(q⁻) ≤ N·(−grow(σ, E_N)).
            hi=-ar.grow(scale, e),
            # Lower end: σ·x(q⁻) ≥ N·(−shrink(σ, E_N, u)) (one more rounding: the subtraction below).
            lo=-ar.shrink(scale, e, r),
            # Y ≥ x(q⁻)/√2 with room for the rounding of Y²: Y² ≥ x²/2.
            y=-ar.grow(inv_sqrt2[1], e, r),
            # D ≥ σ·box·√(2π)/2·e^{Y²}: exp within E, one product.
            d=ar.grow(scale * Fraction(BINARY64.box) * half_pi[1], ar.elem),
            # long double: the roundings of Q ± err, the MVT's relative slack, ρ/2 per unit of x + 1,
            # and σ·z with the rounding of x₀ + Δ.
            round_slack=2.0**-62,
            mvt_slack=2.0**-30,
            rho_half=2.0**-41,
            scale_lo=ar.shrink(scale, r),
            scale_hi=ar.grow(scale, r),
        )

    def fast(self, u_lo: list[F64], u_hi: list[F64], scratch: Scratch | None = None) -> list[tuple[F64, F64]]:
        from scipy import special  # imported on first use: scipy is slow to import

        if not self.in_range:
            return self._nan(u_lo)
        if u_lo[0].dtype != np.float64:
            if LONG_DOUBLE is None or u_lo[0].dtype != LONG_DOUBLE.dtype:
                return self._nan(u_lo)
            return [self._fast_long(u_lo[0], u_hi[0])]
        k = self.constants(arithmetic_of(u_lo[0]))
        a_lo, a_hi, d = take(scratch, u_lo[0], 3)
        np.multiply(u_lo[0], k.half, out=a_hi)  # exact
        special.ndtri(a_hi, out=a_hi)  # N ≤ 0 at q⁻
        np.multiply(a_hi, k.y, out=d)
        np.square(d, out=d)
        np.exp(d, out=d)
        np.multiply(d, k.d, out=d)
        np.multiply(a_hi, k.lo, out=a_lo)
        np.subtract(a_lo, d, out=a_lo)
        np.maximum(a_lo.view(np.int64), _ZERO, out=a_lo.view(np.int64))  # a negative end: 0 (nan stays)
        np.multiply(a_hi, k.hi, out=a_hi)
        return [(a_lo, a_hi)]

    def _fast_long(self, q_lo: Any, q_hi: Any) -> tuple[Any, Any]:
        """σ·x(q) over long-double boxes [q_lo, q_hi] from the tail table (module docstring)."""
        from scipy import special

        assert LONG_DOUBLE is not None
        ld = LONG_DOUBLE.dtype
        k = self.constants(LONG_DOUBLE)
        table = tail_table()
        x0 = -special.ndtri(q_lo.astype(np.float64) * 0.5)  # a starting point, nothing assumed
        node = np.rint(x0 * NODES_PER_UNIT)
        ok = node < table.coeffs.shape[0]  # also False for nan
        node = np.where(ok, node, 0.0).astype(np.intp)
        x = x0.astype(ld)
        h = x - node.astype(ld) / NODES_PER_UNIT  # exact: |h| ≤ 1/64
        c = table.coeffs[node]
        q = c[:, DEGREE].copy()
        for j in range(DEGREE - 1, -1, -1):
            q *= h
            q += c[:, j]
        err = table.errors[node] + np.abs(q) * k.round_slack  # + the two roundings below
        d_lo = (q - err) - q_hi * k.half  # Q(x₀) − q/2 at its lowest over the box
        d_hi = (q + err) - q_lo * k.half
        phi = (np.exp(-0.5 * x0 * x0) * _INV_SQRT_2PI).astype(ld)  # φ(ξ) within 2⁻³³ (a posteriori)
        d_lo /= phi
        d_hi /= phi
        d_lo -= np.abs(d_lo) * k.mvt_slack
        d_hi += np.abs(d_hi) * k.mvt_slack
        rho = (x + 1) * k.rho_half  # |Δ| < ρ/2 certifies |x(q) − x₀| ≤ ρ
        ok &= (np.abs(d_lo) < rho) & (np.abs(d_hi) < rho)
        z_lo = np.maximum(x + d_lo, 0) * k.scale_lo
        z_hi = (x + d_hi) * k.scale_hi
        z_lo[~ok] = np.nan
        z_hi[~ok] = np.nan
        return z_lo, z_hi

    def ball(self, us: Sequence[arb]) -> list[arb]:
        return [self._b(us[0].erfcinv() * flint.arb(2).sqrt())]


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class TailTable:
    """Taylor coefficients of Q at the nodes i/32 (long double, rows) and each node's error bound."""

    coeffs: Any
    errors: Any


@lru_cache(maxsize=1)
def tail_table() -> TailTable:
    """The tail table (module docstring), made once per process in arb (a few milliseconds)."""
    if LONG_DOUBLE is None:
        raise RuntimeError("the tail table is for the x87 long-double pass")
    n_nodes = int(X_MAX * NODES_PER_UNIT) + 1
    coeffs = np.empty((n_nodes, DEGREE + 1), dtype=LONG_DOUBLE.dtype)
    errors = np.empty(n_nodes, dtype=LONG_DOUBLE.dtype)
    arb = flint.arb
    with flint.ctx.workprec(_TABLE_PREC):
        inv_sqrt_2pi = 1 / (2 * arb.pi()).sqrt()
        sqrt2 = arb(2).sqrt()
        half_step = arb(1) / (2 * NODES_PER_UNIT)
        gamma = arb(2 * DEGREE + 4) * arb(2) ** -64 * arb(1.01)  # Horner and the stored coefficients
        remainder_scale = half_step ** (DEGREE + 1) / math.factorial(DEGREE + 1)
        for i in range(n_nodes):
            x = arb(i) / NODES_PER_UNIT
            phi = (-x * x / 2).exp() * inv_sqrt_2pi
            terms = [(x / sqrt2).erfc() / 2]
            he_prev, he = arb(0), arb(1)  # He₋₁, He₀
            for j in range(1, DEGREE + 1):  # a_j = (−1)^j·He_{j−1}(x)·φ(x)/j!
                terms.append((-1) ** j * he * phi / math.factorial(j))
                he_prev, he = he, x * he - (j - 1) * he_prev
            # |Q^(K+1)| = |He_K·φ| over the node's interval (recurrence on the ball: an upper bound).
            ball = arb(x.mid(), half_step)
            b_prev, b = arb(0), arb(1)
            for j in range(1, DEGREE + 1):
                b_prev, b = b, ball * b - (j - 1) * b_prev
            b_phi = (-ball * ball / 2).exp() * inv_sqrt_2pi
            bound = arb((b * b_phi).abs_upper()) * remainder_scale
            total = sum((arb(t.abs_upper()) * half_step**j for j, t in enumerate(terms)), arb(0))
            radii = sum((arb(t.rad()) * half_step**j for j, t in enumerate(terms)), arb(0))
            bound += gamma * total + radii
            coeffs[i] = [_to_long_double(t.mid(), up=False) for t in terms]
            errors[i] = _to_long_double(arb(bound.abs_upper()), up=True)
    return TailTable(coeffs, errors)


def _to_long_double(x: arb, *, up: bool) -> Any:
    """An exact arb value rounded to 64 significant bits: towards zero, or away from it with ``up``."""
    man, exp = x.man_exp()
    m, e = int(man), int(exp)
    if m == 0:
        return np.longdouble(0)
    sign = -1 if m < 0 else 1
    a = abs(m)
    shift = max(a.bit_length() - 64, 0)
    top = a >> shift
    if up and (top << shift) != a:
        top += 1
        if top == 1 << 64:
            top, shift = 1 << 63, shift + 1
    value = np.array(top, dtype=np.uint64).astype(np.longdouble)
    return sign * np.ldexp(value, e + shift)
