"""The hardened generalized Cauchy sampler: one 64-bit word per candidate, acceptance decided exactly.

Layout of a candidate word (``docs/theory/floating-point.md#the-samplers``): bit 0 the sign, bits 1–10 the
first 10 bits of the acceptance uniform V, bits 11–63 the first 53 bits of the proposal uniform U; either
uniform is continued by fresh 64-bit words when a decision needs them. The ideal draw is
x = U/w₀ (U < w₀ = (γ−1)/γ) or (γ(1 − U))^{−1/(γ−1)}, accepted iff V < 1/(1 + min(x, 1/x)^γ).

Expected values come from mpmath at 400 bits on these formulas, written here, never from the code under
test.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath as mp
import numpy as np
import pytest
from exact_reference import ref_round, to_fraction

from smoothdp.exact import OutputGrid, add_noise
from smoothdp.exact.cauchy import GeneralizedCauchyLaw
from smoothdp.noise import GeneralizedCauchy
from smoothdp.rng import default_rng


@pytest.fixture(autouse=True)
def _mp_precision() -> Any:
    with mp.workprec(400):
        yield


def ref_x(u: Any, gamma: float) -> Any:
    g = mp.mpf(gamma)
    w0 = (g - 1) / g
    return u / w0 if u < w0 else (g * (1 - u)) ** (-1 / (g - 1))


def ref_accept_prob(u: Any, gamma: float) -> Any:
    x = ref_x(u, gamma)
    m = x if x < 1 else 1 / x
    return 1 / (1 + m ** mp.mpf(gamma))


class _Recorder:
    """Forwards a generator's raw words and records each block size requested."""

    def __init__(self, seed: int) -> None:
        self.inner = default_rng(seed).bit_generator
        self.bit_generator = self
        self.calls: list[int] = []

    def random_raw(self, n: int) -> np.ndarray:
        self.calls.append(int(n))
        return np.asarray(self.inner.random_raw(n), dtype=np.uint64)


class _Scripted:
    """Serves ``first`` then ``fill`` for the first block, then ``later`` words one by one, then ``fill``."""

    def __init__(self, first: int, fill: int, later: list[int]) -> None:
        self.first, self.fill, self.later = first, fill, list(later)
        self.bit_generator = self
        self.blocks = 0

    def random_raw(self, n: int) -> np.ndarray:
        self.blocks += 1
        if self.blocks == 1:
            out = [self.first] + [self.fill] * (n - 1)
        else:
            out = [self.later.pop(0) if self.later else self.fill for _ in range(n)]
        return np.array(out, dtype=np.uint64)


def _word(k_u: int, coarse: int, negative: bool) -> int:
    return (k_u << 11) | (coarse << 1) | int(negative)


@pytest.mark.parametrize("gamma", [4.0, 2.0, 1.5, 3.0, 7.0])
def test_release_equals_independent_mpmath_rejection(gamma: float) -> None:
    """Candidate by candidate from the raw words: acceptance and released value, recomputed in mpmath."""
    n, c, s, scale = 300, 0.3, 0.9, 1.7
    grid = OutputGrid.for_magnitude(4.0)
    gen = _Recorder(5)
    out = add_noise(c, GeneralizedCauchy(gamma, scale), grid=grid, rng=gen, sensitivity=s, size=n)  # type: ignore[arg-type]
    block = gen.calls[0]
    stream = [int(v) for v in default_rng(5).bit_generator.random_raw(sum(gen.calls[:2]))]
    # Candidates whose 10 bits of V do not decide get V's next 64 bits, in candidate order, after the block.
    extra = iter(stream[block:])
    two53 = mp.mpf(2) ** 53
    i = checked = 0
    for w in stream[:block]:
        if i == n:
            break
        k_u, coarse, neg = w >> 11, (w >> 1) & 1023, w & 1
        a = [ref_accept_prob(mp.mpf(kk) / two53, gamma) for kk in (k_u, k_u + 1)]
        v_lo, v_hi = mp.mpf(coarse) / 1024, mp.mpf(coarse + 1) / 1024
        if max(a) > v_lo and min(a) < v_hi:
            v_lo = (mp.mpf(coarse) * 2**64 + next(extra)) / mp.mpf(2) ** 74
            v_hi = v_lo + mp.mpf(2) ** -74
            if max(a) > v_lo and min(a) < v_hi:
                break  # still undecided: arb draws further words; stop the independent walk here
        if max(a) <= v_lo:
            continue  # rejected: V ≥ a on the whole box
        ends = []
        for kk in (k_u, k_u + 1):
            z = mp.mpf(scale) * ref_x(mp.mpf(kk) / two53, gamma) if kk < 2**53 else mp.inf
            y = mp.mpf(c) + mp.mpf(s) * (-z if neg else z)
            ends.append(ref_round(to_fraction(y), grid) if mp.isfinite(y) else math.nan)
        if ends[0] == ends[1]:
            assert out[i] == ends[0], (i, out[i], ends)
            checked += 1
        i += 1
    assert checked >= 250  # the walk covers most of the release (not vacuous)


