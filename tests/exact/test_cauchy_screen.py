"""The generalized Cauchy acceptance screen decides a candidate only as the binary64 test would.

The binary64 test (``GeneralizedCauchyLaw._coarse_state``) decides how many words the sampler draws, so
the screen in front of it (:mod:`smoothdp.exact.cauchy_screen`) may decide a candidate only where that
test decides it, the same way. Checked on random candidate words and on words built at every threshold
of every V-cell (k one below, at and above each), for γ from 1 + 2⁻¹⁰ to 50; the thresholds' sufficient
conditions (docs/theory/floating-point.md#the-generalized-cauchy-acceptance-screen) are checked in arb; a
broken twin built without the margins must be caught by the same agreement check.
"""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx

from smoothdp.exact._core import ELEM_ERR
from smoothdp.exact.cauchy import GeneralizedCauchyLaw
from smoothdp.exact.cauchy_screen import ASK, Screen, build_screen, screen_for

GAMMAS = [1.0 + 2.0**-10, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 7.0, 50.0]
RNG = np.random.default_rng(20261128)


def _screen(law: GeneralizedCauchyLaw) -> Screen:
    return screen_for(law.gamma, (float(law.w0[0]), float(law.w0[1])))


def _words_at_thresholds(screen: Screen) -> np.ndarray:
    """Candidate words with k next to every threshold of every cell c (and a random sign bit)."""
    c = np.arange(1024, dtype=np.int64)
    ks = []
    for table in (screen.kl_acc, screen.kr_acc, screen.kl_rej, screen.kr_rej):
        for d in (-2, -1, 0, 1):
            ks.append(np.column_stack([table + d, c]))
    for edge in (screen.k_core, screen.k_tail):
        for d in (-1, 0, 1):
            ks.append(np.column_stack([np.full(1024, int(edge) + d), c]))
    kc = np.concatenate(ks)
    kc = kc[(kc[:, 0] >= 0) & (kc[:, 0] < 2**53)]
    sign = RNG.integers(0, 2, kc.shape[0]).astype(np.uint64)
    k, cell = kc[:, 0].astype(np.uint64), kc[:, 1].astype(np.uint64)
    return (k << np.uint64(11)) | (cell << np.uint64(1)) | sign


def _check_agreement(law: GeneralizedCauchyLaw, screen: Screen, words: np.ndarray) -> float:
    """Every candidate the screen decides has the binary64 test's state; the share it decides."""
    with np.errstate(all="ignore"):
        state = screen.state(words)
        test = law._coarse_state(words)
    decided = state != ASK
    wrong = np.flatnonzero(decided & (state != test))
    assert wrong.size == 0, (law.gamma, words[wrong[:5]], state[wrong[:5]], test[wrong[:5]])
    return float(decided.mean())


@pytest.mark.parametrize("gamma", GAMMAS)
def test_screen_agrees_with_the_binary64_test(gamma: float) -> None:
    law = GeneralizedCauchyLaw(1.0, gamma)
    screen = _screen(law)
    share = _check_agreement(law, screen, RNG.integers(0, 2**64, 200_000, dtype=np.uint64))
    assert share > 0.995  # it decides all but the candidates whose V-cell holds a(x(U))
    _check_agreement(law, screen, _words_at_thresholds(screen))


@pytest.mark.parametrize("gamma", [1.2, 2.0, 2.5, 4.0, 50.0])
def test_thresholds_meet_their_sufficient_conditions_in_arb(gamma: float) -> None:
    """At each threshold the binary64 test's bounds (within 5E of a at r moved by 2⁻⁵⁰) decide: checked
    in exact ball arithmetic from the law's definition, a(r) = 1/(1 + r^P)."""
    law = GeneralizedCauchyLaw(1.0, gamma)
    s = _screen(law)
    with ctx.workprec(200):
        g = arb(gamma)
        w0 = (g - 1) / g
        unit, grow, shrink = arb(2) ** -53, 1 + arb(2) ** -50, 1 - arb(2) ** -50
        five_e = 5 * arb(ELEM_ERR)

        def a(r: arb, power: arb) -> arb:
            return 1 / (1 + (power * r.log()).exp())

        for c in [*range(0, 1024, 37), 511, 512, 1022, 1023]:
            t_acc, t_rej = arb(c + 1) / 1024, arb(c) / 1024
            kl, kr = int(s.kl_acc[c]), int(s.kr_acc[c])
            if kl >= 1:  # k + 1 ≤ kl: r = u⁺/w₀ at most kl·2⁻⁵³/w₀
                assert kl * unit <= arb(float(law.w0[0]))
                assert a(kl * unit / w0 * grow, g) * (1 - five_e) >= t_acc
            if kr < 2**53:  # k ≥ kr: r = γ(1 − u⁻) at most γ(1 − kr·2⁻⁵³)
                assert kr * unit >= arb(float(law.w0[1]))
                assert a(g * (1 - kr * unit) * grow, g / (g - 1)) * (1 - five_e) >= t_acc
            kl, kr = int(s.kl_rej[c]), int(s.kr_rej[c])
            if kl < 2**53 and kl * unit < w0:  # k ≥ kl in the core: r = u⁻/w₀ at least kl·2⁻⁵³/w₀
                assert a(kl * unit / w0 * shrink, g) * (1 + five_e) <= t_rej
            if kr >= 1 and kr * unit > w0:  # k + 1 ≤ kr in the tail: r = γ(1 − u⁺) ≥ γ(1 − kr·2⁻⁵³)
                assert a(g * (1 - kr * unit) * shrink, g / (g - 1)) * (1 + five_e) <= t_rej


def test_screen_without_margins_is_caught() -> None:
    """Broken twin: thresholds at the exact boundary (no margin for the test's own rounding) decide
    candidates the binary64 test leaves to V's next word; the agreement check must fail."""
    law = GeneralizedCauchyLaw(1.0, 2.5)
    twin = build_screen(law.gamma, (float(law.w0[0]), float(law.w0[1])), 0.0, 0.0, 0.0)
    with pytest.raises(AssertionError, match=r"\(2\.5, "):
        _check_agreement(law, twin, _words_at_thresholds(twin))
