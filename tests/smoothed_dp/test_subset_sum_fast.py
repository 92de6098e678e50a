"""The counting subset-sum recursion and the shared-prefix δ(x) of the quantized average.

Checked against (1) exact enumeration of every subset with rational arithmetic (small multisets with many
ties), (2) the hypergeometric law in closed form (0/1 values, large enough for the power-of-two scaling of the
counts to engage) and (3) the previous implementation: the normalised per-record recursion and its δ(x) loop
(one recursion per removed value), copied below as the reference, to 1e-12 relative.
"""

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import smoothed_brute as brute

from smoothdp.smoothed_dp.quantized import (
    QuantizedSamplingAverage,
    _laws_without_each,
    _scale_exponent,
    quantized_average_deltas,
    subset_sum_laws,
)

# -- the previous implementation (reference) -----------------------------------------------------------------


def reference_subset_sum_laws(values, sizes):
    """law_i[t] = ((i − t)/i)·law_{i−1}[t] + (t/i)·(law_{i−1}[t − 1] shifted by v_i), record by record."""
    v = np.asarray(values, dtype=np.int64)
    t_max = int(sizes)
    width = t_max * int(v.max(initial=0)) + 1
    law = np.zeros((t_max + 1, width))
    law[0, 0] = 1.0
    t = np.arange(t_max + 1, dtype=np.float64)
    for i, value in enumerate(v, start=1):
        keep = np.clip((i - t) / i, 0.0, 1.0)[:, None]
        take = (np.minimum(t, i) / i)[1:, None]
        new = law * keep
        if value == 0:
            new[1:] += take * law[:-1]
        else:
            new[1:, value:] += take * law[:-1, :-value]
        law = new
    return law


def reference_output_matrix(sum_law, shifts, t, base, mechanism):
    s = np.arange(sum_law.size)
    outputs = mechanism.output_of_sum(s[None, :] + shifts[:, None] + base, t) - mechanism.low
    levels = mechanism.high - mechanism.low + 1
    weights = np.broadcast_to(sum_law, outputs.shape)
    used = weights > 0
    flat = (np.arange(shifts.size)[:, None] * levels + outputs)[used]
    counts = np.bincount(flat, weights=weights[used], minlength=shifts.size * levels)
    return counts.reshape(shifts.size, levels)


def reference_deltas(mechanism, codes, epsilons, neighbours):
    eps = np.asarray(epsilons, dtype=float)
    x = np.asarray(codes, dtype=np.int64)
    n = x.size
    t = mechanism.sample_size(n)
    eta = t / n
    c = np.exp(eps)[:, None]
    levels = mechanism.levels
    if neighbours == "all":
        plan = [(int(a), levels[levels != a]) for a in np.unique(x)]
    else:
        plan = [(int(x.min()), np.array([mechanism.high])), (int(x.max()), np.array([mechanism.low]))]
    best = np.full(eps.size, -1.0)
    where = [(-1, -1, "")] * eps.size
    table = {}  # (a, b, direction) → divergence per ε
    for a, targets in plan:
        rest = np.delete(x, np.flatnonzero(x == a)[0]) - mechanism.low
        law = reference_subset_sum_laws(rest, t)
        common = reference_output_matrix(law[t], np.array([0]), t, t * mechanism.low, mechanism)[0]
        sampled = reference_output_matrix(
            law[t - 1], np.append(targets, a) - mechanism.low, t, t * mechanism.low, mechanism
        )
        p_x = (1.0 - eta) * common + eta * sampled[-1]
        p_nb = (1.0 - eta) * common[None, :] + eta * sampled[:-1]
        forward = np.maximum(p_x[None, None, :] - c[:, :, None] * p_nb[None, :, :], 0.0).sum(axis=-1)
        backward = np.maximum(p_nb[None, :, :] - c[:, :, None] * p_x[None, None, :], 0.0).sum(axis=-1)
        for values, direction in ((forward, "forward"), (backward, "backward")):
            for j, b in enumerate(targets.tolist()):
                table[(a, b, direction)] = values[:, j]
            i = np.argmax(values, axis=1)
            top = values[np.arange(eps.size), i]
            for e in np.flatnonzero(top > best):
                best[e] = top[e]
                where[e] = (a, int(targets[i[e]]), direction)
    return np.clip(best, 0.0, 1.0), where, table


