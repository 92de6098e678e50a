"""One quantile by the exponential mechanism over nested public bounds: the bounds are part of the output
(docs/theory/quantiles.md#one-quantile-over-nested-bounds).

With wide declared bounds [a, b] and few records, the exponential mechanism's output follows the volume of
the bounds, not the data: a median of 100 incomes in (−10^5, 10^7) at ε = 0.1 lands anywhere in the ten
million. As JointExp over nested bounds does for several quantiles
(:mod:`~smoothdp.central.quantiles.nested`), the mechanism draws a pair (k, y): k indexes the public
family B_0 = [a, b] ⊃ B_1 ⊃ … ⊃ B_K (:func:`~smoothdp.central.quantiles.nested.nested_bounds`: each half as
wide as the one before, anchored at a bound or centred at 0), and y lies in B_k. The base measure gives B_k
the prior π_k (π_0 = 1, π_k = e^{−λ}·2^{−k/2}, λ = 3) times the quantile's base measure on B_k (Lebesgue
plus the atoms) normalised to mass one; the utility of (k, y) is the quantile's on the records clipped into
B_k, which for y in B_k is its utility on the records themselves (clipping keeps every rank). So

    P(k, piece j) ∝ π_k / μ(B_k) · exp(w_kj),

w_kj the log weight of piece j of the single-quantile mechanism on B_k (the same coefficient, target and
cap for every k). This is one exponential mechanism over the disjoint union of the outcome spaces, with a
public base measure and the single mechanism's utility: the same guarantee at the same ε, under
substitution or add/remove. Every piece of every B_k enters ONE exact categorical draw, so no normaliser is
computed: the float weights' error is the single mechanism's η plus the rounding of adding
ln π_k − ln μ(B_k) (:func:`nested_weight_margin`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import Atoms
from smoothdp.central.quantiles.em_samplers import (
    capped_calibration,
    em_lattice_weights,
    em_quantile_index_weights,
    tie_distance,
)
from smoothdp.central.quantiles.exact_draws import exact_categorical
from smoothdp.central.quantiles.nested import LEAVE_PRIOR, nested_bounds
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.keywords import check_keywords_of

__all__ = [
    "nested_candidates",
    "nested_capped_calibration",
    "nested_log_priors",
    "nested_weight_margin",
    "nested_width",
    "sample_em_nested",
]

_U = 2.0**-53


def nested_candidates(lower: float, upper: float, halvings: int) -> list[tuple[float, float]]:
    """B_0 … B_K (public)."""
    return nested_bounds(lower, upper, halvings)


def nested_log_priors(count: int) -> list[float]:
    """ln π_k: 0 for the declared bounds, −λ − (k/2)·ln 2 for the k-th halving."""
    return [0.0 if k == 0 else -LEAVE_PRIOR - 0.5 * k * math.log(2.0) for k in range(count)]


def _base_mass(lo: float, hi: float, atoms: Atoms | None) -> float:
    """μ(B) = its length plus the atoms' mass in it (float; relative error ≤ (mass_ulps + 2)·u)."""
    if atoms is None:
        return hi - lo
    _, gap_mass, end_mass = atoms.scan(np.array([lo, hi]))
    return (hi - lo) + float(gap_mass[0]) + float(end_mass[0]) + float(end_mass[1])


#: μ(B_k) of every candidate, by (candidates, atoms' label and masses): public, computed once per family.
_MASS_CACHE: dict[tuple[Any, ...], list[float]] = {}


def _base_masses(candidates: list[tuple[float, float]], atoms: Atoms | None) -> list[float]:
    """:func:`_base_mass` of every candidate, with one scan of the atoms over the pairs side by side (the
    same floats as one scan per pair: the scan is elementwise); cached, being public."""
    if atoms is None:
        return [hi - lo for lo, hi in candidates]
    key = (tuple(candidates), atoms.label, tuple(atoms.masses))
    if key not in _MASS_CACHE:
        edges = np.array([v for pair in candidates for v in pair])
        _, gap_mass, knot_mass = atoms.scan(edges)
        if len(_MASS_CACHE) > 256:
            _MASS_CACHE.clear()
        _MASS_CACHE[key] = [
            (hi - lo) + float(gap_mass[2 * k]) + float(knot_mass[2 * k]) + float(knot_mass[2 * k + 1])
            for k, (lo, hi) in enumerate(candidates)
        ]
    return list(_MASS_CACHE[key])


def nested_weight_margin(
    *, eta: float, magnitude: float, candidates: list[tuple[float, float]], atoms: Atoms | None
) -> float:
    """η′ ≥ the error of every float log weight ln π_k − ln μ(B_k) + w_kj: the single mechanism's η for
    w_kj (``magnitude`` a public bound on |w_kj|), plus ln μ(B_k) (a logarithm of a mass with relative error
    ≤ (mass_ulps + 2)u ≤ 64u: ≤ 64u + 4u·|ln μ|), ln π_k (≤ 4u·|ln π_k|) and the two additions (≤ 2u times
    the sum's magnitude). Every input is public."""
    log_mass = max(abs(math.log(m)) for m in _base_masses(candidates, atoms)) + 1.0
    log_prior = LEAVE_PRIOR + 0.5 * len(candidates) * math.log(2.0)
    total = magnitude + log_mass + log_prior
    return eta + _U * (64.0 + 4.0 * log_mass + 4.0 * log_prior + 4.0 * total)


