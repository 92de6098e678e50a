r"""Exact samplers of integer noise in integer arithmetic: $\mathrm{Bernoulli}(e^{-\gamma})$, geometric,
discrete Laplace.

Every outcome is decided by comparing **uniform integers** (numpy's ``Generator.integers``, which is
exactly uniform on its range) with integers: no floating-point ``exp`` or ``log`` takes part, so the
laws below hold exactly for the rational parameters given
(docs/theory/counting-queries.md#exact-integer-samplers; Canonne, Kamath & Steinke, *The discrete
Gaussian for differential privacy*, NeurIPS 2020, Algorithms 1 and 2, rearranged to run vectorized):

* :func:`bernoulli_exp_neg`: $\mathrm{Bernoulli}(e^{-\gamma})$ for
  $\gamma = \mathrm{num}/\mathrm{den} \in [0, 1]$, by the alternating series $e^{-\gamma} = P(K \text{ odd})$,
  $P(K \ge k) = \gamma^{k-1}/(k-1)!$ (each step a $\mathrm{Bernoulli}(\gamma) \cdot \mathrm{Bernoulli}(1/k)$);
* :func:`bernoulli_exp_neg_rational`: any rational $\gamma \ge 0$, as
  $e^{-\lfloor\gamma\rfloor} \cdot e^{-(\gamma-\lfloor\gamma\rfloor)}$;
* :func:`geometric`: $P(G = g) = (1 - e^{-\lambda})e^{-\lambda g}$ for a rational rate $\lambda$: for
  $\lambda \ge 2^{-6}$ by inversion of one uniform 64-bit word against an exact table of
  $\lfloor e^{-\lambda g} \cdot 2^{64}\rfloor$ (built once per rate in ball arithmetic; a word equal to a
  table entry takes more words); below, as $G = U + T \cdot V$ with $T = \lceil 1/\lambda\rceil$,
  $U \in \{0, \ldots, T-1\}$ of mass $\propto e^{-\lambda u}$ (by rejection) and V geometric with rate
  $\lambda T$;
* :func:`discrete_laplace`: $K = G_1 - G_2$, $P(K = k) \propto e^{-\lambda\vert k\vert}$.

Vectorized: each loop below runs over the *steps* of the algorithms (a few dozen for $10^6$ draws), never over
the draws; every step draws uniform integers for the draws still undecided.

The rate is a :class:`fractions.Fraction` with denominator $\le 2^{62}$ (so that every product compared fits
in int64); :func:`rate_at_most` rounds a rate *down* onto such fractions (a larger noise scale: the guarantee
of a mechanism calibrated to the unrounded rate still holds).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_DENOMINATOR",
    "MIN_RATE",
    "TABLE_MIN_RATE",
    "bernoulli_exp_neg",
    "bernoulli_exp_neg_rational",
    "check_rate",
    "discrete_laplace",
    "geometric",
    "geometric_by_table",
    "geometric_by_trials",
    "rate_at_most",
]

#: Largest denominator of a rate: products P·u < Q ≤ 2⁶² stay inside int64.
MAX_DENOMINATOR = 1 << 62
#: Smallest rate (largest noise scale, 2⁵⁰ ≈ 1.1·10¹⁵): T·V stays far inside int64.
MIN_RATE = Fraction(1, 1 << 50)

I64 = NDArray[np.int64]
Bools = NDArray[np.bool_]


def rate_at_most(rate: Fraction) -> Fraction:
    r"""The rate itself if its denominator is $\le 2^{62}$, else
    $\lfloor \mathrm{rate} \cdot 2^{62}\rfloor/2^{62}$ ($\le$ rate, relative loss
    $\le 2^{-62}/\mathrm{rate} \le 2^{-12}$ at the smallest rate $2^{-50}$). Rounding a rate down widens the
    noise."""
    rate = Fraction(rate)
    if rate.denominator <= MAX_DENOMINATOR:
        return rate
    return Fraction(math.floor(rate * MAX_DENOMINATOR), MAX_DENOMINATOR)


def check_rate(rate: Any, name: str = "rate") -> Fraction:
    r"""A rate $\lambda$ (pmf $\propto e^{-\lambda\vert k\vert}$) as a Fraction in $[2^{-50}, \infty)$ with
    denominator $\le 2^{62}$."""
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
    r"""n independent $\mathrm{Bernoulli}(e^{-\mathrm{num}_i/\mathrm{den}})$ draws, for integers
    $0 \le \mathrm{num}_i \le \mathrm{den} \le 2^{62}$.

    CKS20 Algorithm 1: K = the first $k \ge 1$ at which a $\mathrm{Bernoulli}(\gamma/k)$ fails;
    $P(K \ge k) = \gamma^{k-1}/(k-1)!$, so $P(K \text{ odd}) = \sum_m (-\gamma)^m/m! = e^{-\gamma}$.
    $\mathrm{Bernoulli}(\gamma/k)$ is $[W < \mathrm{num}] \cdot [J = 0]$ with W uniform on
    $\{0, \ldots, \mathrm{den}-1\}$ and J uniform on $\{0, \ldots, k-1\}$, independent: probability
    $(\mathrm{num}/\mathrm{den}) \cdot (1/k)$.
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
    r"""n independent $\mathrm{Bernoulli}(e^{-\gamma})$ draws for one rational $\gamma \ge 0$ with denominator
    $\le 2^{62}$.

    $e^{-\gamma} = (e^{-1})^{\lfloor\gamma\rfloor} \cdot e^{-(\gamma - \lfloor\gamma\rfloor)}$: a draw
    succeeds when $\lfloor\gamma\rfloor$ $\mathrm{Bernoulli}(e^{-1})$ and one
    $\mathrm{Bernoulli}(e^{-\mathrm{frac}})$ all succeed (independent). The $\lfloor\gamma\rfloor$ rounds stop
    once every draw has failed.
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
    r"""Geometric draws $G \ge 0$ with $P(G = g) = (1 - e^{-\lambda}) \cdot e^{-\lambda g}$, $\lambda$ =
    ``rate`` (exact).

    For $\lambda \ge 2^{-6}$ (:data:`TABLE_MIN_RATE`): by inversion against an exact table
    (:func:`geometric_by_table`: one uniform 64-bit word per draw); below, from Bernoulli trials
    (:func:`geometric_by_trials`).
    """
    lam = check_rate(rate)
    if lam >= TABLE_MIN_RATE:
        return geometric_by_table(lam, size, rng)
    return geometric_by_trials(lam, size, rng)


#: Smallest rate drawn by the table (it has ⌊64·ln 2/λ⌋ + 1 ≤ 2,840 entries, built in about 30 ms).
TABLE_MIN_RATE = Fraction(1, 1 << 6)


#: Buckets of the table's lookup: the top 16 bits of a word.
_BUCKET_SHIFT = np.uint64(48)


@functools.lru_cache(maxsize=32)
def _lookup(p: int, q: int) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.bool_]]:
    """The table F (decreasing) and, per bucket of words with the same top 16 bits, #{g : F_g > a} for
    every word a of the bucket and whether a table entry lies in the bucket (then it is searched)."""
    table = _thresholds(p, q)
    ascending = table[::-1]
    starts = np.arange(1 << 16, dtype=np.uint64) << _BUCKET_SHIFT
    ends = starts | np.uint64((1 << 48) - 1)
    count = (table.size - np.searchsorted(ascending, ends, side="right")).astype(np.int64)
    mixed = np.searchsorted(ascending, starts, side="left") != np.searchsorted(ascending, ends, side="right")
    return table, count, mixed


@functools.lru_cache(maxsize=32)
def _thresholds(p: int, q: int) -> NDArray[np.uint64]:
    """F_g = ⌊e^{−λg}·2⁶⁴⌋ for g = 1 … g_max (every g with F_g ≥ 1), λ = p/q, computed in ball arithmetic
    and accepted only where the ball decides the floor (more precision otherwise). Decreasing in g."""
    from flint import arb, ctx

    g_max = math.floor(64 * math.log(2) * q / p) + 2
    out = []
    prec = 192
    g = 1
    while g <= g_max:
        with ctx.workprec(prec):
            v = (-(arb(p) / arb(q)) * g).exp() * arb(2) ** 64
            f = v.floor().unique_fmpz()
        if f is None:  # the ball straddles an integer: more bits
            prec *= 2
            continue
        if int(f) < 1:
            break
        out.append(int(f))
        g += 1
    return np.array(out, dtype=np.uint64)


def geometric_by_table(rate: Fraction, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> I64:
    r"""Geometric draws by exact inversion: with U uniform on $(0, 1)$,
    $G = \#\{g \ge 1 : U < e^{-\lambda g}\}$ has $P(G \ge g) = e^{-\lambda g}$. One uniform word a gives
    $U \in [a, a + 1) \cdot 2^{-64}$, and $U < e^{-\lambda g}$ is decided by integers: true if
    $a < F_g = \lfloor e^{-\lambda g}2^{64}\rfloor$, false if $a > F_g$ ($e^{-\lambda g}2^{64}$ is not an
    integer for $g \ge 1$); $a = F_g$ (or $a = 0$, where U may lie below the table) is refined by more words
    (:func:`_refine`, probability below $(g_{\max} + 1) \cdot 2^{-64}$). No floating-point function decides an
    outcome (docs/theory/counting-queries.md#exact-integer-samplers)."""
    lam = check_rate(rate)
    shape, n = _flat_size(size)
    table, count, mixed = _lookup(lam.numerator, lam.denominator)
    words = rng.integers(0, 1 << 64, size=n, dtype=np.uint64)
    bucket = (words >> _BUCKET_SHIFT).astype(np.intp)
    out = count[bucket]  # #{g : F_g > a}, exact unless a table entry lies in a's bucket
    search = np.flatnonzero(mixed[bucket])
    if search.size:
        ascending = table[::-1]
        sub = words[search]
        above = np.searchsorted(ascending, sub, side="right")  # #{g : F_g ≤ a}
        out[search] = table.size - above
        tied = np.searchsorted(ascending, sub, side="left") != above  # a = F_g for some g
        for i in search[tied | (sub == 0)]:
            out[i] = _refine(int(words[i]), lam, rng)
    return out.reshape(shape)


def _refine(first: int, lam: Fraction, rng: np.random.Generator) -> int:
    """G for U = (first·2^{64k} + more words)/2^{64(k+1)}: words are added until the interval of U lies
    strictly between two thresholds e^{−λ(g+1)} < U < e^{−λg}, decided in ball arithmetic."""
    from flint import arb, ctx

    a, bits = first, 64
    while True:
        with ctx.workprec(bits + 128):
            lo = arb(a) / arb(2) ** bits
            hi = arb(a + 1) / arb(2) ** bits
            rate = arb(lam.numerator) / arb(lam.denominator)
            if a > 0:  # G = ⌊−ln(U)/λ⌋ for U in (lo, hi), if it is the same at both ends
                t = (-(hi.log()) / rate).union(-(lo.log()) / rate)
                g = t.floor().unique_fmpz()
                if g is not None:
                    return int(g)
        a = (a << 64) | int(rng.integers(0, 1 << 64, dtype=np.uint64))
        bits += 64


def geometric_by_trials(rate: Fraction, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> I64:
    r"""Geometric draws $G \ge 0$ with $P(G = g) = (1 - e^{-\lambda}) \cdot e^{-\lambda g}$, $\lambda$ =
    ``rate`` (exact), from Bernoulli trials in integer arithmetic.

    $\lambda \ge 1$: G counts the successes of $\mathrm{Bernoulli}(e^{-\lambda})$ before the first failure.
    $\lambda < 1$: $G = U + T \cdot V$ with $T = \lceil 1/\lambda\rceil \ge 2$, U on $\{0, \ldots, T-1\}$ with
    $P(U = u) \propto e^{-\lambda u}$ (a uniform u accepted with probability $e^{-\lambda u}$,
    $\lambda u < 1$) and V counting the successes of $\mathrm{Bernoulli}(e^{-\lambda T})$; every $g \ge 0$ is
    $u + Tv$ in exactly one way, and $P(U = u, V = v) \propto e^{-\lambda(u + Tv)}$
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
    r"""Discrete Laplace draws: $P(K = k) = \tanh(\lambda/2) \cdot e^{-\lambda\vert k\vert}$ on ℤ, exactly, as
    $K = G_1 - G_2$.

    ($\sum_j p^2e^{-\lambda(2j + \vert k\vert)} = p^2e^{-\lambda\vert k\vert}/(1 - e^{-2\lambda})$
    $= \tanh(\lambda/2)e^{-\lambda\vert k\vert}$,
    $p = 1 - e^{-\lambda}$.)
    """
    shape, n = _flat_size(size)
    g = geometric(rate, 2 * n, rng)
    out: I64 = g[:n] - g[n:]
    return out.reshape(shape)
