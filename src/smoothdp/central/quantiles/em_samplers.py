"""The whole-data exponential-mechanism samplers of one quantile and their add/remove calibration.

* the data policy of the quantile mechanisms (:func:`prepare_data`) and the target rank (:func:`target_rank`);
* one draw over the continuum (:func:`sample_em_quantile`), over public candidates
  (:func:`sample_em_candidates`) or w.r.t. Lebesgue + the atoms' measure (:func:`sample_em_lattice`)
  (docs/theory/quantiles.md#the-exponential-mechanism-quantile,
  docs/theory/quantiles.md#a-public-lattice-for-tied-data);
* under add/remove: the split target q·n, the rank sensitivity max(q, 1 − q), the capped calibration and the
  lattice test (docs/theory/quantiles.md#adding-or-removing-a-record,
  docs/theory/quantiles.md#the-lattice-test-without-n).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import HEAVY_MASS, Atoms, LatticeSpec, build_atoms
from smoothdp.central.quantiles.exact_draws import LIBM_ULPS, UNIT_ROUNDOFF, exact_categorical
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.keywords import check_keywords_of
from smoothdp.scale.engine import Records, as_records, is_dask_collection
from smoothdp.validation import prepare_records

__all__ = [
    "ATOM_CHOICES",
    "LATTICE_TEST_SLACK",
    "atoms_of_choice",
    "capped_calibration",
    "check_atom_choice",
    "check_candidates",
    "check_width",
    "em_lattice_weights",
    "em_quantile_index_weights",
    "heavy_atoms",
    "lattice_test_from_counts",
    "lattice_test_scale",
    "prepare_data",
    "rank_sensitivity",
    "sample_em_candidates",
    "sample_em_lattice",
    "sample_em_quantile",
    "split_target",
    "target_rank",
    "tie_distance",
]


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


def check_width(lower: float, upper: float) -> float:
    width = upper - lower
    if not math.isfinite(width):
        raise ValueError(f"bounds must have a finite width upper − lower; got ({lower!r}, {upper!r})")
    return width


def check_candidates(candidates: Any, lower: float, upper: float) -> NDArray[np.float64]:
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


def em_quantile_index_weights(
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


def tie_distance(
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
    edges, logw = em_quantile_index_weights(sorted_x, lower, upper, target, coef, offset, cap)
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
    dist = tie_distance(below, at_most, target, offset, cap)
    return float(candidates[exact_categorical(-coef * dist, rng)])


def em_lattice_weights(
    sorted_x: NDArray[np.float64],
    lower: float,
    upper: float,
    target: float,
    coef: float,
    atoms: Atoms,
    offset: float = 0.0,
    cap: float = math.inf,
    *,
    scanned: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Edges (n + 2), the atom counts of the n + 1 open gaps (levels × gaps), the knots (distinct values of
    the edges that are atoms) and the log weights: gaps ln(|I_j| + Σ c_ℓ·m_ℓj) − coef·min(|j − t|, cap), then
    knots ln μ({v}) − coef·min(dist(t, [#{x < v}, #{x ≤ v}]), cap), t = target + offset (offset 0 and cap
    ∞ under substitution: exactly the uncapped weights). ``scanned``: ``atoms.scan`` of the edges, when the
    caller scanned them together with other edges (the scan is elementwise: the same floats)."""
    edges = np.concatenate(([lower], sorted_x, [upper]))
    lengths = np.diff(edges)
    counts, gap_mass, knot_mass = atoms.scan(edges) if scanned is None else scanned
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
    dist = tie_distance(below, at_most, target, offset, cap)
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
    edges, counts, knots, logw = em_lattice_weights(
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
    eta = 4.0 * LIBM_ULPS * 2.0 * UNIT_ROUNDOFF * magnitude
    coef = (epsilon - 4.0 * eta) * (1.0 - 2.0 * UNIT_ROUNDOFF) / (2.0 * sensitivity)
    return coef, cap, eta


#: The add/remove lattice test passes when S + Z ≥ LATTICE_TEST_SLACK·t (t the noise scale).
LATTICE_TEST_SLACK = 3.0


def lattice_test_scale(epsilon_test: float) -> float:
    """Scale t of the lattice test's discrete Laplace noise: fl(1/ε_t) rounded up, so that 1/t ≤ ε_t."""
    return math.nextafter(1.0 / epsilon_test, math.inf)


def lattice_test_from_counts(
    on: int, n: int, epsilon_test: float, rng: np.random.Generator, *, numerics: str
) -> dict[str, Any]:
    """The lattice test under add/remove (docs/theory/quantiles.md#the-lattice-test-without-n) from its two
    counts, N = ``on`` records that are atoms (points of any level) of n: the integer S = 2N − n = N − (n − N)
    moves by exactly 1 when a record is added or removed; S + Z, Z exact discrete Laplace of scale
    t = fl(1/ε_t) rounded up, is ε_t-DP. Heavy atoms iff S + Z ≥ 3t. Returns the report (a private output,
    covered by the guarantee)."""
    from smoothdp.noise import DiscreteLaplace

    scale = lattice_test_scale(epsilon_test)
    noisy = 2 * int(on) - int(n) + int(DiscreteLaplace(scale).sample(rng=rng, numerics=numerics))
    threshold = LATTICE_TEST_SLACK * scale
    return {
        "epsilon": epsilon_test,
        "noisy_statistic": noisy,
        "threshold": threshold,
        "atoms": "heavy" if noisy >= threshold else "light",
    }


def atoms_of_choice(lattice: LatticeSpec, choice: str, *, candidates: bool = False) -> Atoms | None:
    """The atoms of ``lattice`` under the public ``atoms=`` choice: None with candidates or ``lattice=None``
    (a choice other than ``"auto"`` is then refused: there are no masses to choose), 64·σ per point on every
    level for ``"heavy"``, else the light atoms (the add/remove test, if it runs, starts from them)."""
    atoms = None if candidates else build_atoms(lattice)
    if choice != "auto" and atoms is None:
        raise ValueError(
            f"atoms={choice!r} chooses the masses of a lattice's atoms, and there are none here "
            "(lattice=None, or public candidates); pass a lattice (e.g. lattice=0.5) or atoms='auto'"
        )
    return heavy_atoms(lattice) if atoms is not None and choice == "heavy" else atoms


#: The public choices of the atoms' masses of the quantile mechanisms (``atoms=``).
ATOM_CHOICES = ("auto", "test", "heavy", "light")


def check_atom_choice(atoms: Any, neighbours: str) -> str:
    """``atoms`` checked: one of :data:`ATOM_CHOICES`; ``"test"`` (the private lattice test) exists under
    add/remove only for the one-quantile mechanisms."""
    if not isinstance(atoms, str) or atoms not in ATOM_CHOICES:
        raise ValueError(f"atoms must be one of {ATOM_CHOICES}; got {atoms!r}")
    if atoms == "test" and neighbours != "add_remove":
        raise ValueError(
            "atoms='test' (a private lattice test) runs under neighbours='add_remove' only; under "
            "substitution pass atoms='auto', 'light' or 'heavy'"
        )
    return atoms


def heavy_atoms(lattice: LatticeSpec) -> Atoms:
    """The heavy atoms of a passed add/remove lattice test: c_ℓ = 64·σ_ℓ on every level of ``lattice``."""
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


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