def nested_width(candidates: list[tuple[float, float]], atoms: Atoms | None) -> float:
    """The W (a public bound on the masses whose logarithms enter the weights) with the largest |ln W| over
    the candidate bounds: the single mechanism's float analysis then covers every B_k."""
    widths = [(hi - lo) if atoms is None else atoms.log_width(hi - lo) for lo, hi in candidates]
    return max(widths, key=lambda w: abs(math.log(w)))


def nested_capped_calibration(
    *, epsilon: float, sensitivity: float, candidates: list[tuple[float, float]], atoms: Atoms | None
) -> tuple[float, float, float]:
    """(coef, cap, η′) under add/remove: :func:`~smoothdp.central.quantiles.em_samplers.capped_calibration`
    at ε − 4δ, with δ the rounding of the priors and masses (:func:`nested_weight_margin` beyond η) and
    η′ = η + δ, so that 2Δ·coef + 4η′ ≤ ε. Public inputs only."""
    width = nested_width(candidates, atoms)
    first = capped_calibration(epsilon=epsilon, sensitivity=sensitivity, width=width)
    nominal = epsilon / (2.0 * sensitivity)
    magnitude = 752.0 + abs(math.log(width)) + 2.0 * nominal * (first[1] + 1.0)  # covers the second cap
    extra = nested_weight_margin(eta=0.0, magnitude=magnitude, candidates=candidates, atoms=atoms)
    coef, cap, eta = capped_calibration(epsilon=epsilon - 4.0 * extra, sensitivity=sensitivity, width=width)
    return coef, cap, eta + extra


class _EndScan:
    """What B_k's block needs from the records and the atoms: L = #{x ≤ lo}, H = #{x < hi}, and the atoms
    of its end gaps (levels × ends, their float masses) and of lo and hi (float masses)."""

    def __init__(self, first: int, last: int) -> None:
        self.first, self.last = first, last
        self.counts = np.empty((0, 0))
        self.gap_mass = np.empty(0)
        self.knot_mass = np.zeros(2)


def _end_scans(base: _Base, candidates: list[tuple[float, float]]) -> list[_EndScan]:
    """Every block's :class:`_EndScan`, with ONE scan of the atoms over all the end gaps laid side by side
    (pairs (a, b) with a < b; the scan counts each consecutive pair on its own, elementwise, so a pair's
    counts and masses are the floats a scan of that pair alone gives)."""
    x = base.sorted_x
    scans, edges, owner = [], [], []
    for k, (lo, hi) in enumerate(candidates):
        scan = _EndScan(int(np.searchsorted(x, lo, side="right")), int(np.searchsorted(x, hi, side="left")))
        scans.append(scan)
        if scan.last > scan.first:
            edges += [lo, float(x[scan.first]), float(x[scan.last - 1]), hi]
            owner += [k, k]
        else:
            edges += [lo, hi]
            owner += [k]
    if base.atoms is None:
        return scans
    counts, gap_mass, knot_mass = base.atoms.scan(np.array(edges))
    pairs = np.arange(0, len(edges), 2)
    pair_counts, pair_mass = counts[:, pairs], gap_mass[pairs]
    owners = np.array(owner)
    for k, scan in enumerate(scans):
        mine = np.flatnonzero(owners == k)
        scan.counts, scan.gap_mass = pair_counts[:, mine], pair_mass[mine]
        first_edge, last_edge = 2 * int(mine[0]), 2 * int(mine[-1]) + 1
        scan.knot_mass = np.array([knot_mass[first_edge], knot_mass[last_edge]])
    return scans


