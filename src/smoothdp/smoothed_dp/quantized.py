"""The 8-bit sampling-average of the SGD experiment (LWX Fig. 2 right): mechanism, data model, exact profile.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#quantized-average``.

**Mechanism**: :class:`QuantizedSamplingAverage` (sample T integer codes without replacement, output the
rounded mean code).

**Data model** (N_8bit, reconstructed from the authors' published experiment code): draw X ∼ N(μ, σ²), keep it
only when X ∈ (−½, ½], and quantise q = ⌈256·X⌉ ∈ {−127, …, 128}:

    P(q) = [Φ((q/256 − μ)/σ) − Φ(((q−1)/256 − μ)/σ)] / [Φ((½ − μ)/σ) − Φ((−½ − μ)/σ)].

The Laplace variant uses the standard-deviation parametrisation b = σ/√2 (as the authors' code does).

**Exact profile** of :class:`QuantizedSamplingAverage` (ours). Changing record i
(value a) into b changes the output only when i is sampled (probability η = T/n). Let Q and R be the laws of
the sum of a uniform T-subset and a uniform (T−1)-subset of the other n−1 records. Then

    P_x  = (1 − η)·Out(Q) + η·Out(R + a),    P_x' = (1 − η)·Out(Q) + η·Out(R + b),

with Out the rounding S ↦ round(S/T), and d(x, x') = Σ_o (P_x(o) − e^ε P_x'(o))_+ in both directions. Q and R
depend only on the value a removed. They come from the counts c[t, s] of the t-subsets with sum s, by Pascal's
rule over the records (a t-subset of the first i records either omits record i or contains it):

    c_i[t, s] = c_{i−1}[t, s] + c_{i−1}[t − 1, s − v_i],    c_0[t, s] = [t = 0 and s = 0],

and law[t, s] = c_N[t, s] / C(N, t) (N records; a uniform t-subset is each of the C(N, t) subsets with
probability 1/C(N, t)). Why this is exact in floating point: the counts are integers, exact in float64 below
2^53, and beyond that every operation adds non-negative numbers (no cancellation), each rounding by at most
2^−53 relative; so every law entry carries a relative error ≤ (N + 2)·2^−53, however small it is (the
smallest are ~1/C(n, T), ~1e-25 at the paper's sizes). (Should C(N, t) exceed 2^1000, row t is scaled by an
exact power of two, 2^(−k·t).) δ, a sum of positive parts of differences of such entries, then has an absolute
error below ~(n + T)·(1 + e^ε)·2^−53.

Sharing. The counts do not depend on the order of the records, so the tables for the removed values
a_1..a_D (one copy each) all start from the records left once every a_j has lost one copy: those are folded
once, and the a_j are folded back all-but-one by divide and conquer, O(n + D·log D) record folds instead of
D·n (D = 2 for the paper's heuristic neighbours; D ≤ 256 distinct codes for all neighbours). Each fold is one
contiguous addition over the flattened table (module code: ``_fold_records``). Records of equal value are
exchangeable, so a group of m of them can also be folded at once with hypergeometric weights
C(m, k)·C(N, t − k)/C(N + m, t), k ≤ min(m, t), but that is min(m, t) + 1 scaled passes per group against m
additions, no faster here. All 256 replacements b of one a at once: Out(R + b) for every b is a window sum of
R's law over the sums that round to each output, gathered from one set of window sums.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from smoothdp.keywords import check_keywords_of
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.smoothed_dp.base import (
    ProfileValue,
    SmoothedDelta,
    SmoothedDPMechanism,
    check_histogram,
    make_profile_value,
    sample_subsets,
)
from smoothdp.validation import check_data, check_epsilon, check_int, check_positive

__all__ = [
    "QuantizedSamplingAverage",
    "quantized_average_deltas",
    "quantized_average_profile",
    "quantized_laplace_pmf",
    "quantized_normal_pmf",
    "subset_sum_laws",
]


@dataclass(frozen=True, init=False)
class QuantizedSamplingAverage(SmoothedDPMechanism):
    """8-bit quantized sampling-average (the one-step SGD of LWX Fig. 2 right).

    The data are integer codes in [low, high] (default −127..128: 8-bit values q/256 of gradients in (−½, ½]).
    Draw T records without replacement (T = ``size``, ⌈ηn⌉, or round(√n) with ``size='sqrt'``, the paper's
    batch) and output round(mean code), rounding half away from zero (MATLAB's ``round``). By post-processing
    (LWX Prop. 4) and pre-processing (LWX Prop. 6), its smoothed DP bounds that of one quantized SGD step.

    Guarantee: analysed, not asserted; neighbours: one record substituted (n fixed); proof:
    ``docs/theory/smoothed-dp.md#quantized-average``. Exact δ(x): :func:`quantized_average_profile`
    (also through :func:`smoothdp.smoothed_dp.privacy_profile`); sampled estimate of δ_SDP:
    :func:`smoothdp.smoothed_dp.montecarlo.sampled_smoothed_delta`.

    Why it is not a :class:`smoothdp.mechanism.Mechanism`: it adds no noise, and its δ depends on the
    database (δ(x)) and on the data distributions (δ_SDP); there is no (ε, δ) fixed before the data are seen
    to charge to an accountant. It is an object of analysis, like the other sampling mechanisms here.
    """

    name: ClassVar[str] = "quantized_sampling_average"
    proof: ClassVar[str] = "docs/theory/smoothed-dp.md#quantized-average"

    eta: Fraction | None
    size: int | str | None
    low: int
    high: int

    def __init__(self, size: Any = "sqrt", eta: Any = None, low: int = -127, high: int = 128) -> None:
        if eta is not None and size == "sqrt":
            size = None
        rate, fixed = self._init_size(eta, size)
        low = check_int("low", low)
        high = check_int("high", high)
        if not low < high:
            raise ValueError(f"low must be < high; got low={low}, high={high}")
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def levels(self) -> NDArray[np.int64]:
        """The codes low..high (the categories of the histogram view)."""
        return np.arange(self.low, self.high + 1)

    def output_of_sum(self, sums: ArrayLike, t: int) -> NDArray[np.int64]:
        """round(S/T) half away from zero, exactly in integers."""
        s = np.asarray(sums, dtype=np.int64)
        mag = (2 * np.abs(s) + t) // (2 * t)
        return np.sign(s) * mag

    def check_codes(self, codes: ArrayLike, name: str = "codes") -> NDArray[np.int64]:
        """A 1-D array of integer codes within [low, high]."""
        x = check_data(codes, name, ndim=1)
        if np.any(x != np.round(x)) or np.any((x < self.low) | (x > self.high)):
            raise ValueError(f"{name} must be integers in [{self.low}, {self.high}]")
        return x.astype(np.int64)

    def sample(self, codes: ArrayLike, size: int | None = None, rng: SeedLike = None) -> NDArray[np.int64]:
        """Draw outputs (rounded mean codes) of the mechanism on the database ``codes``."""
        x = self.check_codes(codes)
        t = self.sample_size(x.size)
        idx = sample_subsets(x.size, t, 1 if size is None else size, resolve_rng(rng))
        out = self.output_of_sum(x[idx].sum(axis=1), t)
        return out[0] if size is None else out

    # -- analysis hooks (see SmoothedDPMechanism) ----------------------------------------------------------
    def _privacy_profile(self, histogram: ArrayLike, epsilon: float, method: str) -> ProfileValue:
        h = check_histogram(histogram, categories=self.high - self.low + 1)
        return quantized_average_profile(self, np.repeat(self.levels, h), epsilon)

    def _smoothed_delta(
        self, epsilon: float, n: int, distributions: ArrayLike, mixtures: str | int
    ) -> SmoothedDelta:
        raise TypeError(
            "QuantizedSamplingAverage has 256 categories: estimate δ_SDP with "
            "smoothdp.smoothed_dp.montecarlo.sampled_smoothed_delta"
        )


def _check_grid(mu: float, sigma: float, low: int, high: int, scale: int) -> NDArray[np.float64]:
    if not math.isfinite(float(mu)):
        raise ValueError(f"mu must be finite; got {mu!r}")
    check_positive("sigma", sigma)
    if not low < high:
        raise ValueError(f"low must be < high; got low={low}, high={high}")
    check_positive("scale", scale)
    return np.arange(low, high + 1, dtype=np.float64)


def quantized_normal_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """N_8bit(μ, σ²): pmf over the codes low..high of ⌈scale·X⌉, X ∼ N(μ, σ²) truncated to
    ((low−1)/scale, high/scale].

    Returns an array of length high − low + 1 summing to 1 (a row of Π for the histogram view).
    """
    q = _check_grid(mu, sigma, low, high, scale)
    upper = (q / scale - mu) / sigma
    lower = ((q - 1) / scale - mu) / sigma
    # Φ(b) − Φ(a) without cancellation in the upper tail: use Φ(−a) − Φ(−b) there
    mass = np.where(lower > 0, ndtr(-lower) - ndtr(-upper), ndtr(upper) - ndtr(lower))
    return mass / mass.sum()


def quantized_laplace_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """The Laplace analogue of :func:`quantized_normal_pmf`, with scale b = σ/√2 (standard deviation σ)."""
    q = _check_grid(mu, sigma, low, high, scale)
    b = sigma / math.sqrt(2.0)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        z = (x - mu) / b
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return cdf(2 * mu - x)

    upper, lower = q / scale, (q - 1) / scale
    mass = np.where(lower > mu, sf(lower) - sf(upper), cdf(upper) - cdf(lower))
    return mass / mass.sum()


def _check_subset_input(values: ArrayLike, sizes: int) -> tuple[NDArray[np.int64], int]:
    v = np.asarray(values, dtype=np.int64)
    if v.ndim != 1 or np.any(v < 0):
        raise ValueError("values must be a 1-D array of non-negative integers")
    t_max = int(sizes)
    if t_max > v.size:
        raise ValueError(f"sizes must be ≤ the number of values ({v.size}); got {t_max}")
    return v, t_max


def _scale_exponent(records: int, t_max: int) -> int:
    """k ≥ 0 such that every scaled count C(records, j)·2^(−k·j), j ≤ t_max, stays below 2^1000."""
    k = 0
    for j in range(1, t_max + 1):
        excess = math.comb(records, j).bit_length() - 1000
        if excess > 0:
            k = max(k, -(-excess // j))
    return k


def _fold_records(
    counts: NDArray[np.float64], values: NDArray[np.int64], scale: float
) -> NDArray[np.float64]:
    """Fold records into the scaled count table: c'[t, s] = c[t, s] + scale·c[t − 1, s − v], per record v.

    Returns a new array (``counts`` is left intact). Layout: a table of width W ≥ T·hi + 1, hi the largest
    value folded into it, has row t − 1 zero from column (t − 1)·hi + 1 ≤ W − v on; so in the flattened table
    entry (t − 1, s) → (t, s + v) is one constant shift W + v, and the shifted source never wraps a non-zero
    entry into another row. Each record is one contiguous addition, two buffers alternating. The records go
    in increasing order in a working table only as wide as the values so far need (widened by a quarter when
    a value outgrows it; about a fifth less time on the experiment's data). The columns left out are zero,
    so every sum is the one the full-width table would give. ``scale`` is a power of two (exact), 1 unless
    counts would overflow.
    """
    rows, width = counts.shape
    if values.size == 0 or rows == 1:
        return counts.copy()
    top = (width - 1) // (rows - 1)  # the largest value the full table holds
    seen = np.flatnonzero(counts[1])  # row 1 lists the values already folded
    cap = top if values.size < 16 else max(int(seen[-1]) if seen.size else 0, int(values.min()))
    w = (rows - 1) * cap + 1
    cur = counts[:, :w].copy().reshape(-1)  # flattened tables of width w
    nxt = np.empty_like(cur)
    nxt[:w] = cur[:w]  # row 0 (the empty subset) never changes
    tmp = np.empty(cur.size) if scale != 1.0 else None
    for v in np.sort(values).tolist():
        if v > cap:  # widen: same rows, more zero columns
            cap = min(top, max(v, cap + cap // 4 + 1))
            wider = np.zeros((rows, (rows - 1) * cap + 1))
            wider[:, :w] = cur.reshape(rows, w)
            w = wider.shape[1]
            cur, nxt = wider.reshape(-1), np.empty(wider.size)
            nxt[:w] = cur[:w]
            tmp = np.empty(cur.size) if scale != 1.0 else None
        shift = w + v
        nxt[w:shift] = cur[w:shift]  # row 1, columns < v: no subset reaches them
        src = cur[:-shift]
        if tmp is not None:
            src = np.multiply(src, scale, out=tmp[:-shift])
        np.add(cur[shift:], src, out=nxt[shift:])
        cur, nxt = nxt, cur
    if w == width:
        return cur.reshape(rows, width)
    out = np.zeros_like(counts)
    out[:, :w] = cur.reshape(rows, w)
    return out


@lru_cache(maxsize=64)
def _divisors(records: int, rows: int, k: int) -> NDArray[np.float64]:
    """C(records, j)·2^(−k·j), j < rows, each correctly rounded to float64 (read-only)."""
    norms = np.array([float(Fraction(math.comb(records, j), 1 << (k * j))) for j in range(rows)])
    norms.flags.writeable = False
    return norms


def _normalise(counts: NDArray[np.float64], records: int, k: int) -> NDArray[np.float64]:
    """Scaled counts → laws: row j divided by C(records, j)·2^(−k·j)."""
    return counts / _divisors(records, counts.shape[0], k)[:, None]


def _empty_table(t_max: int, width: int) -> NDArray[np.float64]:
    counts = np.zeros((t_max + 1, width))
    counts[0, 0] = 1.0
    return counts


def subset_sum_laws(values: ArrayLike, sizes: int) -> NDArray[np.float64]:
    """law[t, s] = P(sum of a uniform t-subset of ``values`` = s), t = 0..sizes (non-negative integer values).

    Counts the t-subsets with each sum by the recursion of the module docstring (one pass of additions per
    record, on the values minus their minimum), then divides row t by C(len(values), t). Cost
    O(len(values)·sizes·sizes·(max − min of values)).
    """
    v, t_max = _check_subset_input(values, sizes)
    width = t_max * int(v.max(initial=0)) + 1
    if v.size == 0:
        return _empty_table(t_max, width)
    low = int(v.min())
    rel = v - low
    k = _scale_exponent(v.size, t_max)
    counts = _fold_records(_empty_table(t_max, t_max * int(rel.max()) + 1), rel, math.ldexp(1.0, -k))
    laws = _normalise(counts, v.size, k)
    law = np.zeros((t_max + 1, width))
    for j in range(t_max + 1):  # row j: sums shifted back by j·min
        law[j, j * low : j * low + laws.shape[1]] = laws[j]
    return law


def _laws_without_each(
    values: NDArray[np.int64], removed: Sequence[int], t_max: int
) -> Iterator[NDArray[np.float64]]:
    """For each r in ``removed`` (in order): the laws of subset_sum_laws(values minus one copy of r, t_max).

    ``values`` ≥ 0 (already shifted); ``removed`` must be a sub-multiset of ``values``. The records left once
    every removed value has lost one copy are common to all: they are folded once. The removed values are then
    folded back all-but-one by divide and conquer (fold the right half, recurse left; fold the left half,
    recurse right), O(len(removed)·log len(removed)) folds in all, not one full pass per removed value.
    """
    records = values.size - 1
    if t_max > records:
        raise ValueError(f"sizes must be ≤ the number of values ({records}); got {t_max}")
    top = int(values.max(initial=0))
    width = t_max * top + 1
    removed_arr = np.asarray(removed, dtype=np.int64)
    remaining = np.bincount(values, minlength=top + 1) - np.bincount(removed_arr, minlength=top + 1)
    if np.any(remaining < 0):
        raise ValueError("removed must be a sub-multiset of values")
    common = np.repeat(np.arange(remaining.size), remaining)
    k = _scale_exponent(records, t_max)
    scale = math.ldexp(1.0, -k)

    def solve(counts: NDArray[np.float64], lo: int, hi: int) -> Iterator[NDArray[np.float64]]:
        if hi - lo == 1:
            yield _normalise(counts, records, k)
            return
        mid = (lo + hi) // 2
        yield from solve(_fold_records(counts, removed_arr[mid:hi], scale), lo, mid)
        yield from solve(_fold_records(counts, removed_arr[lo:mid], scale), mid, hi)

    if removed_arr.size:
        yield from solve(_fold_records(_empty_table(t_max, width), common, scale), 0, removed_arr.size)


@lru_cache(maxsize=64)
def _output_bins(mechanism: QuantizedSamplingAverage, t: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For o = low..high: the first sum u with round(u/T) = o and how many sums round to o (read-only)."""
    levels = np.arange(mechanism.low, mechanism.high + 1)
    # u over [T·low − T, T·high + T] covers the intervals of low..high whole (round(u/T) is monotone)
    u = np.arange(t * mechanism.low - t, t * mechanism.high + t + 1)
    out = mechanism.output_of_sum(u, t)
    left = np.searchsorted(out, levels, side="left")
    starts, lengths = u[left], np.searchsorted(out, levels, side="right") - left
    starts.flags.writeable = lengths.flags.writeable = False
    return starts, lengths


def _output_matrix(
    sum_law: NDArray[np.float64],
    shifts: NDArray[np.int64],
    t: int,
    base: int,
    mechanism: QuantizedSamplingAverage,
) -> NDArray[np.float64]:
    """Rows: the law of round((S + shift + base)/T) over the codes low..high, for each shift (S ∼ sum_law).

    The rounding is monotone in u = S + shift + base, so output o collects the u of one interval
    [start_o, start_o + len_o) (len_o = T, or T − 1 for o = 0 when T is even) and P(o) is a window sum of
    sum_law, added left to right (the order of a direct sum over s). Few shifts: the T entries of each of
    the shifts·levels windows are gathered and added. Many: all window sums are formed once per window
    length and gathered, O(T·|sum_law| + shifts·levels) instead of O(shifts·|sum_law|).
    """
    starts, lengths = _output_bins(mechanism, t)
    # index of each window's first sum s, for each (shift, o), in sum_law padded with zeros on both sides
    first = starts[None, :] - shifts[:, None] - base
    longest = int(lengths.max())
    pad = max(0, -int(first.min()))
    size = max(sum_law.size, int(first.max()) + longest) + pad
    padded = np.zeros(size + longest)
    padded[pad : pad + sum_law.size] = sum_law
    index = first + pad
    if index.size < size:  # few (shift, o): add the window's entries at each start directly
        zero = padded.size - 1  # a zero entry, for the shorter windows
        matrix = padded[index]
        for j in range(1, longest):
            matrix += padded[np.where(j < lengths, index + j, zero)]
        return matrix
    matrix = np.empty(first.shape)
    main = int(np.bincount(lengths).argmax())
    for length in [main, *sorted(set(lengths.tolist()) - {main})]:
        window = padded[:size].copy()
        for j in range(1, length):
            window += padded[j : j + size]
        if length == main:
            matrix[...] = window[index]
        else:
            cols = np.flatnonzero(lengths == length)
            matrix[:, cols] = window[index[:, cols]]
    return matrix


def quantized_average_deltas(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilons: ArrayLike, *, neighbours: str = "all"
) -> tuple[NDArray[np.float64], list[tuple[int, int, str]]]:
    """δ_{ε,M}(x) for several ε at once (one recursion per removed value serves every ε).

    Returns (δ per ε, worst neighbour (a, b, direction) per ε). See :func:`quantized_average_profile`.
    """
    if not isinstance(mechanism, QuantizedSamplingAverage):
        raise TypeError(f"mechanism must be a QuantizedSamplingAverage; got {type(mechanism).__name__}")
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=object))])
    if neighbours not in ("all", "heuristic"):
        raise ValueError(f"neighbours must be 'all' or 'heuristic'; got {neighbours!r}")
    x = mechanism.check_codes(codes)
    n = x.size
    if n < 2:
        raise ValueError(f"codes must hold at least 2 records; got {n}")
    t = mechanism.sample_size(n)
    eta = t / n
    levels = mechanism.levels
    if neighbours == "all":
        plan = [(int(a), levels[levels != a]) for a in np.unique(x)]
    else:
        plan = [(int(x.min()), np.array([mechanism.high])), (int(x.max()), np.array([mechanism.low]))]
    best = np.full(eps.size, -1.0)
    where: list[tuple[int, int, str]] = [(-1, -1, "")] * eps.size
    # sums are counted above the baseline T·min(x): the records enter as x − min(x) ≥ 0
    floor = int(x.min())
    laws = _laws_without_each(x - floor, [a - floor for a, _ in plan], t)
    for (a, targets), law in zip(plan, laws, strict=True):
        common = _output_matrix(law[t], np.array([0]), t, t * floor, mechanism)[0]
        # R + value: R counts T − 1 records above (T − 1)·floor, the changed record adds value − floor
        sampled = _output_matrix(law[t - 1], np.append(targets, a) - floor, t, t * floor, mechanism)
        p_x = (1.0 - eta) * common + eta * sampled[-1]
        p_nb = (1.0 - eta) * common[None, :] + eta * sampled[:-1]
        # (ε, neighbour): Σ_o (P − c·P')_+, in chunks of ε that keep the scratch buffer ≤ 2^16 entries
        factors = np.exp(eps)[:, None, None]
        forward, backward = np.empty((eps.size, targets.size)), np.empty((eps.size, targets.size))
        step = max(1, 2**16 // p_nb.size)
        for lo in range(0, eps.size, step):
            c = factors[lo : lo + step]
            scratch = np.multiply(c, p_nb)
            np.subtract(p_x, scratch, out=scratch)
            np.maximum(scratch, 0.0, out=scratch)
            np.sum(scratch, axis=-1, out=forward[lo : lo + step])
            np.multiply(c, p_x, out=scratch)
            np.subtract(p_nb, scratch, out=scratch)
            np.maximum(scratch, 0.0, out=scratch)
            np.sum(scratch, axis=-1, out=backward[lo : lo + step])
        for values, direction in ((forward, "forward"), (backward, "backward")):
            i = np.argmax(values, axis=1)
            top = values[np.arange(eps.size), i]
            for e in np.flatnonzero(top > best):
                best[e] = top[e]
                where[e] = (a, int(targets[i[e]]), direction)
    return np.clip(best, 0.0, 1.0), where


def quantized_average_profile(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilon: float, *, neighbours: str = "all"
) -> ProfileValue:
    """δ_{ε,M}(x) of the 8-bit sampling-average on the database ``codes`` (exact; module docstring).

    Parameters
    ----------
    neighbours
        ``"all"``: every neighbour (each distinct value a present → each code b); the exact δ(x).
        ``"heuristic"``: the two neighbours of the authors' code (the minimum → ``high``, the maximum →
        ``low``); a lower bound on δ(x), what Fig. 2 right plots.
    """
    eps = check_epsilon(epsilon)
    deltas, where = quantized_average_deltas(mechanism, codes, [eps], neighbours=neighbours)
    x = mechanism.check_codes(codes)
    value = float(deltas[0])
    log_delta = math.log(value) if value > 0 else -np.inf
    return make_profile_value(
        log_delta,
        eps,
        np.bincount(x - mechanism.low, minlength=mechanism.levels.size),
        where[0],
        f"exact subset-sum recursion ({neighbours} neighbours)",
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
