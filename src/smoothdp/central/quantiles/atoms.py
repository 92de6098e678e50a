"""The public atoms of the exponential-mechanism quantiles' base measure: lattices of exact floats whose
points carry a public mass, so that a value tied in the data can be released exactly
(docs/theory/quantiles.md#a-public-lattice-for-tied-data, docs/theory/quantiles.md#a-multi-scale-lattice).

A *level* is the set Λ = {p(k) : |k| ≤ K} of the floats p(k) = fl(k·P/Q) nearest to the multiples of a
rational spacing σ = P/Q (P, Q positive integers, exact floats): σ = 1 gives the integers, σ = 1/4 the
quarters (exact floats k/4), σ = 1/100 the floats nearest to the cents (0.01 is not a float: the atom
"at 9.99" is fl(999/100)). K depends on σ alone and keeps every point exact and distinct (:class:`Level`).

The atom part of the base measure is Σ_ℓ c_ℓ·(counting measure on Λ_ℓ ∩ [a, b]) over one or several
levels, with public masses c_ℓ (:class:`Atoms`). A point of several levels carries the sum of their
masses. ``lattice=`` of the quantile mechanisms picks the levels:

* ``"multiscale"`` (the default): every dyadic level 1, 1/2, …, 1/32 and every decimal level 1/10, …,
  1/10⁴ (:data:`MULTISCALE_SPACINGS`), c_ℓ = 2^-14·σ_ℓ, so that a number with more digits carries less
  mass (an integer about 2.1·2^-14, a half 1.1·2^-14, a cent 0.011·2^-14);
* a spacing s (a float): the one level σ = s (s = m·2^e with m odd and m < 2^21, or a short decimal such
  as 0.1 or 2.5, read as the fraction its shortest repr spells: 1/10, 5/2);
* a sequence of spacings: those levels;
* ``None``: no atoms (the pure continuum).

Everything is exact: floors, counts and membership by exact float comparisons with the points p(k), the
masses of intervals as rationals, the draws by :mod:`smoothdp.exact.bits`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact.bits import rational_choice

__all__ = [
    "ATOM_MASS",
    "HEAVY_MASS",
    "LIGHT_MASS",
    "MULTISCALE",
    "MULTISCALE_SPACINGS",
    "ROUND_SPACINGS",
    "Atoms",
    "LatticeSpec",
    "Level",
    "build_atoms",
    "check_lattice",
]

#: Light atom mass per unit of spacing: c_ℓ = ATOM_MASS·σ_ℓ (docs/theory/quantiles.md#choosing-the-atom-mass).
ATOM_MASS = 2.0**-14
#: Atom masses per unit of spacing of JointExp's stage 2 and the add/remove tests: heavy (the level the
#: selection chose, or every level after a passed lattice test) and light (the single quantile's 2^-14).
HEAVY_MASS = 64.0
LIGHT_MASS = ATOM_MASS
#: The name of the default multi-scale lattice.
MULTISCALE = "multiscale"
#: The default's levels as fractions (numerator, denominator): dyadic 1 … 1/32, decimal 1/10 … 1/10⁴.
MULTISCALE_SPACINGS: tuple[tuple[int, int], ...] = (
    (1, 1),
    (1, 2),
    (1, 4),
    (1, 8),
    (1, 16),
    (1, 32),
    (1, 10),
    (1, 100),
    (1, 1000),
    (1, 10000),
)
#: The round numbers: the decimal levels above the integers (multiples of 10, 100 and 1000) that a
#: selection may make heavy together with the integers (docs/theory/quantiles.md#round-numbers).
ROUND_SPACINGS: tuple[int, ...] = (10, 100, 1000)
#: A spacing's numerator P = m·2^e needs an odd m < 2^ODD_BITS (then K ≥ 2^(51 − ODD_BITS)).
ODD_BITS = 21
#: Allowed range of a spacing (the masses and the lattice's reach stay normal, finite floats).
SPACING_RANGE = (2.0**-900, 2.0**900)
#: Largest denominator of a decimal spacing (an exact float integer).
_MAX_DENOM = 1 << 53

#: What ``lattice=`` accepts once checked: None, the default's name, one spacing or several.
LatticeSpec = None | str | float | tuple[float, ...]


def _odd_part(value: int) -> int:
    return value >> ((value & -value).bit_length() - 1)


class Level:
    """The points p(k) = fl(k·P/Q), |k| ≤ K, of one public lattice of spacing σ = P/Q.

    K = ⌊2^51/m⌋ with m the odd part of P (so every k·P with |k| ≤ K + 2 is an exact float, and every
    count ≤ 2K + 1 an exact float integer), and K ≤ 2^50 when Q is not a power of two: then
    |p(k) − kσ| ≤ σ/8, so the points are distinct, increasing, and ⌊v/σ⌋ is within 2 of the index of the
    last point ≤ v (docs/theory/quantiles.md#a-multi-scale-lattice). When Q is a power of two the points
    are exact, p(k) = k·σ. K depends on σ alone (never on the bounds, which may be private outputs).
    """

    def __init__(self, numer: int, denom: int) -> None:
        g = math.gcd(numer, denom)
        self.numer, self.denom = numer // g, denom // g
        self.value = Fraction(self.numer, self.denom)
        self._p, self._q = float(self.numer), float(self.denom)
        self.spacing = self._p / self._q  # fl(σ): the guess's divisor and the spacing reported
        self.exact = self.denom & (self.denom - 1) == 0  # a power of two: p(k) = k·σ exactly
        reach = (1 << 51) // _odd_part(self.numer)
        self.reach = reach if self.exact else min(reach, 1 << 50)  # K
        #: σ is 2^-j with j ≥ 0 (1, 1/2, …): the floor needs no correction.
        self.power_of_two_at_most_one = (
            self.exact and self.numer & (self.numer - 1) == 0 and self.numer <= self.denom
        )
        #: 1/σ = 2^j, exact, when σ = 2^-j ≤ 1.
        self._inverse_spacing = self._q / self._p if self.power_of_two_at_most_one else math.nan
        self.edge = float(self.point(np.array(float(self.reach + 1))))  # p(K + 1)

        self.top = float(self.point(np.array(float(self.reach))))  # p(K)

    def point(self, k: NDArray[np.float64]) -> NDArray[np.float64]:
        """p(k) = fl(k·P/Q) for integer-valued float k, |k| ≤ K + 2 (k·P exact, one correctly rounded
        division)."""
        out: NDArray[np.float64] = (np.asarray(k, dtype=np.float64) * self._p) / self._q
        return out

    def floor(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """F(v) = max{k : p(k) ≤ v} for v clipped into [−p(K + 1), p(K + 1)] (integer-valued floats):
        the float guess ⌊v/σ⌋ corrected by exact comparisons with the points."""
        w = np.clip(np.asarray(v, dtype=np.float64), -self.edge, self.edge)
        return self._floor_and_on(w)[0]

    def _floor_and_on(self, w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """F(w) and whether w = p(F(w)), for w in [−p(K + 1), p(K + 1)].

        σ = 2^-j ≤ 1: w/σ = w·2^j is exact (|w| ≤ p(K + 1) ≤ 2^52·σ: no overflow, and scaling up cannot
        underflow) and p(k) = k·σ exactly, so ⌊w/σ⌋ is F(w) and w is a point iff w/σ is an integer.
        Otherwise the guess k = ⌊w/fl(σ)⌋ is within 2 of F(w) (class docstring); it is F(w) exactly when
        p(k) ≤ w < p(k + 1), which is checked for every value (points increase with k); only when some
        guess fails are the guesses corrected step by step."""
        if self.power_of_two_at_most_one:
            scaled = w * self._inverse_spacing
            k = np.floor(scaled)
            return k, k == scaled
        k = np.floor(w / self.spacing)
        at_k = self.point(k)
        if bool(np.any((at_k > w) | (self.point(k + 1.0) <= w))):
            for _ in range(2):
                k = np.where(self.point(k) > w, k - 1.0, k)
            for _ in range(2):
                k = np.where(self.point(k + 1.0) <= w, k + 1.0, k)
            at_k = self.point(k)
            if not bool(np.all((at_k <= w) & (self.point(k + 1.0) > w))):
                raise RuntimeError("internal error: the lattice floor did not converge")
        return k, at_k == w

    def first_above(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """The smallest k ≥ −K with p(k) > v."""
        out: NDArray[np.float64] = np.maximum(self.floor(v) + 1.0, -float(self.reach))
        return out

    def scan(self, edges: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """For sorted ``edges``: #Λ ∩ (e_j, e_{j+1}) for each consecutive pair (exact integer-valued floats
        ≤ 2K + 1 < 2^53), and whether each edge is a point of Λ. One exact floor per edge."""
        edges = np.asarray(edges, dtype=np.float64)
        if edges.size and self.reaches(float(edges.min()), float(edges.max())):
            return self.scan_within(edges)
        w = np.clip(edges, -self.edge, self.edge)
        k, on = self._floor_and_on(w)
        on &= w == edges  # false beyond p(K + 1), where the edges were clipped
        last = np.minimum(np.where(on, k - 1.0, k), float(self.reach))  # largest k′ ≤ K with p(k′) < e
        first = np.maximum(k + 1.0, -float(self.reach))  # smallest k′ ≥ −K with p(k′) > e
        counts: NDArray[np.float64] = np.maximum(0.0, last[1:] - first[:-1] + 1.0)
        inside: NDArray[np.bool_] = on & (np.abs(k) <= float(self.reach))
        return counts, inside

    def reaches(self, low: float, high: float) -> bool:
        """Whether [low, high] lies in [−p(K), p(K)] (then :meth:`scan_within` applies to edges in it)."""
        return -self.top <= low and high <= self.top

    def scan_within(self, edges: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """:meth:`scan` for sorted edges all in [−p(K), p(K)] (the caller checks, :meth:`reaches`): then
        every floor k lies in [−K, K], the count of points in (e_j, e_{j+1}) is F(e_{j+1}) − [e_{j+1} ∈ Λ]
        − F(e_j) (0 for a tie, e_j = e_{j+1}), and no edge needs clipping."""
        k, on = self._floor_and_on(edges)
        counts: NDArray[np.float64] = np.diff(k)
        counts -= on[1:]
        np.maximum(counts, 0.0, out=counts)
        return counts, on

    def floor_within(self, v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """(F(v), v ∈ Λ) for values in [−p(K), p(K)] (the caller clips). The number of points in an open
        interval (lo, hi) of such values is then F(hi) − [hi ∈ Λ] − F(lo), as in :meth:`scan_within`."""
        return self._floor_and_on(np.asarray(v, dtype=np.float64))

    def contains(self, v: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each value is a point p(k), |k| ≤ K: with k = rint(v/fl(σ)), v = p(k) and |k| ≤ K.
        Exact: for v = p(k₀), |v/fl(σ) − k₀| ≤ σ/8/σ + |k₀|·2^-52 + rounding < 1/2 (|k₀| ≤ K ≤ 2^50; class
        docstring), so the guess is k₀; and v = p(k) with |k| ≤ K is a point by definition."""
        return self.index_of(v)[1]

    def index_of(self, v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """(k, whether v = p(k) with |k| ≤ K) for each value, k = rint(v/fl(σ)) (:meth:`contains`): the index
        of every value that is a point (integer-valued floats; meaningless elsewhere)."""
        arr = np.asarray(v, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.rint(arr / self.spacing)
            out: NDArray[np.bool_] = (np.abs(k) <= float(self.reach)) & (self.point(k) == arr)
        return k, out

    def __repr__(self) -> str:
        return f"Level({self.numer}/{self.denom})"


def level_for_spacing(spacing: float, *, name: str = "lattice") -> Level:
    """The level of a float spacing s: s itself when s = m·2^e with m odd, m < 2^21; else the fraction its
    shortest repr spells (0.1 → 1/10) when its numerator is below 2^21 and its denominator an exact float
    integer; otherwise an error naming ``name``."""
    lo, hi = SPACING_RANGE
    if not (lo <= spacing <= hi):
        raise ValueError(f"{name} must be a spacing in [2^-900, 2^900] or None; got {spacing!r}")
    exact = Fraction(spacing)
    if _odd_part(exact.numerator) < 1 << ODD_BITS:  # a dyadic spacing: exact points k·s
        return Level(exact.numerator, exact.denominator)
    short = Fraction(repr(spacing))
    if short.numerator < 1 << ODD_BITS and short.denominator <= _MAX_DENOM:
        return Level(short.numerator, short.denominator)
    raise ValueError(
        f"{name}={spacing!r}: not a usable spacing (it must be m·2^e with an odd m < 2^21, such as 1, 0.25 "
        "or 3·2^-4, or a short decimal such as 0.1, 0.05 or 2.5); pass candidates= for other grids"
    )


def _spacing_value(item: Any, name: str) -> float:
    real = int | float | np.integer | np.floating
    if isinstance(item, bool | np.bool_) or not isinstance(item, real):
        raise TypeError(
            f"{name} must be {MULTISCALE!r}, a positive spacing (float), a sequence of spacings or None; "
            f"got {item!r}"
        )
    return float(item)


def check_lattice(lattice: Any, *, name: str = "lattice") -> LatticeSpec:
    """``lattice=`` validated from public values alone: None, ``"multiscale"``, a spacing (float) or a
    non-empty sequence of spacings (tuple of floats)."""
    if lattice is None:
        return None
    if isinstance(lattice, str):
        if lattice != MULTISCALE:
            raise ValueError(
                f"{name} must be {MULTISCALE!r}, a positive spacing (float), a sequence of spacings or None; "
                f"got {lattice!r}"
            )
        return MULTISCALE
    if isinstance(lattice, Sequence | np.ndarray):
        values = tuple(_spacing_value(item, name) for item in lattice)
        if not values:
            raise ValueError(f"{name} must be a non-empty sequence of spacings; got {lattice!r}")
        for s in values:
            level_for_spacing(s, name=name)
        return values
    s = _spacing_value(lattice, name)
    level_for_spacing(s, name=name)
    return s


def _levels(spec: LatticeSpec) -> list[Level]:
    if spec is None:
        return []
    if spec == MULTISCALE:
        return [Level(p, q) for p, q in MULTISCALE_SPACINGS]
    values = spec if isinstance(spec, tuple) else (float(spec),)
    unique: dict[Fraction, Level] = {}
    for s in values:
        level = level_for_spacing(s)
        unique.setdefault(level.value, level)
    return list(unique.values())


class Atoms:
    """The atom part Σ_ℓ c_ℓ·(counting measure on Λ_ℓ) of a public base measure (module docstring).

    The masses are public floats c_ℓ = factor·fl(σ_ℓ); a point of several levels carries the sum of
    their masses. Every method is exact: float masses summed where only a certified relative error is
    needed (:attr:`mass_ulps`), rationals where a draw depends on them.
    """

    def __init__(self, spec: LatticeSpec, *, factor: float = ATOM_MASS) -> None:
        self.spec = spec
        self.factor = factor
        self.levels = _levels(spec)
        if not self.levels:
            raise ValueError("Atoms needs at least one level (lattice=None has no atoms)")
        self.masses = [factor * level.spacing for level in self.levels]
        self._fmasses = [Fraction(c) for c in self.masses]

    def with_level_factor(self, index: int, factor: float) -> Atoms:
        """The same levels, level ``index`` with mass factor·σ instead (public: a choice made before)."""
        out = Atoms.__new__(Atoms)
        out.spec, out.factor, out.levels = self.spec, self.factor, self.levels
        out.masses = list(self.masses)
        out.masses[index] = factor * self.levels[index].spacing
        out._fmasses = [Fraction(c) for c in out.masses]
        return out

    def with_round_numbers(self, index: int, spacing: int, factor: float) -> Atoms:
        """Level ``index`` (the integers) and the round levels of :data:`ROUND_SPACINGS` up to ``spacing``
        at factor·σ each, the other levels as they are (public: a choice made before). A multiple of 1000
        then weighs factor·1111, one of 10 but not 100 factor·11. The label stays this lattice's."""
        out = self.with_level_factor(index, factor)
        extra = [Level(s, 1) for s in ROUND_SPACINGS if s <= spacing]
        out.levels = list(self.levels) + extra
        out.masses = out.masses + [factor * level.spacing for level in extra]
        out._fmasses = [Fraction(c) for c in out.masses]
        return out

    @property
    def label(self) -> LatticeSpec:
        """The public ``lattice=`` value these atoms were built from (for ``Release.details``)."""
        return self.spec

    @property
    def exact_masses(self) -> list[Fraction]:
        """The masses c_ℓ as exact rationals."""
        return list(self._fmasses)

    @property
    def mass_ulps(self) -> float:
        """A bound, in units of u = 2^-53, on the relative rounding error of a float gap mass
        fl(length + Σ c_ℓ·m_ℓ) or knot mass fl(Σ c_ℓ) (L products and L sums of positive terms)."""
        return 2.0 * len(self.levels) + 2.0

    def scan(
        self, edges: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """For sorted ``edges``: the atom counts of each level in each open gap (L × gaps, exact), the float
        atom mass Σ c_ℓ·m_ℓ of each gap, and the float mass Σ_{ℓ: e ∈ Λ_ℓ} c_ℓ of each edge (0 off
        every level)."""
        edges = np.asarray(edges, dtype=np.float64)
        counts = np.empty((len(self.levels), max(edges.size - 1, 0)))
        gap_mass = np.zeros(max(edges.size - 1, 0))
        knot_mass = np.zeros(edges.size)
        low, high = (float(edges.min()), float(edges.max())) if edges.size else (0.0, 0.0)
        for i, (level, c) in enumerate(zip(self.levels, self.masses, strict=True)):
            counts[i], on = level.scan_within(edges) if level.reaches(low, high) else level.scan(edges)
            gap_mass += c * counts[i]
            knot_mass += c * on
        return counts, gap_mass, knot_mass

    def contains(self, v: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each value is an atom (a point of some level within its reach)."""
        arr = np.asarray(v, dtype=np.float64)
        out = np.zeros(arr.shape, dtype=bool)
        for level in self.levels:
            out |= level.contains(arr)
        return out

    def point_mass(self, v: float) -> Fraction:
        """μ({v}) = Σ_{ℓ: v ∈ Λ_ℓ} c_ℓ, exactly."""
        ons = [bool(level.contains(np.array([v]))[0]) for level in self.levels]
        return sum((c for c, on in zip(self._fmasses, ons, strict=True) if on), Fraction(0))

    def open_counts(self, lo: float, hi: float) -> list[int]:
        """#Λ_ℓ ∩ (lo, hi) for each level (lo ≤ hi), exactly."""
        return [int(level.scan(np.array([lo, hi]))[0][0]) for level in self.levels]

    def open_mass(self, lo: float, hi: float) -> Fraction:
        """The atom mass of the open interval (lo, hi), exactly."""
        return sum((c * m for c, m in zip(self._fmasses, self.open_counts(lo, hi), strict=True)), Fraction(0))

    def draw_in_cell(
        self,
        lo: float,
        hi: float,
        counts: Sequence[float] | NDArray[np.float64],
        rng: np.random.Generator,
        *,
        continuum: bool = True,
        low_end: Fraction = Fraction(0),
        high_end: Fraction = Fraction(0),
    ) -> float | None:
        """One point of a cell of the base measure, exactly: the open interval (lo, hi) with its continuum
        (length hi − lo; none when ``continuum`` is False) and its atoms (``counts``: how many of each
        level), plus atoms at the ends of masses ``low_end`` (at lo) and ``high_end`` (at hi). The part
        is drawn with probability proportional to its mass, then an atom of a level uniformly among its
        points in (lo, hi). None: the continuum (the caller draws the uniform point)."""
        m = [int(k) for k in counts]
        length = Fraction(hi) - Fraction(lo) if continuum else Fraction(0)
        if not any(m) and not low_end and not high_end:
            if not continuum:
                raise ValueError("draw_in_cell: the cell has no mass")
            return None
        parts = [length, *(c * k for c, k in zip(self._fmasses, m, strict=True)), low_end, high_end]
        choice = rational_choice(parts, rng)
        if choice == 0:
            return None
        if choice > len(m):
            return lo if choice == len(m) + 1 else hi
        level = self.levels[choice - 1]
        k = float(level.first_above(np.array([lo]))[0]) + float(rng.integers(0, m[choice - 1]))
        return float(level.point(np.array(k)))

    def log_width(self, width: float) -> float:
        """A public bound on every mass whose logarithm enters the weights on bounds of this width:
        width + Σ c_ℓ·(width/σ_ℓ + 2)."""
        return width + sum(
            c * (width / level.spacing + 2.0) for c, level in zip(self.masses, self.levels, strict=True)
        )

    def __repr__(self) -> str:
        return f"Atoms({self.spec!r}, factor={self.factor:g})"


@lru_cache(maxsize=64)
def build_atoms(spec: LatticeSpec, *, factor: float = ATOM_MASS) -> Atoms | None:
    """The atoms of a checked ``lattice=`` value (None for ``lattice=None``), c_ℓ = factor·σ_ℓ (cached:
    public values in, an object never modified out)."""
    return None if spec is None else Atoms(spec, factor=factor)
