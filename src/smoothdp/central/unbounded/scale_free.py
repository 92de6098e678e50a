"""The exponential-mechanism quantile with no bounds: a scale-free base measure on the whole line.

The exponential mechanism is ε-DP with respect to *any* public base measure of finite mass (McSherry &
Talwar, FOCS 2007). Bounds are only needed because the usual base measure, Lebesgue measure, is infinite on
the real line. Here the base measure has the density

    g(y) = 1/s  for |y| ≤ s,     g(y) = 1/|y|  for s < |y| ≤ 2^1021,     0 beyond,

s = ``floor`` (default 2^-30): uniform near 0 and log-uniform beyond, so that every octave of magnitude
carries the same mass ln 2 whatever the data's units (total mass 2(1 + ln(2^1021/s)) ≈ 1460), plus an atom
of mass 1 at 0 (tied zeros are common: counts, amounts) and lattice atoms: the bounded mechanism's default
multi-scale lattice (:data:`~smoothdp.central.quantiles.atoms.MULTISCALE`: every multiple of 1/32 and every
decimal with at most four places) and the decimals with five to eight places, mass 2^-14·σ_ℓ at each
non-zero point of level ℓ up to 2^20 in magnitude (128 per level): tied ages, years, half-years, prices in
cents, temperatures in tenths, coordinates to six places are released exactly.
The output density with respect to it is

    p_x(y) ∝ exp(−ε′·u(y)/2),   u(y) = dist(t, [#{x_i < y}, #{x_i ≤ y}])

with t = r − 1/2, r = max(1, ⌈qn⌉) (``neighbours="substitution"``) or t = qn (``"add_remove"``; the utility
then moves by at most max(q, 1 − q) ≤ 1 when a record is added or removed); u is |#{x_i < y} − t|
off the data. On a data set with n ≥ 10/ε the
mass of the octaves outside the data is outweighed and the mechanism behaves as the bounded exponential
mechanism with bounds a few times the data's magnitude; on very small ε·n its output follows g, and
can be anywhere up to 2^1021 (use :class:`~smoothdp.central.unbounded.ladder.UnboundedQuantile` there).

Sampling, exactly (docs/theory/unbounded.md#the-exponential-mechanism-on-the-whole-line): the intervals
between order statistics (padded with ±2^1021) are cut at ±s into pieces that are either uniform (inside
[−s, s]) or log-uniform (beyond), each holding the lattice points strictly inside it (counted exactly); the
piece, or a data value that is an atom, is drawn by :func:`~smoothdp.central.quantiles.exact_categorical`
from certified float log weights (margin η, ε′ = ε − 4η); inside the piece its continuum or one level's
points are chosen in proportion to their masses, then a point exactly
(:func:`smoothdp.exact.uniform_on_grid`, :func:`smoothdp.exact.log_uniform_on_grid`), rounded onto a public
floating grid (36 significant bits).

Data policy: NaN → 0, every record clipped into [−2^1021, 2^1021] (±inf included).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import exact_categorical, log_weight_margin, rational_choice, target_rank
from smoothdp.central.quantiles.atoms import MULTISCALE_SPACINGS, Atoms, check_lattice
from smoothdp.central.unbounded.ladder import CAP, DEFAULT_FLOOR, prepare_unbounded
from smoothdp.exact import (
    OutputGrid,
    check_numerics,
    log_uniform_on_grid,
    sampler_label,
    uniform_on_grid,
)
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_epsilon, check_in_range

__all__ = [
    "LATTICE_ATOMS",
    "LATTICE_REACH",
    "LATTICE_SPACINGS",
    "ZERO_MASS",
    "ScaleFreeQuantile",
    "lattice_counts",
    "padded_edges",
    "scale_free_pieces",
]

#: Mass of the atom at 0 in the base measure (the uniform core [−s, s] has mass 2): tied zeros (counts,
#: amounts, indicators) are released as 0 itself.
ZERO_MASS = 1.0
#: The lattice's levels: the bounded default's multi-scale lattice (multiples of 1/32, decimals with at
#: most four places) and the decimals with five to eight places, so that a column tied at a measured value
#: (coordinates, rates) has an atom; each level weighs 128 within the reach, so the four extra levels add
#: 512 to the base measure's total.
LATTICE_SPACINGS: tuple[float, ...] = (
    *(p / q for p, q in MULTISCALE_SPACINGS),
    1e-5,
    1e-6,
    1e-7,
    1e-8,
)
#: The lattice atoms: mass 2^-14·σ_ℓ per point of level ℓ.
LATTICE_ATOMS = Atoms(check_lattice(LATTICE_SPACINGS))
#: The largest magnitude of a lattice atom: each level's atoms then weigh 2^-14·σ·(2·2^20/σ) = 128 in all.
LATTICE_REACH = 2.0**20
#: The float just above the reach: an open piece clipped to ±this holds exactly the points of magnitude ≤ 2^20
#: (the next point of every level is at least 2^20 + 2^-14 away).
_REACH_EDGE = math.nextafter(LATTICE_REACH, math.inf)
#: The pieces of :func:`scale_free_pieces`: (starts, ends, base-measure masses, interval index, kind).
Pieces = tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int8]
]
#: Relative error of the float piece masses (≤ 2^-40, plus the L + 1 roundings of adding the atoms' masses),
#: charged as an extra log-weight error (the piece weights and the split of a piece between its continuum
#: and its atoms use the float masses).
_MASS_ERROR = 2.0**-39

PROOF = "docs/theory/unbounded.md#the-exponential-mechanism-on-the-whole-line"
_MT = "McSherry & Talwar, Mechanism design via differential privacy, FOCS 2007"
_SMITH = "Smith, Privacy-preserving statistical estimation with optimal convergence rates, STOC 2011"


def _log_ratio(u: NDArray[np.float64], v: NDArray[np.float64], ok: NDArray[np.bool_]) -> NDArray[np.float64]:
    """ln(v/u) for s ≤ u ≤ v (0 where not ``ok``): log1p((v − u)/u) when v ≤ 2u (v − u exact, no
    cancellation), else ln v − ln u (≥ ln 2, so a relative error of a few ulps of ln v)."""
    uu = np.where(ok, u, 1.0)
    vv = np.where(ok, v, 1.0)
    near = vv <= 2.0 * uu
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        small = np.log1p((vv - uu) / uu)
        large = np.log(vv) - np.log(uu)
    out: NDArray[np.float64] = np.where(ok, np.where(near, small, large), 0.0)
    return out


def lattice_counts(
    edges: NDArray[np.float64], pieces: Pieces, floor: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(counts, edge masses). counts: #{p ∈ Λ_ℓ ∩ (start, end) : 0 < |p| ≤ 2^20} for each level ℓ (rows) and
    piece (columns) of :func:`scale_free_pieces` on ``edges`` (:func:`padded_edges`), exactly; edge masses:
    Σ_{ℓ: e ∈ Λ_ℓ} c_ℓ for each edge with 0 < |e| ≤ 2^20 (0 elsewhere: off the lattice, 0 itself, or beyond
    the reach), a float sum of at most L positive terms. Every piece ends at an edge or at
    ±s, so each level's floor F, and whether a value is a point, is computed once per edge and cut, on the
    values clipped to ±(2^20)⁺; the count of (lo, hi) is F(hi) − [hi ∈ Λ] − F(lo)
    (:meth:`~smoothdp.central.quantiles.atoms.Level.floor_within`). 0, a point of every level, is left
    out: it carries its own atom."""
    starts, ends, _, index, _ = pieces
    size = edges.size
    values = np.clip(np.concatenate((edges, [-floor, floor])), -_REACH_EDGE, _REACH_EDGE)
    at_start = np.where(starts == edges[index], index, np.where(starts == -floor, size, size + 1))
    at_end = np.where(ends == edges[index + 1], index + 1, np.where(ends == -floor, size, size + 1))
    straddles_zero = (values[at_start] < 0.0) & (values[at_end] > 0.0)
    counts = np.empty((len(LATTICE_ATOMS.levels), starts.size))
    edge_mass = np.zeros(size)
    for row, (level, c) in enumerate(zip(LATTICE_ATOMS.levels, LATTICE_ATOMS.masses, strict=True)):
        k, on = level.floor_within(values)
        counts[row] = np.maximum(k[at_end] - on[at_end] - k[at_start], 0.0)
        edge_mass += c * on[:size]
    edge_mass[(edges == 0.0) | (np.abs(edges) > LATTICE_REACH)] = 0.0
    out: NDArray[np.float64] = counts - straddles_zero
    return out, edge_mass


