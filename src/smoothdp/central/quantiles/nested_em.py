"""One quantile by the exponential mechanism over nested public bounds: the bounds are part of the output
(docs/theory/quantiles.md#one-quantile-over-nested-bounds).

With wide declared bounds [a, b] and few records, the exponential mechanism's output follows the volume of
the bounds, not the data: a median of 100 incomes in (−10^5, 10^7) at ε = 0.1 lands anywhere in the ten
million. As JointExp over nested bounds does for several quantiles
(:mod:`~smoothdp.central.quantiles.nested`), the mechanism draws a pair (k, y): k indexes the public
family B_0 = [a, b] ⊃ B_1 ⊃ … ⊃ B_K (:func:`~smoothdp.central.quantiles.nested.nested_bounds`: each half as
wide as the one before, anchored at a bound or centred at 0), and y lies in B_k. The base measure gives B_k
the prior π_k (π_0 = 1, π_k = e^{−λ}·2^{−k/2}, λ = 3) times the quantile's base measure on B_k (Lebesgue
plus the atoms) normalised to mass one; the utility of (k, y) is the quantile's utility at y on the
records themselves (not on the records clipped into B_k: those agree inside B_k, but clipping makes a tie
at each end of B_k that would give an atom there utility 0 whenever the quantile lies beyond it). So

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
from collections.abc import Callable
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
from smoothdp.central.quantiles.exact_draws import LIBM_ULPS, exact_categorical
from smoothdp.central.quantiles.nested import LEAVE_PRIOR
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.keywords import check_keywords_of

__all__ = [
    "nested_capped_calibration",
    "nested_log_priors",
    "nested_weight_margin",
    "nested_width",
    "sample_em_nested",
]

_U = 2.0**-53


def nested_log_priors(count: int) -> list[float]:
    """ln π_k: 0 for the declared bounds, −λ − (k/2)·ln 2 for the k-th halving."""
    return [0.0 if k == 0 else -LEAVE_PRIOR - 0.5 * k * math.log(2.0) for k in range(count)]


#: Results computed from public inputs only (the candidate family, the atoms, ε), by those inputs: every
#: group of a table asks the same. Cleared when large (a long-running process with many parameters).
_PUBLIC_CACHE: dict[tuple[Any, ...], Any] = {}


def _family_key(candidates: list[tuple[float, float]], atoms: Atoms | None) -> tuple[Any, ...]:
    """A hashable key of a candidate family and its atoms (their ``lattice=`` label and masses)."""
    return (tuple(candidates), None if atoms is None else (atoms.label, tuple(atoms.masses)))


def _public_cached(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()`` once per key (public inputs only, so the cache reveals nothing about the data)."""
    if key not in _PUBLIC_CACHE:
        if len(_PUBLIC_CACHE) > 512:
            _PUBLIC_CACHE.clear()
        _PUBLIC_CACHE[key] = compute()
    return _PUBLIC_CACHE[key]


def _base_masses(candidates: list[tuple[float, float]], atoms: Atoms | None) -> list[float]:
    """μ(B_k) of every candidate: its length plus the atoms' mass in it (float; relative error ≤
    (mass_ulps + 2)·u), with one scan of the atoms over the pairs side by side (the same floats as one scan
    per pair: the scan is elementwise); cached, being public."""
    if atoms is None:
        return [hi - lo for lo, hi in candidates]

    def compute() -> list[float]:
        edges = np.array([v for pair in candidates for v in pair])
        _, gap_mass, knot_mass = atoms.scan(edges)
        return [
            (hi - lo) + float(gap_mass[2 * k]) + float(knot_mass[2 * k]) + float(knot_mass[2 * k + 1])
            for k, (lo, hi) in enumerate(candidates)
        ]

    return list(_public_cached(("masses", *_family_key(candidates, atoms)), compute))


