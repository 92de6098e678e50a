"""JointExp from windows of ranks (docs/theory/quantiles.md#jointexp-from-windows-of-ranks).

The greedy programme of :mod:`smoothdp.central.quantiles.greedy` (with the public atoms, or with none for
``lattice=None``) over the states whose count C_j lies in a window [A_j, B_j] around the target count T_j of
output j, every other state and every repeat of a cell masked; the outputs whose count leaves its window are
covered by one *outside* pseudo-outcome of weight Û ≥ their total weight, as the single quantile's windowed
sampler does (:mod:`smoothdp.central.quantiles.window`).

* Windows (public: n, m, ε, the quantiles): w = ⌈(m·(ln(n + 2) + 20) + 60)/(2·coef)⌉, [A_j, B_j] =
  [⌊T_j⌋ − w, ⌊T_j⌋ + w]; the path runs when the windows are disjoint, apart by a rank at least, and inside
  [1, n − 1] (:func:`plan_joint_windows`); the records of ranks A_j … B_j + 1 are read (one selection for
  all windows).
* The bound: the utility telescopes, Σ_k |ΔC_k − g_k| ≥ 2|C_j − T_j| − |n − Σg|, so an output whose
  count C_j leaves its window on one side has u ≥ D (public), and lies in S = [a, x_(A_j)] (left) or
  [x_(B_j + 1), b] (right); the ordered volume of such outputs is at most μ(S)·T^{m−1}/(m − 1)!,
  T = μ([a, b]). Û_{j,side} = e^{−coef·D + σ}·μ(S)·T^{m−1}/(m − 1)! (σ ≥ 2^-20 a rounding slack).
* One categorical draw (the last output's state, or *outside*), then the backward draws of the programme.
* The outside round (probability Û/Z, below e^-60 unless records are packed at the float resolution): every
  record sorted; a proposal from ν = Σ Û_{j,s}/Û · (one point from μ|S_{j,s}, m − 1 from μ/T, sorted),
  accepted with probability e^{−coef·u}/(e^{σ} Σ_{j,s} N_{j,s} e^{−coef·D_{j,s}}) ≤ 1 (N_{j,s}: the
  outputs in S_{j,s}), rejected when its counts are all in their windows; on a rejection one draw of the
  whole-data programme.
* A run of tied atom values whose counts reach two windows (one value holding more than the records
  between two windows) is a repeat the masks cannot hold: the whole-data programme runs (data-dependent
  work, documented in docs/theory/floating-point.md#timing).

The released law is within e^{±κ} of the exact JointExp law for every data set, κ = (4m + 8)E* + 2^-26
(E*: :func:`~smoothdp.central.quantiles.greedy.greedy_error_bound`); :func:`windowed_margin` charges 2κ.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import Atoms
from smoothdp.central.quantiles.exact_draws import (
    UNIT_ROUNDOFF,
    bracket_uniform,
    dyadic_parts,
    exact_categorical,
    uniform_words,
)
from smoothdp.central.quantiles.greedy import GreedyTables, greedy_error_bound, greedy_sample, greedy_targets
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.exact.bits import bernoulli
from smoothdp.scale.engine import Records
from smoothdp.scale.selection import RankWindow
from smoothdp.work import tally

__all__ = [
    "JointWindows",
    "WindowChain",
    "joint_window_half_width",
    "plan_joint_windows",
    "sample_joint_windowed",
    "windowed_margin",
]

#: ln of the assumed spread of the data inside the bounds per record (T/μ(cell) ≲ n·e^20) and the reach:
#: the outside round has probability ≲ e^-60 for such data.
_SPREAD = 20.0
_REACH = 60.0
#: Rounding slack of every outside bound (far above the float error of its few operations).
_SLACK = 2.0**-20


def joint_window_half_width(n: int, m: int, coef: float) -> int:
    """w = ⌈(m·(ln(n + 2) + 20) + 60)/(2·coef)⌉ (public: n, m and the kernel coefficient)."""
    return max(1, math.ceil((m * (math.log(n + 2.0) + _SPREAD) + _REACH) / (2.0 * coef)))


@dataclass(frozen=True)
class JointWindows:
    """The public windows of the counts: [A_j, B_j] per output, and the utility bounds D of an output whose
    count leaves its window on the left / right (floats rounded down)."""

    bounds: list[tuple[int, int]]
    d_left: list[float]
    d_right: list[float]

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The ranks read per window: A_j … B_j + 1."""
        return [(a, b + 1) for a, b in self.bounds]


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def plan_joint_windows(
    qs: NDArray[np.float64], n: int, coef: float, half_width: int | None = None
) -> JointWindows | None:
    """The windows of :func:`joint_window_half_width` (or ``half_width``), or None when they overlap, touch
    or reach the ends (then the whole-data programme runs). Public: n, the quantiles and coef."""
    if n < 4:
        return None
    t, _ = greedy_targets(qs, n)
    gaps = [Fraction(float(v)) / 2 for v in t]  # g_k exactly (t = 2g exactly)
    loose = abs(n - sum(gaps, Fraction(0)))  # |n − Σ g|
    w = joint_window_half_width(n, qs.size, coef) if half_width is None else int(half_width)
    bounds, d_left, d_right = [], [], []
    total = Fraction(0)
    for g in gaps[:-1]:
        total += g
        centre = math.floor(total)
        a, b = centre - w, centre + w
        bounds.append((a, b))
        d_left.append(_float_down(2 * (total - a + Fraction(1, 2)) - loose))
        d_right.append(_float_down(2 * (b + Fraction(1, 2) - total) - loose))
    if bounds[0][0] < 1 or bounds[-1][1] + 1 > n - 1:
        return None
    if any(bounds[j][1] + 1 >= bounds[j + 1][0] for j in range(len(bounds) - 1)):
        return None
    return JointWindows(bounds, d_left, d_right)


