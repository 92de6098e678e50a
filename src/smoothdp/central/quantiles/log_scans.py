"""Log-space scans of JointExp's dynamic programmes: blocked log-add-exp prefix scans whose float error grows
with the depth :func:`scan_depth`, not with n (docs/theory/quantiles.md#jointexp), column log-sums, sliding
windows and the Toeplitz kernel exp(−c·|d − s|) in O(n).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.keywords import check_keywords_of

__all__ = [
    "LN_TINY",
    "lae_scan",
    "log_sum",
    "log_toeplitz_abs",
    "lse_rows",
    "scan_depth",
    "window_logsum",
]

#: Block length of the blocked log-add-exp scans of JointExp (their error grows with the depth, not with n).
_SCAN_BLOCK = 64
#: The smallest positive distance between two float64 numbers is 2^-1074: ln 2^-1074 ≥ −745.
LN_TINY = 745.0


def scan_depth(length: int) -> int:
    """A bound D(L) on the number of chained log-add-exp operations behind any entry of
    :func:`lae_scan` on L entries: L - 1 for L ≤ B, else B + D(⌈L/B⌉)."""
    if length <= _SCAN_BLOCK:
        return max(0, length - 1)
    return _SCAN_BLOCK + scan_depth(-(-length // _SCAN_BLOCK))


def lae_scan(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inclusive log-add-exp prefix scan along the last axis of a 2-D array, blocked: a sequential scan of
    B entries inside each block, the same scan (recursively) over the block totals, one log-add-exp to
    combine. Same values as ``np.logaddexp.accumulate`` up to rounding, but every entry is the end of a
    chain of at most :func:`scan_depth` operations instead of L."""
    rows, length = v.shape
    if length <= _SCAN_BLOCK:
        out: NDArray[np.float64] = np.logaddexp.accumulate(v, axis=1)
        return out
    nb = -(-length // _SCAN_BLOCK)
    padded = np.full((rows, nb * _SCAN_BLOCK), -np.inf)
    padded[:, :length] = v
    blocks = np.logaddexp.accumulate(padded.reshape(rows, nb, _SCAN_BLOCK), axis=2)
    before = lae_scan(np.ascontiguousarray(blocks[:, :, -1]))
    blocks[:, 1:, :] = np.logaddexp(blocks[:, 1:, :], before[:, :-1, None])
    result: NDArray[np.float64] = blocks.reshape(rows, nb * _SCAN_BLOCK)[:, :length]
    return result


def lse_rows(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """log Σ_r exp(a[r, i]) per column, as top + log Σ exp(a − top) (−inf for an all −inf column)."""
    top = np.max(a, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: NDArray[np.float64] = safe + np.log(np.sum(np.exp(a - safe), axis=0))
    return out


def window_logsum(g: NDArray[np.float64], w: int) -> NDArray[np.float64]:
    """out[r] = log Σ_{l=max(0, r−w+1)}^{r} exp(g[l]), without subtraction: blocks of w, a window is a block
    suffix plus the next block's prefix (both blocked scans)."""
    n = g.size
    nb = -(-n // w)
    padded = np.concatenate((g, np.full(nb * w - n, -np.inf))).reshape(nb, w)
    pre = lae_scan(padded).ravel()
    suf = lae_scan(np.ascontiguousarray(padded[:, ::-1]))[:, ::-1].ravel()
    r = np.arange(n)
    start = r - w + 1
    inside = (start <= 0) | (start % w == 0)
    out = pre[r].copy()
    cross = ~inside
    out[cross] = np.logaddexp(suf[start[cross]], pre[r[cross]])
    return out


def log_toeplitz_abs(h: NDArray[np.float64], c: float, s: float) -> NDArray[np.float64]:
    """out[i] = log Σ_{i' < i} exp(h[i'] − c·|i − i' − s|) in O(n): the kernel splits at d = i − i' = s into
    two exponentials, one a (blocked) running log-add-exp sum, the other a sliding window."""
    n = h.size
    i = np.arange(n, dtype=np.float64)
    d_a = max(1, math.ceil(s))
    # d ≥ d_a (so d ≥ s): exp(c·s − c·i)·exp(c·i'), summed over i' ≤ i − d_a.
    acc = lae_scan((h + c * i)[None, :])[0]
    part_a = np.full(n, -np.inf)
    ok = i >= d_a
    part_a[ok] = acc[(i[ok] - d_a).astype(np.int64)] + c * s - c * i[ok]
    if d_a == 1:
        return part_a
    # 1 ≤ d ≤ d_a − 1 (so d < s): exp(c·i − c·s)·exp(−c·i'), over i' ∈ [i − d_a + 1, i − 1].
    win = window_logsum(h - c * i, d_a - 1)
    part_b = np.full(n, -np.inf)
    part_b[1:] = win[:-1] + c * i[1:] - c * s
    return np.logaddexp(part_a, part_b)


def log_sum(w: NDArray[np.float64]) -> float:
    """ln Σ exp(w) as top + ln Σ exp(w − top) (−inf when every weight is −inf)."""
    top = float(np.max(w))
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(w - top))))


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
