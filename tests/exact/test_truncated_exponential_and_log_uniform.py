"""The truncated-exponential and log-uniform releases: each value is the grid rounding of the ideal draw from
its uniform's bits, recomputed in mpmath; the arb path alone gives the same releases; the laws are right."""

from __future__ import annotations

from typing import Any

import mpmath as mp
import numpy as np
import pytest
from exact_reference import ref_round, to_fraction
from scipy import stats

from smoothdp.exact import OutputGrid, engine, log_uniform_on_grid, truncated_exponential_on_grid
from smoothdp.exact.laws import LogUniformLaw, TruncatedExponentialLaw
from smoothdp.rng import default_rng

GRID = OutputGrid.for_magnitude(8.0)


def _ideal_truncexp(u: mp.mpf, lo: float, hi: float, rate: float, increasing: bool) -> mp.mpf:
    lam = mp.mpf(rate)
    if increasing:  # CDF (e^{λw} − 1)/(e^λ − 1)
        w = mp.log(1 + u * (mp.exp(lam) - 1)) / lam
    else:  # CDF (1 − e^{−λw})/(1 − e^{−λ})
        w = -mp.log(1 - u * (1 - mp.exp(-lam))) / lam
    return mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * w


def _ideal_loguniform(u: mp.mpf, lo: float, hi: float) -> mp.mpf:
    return mp.mpf(lo) * mp.exp(u * mp.log(mp.mpf(hi) / mp.mpf(lo)))


def _truncexp(lo: float, hi: float, rate: float, increasing: bool) -> Any:
    return lambda g: truncated_exponential_on_grid(lo, hi, rate=rate, increasing=increasing, grid=GRID, rng=g)


CASES = [
    ("truncexp-down", _truncexp(1.0, 3.5, 0.7, False), lambda u: _ideal_truncexp(u, 1.0, 3.5, 0.7, False)),
    ("truncexp-up", _truncexp(-2.0, 0.25, 3.0, True), lambda u: _ideal_truncexp(u, -2.0, 0.25, 3.0, True)),
    ("loguniform", lambda g: log_uniform_on_grid(0.01, 6.0, grid=GRID, rng=g),
     lambda u: _ideal_loguniform(u, 0.01, 6.0)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "draw", "ideal"), CASES, ids=[c[0] for c in CASES])
def test_each_release_is_the_rounded_ideal_draw_of_its_uniform(name: str, draw: Any, ideal: Any) -> None:
    """One 64-bit word per draw, U in [k, k + 1]/2^64: where both ends round alike, so does the release."""
    gen = default_rng(17)
    words = default_rng(17).bit_generator.random_raw(300)
    checked = 0
    with mp.workdps(60):
        for i in range(300):
            out = draw(gen)
            k = int(words[i])
            ends = [ref_round(to_fraction(ideal(mp.mpf(kk) / mp.mpf(2) ** 64)), GRID) for kk in (k, k + 1)]
            if ends[0] == ends[1]:
                assert out == ends[0], (i, out, ends)
                checked += 1
    assert checked >= 295


@pytest.mark.parametrize("law_type", [TruncatedExponentialLaw, LogUniformLaw])
def test_the_arb_path_alone_gives_the_same_releases(law_type: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def draws() -> list[float]:
        g = default_rng(5)
        if law_type is LogUniformLaw:
            return [log_uniform_on_grid(0.5, 40.0, grid=GRID, rng=g) for _ in range(40)]
        return [
            truncated_exponential_on_grid(0.0, 2.0, rate=1.5, increasing=False, grid=GRID, rng=g)
            for _ in range(40)
        ]

    ref = draws()

    def no_enclosure(self: Any, u_lo: Any, u_hi: Any) -> Any:
        nan = np.full(u_lo[0].shape, np.nan)
        return [(nan, nan)]

    monkeypatch.setattr(law_type, "fast", no_enclosure)
    assert draws() == ref
    assert engine.LAST_STATS.slow == 1


def test_the_laws_are_the_truncated_exponential_and_the_log_uniform() -> None:
    g = default_rng(2024)
    v = np.array(
        [
            truncated_exponential_on_grid(0.0, 1.0, rate=2.0, increasing=False, grid=GRID, rng=g)
            for _ in range(4000)
        ]
    )
    assert stats.kstest(v, lambda t: -np.expm1(-2.0 * t) / -np.expm1(-2.0)).pvalue > 1e-3
    w = np.array([log_uniform_on_grid(1.0, 100.0, grid=GRID, rng=g) for _ in range(4000)])
    assert stats.kstest(np.log(w), stats.uniform(0.0, np.log(100.0)).cdf).pvalue > 1e-3


def test_bad_arguments_are_refused() -> None:
    g = default_rng(0)
    with pytest.raises(ValueError, match="rate"):
        truncated_exponential_on_grid(0.0, 1.0, rate=0.0, increasing=True, grid=GRID, rng=g)
    with pytest.raises(ValueError, match="lower"):
        log_uniform_on_grid(-1.0, 1.0, grid=GRID, rng=g)
