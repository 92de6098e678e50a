"""Exponential-mechanism quantiles: one quantile (Smith 2011), several under one budget (Kaplan, Schnapp &
Stemmer 2022, recursive; Gillenwater, Joseph & Kulesza 2021, JointExp), sampled exactly.

**One quantile** (:class:`ExponentialQuantile`; docs/theory/quantiles.md#the-exponential-mechanism-quantile).
Sort the clipped data x_(1) ≤ … ≤ x_(n) in the public bounds [a, b] and pad with x_(0) = a, x_(n+1) = b. The
intervals I_j = [x_(j), x_(j+1)], j = 0..n, cover [a, b]; a point y inside I_j has exactly j records below it.
The output density is

    p_x(y) ∝ exp(−ε′·|j − t|/2)   for y in I_j,    t = max(1, ⌈q·n⌉) − 1/2,

the exponential mechanism over the continuum with utility u(y) = −|#{i : x_i < y} − t| (Smith, STOC 2011;
diffprivlib's ``quantile`` has the same factor with t = q·n; our t centres the top weight on x_(r), the
rank of :class:`~smoothdp.central.statistics.Quantile`). Under substitution #{x_i < y} moves by at most
1 at every y, so u has sensitivity 1 and the mechanism is ε′-DP. Sampling: the interval with probability ∝
|I_j|·exp(−ε′|j − t|/2), then a uniform point inside it, rounded onto the public grid of the bounds by
:func:`smoothdp.exact.uniform_on_grid`. O(n log n) for the sort, O(n) after.

**A public lattice for tied data** (``lattice=``, default 1.0: the integers;
docs/theory/quantiles.md#a-public-lattice-for-tied-data). The base measure is μ = Lebesgue + c·(counting
measure on the public lattice sℤ within the bounds), c = 2^-14·s, and the utility is tie-aware,
u(y) = −dist(t, [#{x_i < y}, #{x_i ≤ y}]) (sensitivity 1; equal to the rank utility off the data). The
exponential mechanism w.r.t. any data-independent μ is ε-DP, and on tied lattice data (ages, counts, round
incomes) it outputs the tied value itself. Sampling stays O(n) after the sort: the atoms inside each open gap
between order statistics are grouped with the gap (same utility; their number by exact floor/ceil), one atom
per distinct data value on the lattice; inside a chosen gap, an exact Bernoulli chooses the continuum or a
uniform lattice point.

**Exact sampling with float weights** (docs/theory/quantiles.md#sampling-exactly-from-float-weights). The log
weights are computed in floats with a certified absolute error η (a public bound from n, ε and the bounds);
the interval is then drawn *exactly* in proportion to the float weights (dyadic rationals f·2^k), by a float
cumulative sum with a certified error bound and a uniform whose bits are drawn lazily, with an exact
integer fallback where the float comparison is undecided. The mechanism actually run is therefore the
exponential mechanism with weights within a factor e^{±η} of the ideal ones, which is (ε′ + 4η)-DP; we use
ε′ = ε − 4η.

**Discrete data** (``candidates=``): the output is one of a public sorted list of candidates g with weight
exp(−ε·d(g)/2), d(g) = max(0, #{x < g} − t, t − #{x ≤ g}) (0 for any candidate that is a valid
t-quantile, ties included); d has sensitivity 1 under substitution.

**Several quantiles**: :class:`RecursiveQuantiles` (KSS, ICML 2022) estimates the middle quantile, splits the
data at the released value and recurses on both halves (docs/theory/quantiles.md#recursive-quantiles);
:class:`JointQuantiles` (JointExp, ICML 2021) samples all quantiles at once from one exponential mechanism
(docs/theory/quantiles.md#jointexp).

Neighbours: ``"substitution"`` (one record replaced; n public) for every mechanism here; ``"add_remove"``
(n private) for :class:`ExponentialQuantile` and :class:`RecursiveQuantiles`: target q·n, a rank distance
capped at a public C and a public float margin, and with atoms a private lattice test first
(docs/theory/quantiles.md#adding-or-removing-a-record).
"""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.atoms import ATOM_MASS, MULTISCALE, Atoms, LatticeSpec, build_atoms, check_lattice
from smoothdp.exact import OutputGrid, check_numerics, sampler_label, uniform_on_grid
from smoothdp.exact.bits import rational_choice
from smoothdp.exact.bits import uniform_bits as _uniform_bits
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.scale.engine import Records, SortedRecords, as_records, is_dask_collection
from smoothdp.validation import (
    as_float_array,
    check_bool,
    check_bounds,
    check_epsilon,
    check_in_range,
    prepare_records,
)

__all__ = [
    "ExponentialQuantile",
    "JointQuantiles",
    "RecursiveQuantiles",
    "check_lattice",
    "exact_categorical",
    "joint_margin",
    "log_sum",
    "log_weight_margin",
    "prepare_data",
    "rational_choice",
    "recursive_levels",
    "target_rank",
]

_U = 2.0**-53  # unit roundoff of float64
#: Assumed worst error of numpy's float64 log and exp2, in ulps (they are documented at ≤ 4; we budget 64).
_LIBM_ULPS = 64.0
#: Head of the exact sampler: weights within 2^-HEAD of the largest are summed in floats (normal numbers).
_HEAD = 960
_SMITH = "Smith, Privacy-preserving statistical estimation with optimal convergence rates, STOC 2011"
_KSS = "Kaplan, Schnapp & Stemmer, Differentially private approximate quantiles, ICML 2022"
_GJK = "Gillenwater, Joseph & Kulesza, Differentially private quantiles, ICML 2021"


# ------------------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------------------
def prepare_data(x: Any, lower: float, upper: float, *, clip: bool, name: str = "x") -> NDArray[np.float64]:
    """The library's data policy (:func:`smoothdp.validation.prepare_records`: NaN imputed with the bounds'
    midpoint, then clipped into [lower, upper], ±inf included, or checked with ``clip=False``), sorted.
    Empty data is allowed (n = 0 is public under substitution)."""
    if isinstance(x, Records) or is_dask_collection(x):  # every record, sorted, on the driver
        return np.array(as_records(x, lower, upper, clip=clip, name=name).sorted_values())
    arr = np.array(prepare_records(x, lower, upper, clip=clip, name=name, min_size=0), dtype=np.float64)
    arr.sort()
    return arr


def _check_width(lower: float, upper: float) -> float:
    width = upper - lower
    if not math.isfinite(width):
        raise ValueError(f"bounds must have a finite width upper − lower; got ({lower!r}, {upper!r})")
    return width


# ------------------------------------------------------------------------------------------------------------
# Exact sampling from float weights
# ------------------------------------------------------------------------------------------------------------
#: Largest ε·(n + 1) the exact exponential-mechanism samplers accept (:func:`log_weight_margin`).
_MAX_EPSILON_N = 2.0**50


def log_weight_margin(*, epsilon: float, n: int, width: float | None) -> float:
    """A public bound η on |ln Ŵ_j − w_j|: the error of the float log weights (docs/theory/quantiles.md#
    sampling-exactly-from-float-weights).

    |w_j| ≤ 745 + |ln width| + ε(n + 1)/2 (interval log-lengths of floats lie in [ln 2^-1074, ln width]);
    each of the few float operations adds at most a few units of roundoff of that magnitude, and numpy's
    log / exp2 at most ``_LIBM_ULPS`` ulps; we allow 4·_LIBM_ULPS units in all.

    ε(n + 1) above 2^50 is refused (public: ε and n): the binary exponents of the weights must stay far
    inside int64, and no useful release needs such a budget.
    """
    if not epsilon * (n + 1.0) <= _MAX_EPSILON_N:
        raise ValueError(
            f"epsilon·(n + 1) must be at most 2^50 for the exponential mechanism's exact sampler; got "
            f"epsilon={epsilon:g} (this stage's share of the budget) with n={n}"
        )
    magnitude = 4.0 + epsilon * (n + 1.0)
    if width is not None:
        magnitude += 746.0 + abs(math.log(width))
    return 4.0 * _LIBM_ULPS * 2.0 * _U * magnitude


