"""The exponential-mechanism quantile with no bounds: a scale-free base measure on the whole line.

The exponential mechanism is ε-DP with respect to *any* public base measure of finite mass (McSherry &
Talwar, FOCS 2007). Bounds are only needed because the usual base measure, Lebesgue measure, is infinite on
the real line. Here the base measure has the density

    g(y) = 1/s  for |y| ≤ s,     g(y) = 1/|y|  for s < |y| ≤ 2^1021,     0 beyond,

s = ``floor`` (default 2^-30): uniform near 0 and log-uniform beyond, so that every octave of magnitude
carries the same mass ln 2 whatever the data's units (total mass 2(1 + ln(2^1021/s)) ≈ 1460), plus an atom
of mass 1 at 0 (tied zeros are common: counts, amounts) and atoms of mass 2^-14 at the non-zero integers up
to 2^20 in magnitude (tied ages, counts, years, whole dollars are released exactly). The output density with
respect to it is

    p_x(y) ∝ exp(−ε′·u(y)/2),   u(y) = dist(t, [#{x_i < y}, #{x_i ≤ y}])

with t = r − 1/2, r = max(1, ⌈qn⌉) (``neighbours="substitution"``) or t = qn (``"add_remove"``; the utility
then moves by at most max(q, 1 − q) ≤ 1 when a record is added or removed); u is |#{x_i < y} − t|
off the data. On a data set with n ≥ 10/ε the
mass of the octaves outside the data is outweighed and the mechanism behaves as the bounded exponential
mechanism with bounds a few times the data's magnitude; on very small ε·n its output follows g, and
can be anywhere up to 2^1021 (use :class:`~smoothdp.central.unbounded.ladder.UnboundedQuantile` there).

Sampling, exactly (docs/theory/unbounded.md#the-exponential-mechanism-on-the-whole-line): the intervals
between order statistics (padded with ±2^1021) are cut at ±s into pieces that are either uniform (inside
[−s, s]) or log-uniform (beyond); the piece is drawn by :func:`~smoothdp.central.quantiles.exact_categorical`
from certified float log weights (margin η, ε′ = ε − 4η), then a point inside it exactly
(:func:`smoothdp.exact.uniform_on_grid`, :func:`smoothdp.exact.log_uniform_on_grid`), rounded onto a public
floating grid (36 significant bits).

Data policy: NaN → 0, every record clipped into [−2^1021, 2^1021] (±inf included).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import exact_categorical, log_weight_margin, target_rank
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
    "INTEGER_MASS",
    "INTEGER_REACH",
    "ZERO_MASS",
    "ScaleFreeQuantile",
    "integers_inside",
    "scale_free_pieces",
]

#: Mass of the atom at 0 in the base measure (the uniform core [−s, s] has mass 2): tied zeros (counts,
#: amounts, indicators) are released as 0 itself.
ZERO_MASS = 1.0
#: Mass of the atom at every non-zero integer k with |k| ≤ INTEGER_REACH: tied integers (ages, counts,
#: years) are released exactly, as by the bounded mechanism's default lattice.
INTEGER_MASS = 2.0**-14
#: The largest integer magnitude carrying an atom (2^20: the atoms' total mass is 2^21·2^-14 = 128).
INTEGER_REACH = 2.0**20
#: Relative error of the float piece masses (≤ 2^-40), charged as an extra log-weight error (the piece
#: weights and the split of a piece between its continuum and its integer atoms use the float masses).
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


def integers_inside(starts: NDArray[np.float64], ends: NDArray[np.float64]) -> NDArray[np.float64]:
    """#{k ∈ ℤ ∩ (start, end) : 1 ≤ |k| ≤ 2^20} per piece (a piece lies on one side of 0; exact integer
    floats: the ends are clipped to ±(2^20 + 1) first)."""
    edge = INTEGER_REACH + 1.0
    a = np.clip(starts, -edge, edge)
    b = np.clip(ends, -edge, edge)
    first = np.floor(a) + 1.0  # the smallest integer > a
    last = np.ceil(b) - 1.0  # the largest integer < b
    pos_first, pos_last = np.maximum(first, 1.0), np.minimum(last, INTEGER_REACH)
    neg_first, neg_last = np.maximum(first, -INTEGER_REACH), np.minimum(last, -1.0)
    out: NDArray[np.float64] = np.maximum(0.0, pos_last - pos_first + 1.0) + np.maximum(
        0.0, neg_last - neg_first + 1.0
    )
    return out


def scale_free_pieces(
    sorted_x: NDArray[np.float64], floor: float
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int8]
]:
    """The pieces of the line between the order statistics (padded with ±2^1021), cut at ±s:
    (starts, ends, base-measure masses, interval index j = #{x < y} inside, kind: 0 uniform, 1 log-uniform
    positive, −1 log-uniform negative). Masses: length/s inside [−s, s], log1p((v − u)/u) on [u, v] beyond s
    (mirrored below −s), or ln v − ln u when v > 2u: each within a relative 2^-40 of the exact mass of its
    float ends."""
    edges = np.concatenate(([-CAP], sorted_x, [CAP]))
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
        """The pieces, their integer atoms, and the float log weights: pieces ln(μ(piece) + c·#atoms inside)
        − (ε′/2)·|j − t|, then the atoms at the distinct data values that carry one (0, or an integer with
        |k| ≤ 2^20): ln(mass) − (ε′/2)·dist(t, [#{x < v}, #{x ≤ v}]); returns (pieces, atom values, log w)."""
        n = int(sorted_x.size)
        pieces = scale_free_pieces(sorted_x, self.floor)
        starts, ends, masses, index, _ = pieces
        coef = 0.5 * self.epsilon_used(n)
        t = self.target(n)
        inside = integers_inside(starts, ends)
        with np.errstate(divide="ignore"):
            logw = np.log(masses + INTEGER_MASS * inside) - coef * np.abs(index - t)
        values = np.unique(sorted_x)
        atoms = values[(values == 0.0) | ((values == np.round(values)) & (np.abs(values) <= INTEGER_REACH))]
        atoms = np.union1d(atoms, [0.0])  # 0 carries its atom whether or not it is a data value
        below = np.searchsorted(sorted_x, atoms, side="left").astype(np.float64)
        at_most = np.searchsorted(sorted_x, atoms, side="right").astype(np.float64)
        dist = np.maximum(0.0, np.maximum(below - t, t - at_most))
        log_mass = np.where(atoms == 0.0, math.log(ZERO_MASS), math.log(INTEGER_MASS))
        return (*pieces, inside), atoms, np.concatenate((logw, log_mass - coef * dist))

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> float:
        """One output on prepared data (sorted, policy applied), no accountant."""
        (starts, ends, masses, _, kind, inside), atoms, logw = self.log_weights(sorted_x)
        i = exact_categorical(logw, rng)
        if i >= starts.size:
            return float(atoms[i - starts.size])  # an atom at a data value (or 0)
        lo, hi, k, m = float(starts[i]), float(ends[i]), int(kind[i]), int(inside[i])
        if m > 0:  # the piece's integer atoms or its continuum, in proportion to their (float) masses
            split = np.log(np.array([float(masses[i]), INTEGER_MASS * m]))
            if exact_categorical(split, rng) == 1:
                edge = INTEGER_REACH + 1.0
                first = (
                    math.floor(min(max(lo, -edge), edge)) + 1
                )  # the smallest integer above the piece's start
                first = max(first, 1) if k > 0 else max(first, -int(INTEGER_REACH))
                return float(first + int(rng.integers(0, m)))
        if k == 0:
            return float(uniform_on_grid(lo, hi, grid=self.grid, rng=rng, numerics=self.numerics))
        if k > 0:
            return log_uniform_on_grid(lo, hi, grid=self.grid, rng=rng, numerics=self.numerics)
        return -log_uniform_on_grid(-hi, -lo, grid=self.grid, rng=rng, numerics=self.numerics)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details={
                "method": "exponential",
                "bounds": None,
                "base_measure": f"uniform on [-{self.floor:g}, {self.floor:g}], 1/|y| beyond, up to 2^1021",
                "epsilon_in_weights": self.epsilon_used(int(prepared.size)),
            },
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"ScaleFreeQuantile(q={self.q:g}, {self.guarantee})"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
