"""Registry cases of the moments (smoothdp.central.moments.clipped, range_sweep, range_moments,
noisy_moments), with exact privacy losses written out from scratch (not from the code's samplers).

* The staircase density is rebuilt from its definition (levels k on [k, k + γ)Δ and k + 1 on
  [k + γ, k + 1)Δ, ratio e^{−ε} per level): the loss of a shift s is ε times the largest level difference
  between y and y − s, a maximum over the pieces between the breakpoints of both copies.
* AboveThreshold with discrete Laplace noise: P(first firing query = j) = Σ_ρ P(ρ) Π_{i<j} P(ν < C + e_i + ρ)
  · P(ν ≥ C + e_j + ρ) (and "none" the product over all), summed over ρ ∈ [−R, R] with a tail below 1e-40,
  from the pmf tanh(1/(2t))e^{−|k|/t}.
* The two-stage mechanisms: the loss is the maximum over every range output (a, b) of the range's log
  ratio plus the second stage's staircase loss on the range widened from (a, b) (adaptive composition,
  computed output by output).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from smoothdp.central.moments.clipped import moment_noise
from smoothdp.central.moments.on_private_range import split_budget

BOUNDS = (0.0, 1.0)
GRID = (0.0, 0.3, 0.7, 1.0)
#: Bounds away from 0 (33 thresholds, evenly spaced, the bounds included) keep the two-stage
#: enumeration of every range output short; the records sit at a bound or just past a threshold.
RANGE_BOUNDS = (40.0, 41.0)
RANGE_GRID = (40.0, 40.52, 41.0)


# -- the staircase law, from its definition ----------------------------------------------------------------
def staircase_level(t: np.ndarray, gamma: float) -> np.ndarray:
    k = np.floor(t)
    return np.where(t - k < gamma, k, k + 1.0)


def staircase_shift_loss(noise: Any, shift: Fraction | float) -> float:
    """sup_y ln p(y)/p(y − shift) for the staircase ``noise`` (its Δ = scale, ε, γ): ε·max level gap."""
    if shift == 0:
        return 0.0
    s = float(abs(Fraction(shift)) / Fraction(noise.scale))
    bands = math.ceil(s) + 3
    k = np.arange(-bands, bands + 1, dtype=float)
    breaks = np.concatenate([k, k + noise.gamma, -k - noise.gamma])
    cuts = np.unique(np.concatenate([breaks, breaks + s]))
    y = 0.5 * (cuts[:-1] + cuts[1:])
    gap = staircase_level(np.abs(y - s), noise.gamma) - staircase_level(np.abs(y), noise.gamma)
    return float(noise.epsilon * max(0.0, gap.max()))


# -- AboveThreshold with discrete Laplace noise --------------------------------------------------------------
def _dlap_pmf(k: np.ndarray, t: float) -> np.ndarray:
    return math.tanh(0.5 / t) * np.exp(-np.abs(k) / t)


def _dlap_below(a: np.ndarray, t: float) -> np.ndarray:
    """P(ν < a) for integer a (sum of the pmf, closed form of the geometric tails)."""
    r = math.exp(-1.0 / t)
    a = np.asarray(a, dtype=float)
    low = np.exp((a - 1.0) / t) / (1.0 + r)  # P(ν ≤ a − 1) for a − 1 ≤ 0
    high = 1.0 - np.exp(-a / t) / (1.0 + r)  # 1 − P(ν ≥ a) for a ≥ 1
    return np.where(a <= 0, low, high)


def sweep_law(exceed: np.ndarray, threshold: int, scale: float) -> np.ndarray:
    """P(first j with ν_j − ρ ≥ C + exceed_j) for j = 0..J−1, and P(none) last."""
    reach = math.ceil(95.0 * scale) + 1
    rho = np.arange(-reach, reach + 1, dtype=float)
    w = _dlap_pmf(rho, scale)
    a = threshold + np.asarray(exceed, dtype=float)[None, :] + rho[:, None]  # fire iff ν ≥ a
    stay = _dlap_below(a, scale)
    before = np.concatenate([np.ones((rho.size, 1)), np.cumprod(stay, axis=1)], axis=1)
    fire = before[:, :-1] * (1.0 - stay)
    law = np.concatenate([(w[:, None] * fire).sum(axis=0), [(w * before[:, -1]).sum()]])
    return law


def range_laws(mech: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(upper ends, their law), (lower ends, their law) of a SweepRange-like finder, from scratch."""
    x = np.sort(np.clip(np.asarray(x, float), mech.lower, mech.upper))
    grid = mech.grid
    up = grid[:-1]
    above = np.array([np.sum(x > t) for t in up])
    ends_b = np.concatenate([up, [mech.upper]])
    down = grid[:0:-1]
    below = np.array([np.sum(x < t) for t in down])
    ends_a = np.concatenate([down, [mech.lower]])
    return (
        ends_b,
        sweep_law(above, mech.threshold, mech.noise_scale),
        ends_a,
        sweep_law(below, mech.threshold, mech.noise_scale),
    )