class _Block:
    """The pieces of the draw on one B_k = [lo, hi] with positive mass, read off the weights on the
    declared bounds: the records clipped into B_k keep their ranks, so the gaps strictly inside are the
    declared problem's gaps L+1 … H−1 (L = #{x ≤ lo}, H = #{x < hi}) with the same weights, the knots strictly
    inside are its knots, and only the two end gaps [lo, x_(L+1)], [x_(H), hi] (one gap [lo, hi] when
    L = H) and the knots at lo and hi are new; every other gap of the clipped problem has length 0. The
    weights are the same float expressions as on the clipped records (:func:`em_lattice_weights`)."""

    def __init__(self, base: _Base, lo: float, hi: float, log_shift: float, scanned: _EndScan) -> None:
        x, n = base.sorted_x, base.sorted_x.size
        self.lo, self.hi = lo, hi
        self.first, self.last = scanned.first, scanned.last  # L, H
        if self.last > self.first:
            self.end_edges = [(lo, float(x[self.first])), (float(x[self.last - 1]), hi)]
            self.end_index = [self.first, self.last]
        else:
            self.end_edges = [(lo, hi)]
            self.end_index = [self.first]
        lengths = np.array([b - a for a, b in self.end_edges])
        j = np.array(self.end_index, dtype=np.float64)
        gap_dist = np.minimum(np.abs((j - base.target) - base.offset), base.cap)
        if base.atoms is None:
            self.end_counts = None
            with np.errstate(divide="ignore"):
                end_logw = np.log(lengths) - base.coef * gap_dist
            knot_logw = np.empty(0)
            self.end_knots: list[float] = []
            self.knot_slice = slice(0, 0)
        else:
            self.end_counts = scanned.counts
            with np.errstate(divide="ignore"):
                end_logw = np.log(lengths + scanned.gap_mass) - base.coef * gap_dist
            self.knot_slice = slice(
                int(np.searchsorted(base.knots, lo, side="right")),
                int(np.searchsorted(base.knots, hi, side="left")),
            )
            below = np.array([0.0, float(self.last)])
            at_most = np.array([float(self.first), float(n)])
            dist = tie_distance(below, at_most, base.target, base.offset, base.cap)
            knot_mass = scanned.knot_mass
            on = knot_mass > 0.0
            with np.errstate(divide="ignore"):
                end_knot_logw = np.log(knot_mass[on]) - base.coef * dist[on]
            self.end_knots = [v for v, keep in zip((lo, hi), on, strict=True) if keep]
            knot_logw = np.concatenate((base.knot_logw[self.knot_slice], end_knot_logw))
        inner = base.gap_logw[self.first + 1 : self.last]
        gaps = [end_logw[:1], inner, end_logw[1:]]
        self.logw = np.concatenate((*gaps, knot_logw)) + log_shift
        self.gaps = 1 + inner.size + (end_logw.size - 1)

    def piece(self, base: _Base, i: int) -> tuple[str, float, float, NDArray[np.float64] | None]:
        """("gap", lo, hi, atom counts) or ("knot", value, value, None) of piece i of this block."""
        if i >= self.gaps:
            k = i - self.gaps
            interior = self.knot_slice.stop - self.knot_slice.start
            v = float(base.knots[self.knot_slice.start + k]) if k < interior else self.end_knots[k - interior]
            return "knot", v, v, None
        if i == 0 or (i == self.gaps - 1 and len(self.end_edges) == 2):
            end = 0 if i == 0 else 1
            a, b = self.end_edges[end]
            return "gap", a, b, None if self.end_counts is None else self.end_counts[:, end]
        j = self.first + i  # the declared problem's gap j = L + i
        counts = None if base.counts is None else base.counts[:, j]
        return "gap", float(base.edges[j]), float(base.edges[j + 1]), counts


class _Base:
    """The weights of the single mechanism on the declared bounds (computed once)."""

    def __init__(
        self,
        sorted_x: NDArray[np.float64],
        bounds: tuple[float, float],
        *,
        target: float,
        coef: float,
        atoms: Atoms | None,
        offset: float,
        cap: float,
    ) -> None:
        self.sorted_x, self.target, self.coef, self.atoms = sorted_x, target, coef, atoms
        self.offset, self.cap = offset, cap
        lo, hi = bounds
        n = sorted_x.size
        if atoms is None:
            self.edges, logw = em_quantile_index_weights(sorted_x, lo, hi, target, coef, offset, cap)
            self.counts = None
            self.knots = np.empty(0)
            self.gap_logw, self.knot_logw = logw, np.empty(0)
        else:
            self.edges, self.counts, self.knots, logw = em_lattice_weights(
                sorted_x, lo, hi, target, coef, atoms, offset, cap
            )
            self.gap_logw, self.knot_logw = logw[: n + 1], logw[n + 1 :]


def sample_em_nested(
    sorted_x: NDArray[np.float64],
    *,
    candidates: list[tuple[float, float]],
    target: float,
    coef: float,
    atoms: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    offset: float = 0.0,
    cap: float = math.inf,
) -> tuple[float, tuple[float, float]]:
    """One draw (module docstring) on sorted records in [a, b] = ``candidates[0]``: the released value and
    the bounds B_k it came from (a private output). The weights of every B_k come from one pass on the
    declared bounds (:class:`_Block`)."""
    base = _Base(sorted_x, candidates[0], target=target, coef=coef, atoms=atoms, offset=offset, cap=cap)
    masses = _base_masses(candidates, atoms)
    shifts = [p - math.log(m) for p, m in zip(nested_log_priors(len(candidates)), masses, strict=True)]
    scans = _end_scans(base, candidates)
    blocks = [
        _Block(base, lo, hi, shift, scan)
        for (lo, hi), shift, scan in zip(candidates, shifts, scans, strict=True)
    ]
    pick = exact_categorical(np.concatenate([b.logw for b in blocks]), rng)
    for block in blocks:
        if pick >= block.logw.size:
            pick -= block.logw.size
            continue
        kind, lo, hi, counts = block.piece(base, pick)
        bounds = (block.lo, block.hi)
        if kind == "knot":
            return lo, bounds
        atom = None if atoms is None or counts is None else atoms.draw_in_cell(lo, hi, counts, rng)
        if atom is not None:
            return atom, bounds
        return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics)), bounds
    raise AssertionError("the categorical draw is inside one of the blocks")


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
