"""Exact samplers of integer noise in integer arithmetic: Bernoulli(e^{−γ}), geometric, discrete Laplace.

Every outcome is decided by comparing **uniform integers** (numpy's ``Generator.integers``, which is
exactly uniform on its range) with integers: no floating-point ``exp`` or ``log`` takes part, so the
laws below hold exactly for the rational parameters given
(docs/theory/counting-queries.md#exact-integer-samplers; Canonne, Kamath & Steinke, *The discrete
Gaussian for differential privacy*, NeurIPS 2020, Algorithms 1 and 2, rearranged to run vectorized):

* :func:`bernoulli_exp_neg`: Bernoulli(e^{−γ}) for γ = num/den ∈ [0, 1], by the alternating series
  e^{−γ} = P(K odd), P(K ≥ k) = γ^{k−1}/(k−1)! (each step a Bernoulli(γ)·Bernoulli(1/k));
* :func:`bernoulli_exp_neg_rational`: any rational γ ≥ 0, as e^{−⌊γ⌋}·e^{−(γ−⌊γ⌋)};
* :func:`geometric`: P(G = g) = (1 − e^{−λ})e^{−λg} for a rational rate λ, as G = U + T·V with
  T = ⌈1/λ⌉, U ∈ {0, …, T−1} of mass ∝ e^{−λu} (by rejection) and V geometric with rate λT;
* :func:`discrete_laplace`: K = G₁ − G₂, P(K = k) ∝ e^{−λ|k|}.

Vectorized: each loop below runs over the *steps* of the algorithms (a few dozen for 10⁶ draws), never
over the draws; every step draws uniform integers for the draws still undecided.

The rate is a :class:`fractions.Fraction` with denominator ≤ 2⁶² (so that every product compared fits in
int64); :func:`rate_at_most` rounds a rate *down* onto such fractions (a larger noise scale: the guarantee
of a mechanism calibrated to the unrounded rate still holds).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_DENOMINATOR",
    "MIN_RATE",
    "bernoulli_exp_neg",
    "bernoulli_exp_neg_rational",
    "check_rate",
    "discrete_laplace",
    "geometric",
    "rate_at_most",
]

#: Largest denominator of a rate: products P·u < Q ≤ 2⁶² stay inside int64.
MAX_DENOMINATOR = 1 << 62
#: Smallest rate (largest noise scale, 2⁵⁰ ≈ 1.1·10¹⁵): T·V stays far inside int64.
MIN_RATE = Fraction(1, 1 << 50)

I64 = NDArray[np.int64]
Bools = NDArray[np.bool_]


def rate_at_most(rate: Fraction) -> Fraction:
    """The rate itself if its denominator is ≤ 2⁶², else ⌊rate·2⁶²⌋/2⁶² (≤ rate, relative loss
    ≤ 2⁻⁶²/rate ≤ 2⁻¹² at the smallest rate 2⁻⁵⁰). Rounding a rate down widens the noise."""
    rate = Fraction(rate)
    if rate.denominator <= MAX_DENOMINATOR:
        return rate
    return Fraction(math.floor(rate * MAX_DENOMINATOR), MAX_DENOMINATOR)


def check_rate(rate: Any, name: str = "rate") -> Fraction:
    """A rate λ (pmf ∝ e^{−λ|k|}) as a Fraction in [2⁻⁵⁰, ∞) with denominator ≤ 2⁶²."""
    try:
        fr = Fraction(rate)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be a finite positive rational or float; got {rate!r}") from err
    if fr < MIN_RATE:
        raise ValueError(f"{name} must be in [2^-50, inf) (a noise scale of at most 2^50); got {rate!r}")
    if fr.denominator > MAX_DENOMINATOR:
        raise ValueError(f"{name} must have a denominator of at most 2^62 (see rate_at_most); got {rate!r}")
    return fr


def _flat_size(size: int | tuple[int, ...] | None) -> tuple[tuple[int, ...], int]:
    if size is None:
        return (), 1
    shape = (int(size),) if isinstance(size, int | np.integer) else tuple(int(k) for k in size)
    if any(k < 0 for k in shape):
        raise ValueError(f"size must be non-negative; got {size!r}")
    return shape, math.prod(shape)


def bernoulli_exp_neg(num: I64 | int, den: int, n: int, rng: np.random.Generator) -> Bools:
    """n independent Bernoulli(e^{−num_i/den}) draws, for integers 0 ≤ num_i ≤ den ≤ 2⁶².

    CKS20 Algorithm 1: K = the first k ≥ 1 at which a Bernoulli(γ/k) fails; P(K ≥ k) = γ^{k−1}/(k−1)!,
    so P(K odd) = Σ_m (−γ)^m/m! = e^{−γ}. Bernoulli(γ/k) is [W < num]·[J = 0] with W uniform on
    {0, …, den−1} and J uniform on {0, …, k−1}, independent: probability (num/den)·(1/k).
    """
    if np.ndim(num) == 0:
        num = int(num)  # one numerator for every draw (a numpy scalar too)
    certain = isinstance(num, int) and num == den  # γ = 1: Bernoulli(γ) always succeeds, draw nothing
    nums = num if isinstance(num, int) else np.asarray(num, dtype=np.int64)
    if certain:
        go_on = np.ones(n, dtype=np.bool_)
    else:  # k = 1: Bernoulli(γ) only
        go_on = rng.integers(0, den, size=n, dtype=np.int64) < nums
    out = ~go_on  # K = 1 is odd
    idx = np.flatnonzero(go_on)
    if not isinstance(nums, int):
        nums = nums[idx]
    k = 2
    while idx.size:
        # Bernoulli(1/k) first (rarely true), then Bernoulli(γ) only where it is: the same law.
        go_on = rng.integers(0, k, size=idx.size, dtype=np.int64) == 0
        if not certain:
            hit = np.flatnonzero(go_on)
            sub = nums if isinstance(nums, int) else nums[hit]
            go_on[hit] = rng.integers(0, den, size=hit.size, dtype=np.int64) < sub
        out[idx[~go_on]] = k % 2 == 1
        idx = idx[go_on]
        if not isinstance(nums, int):
            nums = nums[go_on]
        k += 1
    return out


def bernoulli_exp_neg_rational(gamma: Fraction, n: int, rng: np.random.Generator) -> Bools:
    """n independent Bernoulli(e^{−γ}) draws for one rational γ ≥ 0 with denominator ≤ 2⁶².

    e^{−γ} = (e^{−1})^{⌊γ⌋}·e^{−(γ − ⌊γ⌋)}: a draw succeeds when ⌊γ⌋ Bernoulli(e^{−1}) and one
    Bernoulli(e^{−frac}) all succeed (independent). The ⌊γ⌋ rounds stop once every draw has failed.
    """
    gamma = Fraction(gamma)
    whole = math.floor(gamma)
    frac = gamma - whole
    alive = np.arange(n)
    rounds = 0
    while alive.size and rounds < whole:
        alive = alive[bernoulli_exp_neg(1, 1, alive.size, rng)]
        rounds += 1
    if alive.size and frac:
        alive = alive[bernoulli_exp_neg(frac.numerator, frac.denominator, alive.size, rng)]
    out = np.zeros(n, dtype=np.bool_)
    out[alive] = True
    return out


def geometric(rate: Fraction, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> I64:
    """Geometric draws G ≥ 0 with P(G = g) = (1 − e^{−λ})·e^{−λg}, λ = ``rate`` (exact).

    λ ≥ 1: G counts the successes of Bernoulli(e^{−λ}) before the first failure. λ < 1: G = U + T·V with
    T = ⌈1/λ⌉ ≥ 2, U on {0, …, T−1} with P(U = u) ∝ e^{−λu} (a uniform u accepted with probability
    e^{−λu}, λu < 1) and V counting the successes of Bernoulli(e^{−λT}); every g ≥ 0 is u + Tv in
    exactly one way, and P(U = u, V = v) ∝ e^{−λ(u + Tv)}
    (docs/theory/counting-queries.md#exact-integer-samplers).
    """
    lam = check_rate(rate)
    shape, n = _flat_size(size)
    p, q = lam.numerator, lam.denominator
    block = 1 if lam >= 1 else -(-q // p)  # T = ⌈q/p⌉ ≥ 2 for λ < 1; p·u ≤ p·(T − 1) < q ≤ 2⁶²
    low = _truncated_geometric(p, q, block, n, rng) if block > 1 else np.zeros(n, dtype=np.int64)
    high = _run_lengths(lam * block, n, rng)  # λT ∈ [1, 1 + λ) for λ < 1, λ itself for λ ≥ 1
    if n and int(high.max()) > (np.iinfo(np.int64).max - block) // block:  # P ≤ e^{−2^12}: never
        raise OverflowError("geometric draw beyond int64")
    out: I64 = low + block * high
    return out.reshape(shape)


def _truncated_geometric(p: int, q: int, block: int, n: int, rng: np.random.Generator) -> I64:
    """n draws of U on {0, …, T−1} with P(U = u) ∝ e^{−λu}, λ = p/q, T = ``block``: uniform candidates,
    each accepted with probability e^{−λu}; the first n accepted, in stream order, are i.i.d. of that law."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        missing = n - filled
        m = int(missing / 0.6 + 4.0 * math.sqrt(missing) + 16)  # acceptance > 0.43 (sizes the chunk only)
        u = rng.integers(0, block, size=m, dtype=np.int64)
        kept = u[bernoulli_exp_neg(p * u, q, m, rng)][:missing]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out


def _run_lengths_chunk(missing: int, fail_rate: float) -> int:
    """Trials per chunk: enough for ``missing`` failures with high probability (the law does not depend
    on it; a short chunk only means another one)."""
    return int(missing / fail_rate + 4.0 * math.sqrt(missing / fail_rate) + 16)


def _run_lengths(step: Fraction, n: int, rng: np.random.Generator) -> I64:
    """n i.i.d. counts of successes before the first failure of Bernoulli(e^{−step}) trials: one stream
    of trials cut at its failures (the run lengths of an i.i.d. stream are i.i.d. geometric)."""
    out = np.empty(n, dtype=np.int64)
    filled, carried = 0, 0  # carried: successes at the end of the previous chunk, before its next failure
    fail_rate = 1.0 - math.exp(-float(step))  # only sizes the chunks; the law does not depend on it
    while filled < n:
        missing = n - filled
        m = _run_lengths_chunk(missing, fail_rate)
        fails = np.flatnonzero(~bernoulli_exp_neg_rational(step, m, rng))
        if fails.size == 0:
            carried += m
            continue
        lengths = np.diff(fails, prepend=-1) - 1
        lengths[0] += carried
        take = lengths[:missing]
        out[filled : filled + take.size] = take
        filled += take.size
        carried = m - 1 - int(fails[-1]) if take.size == lengths.size else 0
    return out


def discrete_laplace(rate: Fraction, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> I64:
    """Discrete Laplace draws: P(K = k) = tanh(λ/2)·e^{−λ|k|} on ℤ, exactly, as K = G₁ − G₂.

    (Σ_j p²e^{−λ(2j + |k|)} = p²e^{−λ|k|}/(1 − e^{−2λ}) = tanh(λ/2)e^{−λ|k|}, p = 1 − e^{−λ}.)
    """
    shape, n = _flat_size(size)
    g = geometric(rate, 2 * n, rng)
    out: I64 = g[:n] - g[n:]
    return out.reshape(shape)
