"""Registry cases of the counting queries (smoothdp.central.counting.queries): NoisyCount, NoisySum,
NoisyHistogram.

The exact privacy loss of f(x) + K (K integer noise, independent per cell) is computed from the laws'
definitions and from the query values f(x), f(x′) recomputed here from the documented definitions
(docs/theory/counting-queries.md), not by the code under test:

* the count: the number of records;
* the histogram: per record, its category (same kind and equal) or its bin (NaN → midpoint, clipped);
* the sum: each record's rint(x/r) in exact rationals, summed, then ⌊A/2^s + 1/2⌋.

Losses: pure guarantees, the sup over integer outputs of the log pmf ratio (coordinate by coordinate, they
add); zCDP, sup_α D_α/α with D_α from the Poisson-series form of the discrete Gaussian normalizer; (ε, δ),
the hockey-stick divergence summed over the integer outputs.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import logsumexp

Pair = tuple[Any, Any, float]


# -- the query values, from the definitions ----------------------------------------------------------------
def count_value(x: Any) -> np.ndarray:
    return np.array([len(x)])


def _same_kind_equal(v: Any, c: Any) -> bool:
    if isinstance(c, str):
        return isinstance(v, str) and v == c
    return (
        not isinstance(v, str) and v is not None and not (isinstance(v, float) and math.isnan(v)) and v == c
    )


def histogram_value(mech: Any, x: Any) -> np.ndarray:
    if mech.categories is not None:
        return np.array([sum(_same_kind_equal(v, c) for v in x) for c in mech.categories])
    edges = [float(e) for e in mech.edges]
    counts = [0] * (len(edges) - 1)
    for v in x:
        v = float(v)
        if math.isnan(v):
            v = 0.5 * edges[0] + 0.5 * edges[-1]
        v = min(max(v, edges[0]), edges[-1])
        j = max(k for k in range(len(edges) - 1) if edges[k] <= v)
        counts[j] += 1
    return np.array(counts)


def sum_value(mech: Any, x: Any) -> np.ndarray:
    """f = ⌊A/2^s + 1/2⌋, A = Σ rint(x_i/r), from the bounds and relation alone (exact rationals)."""
    lo, hi = mech.quantizer.lower, mech.quantizer.upper
    top = max(abs(lo), abs(hi))
    e_r = max(math.frexp(top)[1] - 53, -1074)
    r = Fraction(2) ** e_r
    real = top if mech.neighbours == "add_remove" else hi - lo
    e_q = max(math.frexp(real)[1] - 1 - 20, e_r)
    total = 0
    for v in x:
        v = float(v)
        if math.isnan(v):
            v = 0.5 * lo + 0.5 * hi
        v = min(max(v, lo), hi)
        total += round(Fraction(v) / r)  # Python rounds a Fraction half to even, as rint
    return np.array([math.floor(Fraction(total, 2 ** (e_q - e_r)) + Fraction(1, 2))])


# -- losses --------------------------------------------------------------------------------------------------
def _dlap_loss(rate: float, shift: int) -> float:
    """sup over integer y of ln P(K = y)/P(K = y − shift) for the discrete Laplace of ``rate``: the log
    ratio is piecewise linear in y with kinks at 0 and ``shift``, so windows around both hold its max."""
    ys = np.concatenate([np.arange(-40, 41), shift + np.arange(-40, 41)])
    log_mass = math.log(math.tanh(rate / 2))
    return float(np.max((log_mass - rate * np.abs(ys)) - (log_mass - rate * np.abs(ys - shift))))


def _theta_ratio_log(m: float, sigma2: float) -> float:
    """ln θ(m)/θ(0), θ(c) = Σ_y e^{−(y−c)²/(2σ²)}, by Poisson summation: Σ_k e^{−2π²σ²k²}cos(2πkm) / Σ_k …"""
    k = np.arange(1, 200)
    w = np.exp(-2 * math.pi**2 * sigma2 * k * k)
    return math.log((1 + 2 * np.sum(w * np.cos(2 * math.pi * k * m))) / (1 + 2 * np.sum(w)))


def _renyi(sigma2: float, shift: int, alpha: float) -> float:
    """D_α(N_ℤ(0, σ²) ‖ N_ℤ(shift, σ²)) = αd²/(2σ²) + ln(θ(m)/θ(0))/(α − 1), m = (1 − α)·shift."""
    return alpha * shift * shift / (2 * sigma2) + _theta_ratio_log((1 - alpha) * shift, sigma2) / (alpha - 1)


ALPHAS = (1.001, 1.01, 1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0)


def _zcdp_loss(sigma2: float, shifts: np.ndarray) -> float:
    return max(sum(_renyi(sigma2, int(d), a) for d in shifts if d) / a for a in ALPHAS)


def _hockey_stick(sigma2: float, shifts: np.ndarray, epsilon: float) -> float:
    """Σ_y max(0, P_0(y) − e^ε P_shift(y)) over ℤ^m for the product of discrete Gaussians (m ≤ 2 shifts)."""
    moved = [int(d) for d in shifts if d]
    if not moved:
        return 0.0
    span = int(40 * math.sqrt(sigma2)) + 40 + max(abs(d) for d in moved)
    ys = np.arange(-span, span + 1).astype(float)
    log_norm = float(logsumexp(-(ys**2) / (2 * sigma2)))
    grids = np.meshgrid(*([ys] * len(moved)), indexing="ij")
    lp = sum(-(g**2) / (2 * sigma2) - log_norm for g in grids)
    lq = sum(-((g - d) ** 2) / (2 * sigma2) - log_norm for g, d in zip(grids, moved, strict=True))
    return float(np.sum(np.maximum(0.0, np.exp(lp) - np.exp(epsilon + lq))))


def counting_loss(value: Any) -> Any:
    """privacy_loss(mech, x, x′, d) for a counting mechanism whose query is ``value(mech, x)``."""

    def loss(mech: Any, x: Any, x_prime: Any, d: float) -> float:
        shifts = np.asarray(value(mech, x_prime)) - np.asarray(value(mech, x))
        noise = mech.noise
        if noise.family == "discrete_laplace":
            return sum(_dlap_loss(float(noise.parameter), int(s)) for s in shifts if s)
        sigma2 = float(noise.parameter)
        guarantee = mech.guarantee
        if hasattr(guarantee, "rho"):
            return _zcdp_loss(sigma2, shifts)
        return max(
            _hockey_stick(sigma2, shifts, guarantee.epsilon * d),
            _hockey_stick(sigma2, -shifts, guarantee.epsilon * d),
        )

    return loss


# -- adversarial neighbours ----------------------------------------------------------------------------------
def add_remove_pairs(n: int, values: tuple[Any, ...]) -> list[Pair]:
    """Every multiset of n values and every one with one more record (both orders)."""
    pairs = []
    for row in itertools.combinations_with_replacement(range(len(values)), n):
        base = [values[i] for i in row]
        for v in values:
            pairs += [(base, [*base, v], 1.0), ([*base, v], base, 1.0)]
    return pairs


def substitution_pairs(n: int, values: tuple[Any, ...]) -> list[Pair]:
    pairs = []
    for row in itertools.combinations_with_replacement(range(len(values)), n):
        base = [values[i] for i in row]
        for pos, v in itertools.product(range(n), values):
            other = list(base)
            other[pos] = v
            pairs.append((base, other, 1.0))
    return pairs


# -- broken twins: noise narrower than the calibration ------------------------------------------------------
def narrower(factor: float) -> Any:
    """The same mechanism with its rate × factor (discrete Laplace) or σ² / factor (discrete Gaussian)."""

    def twin(mech: Any) -> Any:
        broken = copy.copy(mech)
        noise = mech.noise
        param = noise.parameter * Fraction(factor) if noise.family == "discrete_laplace" else noise.parameter
        if noise.family == "discrete_gaussian":
            param = noise.parameter / Fraction(factor)
        broken.noise = dataclasses.replace(noise, parameter=param)
        return broken

    return twin


def counting_cases() -> list[Any]:
    from mechanism_cases import Case

    from smoothdp.central import NoisyCount, NoisyHistogram, NoisySum

    nan, inf = float("nan"), float("inf")
    bad_eps = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"noise": "cauchy"}, ValueError, "noise"),
        ({"delta": 1e-6}, ValueError, "delta"),  # the discrete Laplace is pure
        ({"rho": 0.5}, TypeError, "rho"),
        ({"neighbours": "local"}, ValueError, "neighbours"),
        ({"clip": False}, TypeError, "clip"),  # an unknown keyword, named
    ]
    bad_rho = [
        ({"rho": 0.0}, ValueError, "rho"),
        ({"rho": 1e12}, ValueError, "rho"),  # σ² below 2^-30
        ({"noise": "laplace"}, TypeError, "rho"),  # ρ with the pure discrete Laplace
    ]
    bad_approx = [({"delta": 0.0}, TypeError, "delta"), ({"delta": 1.0}, ValueError, "delta")]
    count_values = (1.0, nan, -inf, "a")
    categories = ["a", "b", "c"]
    cat_values = ("a", "b", "zz", None, 2.5, nan)
    bin_values = (-5.0, 0.0, 0.5, 1.0, 2.0, nan, inf)
    sum_values = (-1.0, 0.3, 3.0, 7.0, nan, -inf)
    sub_values = (0.1, 1.0, 2.5, nan, inf)

    def count_loss_value(mech: Any, x: Any) -> np.ndarray:
        return count_value(x)

    return [
        Case(
            mechanism=NoisyCount,
            label="discrete Laplace",
            build=lambda epsilon, **kw: NoisyCount(epsilon=epsilon, **kw),
            data=np.array([1.0, nan, 3.0]),
            neighbours=lambda: add_remove_pairs(2, count_values) + add_remove_pairs(0, count_values),
            privacy_loss=counting_loss(count_loss_value),
            broken=narrower(1.5),
            bad_parameters=[*bad_eps, ({"neighbours": "substitution"}, ValueError, "neighbours")],
        ),
        Case(
            mechanism=NoisyCount,
            label="discrete Gaussian, zCDP",
            build=lambda epsilon, **kw: NoisyCount(**{"rho": epsilon, "noise": "gaussian", **kw}),
            data=[1.0, 2.0],
            neighbours=lambda: add_remove_pairs(1, count_values),
            privacy_loss=counting_loss(count_loss_value),
            broken=narrower(1.5),
            bad_parameters=bad_rho,
            epsilon=0.5,
        ),
        Case(
            mechanism=NoisyCount,
            label="discrete Gaussian, (ε, δ)",
            build=lambda epsilon, **kw: NoisyCount(
                **{"epsilon": epsilon, "delta": 1e-3, "noise": "gaussian", **kw}
            ),
            data=[1.0, 2.0],
            neighbours=lambda: add_remove_pairs(1, count_values),
            privacy_loss=counting_loss(count_loss_value),
            broken=narrower(40.0),
            bad_parameters=bad_approx,
        ),
        Case(
            mechanism=NoisySum,
            label="add/remove",
            build=lambda epsilon, **kw: NoisySum(**{"bounds": (-1.0, 3.0), "epsilon": epsilon, **kw}),
            data=np.array([0.5, nan, 2.0, 9.0]),
            neighbours=lambda: add_remove_pairs(2, sum_values) + add_remove_pairs(0, sum_values),
            privacy_loss=counting_loss(sum_value),
            broken=narrower(1.5),
            bad_parameters=[
                *bad_eps,
                ({"bounds": (3.0, -1.0)}, ValueError, "bounds"),
                ({"epsilon": 1e-10}, ValueError, "epsilon"),  # a lattice noise scale beyond 2^50
            ],
        ),
        Case(
            mechanism=NoisySum,
            label="substitution",
            build=lambda epsilon, **kw: NoisySum(
                **{"bounds": (0.1, 2.5), "epsilon": epsilon, "neighbours": "substitution", **kw}
            ),
            data=np.array([0.5, 2.0]),
            neighbours=lambda: substitution_pairs(2, sub_values),
            privacy_loss=counting_loss(sum_value),
            broken=narrower(1.5),
            bad_parameters=[({"bounds": (0.0, inf)}, ValueError, "bounds"), *bad_eps[:3]],
        ),
        Case(
            mechanism=NoisySum,
            label="discrete Gaussian, zCDP",
            build=lambda epsilon, **kw: NoisySum(
                **{"bounds": (-2.0, 1.0), "rho": epsilon, "noise": "gaussian", **kw}
            ),
            data=np.array([0.5, -2.0]),
            neighbours=lambda: add_remove_pairs(1, sum_values),
            privacy_loss=counting_loss(sum_value),
            broken=narrower(1.5),
            bad_parameters=bad_rho[:1],
            epsilon=0.5,
        ),
        Case(
            mechanism=NoisyHistogram,
            label="categories, add/remove",
            build=lambda epsilon, **kw: NoisyHistogram(
                **{"categories": categories, "epsilon": epsilon, **kw}
            ),
            data=["a", "b", None, 2.5, "c"],
            neighbours=lambda: add_remove_pairs(2, cat_values),
            privacy_loss=counting_loss(histogram_value),
            broken=narrower(1.5),
            bad_parameters=[
                *bad_eps,
                ({"categories": []}, ValueError, "categories"),
                ({"categories": ["a", "a"]}, ValueError, "categories"),
                ({"categories": [1.0, nan]}, ValueError, "categories"),
                ({"categories": "ab"}, TypeError, "categories"),
                ({"bins": [0.0, 1.0]}, TypeError, "categories"),  # both given
            ],
        ),
        Case(
            mechanism=NoisyHistogram,
            label="bins, substitution",
            build=lambda epsilon, **kw: NoisyHistogram(
                **{"bins": [0.0, 1.0, 2.0], "epsilon": epsilon, "neighbours": "substitution", **kw}
            ),
            data=np.array([0.5, 1.5, nan]),
            neighbours=lambda: substitution_pairs(2, bin_values),
            privacy_loss=counting_loss(histogram_value),
            broken=narrower(1.5),
            bad_parameters=[
                *bad_eps[:3],
                ({"bins": [1.0, 0.0]}, ValueError, "bins"),
                ({"bins": [1.0]}, ValueError, "bins"),
                ({"bins": 5}, ValueError, "bins"),
                ({"bins": [0.0, inf]}, ValueError, "bins"),
            ],
        ),
        Case(
            mechanism=NoisyHistogram,
            label="bins, discrete Gaussian (ε, δ), substitution",
            build=lambda epsilon, **kw: NoisyHistogram(
                **{
                    "bins": [0.0, 1.0, 2.0],
                    "epsilon": epsilon,
                    "delta": 1e-3,
                    "noise": "gaussian",
                    "neighbours": "substitution",
                    **kw,
                }
            ),
            data=np.array([0.5, 1.5]),
            neighbours=lambda: substitution_pairs(1, bin_values),
            privacy_loss=counting_loss(histogram_value),
            broken=narrower(40.0),
            bad_parameters=bad_approx,
        ),
    ]
