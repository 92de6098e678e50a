"""Exact rank windows: in memory (np.partition) and by radix selection over blocks, bit-equal to np.sort."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_reference import CountingBackend, blocked_data, check_window, fraction_sum, rank_range

from smoothdp.scale.selection import (
    BlockBackend,
    KeyBackend,
    RankWindow,
    refinements_needed,
    select_window,
    window_in_memory,
    window_sorted,
)

CAPS = st.sampled_from([0, 1, 2, 5, 1 << 20])


def _select(
    blocks: list[np.ndarray], lo: int, hi: int, cap: int, *, fixed: bool = False
) -> tuple[RankWindow, CountingBackend]:
    backend = CountingBackend(BlockBackend(blocks))
    w = select_window(backend, lo, hi, cap=cap, fixed=fixed)
    return w, backend


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_windows_equal_sorting(data: st.DataObject) -> None:
    x, blocks = data.draw(blocked_data())
    lo, hi = data.draw(rank_range(x.size))
    cap = data.draw(CAPS)
    check_window(window_sorted(np.sort(x + 0.0), lo, hi), x, lo, hi)
    check_window(window_sorted(np.sort(x), lo, hi), x, lo, hi)  # −0 and +0 interleaved in the input
    check_window(window_in_memory(x, lo, hi), x, lo, hi)
    width = max(0, min(hi, x.size) - max(lo, 1) + 1)
    for fixed in (False, True):
        w, backend = _select(blocks, lo, hi, cap, fixed=fixed)
        check_window(w, x, lo, hi)
        assert w.passes == backend.passes <= 5
        assert all(c <= cap + width for c in backend.collected)  # driver memory bound
        if fixed:  # the same passes whatever the data: n, the width and the cap decide
            expected = 1 + (refinements_needed(x.size, cap) if width else 0) + (x.size > 0)
            assert backend.passes == expected


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_exact_sum_open(data: st.DataObject) -> None:
    x, blocks = data.draw(blocked_data())
    ends = st.one_of(st.sampled_from([-np.inf, np.inf, 0.0, -0.0, 1.0]), st.floats(allow_nan=False))
    a, b = data.draw(ends), data.draw(ends)
    got = BlockBackend(blocks).exact_sum_open(a, b)
    assert isinstance(got, Fraction)
    assert got == fraction_sum(x, a, b)


def test_heavy_ties_are_never_collected() -> None:
    x = np.full(100_000, 3.5)
    x[:7] = [1.0, -0.0, 2.0, 9.0, np.inf, 3.5000000000000004, 3.4999999999999996]
    blocks = np.array_split(np.random.default_rng(1).permutation(x), 7)
    for lo, hi in [(1, 100_000), (50_000, 50_200), (1, 5), (4, 6), (99_990, 100_000)]:
        for cap in (0, 1, 2, 1 << 20):
            w, backend = _select(blocks, lo, hi, cap)
            check_window(w, x, lo, hi)
            assert all(c <= cap + hi - lo + 1 for c in backend.collected)
    w, backend = _select(blocks, 50_000, 50_000, 1)
    assert backend.collected == [] and w.values.tolist() == [3.5]  # a single-key bin: nothing collected


def test_refinement_down_to_single_keys() -> None:
    # 1000 neighbouring doubles share their top 54 bits: the end bins are refined three times (to single
    # keys), then only the keys strictly between them are collected: 1 + 3 + 1 passes.
    x = 1.0 + np.arange(1000) * np.finfo(float).eps
    blocks = np.array_split(np.random.default_rng(2).permutation(x), 3)
    w, backend = _select(blocks, 400, 600, 1)
    check_window(w, x, 400, 600)
    assert w.passes == 5
    assert backend.collected == [199]
    w, backend = _select(blocks, 400, 600, 1 << 20)  # a large cap: histogram + collect
    assert w.passes == 2
    w, backend = _select(blocks, 500, 501, 0)  # adjacent single keys: nothing between them
    check_window(w, x, 500, 501)
    assert (w.passes, backend.collected) == (4, [])


def test_continuous_data_takes_two_passes() -> None:
    x = np.random.default_rng(3).standard_normal(200_000)
    w, _ = _select(np.array_split(x, 5), 99_900, 100_100, 1 << 20)
    check_window(w, x, 99_900, 100_100)
    assert w.passes == 2


def test_empty_data_and_empty_windows() -> None:
    for blocks in ([], [np.empty(0)], [np.empty(0), np.empty(0)]):
        w = select_window(BlockBackend(blocks), 1, 1)
        assert (w.n, w.first, w.last, w.values.size, w.n_below, w.n_above, w.passes) == (0, 1, 0, 0, 0, 0, 1)
        assert BlockBackend(blocks).count() == 0
        assert BlockBackend(blocks).exact_sum_open(-np.inf, np.inf) == 0
    x = np.array([2.0, 1.0, 3.0])
    for lo, hi in [(3, 2), (5, 9), (-3, 0)]:
        w = select_window(BlockBackend([x]), lo, hi)
        check_window(w, x, lo, hi)
        assert w.covers(lo, hi) and w.values.size == 0
        check_window(window_in_memory(x, lo, hi), x, lo, hi)


def test_rank_window_methods() -> None:
    x = np.array([5.0, -0.0, 2.0, 2.0, 7.0, 1.0])
    w = window_in_memory(x, 2, 4)
    assert (w.first, w.last) == (2, 4)
    assert w.values.tolist() == [1.0, 2.0, 2.0]
    assert w.at(np.array([4, 2])).tolist() == [2.0, 1.0]
    assert w.covers(2, 4) and w.covers(3, 3) and not w.covers(1, 3) and not w.covers(2, 5)
    assert window_in_memory(x, 1, 6).covers(-5, 60)
    with pytest.raises(IndexError):
        w.at(np.array([5]))
    with pytest.raises(IndexError):
        w.at(np.array([1]))
    assert w.passes == 0
    assert isinstance(BlockBackend([x]), KeyBackend)


def test_bad_cap() -> None:
    for cap in (-1, 1.5, True):
        with pytest.raises(ValueError, match="cap"):
            select_window(BlockBackend([np.ones(3)]), 1, 2, cap=cap)  # type: ignore[arg-type]


def test_window_in_memory_does_not_modify_input() -> None:
    x = np.random.default_rng(4).standard_normal(1000)
    y = x.copy()
    window_in_memory(x, 10, 900)
    assert np.array_equal(x, y)


def test_a_wider_window_repeats_only_the_collect_pass() -> None:
    x = np.random.default_rng(5).standard_normal(50_000)
    backend = BlockBackend(np.array_split(x, 4))
    w = select_window(backend, 24_900, 25_100)
    check_window(w, x, 24_900, 25_100)
    assert (w.passes, backend.passes) == (2, 2)
    wider = select_window(backend, 20_000, 30_000)  # the top histogram is remembered
    check_window(wider, x, 20_000, 30_000)
    assert (wider.passes, backend.passes) == (1, 3)
    # refinements are remembered too; a returned histogram is a copy (mutating it changes nothing)
    ties = np.repeat([1.0, 1.0 + 2**-52, 1.0 + 2**-51], 1000)
    tb = BlockBackend([ties])
    first_pass = select_window(tb, 999, 2002, cap=0, fixed=False)
    again = select_window(tb, 998, 2003, cap=0, fixed=False)
    check_window(first_pass, ties, 999, 2002)
    check_window(again, ties, 998, 2003)
    assert (first_pass.passes, again.passes) == (5, 1)
    # fixed passes (the release paths): a refinement answered from memory is padded with a real pass
    padded = select_window(tb, 997, 2004, cap=0)
    check_window(padded, ties, 997, 2004)
    assert padded.passes == 4
    tb.histograms([(0, (1 << 64) - 1, 48)])[0][:] = 0
    check_window(select_window(tb, 1, 3000), ties, 1, 3000)
    assert tb.exact_sum_open(0.0, 2.0) == fraction_sum(ties, 0.0, 2.0)
