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