def windowed_margin(*, epsilon: float, n: int, m: int, width: float, mass_ulps: float = 8.0) -> float:
    """(8m + 16)·E* + 2^-25 + 2uε: twice the bound κ on |ln P − ln π| of the windowed sampler
    (docs/theory/quantiles.md#jointexp-from-windows-of-ranks), E* from
    :func:`~smoothdp.central.quantiles.greedy.greedy_error_bound` (``width``: the largest cell mass)."""
    e_star = greedy_error_bound(epsilon=epsilon, n=n, m=m, width=width, mass_ulps=mass_ulps)
    return (8.0 * m + 16.0) * e_star + 2.0**-25 + 2.0 * UNIT_ROUNDOFF * epsilon


def _scan(
    atoms: Atoms | None, vals: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:meth:`Atoms.scan` of sorted values (zero counts and masses without atoms)."""
    if atoms is None:
        gaps = max(vals.size - 1, 0)
        return np.zeros((0, gaps)), np.zeros(gaps), np.zeros(vals.size)
    return atoms.scan(vals)


# ------------------------------------------------------------------------------------------------------------
# The states of the windows
# ------------------------------------------------------------------------------------------------------------
class WindowChain:
    """The greedy programme's states whose count lies in a window (the attributes of
    :class:`~smoothdp.central.quantiles.greedy.GreedyChain` that the tables and the backward draws read),
    in output order, and ``allowed`` (m × states): the states of output j's window. ``spanning``: a knot
    reaches two windows (the caller then runs the whole-data programme)."""

    def __init__(self, windows: list[RankWindow], plan: JointWindows, n: int, atoms: Atoms | None) -> None:
        self.n, self.atoms = n, atoms
        cols: dict[str, list[NDArray[Any]]] = {
            k: [] for k in ("c2", "knot", "logm", "bid", "gap", "l2", "u2")
        }
        levels: list[NDArray[np.int64]] = []
        gap_lo: list[NDArray[np.float64]] = []
        gap_hi: list[NDArray[np.float64]] = []
        gap_counts: list[NDArray[np.float64]] = []
        knot_values: list[NDArray[np.float64]] = []
        seen: set[float] = set()
        self.spanning = False
        n_gaps = n_knots = 0
        for j, (win, (a, b)) in enumerate(zip(windows, plan.bounds, strict=True)):
            vals = win.values
            ranks = np.arange(a, b + 2)
            counts, gap_mass, knot_mass = _scan(atoms, vals)
            with np.errstate(divide="ignore"):
                glog = np.log(np.diff(vals) + gap_mass)
            gi = np.flatnonzero(np.isfinite(glog))
            new = np.concatenate(([True], vals[1:] != vals[:-1]))
            starts = np.flatnonzero(new)
            ends = np.concatenate((starts[1:], [vals.size])) - 1
            lo_r = ranks[starts] - 1
            hi_r = ranks[ends].copy()
            lo_r[0], hi_r[-1] = win.n_below, n - win.n_above
            knot = knot_mass[starts] > 0.0
            lo2 = 2 * np.maximum(lo_r, a)
            hi2 = 2 * np.minimum(hi_r, b)
            keep = knot & (hi2 >= lo2)
            kvals, kmass = vals[starts[keep]], knot_mass[starts[keep]]
            lo_r, hi_r, lo2, hi2 = lo_r[keep], hi_r[keep], lo2[keep], hi2[keep]
            if seen & set(kvals.tolist()):
                self.spanning = True
            seen |= set(kvals.tolist())
            sizes = hi2 - lo2 + 1
            nk = int(sizes.sum())
            block = np.repeat(np.arange(kvals.size), sizes)
            offset = np.arange(nk) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            key = np.concatenate((2 * (gi + a), 2 * np.repeat(lo_r, sizes) + 1))
            order = np.argsort(key, kind="stable")
            c2 = np.concatenate((2 * (gi + a), np.repeat(lo2, sizes) + offset)).astype(np.int64)
            cols["c2"].append(c2[order])
            cols["knot"].append(np.concatenate((np.zeros(gi.size, bool), np.ones(nk, bool)))[order])
            cols["logm"].append(np.concatenate((glog[gi], np.repeat(np.log(kmass), sizes)))[order])
            cols["bid"].append(np.concatenate((np.full(gi.size, -1), block + n_knots))[order])
            cols["gap"].append(np.concatenate((np.arange(gi.size) + n_gaps, np.full(nk, -1)))[order])
            cols["l2"].append(
                np.concatenate((np.zeros(gi.size, np.int64), 2 * np.repeat(lo_r, sizes)))[order]
            )
            cols["u2"].append(
                np.concatenate((np.zeros(gi.size, np.int64), 2 * np.repeat(hi_r, sizes)))[order]
            )
            levels.append(np.full(gi.size + nk, j))
            gap_lo.append(vals[:-1][gi])
            gap_hi.append(vals[1:][gi])
            gap_counts.append(counts[:, gi])
            knot_values.append(kvals)
            n_gaps += gi.size
            n_knots += kvals.size
        self.c2 = np.concatenate(cols["c2"]).astype(np.int64)
        self.knot = np.concatenate(cols["knot"]).astype(bool)
        self.log_mass = np.concatenate(cols["logm"]).astype(np.float64)
        self.bid = np.concatenate(cols["bid"]).astype(np.int64)
        self.gap = np.concatenate(cols["gap"]).astype(np.int64)
        self.l2 = np.concatenate(cols["l2"]).astype(np.int64)
        self.u2 = np.concatenate(cols["u2"]).astype(np.int64)
        self.knot_value = np.concatenate(knot_values)
        self.gap_lo, self.gap_hi = np.concatenate(gap_lo), np.concatenate(gap_hi)
        self.gap_counts = np.concatenate(gap_counts, axis=1)
        self.size = size = self.c2.size
        level = np.concatenate(levels)
        self.allowed = level[None, :] == np.arange(len(windows))[:, None]
        pos = np.arange(size)
        start = np.ones(size, bool)
        start[1:] = (self.bid[1:] != self.bid[:-1]) | (self.bid[1:] == -1)
        self.first = np.maximum.accumulate(np.where(start, pos, 0))
        self.kpos = np.flatnonzero(self.knot)
        kfirst = np.searchsorted(self.kpos, self.first[self.kpos])
        self.klocal_first = kfirst
        self.klocal_last = kfirst + (self.u2[self.kpos] - self.l2[self.kpos])

    def draw(self, state: int, grid: OutputGrid, rng: np.random.Generator, numerics: str) -> float:
        """One point of the state's cell measure, as :meth:`GreedyChain.draw` (a knot: its value; a gap:
        its atoms or a continuum point rounded onto ``grid``)."""
        if self.knot[state]:
            return float(self.knot_value[self.bid[state]])
        i = int(self.gap[state])
        lo, hi = float(self.gap_lo[i]), float(self.gap_hi[i])
        if self.atoms is not None:
            atom = self.atoms.draw_in_cell(lo, hi, self.gap_counts[:, i], rng)
            if atom is not None:
                return atom
        return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))


# ------------------------------------------------------------------------------------------------------------
# The outside bound and the outside round
# ------------------------------------------------------------------------------------------------------------
def _closed_mass(lo: float, hi: float, atoms: Atoms | None) -> tuple[Fraction, Fraction]:
    """μ([lo, hi]) exactly (length + the atoms' mass of [lo, hi]) and the atoms' part of it."""
    return _closed_masses([(lo, hi)], atoms)[0]


def _closed_masses(pairs: list[tuple[float, float]], atoms: Atoms | None) -> list[tuple[Fraction, Fraction]]:
    """:func:`_closed_mass` of several intervals at once: each level's exact floor of every end in one
    vectorized scan (the open count of (lo, hi) and whether lo, hi are points, as :meth:`Atoms.open_mass`
    and :meth:`Atoms.point_mass` count them)."""
    lengths = [Fraction(hi) - Fraction(lo) for lo, hi in pairs]
    if atoms is None or not pairs:
        return [(length, Fraction(0)) for length in lengths]
    ends = np.array([v for pair in pairs for v in pair], dtype=np.float64)
    points = np.zeros(len(pairs), dtype=np.int64)
    out_mass = [Fraction(0)] * len(pairs)
    for level, c in zip(atoms.levels, atoms.exact_masses, strict=True):
        counts, on = level.scan(ends)
        inner = counts[0::2].astype(np.int64)  # #Λ ∩ (lo, hi) of each pair
        points = inner + on[0::2] + (on[1::2] & (ends[1::2] > ends[0::2]))
        out_mass = [m + c * int(k) for m, k in zip(out_mass, points, strict=True)]
    return [(length + m, m) for length, m in zip(lengths, out_mass, strict=True)]


@dataclass(frozen=True)
class _Part:
    """One outside part: output j's count below (left) or above (right) its window; S = [lo, hi]."""

    j: int
    left: bool
    lo: float
    hi: float
    term: float  # −coef·D + σ (the float used on both sides of the acceptance)
    log_bound: float  # ln Û_{j,side}


def _outside_parts(
    windows: list[RankWindow], plan: JointWindows, *, lower: float, upper: float, coef: float,
    atoms: Atoms | None, m: int,
) -> list[_Part]:  # fmt: skip
    """The parts of positive mass."""
    sides = [(j, left) for j in range(len(windows)) for left in (True, False)]
    pairs = [
        (lower, float(windows[j].values[0])) if left else (float(windows[j].values[-1]), upper)
        for j, left in sides
    ]
    masses = _closed_masses([(lower, upper), *pairs], atoms)
    log_t = math.log(float(masses[0][0]))
    parts = []
    for (j, left), (lo, hi), (mu, _) in zip(sides, pairs, masses[1:], strict=True):
        if mu <= 0:
            continue
        d = plan.d_left[j] if left else plan.d_right[j]
        log_mu = math.log(float(mu))
        rest = (m - 1) * log_t - math.lgamma(m)
        sigma = _SLACK + 2.0**-44 * (1.0 + abs(log_mu) + abs(rest) + coef * d)
        term = -coef * d + sigma
        parts.append(_Part(j, left, lo, hi, term, log_mu + rest + term))
    return parts


@dataclass(frozen=True)
class _Point:
    """A point of μ: an atom (exact) or a continuum point y with value < y < next(value)."""

    value: float
    atom: bool


def _point(lo: float, hi: float, atoms: Atoms | None, words: int, rng: np.random.Generator) -> _Point:
    """A point of μ restricted to [lo, hi], exactly: an atom with probability (its mass)/μ, else a uniform
    continuum point bracketed between two adjacent floats."""
    if atoms is not None and _closed_mass(lo, hi, atoms)[1] > 0:
        low_end = atoms.point_mass(lo)
        high_end = atoms.point_mass(hi) if hi > lo else Fraction(0)
        counts = atoms.open_counts(lo, hi)
        atom = atoms.draw_in_cell(lo, hi, counts, rng, low_end=low_end, high_end=high_end)
        if atom is not None:
            return _Point(atom, True)
    return _Point(bracket_uniform(lo, hi, words, rng), False)


def _outside_round(
    full: NDArray[np.float64], parts: list[_Part], plan: JointWindows, *, qs: NDArray[np.float64],
    lower: float, upper: float, coef: float, atoms: Atoms | None, grid: OutputGrid,
    rng: np.random.Generator, numerics: str,
) -> NDArray[np.float64] | None:  # fmt: skip
    """The proposal from ν and its acceptance (module docstring); the sorted outputs, or None (rejected)."""
    n, m = full.size, qs.size
    t, big_g = greedy_targets(qs, n)
    words = uniform_words(lower, upper)
    part = parts[exact_categorical(np.array([p.log_bound for p in parts]), rng)]
    points = [_point(part.lo, part.hi, atoms, words, rng)]
    points += [_point(lower, upper, atoms, words, rng) for _ in range(m - 1)]
    points.sort(key=lambda p: (p.value, not p.atom))  # a continuum point lies just above its float
    c2, prev, u2 = [], 0, 0.0
    cells = []
    for k, p in enumerate(points):
        below = int(np.searchsorted(full, p.value, "left" if p.atom else "right"))
        at_most = int(np.searchsorted(full, p.value, "right"))
        cur = int(np.clip(prev + big_g[k], 2 * below, 2 * at_most))
        u2 += abs(cur - prev - float(t[k]))
        c2.append(cur)
        cells.append((below, at_most))
        prev = cur
    u2 += abs(2 * n - prev - float(t[m]))
    if all(2 * a <= c <= 2 * b for c, (a, b) in zip(c2, plan.bounds, strict=True)):
        return None  # an explicit outcome: the first draw covered it
    log_terms = []
    for q in parts:
        inside = sum(
            (p.value <= q.hi if p.atom else p.value < q.hi) if q.left else p.value >= q.lo for p in points
        )
        if inside:
            log_terms.append(math.log(inside) + q.term)
    log_accept = -0.5 * coef * u2 - float(np.logaddexp.reduce(log_terms))
    if log_accept > 0.0:
        raise RuntimeError("internal error: the outside bound of windowed JointExp does not hold")
    k_exp, f = dyadic_parts(np.array([log_accept]))
    accept = Fraction(float(f[0])) * Fraction(2) ** int(k_exp[0])
    if not bernoulli(accept.numerator, accept.denominator, rng):
        return None
    out = []
    for p, (below, at_most) in zip(points, cells, strict=True):
        if p.atom and at_most > below:  # an atom holding records: its value
            out.append(p.value)
            continue
        # Otherwise the point's cell is the open gap (lo, hi) with its atoms and the bound atoms that hold no
        # record; given the cell, the point is a draw from the cell's measure.
        lo = float(full[below - 1]) if below else lower
        hi = float(full[below]) if below < n else upper
        value: float | None = None
        if atoms is not None:
            zero = Fraction(0)
            low_end = atoms.point_mass(lower) if below == 0 and (n == 0 or full[0] != lower) else zero
            high_end = atoms.point_mass(upper) if below == n and (n == 0 or full[-1] != upper) else zero
            counts = atoms.open_counts(lo, hi)
            value = atoms.draw_in_cell(lo, hi, counts, rng, low_end=low_end, high_end=high_end)
        if value is None:
            value = float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))
        out.append(value)
    return np.sort(np.array(out))