# -- independent exact values --------------------------------------------------------------------------------


def enumerated_laws(values, sizes):
    """Every t-subset listed; exact rationals."""
    width = sizes * max(values, default=0) + 1
    law = [[Fraction(0)] * width for _ in range(sizes + 1)]
    for t in range(sizes + 1):
        subsets = list(combinations(values, t))
        for subset in subsets:
            law[t][sum(subset)] += Fraction(1, len(subsets))
    return law


def assert_law_equals(got, exact, rel=1e-12):
    """Same support (zero exactly where the exact law is zero), and each entry within ``rel``."""
    want = np.array([[float(p) for p in row] for row in exact])
    assert got.shape == want.shape
    assert np.array_equal(got > 0, want > 0)
    np.testing.assert_allclose(got, want, rtol=rel, atol=0.0)


def random_multisets(seed, count):
    """Small multisets with many ties: n ≤ 9 values drawn from a range of 1..6 values (offset 0..3)."""
    gen = np.random.default_rng(seed)
    for _ in range(count):
        n = int(gen.integers(1, 10))
        spread = int(gen.integers(1, 7))
        values = (gen.integers(0, spread, size=n) + int(gen.integers(0, 4))).tolist()
        yield values, int(gen.integers(0, n + 1))


# -- tests -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_subset_sum_laws_match_enumeration_and_previous_recursion(seed):
    for values, t in random_multisets(seed, 25):
        got = subset_sum_laws(values, t)
        assert_law_equals(got, enumerated_laws(values, t))
        old = reference_subset_sum_laws(values, t)
        np.testing.assert_allclose(got, old, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize(("seed", "spread"), [(11, 3), (12, 9), (13, 40)])
def test_subset_sum_laws_many_records_match_enumeration(seed, spread):
    # 16 records or more: folded in increasing order in a table widened as the values grow
    gen = np.random.default_rng(seed)
    for n, t in ((16, 4), (21, 3), (30, 2)):
        values = (gen.integers(0, spread, size=n) + int(gen.integers(0, 5))).tolist()
        got = subset_sum_laws(values, t)
        assert_law_equals(got, enumerated_laws(values, t))
        np.testing.assert_allclose(got, reference_subset_sum_laws(values, t), rtol=1e-12, atol=0.0)


def test_subset_sum_laws_hand_values():
    # {1, 1, 3}: 2-subsets {1, 1}, {1, 3}, {1, 3} → sums 2 (1/3), 4 (2/3)
    law = subset_sum_laws([1, 3, 1], 2)
    assert law.shape == (3, 7)
    assert law[2, 2] == pytest.approx(1 / 3, rel=1e-15) and law[2, 4] == pytest.approx(2 / 3, rel=1e-15)
    assert law[1, 1] == pytest.approx(2 / 3, rel=1e-15) and law[1, 3] == pytest.approx(1 / 3, rel=1e-15)
    assert law[0].tolist() == [1.0] + [0.0] * 6
    # all values equal: the t-subset sum is t·v surely
    law = subset_sum_laws([4] * 5, 3)
    for t in range(4):
        assert law[t, 4 * t] == 1.0 and law[t].sum() == 1.0
    assert subset_sum_laws([], 0).tolist() == [[1.0]]


def test_subset_sum_laws_input_errors():
    with pytest.raises(ValueError, match="non-negative"):
        subset_sum_laws([1, -1], 1)
    with pytest.raises(ValueError, match="sizes must be"):
        subset_sum_laws([1, 2], 3)


def test_scaled_counts_match_hypergeometric_law():
    # 0/1 values: the t-subset sum is hypergeometric. C(3000, 200) > 2^1000, so the counts are scaled.
    ones, zeros, t = 1300, 1700, 200
    assert _scale_exponent(ones + zeros, t) > 0
    values = np.array([1] * ones + [0] * zeros)
    law = subset_sum_laws(values, t)
    total = math.comb(ones + zeros, t)
    exact = np.array(
        [float(Fraction(math.comb(ones, s) * math.comb(zeros, t - s), total)) for s in range(t + 1)]
    )
    assert law.shape == (t + 1, t + 1)
    np.testing.assert_allclose(law[t], exact, rtol=1e-12, atol=0.0)
    assert law[1, 1] == pytest.approx(ones / (ones + zeros), rel=1e-15)


@pytest.mark.parametrize("seed", [4, 5])
def test_laws_without_each_value_match_enumeration(seed):
    gen = np.random.default_rng(seed)
    for _ in range(12):
        n = int(gen.integers(2, 9))
        values = gen.integers(0, int(gen.integers(1, 6)), size=n)
        t = int(gen.integers(0, n))
        distinct = np.unique(values).tolist()
        removed = distinct + [int(values.min())] * int(np.count_nonzero(values == values.min()) > 1)
        laws = list(_laws_without_each(values, removed, t))
        assert len(laws) == len(removed)
        for r, law in zip(removed, laws, strict=True):
            rest = np.delete(values, np.flatnonzero(values == r)[0]).tolist()
            exact = enumerated_laws(rest, t)
            # the shared table is as wide as the full data needs; the rest's law fills its left part
            assert np.all(law[:, len(exact[0]) :] == 0)
            assert_law_equals(law[:, : len(exact[0])], exact)


def test_laws_without_each_errors():
    with pytest.raises(ValueError, match="sub-multiset"):
        list(_laws_without_each(np.array([0, 1, 2]), [1, 1], 1))
    with pytest.raises(ValueError, match="sizes must be"):
        list(_laws_without_each(np.array([0, 1, 2]), [1], 3))


def heuristic_profile(codes, t, low, high, eps):
    """δ(x) against the two heuristic neighbours (minimum → high, maximum → low), exactly."""
    c = Fraction(math.exp(eps))

    def law(x):
        out: dict[int, Fraction] = {}
        for total, pr in brute.sampled_sum_laws(tuple(x), t).items():
            o = brute.round_half_away(total, t)
            out[o] = out.get(o, 0) + pr
        return out

    p = law(codes)
    best = Fraction(0)
    for a, b in ((min(codes), high), (max(codes), low)):
        nb = list(codes)
        nb[nb.index(a)] = b
        q = law(nb)
        best = max(best, brute.divergence(p, q, c), brute.divergence(q, p, c))
    return best


@pytest.mark.parametrize(
    ("codes", "t", "low", "high"),
    [
        ((-2, 0, 0, 1, 3, 3, -2), 3, -2, 3),
        ((1, 1, 1, 2, -1, 0, 2, 1), 2, -3, 4),
        ((0, 0, 0, 0, 0), 2, -1, 1),
        ((-4, 5, 5, -4, 0, 1), 4, -4, 5),
    ],
)
def test_deltas_match_enumeration(codes, t, low, high):
    mech = QuantizedSamplingAverage(size=t, low=low, high=high)
    eps = [0.3, 1.0, 2.5]
    got_all, _ = quantized_average_deltas(mech, codes, eps, neighbours="all")
    got_heur, _ = quantized_average_deltas(mech, codes, eps, neighbours="heuristic")
    for k, e in enumerate(eps):
        assert got_all[k] == pytest.approx(float(brute.quantized_profile(codes, t, low, high, e)), rel=1e-12)
        assert got_heur[k] == pytest.approx(float(heuristic_profile(codes, t, low, high, e)), rel=1e-12)


@pytest.mark.parametrize(("n", "low", "high", "seed"), [(40, -12, 12, 6), (60, -127, 128, 7), (25, -3, 3, 8)])
def test_deltas_match_previous_implementation(n, low, high, seed):
    gen = np.random.default_rng(seed)
    mech = QuantizedSamplingAverage(low=low, high=high)
    centre = int(gen.integers(low // 2, high // 2 + 1))
    spread = max(1, (high - low) // 6)
    codes = np.clip(np.round(gen.normal(centre, spread, size=n)), low, high).astype(np.int64)
    eps = [0.5, 1.0, 2.0, 3.0]
    for neighbours in ("all", "heuristic"):
        got, where = quantized_average_deltas(mech, codes, eps, neighbours=neighbours)
        want, want_where, table = reference_deltas(mech, codes, eps, neighbours)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0)
        # the worst neighbour: the same one, or one whose divergence ties with it to rounding
        for k in range(len(eps)):
            assert where[k] == want_where[k] or table[where[k]][k] == pytest.approx(want[k], rel=1e-12)
        assert sum(w == v for w, v in zip(where, want_where, strict=True)) >= len(eps) // 2
