"""Brute-force references with exact rationals (fractions.Fraction), independent of the code under test.

Everything here enumerates: every output of the mechanism, every neighbour, every histogram, every mixture.
e^ε enters as the exact rational value of the double ``math.exp(eps)``, so the reference is the exact answer
for the same double the library uses.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations, product


def compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def shm_law(h: tuple[int, ...], t: int, replace: bool) -> dict[tuple[int, ...], Fraction]:
    """Output law of the sampling-histogram mechanism, exactly."""
    n, m = sum(h), len(h)
    law: dict[tuple[int, ...], Fraction] = {}
    if replace:
        for s in product(range(t + 1), repeat=m):
            if sum(s) != t:
                continue
            pr = Fraction(math.factorial(t))
            for si, hi in zip(s, h, strict=True):
                pr *= Fraction(hi, n) ** si / math.factorial(si)
            if pr:
                law[s] = pr
        return law
    total = math.comb(n, t)
    for s in product(*[range(x + 1) for x in h]):
        if sum(s) == t:
            law[s] = Fraction(math.prod(math.comb(x, y) for x, y in zip(h, s, strict=True)), total)
    return law


def divergence(p: dict, q: dict, c: Fraction) -> Fraction:
    """Σ_o (P(o) − c·Q(o))_+ exactly."""
    return sum((max(Fraction(0), p.get(o, 0) - c * q.get(o, 0)) for o in set(p) | set(q)), Fraction(0))


def profile(law_of, h: tuple[int, ...], eps: float) -> Fraction:
    """δ(h) = max over neighbours h − e_a + e_b of both directed divergences (Definition 2)."""
    c = Fraction(math.exp(eps))
    p = law_of(h)
    best = Fraction(0)
    for a in range(len(h)):
        if h[a] == 0:
            continue
        for b in range(len(h)):
            if b == a:
                continue
            nb = list(h)
            nb[a] -= 1
            nb[b] += 1
            q = law_of(tuple(nb))
            best = max(best, divergence(p, q, c), divergence(q, p, c))
    return best


def shm_profile(h: tuple[int, ...], t: int, eps: float, replace: bool = False) -> Fraction:
    return profile(lambda g: shm_law(g, t, replace), h, eps)


def multinomial(h: tuple[int, ...], pi: tuple[Fraction, ...]) -> Fraction:
    pr = Fraction(math.factorial(sum(h)))
    for hi, p in zip(h, pi, strict=True):
        pr = pr * p**hi / math.factorial(hi)
    return pr


def smoothed_delta(n: int, delta_of, vertices) -> tuple[Fraction, tuple[int, ...]]:
    """max over mixtures of Σ_h P_q(h) δ(h), every histogram and mixture enumerated (Algorithm 1)."""
    verts = [tuple(Fraction(float(v)) for v in row) for row in vertices]
    m = len(verts[0])
    deltas = {h: delta_of(h) for h in compositions(n, m)}
    best = None
    for q in compositions(n, len(verts)):
        law = {tuple([0] * m): Fraction(1)}
        for j, count in enumerate(q):
            if not count:
                continue
            new: dict[tuple[int, ...], Fraction] = {}
            for h0, p0 in law.items():
                for h1 in compositions(count, m):
                    key = tuple(a + b for a, b in zip(h0, h1, strict=True))
                    new[key] = new.get(key, 0) + p0 * multinomial(h1, verts[j])
            law = new
        value = sum((p * deltas[h] for h, p in law.items()), Fraction(0))
        if best is None or value > best[0]:
            best = (value, q)
    return best


def sampled_sum_laws(codes: tuple[int, ...], t: int) -> dict[int, Fraction]:
    """Law of the sum of a uniform t-subset of ``codes`` (all subsets enumerated)."""
    subsets = list(combinations(range(len(codes)), t))
    law: dict[int, Fraction] = {}
    for s in subsets:
        total = sum(codes[i] for i in s)
        law[total] = law.get(total, 0) + Fraction(1, len(subsets))
    return law


def round_half_away(num: int, den: int) -> int:
    sign = -1 if num < 0 else 1
    return sign * ((2 * abs(num) + den) // (2 * den))


def quantized_profile(codes: tuple[int, ...], t: int, low: int, high: int, eps: float) -> Fraction:
    """δ(x) of the quantized sampling-average, every neighbour (one record replaced by any code)."""
    c = Fraction(math.exp(eps))

    def law(x):
        out: dict[int, Fraction] = {}
        for total, pr in sampled_sum_laws(x, t).items():
            o = round_half_away(total, t)
            out[o] = out.get(o, 0) + pr
        return out

    p = law(codes)
    best = Fraction(0)
    for i in sorted(set(range(len(codes))), key=lambda j: codes[j]):
        for b in range(low, high + 1):
            if b == codes[i]:
                continue
            nb = list(codes)
            nb[i] = b
            q = law(tuple(nb))
            best = max(best, divergence(p, q, c), divergence(q, p, c))
    return best
