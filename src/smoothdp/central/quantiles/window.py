"""The exponential-mechanism quantile from a window of ranks: the exact same output distribution as the
whole-data sampler, with the same work on every data set of n records
(docs/theory/quantiles.md#sampling-from-a-window-of-ranks).

The mechanism (:class:`~smoothdp.central.quantiles.ExponentialQuantile`) draws one *outcome* with
probability proportional to its float weight Ŵ: an open gap j = (x_(j), x_(j+1)) between padded order
statistics (x_(0) = lower, x_(n+1) = upper), weight ≈ μ(gap)·e^{−coef·|j − t|}, or a lattice atom at a
distinct data value (a *knot*), weight ≈ μ({v})·e^{−coef·dist}; μ = Lebesgue + the public atoms
(:mod:`smoothdp.central.quantiles.atoms`).

Work (public: n, ε, the bounds, q), the same on every data set except in the outside round (step 4):

1. one window of ranks [a, b] = [r − w, r + w] (w from n and ε, :func:`window_half_width`) fetched with
   the w records just below x_(a) and the w just above x_(b), beyond the runs of tied values at the
   window's ends (:meth:`~smoothdp.scale.engine.Records.window_beyond`: a run's extent is known from the
   window's exact counts and the run itself is never read; a side with fewer records is padded);
2. one exact categorical draw over the outcomes of the explicit value range (the three windows) and one
   *outside* pseudo-outcome of weight Û ≥ Û_L + Û_R, where Û_L = μ(S_L)·e^{−coef·d_L + 2η + 2^-20}
   bounds the weight of every outcome left of the explicit range (d_L: its least rank distance), S_L =
   [lower, x_(a)); likewise on the right;
3. an explicit outcome is drawn with probability Ŵ(o)/Z, Z = ΣŴ(explicit) + Û, and output (no more work);
4. the outside round, with probability Û/Z: a point y drawn from ν = (Û_L·μ|S_L/μ(S_L) +
   Û_R·μ|S_R/μ(S_R))/(Û_L + Û_R), its outcome o found by one probe pass over the records
   (:meth:`~smoothdp.scale.engine.Records.probe`), accepted with probability Ŵ(o)/(Û·ν(o)) ≤ 1 (exact
   rationals; a y inside the explicit range is rejected), so each outside outcome is output with
   probability exactly Ŵ(o)/Z; on a rejection, one draw of the whole-data sampler (same law; it sorts
   every record). This round is the only work that depends on the data, and it happens with probability
   Û/Z: below 2^-60 unless records are packed at the float resolution around the quantile
   (docs/theory/floating-point.md#timing).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import Atoms
from smoothdp.central.quantiles.em_samplers import sample_em_lattice, sample_em_quantile
from smoothdp.central.quantiles.exact_draws import bracket_uniform, dyadic_parts, exact_categorical
from smoothdp.exact import OutputGrid, uniform_on_grid
from smoothdp.exact.bits import bernoulli as _bernoulli
from smoothdp.scale.engine import Records
from smoothdp.work import tally

__all__ = ["sample_em_windowed", "window_half_width"]

#: ln 2^60 + slack: a region pseudo-outcome is drawn with probability ≲ n·e^{−coef·w}·e^{−_REACH}.
_REACH = 60.0


def window_half_width(n: int, coef: float) -> int:
    """w: the window [r − w, r + w] of ranks read around the target rank (public: n and ε only)."""
    return max(1, math.ceil((math.log(n + 2.0) + _REACH) / coef))


def _dyadic(logw: NDArray[np.float64]) -> list[Fraction]:
    """The exact float weights Ŵ = f·2^k of natural-log weights (what :func:`exact_categorical` draws by:
    the same call on the same array)."""
    k, f = dyadic_parts(logw)
    return [Fraction(float(ff)) * Fraction(2) ** int(kk) for kk, ff in zip(k, f, strict=True)]


class _Explicit:
    """The outcomes of a sorted stretch of records, as runs of tied values with their exact counts.

    ``values``: distinct values v_0 < … < v_m (the bounds included where the stretch reaches them);
    ``below[i]`` = #{x < v_i}, ``at_most[i]`` = #{x ≤ v_i} (a bound that is not a record: 0/0 for lower,
    n/n for upper). Gap i = (v_i, v_{i+1}) has index at_most[i]; a run on the lattice is a knot. Weights
    by the same float operations as the whole-data sampler.
    """

    def __init__(
        self,
        values: NDArray[np.float64],
        below: NDArray[np.float64],
        at_most: NDArray[np.float64],
        *,
        target: float,
        coef: float,
        lattice: Atoms | None,
    ) -> None:
        self.values = values
        lengths = np.diff(values)
        j = at_most[:-1]
        if lattice is None:
            self.counts = np.zeros((0, lengths.size))
            with np.errstate(divide="ignore"):
                log_gap = np.log(lengths)
            self.knots = values[:0]
            knot_logw = values[:0]
        else:
            self.counts, gap_mass, knot_mass = lattice.scan(values)
            with np.errstate(divide="ignore"):
                log_gap = np.log(lengths + gap_mass)
            on = knot_mass > 0.0
            self.knots = values[on]
            dist = np.maximum(0.0, np.maximum(below[on] - target, target - at_most[on]))
            knot_logw = np.log(knot_mass[on]) - coef * dist
        self.logw = np.concatenate((log_gap - coef * np.abs(j - target), knot_logw))
        self.n_gaps = lengths.size


def _runs(
    values: NDArray[np.float64], ranks: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Distinct values of sorted ``values`` (1-based ranks ``ranks``, consecutive within each run), with
    #{x < v} = (first rank − 1) and #{x ≤ v} = last rank of each run as seen here."""
    new = np.concatenate(([True], values[1:] != values[:-1]))
    starts = np.flatnonzero(new)
    ends = np.concatenate((starts[1:], [values.size])) - 1
    return values[starts], (ranks[starts] - 1).astype(np.float64), ranks[ends].astype(np.float64)