def nested_weight_margin(
    *, eta: float, magnitude: float, candidates: list[tuple[float, float]], atoms: Atoms | None
) -> float:
    """η′ ≥ the error of every float log weight ln π_k − ln μ(B_k) + w_kj. Every input is public.

    * w_kj: the single mechanism's η (``magnitude`` a public bound on |w_kj|);
    * ln μ(B_k): the float mass has relative error ≤ (mass_ulps + 2)u ≤ 64u, and numpy's log adds at most
      ``LIBM_ULPS`` ulps of its result: ≤ 64u + 2·LIBM_ULPS·u·|ln μ|;
    * ln π_k = −λ − (k/2)·ln 2: ≤ (2·LIBM_ULPS + 4)u·|ln π_k|;
    * the two additions: ≤ 2u times the magnitude of each sum.
    """
    log_mass = max(abs(math.log(m)) for m in _base_masses(candidates, atoms)) + 1.0
    log_prior = LEAVE_PRIOR + 0.5 * len(candidates) * math.log(2.0)
    total = magnitude + log_mass + log_prior
    return eta + _U * (64.0 + 2.0 * LIBM_ULPS * log_mass + (2.0 * LIBM_ULPS + 4.0) * log_prior + 4.0 * total)


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
    η′ = η + δ, so that 2Δ·coef + 4η′ ≤ ε. Public inputs only (cached: every group of a table asks the
    same)."""
    key = ("calibration", epsilon, sensitivity, *_family_key(candidates, atoms))
    calibration: tuple[float, float, float] = _public_cached(
        key,
        lambda: _nested_capped_calibration(
            epsilon=epsilon, sensitivity=sensitivity, candidates=candidates, atoms=atoms
        ),
    )
    return calibration


def _nested_capped_calibration(
    *, epsilon: float, sensitivity: float, candidates: list[tuple[float, float]], atoms: Atoms | None
) -> tuple[float, float, float]:
    width = nested_width(candidates, atoms)
    first = capped_calibration(epsilon=epsilon, sensitivity=sensitivity, width=width)
    nominal = epsilon / (2.0 * sensitivity)
    magnitude = 752.0 + abs(math.log(width)) + 2.0 * nominal * (first[1] + 1.0)  # covers the second cap
    extra = nested_weight_margin(eta=0.0, magnitude=magnitude, candidates=candidates, atoms=atoms)
    coef, cap, eta = capped_calibration(epsilon=epsilon - 4.0 * extra, sensitivity=sensitivity, width=width)
    return coef, cap, eta + extra


class _EndGeometry:
    """Where every B_k = [l, h] cuts the sorted records: L = #{x ≤ l}, H = #{x < h} (and #{x < l},
    #{x ≤ h}, the tie ranges of the atoms at l and h), and the end gaps laid side by side as pairs for one
    scan of the atoms: gap A of every k, [l, x_(L+1)] (or [l, h] when L = H), then gap B of the k with
    L < H, [x_(H), h]."""

    def __init__(self, x: NDArray[np.float64], candidates: list[tuple[float, float]]) -> None:
        n = x.size
        self.lo = np.array([c[0] for c in candidates])
        self.hi = np.array([c[1] for c in candidates])
        self.first = np.searchsorted(x, self.lo, side="right")  # L
        self.last = np.searchsorted(x, self.hi, side="left")  # H
        self.below_lo = np.searchsorted(x, self.lo, side="left")  # #{x < l}
        self.upto_hi = np.searchsorted(x, self.hi, side="right")  # #{x ≤ h}
        self.two = self.last > self.first
        inside = np.minimum(self.first, max(n - 1, 0))
        self.a_hi = np.where(self.two, x[inside] if n else self.hi, self.hi)
        self.b_lo = np.where(self.two, x[np.maximum(self.last - 1, 0)] if n else self.lo, self.lo)
        b = np.flatnonzero(self.two)
        self.pairs = np.concatenate(
            (np.stack((self.lo, self.a_hi), 1).ravel(), np.stack((self.b_lo[b], self.hi[b]), 1).ravel())
        )


class _Blocks:
    """The pieces with positive mass of every B_k = [l_k, h_k], read off the weights on the declared bounds.

    The utility of y in B_k is the declared problem's. So the gaps strictly inside B_k are the declared
    problem's gaps L+1 … H−1 (L = #{x ≤ l}, H = #{x < h}) with the same weights, and the knots strictly inside
    are its knots. Only four pieces are new: the end gaps [l, x_(L+1)] and [x_(H), h] (one gap [l, h] when
    L = H; inside them the records clipped into B_k have the same ranks), and the knots at l and h, with
    their own tie ranges [#{x < l}, L] and [H, #{x ≤ h}]. The new pieces of
    every k are computed at once, with one scan of the atoms over the end gaps laid side by side (the scan is
    elementwise over consecutive pairs), as the same float expressions as on the clipped records
    (:func:`em_lattice_weights`)."""

    def __init__(
        self,
        base: _Base,
        candidates: list[tuple[float, float]],
        shifts: list[float],
        geometry: _EndGeometry,
        pair_scan: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None,
    ) -> None:
        self.lo, self.hi, self.first, self.last = geometry.lo, geometry.hi, geometry.first, geometry.last
        self.two, self.a_hi, self.b_lo = geometry.two, geometry.a_hi, geometry.b_lo
        k_all = self.lo.size
        b = np.flatnonzero(self.two)
        pairs = geometry.pairs
        len_a, len_b = self.a_hi - self.lo, self.hi[b] - self.b_lo[b]
        dist_a = np.minimum(np.abs((self.first.astype(np.float64) - base.target) - base.offset), base.cap)
        dist_b = np.minimum(np.abs((self.last[b].astype(np.float64) - base.target) - base.offset), base.cap)
        self.knot_lo = np.zeros(k_all, dtype=np.int64)
        self.knot_hi = np.zeros(k_all, dtype=np.int64)
        self.counts_a = self.counts_b = None
        mass_a, mass_b = np.zeros(k_all), np.zeros(b.size)
        knot_w = np.full((k_all, 2), -np.inf)
        if base.atoms is not None:
            assert pair_scan is not None
            counts, gap_mass, knot_mass = pair_scan
            gaps = np.arange(0, pairs.size, 2)
            self.counts_a, self.counts_b = counts[:, gaps[:k_all]], counts[:, gaps[k_all:]]
            mass_a, mass_b = gap_mass[gaps[:k_all]], gap_mass[gaps[k_all:]]
            at_hi = knot_mass[2 * np.arange(k_all) + 1].copy()  # h is gap A's right end when L = H …
            at_hi[b] = knot_mass[2 * k_all + 2 * np.arange(b.size) + 1]  # … and gap B's otherwise
            ends = np.stack((knot_mass[2 * np.arange(k_all)], at_hi), 1)
            # The atoms at l and h have the records' own tie ranges [#{x < v}, #{x ≤ v}], not those of the
            # records clipped into B_k: clipping piles every record beyond h onto h, a tie that would give
            # the atom at h utility 0 whenever the quantile lies beyond it.
            below = np.stack((geometry.below_lo, self.last), 1).astype(np.float64)
            at_most = np.stack((self.first, geometry.upto_hi), 1).astype(np.float64)
            dist = tie_distance(below, at_most, base.target, base.offset, base.cap)
            on = ends > 0.0
            with np.errstate(divide="ignore"):
                knot_w = np.where(on, np.log(np.where(on, ends, 1.0)) - base.coef * dist, -np.inf)
            self.knot_lo = np.searchsorted(base.knots, self.lo, side="right")
            self.knot_hi = np.searchsorted(base.knots, self.hi, side="left")
        with np.errstate(divide="ignore"):
            w_a = np.log(len_a + mass_a) - base.coef * dist_a
            w_b = np.full(k_all, -np.inf)
            w_b[b] = np.log(len_b + mass_b) - base.coef * dist_b
        self.b_index = np.full(k_all, -1)
        self.b_index[b] = np.arange(b.size)
        parts: list[NDArray[np.float64]] = []
        sizes: list[int] = []
        self.end_knots: list[list[float]] = []
        for k in range(k_all):
            inner = base.gap_logw[self.first[k] + 1 : self.last[k]]
            knots = base.knot_logw[self.knot_lo[k] : self.knot_hi[k]]
            ends = knot_w[k][knot_w[k] > -np.inf]
            self.end_knots.append(
                [v for v, w in zip((self.lo[k], self.hi[k]), knot_w[k], strict=True) if w > -np.inf]
            )
            block = [w_a[k : k + 1], inner, w_b[k : k + 1] if self.two[k] else w_b[:0], knots, ends]
            parts += block
            sizes.append(sum(p.size for p in block))
        self.gaps = 1 + np.maximum(self.last - self.first - 1, 0) + self.two
        self.sizes = np.array(sizes)
        self.logw = np.concatenate(parts) + np.repeat(np.array(shifts), self.sizes)

    def piece(self, base: _Base, pick: int) -> tuple[int, str, float, float, NDArray[np.float64] | None]:
        """(k, "gap", lo, hi, atom counts) or (k, "knot", value, value, None) of the global piece ``pick``."""
        k = int(np.searchsorted(np.cumsum(self.sizes), pick, side="right"))
        i = pick - int(np.sum(self.sizes[:k]))
        gaps = int(self.gaps[k])
        if i >= gaps:
            j = i - gaps
            interior = int(self.knot_hi[k] - self.knot_lo[k])
            v = float(base.knots[self.knot_lo[k] + j]) if j < interior else self.end_knots[k][j - interior]
            return k, "knot", v, v, None
        if i == 0:
            counts = None if self.counts_a is None else self.counts_a[:, k]
            return k, "gap", float(self.lo[k]), float(self.a_hi[k]), counts
        if i == gaps - 1 and self.two[k]:
            counts = None if self.counts_b is None else self.counts_b[:, self.b_index[k]]
            return k, "gap", float(self.b_lo[k]), float(self.hi[k]), counts
        j = int(self.first[k]) + i  # the declared problem's gap j = L + i
        counts = None if base.counts is None else base.counts[:, j]
        return k, "gap", float(base.edges[j]), float(base.edges[j + 1]), counts


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
        scanned: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None,
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
                sorted_x, lo, hi, target, coef, atoms, offset, cap, scanned=scanned
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
    declared bounds (:class:`_Blocks`)."""
    geometry = _EndGeometry(sorted_x, candidates)
    base_scan = pair_scan = None
    if atoms is not None:  # one scan of the atoms: the declared problem's edges, then the end gaps' pairs
        lo, hi = candidates[0]
        size = sorted_x.size + 2  # the declared problem's edges: lower, the records, upper
        edges = np.concatenate(([lo], sorted_x, [hi], geometry.pairs))
        scan_counts, scan_gaps, scan_knots = atoms.scan(edges)
        base_scan = (scan_counts[:, : size - 1], scan_gaps[: size - 1], scan_knots[:size])
        pair_scan = (scan_counts[:, size:], scan_gaps[size:], scan_knots[size:])
    base = _Base(
        sorted_x, candidates[0], target=target, coef=coef, atoms=atoms, offset=offset, cap=cap,
        scanned=base_scan,
    )  # fmt: skip
    masses = _base_masses(candidates, atoms)
    shifts = [p - math.log(m) for p, m in zip(nested_log_priors(len(candidates)), masses, strict=True)]
    blocks = _Blocks(base, candidates, shifts, geometry, pair_scan)
    k, kind, lo, hi, counts = blocks.piece(base, exact_categorical(blocks.logw, rng))
    bounds = candidates[k]
    if kind == "knot":
        return lo, bounds
    atom = None if atoms is None or counts is None else atoms.draw_in_cell(lo, hi, counts, rng)
    if atom is not None:
        return atom, bounds
    return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics)), bounds


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
