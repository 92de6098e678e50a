"""Shared data strategies and references for the scale tests (reference: slicing ``np.sort(x + 0.0)``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import strategies as st

#: Adversarial doubles: ±0, the smallest subnormals, the largest subnormal and smallest normal, 1 and its
#: neighbours (equal top bits, different low bits), ±max, ±inf.
SPECIALS = (
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.225073858507201e-308,
    -2.2250738585072014e-308,
    1.0,
    float(np.nextafter(1.0, 2.0)),
    float(np.nextafter(1.0, 0.0)),
    -1.0,
    2.0,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    float("inf"),
    float("-inf"),
)

doubles = st.one_of(
    st.sampled_from(SPECIALS),
    st.floats(allow_nan=False, allow_infinity=True, allow_subnormal=True),
    st.integers(-3, 3).map(float),  # small integers: many ties
)


@st.composite
def blocked_data(draw: st.DrawFn, max_size: int = 60) -> tuple[np.ndarray, list[np.ndarray]]:
    """Values and their split into blocks (empty and one-element blocks included)."""
    values = np.array(draw(st.lists(doubles, max_size=max_size)), dtype=np.float64)
    cuts = sorted(draw(st.lists(st.integers(0, values.size), max_size=5)))
    return values, np.split(values, cuts)


@st.composite
def rank_range(draw: st.DrawFn, n: int) -> tuple[int, int]:
    """A rank range [lo, hi] that may stick out of [1, n] or be empty; often with the ends 1 and n."""
    lo = draw(st.one_of(st.just(1), st.integers(-2, n + 2)))
    hi = draw(st.one_of(st.just(n), st.integers(lo - 2, n + 3)))
    return lo, hi


def reference(x: np.ndarray, lo: int, hi: int) -> tuple[int, np.ndarray, int, int]:
    """(first, values, n_below, n_above) of the ranks [lo, hi] ∩ [1, n], directly from np.sort and counts."""
    n = x.size
    s = np.sort(x + 0.0)
    a, b = max(lo, 1), min(hi, n)
    if a > b:
        return min(a, n + 1), np.empty(0), 0, 0
    vals = s[a - 1 : b]
    return a, vals, int(np.count_nonzero(x < vals[0])), int(np.count_nonzero(x > vals[-1]))


def check_window(w: Any, x: np.ndarray, lo: int, hi: int) -> None:
    """Assert that a RankWindow equals the reference bit for bit (values compared as bit patterns)."""
    first, vals, below, above = reference(x, lo, hi)
    assert w.n == x.size
    assert w.first == first
    assert w.last == first + vals.size - 1
    got = np.asarray(w.values)
    assert got.dtype == np.float64
    assert got.view(np.uint64).tolist() == vals.view(np.uint64).tolist()
    assert not np.any(np.signbit(got) & (got == 0))  # −0 folded into +0
    assert (w.n_below, w.n_above) == (below, above)


def fraction_sum(x: np.ndarray, lo: float, hi: float) -> Fraction:
    """Σ x over lo < x < hi in exact rational arithmetic (Fraction(float) is exact)."""
    return sum((Fraction(float(v)) for v in x if lo < v < hi), Fraction(0))


class CountingBackend:
    """A KeyBackend wrapper that counts passes and records the size of every collect."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.passes = 0
        self.collected: list[int] = []

    def count(self) -> int:
        return int(self.inner.count())

    def histograms(self, requests: Any) -> Any:
        self.passes += 1
        assert 1 <= len(requests) <= 2
        return self.inner.histograms(requests)

    def uncached_histograms(self, requests: Any) -> Any:
        self.passes += 1
        return self.inner.uncached_histograms(requests)

    def collect(self, key_lo: int, key_hi: int) -> Any:
        self.passes += 1
        out = self.inner.collect(key_lo, key_hi)
        self.collected.append(int(out.size))
        return out

    def collect_beyond(self, key_lo: int, key_hi: int, below_key: int, above_key: int, width: int) -> Any:
        self.passes += 1
        out = self.inner.collect_beyond(key_lo, key_hi, below_key, above_key, width)
        self.collected.append(int(out[0].size))
        return out

    def exact_sum_open(self, lo_value: float, hi_value: float) -> Fraction:
        return Fraction(self.inner.exact_sum_open(lo_value, hi_value))
