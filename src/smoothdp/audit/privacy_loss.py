"""Numerical worst-case privacy loss of a calibrated smooth-sensitivity mechanism.

For a :class:`~smoothdp.calibration.Calibration`, the mechanism is M(x) = f(x) + S(x)·Z. The loss between
two inputs x, x' at distance d depends on them only through the scale ratio r = S(x')/S(x) and the shift
Δ = (f(x') − f(x))/S(x) (the output density is location-scale; put f(x) = 0, S(x) = 1). A β-smooth bound
and the sensitivity give the **adversarial neighbour set**
(``docs/theory/calibration.md#lemma-1-two-point-lemma``; the search:
``docs/theory/calibration.md#how-the-rules-are-checked``):

* ln r ∈ [−ln G_β(d), ln G_β(d)]  (G_β(d) = e^{βd}, or 1 + βd for ``growth="linear"``);
* |Δ|₁ ≤ min(1, r)·d  (|f(x) − f(x')| ≤ min(S(x), S(x'))·d; d = 1 for the Hamming model).

:func:`worst_case_privacy_loss` maximises over that set (a grid over (ln r, Δ) and zoomed refinement)
either the log density ratio sup_y ln p_x(y)/p_{x'}(y) (pure rules: pass iff ≤ ε·d) or the hockey-stick
divergence ∫ max(0, p_x − e^{εd} p_{x'}) (the (ε, δ) Laplace rules: pass iff ≤ δ). The output grid spans
the core, geometric tails out to 10¹⁰ noise scales and every breakpoint of both densities (the two centres
and each law's :meth:`~smoothdp.noise.NoiseDistribution.breakpoints`: PolyPlace's core/tail boundary s/α,
T's √ν, the Cauchy critical point).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.calibration import Calibration
from smoothdp.keywords import check_keywords_of
from smoothdp.noise import NoiseDistribution
from smoothdp.sensitivity.growth import log_growth
from smoothdp.validation import check_data, check_positive

__all__ = [
    "DistanceResult",
    "PrivacyLossReport",
    "WorstCase",
    "hockey_stick_divergence",
    "max_log_density_ratio",
    "worst_case_privacy_loss",
]

_TAIL_DECADES = (-9.0, 10.0)  # the geometric output grid spans 1e-9 to 1e10 noise scales
_MACHINE_EPS = float(np.finfo(np.float64).eps)


def max_log_density_ratio(
    logpdf_x: Callable[[NDArray[np.float64]], ArrayLike],
    logpdf_x_prime: Callable[[NDArray[np.float64]], ArrayLike],
    grid: ArrayLike,
) -> float:
    """max over ``grid`` of ln p_x(y) − ln p_{x'}(y), for any mechanism with a density.

    Parameters
    ----------
    logpdf_x, logpdf_x_prime
        Vectorized log densities of M(x) and M(x') (arrays in, arrays of the same shape out).
    grid
        Output points y (any shape; for vector outputs, the callables decide how to read it).

    Returns
    -------
    float
        The largest log ratio on the grid (``inf`` where p_{x'} = 0 < p_x). It bounds the privacy loss
        from below; make the grid fine and wide (tails, breakpoints) to approach the supremum.
    """
    y = check_data(grid, "grid")
    lp_x = np.asarray(logpdf_x(y), dtype=np.float64)
    lp_xp = np.asarray(logpdf_x_prime(y), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        diff = lp_x - lp_xp
    both_impossible = np.isneginf(lp_x) & np.isnan(diff)
    diff = np.where(both_impossible, -np.inf, diff)  # y outside both supports: no evidence
    if np.any(np.isnan(diff)):
        raise ValueError("the log densities returned NaN on the grid")
    return float(np.max(diff))


@dataclass(frozen=True)
class WorstCase:
    """The worst neighbour pair found, in units where f(x) = 0 and S(x) = 1.

    Attributes
    ----------
    distance
        d(x, x').
    scale_ratio
        r = S(x')/S(x).
    shift
        Δ = (f(x') − f(x))/S(x) (a tuple of k coordinates for k-dimensional outputs).
    output
        The output y (per coordinate) where the log ratio is largest; ``None`` for the hockey-stick check.
    """

    distance: float
    scale_ratio: float
    shift: float | tuple[float, ...]
    output: float | tuple[float, ...] | None


@dataclass(frozen=True)
class DistanceResult:
    """The check at one distance: worst loss (pure) or worst hockey-stick divergence (approximate)."""

    distance: float
    max_loss: float
    epsilon_bound: float
    hockey_stick: float | None
    passed: bool
    worst: WorstCase


@dataclass(frozen=True)
class PrivacyLossReport:
    """Result of :func:`worst_case_privacy_loss`.

    Attributes
    ----------
    family, model, epsilon, delta
        What was checked.
    criterion
        ``"pure"``: pass iff sup log ratio ≤ ε·d (1 + rtol) (plus a floating-point allowance);
        ``"hockey_stick"``: pass iff ∫ max(0, p_x − e^{εd} p_x') ≤ δ (+ a tiny tolerance).
    max_loss
        The largest log density ratio found (at the worst distance, relative to ε·d); ``inf`` for the
        (ε, δ) rules, whose loss is unbounded in the tails.
    epsilon_bound
        ε·d at the worst distance.
    hockey_stick
        The worst hockey-stick divergence found (``None`` for the pure criterion).
    delta_bound
        δ.
    passed
        The verdict (at every distance checked).
    worst
        The worst configuration.
    per_distance
        One :class:`DistanceResult` per distance.
    """

    family: str
    model: str
    epsilon: float
    delta: float
    criterion: str
    max_loss: float
    epsilon_bound: float
    hockey_stick: float | None
    delta_bound: float
    passed: bool
    worst: WorstCase
    per_distance: tuple[DistanceResult, ...]

    @property
    def relative_loss(self) -> float:
        """max_loss / (ε·d): ≤ 1 for a correct pure rule."""
        return self.max_loss / self.epsilon_bound

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        w = self.worst
        if self.criterion == "pure":
            what = f"max loss {self.max_loss:.6g} vs ε·d = {self.epsilon_bound:.6g}"
        else:
            what = f"hockey-stick δ(ε·d) = {self.hockey_stick:.3e} vs δ = {self.delta_bound:.3e}"
        return (
            f"{verdict}: {self.family}/{self.model}: {what} at d = {w.distance:g}, "
            f"S'/S = {w.scale_ratio:.6g}, shift = {w.shift}"
        )


def worst_case_privacy_loss(
    calibration: Calibration,
    *,
    distance: float | Sequence[float] | None = None,
    criterion: str | None = None,
    n_neighbours: int = 13,
    refine_rounds: int = 4,
    rtol: float = 1e-9,
) -> PrivacyLossReport:
    """The worst privacy loss of a calibrated noise over adversarial neighbours.

    Parameters
    ----------
    calibration
        The rule to check (any :class:`~smoothdp.calibration.Calibration`, e.g. a deliberately broken
        twin made with :func:`dataclasses.replace`).
    distance
        d(x, x') to check: one value or several. Default: 1 for ``model="dp"`` (Hamming neighbours);
        (0.1, 1, 4) for ``model="geo"`` (ε is per unit of distance; the two-point constraints are exactly
        the hypotheses of the proofs, so every d is a valid test).
    criterion
        ``"pure"`` or ``"hockey_stick"``; default: pure iff ``calibration.delta == 0``.
    n_neighbours
        Grid points per neighbour parameter (ln r and the shift) before refinement.
    refine_rounds
        Zoom rounds around the best neighbour configuration.
    rtol
        Relative tolerance of the pure check: pass iff max loss ≤ ε·d·(1 + rtol) + a floating-point
        allowance of 64 ulp of the log densities involved.

    Returns
    -------
    PrivacyLossReport
        Max loss (or hockey-stick divergence), the worst configuration, the bound and the verdict.
    """
    cal = calibration
    if not isinstance(cal, Calibration):
        raise TypeError(f"calibration must be a Calibration; got {type(cal).__name__}")
    if criterion is None:
        criterion = "pure" if cal.delta == 0.0 else "hockey_stick"
    if criterion not in ("pure", "hockey_stick"):
        raise ValueError(f"criterion must be 'pure' or 'hockey_stick'; got {criterion!r}")
    if criterion == "hockey_stick" and cal.dimension != 1:
        raise ValueError("the hockey-stick criterion is implemented for dimension 1 only")
    if distance is None:
        distances: tuple[float, ...] = (1.0,) if cal.model == "dp" else (0.1, 1.0, 4.0)
    else:
        raw = np.atleast_1d(np.asarray(distance, dtype=np.float64))
        distances = tuple(check_positive("distance", float(v)) for v in raw)
        if not distances:
            raise ValueError("distance must hold at least one value")
    if n_neighbours < 3:
        raise ValueError(f"n_neighbours must be at least 3; got {n_neighbours!r}")

    results = tuple(_check_distance(cal, d, criterion, n_neighbours, refine_rounds, rtol) for d in distances)
    if criterion == "pure":
        worst = max(results, key=lambda res: res.max_loss / res.epsilon_bound)
        max_loss, hockey = worst.max_loss, None
    else:
        worst = max(results, key=lambda res: res.hockey_stick or 0.0)
        max_loss, hockey = math.inf, worst.hockey_stick
    return PrivacyLossReport(
        family=cal.family,
        model=cal.model,
        epsilon=cal.epsilon,
        delta=cal.delta,
        criterion=criterion,
        max_loss=max_loss,
        epsilon_bound=worst.epsilon_bound,
        hockey_stick=hockey,
        delta_bound=cal.delta,
        passed=all(res.passed for res in results),
        worst=worst.worst,
        per_distance=results,
    )


# -- one distance ------------------------------------------------------------------------------------------
def _check_distance(
    cal: Calibration, d: float, criterion: str, n: int, rounds: int, rtol: float
) -> DistanceResult:
    noise = cal.noise
    ln_g = float(log_growth(d, cal.beta, cal.growth))
    base = _base_grid(noise, d)
    eps_d = cal.epsilon * d
    if criterion == "hockey_stick":

        def objective(rho: NDArray[np.float64], theta: NDArray[np.float64]) -> NDArray[np.float64]:
            r = np.exp(rho)
            return hockey_stick_divergence(noise, r, theta * np.minimum(1.0, r) * d, eps_d, base)

        rho, theta, value = _zoom_search(objective, ln_g, n, rounds)
        r = math.exp(rho)
        worst = WorstCase(d, r, theta * min(1.0, r) * d, None)
        passed = value <= cal.delta + max(1e-6 * cal.delta, 1e-14)
        return DistanceResult(d, math.inf, eps_d, value, bool(passed), worst)

    k = cal.dimension
    if k == 1:

        def objective(rho: NDArray[np.float64], theta: NDArray[np.float64]) -> NDArray[np.float64]:
            r = np.exp(rho)
            return _max_loss_rows(noise, r, theta * np.minimum(1.0, r) * d, base)[0]

        rho, theta, value = _zoom_search(objective, ln_g, n, rounds)
        r = math.exp(rho)
        shifts = np.array([theta * min(1.0, r) * d])
    else:
        rho, shifts, value = _multi_dim_search(noise, ln_g, d, k, n, rounds, base)
        r = math.exp(rho)
    # Refine the output of each coordinate around its grid argmax, and recompute the loss exactly there.
    outputs, total, magnitude = [], 0.0, 0.0
    for shift in shifts:
        y, loss, mag = _refined_output(noise, r, float(shift), base)
        outputs.append(y)
        total += loss
        magnitude += mag
    value = max(value, total)
    allowance = 64.0 * _MACHINE_EPS * (magnitude + 1.0)
    passed = value <= eps_d * (1.0 + rtol) + allowance
    shift_out: float | tuple[float, ...] = float(shifts[0]) if k == 1 else tuple(float(s) for s in shifts)
    out: float | tuple[float, ...] = outputs[0] if k == 1 else tuple(outputs)
    return DistanceResult(d, float(value), eps_d, None, bool(passed), WorstCase(d, r, shift_out, out))


def _special_points(noise: NoiseDistribution) -> list[float]:
    """The centre, one scale, and the law's own breakpoints (:meth:`NoiseDistribution.breakpoints`)."""
    return [0.0, noise.scale, *noise.breakpoints()]


def _base_grid(noise: NoiseDistribution, d: float) -> NDArray[np.float64]:
    """Symmetric output grid in units of S(x) = 1: core, geometric tails, breakpoints ± a hair."""
    s = noise.scale
    width = s * (1.0 + d)
    tails = np.geomspace(10.0 ** _TAIL_DECADES[0], 10.0 ** _TAIL_DECADES[1], 400) * width
    core = np.linspace(-40.0, 40.0, 481) * width
    special = np.array(_special_points(noise))
    hair = np.concatenate([special * (1 - 1e-9), special, special * (1 + 1e-9)])
    grid = np.concatenate([-tails, tails, core, hair, -hair])
    return np.unique(grid)


def _loss(
    noise: NoiseDistribution, y: NDArray[np.float64], r: NDArray[np.float64], shift: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ln p_x(y) − ln p_{x'}(y) (p_x: law of Z; p_{x'}: law of shift + r·Z), and |ln p_x| + |ln p_x'|."""
    lp_x = noise.logpdf(y)
    lp_xp = noise.logpdf((y - shift) / r) - np.log(r)
    return lp_x - lp_xp, np.abs(lp_x) + np.abs(lp_xp)


def _config_grid(
    base: NDArray[np.float64], r: NDArray[np.float64], shift: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per configuration: the base grid around x's centre and its image around x''s centre."""
    return np.concatenate(
        [np.broadcast_to(base, (r.size, base.size)), shift[:, None] + r[:, None] * base], axis=1
    )


def _max_loss_rows(
    noise: NoiseDistribution, r: NDArray[np.float64], shift: NDArray[np.float64], base: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For each configuration (r_i, shift_i): the max of the log ratio over the output grid, and where."""
    r = np.atleast_1d(r)
    shift = np.atleast_1d(shift)
    y = _config_grid(base, r, shift)
    loss, _ = _loss(noise, y, r[:, None], shift[:, None])
    idx = np.argmax(loss, axis=1)
    rows = np.arange(r.size)
    return loss[rows, idx], y[rows, idx]


def _refined_output(
    noise: NoiseDistribution, r: float, shift: float, base: NDArray[np.float64]
) -> tuple[float, float, float]:
    """Golden-section refinement of the output between the grid neighbours of the argmax."""
    y = np.sort(_config_grid(base, np.array([r]), np.array([shift]))[0])
    loss, _ = _loss(noise, y, np.array(r), np.array(shift))
    i = int(np.argmax(loss))
    lo, hi = y[max(i - 1, 0)], y[min(i + 1, y.size - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(100):
        a = hi - ratio * (hi - lo)
        c = lo + ratio * (hi - lo)
        fa = _loss(noise, np.array(a), np.array(r), np.array(shift))[0]
        fc = _loss(noise, np.array(c), np.array(r), np.array(shift))[0]
        if fa > fc:
            hi = c
        else:
            lo = a
    candidates = np.array([y[i], 0.5 * (lo + hi)])
    values, magnitudes = _loss(noise, candidates, np.array(r), np.array(shift))
    j = int(np.argmax(values))
    return float(candidates[j]), float(values[j]), float(magnitudes[j])


def _zoom_search(
    objective: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    ln_g: float,
    n: int,
    rounds: int,
) -> tuple[float, float, float]:
    """Maximise objective(ln r, θ) over [−ln_g, ln_g] × [0, 1]: a grid, then zoomed grids around the best."""
    rho_lo, rho_hi, th_lo, th_hi = -ln_g, ln_g, 0.0, 1.0
    rho_grid = np.linspace(rho_lo, rho_hi, n)
    th_grid = np.linspace(th_lo, th_hi, n)
    best = (0.0, 0.0, -math.inf)
    span_rho, span_th = (rho_hi - rho_lo) / (n - 1), 1.0 / (n - 1)
    for _ in range(rounds + 1):
        rr, tt = np.meshgrid(rho_grid, th_grid, indexing="ij")
        values = objective(rr.ravel(), tt.ravel())
        i = int(np.argmax(values))
        if values[i] > best[2]:
            best = (float(rr.ravel()[i]), float(tt.ravel()[i]), float(values[i]))
        rho_grid = np.unique(np.clip(best[0] + np.linspace(-span_rho, span_rho, 7), rho_lo, rho_hi))
        th_grid = np.unique(np.clip(best[1] + np.linspace(-span_th, span_th, 7), th_lo, th_hi))
        span_rho, span_th = span_rho / 3.0, span_th / 3.0
    return best


def _multi_dim_search(
    noise: NoiseDistribution, ln_g: float, d: float, k: int, n: int, rounds: int, base: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64], float]:
    """k i.i.d. coordinates, common scale ratio r, ℓ1 shift budget min(1, r)·d.

    The log ratio separates over coordinates, so sup_y = Σ_j F(Δ_j, r) with F the 1-D sup. For each r,
    F is tabulated on m + 1 equal shares of the budget and the best split of the m shares over k
    coordinates is found by dynamic programming (a max-plus convolution, repeated k − 1 times),
    vectorized over the grid of r.
    """
    m = 2 * (n - 1)
    shares = np.arange(m + 1) / m
    b_idx, a_idx = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    valid = a_idx <= b_idx
    rest = np.where(valid, b_idx - a_idx, 0)

    def best_splits(rhos: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r = np.exp(rhos)
        budget = np.minimum(1.0, r) * d
        f = _max_loss_rows(noise, np.repeat(r, m + 1), (budget[:, None] * shares).ravel(), base)[0]
        f = f.reshape(rhos.size, m + 1)
        value = f.copy()
        choices = []
        rows = np.arange(rhos.size)[:, None]
        for _ in range(k - 1):
            # total[i, b, a] = f[i, a] + value[i, b − a] for a ≤ b: coordinate j takes a of the b shares.
            total = np.where(valid, f[:, None, :] + value[:, rest], -np.inf)
            choice = np.argmax(total, axis=2)
            value = np.take_along_axis(total, choice[:, :, None], axis=2)[:, :, 0]
            choices.append(choice)
        b = np.argmax(value, axis=1)
        best = value[np.arange(rhos.size), b]
        alloc = []
        for choice in reversed(choices):
            a = choice[rows[:, 0], b]
            alloc.append(a)
            b = b - a
        alloc.append(b)
        return best, np.stack(alloc, axis=1) / m * budget[:, None]

    rhos = np.linspace(-ln_g, ln_g, n)
    span = 2 * ln_g / (n - 1)
    best = (0.0, np.zeros(k), -math.inf)
    for _ in range(rounds + 1):
        values, allocs = best_splits(rhos)
        i = int(np.argmax(values))
        if values[i] > best[2]:
            best = (float(rhos[i]), allocs[i], float(values[i]))
        rhos = np.unique(np.clip(best[0] + np.linspace(-span, span, 5), -ln_g, ln_g))
        span /= 4.0
    return best


# -- hockey-stick divergence ---------------------------------------------------------------------------------
def hockey_stick_divergence(
    noise: NoiseDistribution,
    scale_ratio: ArrayLike,
    shift: ArrayLike,
    epsilon: float,
    grid: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """δ(ε) = ∫ max(0, p_x − e^ε p_{x'}) for p_x = law of Z and p_{x'} = law of shift + r·Z.

    Vectorized over configurations (``scale_ratio`` and ``shift`` broadcast together). The set where
    ln p_x − ln p_{x'} > ε is a union of intervals; their ends are located on ``grid`` (default: a wide
    grid with geometric tails) and refined by bisection, and the divergence is summed from exact CDF
    differences (upper tails through ``sf``, so that divergences of 1e−12 keep their digits). An
    interval still open at the end of the grid is taken to run to ±∞.
    """
    r, sh = np.broadcast_arrays(
        np.asarray(scale_ratio, dtype=np.float64), np.asarray(shift, dtype=np.float64)
    )
    shape = r.shape
    r, sh = r.ravel(), sh.ravel()
    base = _base_grid(noise, float(np.max(np.abs(sh)) + 1.0)) if grid is None else np.unique(np.asarray(grid))
    y = np.sort(_config_grid(base, r, sh), axis=1)
    excess = _loss(noise, y, r[:, None], sh[:, None])[0] - epsilon
    positive = excess > 0
    n_rows, n_cols = y.shape
    # Interval starts: positive at column j and (j == 0 or not positive at j − 1); ends likewise.
    starts_mask = positive & np.concatenate([np.ones((n_rows, 1), bool), ~positive[:, :-1]], axis=1)
    ends_mask = positive & np.concatenate([~positive[:, 1:], np.ones((n_rows, 1), bool)], axis=1)
    s_row, s_col = np.nonzero(starts_mask)
    e_row, e_col = np.nonzero(ends_mask)
    lower = _bracket_root(noise, y, r, sh, epsilon, s_row, s_col - 1, s_col, open_end=s_col == 0, sign=-1.0)
    upper = _bracket_root(
        noise, y, r, sh, epsilon, e_row, e_col, e_col + 1, open_end=e_col == n_cols - 1, sign=1.0
    )
    mass_x = _interval_mass(noise, lower, upper)
    mass_xp = _interval_mass(noise, (lower - sh[s_row]) / r[s_row], (upper - sh[s_row]) / r[s_row])
    # e^ε capped at e^700 to avoid overflow: this can only overstate the divergence (conservative).
    contribution = np.maximum(mass_x - math.exp(min(epsilon, 700.0)) * mass_xp, 0.0)
    total = np.bincount(s_row, weights=contribution, minlength=n_rows)  # weighted: float64
    return np.asarray(total, dtype=np.float64).reshape(shape)


def _bracket_root(
    noise: NoiseDistribution,
    y: NDArray[np.float64],
    r: NDArray[np.float64],
    sh: NDArray[np.float64],
    epsilon: float,
    rows: NDArray[np.intp],
    left: NDArray[np.intp],
    right: NDArray[np.intp],
    *,
    open_end: NDArray[np.bool_],
    sign: float,
) -> NDArray[np.float64]:
    """Bisection for the end of a positive interval between grid columns ``left`` and ``right``."""
    n_cols = y.shape[1]
    lo = y[rows, np.clip(left, 0, n_cols - 1)]
    hi = y[rows, np.clip(right, 0, n_cols - 1)]
    rr, ss = r[rows], sh[rows]
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        inside = _loss(noise, mid, rr, ss)[0] - epsilon > 0
        # Lower end (sign −1): inside → move hi down; upper end (sign +1): inside → move lo up.
        if sign < 0:
            hi = np.where(inside, mid, hi)
            lo = np.where(inside, lo, mid)
        else:
            lo = np.where(inside, mid, lo)
            hi = np.where(inside, hi, mid)
    root = hi if sign < 0 else lo  # the end that is inside the positive set
    return np.where(open_end, sign * math.inf, root)


def _interval_mass(
    noise: NoiseDistribution, a: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64]:
    """P(a < Z ≤ b), through ``sf`` on the positive side and ``cdf`` on the negative side."""
    right = noise.sf(np.maximum(a, 0.0)) - noise.sf(np.maximum(b, 0.0))
    left = noise.cdf(np.minimum(b, 0.0)) - noise.cdf(np.minimum(a, 0.0))
    return np.maximum(right, 0.0) + np.maximum(left, 0.0)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