def padded_edges(sorted_x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The order statistics padded with ∓2^1021: the edges the pieces and their lattice counts share."""
    return np.concatenate(([-CAP], sorted_x, [CAP]))


def scale_free_pieces(sorted_x: NDArray[np.float64], floor: float) -> Pieces:
    """The pieces of the line between the order statistics (padded with ±2^1021), cut at ±s:
    (starts, ends, base-measure masses, interval index j = #{x < y} inside, kind: 0 uniform, 1 log-uniform
    positive, −1 log-uniform negative). Masses: length/s inside [−s, s], log1p((v − u)/u) on [u, v] beyond s
    (mirrored below −s), or ln v − ln u when v > 2u: each within a relative 2^-40 of the exact mass of its
    float ends."""
    return _pieces_between(padded_edges(sorted_x), floor)


def _pieces_between(edges: NDArray[np.float64], floor: float) -> Pieces:
    """:func:`scale_free_pieces` of the :func:`padded_edges` ``edges``."""
    a, b = edges[:-1], edges[1:]
    j = np.arange(a.size, dtype=np.int64)
    s = floor
    parts = []
    # Negative log part: [a, min(b, −s)] when a < −s.
    lo_n, hi_n = a, np.minimum(b, -s)
    ok_n = lo_n < hi_n
    m_n = _log_ratio(-hi_n, -lo_n, ok_n)
    parts.append((lo_n, hi_n, np.where(ok_n, m_n, 0.0), ok_n, -1))
    # Core: [max(a, −s), min(b, s)].
    lo_c, hi_c = np.maximum(a, -s), np.minimum(b, s)
    ok_c = lo_c < hi_c
    parts.append((lo_c, hi_c, np.where(ok_c, hi_c - lo_c, 0.0) / s, ok_c, 0))
    # Positive log part: [max(a, s), b] when b > s.
    lo_p, hi_p = np.maximum(a, s), b
    ok_p = lo_p < hi_p
    m_p = _log_ratio(lo_p, hi_p, ok_p)
    parts.append((lo_p, hi_p, np.where(ok_p, m_p, 0.0), ok_p, 1))
    starts = np.concatenate([p[0][p[3]] for p in parts])
    ends = np.concatenate([p[1][p[3]] for p in parts])
    masses = np.concatenate([p[2][p[3]] for p in parts])
    index = np.concatenate([j[p[3]] for p in parts])
    kind = np.concatenate([np.full(int(np.count_nonzero(p[3])), p[4], dtype=np.int8) for p in parts])
    return starts, ends, masses, index, kind


class ScaleFreeQuantile(Mechanism):
    """The q-quantile by the exponential mechanism over the whole line with the scale-free base measure
    (module docstring): no bounds, no scale hint.

    Guarantee: pure ε-DP under ``neighbours`` (``"substitution"``, default, or ``"add_remove"``), by the
    exponential mechanism with a public base measure of finite mass (McSherry & Talwar, FOCS 2007) and the
    rank utility of sensitivity 1 (Smith, STOC 2011), sampled exactly from certified float weights
    (docs/theory/unbounded.md#the-exponential-mechanism-on-the-whole-line).

    Parameters
    ----------
    q
        The quantile in [0, 1].
    epsilon
        ε > 0.
    neighbours
        ``"substitution"`` (target t = ⌈qn⌉ − 1/2) or ``"add_remove"`` (target t = qn).
    floor
        s in [2^-1000, 1]: below s in magnitude the base measure is uniform (default 2^-30).
    numerics
        ``"exact"`` (default) or ``"float"``.
    """

    name: ClassVar[str] = "exponential mechanism with a scale-free base measure"
    proof: ClassVar[str] = PROOF
    source = f"{_MT}; {_SMITH}"

    def __init__(
        self,
        q: float,
        *,
        epsilon: float,
        neighbours: str = "substitution",
        floor: float = DEFAULT_FLOOR,
        numerics: str = "exact",
    ) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.epsilon = check_epsilon(epsilon)
        self.relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        self.floor = check_in_range("floor", floor, 2.0**-1000, 1.0, low_open=False, high_open=False)
        self.numerics = check_numerics(numerics)
        # Fixed point below 2^E (E the exponent just above the floor), 36 significant bits above it.
        self.grid = OutputGrid(exponent=math.frexp(self.floor)[1])
        self.guarantee = PureDP(self.epsilon, neighbours=self.relation)
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "median" if self.q == 0.5 else f"quantile({self.q:g})"

    def weight_margin(self, n: int) -> float:
        """η: the certified error of the float log weights (every |ln mass| ≤ 746, as for widths ≤ 1), plus
        the relative error 2^-39 of the float masses used to split a piece between continuum and atoms."""
        return log_weight_margin(epsilon=self.epsilon, n=n, width=1.0) + _MASS_ERROR

    def epsilon_used(self, n: int) -> float:
        """ε′ = ε − 4η."""
        return self.epsilon - 4.0 * self.weight_margin(n)

    def target(self, n: int) -> float:
        """t = ⌈qn⌉ − 1/2 (substitution) or qn (add/remove)."""
        return target_rank(self.q, n) if self.relation == "substitution" else self.q * n

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_unbounded(data)

    def log_weights(
        self, sorted_x: NDArray[np.float64]
    ) -> tuple[Any, NDArray[np.float64], NDArray[np.float64]]:
        """The pieces, their lattice counts, and the float log weights: pieces ln(μ(piece) + Σ_ℓ c_ℓ·m_ℓ)
        − (ε′/2)·|j − t| (m_ℓ the level's points inside), then the atoms at the distinct data values that
        carry one (0, or a lattice point with |v| ≤ 2^20): ln(mass) − (ε′/2)·dist(t, [#{x < v}, #{x ≤ v}]);
        returns ((pieces..., counts), atom values, log w)."""
        n = int(sorted_x.size)
        edges = padded_edges(sorted_x)
        pieces = _pieces_between(edges, self.floor)
        _, _, masses, index, _ = pieces
        coef = 0.5 * self.epsilon_used(n)
        t = self.target(n)
        counts, edge_mass = lattice_counts(edges, pieces, self.floor)
        atom_mass = np.asarray(LATTICE_ATOMS.masses) @ counts
        with np.errstate(divide="ignore"):
            logw = np.log(masses + atom_mass) - coef * np.abs(index - t)
        values = np.union1d(sorted_x, [0.0])  # 0 carries its atom whether or not it is a data value
        first = np.minimum(np.searchsorted(sorted_x, values, side="left"), n - 1)  # edge first + 1: the value
        point_mass = np.where(values == 0.0, ZERO_MASS, edge_mass[first + 1])
        atoms, point_mass = values[point_mass > 0.0], point_mass[point_mass > 0.0]
        below = np.searchsorted(sorted_x, atoms, side="left").astype(np.float64)
        at_most = np.searchsorted(sorted_x, atoms, side="right").astype(np.float64)
        dist = np.maximum(0.0, np.maximum(below - t, t - at_most))
        return (*pieces, counts), atoms, np.concatenate((logw, np.log(point_mass) - coef * dist))

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> float:
        """One output on prepared data (sorted, policy applied), no accountant."""
        (starts, ends, masses, _, kind, counts), atoms, logw = self.log_weights(sorted_x)
        i = exact_categorical(logw, rng)
        if i >= starts.size:
            return float(atoms[i - starts.size])  # an atom at a data value (or 0)
        lo, hi, k = float(starts[i]), float(ends[i]), int(kind[i])
        inside = [int(m) for m in counts[:, i]]
        if any(inside):  # the piece's continuum or one level's points, in proportion to their masses
            parts = [Fraction(float(masses[i]))]
            parts += [c * m for c, m in zip(LATTICE_ATOMS.exact_masses, inside, strict=True)]
            level = rational_choice(parts, rng) - 1
            if level >= 0:
                return self._lattice_point(level, lo, inside[level], rng)
        if k == 0:
            return float(uniform_on_grid(lo, hi, grid=self.grid, rng=rng, numerics=self.numerics))
        if k > 0:
            return log_uniform_on_grid(lo, hi, grid=self.grid, rng=rng, numerics=self.numerics)
        return -log_uniform_on_grid(-hi, -lo, grid=self.grid, rng=rng, numerics=self.numerics)

    @staticmethod
    def _lattice_point(level: int, lo: float, m: int, rng: np.random.Generator) -> float:
        """A uniform one of the m points of ``level`` in the piece starting at ``lo`` (0 skipped: its atom is
        apart), exact: the first index above lo (clipped to the reach) plus a uniform integer."""
        lattice = LATTICE_ATOMS.levels[level]
        first = float(lattice.floor(np.array(max(lo, -_REACH_EDGE)))) + 1.0
        k = first + float(rng.integers(0, m))
        if first <= 0.0 <= k:
            k += 1.0  # the points run over 0, which belongs to the atom at 0
        return float(lattice.point(np.array(k)))

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details={
                "method": "exponential",
                "bounds": None,
                "base_measure": (
                    f"uniform on [-{self.floor:g}, {self.floor:g}], 1/|y| beyond, up to 2^1021; atoms: 1 "
                    "at 0, 2^-14·σ at the lattice's points (multiples of 1/32, decimals to 8 places) "
                    "up to 2^20"
                ),
                "epsilon_in_weights": self.epsilon_used(int(prepared.size)),
            },
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"ScaleFreeQuantile(q={self.q:g}, {self.guarantee})"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