def _log_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(p) - np.log(q)
    return np.where(p > 0, out, -np.inf)


def sweep_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """The range (a, b): independent sweeps, so the log ratios of the two ends add."""
    _, up1, _, lo1 = range_laws(mech, x)
    _, up2, _, lo2 = range_laws(mech, x2)
    return float(np.max(_log_ratio(up1, up2)) + np.max(_log_ratio(lo1, lo2)))


# -- statistics, from scratch, in exact rationals (a float mean can exceed a shift of exactly Δ) -------------
def _clipped(x: Any, a: float, b: float) -> list[Fraction]:
    return [Fraction(min(max(float(v), a), b)) for v in np.asarray(x, float)]


def _clipped_mean(x: Any, a: float, b: float) -> Fraction:
    v = _clipped(x, a, b)
    return sum(v, Fraction(0)) / len(v)


def _clipped_var(x: Any, a: float, b: float, ddof: int) -> Fraction:
    v = _clipped(x, a, b)
    if len(v) <= ddof:
        return Fraction(0)
    m = sum(v, Fraction(0)) / len(v)
    return sum(((t - m) ** 2 for t in v), Fraction(0)) / (len(v) - ddof)


def clipped_mean_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    shift = _clipped_mean(x, mech.lower, mech.upper) - _clipped_mean(x2, mech.lower, mech.upper)
    return staircase_shift_loss(mech.noise_for(len(x)), shift)


def clipped_var_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    lo, hi = mech.lower, mech.upper
    shift = _clipped_var(x, lo, hi, mech.ddof) - _clipped_var(x2, lo, hi, mech.ddof)
    return staircase_shift_loss(mech.noise_for(len(x)), shift)


def _widen(a: float, b: float, lo: float, hi: float) -> tuple[tuple[float, float], bool]:
    """The documented post-processing: widen by (b − a)/4 each side, or the bounds if that covers 20%."""
    pad = 0.25 * (b - a)
    a2, b2 = max(lo, a - pad), min(hi, b + pad)
    return ((lo, hi), True) if b2 - a2 >= 0.2 * (hi - lo) else ((a2, b2), False)


def _test_fires(x: Any, rng_: tuple[float, float], eps: float) -> float:
    """P(#{x < a} + #{x > b} + ν > ⌈1.5/ε⌉), ν discrete Laplace with scale 1/ε, from the pmf."""
    v = np.asarray(x, float)
    clipped = int(np.sum(v < rng_[0]) + np.sum(v > rng_[1]))
    return float(1.0 - _dlap_below(np.array([math.ceil(1.5 / eps) - clipped + 1]), 1.0 / eps)[0])