V_CASES = [(-(2**40), False), (-(2**8), True), (2**8, True), (2**40, False)]


@pytest.mark.parametrize(("offset", "by_arb"), V_CASES)
def test_acceptance_refines_v_beyond_its_first_bits(
    offset: int, by_arb: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """x = 2⁻⁸ (a ≈ 1 − 2⁻³², flat over U's box) with V's 10 bits in a's cell: V's next word decides.

    V 2⁴⁰ units of 2⁻⁷⁴ from a is decided by the float second stage; 2⁸ units only by arb.
    """
    import smoothdp.exact.cauchy as laws

    gamma = 4.0
    k_u = 3 << 43  # U = 3·2⁻¹⁰, x = U·4/3 = 2⁻⁸
    a_ends = [ref_accept_prob(mp.mpf(kk) / mp.mpf(2) ** 53, gamma) for kk in (k_u, k_u + 1)]
    a_mid = to_fraction((a_ends[0] + a_ends[1]) / 2)
    coarse = math.floor(a_mid * 1024)
    extra = math.floor((a_mid * 1024 - coarse) * 2**64) + offset
    first = _word(k_u, coarse, False)
    fill = _word(1 << 51, 0, False)  # U = 1/4: x = 1/3, accepted (V < 1/1024)
    grid = OutputGrid.for_magnitude(1.0)
    calls: list[int] = []
    accept_slow = laws.accept_slow

    def counting(law: Any, us: Any, rng: Any) -> Any:
        calls.append(1)
        return accept_slow(law, us, rng)

    monkeypatch.setattr(laws, "accept_slow", counting)
    z = add_noise(0.0, GeneralizedCauchy(gamma), grid=grid, rng=_Scripted(first, fill, [extra]))  # type: ignore[arg-type]
    v_lo = (coarse * mp.mpf(2) ** 64 + extra) / mp.mpf(2) ** 74  # V ∈ [v_lo, v_lo + 2⁻⁷⁴)
    accepted = v_lo + mp.mpf(2) ** -74 <= min(a_ends)
    assert accepted or v_lo >= max(a_ends)  # V's 74 bits decide (the test is about that case)
    assert accepted == (offset < 0)
    assert bool(calls) == by_arb
    assert z == ref_round(Fraction(1, 256) if accepted else Fraction(1, 3), grid)


def test_far_tail_refines_u_beyond_53_bits() -> None:
    """U's first 53 bits all ones (x ≥ 2^53 for γ = 2): U is refined, no 2⁻⁵³ floor on the tail."""
    gamma = 2.0
    first = _word(2**53 - 1, 0, True)  # V < 1/1024 ≤ a: accepted; negative
    nxt = 7 << 61  # 1 − U = 2⁻⁵⁶, s = 2⁻⁵⁵, x = 2⁵⁵
    grid = OutputGrid.for_magnitude(1.0)
    z = add_noise(0.0, GeneralizedCauchy(gamma), grid=grid, rng=_Scripted(first, 1 << 62, [nxt]))  # type: ignore[arg-type]
    ends = []
    for kk in (nxt, nxt + 1):
        u = (mp.mpf(2**53 - 1) * mp.mpf(2) ** 64 + kk) / mp.mpf(2) ** 117
        ends.append(ref_round(to_fraction(-ref_x(u, gamma)), grid))
    assert ends[0] == ends[1]
    assert z == ends[0]
    assert z < -(2.0**54)


def test_fast_acceptance_agrees_with_arb(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sending every candidate the float path decided to the arb decision changes no release."""
    dist = GeneralizedCauchy(3.0, 1.2)
    grid = OutputGrid.for_magnitude(1.2)
    n = 3000
    ref = add_noise(0.1, dist, grid=grid, rng=default_rng(21), size=n)
    original = GeneralizedCauchyLaw._first_states  # the integer screen, then the binary64 test
    calls = []

    def all_to_arb(self: GeneralizedCauchyLaw, w: np.ndarray) -> np.ndarray:
        st = original(self, w)
        st[st >= 0] = -2  # decided ones go to arb (the V-undecided keep their float second stage)
        return st

    def counting(law: Any, us: Any, rng: Any) -> Any:
        calls.append(1)
        return accept_slow(law, us, rng)

    import smoothdp.exact.cauchy as laws

    accept_slow = laws.accept_slow
    monkeypatch.setattr(GeneralizedCauchyLaw, "_first_states", all_to_arb)
    monkeypatch.setattr(laws, "accept_slow", counting)
    slow = add_noise(0.1, dist, grid=grid, rng=default_rng(21), size=n)
    assert len(calls) > n
    np.testing.assert_array_equal(slow, ref)


@pytest.mark.parametrize("gamma", [1.0 + 2.0**-20, 1.5, 2.0, 2.5, 3.0, 4.0, 50.0])
def test_acceptance_bounds_enclose_the_exact_probability(gamma: float) -> None:
    law = GeneralizedCauchyLaw(1.0, gamma)
    rng = np.random.default_rng(3)
    w0 = (gamma - 1.0) / gamma
    k = np.concatenate(
        [
            rng.integers(0, 2**53, 400, dtype=np.uint64),
            np.arange(0, 8, dtype=np.uint64),
            np.uint64(2**53) - np.arange(1, 9, dtype=np.uint64),
            np.uint64(int(w0 * 2**53)) + np.arange(-4, 5).astype(np.int64).astype(np.uint64),
        ]
    )
    u_lo = k.astype(np.float64) * 2.0**-53
    with np.errstate(all="ignore"):
        a_lo, a_hi, known = law._accept_bounds(u_lo, u_lo + 2.0**-53)
        x_lo, x_hi = law._x_chunk(u_lo, u_lo + 2.0**-53)
    g_w0 = (mp.mpf(gamma) - 1) / mp.mpf(gamma)
    for i, kk in enumerate(int(v) for v in k):
        ends = (mp.mpf(kk) / 2**53, mp.mpf(kk + 1) / 2**53)
        straddles = ends[0] < g_w0 < ends[1]
        assert bool(known[i]) == (not straddles)
        if straddles:
            assert math.isnan(x_lo[i]) and math.isnan(x_hi[i])
            continue
        for u in ends:
            p = ref_accept_prob(u, gamma) if u < 1 else mp.mpf(1)
            assert a_lo[i] <= p <= a_hi[i], (gamma, kk)
            if u < 1:
                x = ref_x(u, gamma)
                assert x_lo[i] <= x <= x_hi[i], (gamma, kk)
        if gamma >= 1.5:  # near γ = 1 the power γ/(γ−1) amplifies the width (arb decides there)
            assert a_hi[i] - a_lo[i] <= 2.0**-40


def test_overflowing_draw_with_small_multiplier_is_not_released_as_infinity() -> None:
    """x beyond the largest float (γ = 1.05, 1 − U < 2⁻⁵³: x ≈ 2¹⁰⁶⁰) times S = 2⁻¹⁰⁰ is a finite output."""
    gamma = 1.05
    first = _word(2**53 - 1, 0, False)  # accepted (V < 1/1024 ≤ a)
    nxt = 1 << 63
    grid = OutputGrid.for_magnitude(1.0)
    s = 2.0**-100
    gen: Any = _Scripted(first, 1 << 62, [nxt])
    z = add_noise(0.0, GeneralizedCauchy(gamma), grid=grid, rng=gen, sensitivity=s)
    u = (mp.mpf(2**53 - 1) * mp.mpf(2) ** 64 + nxt) / mp.mpf(2) ** 117
    x = ref_x(u, gamma)
    assert x > mp.mpf(2) ** 1024  # the draw itself is beyond the floats
    assert z == ref_round(to_fraction(mp.mpf(s) * x), grid)
    assert math.isfinite(z)


def test_cbrt_is_within_the_assumed_elementary_error() -> None:
    """The γ = 4 tail uses numpy's cbrt with the elementary-function bound ELEM_ERR = 2⁻⁴⁷; measured here
    against mpmath on s ∈ [2⁻⁵³, 1] (the arguments it gets), uniform and log-uniform."""
    from smoothdp.exact._core import ELEM_ERR

    rng = np.random.default_rng(8)
    s = np.concatenate([rng.random(20_000), 2.0 ** rng.uniform(-53, 0, 20_000), [2.0**-53, 0.5, 1.0]])
    s = s[s > 0]
    got = np.cbrt(s)
    worst = max(abs(mp.mpf(float(g)) / mp.cbrt(mp.mpf(float(v))) - 1) for v, g in zip(s, got, strict=True))
    assert worst <= ELEM_ERR / 16  # the assumption holds with a margin (it measures ≈ 2⁻⁵³)
