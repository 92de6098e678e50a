"""The exponential-mechanism quantile from a window of ranks: the exact same output distribution as the
whole-data sampler, reading only O(1/ε · log n) order statistics
(docs/theory/quantiles.md#sampling-from-a-window-of-ranks).

The mechanism (:class:`~smoothdp.central.quantiles.ExponentialQuantile`) draws one *outcome* with
probability proportional to its float weight Ŵ: an open gap j = (x_(j), x_(j+1)) between padded order
statistics (x_(0) = lower, x_(n+1) = upper), weight ≈ μ(gap)·e^{−coef·|j − t|}, or a lattice atom at a
distinct data value (a *knot*), weight ≈ c·e^{−coef·dist}; μ = Lebesgue + c·(lattice counting measure).

Here only the ranks [a, b] = [r − w, r + w] around the target rank r are read (w from public parameters,
:func:`window_half_width`). The outcomes in the window's value range [x_(a), x_(b)] get their exact float
weights, computed by the same float operations as the whole-data sampler. The two *outside regions*
[lower, x_(a)) and (x_(b), upper] get one pseudo-outcome each, of weight Û = μ(region)·K: K bounds the
weight per unit of μ there, because every outcome left of x_(a) has at most a − 1 records at or below it
(so |j − t| ≥ t − a + 1), and symmetrically on the right. One exact categorical draw decides; when it lands
on a region (probability ≤ Û/ΣŴ, below 2^-60 on data without a huge mass far from the quantile), the
region is sampled by rejection: a point y ~ μ restricted to the region, accepted with probability
Ŵ(outcome of y)·μ(region)/(Û·μ(outcome of y)) ≤ 1, computed in exact rationals. In that round each outcome
is output with probability exactly Ŵ/Z (Z = ΣŴ over the window plus ΣÛ): the window's by the first draw,
a region's by Û/Z · μ(o)/μ(region) · Ŵ(o)μ(region)/(Û μ(o)) = Ŵ(o)/Z. So conditionally on acceptance
the output has the whole-data law; on rejection we take one draw of the whole-data sampler (same law), which
bounds the time where Û exceeds the region's weight by a huge factor. Only the rare region branch reads the
whole data.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.atoms import Atoms
from smoothdp.central.quantiles import (
    _dyadic_parts,
    exact_categorical,
    sample_em_lattice,
    sample_em_quantile,
)
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.exact.bits import bernoulli as _bernoulli
from smoothdp.exact.bits import uniform_bits as _uniform_bits
from smoothdp.scale.engine import Records

__all__ = ["sample_em_windowed", "window_half_width"]

#: ln 2^60 + slack: a region pseudo-outcome is drawn with probability ≲ n·e^{−coef·w}·e^{−_REACH}.
_REACH = 60.0


def window_half_width(n: int, coef: float) -> int:
    """w: the window [r − w, r + w] of ranks read around the target rank (public: n and ε only)."""
    return max(1, math.ceil((math.log(n + 2.0) + _REACH) / coef))


def _dyadic(logw: NDArray[np.float64]) -> list[Fraction]:
    """The exact float weights Ŵ = f·2^k of natural-log weights (what :func:`exact_categorical` draws by:
    the same call on the same array)."""
    k, f = _dyadic_parts(logw)
    return [Fraction(float(ff)) * Fraction(2) ** int(kk) for kk, ff in zip(k, f, strict=True)]


class _Outcomes:
    """The outcomes of the value range [edges[0], edges[-1]] of padded order statistics with global index
    ``first`` (edges[i] = x_(first + i)), and their log weights (same float operations as the whole-data
    sampler)."""

    def __init__(
        self,
        edges: NDArray[np.float64],
        first: int,
        n: int,
        n_below: int,
        n_above: int,
        *,
        target: float,
        coef: float,
        lattice: Atoms | None,
    ) -> None:
        self.edges = edges
        lengths = np.diff(edges)
        j = np.arange(first, first + lengths.size, dtype=np.float64)
        if lattice is None:
            self.counts = np.zeros((0, lengths.size))
            with np.errstate(divide="ignore"):
                log_gap = np.log(lengths)
            self.knots = edges[:0]
            knot_logw = edges[:0]
        else:
            self.counts, gap_mass, knot_mass = lattice.scan(edges)
            with np.errstate(divide="ignore"):
                log_gap = np.log(lengths + gap_mass)
            new = np.concatenate(([True], edges[1:] != edges[:-1]))
            starts = np.flatnonzero(new)
            ends = np.concatenate((starts[1:], [edges.size])) - 1
            below = np.maximum(first + starts - 1, 0).astype(np.float64)
            at_most = np.minimum(first + ends, n).astype(np.float64)
            if first > 0:  # the first run may continue left of the window
                below[0] = n_below
            if first + edges.size - 1 < n + 1:  # the last run may continue right of the window
                at_most[-1] = n - n_above
            keep = knot_mass[starts] > 0.0
            self.knots = edges[starts[keep]]
            dist = np.maximum(0.0, np.maximum(below[keep] - target, target - at_most[keep]))
            knot_logw = np.log(knot_mass[starts[keep]]) - coef * dist
        self.first = first
        self.logw = np.concatenate((log_gap - coef * np.abs(j - target), knot_logw))
        self.n_gaps = lengths.size


def _region_mass(lo: float, hi: float, lattice: Atoms | None, *, closed_low: bool) -> Fraction:
    """μ of [lo, hi) (closed_low) or (lo, hi], exactly."""
    mass = Fraction(hi) - Fraction(lo)
    if lattice is None:
        return mass
    return mass + lattice.open_mass(lo, hi) + lattice.point_mass(lo if closed_low else hi)


def _log_region_bound(mass: Fraction, distance: float, coef: float, eta: float) -> float:
    """ln Û with Û = μ(region)·e^{−coef·distance + η} rounded up (a generous 2^-20 relative slack)."""
    return math.log(float(mass)) + 2.0**-20 - coef * distance + 2.0 * eta


def _draw_in_gap(
    lo: float,
    hi: float,
    counts: NDArray[np.float64],
    lattice: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
) -> float:
    """Given the gap (lo, hi) with ``counts`` atoms of each level inside: the continuum with probability
    len/μ(gap), a uniform point of it rounded onto the grid, else an atom of it drawn by mass (itself)."""
    if lattice is not None:
        atom = lattice.draw_in_cell(lo, hi, counts, rng)
        if atom is not None:
            return atom
    return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))


def sample_em_windowed(
    records: Records,
    *,
    lower: float,
    upper: float,
    target: float,
    coef: float,
    eta: float,
    lattice: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    half_width: int | None = None,
) -> float:
    """One draw of the exponential-mechanism quantile (density ∝ e^{−coef·dist(t, [#{x<y}, #{x≤y}])} w.r.t.
    μ on [lower, upper], rounded onto ``grid``) reading a window of ranks (module docstring). ``eta``
    bounds the error of the float log weights; ``half_width`` overrides :func:`window_half_width` (tests)."""
    n = records.n
    if n == 0:
        edges = np.array([lower, upper])
        outcomes = _Outcomes(edges, 0, 0, 0, 0, target=target, coef=coef, lattice=lattice)
        return _draw_window(outcomes, 0, lattice, grid, rng, numerics)
    r = math.ceil(target)
    w = window_half_width(n, coef) if half_width is None else half_width
    a, b = max(1, r - w), min(n, r + w)
    win = records.window(a, b)
    # A tie run across an end of the window is read whole, with w more ranks beyond it. Otherwise a window
    # inside a long run of one value (off the lattice) holds no outcome of positive weight, every draw goes
    # to an outside region, and its rejection loop almost never accepts: a data-dependent hang. Reading
    # more ranks changes the running time only, never the output distribution (module docstring).
    a_run, b_run = win.n_below + 1, n - win.n_above  # the first rank of x_(a)'s run, the last of x_(b)'s
    if a_run < a or b_run > b:
        a, b = max(1, min(a, a_run - w)), min(n, max(b, b_run + w))
        win = records.window(a, b)
    parts = [win.values]
    if a == 1:
        parts.insert(0, np.array([lower]))
    if b == n:
        parts.append(np.array([upper]))
    first = 0 if a == 1 else a
    outcomes = _Outcomes(
        np.concatenate(parts), first, n, win.n_below, win.n_above, target=target, coef=coef, lattice=lattice
    )
    regions: list[tuple[str, Fraction, float]] = []
    if a > 1:
        mass = _region_mass(lower, float(win.values[0]), lattice, closed_low=True)
        if mass > 0:
            regions.append(("left", mass, _log_region_bound(mass, target - (a - 1), coef, eta)))
    if b < n:
        mass = _region_mass(float(win.values[-1]), upper, lattice, closed_low=False)
        if mass > 0:
            regions.append(("right", mass, _log_region_bound(mass, b - target, coef, eta)))
    logw = np.concatenate((outcomes.logw, [lr for *_, lr in regions]))
    size = outcomes.logw.size
    k_all, f_all = _dyadic_parts(logw)  # the float weights exactly as exact_categorical sees them
    while True:
        idx = exact_categorical(logw, rng)
        if idx < size:
            return _draw_window(outcomes, idx, lattice, grid, rng, numerics)
        side, mass, _ = regions[idx - size]
        # Û of the drawn region as an exact rational, made only when a region is drawn: the window's weights
        # as rationals can be 2^(−10^12) at a large ε.
        bound = Fraction(float(f_all[idx])) * Fraction(2) ** int(k_all[idx])
        value = _sample_region(
            records, side, (a, b), mass, bound,
            lower=lower, upper=upper, target=target, coef=coef, lattice=lattice, grid=grid, rng=rng,
            numerics=numerics,
        )  # fmt: skip
        if value is not None:
            return value
        # Rejected: one exact draw from the whole data instead of more rounds. An accepted round outputs
        # each outcome with probability exactly proportional to its weight, and so does the whole-data
        # sampler, so the law is unchanged; but the time is bounded whatever the data (a region's bound
        # can exceed its weight by e^{hundreds}, e.g. records packed into subnormal gaps in wide bounds).
        full = records.sorted_values()
        if lattice is None:
            return sample_em_quantile(
                full, lower=lower, upper=upper, target=target, coef=coef, grid=grid, rng=rng,
                numerics=numerics,
            )  # fmt: skip
        return sample_em_lattice(
            full, lower=lower, upper=upper, target=target, coef=coef, lattice=lattice, grid=grid, rng=rng,
            numerics=numerics,
        )  # fmt: skip


def _draw_window(
    outcomes: _Outcomes,
    idx: int,
    lattice: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
) -> float:
    if idx >= outcomes.n_gaps:  # a knot: an atom at a distinct data value (or a bound), released as itself
        return float(outcomes.knots[idx - outcomes.n_gaps])
    lo, hi = float(outcomes.edges[idx]), float(outcomes.edges[idx + 1])
    return _draw_in_gap(lo, hi, outcomes.counts[:, idx], lattice, grid, rng, numerics)


def _uniform_gap(edges: NDArray[np.float64], rng: np.random.Generator) -> int:
    """The gap k (edges[k] < y < edges[k+1]) of y uniform on [edges[0], edges[-1]], exactly (lazily
    refined uniform bits; gaps of length 0 have probability 0)."""
    lo, span = Fraction(float(edges[0])), Fraction(float(edges[-1])) - Fraction(float(edges[0]))
    last = edges.size - 2
    a, bits = _uniform_bits(rng), 64
    while True:
        y_lo = lo + span * Fraction(a, 1 << bits)
        y_hi = lo + span * Fraction(a + 1, 1 << bits)
        k = int(np.searchsorted(edges, float(y_lo), side="right")) - 1
        k = min(max(k, 0), last)
        while k > 0 and Fraction(float(edges[k])) > y_lo:
            k -= 1
        while k < last and Fraction(float(edges[k + 1])) <= y_lo:
            k += 1
        if y_hi <= Fraction(float(edges[k + 1])):
            return k
        a = (a << 64) | _uniform_bits(rng)
        bits += 64


def _sample_region(
    records: Records,
    side: str,
    window: tuple[int, int],
    mass: Fraction,
    bound: Fraction,
    *,
    lower: float,
    upper: float,
    target: float,
    coef: float,
    lattice: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
) -> float | None:
    """One rejection round in an outside region (module docstring); None when rejected. Reads every record."""
    full = records.sorted_values()
    n = full.size
    a, b = window
    if side == "left":
        edges = np.concatenate(([lower], full[:a]))  # gaps 0 … a − 1, region [lower, x_(a))
        first, region_lo, region_hi = 0, lower, float(full[a - 1])
    else:
        edges = np.concatenate((full[b - 1 :], [upper]))  # gaps b … n, region (x_(b), upper]
        first, region_lo, region_hi = b, float(full[b - 1]), upper
    # A point of the region under μ: the continuum with probability length/μ(region), else a lattice atom.
    length = Fraction(region_hi) - Fraction(region_lo)
    p_cont = length / mass
    atom_value: float | None = None
    if lattice is not None and p_cont < 1 and not _bernoulli(p_cont.numerator, p_cont.denominator, rng):
        end = lattice.point_mass(region_lo if side == "left" else region_hi)  # the closed end's atom
        atom_value = lattice.draw_in_cell(
            region_lo, region_hi, lattice.open_counts(region_lo, region_hi), rng, continuum=False,
            low_end=end if side == "left" else Fraction(0), high_end=end if side == "right" else Fraction(0),
        )  # fmt: skip
    if atom_value is not None:
        below = int(np.searchsorted(full, atom_value, side="left"))
        at_most = int(np.searchsorted(full, atom_value, side="right"))
        is_knot = below < at_most or atom_value in (lower, upper)
    else:
        is_knot = False
    if is_knot:
        assert lattice is not None and atom_value is not None
        dist = max(0.0, below - target, target - at_most)
        knot_mass = lattice.scan(np.array([atom_value]))[2]  # the window's float: the same sum and log
        logw = float(np.log(knot_mass)[0]) - coef * dist
        mu_outcome = lattice.point_mass(atom_value)
    else:
        k = below - first if atom_value is not None else _uniform_gap(edges, rng)  # the gap holding y
        lo, hi = float(edges[k]), float(edges[k + 1])
        gap = _Outcomes(np.array([lo, hi]), first + k, n, 0, 0, target=target, coef=coef, lattice=lattice)
        logw = float(gap.logw[0])  # the gap's weight (the knots of its two edges are not used)
        mu_outcome = Fraction(hi) - Fraction(lo)
        if lattice is not None:
            mu_outcome += lattice.open_mass(lo, hi)
    accept = _dyadic(np.array([logw]))[0] * mass / (bound * mu_outcome)
    if accept > 1:
        raise RuntimeError("internal error: the outside-region bound of the windowed sampler does not hold")
    if not _bernoulli(accept.numerator, accept.denominator, rng):
        return None
    if atom_value is not None:  # a knot, or an atom inside the gap: released as itself
        return atom_value
    return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))