def two_stage_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """max over the range stage's outputs (a, b, and the clipped-count test's outcome) of their log ratio
    plus the second stage's staircase loss on the clipping range they give."""
    n = len(x)
    eps_range, eps_stat = split_budget(mech.epsilon, mech.range_fraction)
    eps_find, eps_test = split_budget(eps_range, 1.0 / 3.0)
    finder = mech.finder(eps_find, (mech.lower, mech.upper), True)
    ends_b, up1, ends_a, lo1 = range_laws(finder, x)
    _, up2, _, lo2 = range_laws(finder, x2)
    ratio_b, ratio_a = _log_ratio(up1, up2), _log_ratio(lo1, lo2)
    variance = hasattr(mech, "ddof")
    bounds = (mech.lower, mech.upper)
    stage: dict[tuple[float, float], float] = {}  # the second stage's loss, per clipping range

    def stage_loss(key: tuple[float, float]) -> float:
        if key not in stage:
            if variance:
                shift = _clipped_var(x, *key, mech.ddof) - _clipped_var(x2, *key, mech.ddof)
            else:
                shift = _clipped_mean(x, *key) - _clipped_mean(x2, *key)
            stage[key] = (
                0.0 if key[0] == key[1] else staircase_shift_loss(mech.noise_for(key, n, eps_stat), shift)
            )
        return stage[key]

    # The best log ratio of the range outputs (a, b) that give each widened range, then its continuation.
    best: dict[tuple[tuple[float, float], bool], float] = {}
    for i in np.flatnonzero(lo1 > 0):
        for j in np.flatnonzero(up1 > 0):
            a, b = float(ends_a[i]), float(ends_b[j])
            key = _widen(min(a, b), max(a, b), *bounds)
            best[key] = max(best.get(key, -math.inf), ratio_a[i] + ratio_b[j])
    worst = -math.inf
    for (key, reverted), base in best.items():
        if reverted:  # the test's outcome is not released then (the range is the bounds either way)
            worst = max(worst, base + stage_loss(key))
            continue
        p1, p2 = _test_fires(x, key, eps_test), _test_fires(x2, key, eps_test)
        if p1 > 0:
            worst = max(worst, base + math.log(p1 / p2) + stage_loss(bounds))
        if p1 < 1:
            worst = max(worst, base + math.log((1 - p1) / (1 - p2)) + stage_loss(key))
    return float(worst)


def noisy_moments_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """(N, S₁, S₂) with independent staircase noises: the three losses add."""
    c = (Fraction(mech.lower) + Fraction(mech.upper)) / 2

    def sums(v: Any) -> tuple[Fraction, Fraction, Fraction]:
        w = _clipped(v, mech.lower, mech.upper)
        first = sum((t - c for t in w), Fraction(0))
        return Fraction(len(w)), first, sum(((t - c) ** 2 for t in w), Fraction(0))

    total = 0.0
    for f1, f2, sens, eps in zip(sums(x), sums(x2), mech.sensitivities, mech.epsilons, strict=True):
        if eps == 0.0:  # N not released (a count released before was given): no loss here
            continue
        total += staircase_shift_loss(moment_noise(mech.noise, sens, eps), f1 - f2)
    return total


def _smaller_stage_noise(mech: Any) -> Any:
    """The twin whose second-stage (or only) noise has half the scale its sensitivity needs."""
    import copy

    twin = copy.copy(mech)
    original = mech.noise_for
    twin.noise_for = lambda *args: original(*args).with_scale(0.5 * original(*args).scale)
    return twin


def _smaller_sweep_noise(mech: Any) -> Any:
    import copy

    twin = copy.copy(mech)
    twin.noise_scale = 0.5 * mech.noise_scale
    twin.threshold = math.ceil(mech.offset * twin.noise_scale)
    return twin


def _smaller_sums_noise(mech: Any) -> Any:
    import copy

    twin = copy.copy(mech)
    twin.sensitivities = tuple(0.5 * s for s in mech.sensitivities)
    return twin


