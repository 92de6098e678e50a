"""The fused fast path's enclosures contain the exact draw, in both float formats, for every family.

For boxes of uniforms built exactly as the engine builds them (binary64: the first 52 bits of each word;
long double: the whole first word), ``law.fast`` must return lo ≤ |Z| ≤ hi at every point of the box; it
is checked at the box's corners (every map is monotone in each uniform on a box; planar noise is checked
at the corners and the middle of its angle), against formulas written here from the laws' definitions
and evaluated in mpmath at 120 digits — never from the code under test. Boxes include the deep tails
(q down to 2⁻⁶³), q next to 1 and the branch points. A broken twin (widening constants without the
elementary functions' error margin) must fail the same check.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mpmath as mp
import numpy as np
import pytest

from smoothdp.exact import laws
from smoothdp.exact.arithmetic import BINARY64, LONG_DOUBLE, Arithmetic
from smoothdp.exact.cauchy import GeneralizedCauchyLaw

FORMATS = [BINARY64] + ([LONG_DOUBLE] if LONG_DOUBLE is not None else [])
RNG = np.random.default_rng(20261127)


def _words(n: int) -> np.ndarray:
    """Random 64-bit words plus the extremes: tiny (deep tail), all ones (q → 1), and powers of two."""
    w = RNG.integers(0, 2**64, n, dtype=np.uint64)
    extremes = [1, 2, 3, 1 << 11, 1 << 12, (1 << 20) + 7, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 4097]
    return np.concatenate([w, np.array(extremes, dtype=np.uint64)])


def _boxes(words: np.ndarray, bits: int, ar: Arithmetic) -> tuple[Any, Any, list[int]]:
    """Float boxes of uniforms with ``bits`` bits (63: a signed law's first uniform, 64 otherwise), as the
    engine makes them, and the integer k of each with its box [k, k+1]·2^(−m) in exact arithmetic."""
    k = words & np.uint64((1 << bits) - 1)
    if ar is BINARY64:
        j = (k >> np.uint64(bits - 52)).astype(np.float64)
        lo = j * 2.0**-52
        return lo, lo + 2.0**-52, [int(v) << (bits - 52) for v in j.astype(np.uint64)]
    low = k.astype(np.longdouble)
    return np.ldexp(low, -bits), np.ldexp(low + 1, -bits), [int(v) for v in k]


def _mp(x: Any) -> Any:
    """The exact value of a binary64 or long-double number (±inf as mpmath's)."""
    if np.isinf(x):
        return mp.inf if x > 0 else -mp.inf
    m, e = np.frexp(np.longdouble(x))
    return mp.ldexp(mp.mpf(int(np.ldexp(m, 64))), int(e) - 64)


def _corners(lo: Any, hi: Any) -> tuple[Any, Any]:
    return _mp(lo), _mp(hi)


def ref_laplace(q: Any) -> Any:
    return -mp.log(q)


def ref_gauss(q: Any) -> Any:
    return mp.sqrt(2) * mp.erfinv(1 - q)


def ref_polyplace(alpha: float) -> Any:
    def f(q: Any) -> Any:
        a = mp.mpf(alpha)
        k = 2 * ((a - 1) / a) ** a + a - 1
        v = 1 - q  # P(|X| ≤ u)
        if v <= (a - 1) * (1 - (1 - 1 / a) ** a) / k:
            return 1 - (1 - v * k / (a - 1)) ** (1 / a)
        return (1 - 1 / a**2) * ((a + 1) / (k * (1 - v))) ** (1 / a) - 1

    return f


ONE_UNIFORM = [
    ("laplace", laws.LaplaceLaw(1.3), ref_laplace),
    ("gaussian", laws.GaussianLaw(0.7), ref_gauss),
    ("polyplace-3", laws.PolyPlaceLaw(2.0, 3.0), ref_polyplace(3.0)),
    ("polyplace-near1", laws.PolyPlaceLaw(1.0, 1.0 + 1e-6), ref_polyplace(1.0 + 1e-6)),
    ("polyplace-1e6", laws.PolyPlaceLaw(5.0, 1e6), ref_polyplace(1e6)),
]


def _check(lo: Any, hi: Any, exact: list[Any], label: str) -> int:
    """Every exact value within [lo, hi] (nan: no enclosure, allowed); the number of enclosures checked."""
    checked = 0
    for i, values in enumerate(exact):
        if np.isnan(lo[i]) or np.isnan(hi[i]):
            continue
        for v in values:
            assert _mp(lo[i]) <= v <= _mp(hi[i]), (label, i, v, lo[i], hi[i])
        checked += 1
    return checked


@pytest.fixture(autouse=True)
def _mp_precision() -> Any:
    with mp.workdps(120), np.errstate(all="ignore"):  # log 0 = −inf: an upper end of +inf, as the engine
        yield


@pytest.mark.parametrize("ar", FORMATS, ids=[f.name for f in FORMATS])
@pytest.mark.parametrize(("name", "law", "ref"), ONE_UNIFORM, ids=[c[0] for c in ONE_UNIFORM])
def test_one_uniform_laws_enclose_the_exact_draw(name: str, law: Any, ref: Any, ar: Arithmetic) -> None:
    if ar is not BINARY64 and not law.long_double:
        pytest.skip("binary64 only")
    words = _words(150)
    lo_q, hi_q, ks = _boxes(words, 63, ar)
    [(lo, hi)] = law.fast([lo_q], [hi_q])
    bits = 63 if ar is not BINARY64 else 52
    exact = []
    for k in ks:
        den = mp.mpf(2) ** 63
        step = 1 if ar is not BINARY64 else 2 ** (63 - bits)
        corners = [mp.mpf(k) / den, mp.mpf(k + step) / den]
        exact.append([law.scale * ref(q) for q in corners if q > 0])
    assert _check(lo, hi, exact, name) >= len(ks) - 12


def ref_student(df: float, scale: float, big_w: Any, small_w: Any) -> Any:
    return scale * mp.sqrt(df * (big_w ** (-2 / mp.mpf(df)) - 1)) * mp.sin(mp.pi * small_w / 2)


@pytest.mark.parametrize("ar", FORMATS, ids=[f.name for f in FORMATS])
@pytest.mark.parametrize("df", [3.0, 0.5, 7.5, 1e6])
def test_student_t_encloses_the_exact_draw(df: float, ar: Arithmetic) -> None:
    law = laws.StudentTLaw(2.0, df)
    w1, w2 = _words(120), RNG.permutation(_words(120))
    lo1, hi1, _ = _boxes(w1, 63, ar)
    lo2, hi2, _ = _boxes(w2, 64, ar)
    [(lo, hi)] = law.fast([lo1, lo2], [hi1, hi2])
    exact = []
    for a, b, a2, b2 in zip(lo1, hi1, lo2, hi2, strict=True):
        big = [_mp(a), _mp(b)]
        small = [_mp(a2), _mp(b2)]
        values = [ref_student(df, 2.0, big[1], small[0])]
        if big[0] > 0:
            values.append(ref_student(df, 2.0, big[0], small[1]))
        exact.append(values)
    assert _check(lo, hi, exact, f"t{df}") >= len(exact) - 10


def ref_cauchy_x(u: Any, gamma: float) -> Any:
    g = mp.mpf(gamma)
    w0 = (g - 1) / g
    return u / w0 if u < w0 else (g * (1 - u)) ** (-1 / (g - 1))


@pytest.mark.parametrize("ar", FORMATS, ids=[f.name for f in FORMATS])
@pytest.mark.parametrize("gamma", [4.0, 2.0, 1.5, 3.0, 2.5, 1.0 + 2.0**-10])
def test_cauchy_draw_encloses_the_exact_x(gamma: float, ar: Arithmetic) -> None:
    """The accepted draw's x(U) over 53-bit boxes of U (the candidates' first bits), times the scale."""
    law = GeneralizedCauchyLaw(1.7, gamma)
    k = _words(150) >> np.uint64(11)
    lo_u = k.astype(ar.dtype) * ar.dtype(2.0**-53)
    hi_u = lo_u + ar.dtype(2.0**-53)
    [(lo, hi)] = law.fast([lo_u], [hi_u])
    exact = []
    for a, b in zip(lo_u, hi_u, strict=True):
        ends = [_mp(a), _mp(b)]
        exact.append([1.7 * ref_cauchy_x(u, gamma) for u in ends if u < 1])
    assert _check(lo, hi, exact, f"gc{gamma}") >= len(exact) - 12


@pytest.mark.parametrize("ar", FORMATS, ids=[f.name for f in FORMATS])
def test_planar_laplace_encloses_both_coordinates(ar: Arithmetic) -> None:
    law = laws.PlanarLaplaceLaw(0.9)
    boxes = [_boxes(RNG.permutation(_words(100)), 64, ar) for _ in range(3)]
    enc = law.fast([b[0] for b in boxes], [b[1] for b in boxes])
    for coord, (lo, hi) in enumerate(enc):
        exact = []
        for i in range(lo.size):
            u1 = [_mp(boxes[0][0][i]), _mp(boxes[0][1][i])]
            u2 = [_mp(boxes[1][0][i]), _mp(boxes[1][1][i])]
            a3, b3 = _mp(boxes[2][0][i]), _mp(boxes[2][1][i])
            values = []
            for x1 in u1:
                for x2 in u2:
                    if x1 == 0 or x2 == 0:
                        continue
                    r = -mp.mpf(0.9) * (mp.log(x1) + mp.log(x2))
                    for u3 in (a3, (a3 + b3) / 2, b3):  # cos/sin of 2πu₃, exact at quarter turns
                        values.append(r * (mp.cospi(2 * u3) if coord == 0 else mp.sinpi(2 * u3)))
            exact.append(values)
        assert _check(lo, hi, exact, f"planar{coord}") >= lo.size - 12


class _NoMarginLaplace(laws.LaplaceLaw):
    """Broken twin: the log's error margin left out of the widening constants."""

    def _make_constants(self, ar: Arithmetic) -> SimpleNamespace:
        return SimpleNamespace(lo=-ar.shrink(self.scale) * (1 + 2 * ar.unit), hi=-ar.grow(self.scale))


def test_broken_twin_without_the_elementary_margin_fails() -> None:
    law = _NoMarginLaplace(1.0)
    lo_q, hi_q, ks = _boxes(_words(400), 63, BINARY64)
    [(lo, hi)] = law.fast([lo_q], [hi_q])
    exact = [[-mp.log(mp.mpf(k + 2**11) / mp.mpf(2) ** 63)] for k in ks]
    with pytest.raises(AssertionError):
        _check(lo, hi, exact, "twin")
