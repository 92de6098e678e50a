"""Order-preserving 64-bit keys of doubles, for radix selection (docs/scale.md).

``float_keys`` maps every double that is not NaN to an unsigned 64-bit integer so that

    x < y  ⇔  key(x) < key(y)      and      x == y  ⇔  key(x) == key(y),

with −0.0 and +0.0 mapped to the SAME key (they compare equal, so a rank is the same whichever is stored;
−0.0 is folded into +0.0 before keying). ±inf are ordinary doubles here: −inf gets the smallest key of all
and +inf the largest. Subnormals are ordered like any other double.

The map is the classic sign-magnitude to two's-order trick on the IEEE 754 bit pattern b: a non-negative
double (sign bit 0) gets ``b | 2^63`` (its magnitude bits are already in increasing order, and the set top bit
puts it above every negative one); a negative double gets ``~b`` (flipping all bits reverses the order of the
magnitudes and clears the top bit). Both branches are one XOR with a mask built from the sign by an arithmetic
shift, so the map is branch-free and vectorized.

NaN is never passed: the callers' data policy (``smoothdp.validation``) imputes NaN by a public value
before any data-dependent work. A NaN would get a key above +inf or below −inf (depending on its sign bit),
i.e. it would be ordered, silently, which is why it must not reach these functions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["KEY_MAX", "float_keys", "keys_to_float", "top_digits"]

#: The largest key (that of +inf is smaller; every key lies in [0, KEY_MAX]).
KEY_MAX = (1 << 64) - 1
_SIGN = np.uint64(1 << 63)


def float_keys(x: ArrayLike) -> NDArray[np.uint64]:
    """The order-preserving uint64 keys of the doubles ``x`` (no NaN; −0.0 gets the key of +0.0).

    ``float_keys(x)[i] < float_keys(x)[j]`` iff ``x[i] < x[j]``, and the keys are equal iff the doubles
    compare equal. A new array of the shape of ``x``.
    """
    a = np.array(x, dtype=np.float64)  # a copy, of any shape (0-d included)
    a += 0.0  # −0.0 + 0.0 = +0.0 (round to nearest): folds −0 into +0, leaves every other double alone
    out = np.empty(a.shape, dtype=np.int64)
    np.right_shift(a.view(np.int64), 63, out=out)  # arithmetic shift: −1 for a set sign bit, 0 otherwise
    keys = out.view(np.uint64)
    np.bitwise_or(keys, _SIGN, out=keys)  # all ones for a negative double (→ ~b), else 2^63 (→ b | 2^63)
    np.bitwise_xor(keys, a.view(np.uint64), out=keys)
    return keys


def keys_to_float(k: ArrayLike) -> NDArray[np.float64]:
    """The inverse of :func:`float_keys`: the doubles of the keys ``k`` (the key of zero gives +0.0)."""
    keys = np.asarray(k, dtype=np.uint64)
    # A key with the top bit set is a non-negative double (b = k ^ 2^63); otherwise negative (b = ~k).
    out = np.empty(keys.shape, dtype=np.int64)
    np.right_shift(keys.view(np.int64), 63, out=out)  # −1 for a set top bit, 0 otherwise
    np.invert(out, out=out)  # 0 for a set top bit, −1 (all ones) otherwise
    bits = out.view(np.uint64)
    np.bitwise_or(bits, _SIGN, out=bits)
    np.bitwise_xor(bits, keys, out=bits)
    return bits.view(np.float64)


def top_digits(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """``float_keys(x) >> 48`` (the top 16 bits of every key, as int64 in [0, 2^16)), without the keys: the
    bits' arithmetic shift s = b >> 48 is sign-extended, so the key's top digit is ~s for a negative double
    and s + 2^15 otherwise, i.e. s ^ ((s >> 63) | 2^15). Three operations on one new array (−0 folded)."""
    a = np.asarray(x, dtype=np.float64) + 0.0  # a new array; −0.0 + 0.0 = +0.0
    s = a.view(np.int64)
    np.right_shift(s, 48, out=s)
    mask = np.right_shift(s, 63)
    np.bitwise_or(mask, 1 << 15, out=mask)
    np.bitwise_xor(s, mask, out=s)
    return s
