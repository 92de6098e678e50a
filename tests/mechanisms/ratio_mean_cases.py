"""Registry case of smoothdp.central.moments.ratio_mean.RatioMean (the add/remove mean), with its privacy loss
written out from scratch (not from the code's samplers).

The mechanism's output is (Ñ, y, S̃) on the branch with a range and (Ñ, S̃) on the other, the branch a
function of Ñ (docs/theory/moments.md#the-mean-when-n-is-private). Its loss is at most the count's loss plus
the larger of the two branches' losses; on the range branch, for each coverage level γ the noisy count can
give, the maximum over y of the exponential mechanism's log ratio at y plus the centred sum's staircase loss
on the range [a, b] that y gives (adaptive composition, output by output). The exponential mechanism's
density is the capped one of quantile_cases (each data set with its own target γ·n), on the log-magnitudes
computed here; it and [a, b] are piecewise constant between the data's log-magnitudes and the integers, so
the supremum is a maximum over one point per piece.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

#: Bounds around 0 (the centre of the magnitudes), one side wider than the other.
BOUNDS = (-1.0, 3.0)
#: Records at both bounds, at the centre (magnitude 0, clamped to the window's floor), tiny and inner ones.
GRID = (-1.0, 0.0, 1e-9, 0.5, 3.0)
OCTAVES = 40
#: Coverage levels γ = max(1/2, 1 − 20/(ε_q·Ñ)) that the noisy count can give (1/2 up to nearly 1).
COVERAGES = (0.5, 0.75, 0.95, 0.999)


def _centre(mech: Any, a: float, b: float) -> Fraction:
    """The sum's centre: the public ``centre`` when the sum runs on the whole bounds, else the midpoint."""
    if (a, b) == (mech.lower, mech.upper) and mech.centre is not None:
        return Fraction(mech.centre)
    return (Fraction(a) + Fraction(b)) / 2


def _centred_sum(x: Any, a: float, b: float, m: Fraction) -> Fraction:
    return sum((Fraction(min(max(float(v), a), b)) - m for v in np.asarray(x, float)), Fraction(0))


def _sum_loss(mech: Any, x: Any, x2: Any, a: float, b: float, eps: float) -> float:
    """The centred sum's loss: the shift of the exact centred sums (written here) against the noise the
    mechanism draws (its own calibration, so that a wrong sensitivity shows)."""
    from moment_cases import staircase_shift_loss

    m = _centre(mech, a, b)
    if max(Fraction(b) - m, m - Fraction(a)) == 0:
        return 0.0  # every clipped record is the centre: the sum is 0 on both sides
    shift = _centred_sum(x, a, b, m) - _centred_sum(x2, a, b, m)
    noise = mech.sum_noise(a, b, eps)
    if mech.noise == "laplace":  # the loss of a shift is |shift|/scale
        return float(abs(shift) / Fraction(noise.scale))
    return staircase_shift_loss(noise, shift)