def _dyadic_parts(logw: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Ŵ = f·2^k with f in [1, 2): the float weights the sampler draws from exactly (f = 0 for −inf)."""
    t = logw / math.log(2.0)
    live = np.isfinite(t)
    k = np.where(live, np.floor(np.where(live, t, 0.0)), 0.0)
    f = np.where(live, np.exp2(np.where(live, t, 0.0) - k), 0.0)  # t − ⌊t⌋ is exact
    return k.astype(np.int64), f


def exact_categorical(logw: ArrayLike, rng: np.random.Generator) -> int:
    """An index j drawn with probability exactly Ŵ_j / Σ Ŵ, where Ŵ_j = f_j·2^{k_j} are the float weights of
    the natural-log weights ``logw`` (−inf: weight 0). At least one weight must be positive.

    Fast path: float cumulative sums of the weights within 2^-960 of the largest, with the certified error
    bound |Ĉ_j − C_j| ≤ 2(j+1)u·Ĉ_j of a sequential sum of positive terms, against a 64-bit uniform;
    undecided comparisons (probability about n·2^-52) go to exact integer arithmetic with more uniform bits.
    """
    k, f = _dyadic_parts(np.asarray(logw, dtype=np.float64))
    live = f > 0.0
    if not live.any():
        raise ValueError("exact_categorical needs at least one positive weight")
    top = int(k[live].max())
    rel = k - top
    head = live & (rel >= -_HEAD)
    v = np.where(head, np.ldexp(f, np.maximum(rel, -_HEAD).astype(np.int64)), 0.0)
    c = np.cumsum(v)
    m = c.size
    if (m + 2) * _U < 1e-3:  # the certified bound below needs m·u small
        err = 2.0 * (np.arange(m) + 2.0) * _U * c
        n_tail = int(np.count_nonzero(live & ~head))
        tail_bound = n_tail * 2.0**-_HEAD
        a = _uniform_bits(rng)
        total_lo = (c[-1] - err[-1]) * (1.0 - 4 * _U)
        total_hi = (c[-1] + err[-1] + tail_bound) * (1.0 + 4 * _U)
        x_lo = a * 2.0**-64 * total_lo * (1.0 - 4 * _U)
        x_hi = (a + 1) * 2.0**-64 * total_hi * (1.0 + 4 * _U)
        j = int(np.searchsorted(c, x_lo, side="right"))
        if j < m and x_hi < c[j] - err[j] and (j == 0 or c[j - 1] + err[j - 1] <= x_lo):
            return j
        return _exact_fallback(k, f, head, live, top, rng, first_bits=a)
    return _exact_fallback(k, f, head, live, top, rng, first_bits=_uniform_bits(rng))


def _exact_fallback(
    k: NDArray[np.int64],
    f: NDArray[np.float64],
    head: NDArray[np.bool_],
    live: NDArray[np.bool_],
    top: int,
    rng: np.random.Generator,
    *,
    first_bits: int,
) -> int:
    """Exact inversion with integer prefix sums and a lazily refined uniform U = A/2^L (A < 2^L)."""
    idx = np.flatnonzero(head)
    mant, exps = np.frexp(f[idx])  # f = mant·2^exps exactly, mant in [0.5, 1)
    ints = (mant * 2.0**53).astype(np.int64)
    shifts = (k[idx] - top) + exps.astype(np.int64) - 53  # weight = int·2^shift
    base = int(shifts.min())
    prefix = list(itertools.accumulate(int(i) << int(s - base) for i, s in zip(ints, shifts, strict=True)))
    h_total = prefix[-1]
    tail = live & ~head
    n_tail = int(np.count_nonzero(tail))
    # Tail sum ≤ n_tail·2^-HEAD relative to 2^top, i.e. ≤ n_tail·2^(-HEAD - base) in units of 2^base.
    tail_units = Fraction(n_tail) * Fraction(2) ** (-_HEAD - base)
    a, bits = first_bits, 64
    exact_tail: Fraction | None = None
    while True:
        lo = Fraction(a, 1 << bits) * h_total  # X ≥ U_lo·H
        t_hi = tail_units if exact_tail is None else exact_tail
        hi = Fraction(a + 1, 1 << bits) * (h_total + t_hi)
        j = bisect.bisect_right(prefix, lo)  # first prefix > lo
        if j < len(prefix) and hi <= prefix[j] and (j == 0 or prefix[j - 1] <= lo):
            return int(idx[j])
        if exact_tail is not None and n_tail and lo >= h_total:
            return int(np.flatnonzero(tail)[exact_categorical_tail(k[tail], f[tail], rng)])
        if exact_tail is None and n_tail and bits >= 4 * _HEAD:
            tk, tf = k[tail], f[tail]
            exact_tail = sum(
                (
                    Fraction(float(ff)) * Fraction(2) ** int(kk - top - base)
                    for kk, ff in zip(tk, tf, strict=True)
                ),
                Fraction(0),
            )
        a = (a << 64) | _uniform_bits(rng)
        bits += 64


def exact_categorical_tail(k: NDArray[np.int64], f: NDArray[np.float64], rng: np.random.Generator) -> int:
    """Exact draw among weights f·2^k (the tail of :func:`exact_categorical`), same algorithm."""
    top = int(k.max())
    rel = k - top
    live = f > 0
    head = live & (rel >= -_HEAD)
    return _exact_fallback(k, f, head, live, top, rng, first_bits=_uniform_bits(rng))


# ------------------------------------------------------------------------------------------------------------
# One quantile
# ------------------------------------------------------------------------------------------------------------
def _check_candidates(candidates: Any, lower: float, upper: float) -> NDArray[np.float64]:
    try:
        grid = np.asarray(candidates, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"candidates must be an array of real numbers; got {type(candidates).__name__}"
        ) from err
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)):
        raise ValueError("candidates must be a non-empty 1-D array of finite public values")
    grid = np.unique(grid)
    if grid[0] < lower or grid[-1] > upper:
        raise ValueError(f"candidates must lie in the bounds [{lower:g}, {upper:g}]")
    return grid


def _em_quantile_index_weights(
    sorted_x: NDArray[np.float64],
    lower: float,
    upper: float,
    target: float,
    coef: float,
    offset: float = 0.0,
    cap: float = math.inf,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Edges (n + 2) and log weights ln|I_j| − coef·min(|j − t|, cap) of the n + 1 intervals (−inf if
    empty), t = target + offset (an integer target and a fraction under add/remove: :func:`split_target`)."""
    edges = np.concatenate(([lower], sorted_x, [upper]))
    lengths = np.diff(edges)
    with np.errstate(divide="ignore"):
        log_len = np.log(lengths)
    j = np.arange(lengths.size, dtype=np.float64)
    return edges, log_len - coef * np.minimum(np.abs((j - target) - offset), cap)


def _tie_distance(
    below: NDArray[np.float64], at_most: NDArray[np.float64], target: float, offset: float, cap: float
) -> NDArray[np.float64]:
    """min(dist(t, [below, at_most]), cap), t = target + offset (counts and target exact float integers
    under add/remove, so only the fraction is rounded)."""
    dist = np.maximum(0.0, np.maximum((below - target) - offset, (target - at_most) + offset))
    out: NDArray[np.float64] = np.minimum(dist, cap)
    return out


def sample_em_quantile(
    sorted_x: NDArray[np.float64],
    *,
    lower: float,
    upper: float,
    target: float,
    coef: float,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    offset: float = 0.0,
    cap: float = math.inf,
) -> float:
    """One draw of the continuous exponential mechanism: density ∝ exp(−coef·min(|#{x < y} − t|, cap)) on
    [lower, upper], t = target + offset, then rounded onto ``grid`` (data already clipped into
    [lower, upper] and sorted)."""
    edges, logw = _em_quantile_index_weights(sorted_x, lower, upper, target, coef, offset, cap)
    j = exact_categorical(logw, rng)
    return float(uniform_on_grid(edges[j], edges[j + 1], grid=grid, rng=rng, numerics=numerics))


def sample_em_candidates(
    sorted_x: NDArray[np.float64],
    candidates: NDArray[np.float64],
    *,
    target: float,
    coef: float,
    rng: np.random.Generator,
    offset: float = 0.0,
    cap: float = math.inf,
) -> float:
    """One draw among public candidates g with weight exp(−coef·min(max(0, #{x<g} − t, t − #{x≤g}), cap)),
    t = target + offset."""
    below = np.searchsorted(sorted_x, candidates, side="left").astype(np.float64)
    at_most = np.searchsorted(sorted_x, candidates, side="right").astype(np.float64)
    dist = _tie_distance(below, at_most, target, offset, cap)
    return float(candidates[exact_categorical(-coef * dist, rng)])


def _em_lattice_weights(
    sorted_x: NDArray[np.float64],
    lower: float,
    upper: float,
    target: float,
    coef: float,
    atoms: Atoms,
    offset: float = 0.0,
    cap: float = math.inf,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Edges (n + 2), the atom counts of the n + 1 open gaps (levels × gaps), the knots (distinct values of
    the edges that are atoms) and the log weights: gaps ln(|I_j| + Σ c_ℓ·m_ℓj) − coef·min(|j − t|, cap), then
    knots ln μ({v}) − coef·min(dist(t, [#{x < v}, #{x ≤ v}]), cap), t = target + offset (offset 0 and cap
    ∞ under substitution: exactly the uncapped weights)."""
    edges = np.concatenate(([lower], sorted_x, [upper]))
    lengths = np.diff(edges)
    counts, gap_mass, knot_mass = atoms.scan(edges)
    with np.errstate(divide="ignore"):
        log_gap = np.log(lengths + gap_mass)
    j = np.arange(lengths.size, dtype=np.float64)
    # Knots: the distinct edge values that are atoms. A run edges[s..e] of one value v has #{x < v} = s − 1
    # and #{x ≤ v} = e (edges[0] = lower and edges[n + 1] = upper are padding, not records).
    n = sorted_x.size
    new = np.concatenate(([True], edges[1:] != edges[:-1]))
    starts = np.flatnonzero(new)
    ends = np.concatenate((starts[1:], [n + 2])) - 1
    keep = knot_mass[starts] > 0.0
    knots = edges[starts[keep]]
    below = np.maximum(starts[keep] - 1, 0).astype(np.float64)
    at_most = np.minimum(ends[keep], n).astype(np.float64)
    dist = _tie_distance(below, at_most, target, offset, cap)
    gap_dist = np.minimum(np.abs((j - target) - offset), cap)
    knot_logw = np.log(knot_mass[starts[keep]]) - coef * dist
    logw = np.concatenate((log_gap - coef * gap_dist, knot_logw))
    return edges, counts, knots, logw


def sample_em_lattice(
    sorted_x: NDArray[np.float64],
    *,
    lower: float,
    upper: float,
    target: float,
    coef: float,
    lattice: Atoms,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    offset: float = 0.0,
    cap: float = math.inf,
) -> float:
    """One draw of density ∝ exp(−coef·min(dist(t, [#{x < y}, #{x ≤ y}]), cap)) w.r.t. Lebesgue + the
    atoms' measure on [lower, upper], t = target + offset: an atom is released as itself, a continuum point
    rounded onto ``grid`` (data clipped and sorted)."""
    edges, counts, knots, logw = _em_lattice_weights(
        sorted_x, lower, upper, target, coef, lattice, offset, cap
    )
    idx = exact_categorical(logw, rng)
    gaps = counts.shape[1]
    if idx >= gaps:  # an atom at a distinct data value (or a bound)
        return float(knots[idx - gaps])
    lo, hi = float(edges[idx]), float(edges[idx + 1])
    atom = lattice.draw_in_cell(lo, hi, counts[:, idx], rng)
    if atom is not None:
        return atom
    return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))


#: Under add/remove the rank distance is capped at C with (ε/2Δ)·C ≥ _CAP_NATS + 2|ln W| (public: ε, q, the
#: bounds): the cap keeps every log weight, and so the float margin, independent of the private n
#: (docs/theory/quantiles.md#adding-or-removing-a-record).
_CAP_NATS = 1600.0


def split_target(q: float, n: int) -> tuple[float, float]:
    """The add/remove target t = q·n (q's exact binary value) as (⌊q·n⌋, q·n − ⌊q·n⌋): an exact float
    integer and the fraction rounded to the nearest float, so that counts minus the target are exact up to
    one rounding of the fraction (docs/theory/quantiles.md#adding-or-removing-a-record)."""
    exact = Fraction(q) * n
    whole = math.floor(exact)
    return float(whole), float(exact - whole)


def rank_sensitivity(q: float) -> float:
    """max(q, 1 − q), rounded up: the add/remove sensitivity of the rank utility with target q·n (adding a
    record moves every count by 0 or 1 and the target by q)."""
    s = max(q, 1.0 - q)
    if Fraction(s) < max(Fraction(q), 1 - Fraction(q)):
        s = math.nextafter(s, math.inf)
    return s


def capped_calibration(
    *, epsilon: float, sensitivity: float, width: float | None
) -> tuple[float, float, float]:
    """(coef, cap, η) of the add/remove exponential mechanism, from public parameters only
    (docs/theory/quantiles.md#adding-or-removing-a-record).

    With Δ the utility's sensitivity and W the public bound on the arguments of the logarithms (1 for
    candidates): the cap C = ⌈(1600 + 2|ln W|)·2Δ/ε⌉, every log weight is bounded by M = 750 + |ln W| +
    2(ε/2Δ)·C, η = 8K·u·M as in :func:`log_weight_margin`, and coef = fl((ε − 4η)(1 − 2u)/(2Δ)), so that
    2Δ·coef ≤ ε − 4η whatever the roundings.
    """
    nominal = epsilon / (2.0 * sensitivity)
    log_w = 0.0 if width is None else abs(math.log(width))
    cap = float(math.ceil((_CAP_NATS + 2.0 * log_w) / nominal))
    magnitude = 4.0 + 746.0 + log_w + 2.0 * nominal * cap
    eta = 4.0 * _LIBM_ULPS * 2.0 * _U * magnitude
    coef = (epsilon - 4.0 * eta) * (1.0 - 2.0 * _U) / (2.0 * sensitivity)
    return coef, cap, eta


#: The add/remove lattice test passes when S + Z ≥ LATTICE_TEST_SLACK·t (t the noise scale).
LATTICE_TEST_SLACK = 3.0


def lattice_test_scale(epsilon_test: float) -> float:
    """Scale t of the lattice test's discrete Laplace noise: fl(1/ε_t) rounded up, so that 1/t ≤ ε_t."""
    return math.nextafter(1.0 / epsilon_test, math.inf)


def add_remove_lattice_test(
    sorted_x: NDArray[np.float64],
    atoms: Atoms,
    epsilon_test: float,
    rng: np.random.Generator,
    *,
    numerics: str,
) -> dict[str, Any]:
    """The lattice test under add/remove (docs/theory/quantiles.md#the-lattice-test-without-n): with N
    the records that are atoms (points of any level), the integer S = 2N − n = N − (n − N) moves by exactly 1
    when a record is added or removed; S + Z, Z exact discrete Laplace of scale t = fl(1/ε_t) rounded up, is
    ε_t-DP. Heavy atoms (every level's) iff S + Z ≥ 3t. Returns the report (a private output, covered by the
    guarantee)."""
    from smoothdp.noise import DiscreteLaplace

    n = sorted_x.size
    on = int(np.count_nonzero(atoms.contains(sorted_x))) if n else 0
    scale = lattice_test_scale(epsilon_test)
    noisy = 2 * on - n + int(DiscreteLaplace(scale).sample(rng=rng, numerics=numerics))
    threshold = LATTICE_TEST_SLACK * scale
    return {
        "epsilon": epsilon_test,
        "noisy_statistic": noisy,
        "threshold": threshold,
        "atoms": "heavy" if noisy >= threshold else "light",
    }


def heavy_atoms(lattice: LatticeSpec) -> Atoms:
    """The heavy atoms of a passed add/remove lattice test: c_ℓ = 64·σ_ℓ on every level of ``lattice``."""
    from smoothdp.central.quantiles_greedy import HEAVY_MASS

    atoms = build_atoms(lattice, factor=HEAVY_MASS)
    if atoms is None:
        raise ValueError("lattice=None has no atoms")
    return atoms


def target_rank(q: float, n: int) -> float:
    """t = r − 1/2 with r = max(1, ⌈q·n⌉) the rank of :class:`~smoothdp.central.statistics.Quantile` (q·n
    exact in q's shortest decimal form): the two intervals around x_(r) share the top weight. 0 for n = 0."""
    if n == 0:
        return 0.0
    return max(1, math.ceil(Fraction(repr(float(q))) * n)) - 0.5


class ExponentialQuantile(Mechanism):
    """The q-quantile by the exponential mechanism over the continuum between order statistics (or over
    public candidates).

    Guarantee: pure ε-DP under substitution (one record replaced), by the exponential mechanism with the
    tie-aware rank utility −dist(t, [#{x_i < y}, #{x_i ≤ y}]) of sensitivity 1 (Smith, STOC 2011),
    t = ⌈q·n⌉ − 1/2 (the rank of :class:`~smoothdp.central.statistics.Quantile`, centred), w.r.t. the public
    base measure Lebesgue + c·(counting measure on the lattice), sampled exactly from certified float
    weights (docs/theory/quantiles.md#the-exponential-mechanism-quantile,
    docs/theory/quantiles.md#a-public-lattice-for-tied-data).

    With ``neighbours="add_remove"`` (n private; an empty x draws from the base measure): pure ε-DP under
    add/remove, with target t = q·n, sensitivity Δ = max(q, 1 − q) (weights exp(−ε′·d/(2Δ))) and the
    distance capped at a public C; every parameter comes from ε, q and the bounds, none from n, and the
    whole-data sampler runs (docs/theory/quantiles.md#adding-or-removing-a-record). With a lattice, a
    private test (5% of ε) first picks heavy or light atoms
    (docs/theory/quantiles.md#the-lattice-test-without-n).

    Parameters
    ----------
    q
        The quantile in [0, 1] (target rank t = max(1, ⌈q·n⌉) − 1/2).
    epsilon
        ε > 0.
    bounds
        Public ``(lower, upper)``; the output lies in them.
    candidates
        Optional public sorted values (discrete data): the output is one of them
        (docs/theory/quantiles.md#discrete-candidates); ``lattice`` is then not used.
    lattice
        The public atoms of the base measure, so that a tied value on them is released exactly
        (:mod:`smoothdp.central.atoms`): ``"multiscale"`` (default: every dyadic number with at most five
        binary places and every decimal number with at most four decimal places, a point of spacing σ
        carrying the mass 2^-14·σ; docs/theory/quantiles.md#a-multi-scale-lattice), a spacing s (one
        lattice, mass 2^-14·s: s = m·2^e with an odd m < 2^21, or a short decimal such as 0.1), a sequence
        of spacings, or ``None``: the pure continuum. An atom is released as itself (an exact float).
    clip
        Clip records into the bounds (default; ±inf too) or refuse records outside them (trusted data).
    clamp
        Clamp the released value into the bounds after rounding onto the output grid (post-processing).
    numerics
        ``"exact"`` (default): output rounded exactly onto the public grid of the bounds; ``"float"``:
        the float fast path.
    neighbours
        ``"substitution"`` (default; n public) or ``"add_remove"`` (n private).
    """

    name: ClassVar[str] = "exponential mechanism"
    proof: ClassVar[str] = "docs/theory/quantiles.md#the-exponential-mechanism-quantile"
    source = f"{_SMITH}; exact sampling: docs/theory/quantiles.md#sampling-exactly-from-float-weights"

    def __init__(
        self,
        q: float,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        candidates: ArrayLike | None = None,
        lattice: LatticeSpec = MULTISCALE,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
    ) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.width = _check_width(self.lower, self.upper)
        self.candidates = (
            None if candidates is None else _check_candidates(candidates, self.lower, self.upper)
        )
        self.lattice = check_lattice(lattice)
        self.atoms = None if self.candidates is not None else build_atoms(self.lattice)
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        self.guarantee = PureDP(self.epsilon, neighbours=relation)
        self.calibration = None
        #: Under add/remove: (coef, cap, η) from public parameters (:func:`capped_calibration`), and the
        #: share of ε of the lattice test (0 without a lattice).
        self.capped: tuple[float, float, float] | None = None
        self.epsilon_test = 0.0
        if relation == "add_remove":
            width: float | None = None if self.candidates is not None else self.width
            if self.atoms is not None:
                from smoothdp.central.atom_selection import TEST_SHARE

                self.epsilon_test = TEST_SHARE * self.epsilon
                width = heavy_atoms(self.lattice).log_width(self.width)  # the larger W of the two masses
            self.capped = capped_calibration(
                epsilon=self.epsilon - self.epsilon_test, sensitivity=rank_sensitivity(self.q), width=width
            )

    @property
    def statistic_name(self) -> str:
        return "median" if self.q == 0.5 else f"quantile({self.q:g})"

    @property
    def atom_mass(self) -> float:
        """c_ℓ/σ_ℓ: the mass of an atom per unit of its level's spacing (0 without atoms)."""
        return 0.0 if self.atoms is None else ATOM_MASS

    def weight_margin(self, n: int) -> float:
        """η: the certified error of the float log weights for n records (under add/remove: public, for
        every n)."""
        if self.capped is not None:
            return self.capped[2]
        width: float | None = None if self.candidates is not None else self.width
        if self.atoms is not None:
            width = self.atoms.log_width(self.width)
        return log_weight_margin(epsilon=self.epsilon, n=n, width=width)

    def epsilon_used(self, n: int) -> float:
        """ε′ = ε − 4η: the budget in the float weights, η the certified error of the log weights (minus
        the lattice test's share under add/remove)."""
        return self.epsilon - self.epsilon_test - 4.0 * self.weight_margin(n)

    def _prepare(self, data: Any) -> Records:
        return as_records(data, self.lower, self.upper, clip=self.clip)

    def sample(self, data: Records | NDArray[np.float64], rng: np.random.Generator) -> float:
        """One output on prepared data (:class:`~smoothdp.scale.engine.Records`, or a clipped sorted array),
        no accountant (simulations, tests). Reads a window of ranks around the target, on any engine
        (docs/theory/quantiles.md#sampling-from-a-window-of-ranks)."""
        from smoothdp.central.quantile_window import sample_em_windowed

        records = data if isinstance(data, Records) else SortedRecords(np.asarray(data, dtype=np.float64))
        if self.capped is not None:
            return self._sample_add_remove(records.sorted_values(), rng)[0]
        n = records.n
        coef = 0.5 * self.epsilon_used(n)
        target = target_rank(self.q, n)
        if self.candidates is not None:
            value = sample_em_candidates(
                records.sorted_values(), self.candidates, target=target, coef=coef, rng=rng
            )
        else:
            value = sample_em_windowed(
                records,
                lower=self.lower,
                upper=self.upper,
                target=target,
                coef=coef,
                eta=self.weight_margin(n),
                lattice=self.atoms,
                grid=self.grid,
                rng=rng,
                numerics=self.numerics,
            )
        return float(np.clip(value, self.lower, self.upper)) if self.clamp else value

    def _sample_add_remove(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[float, dict[str, Any]]:
        """The add/remove draw (clamped if asked) and the lattice test's report: the test first (with
        atoms), then target q·n, capped distance, the whole-data sampler (every record read)."""
        assert self.capped is not None
        coef, cap, _ = self.capped
        t, offset = split_target(self.q, sorted_x.size)
        info: dict[str, Any] = {}
        if self.candidates is not None:
            value = sample_em_candidates(
                sorted_x, self.candidates, target=t, coef=coef, rng=rng, offset=offset, cap=cap
            )
        elif self.atoms is None:
            value = sample_em_quantile(
                sorted_x, lower=self.lower, upper=self.upper, target=t, coef=coef, grid=self.grid, rng=rng,
                numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        else:
            info = add_remove_lattice_test(
                sorted_x, self.atoms, self.epsilon_test, rng, numerics=self.numerics
            )
            atoms = self.test_atoms(info["atoms"] == "heavy")
            value = sample_em_lattice(
                sorted_x, lower=self.lower, upper=self.upper, target=t, coef=coef, lattice=atoms,
                grid=self.grid, rng=rng, numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        value = float(np.clip(value, self.lower, self.upper)) if self.clamp else value
        return value, info

    def test_atoms(self, heavy: bool) -> Atoms:
        """The atoms after the add/remove lattice test: every level heavy (64·σ_ℓ) or light (2^-14·σ_ℓ,
        :attr:`atoms`)."""
        assert self.atoms is not None
        return heavy_atoms(self.lattice) if heavy else self.atoms

    def log_density(
        self, sorted_x: NDArray[np.float64], y: ArrayLike, *, heavy: bool = False
    ) -> NDArray[np.float64]:
        """ln p_x(y) of the ideal (real-arithmetic, unrounded) output at ε′ w.r.t. the base measure
        (Lebesgue + the atoms' measure; ``heavy``: the heavy atoms of the add/remove test), continuous case;
        for tests."""
        n = sorted_x.size
        atoms = self.atoms if self.atoms is None or self.capped is None else self.test_atoms(heavy)
        if self.capped is not None:
            coef, cap, _ = self.capped
            t, offset = split_target(self.q, n)
        else:
            coef, cap, offset = 0.5 * self.epsilon_used(n), math.inf, 0.0
            t = target_rank(self.q, n)
        if atoms is None:
            _, logw = _em_quantile_index_weights(sorted_x, self.lower, self.upper, t, coef, offset, cap)
        else:
            *_, logw = _em_lattice_weights(sorted_x, self.lower, self.upper, t, coef, atoms, offset, cap)
        top = float(np.max(logw))
        log_z = top + math.log(float(np.sum(np.exp(logw - top))))
        yy = np.asarray(y, dtype=np.float64)
        below = np.searchsorted(sorted_x, yy, side="left").astype(np.float64)
        at_most = np.searchsorted(sorted_x, yy, side="right").astype(np.float64)
        dist = _tie_distance(below, at_most, t, offset, cap)
        out: NDArray[np.float64] = -coef * dist - log_z
        return out

    def _release(self, prepared: Records, rng: np.random.Generator) -> Release:
        info: dict[str, Any] = {}
        if self.capped is not None:
            value, info = self._sample_add_remove(prepared.sorted_values(), rng)
        else:
            value = self.sample(prepared, rng)
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "method": "exponential",
                "bounds": (self.lower, self.upper),
                "clip": self.clip,
                "clamp": self.clamp,
                "candidates": None if self.candidates is None else int(self.candidates.size),
                "lattice": None if self.atoms is None else self.atoms.label,
                "epsilon_in_weights": self.epsilon_used(prepared.n),
                "engine": prepared.engine,
                **({} if self.capped is None else {"rank_cap": self.capped[1]}),
                **({"lattice_test": info} if info else {}),
            },
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"ExponentialQuantile(q={self.q:g}, {self.guarantee}, bounds=({self.lower:g}, {self.upper:g}))"


def check_quantile_list(qs: Any) -> NDArray[np.float64]:
    """qs as a 1-D float array of values in [0, 1] (any order, duplicates allowed)."""
    arr = np.atleast_1d(as_float_array(qs, "qs"))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"qs must be a non-empty 1-D sequence of quantiles in [0, 1]; got {qs!r}")
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError(f"qs must lie in [0, 1]; got {qs!r}")
    return arr


# ------------------------------------------------------------------------------------------------------------
# Several quantiles: the recursive algorithm of Kaplan, Schnapp & Stemmer
# ------------------------------------------------------------------------------------------------------------
def recursive_levels(m: int) -> int:
    """Depth of the recursion on m sorted quantiles (middle first): ⌊log2 m⌋ + 1."""
    return m.bit_length()


class _MultiQuantile(Mechanism):
    """Shared parameters of the several-quantile mechanisms (qs: any order, duplicates allowed)."""

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
    ) -> None:
        self.qs = check_quantile_list(qs)
        self.unique_qs, self.inverse = np.unique(self.qs, return_inverse=True)
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.width = _check_width(self.lower, self.upper)
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        self.guarantee = PureDP(self.epsilon, neighbours=relation)
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return f"quantiles({', '.join(f'{q:g}' for q in self.qs)})"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """One output (in the order of ``qs``) on prepared data, no accountant (simulations, tests)."""
        out = self._sorted_sample(sorted_x, rng)
        if self.clamp:
            out = np.clip(out, self.lower, self.upper)
        return out[self.inverse]

    def _details(self) -> dict[str, Any]:
        return {"bounds": (self.lower, self.upper), "clip": self.clip, "clamp": self.clamp}

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details=self._details(),
            not_private=NotPrivate(),
        )


class RecursiveQuantiles(_MultiQuantile):
    """Several quantiles by recursive splitting (Kaplan, Schnapp & Stemmer, ICML 2022).

    Estimate the middle quantile with the exponential mechanism, split the records at the released value
    (x < v left, x ≥ v right), rescale the other quantiles to each side and recurse. Each level of the
    recursion spends ε_ℓ = ε/(2L) per node, L = ⌊log2 m⌋ + 1 levels, with the add/remove sensitivity
    max(q′, 1 − q′) of each node's utility.

    Guarantee: pure ε-DP under substitution: one substitution changes at most two nodes of a level, each
    by adding or removing one record (or one node by a substitution), so a level costs at most 2ε_ℓ;
    the L levels compose (docs/theory/quantiles.md#recursive-quantiles). Each node samples exactly as
    :class:`ExponentialQuantile`.

    ``neighbours="add_remove"`` (n private; empty data release from the base measure): an addition
    touches one node per level, so ε_ℓ = ε/L; every node's cap, float margin and coefficient come from
    public parameters (docs/theory/quantiles.md#adding-or-removing-a-record). ``lattice`` (default ``None``,
    the continuum; ``"multiscale"``, a spacing or several, as :class:`ExponentialQuantile`) gives the nodes
    the tie-aware utility and the atoms of :class:`ExponentialQuantile` (same sensitivities); under
    add/remove a private lattice test (5% of ε) first picks heavy or light atoms for every node
    (docs/theory/quantiles.md#the-lattice-test-without-n).
    """

    name: ClassVar[str] = "recursive exponential mechanism (KSS)"
    proof: ClassVar[str] = "docs/theory/quantiles.md#recursive-quantiles"
    source = f"{_KSS}; nodes: {_SMITH}"

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
        lattice: LatticeSpec = None,
    ) -> None:
        super().__init__(
            qs,
            epsilon=epsilon,
            bounds=bounds,
            clip=clip,
            clamp=clamp,
            numerics=numerics,
            neighbours=neighbours,
        )
        self.lattice = check_lattice(lattice)
        #: The nodes' light atoms (None: the continuum).
        self.atoms = build_atoms(self.lattice)

    @property
    def levels(self) -> int:
        return recursive_levels(self.unique_qs.size)

    @property
    def epsilon_test(self) -> float:
        """The lattice test's share of ε (under add/remove with a lattice; else 0)."""
        from smoothdp.central.atom_selection import TEST_SHARE

        return (
            TEST_SHARE * self.epsilon if self.neighbours == "add_remove" and self.atoms is not None else 0.0
        )

    @property
    def epsilon_per_node(self) -> float:
        """ε/(2L) under substitution, (ε − ε_test)/L under add/remove."""
        per_level = 1.0 if self.neighbours == "add_remove" else 2.0
        return (self.epsilon - self.epsilon_test) / (per_level * self.levels)

    def _node(
        self,
        data: NDArray[np.float64],
        lo: float,
        hi: float,
        q_rel: float,
        rng: np.random.Generator,
        atoms: Atoms | None,
    ) -> float:
        """One node's draw on [lo, hi] (lo < hi) with rescaled quantile ``q_rel`` (weights exp(−ε′·d/(2Δ)),
        Δ = max(q′, 1 − q′); capped distance and public margin under add/remove)."""
        # Substitution keeps its float max(q′, 1 − q′) (covered by the margin); add/remove rounds it up.
        sens = rank_sensitivity(q_rel) if self.neighbours == "add_remove" else max(q_rel, 1.0 - q_rel)
        eps_node = self.epsilon_per_node
        n = data.size
        width = hi - lo if self.atoms is None else self._width_atoms().log_width(hi - lo)
        if self.neighbours == "add_remove":
            coef, cap, _ = capped_calibration(epsilon=eps_node, sensitivity=sens, width=width)
            target, offset = split_target(q_rel, n)
        else:
            eps_eff = eps_node / sens
            eta = log_weight_margin(epsilon=eps_eff, n=n, width=width)
            coef, cap, target, offset = 0.5 * (eps_eff - 4.0 * eta), math.inf, q_rel * n, 0.0
        if atoms is None:
            return sample_em_quantile(
                data, lower=lo, upper=hi, target=target, coef=coef, grid=self.grid, rng=rng,
                numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        return sample_em_lattice(
            data, lower=lo, upper=hi, target=target, coef=coef, lattice=atoms, grid=self.grid,
            rng=rng, numerics=self.numerics, offset=offset, cap=cap,
        )  # fmt: skip

    def _width_atoms(self) -> Atoms:
        """The atoms whose W bounds the logarithms: the heavy atoms under add/remove (public, whatever the
        test says), else the light atoms themselves."""
        assert self.atoms is not None
        if self.neighbours != "add_remove":
            return self.atoms
        return heavy_atoms(self.lattice)

    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        return self._draw(sorted_x, rng)[0]

    def _draw(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        """The sorted outputs and the add/remove lattice test's report (empty when no test runs)."""
        info: dict[str, Any] = {}
        atoms = self.atoms
        if atoms is not None and self.neighbours == "add_remove":
            info = add_remove_lattice_test(sorted_x, atoms, self.epsilon_test, rng, numerics=self.numerics)
            if info["atoms"] == "heavy":
                atoms = heavy_atoms(self.lattice)
        qs = self.unique_qs
        out = np.empty(qs.size)
        # Stack of (data slice, quantiles (global indices), lower, upper, q-scale offset/span).
        stack: list[tuple[NDArray[np.float64], int, int, float, float, float, float]] = [
            (sorted_x, 0, qs.size, self.lower, self.upper, 0.0, 1.0)
        ]
        while stack:
            data, i0, i1, lo, hi, q_lo, q_hi = stack.pop()
            mid = (i0 + i1 - 1) // 2 if (i1 - i0) % 2 == 0 else (i0 + i1) // 2
            span = q_hi - q_lo
            q_rel = 0.0 if span <= 0.0 else min(1.0, max(0.0, float((qs[mid] - q_lo) / span)))
            if hi > lo:
                v = self._node(data, lo, hi, q_rel, rng, atoms)
                v = min(max(v, lo), hi)  # the grid point may round just outside a non-grid end
            else:
                v = lo
            out[mid] = v
            cut = int(np.searchsorted(data, v, side="left"))
            if mid > i0:
                stack.append((data[:cut], i0, mid, lo, v, q_lo, float(qs[mid])))
            if i1 > mid + 1:
                stack.append((data[cut:], mid + 1, i1, v, hi, float(qs[mid]), q_hi))
        return out, info

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        values, info = self._draw(prepared, rng)
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        return self._make_release(
            values[self.inverse],
            sampler=sampler_label(self.numerics),
            details={**self._details(), **({"lattice_test": info} if info else {})},
            not_private=NotPrivate(),
        )

    def _details(self) -> dict[str, Any]:
        return {
            **super()._details(),
            "method": "recursive",
            "levels": self.levels,
            "epsilon_per_node": self.epsilon_per_node,
            "lattice": self.lattice,
        }


# ------------------------------------------------------------------------------------------------------------
# Several quantiles: JointExp
# ------------------------------------------------------------------------------------------------------------
#: Block length of the blocked log-add-exp scans of JointExp (their error grows with the depth, not with n).
_SCAN_BLOCK = 64
#: The smallest positive distance between two float64 numbers is 2^-1074: ln 2^-1074 ≥ −745.
_LN_TINY = 745.0


def _scan_depth(length: int) -> int:
    """A bound D(L) on the number of chained log-add-exp operations behind any entry of
    :func:`_lae_scan` on L entries: L - 1 for L ≤ B, else B + D(⌈L/B⌉)."""
    if length <= _SCAN_BLOCK:
        return max(0, length - 1)
    return _SCAN_BLOCK + _scan_depth(-(-length // _SCAN_BLOCK))


def _lae_scan(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inclusive log-add-exp prefix scan along the last axis of a 2-D array, blocked: a sequential scan of
    B entries inside each block, the same scan (recursively) over the block totals, one log-add-exp to
    combine. Same values as ``np.logaddexp.accumulate`` up to rounding, but every entry is the end of a
    chain of at most :func:`_scan_depth` operations instead of L."""
    rows, length = v.shape
    if length <= _SCAN_BLOCK:
        out: NDArray[np.float64] = np.logaddexp.accumulate(v, axis=1)
        return out
    nb = -(-length // _SCAN_BLOCK)
    padded = np.full((rows, nb * _SCAN_BLOCK), -np.inf)
    padded[:, :length] = v
    blocks = np.logaddexp.accumulate(padded.reshape(rows, nb, _SCAN_BLOCK), axis=2)
    before = _lae_scan(np.ascontiguousarray(blocks[:, :, -1]))
    blocks[:, 1:, :] = np.logaddexp(blocks[:, 1:, :], before[:, :-1, None])
    result: NDArray[np.float64] = blocks.reshape(rows, nb * _SCAN_BLOCK)[:, :length]
    return result


def _lse_rows(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """log Σ_r exp(a[r, i]) per column, as top + log Σ exp(a − top) (−inf for an all −inf column)."""
    top = np.max(a, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: NDArray[np.float64] = safe + np.log(np.sum(np.exp(a - safe), axis=0))
    return out


def _window_logsum(g: NDArray[np.float64], w: int) -> NDArray[np.float64]:
    """out[r] = log Σ_{l=max(0, r−w+1)}^{r} exp(g[l]), without subtraction: blocks of w, a window is a block
    suffix plus the next block's prefix (both blocked scans)."""
    n = g.size
    nb = -(-n // w)
    padded = np.concatenate((g, np.full(nb * w - n, -np.inf))).reshape(nb, w)
    pre = _lae_scan(padded).ravel()
    suf = _lae_scan(np.ascontiguousarray(padded[:, ::-1]))[:, ::-1].ravel()
    r = np.arange(n)
    start = r - w + 1
    inside = (start <= 0) | (start % w == 0)
    out = pre[r].copy()
    cross = ~inside
    out[cross] = np.logaddexp(suf[start[cross]], pre[r[cross]])
    return out


def _log_toeplitz_abs(h: NDArray[np.float64], c: float, s: float) -> NDArray[np.float64]:
    """out[i] = log Σ_{i' < i} exp(h[i'] − c·|i − i' − s|) in O(n): the kernel splits at d = i − i' = s into
    two exponentials, one a (blocked) running log-add-exp sum, the other a sliding window."""
    n = h.size
    i = np.arange(n, dtype=np.float64)
    d_a = max(1, math.ceil(s))
    # d ≥ d_a (so d ≥ s): exp(c·s − c·i)·exp(c·i'), summed over i' ≤ i − d_a.
    acc = _lae_scan((h + c * i)[None, :])[0]
    part_a = np.full(n, -np.inf)
    ok = i >= d_a
    part_a[ok] = acc[(i[ok] - d_a).astype(np.int64)] + c * s - c * i[ok]
    if d_a == 1:
        return part_a
    # 1 ≤ d ≤ d_a − 1 (so d < s): exp(c·i − c·s)·exp(−c·i'), over i' ∈ [i − d_a + 1, i − 1].
    win = _window_logsum(h - c * i, d_a - 1)
    part_b = np.full(n, -np.inf)
    part_b[1:] = win[:-1] + c * i[1:] - c * s
    return np.logaddexp(part_a, part_b)


def joint_margin(*, epsilon: float, n: int, m: int, width: float, mass_ulps: float = 2.0) -> float:
    """The public loss margin of JointExp's float dynamic programme (docs/theory/quantiles.md#jointexp):
    8m·E* + 2uε, where E* bounds |ln Ŵ − ln W| for every weight of every draw.

    With u = 2^-53, K the ulps budget of numpy's log/exp/log1p, Λ = 745 + |ln width|, c = ε/4:

    * R = (m+1)Λ + ln((m+1)!) + ln(m+1) + c(2n+2) + 2 bounds every normalised table entry;
    * M = R + c(2n+4) + ln(n+2) + 2 bounds every intermediate value;
    * δ = u(M + 4K) bounds the error of one operation, ℓ_err = (2KΛ + mass_ulps)u that of a log-length
      (``mass_ulps``: the relative error, in units of u, of the float length or mass before its logarithm);
    * D = :func:`_scan_depth` (n+1) bounds the chain of a blocked scan;
    * E* = m·ℓ_err + ((m−1)(D+16) + m(m−1)/2 + m + 16)·δ.

    The lattice variant has its own margin (:func:`smoothdp.central.quantiles_greedy.greedy_margin`).
    """
    c = epsilon / 4.0
    lam = _LN_TINY + abs(math.log(width))
    big_r = (m + 1.0) * lam + math.lgamma(m + 2.0) + math.log(m + 1.0) + c * (2.0 * n + 2.0) + 2.0
    big_m = big_r + c * (2.0 * n + 4.0) + math.log(n + 2.0) + 2.0
    delta = _U * (big_m + 4.0 * _LIBM_ULPS)
    ell_err = (2.0 * _LIBM_ULPS * lam + mass_ulps) * _U
    depth = _scan_depth(n + 1)
    ops = (m - 1.0) * (depth + 16.0) + m * (m - 1.0) / 2.0 + m + 16.0
    e_star = m * ell_err + ops * delta
    return 8.0 * m * e_star + 2.0 * _U * epsilon


class _JointTables:
    """JointExp's forward tables and the float weights of the backward draws (each draw exact for them)."""

    def __init__(
        self,
        edges: NDArray[np.float64],
        log_len: NDArray[np.float64],
        gaps: NDArray[np.float64],
        log_fact: list[float],
        first: NDArray[np.float64],
        tot: NDArray[np.float64],
        nus: list[float],
        coef: float,
    ) -> None:
        self.edges, self.log_len, self.gaps, self.log_fact = edges, log_len, gaps, log_fact
        self.first, self.tot, self.nus, self.coef = first, tot, nus, coef

    def interval_weights(self, j: int, last: int) -> NDArray[np.float64]:
        """Log weights of the interval i < last of output j given the next output in interval ``last``
        (last = n + 1: the upper bound): Σ_r table_j(r, i) times the gap kernel."""
        n_int = self.log_len.size
        idx = np.arange(last, dtype=np.float64)
        count = (n_int - 1) - idx if last == n_int else last - idx
        out: NDArray[np.float64] = self.tot[j, :last] - self.coef * np.abs(count - self.gaps[j + 1])
        return out

    def repeat_weights(self, j: int, i: int) -> NDArray[np.float64]:
        """table_j(r, i), r = 0..j, recomputed from row 0 of level j − r by the forward operations."""
        row = np.empty(j + 1)
        ell = float(self.log_len[i])
        for r in range(j + 1):
            v = float(self.first[j - r, i])
            for k in range(j - r + 1, j + 1):
                v = ((ell - self.coef * float(self.gaps[k])) + v) - self.log_fact[k - j + r]
                v = v - self.nus[k]
            row[r] = v
        return row


def _joint_forward(
    log_mass: NDArray[np.float64], gaps: NDArray[np.float64], coef: float, m: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[float], list[float]]:
    """JointExp's forward dynamic programme over cells with log masses ``log_mass``, where the utility of
    two consecutive outputs in cells i′ ≤ i is −coef·|i − i′ − gaps[j]| (cell index differences are the
    counts between them, in the cells' unit). Returns the row r = 0 and the log-sum over r of every level,
    the levels' float offsets and ln(r + 1)."""
    n_cells = log_mass.size
    log_fact = [math.log(r + 1.0) for r in range(m)]
    idx = np.arange(n_cells, dtype=np.float64)
    # buf[r, i] (level j, rows 0..j): log weight of outputs 0..j placed with the last r + 1 of them in
    # cell i, volume factor mass_i^(r+1)/(r+1)! included, minus the level's float offset nus[j]
    # (its maximum: a constant factor per level, which no draw sees).
    buf = np.empty((m, n_cells))
    first = np.empty((m, n_cells))  # row r = 0 of every level
    tot = np.empty((m, n_cells))  # log Σ_r of every level
    nus: list[float] = []
    buf[0] = log_mass - coef * np.abs(idx - gaps[0])
    for j in range(m):
        if j > 0:
            moved = _log_toeplitz_abs(tot[j - 1], coef, float(gaps[j]))
            base = log_mass - coef * gaps[j]
            for r in range(j, 0, -1):  # in place, from the top row down
                buf[r] = (base + buf[r - 1]) - log_fact[r]
            buf[0] = log_mass + moved
        nu = float(np.max(buf[: j + 1]))
        buf[: j + 1] -= nu
        nus.append(nu)
        first[j] = buf[0]
        tot[j] = _lse_rows(buf[: j + 1])
    return first, tot, nus, log_fact


class _ContinuumProgramme:
    """JointExp's forward tables over the continuum with their backward draw and total weight."""

    def __init__(self, tables: _JointTables, grid: OutputGrid, numerics: str) -> None:
        self.tables, self.grid, self.numerics = tables, grid, numerics

    @property
    def size(self) -> int:
        """The number of weights of the first backward draw (the n + 1 intervals)."""
        return int(self.tables.log_len.size)

    def log_normaliser(self) -> float:
        """ln Z: the levels' float offsets plus the log-sum of the first backward draw's weights (the last
        output's interval, the final gap's kernel included)."""
        t = self.tables
        return math.fsum(t.nus) + log_sum(t.interval_weights(len(t.nus) - 1, self.size))

    def draw(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """The sorted outputs: backwards, the interval then the repeats of each output, then uniform points
        of the intervals rounded onto the grid."""
        tables, m = self.tables, len(self.tables.nus)
        edges = tables.edges
        out = np.empty(m)
        j, last = m - 1, self.size  # last: interval of the next output (n_cells stands for the bound b)
        while j >= 0:
            i = exact_categorical(tables.interval_weights(j, last), rng)
            r = exact_categorical(tables.repeat_weights(j, i), rng)
            pts = uniform_on_grid(
                np.full(r + 1, edges[i]),
                np.full(r + 1, edges[i + 1]),
                grid=self.grid,
                rng=rng,
                numerics=self.numerics,
            )
            out[j - r : j + 1] = np.sort(np.atleast_1d(pts))
            j -= r + 1
            last = i
        return np.sort(out)


def log_sum(w: NDArray[np.float64]) -> float:
    """ln Σ exp(w) as top + ln Σ exp(w − top) (−inf when every weight is −inf)."""
    top = float(np.max(w))
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(w - top))))


class JointQuantiles(_MultiQuantile):
    """Several quantiles from one exponential mechanism over ordered output vectors (JointExp: Gillenwater,
    Joseph & Kulesza, ICML 2021), by default on a public lattice that lets tied values be released exactly.

    ``lattice=None``: utility u(o) = −Σ_{j=1}^{m+1} |#{x ∈ [o_{j−1}, o_j)} − (q_j − q_{j−1})·n|
    (o_0 = a, o_{m+1} = b), of sensitivity 2 under substitution; density ∝ exp(εu/4) on a ≤ o_1 ≤ … ≤ o_m ≤ b
    (docs/theory/quantiles.md#jointexp). Sampled by dynamic programming in log space over (quantile,
    interval, repeats), each level normalised to maximum 0, O(m²n) vectorized over n with O(m·n) memory,
    then backwards (interval, then repeats).

    ``lattice`` (default ``"multiscale"``, as :class:`ExponentialQuantile`; a spacing s, a sequence of
    spacings; docs/theory/quantiles.md#jointexp-on-a-public-lattice): two stages.
    (1) the lattice test: 5% of ε on the number N of records that are atoms, N + Z with Z exact discrete
    Laplace of scale 1/ε_t (the geometric mechanism); heavy atoms c_ℓ = 64·σ_ℓ if the noisy count is at
    least 0.9n + 3/ε_t, else c_ℓ = 2^-14·σ_ℓ. ``atoms="auto"`` (default) runs it only when that threshold
    is at most n (a public condition: then data entirely on the lattice pass with probability ≥ 1/2; above
    it a pass could only come from the noise), and otherwise takes light atoms and spends all of ε on stage 2;
    ``atoms="test"`` always runs it; ``"heavy"`` / ``"light"``: a public choice, no test.
    (2) JointExp with the rest of ε over outputs (o_j, ρ_j), base measure (Lebesgue +
    the atoms' measure) ⊗ Lebesgue on ρ, ordered lexicographically, where an output at a record value v that
    is an atom takes the greedy count C_j = clamp(C_{j−1} + ĝ_j, #{x < v}, #{x ≤ v}) (ĝ_j the target gap
    rounded to a half-integer): still sensitivity 2, and a tied value costs the atom mass c, not a split.
    Sampled by a dynamic programme over the gaps and the counts of each tied value (at most 4n + 2 states),
    O(m²·S) time, O(m·S) memory.

    Guarantee: pure ε-DP under substitution (the stages compose). The float dynamic programme has a
    certified error bound (public: from n, m, ε, the bounds and the lattice; :meth:`margin`), charged to the
    budget: the weights use ε′ = ε_main − margin. Each step samples exactly from its float weights, the
    points inside a cell exactly. The margin is below 10⁻⁴·ε for m ≤ 20 quantiles up to n = 10⁶; JointExp is
    refused (naming n and m) when the margin would exceed 10% of ε; :class:`RecursiveQuantiles` has none.
    The release reports the test (its ε, the noisy count, heavy or light atoms) in ``details``: it is a
    private output, covered by the guarantee.
    """

    name: ClassVar[str] = "joint exponential mechanism (JointExp)"
    proof: ClassVar[str] = "docs/theory/quantiles.md#jointexp"
    source = _GJK

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        lattice: LatticeSpec = MULTISCALE,
        atoms: str = "auto",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
    ) -> None:
        if neighbours == "add_remove":  # its float margin and lattice test are functions of the public n
            raise ValueError(
                "neighbours='add_remove' is not supported by JointExp (it supports 'substitution' only: its "
                "float margin and lattice test read n); use RecursiveQuantiles (method='recursive')"
            )
        check_neighbours(neighbours, allowed=("substitution",))
        super().__init__(qs, epsilon=epsilon, bounds=bounds, clip=clip, clamp=clamp, numerics=numerics)
        self.lattice = check_lattice(lattice)
        if not isinstance(atoms, str) or atoms not in ("auto", "test", "heavy", "light"):
            raise ValueError(f"atoms must be 'auto', 'test', 'heavy' or 'light'; got {atoms!r}")
        self.atoms = atoms

    def stage_atoms(self, n: int) -> str:
        """How stage 1 sets the atom masses on n records (public): ``"test"`` (the private selection of a
        heavy level runs), ``"heavy"`` or ``"light"``. ``atoms="auto"`` runs the selection only where
        records that are all points of one level would select it with probability above 1/2
        (:func:`~smoothdp.central.atom_selection.selection_runs`)."""
        from smoothdp.central.atom_selection import TEST_SHARE, selection_runs

        if self.atoms == "auto" and self.lattice is not None:
            levels = len(self.atoms_of(False).levels)
            return "test" if selection_runs(n, TEST_SHARE * self.epsilon, levels) else "light"
        return "light" if self.atoms == "auto" else self.atoms

    def epsilon_test(self, n: int) -> float:
        """ε_t of the selection on n records (0 without a lattice or when it does not run)."""
        from smoothdp.central.atom_selection import TEST_SHARE

        if self.lattice is None or self.stage_atoms(n) != "test":
            return 0.0
        return TEST_SHARE * self.epsilon

    def epsilon_main(self, n: int) -> float:
        """ε of the JointExp stage on n records: ε − ε_t."""
        return self.epsilon - self.epsilon_test(n)

    def stage_atom_options(self, n: int) -> list[Atoms]:
        """Every atom measure stage 2 may use on n records (public before stage 1 runs)."""
        light = self.atoms_of(False)
        stage = self.stage_atoms(n)
        if stage == "light":
            return [light]
        if stage == "heavy":
            return [self.atoms_of(True)]
        return [light] + [light.with_level_factor(i, self.atom_mass(True)) for i in range(len(light.levels))]

    def margin(self, n: int) -> float:
        """The public loss margin of the float dynamic programme on n records, charged to the JointExp
        stage (:func:`joint_margin`, docs/theory/quantiles.md#jointexp; on a lattice the larger
        :func:`~smoothdp.central.quantiles_greedy.greedy_margin` of both atom masses,
        docs/theory/quantiles.md#float-error-of-the-greedy-programme)."""
        if self.lattice is None:
            return self.margin_for(n, None)
        return max(self.margin_for(n, a) for a in self.stage_atom_options(n))

    def margin_for(self, n: int, atoms: Atoms | None) -> float:
        """The margin of stage 2 on n records with the given atoms (None: the continuum's)."""
        from smoothdp.central.quantiles_greedy import greedy_margin

        m = int(self.unique_qs.size)
        if atoms is None:
            return joint_margin(epsilon=self.epsilon, n=n, m=m, width=self.width)
        width, ulps = atoms.log_width(self.width), atoms.mass_ulps + 6.0
        return greedy_margin(epsilon=self.epsilon_main(n), n=n, m=m, width=width, mass_ulps=ulps)

    def admissible(self, n: int) -> bool:
        """Whether the float margin stays within 10% of the stage's ε at n records (a public condition)."""
        return self.margin(n) <= 0.1 * self.epsilon_main(n)

    def _check_admissible(self, n: int) -> None:
        if not self.admissible(n):
            raise ValueError(
                f"JointExp's certified float margin exceeds 10% of epsilon for n={n}, "
                f"m={self.unique_qs.size} quantiles at epsilon={self.epsilon:g}; use method='recursive'"
            )

    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        return self._draw(sorted_x, rng)[0]

    def stage_coef(self, n: int) -> float:
        """The kernel coefficient of stage 2 on n records: (ε_main − margin)/4 (public)."""
        return (self.epsilon_main(n) - self.margin(n)) / 4.0

    def programme(self, sorted_x: NDArray[np.float64], atoms: Atoms | None, coef: float) -> Any:
        """Stage 2's forward programme on sorted data clipped into this mechanism's bounds, at kernel
        coefficient ``coef``: the continuum's (atoms None) or the greedy lattice programme. Its
        ``draw(rng)`` samples the sorted outputs, its ``log_normaliser()`` is ln Z, the total weight."""
        from smoothdp.central.quantiles_greedy import GreedyProgramme

        if atoms is None:
            return _ContinuumProgramme(self._tables(sorted_x, coef), self.grid, self.numerics)
        return GreedyProgramme(
            sorted_x, self.lower, self.upper, atoms, self.unique_qs, coef, self.grid, self.numerics
        )

    def choose_atoms(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[Atoms | None, dict[str, Any]]:
        """Stage 1 on the sorted, clipped records: the atoms of stage 2 (None without a lattice) and the
        report of the selection (docs/theory/quantiles.md#choosing-the-heavy-level)."""
        from smoothdp.central.atom_selection import selected_level, selection_scores

        if self.lattice is None:
            return None, {}
        n = sorted_x.size
        stage = self.stage_atoms(n)
        if stage != "test":
            report = {"epsilon": 0.0, "atoms": stage, "level": None}
            return self.atoms_of(stage == "heavy"), {"lattice_test": report}
        eps_t = self.epsilon_test(n)
        light = self.atoms_of(False)
        # The exponential mechanism over the selection's scores (sensitivity 1), exact for its float weights.
        scores = np.array(selection_scores(sorted_x, light, n, eps_t))
        coef = 0.5 * (eps_t - 4.0 * log_weight_margin(epsilon=eps_t, n=n, width=None))
        level = selected_level(light, exact_categorical(coef * scores, rng))
        atoms = light if level is None else light.with_level_factor(level, self.atom_mass(True))
        info = {
            "epsilon": eps_t,
            "atoms": "light" if level is None else "heavy",
            "level": None if level is None else light.levels[level].spacing,
        }
        return atoms, {"lattice_test": info}

    def _draw(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        """Stage 1 (unless there is no lattice or the atoms are public) and stage 2 (the programme's
        backward draws and the points inside the cells): the sorted values and stage 1's report."""
        n = sorted_x.size
        self._check_admissible(n)
        atoms, info = self.choose_atoms(sorted_x, rng)
        return self.programme(sorted_x, atoms, self.stage_coef(n)).draw(rng), info

    def atom_mass(self, heavy: bool) -> float:
        """The atom mass per unit of spacing, c_ℓ/σ_ℓ, of stage 2: 64 (heavy) or 2^-14 (light)."""
        from smoothdp.central.quantiles_greedy import HEAVY_MASS, LIGHT_MASS

        return HEAVY_MASS if heavy else LIGHT_MASS

    def atoms_of(self, heavy: bool) -> Atoms:
        """The atoms of stage 2: c_ℓ = :meth:`atom_mass`·σ_ℓ on the levels of ``lattice``."""
        atoms = build_atoms(self.lattice, factor=self.atom_mass(heavy))
        if atoms is None:
            raise ValueError("JointQuantiles(lattice=None) has no atoms")
        return atoms

    def _tables(self, sorted_x: NDArray[np.float64], coef: float) -> _JointTables:
        """The continuum's forward dynamic programme on sorted, clipped data at kernel coefficient ``coef``
        (= ε′/4) over the n + 1 intervals."""
        qs = self.unique_qs
        m, n = qs.size, sorted_x.size
        gaps = np.concatenate(([qs[0]], np.diff(qs), [1.0 - qs[-1]])) * n  # target count per gap
        edges = np.concatenate(([self.lower], sorted_x, [self.upper]))
        with np.errstate(divide="ignore"):
            log_mass = np.log(np.diff(edges))  # n + 1 intervals
        first, tot, nus, log_fact = _joint_forward(log_mass, gaps, coef, m)
        return _JointTables(edges, log_mass, gaps, log_fact, first, tot, nus, coef)

    def _details(self) -> dict[str, Any]:
        out = {
            **super()._details(),
            "method": "joint_exp",
            "lattice": self.lattice,
        }
        if self.lattice is not None:
            out["atoms"] = self.atoms
        return out

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        values, info = self._draw(prepared, rng)
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        release = self._make_release(
            values[self.inverse],
            sampler=sampler_label(self.numerics),
            details={**self._details(), **info},
            not_private=NotPrivate(),
        )
        release.details["epsilon_float_margin"] = self.margin(prepared.size)
        return release


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