def _explicit_range(
    win_values: NDArray[np.float64],
    a: int,
    n: int,
    n_below: int,
    n_above: int,
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    lower: float,
    upper: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The runs (values, #{x < v}, #{x ≤ v}) of the explicit range: the records just below the window
    (``low``, padded with −inf), the window x_(a) … x_(b), the records just above (``high``, +inf padding),
    and the bounds where the range reaches them. The runs of x_(a) and x_(b) take their exact counts from
    the window (n_below, n − n_above): they may extend beyond what is read."""
    b = a + win_values.size - 1
    low = low[np.isfinite(low)]
    high = high[np.isfinite(high)]
    b_run = n - n_above
    ranks = np.concatenate(
        (
            np.arange(n_below - low.size + 1, n_below + 1),
            np.arange(a, b + 1),
            np.arange(b_run + 1, b_run + high.size + 1),
        )
    )
    vals, below, at_most = _runs(np.concatenate((low, win_values, high)), ranks)
    k_a = int(np.searchsorted(vals, win_values[0]))  # the run of x_(a), and of x_(b)
    k_b = int(np.searchsorted(vals, win_values[-1]))
    below[k_a] = n_below
    at_most[k_b] = b_run
    if low.size == n_below:  # every record below the window is read: the range starts at lower
        if vals[0] > lower:
            vals, below, at_most = np.concatenate(([lower], vals)), np.r_[0.0, below], np.r_[0.0, at_most]
    if high.size == n_above and vals[-1] < upper:
        vals, below, at_most = np.r_[vals, upper], np.r_[below, float(n)], np.r_[at_most, float(n)]
    return vals, below, at_most


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


class _OutsidePoint:
    """A point y of ν on one outside part S = [lower, x_(a)) or (x_(b), upper], drawn in the outside round:
    an atom (exact float, drawn by mass) or a continuum point known as the float f just below it."""

    def __init__(
        self,
        side: str,
        lo: float,
        hi: float,
        mass: Fraction,
        lattice: Atoms | None,
        words: int,
        rng: np.random.Generator,
    ) -> None:
        self.side, self.mass = side, mass
        length = Fraction(hi) - Fraction(lo)
        p_cont = length / mass
        self.atom = False
        if lattice is not None and p_cont < 1 and not _bernoulli(p_cont.numerator, p_cont.denominator, rng):
            end = lattice.point_mass(lo if side == "left" else hi)  # the closed end's atom
            none = Fraction(0)
            atom = lattice.draw_in_cell(
                lo, hi, lattice.open_counts(lo, hi), rng, continuum=False,
                low_end=end if side == "left" else none, high_end=end if side == "right" else none,
            )  # fmt: skip
            assert atom is not None  # no continuum offered: always an atom
            self.point = atom
            self.atom = True
        else:
            self.point = bracket_uniform(lo, hi, words, rng)


def _words(lower: float, upper: float) -> int:
    """Words of a uniform's bits that place it between two adjacent floats, from the bounds (public)."""
    return max(1, math.ceil((math.log2(float(upper) - float(lower)) + 1074.0 + 64.0) / 64.0))


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
    μ on [lower, upper], rounded onto ``grid``) with the same work on every data set (module docstring).
    ``eta`` bounds the error of the float log weights; ``half_width`` overrides :func:`window_half_width`."""
    n = records.n
    if n == 0:
        explicit = _Explicit(
            np.array([lower, upper]), np.zeros(2), np.zeros(2), target=target, coef=coef, lattice=lattice
        )
        return _draw_explicit(explicit, exact_categorical(explicit.logw, rng), lattice, grid, rng, numerics)
    r = math.ceil(target)
    w = window_half_width(n, coef) if half_width is None else half_width
    a, b = max(1, r - w), min(n, r + w)
    win, low, high = records.window_beyond(a, b, w)
    # The outside parts: records beyond the w read past the window's end runs. Their outcomes have at most
    # n_below − w records at or below them (left), at least n − n_above + w below them (right).
    parts: list[tuple[str, float, float, Fraction, float]] = []
    x_a, x_b = float(win.values[0]), float(win.values[-1])
    if win.n_below > w:
        mass = _region_mass(lower, x_a, lattice, closed_low=True)
        parts.append(
            ("left", lower, x_a, mass, _log_region_bound(mass, target - (win.n_below - w), coef, eta))
        )
    if win.n_above > w:
        mass = _region_mass(x_b, upper, lattice, closed_low=False)
        parts.append(
            ("right", x_b, upper, mass, _log_region_bound(mass, n - win.n_above + w - target, coef, eta))
        )
    parts = [p for p in parts if p[3] > 0]
    vals, below, at_most = _explicit_range(
        win.values, win.first, n, win.n_below, win.n_above, low, high, lower, upper
    )
    explicit = _Explicit(vals, below, at_most, target=target, coef=coef, lattice=lattice)
    size = explicit.logw.size
    log_outside: list[float] = []
    if parts:  # Û ≥ Û_L + Û_R, rounded up by a slack far above the error of logaddexp
        log_outside = [float(np.logaddexp.reduce([p[4] for p in parts])) + 2.0**-30]
    logw = np.concatenate((explicit.logw, log_outside))
    idx = exact_categorical(logw, rng)
    if idx < size:
        return _draw_explicit(explicit, idx, lattice, grid, rng, numerics)
    # The outside round (probability Û/Z): a point y of ν, its outcome found by one probe pass.
    tally("region_rounds")
    bounds = _dyadic(np.array([p[4] for p in parts]))
    side = 0
    if len(parts) == 2:
        p_left = bounds[0] / (bounds[0] + bounds[1])
        side = 0 if _bernoulli(p_left.numerator, p_left.denominator, rng) else 1
    name, lo, hi, mass, _ = parts[side]
    point = _OutsidePoint(name, lo, hi, mass, lattice, _words(lower, upper), rng)
    probe = records.probe(point.point)
    k_all, f_all = dyadic_parts(logw)
    u_hat = Fraction(float(f_all[idx])) * Fraction(2) ** int(k_all[idx])
    value = _accept_outside(
        point, probe, parts, bounds, u_hat, vals, n,
        lower=lower, upper=upper, target=target, coef=coef, lattice=lattice, grid=grid, rng=rng,
        numerics=numerics,
    )  # fmt: skip
    if value is not None:
        return value
    # Rejected: one exact draw from the whole data (same law; see the module docstring and the proof).
    tally("whole_data_draws")
    full = records.sorted_values()
    if lattice is None:
        return sample_em_quantile(
            full, lower=lower, upper=upper, target=target, coef=coef, grid=grid, rng=rng, numerics=numerics
        )
    return sample_em_lattice(
        full, lower=lower, upper=upper, target=target, coef=coef, lattice=lattice, grid=grid, rng=rng,
        numerics=numerics,
    )  # fmt: skip


def _draw_explicit(
    explicit: _Explicit,
    idx: int,
    lattice: Atoms | None,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
) -> float:
    if idx >= explicit.n_gaps:  # a knot: an atom at a distinct data value (or a bound), released as itself
        return float(explicit.knots[idx - explicit.n_gaps])
    lo, hi = float(explicit.values[idx]), float(explicit.values[idx + 1])
    return _draw_in_gap(lo, hi, explicit.counts[:, idx], lattice, grid, rng, numerics)


def _accept_outside(
    point: _OutsidePoint,
    probe: Any,
    parts: list[tuple[str, float, float, Fraction, float]],
    bounds: list[Fraction],
    u_hat: Fraction,
    explicit_values: NDArray[np.float64],
    n: int,
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
    """The outside round: y's outcome o (from the probe) accepted with probability Ŵ(o)/(Û·ν(o)), exactly;
    None when rejected (y inside the explicit range, or the coin)."""
    y = point.point
    first, last = float(explicit_values[0]), float(explicit_values[-1])
    if point.side == "left" and not (y < first):
        return None
    if point.side == "right" and not (y >= last if not point.atom else y > last):
        return None
    side_bound = bounds[0] if point.side == parts[0][0] else bounds[-1]
    p_side = side_bound / sum(bounds, Fraction(0))
    is_knot = point.atom and (probe.at_most > probe.below or y in (lower, upper))
    if is_knot:
        assert lattice is not None
        dist = max(0.0, probe.below - target, target - probe.at_most)
        knot_mass = lattice.scan(np.array([y]))[2]  # the explicit range's float: the same sum and log
        logw = float(np.log(knot_mass)[0]) - coef * dist
        mu_outcome = lattice.point_mass(y)
        lo = hi = y
    else:
        if point.atom:
            j, pred = probe.below, probe.pred
        else:  # y in (f, next f): x < y ⟺ x ≤ f
            j = probe.at_most
            pred = y if probe.at_most > probe.below else probe.pred
        lo = lower if pred == -np.inf else pred
        hi = upper if probe.succ == np.inf else probe.succ
        gap = _Explicit(
            np.array([lo, hi]),
            np.zeros(2),
            np.array([float(j), float(j)]),
            target=target,
            coef=coef,
            lattice=lattice,
        )
        logw = float(gap.logw[0])
        mu_outcome = Fraction(hi) - Fraction(lo) + (lattice.open_mass(lo, hi) if lattice is not None else 0)
    nu_outcome = p_side * mu_outcome / point.mass
    accept = _dyadic(np.array([logw]))[0] / (u_hat * nu_outcome)
    if accept > 1:
        raise RuntimeError("internal error: the outside-region bound of the windowed sampler does not hold")
    if not _bernoulli(accept.numerator, accept.denominator, rng):
        return None
    if point.atom:  # a knot, or an atom inside the gap: released as itself
        return y
    return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))
