"""Order-preserving keys of doubles: order, ties, ±0 folded, round trip (reference: float comparisons)."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_reference import SPECIALS, doubles

from smoothdp.scale.keys import KEY_MAX, float_keys, keys_to_float

ADVERSARIAL = np.array([*SPECIALS, 3.0, 3.0, -3.0, 1e-310, -1e-310, 1e300, -1e300], dtype=np.float64)


def _bits(x: np.ndarray) -> list[int]:
    return np.asarray(x, dtype=np.float64).view(np.uint64).tolist()


def _check_order(x: np.ndarray) -> None:
    k = float_keys(x)
    assert k.dtype == np.uint64
    assert k.shape == x.shape
    # Every pair: key order = float order, key equality = float equality (−0 == +0 included).
    assert np.array_equal(np.less.outer(k, k), np.less.outer(x, x))
    assert np.array_equal(np.equal.outer(k, k), np.equal.outer(x, x))


def test_order_on_adversarial_doubles() -> None:
    _check_order(ADVERSARIAL)


def test_order_on_random_bit_patterns() -> None:
    bits = np.random.default_rng(7).integers(0, 2**64, size=400, dtype=np.uint64, endpoint=False)
    x = bits.view(np.float64)
    _check_order(x[~np.isnan(x)])


@settings(max_examples=200, deadline=None)
@given(st.lists(doubles, min_size=1, max_size=30))
def test_order_hypothesis(values: list[float]) -> None:
    _check_order(np.array(values, dtype=np.float64))


def test_known_keys() -> None:
    # From the definition: non-negative b -> b | 2^63, negative b -> ~b, on the IEEE bit pattern b.
    def ref(v: float) -> int:
        b = struct.unpack("<Q", struct.pack("<d", v + 0.0))[0]
        return (~b) & KEY_MAX if b >> 63 else b | (1 << 63)

    assert float_keys(ADVERSARIAL).tolist() == [ref(float(v)) for v in ADVERSARIAL]
    assert int(float_keys(np.array([0.0]))[0]) == 1 << 63
    assert int(float_keys(np.array([-0.0]))[0]) == 1 << 63
    assert int(float_keys(np.array([-np.inf]))[0]) == 0x000F_FFFF_FFFF_FFFF
    assert int(float_keys(np.array([np.inf]))[0]) == 0xFFF0_0000_0000_0000


def test_negative_zero_folds_into_positive_zero() -> None:
    k = float_keys(np.array([-0.0, 0.0, -0.0]))
    assert np.all(k == k[0])
    back = keys_to_float(k)
    assert _bits(back) == [0, 0, 0]  # +0.0, never −0.0


def test_round_trip() -> None:
    x = ADVERSARIAL
    assert _bits(keys_to_float(float_keys(x))) == _bits(x + 0.0)
    bits = np.random.default_rng(8).integers(0, 2**64, size=1000, dtype=np.uint64, endpoint=False)
    y = bits.view(np.float64)
    y = y[~np.isnan(y)]
    assert _bits(keys_to_float(float_keys(y))) == _bits(y + 0.0)


def test_inverse_on_keys() -> None:
    # keys_to_float is the inverse on the image: every key of a non-NaN double except the key of −0.0.
    k = np.random.default_rng(9).integers(0, 2**64, size=1000, dtype=np.uint64, endpoint=False)
    x = keys_to_float(k)
    keep = ~np.isnan(x) & ~((x == 0) & np.signbit(x))
    assert np.array_equal(float_keys(x[keep]), k[keep])


def test_input_untouched_and_shapes() -> None:
    x = np.array([-0.0, 1.0])
    float_keys(x)
    assert np.signbit(x[0])  # the caller's array is not modified
    assert float_keys(np.array(-0.0)).shape == ()
    assert keys_to_float(np.array(1 << 63, dtype=np.uint64)).shape == ()
    assert float_keys(np.empty(0)).size == 0