def moment_cases() -> list[Any]:
    """The cases (built on call, like quantile_cases)."""
    from mechanism_cases import Case, _add_remove_pairs, _substitution_pairs

    from smoothdp.central import (
        ClippedMean,
        ClippedVariance,
        NoisyMoments,
        RangeMean,
        RangeVariance,
        SweepRange,
    )

    data = np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3])
    common_bad = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
        ({"noise": "gaussian"}, ValueError, "noise"),
        ({"clamp": "yes"}, TypeError, "clamp"),
        ({"numerics": "fast"}, ValueError, "numerics"),
    ]
    pairs3 = lambda: _substitution_pairs(3, GRID)  # noqa: E731
    return [
        Case(
            mechanism=ClippedMean,
            build=lambda epsilon, **kw: ClippedMean(**{"epsilon": epsilon, "bounds": BOUNDS, **kw}),
            data=data,
            neighbours=pairs3,
            privacy_loss=clipped_mean_loss,
            broken=_smaller_stage_noise,
            bad_parameters=common_bad,
        ),
        Case(
            mechanism=ClippedVariance,
            build=lambda epsilon, **kw: ClippedVariance(**{"epsilon": epsilon, "bounds": BOUNDS, **kw}),
            data=data,
            neighbours=pairs3,
            privacy_loss=clipped_var_loss,
            broken=_smaller_stage_noise,
            bad_parameters=[*common_bad, ({"ddof": 2}, ValueError, "ddof"), ({"root": 1}, TypeError, "root")],
        ),
        Case(
            mechanism=ClippedVariance,
            label="population variance, Laplace",
            build=lambda epsilon, **kw: ClippedVariance(
                **{"epsilon": epsilon, "bounds": (-1.0, 2.0), "ddof": 0, "noise": "laplace", **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (-1.0, 0.0, 0.5, 2.0)),
            privacy_loss=lambda m, x, x2, d: _laplace_stage_loss(
                m, _clipped_var(x, -1.0, 2.0, 0) - _clipped_var(x2, -1.0, 2.0, 0), len(x)
            ),
            broken=_smaller_stage_noise,
            bad_parameters=common_bad,
        ),
        Case(
            mechanism=SweepRange,
            build=lambda epsilon, **kw: SweepRange(**{"epsilon": epsilon, "bounds": BOUNDS, **kw}),
            data=data,
            neighbours=pairs3,
            privacy_loss=sweep_loss,
            broken=_smaller_sweep_noise,
            bad_parameters=[
                ({"epsilon": 0.0}, ValueError, "epsilon"),
                ({"bounds": (0.0, np.inf)}, ValueError, "bounds"),
                ({"neighbours": "local"}, ValueError, "neighbours"),
                ({"offset": -1.0}, ValueError, "offset"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=SweepRange,
            label="add/remove",
            build=lambda epsilon, **kw: SweepRange(
                **{"epsilon": epsilon, "bounds": BOUNDS, "neighbours": "add_remove", **kw}
            ),
            data=data,
            neighbours=lambda: _add_remove_pairs(2, GRID) + _add_remove_pairs(0, GRID),
            privacy_loss=sweep_loss,
            broken=_smaller_sweep_noise,
            bad_parameters=[({"clip": 1}, TypeError, "clip")],
            epsilon=2.0,
        ),
        Case(
            mechanism=RangeMean,
            build=lambda epsilon, **kw: RangeMean(
                **{"epsilon": epsilon, "bounds": RANGE_BOUNDS, "range_fraction": 0.5, **kw}
            ),
            data=data + 40.0,
            neighbours=lambda: _substitution_pairs(2, RANGE_GRID),
            privacy_loss=two_stage_loss,
            broken=_smaller_stage_noise,
            bad_parameters=[
                *common_bad,
                ({"range_fraction": 1.0}, ValueError, "range_fraction"),
                ({"finder": 3}, TypeError, "finder"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=RangeVariance,
            build=lambda epsilon, **kw: RangeVariance(
                **{"epsilon": epsilon, "bounds": RANGE_BOUNDS, "range_fraction": 0.5, **kw}
            ),
            data=data + 40.0,
            neighbours=lambda: _substitution_pairs(2, RANGE_GRID),
            privacy_loss=two_stage_loss,
            broken=_smaller_stage_noise,
            bad_parameters=[*common_bad, ({"ddof": -1}, ValueError, "ddof")],
            epsilon=2.0,
        ),
        Case(
            mechanism=NoisyMoments,
            build=lambda epsilon, **kw: NoisyMoments(**{"epsilon": epsilon, "bounds": (-1.0, 3.0), **kw}),
            data=data,
            neighbours=lambda: _add_remove_pairs(2, (-1.0, 0.0, 3.0)) + _add_remove_pairs(0, (-1.0, 3.0)),
            privacy_loss=noisy_moments_loss,
            broken=_smaller_sums_noise,
            bad_parameters=[*common_bad, ({"ddof": 3}, ValueError, "ddof")],
        ),
        Case(
            mechanism=NoisyMoments,
            label="a count released before (a table's count column)",
            build=lambda epsilon, **kw: NoisyMoments(
                **{"epsilon": epsilon, "bounds": (-1.0, 3.0), "released_count": 7.0, **kw}
            ),
            data=data,
            neighbours=lambda: _add_remove_pairs(2, (-1.0, 0.0, 3.0)) + _add_remove_pairs(0, (-1.0, 3.0)),
            privacy_loss=noisy_moments_loss,
            broken=_smaller_sums_noise,
            bad_parameters=[
                *common_bad,
                ({"released_count": float("nan")}, ValueError, "released_count"),
                ({"released_count": "many"}, TypeError, "released_count"),
            ],
        ),
    ]


def _laplace_stage_loss(mech: Any, shift: Fraction, n: int) -> float:
    """Laplace(b): the loss of a shift is |shift|/b exactly."""
    return float(abs(shift) / Fraction(mech.noise_for(n).scale))