def sample_joint_windowed(
    records: Records, plan: JointWindows, *, qs: NDArray[np.float64], lower: float, upper: float,
    coef: float, atoms: Atoms | None, grid: OutputGrid, rng: np.random.Generator, numerics: str,
    whole_data: Callable[[NDArray[np.float64]], NDArray[np.float64]],
) -> NDArray[np.float64]:  # fmt: skip
    """One draw of JointExp (the greedy programme at kernel coefficient ``coef`` = ε′/4 with ``atoms``, or
    none) from the windows of ``plan``; the outputs sorted. ``whole_data(sorted records)``: one draw of the
    whole-data programme (a tied run over two windows, a rejected outside round)."""
    m = qs.size
    windows = records.windows(plan.spans)
    chain = WindowChain(windows, plan, records.n, atoms)
    if chain.spanning:
        tally("whole_data_draws")
        return whole_data(records.sorted_values())
    parts = _outside_parts(windows, plan, lower=lower, upper=upper, coef=coef, atoms=atoms, m=m)
    states = None  # no explicit state at all (every window one tied value off the atoms): outside
    if chain.size:
        tables = GreedyTables(chain, qs, coef, allowed=chain.allowed)
        outside = None
        if parts:
            log_u = float(np.logaddexp.reduce([p.log_bound for p in parts])) + 2.0**-30
            outside = log_u - math.fsum(tables.nus)
        states = greedy_sample(tables, rng, outside=outside)
    if states is not None:
        return np.sort(np.array([chain.draw(s, grid, rng, numerics) for s in states]))
    tally("region_rounds")
    full = records.sorted_values()
    got = _outside_round(
        full, parts, plan, qs=qs, lower=lower, upper=upper, coef=coef, atoms=atoms, grid=grid, rng=rng,
        numerics=numerics,
    )  # fmt: skip
    if got is not None:
        return got
    tally("whole_data_draws")
    return whole_data(full)