def ratio_mean_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    from quantile_cases import _log_capped_density

    from smoothdp.central.quantiles.em_samplers import capped_calibration, rank_sensitivity

    lo, hi = mech.lower, mech.upper
    xa, xb = np.sort(np.clip(np.asarray(x, float), lo, hi)), np.sort(np.clip(np.asarray(x2, float), lo, hi))
    # The count: discrete Laplace of scale t, ln pmf(k − n)/pmf(k − n') ≤ |n − n'|/t.
    count = abs(xa.size - xb.size) / mech.count_scale
    worst = _sum_loss(mech, xa, xb, lo, hi, mech.eps_sum_alone)  # the branch without a range
    if mech.range_share == 0.0:  # range_fraction=0: that branch always
        return count + worst
    c = min(max(0.0, lo), hi)
    top = float(math.frexp(max(hi - c, c - lo))[1])
    floor = top - OCTAVES

    def logs(v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.sort(np.clip(np.log2(np.abs(v - c)), floor, top))

    la, lb = logs(xa), logs(xb)
    cuts = np.unique(np.concatenate(([floor, top], la, lb, np.arange(floor, top + 1.0))))
    y = 0.5 * (cuts[:-1] + cuts[1:])
    stage: dict[tuple[float, float], float] = {}
    for gamma in COVERAGES:
        coef, cap, _ = capped_calibration(
            epsilon=mech.eps_quantile, sensitivity=rank_sensitivity(gamma), width=float(OCTAVES)
        )
        em = np.abs(
            _log_capped_density(la, floor, top, gamma, coef, cap, None, y)
            - _log_capped_density(lb, floor, top, gamma, coef, cap, None, y)
        )
        for yi, loss_y in zip(y, em, strict=True):
            g = 2.0 ** (math.ceil(yi) + 2)
            key = (max(lo, c - g), min(hi, c + g))
            if key not in stage:
                stage[key] = _sum_loss(mech, xa, xb, *key, mech.eps_sum)
            worst = max(worst, float(loss_y) + stage[key])
    return count + worst


def _sensitivity_about_the_midpoint(mechanism: Any) -> Any:
    """Broken twin: the sum centred on the public centre but its noise sized for (u − l)/2, the sensitivity
    about the midpoint."""
    import copy

    twin, about_midpoint = copy.copy(mechanism), copy.copy(mechanism)
    about_midpoint.centre = None
    twin.sum_noise = about_midpoint.sum_noise
    return twin


def ratio_mean_cases() -> list[Any]:
    """The cases (built on call, like quantile_cases)."""
    from mechanism_cases import Case, _add_remove_pairs, _attr_times

    from smoothdp.central.moments.ratio_mean import RatioMean

    def pairs() -> list[Any]:
        return _add_remove_pairs(2, GRID) + _add_remove_pairs(0, GRID)

    bad = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
        ({"noise": "gaussian"}, ValueError, "noise"),
        ({"clamp": "yes"}, TypeError, "clamp"),
        ({"numerics": "fast"}, ValueError, "numerics"),
        ({"range_fraction": 0.6}, ValueError, "range_fraction"),
        ({"range_fraction": -0.1}, ValueError, "range_fraction"),
    ]

    def case(options: dict[str, Any], broken: Any, **extra: Any) -> Any:
        """A case of RatioMean with these constructor options, on the shared data and neighbours."""
        return Case(
            mechanism=RatioMean,
            build=lambda epsilon, **kw: RatioMean(**{"epsilon": epsilon, "bounds": BOUNDS, **options, **kw}),
            data=np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3]) * 3.0,
            neighbours=pairs,
            privacy_loss=ratio_mean_loss,  # with a released count the count's term is 0: t = ∞, none drawn
            broken=broken,
            **{"bad_parameters": bad, **extra},
        )

    return [
        case({}, _attr_times("eps_sum", 2.0)),  # the range branch's sum noise sized for twice its ε
        case(
            {"noise": "laplace"},
            _attr_times("count_scale", 0.25),  # the count's noise a quarter of its scale
            label="Laplace, count broken",
            epsilon=2.0,
        ),
        case(
            {"range_fraction": 0.0},
            _attr_times("eps_sum_alone", 2.0),  # the sum's noise sized for twice its ε
            label="no range (a grouped mean's pooled decision), sum broken",
        ),
        case(
            {"centre": 2.5},
            _sensitivity_about_the_midpoint,
            label="a public centre (a grouped mean's pooled centre), sum calibrated about the midpoint",
            bad_parameters=[
                *bad,
                ({"centre": 3.5}, ValueError, "centre"),
                ({"centre": float("nan")}, ValueError, "centre"),
            ],
        ),
        case(
            {"released_count": 1000.0},
            _attr_times("eps_sum", 2.0),  # Ñ = 1000 tries the range: its sum's noise for twice its ε
            label="a count released before (a table's count column), sum broken",
            bad_parameters=[
                *bad,
                ({"released_count": float("nan")}, ValueError, "released_count"),
                ({"released_count": "many"}, TypeError, "released_count"),
            ],
        ),
    ]
