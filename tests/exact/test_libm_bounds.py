"""The fast path's assumption: each numpy/scipy call it makes is within a relative ELEM_ERR (NDTRI_ERR)
of the exact value, on the argument ranges it uses. Measured here against python-flint arb (rigorous,
200 bits) on 1.8·10⁵ points including the deep tails
(docs/theory/floating-point.md#the-fast-path-and-its-error-bound).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from flint import arb, ctx
from scipy import special

from smoothdp.exact._core import ELEM_ERR, NDTRI_ERR
from smoothdp.exact.arithmetic import LONG_DOUBLE

N = 15_000
RNG = np.random.default_rng(20260101)


def _mix(lo: float, hi: float, log_lo: float | None = None) -> np.ndarray:
    """N points: half uniform on [lo, hi], half log-uniform down to 10^log_lo (deep tails / near 0)."""
    a = RNG.uniform(lo, hi, N // 2)
    if log_lo is None:
        b = RNG.uniform(lo, hi, N - N // 2)
    else:
        b = 10.0 ** RNG.uniform(log_lo, np.log10(hi), N - N // 2)
    return np.concatenate([a, b])


def _ndtri_exact(y: arb) -> arb:
    return -(2 * y).erfcinv() * arb(2).sqrt()


LOG_X = np.concatenate([_mix(2.0**-52, 1.0, -15.6), 1 - _mix(0, 1e-3, -16)])
LOG1P_X = np.concatenate([-_mix(0.0, 1.0 - 2**-40, -300), _mix(0, 2, -300)])
EXPM1_X = np.concatenate([_mix(-40.0, 700.0), _mix(-1e-3, 1e-3, -300)])

CASES: list[tuple[str, Callable[[np.ndarray], np.ndarray], Callable[[arb], arb], np.ndarray, float]] = [
    ("log", np.log, lambda x: x.log(), LOG_X, ELEM_ERR),
    ("log1p", np.log1p, lambda x: x.log1p(), LOG1P_X, ELEM_ERR),
    ("expm1", np.expm1, lambda x: x.expm1(), EXPM1_X, ELEM_ERR),
    ("exp", np.exp, lambda x: x.exp(), _mix(-700.0, 700.0), ELEM_ERR),
    ("sin", np.sin, lambda x: x.sin(), _mix(0.0, np.pi / 2 + 1e-9, -300), ELEM_ERR),
    ("tan", np.tan, lambda x: x.tan(), _mix(0.0, np.pi / 4 + 1e-9, -300), ELEM_ERR),
    ("cos", np.cos, lambda x: x.cos(), _mix(0.0, np.pi / 4 + 1e-9), ELEM_ERR),
    ("sqrt", np.sqrt, lambda x: x.sqrt(), _mix(0.0, 1e300, -300), ELEM_ERR),
    ("ndtri", special.ndtri, _ndtri_exact, _mix(2.0**-54, 0.5, -16.3), NDTRI_ERR),
]


@pytest.mark.parametrize(("name", "f", "exact", "x", "bound"), CASES, ids=[c[0] for c in CASES])
def test_float_function_within_assumed_relative_error(
    name: str, f: Callable[[np.ndarray], np.ndarray], exact: Callable[[arb], arb], x: np.ndarray, bound: float
) -> None:
    x = x[(x != 0) & np.isfinite(x)]
    got = f(x)
    worst = 0.0
    with ctx.workprec(200):
        for xi, gi in zip(x.tolist(), got.tolist(), strict=True):
            e = exact(arb(xi))
            if e.is_zero():
                assert gi == 0.0
                continue
            rel = abs(float((arb(gi) - e) / e))
            worst = max(worst, rel)
    print(f"{name}: {x.size} points, worst relative error {worst:.3g} = {worst / 2.0**-53:.2f} × 2^-53")
    assert worst <= bound


# -- long double (x87 extended), the engine's second float pass ----------------------------------------
LD_N = 3000


def _ld(x: np.ndarray) -> np.ndarray:
    """Long-double points with bits below binary64's (so the test is about the 64-bit significand)."""
    noise = np.random.default_rng(7).random(x.size).astype(np.longdouble) * np.longdouble(2.0**-60)
    return x.astype(np.longdouble) * (1 + noise)


def _ld_arb(v: np.longdouble) -> arb:
    m, e = np.frexp(v)
    return arb(int(np.ldexp(m, 64))) * arb(2) ** (int(e) - 64)


LD_LOG_X = _ld(np.concatenate([_mix(2.0**-63, 1.0, -18.9), 1 - _mix(0, 1e-3, -18)]))
LD_EXPM1_X = _ld(np.concatenate([_mix(-45.0, 700.0), _mix(-1e-3, 1e-3, -300)]))
LD_CASES: list[tuple[str, Callable[[np.ndarray], np.ndarray], Callable[[arb], arb], np.ndarray]] = [
    ("log", np.log, lambda x: x.log(), LD_LOG_X),
    ("log1p", np.log1p, lambda x: x.log1p(), _ld(-_mix(0.0, 1.0 - 2**-40, -300))),
    ("expm1", np.expm1, lambda x: x.expm1(), LD_EXPM1_X),
    ("exp", np.exp, lambda x: x.exp(), _ld(_mix(-700.0, 700.0))),
    ("tan", np.tan, lambda x: x.tan(), _ld(_mix(0.0, np.pi / 4, -300))),
    ("sqrt", np.sqrt, lambda x: x.sqrt(), _ld(_mix(0.0, 1e300, -300))),
    ("cbrt", np.cbrt, lambda x: x.root(3), _ld(_mix(2.0**-64, 1.0, -19))),
]


@pytest.mark.skipif(LONG_DOUBLE is None, reason="long double is not the x87 format here")
@pytest.mark.parametrize(("name", "f", "exact", "x"), LD_CASES, ids=[c[0] for c in LD_CASES])
def test_long_double_function_within_assumed_relative_error(
    name: str, f: Callable[[np.ndarray], np.ndarray], exact: Callable[[arb], arb], x: np.ndarray
) -> None:
    """Each C library long-double function the second pass calls is within LONG_DOUBLE.elem = 2⁻⁵⁸."""
    assert LONG_DOUBLE is not None
    x = x[(x != 0) & np.isfinite(x)][:LD_N]
    got = f(x)
    assert got.dtype == np.longdouble
    worst = 0.0
    with ctx.workprec(200):
        for xi, gi in zip(x, got, strict=True):
            e = exact(_ld_arb(xi))
            if e.is_zero():
                assert gi == 0
                continue
            worst = max(worst, abs(float((_ld_arb(gi) - e) / e)))
    print(f"{name} (long double): {x.size} points, worst relative error {worst / 2.0**-64:.2f} × 2^-64")
    assert worst <= LONG_DOUBLE.elem
