"""The 8-bit sampling-average of the SGD experiment (seed 003, Fig. 2 right): data model and exact profile.

**Data model** (N_8bit, reconstructed from the authors' code, notes §5.2): draw X ∼ N(μ, σ²), keep it only
when X ∈ (−½, ½], and quantise q = ⌈256·X⌉ ∈ {−127, …, 128}:

    P(q) = [Φ((q/256 − μ)/σ) − Φ(((q−1)/256 − μ)/σ)] / [Φ((½ − μ)/σ) − Φ((−½ − μ)/σ)].

The Laplace variant uses the standard-deviation parametrisation b = σ/√2 (as the authors' code does).

**Exact profile** of :class:`~smoothdp.smoothed_dp.mechanisms.QuantizedSamplingAverage` (ours). Changing record i
(value a) into b changes the output only when i is sampled (probability η = T/n). Let Q and R be the laws of
the sum of a uniform T-subset and a uniform (T−1)-subset of the other n−1 records. Then

    P_x  = (1 − η)·Out(Q) + η·Out(R + a),    P_x' = (1 − η)·Out(Q) + η·Out(R + b),

with Out the rounding S ↦ round(S/T), and d(x, x') = Σ_o (P_x(o) − e^ε P_x'(o))_+ in both directions. Q and R
depend only on the value a removed, and come from one pass of the exact recursion over the records

    law_i[t] = ((i − t)/i)·law_{i−1}[t] + (t/i)·(law_{i−1}[t−1] shifted by v_i)

(law_i[t] = law of the sum of a uniform t-subset of the first i records). One pass per distinct value a; all
256 replacements b at once. Probabilities stay ≥ 1/C(n, T) (~1e-25 at the paper's sizes), so the linear domain
is exact enough: the absolute error of δ is ~1e-16.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from smoothdp.smoothed_dp.mechanisms import QuantizedSamplingAverage
from smoothdp.smoothed_dp.profile import ProfileValue, _make_value
from smoothdp.validation import check_epsilon, check_positive

__all__ = [
    "quantized_average_deltas",
    "quantized_average_profile",
    "quantized_laplace_pmf",
    "quantized_normal_pmf",
    "subset_sum_laws",
]


def _check_grid(mu: float, sigma: float, low: int, high: int, scale: int) -> NDArray[np.float64]:
    if not math.isfinite(float(mu)):
        raise ValueError(f"mu must be finite; got {mu!r}")
    check_positive("sigma", sigma)
    if not low < high:
        raise ValueError(f"low must be < high; got low={low}, high={high}")
    check_positive("scale", scale)
    return np.arange(low, high + 1, dtype=np.float64)


def quantized_normal_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """N_8bit(μ, σ²): pmf over the codes low..high of ⌈scale·X⌉, X ∼ N(μ, σ²) truncated to
    ((low−1)/scale, high/scale].

    Returns an array of length high − low + 1 summing to 1 (a row of Π for the histogram view).
    """
    q = _check_grid(mu, sigma, low, high, scale)
    upper = (q / scale - mu) / sigma
    lower = ((q - 1) / scale - mu) / sigma
    # Φ(b) − Φ(a) without cancellation in the upper tail: use Φ(−a) − Φ(−b) there
    mass = np.where(lower > 0, ndtr(-lower) - ndtr(-upper), ndtr(upper) - ndtr(lower))
    return mass / mass.sum()


def quantized_laplace_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """The Laplace analogue of :func:`quantized_normal_pmf`, with scale b = σ/√2 (standard deviation σ)."""
    q = _check_grid(mu, sigma, low, high, scale)
    b = sigma / math.sqrt(2.0)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        z = (x - mu) / b
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return cdf(2 * mu - x)

    upper, lower = q / scale, (q - 1) / scale
    mass = np.where(lower > mu, sf(lower) - sf(upper), cdf(upper) - cdf(lower))
    return mass / mass.sum()


def subset_sum_laws(values: ArrayLike, sizes: int) -> NDArray[np.float64]:
    """law[t, s] = P(sum of a uniform t-subset of ``values`` = s), t = 0..sizes (non-negative integer values).

    Exact recursion over the records (module docstring); cost O(len(values)·sizes·sizes·max(values)).
    """
    v = np.asarray(values, dtype=np.int64)
    if v.ndim != 1 or np.any(v < 0):
        raise ValueError("values must be a 1-D array of non-negative integers")
    t_max = int(sizes)
    if t_max > v.size:
        raise ValueError(f"sizes must be ≤ the number of values ({v.size}); got {t_max}")
    width = t_max * int(v.max(initial=0)) + 1
    law = np.zeros((t_max + 1, width))
    law[0, 0] = 1.0
    t = np.arange(t_max + 1, dtype=np.float64)
    for i, value in enumerate(v, start=1):
        keep = np.clip((i - t) / i, 0.0, 1.0)[:, None]
        take = (np.minimum(t, i) / i)[1:, None]
        new = law * keep
        if value == 0:
            new[1:] += take * law[:-1]
        else:
            new[1:, value:] += take * law[:-1, :-value]
        law = new
    return law


def _output_matrix(
    sum_law: NDArray[np.float64],
    shifts: NDArray[np.int64],
    t: int,
    base: int,
    mechanism: QuantizedSamplingAverage,
) -> NDArray[np.float64]:
    """Rows: the law of round((S + shift + base)/T) over the codes low..high, for each shift (S ∼ sum_law)."""
    s = np.arange(sum_law.size)
    outputs = mechanism.output_of_sum(s[None, :] + shifts[:, None] + base, t) - mechanism.low
    levels = mechanism.high - mechanism.low + 1
    weights = np.broadcast_to(sum_law, outputs.shape)
    # entries past the largest attainable sum carry zero weight and may round outside low..high: drop them
    used = weights > 0
    flat = (np.arange(shifts.size)[:, None] * levels + outputs)[used]
    weights = weights[used]
    return np.bincount(flat, weights=weights, minlength=shifts.size * levels).reshape(shifts.size, levels)


def quantized_average_deltas(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilons: ArrayLike, *, neighbours: str = "all"
) -> tuple[NDArray[np.float64], list[tuple[int, int, str]]]:
    """δ_{ε,M}(x) for several ε at once (one recursion per removed value serves every ε).

    Returns (δ per ε, worst neighbour (a, b, direction) per ε). See :func:`quantized_average_profile`.
    """
    if not isinstance(mechanism, QuantizedSamplingAverage):
        raise TypeError(f"mechanism must be a QuantizedSamplingAverage; got {type(mechanism).__name__}")
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=object))])
    if neighbours not in ("all", "heuristic"):
        raise ValueError(f"neighbours must be 'all' or 'heuristic'; got {neighbours!r}")
    x = mechanism.check_codes(codes)
    n = x.size
    if n < 2:
        raise ValueError(f"codes must hold at least 2 records; got {n}")
    t = mechanism.sample_size(n)
    eta = t / n
    c = np.exp(eps)[:, None]
    levels = mechanism.levels
    if neighbours == "all":
        plan = [(int(a), levels[levels != a]) for a in np.unique(x)]
    else:
        plan = [(int(x.min()), np.array([mechanism.high])), (int(x.max()), np.array([mechanism.low]))]
    best = np.full(eps.size, -1.0)
    where: list[tuple[int, int, str]] = [(-1, -1, "")] * eps.size
    for a, targets in plan:
        rest = np.delete(x, np.flatnonzero(x == a)[0]) - mechanism.low
        law = subset_sum_laws(rest, t)
        common = _output_matrix(law[t], np.array([0]), t, t * mechanism.low, mechanism)[0]
        # R + value: the changed record contributes (value − low) above the T·low baseline
        sampled = _output_matrix(
            law[t - 1], np.append(targets, a) - mechanism.low, t, t * mechanism.low, mechanism
        )
        p_x = (1.0 - eta) * common + eta * sampled[-1]
        p_nb = (1.0 - eta) * common[None, :] + eta * sampled[:-1]
        # shape (ε, neighbour): Σ_o (P − c·P')_+
        forward = np.maximum(p_x[None, None, :] - c[:, :, None] * p_nb[None, :, :], 0.0).sum(axis=-1)
        backward = np.maximum(p_nb[None, :, :] - c[:, :, None] * p_x[None, None, :], 0.0).sum(axis=-1)
        for values, direction in ((forward, "forward"), (backward, "backward")):
            i = np.argmax(values, axis=1)
            top = values[np.arange(eps.size), i]
            for e in np.flatnonzero(top > best):
                best[e] = top[e]
                where[e] = (a, int(targets[i[e]]), direction)
    return np.clip(best, 0.0, 1.0), where


def quantized_average_profile(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilon: float, *, neighbours: str = "all"
) -> ProfileValue:
    """δ_{ε,M}(x) of the 8-bit sampling-average on the database ``codes`` (exact; module docstring).

    Parameters
    ----------
    neighbours
        ``"all"``: every neighbour (each distinct value a present → each code b); the exact δ(x).
        ``"heuristic"``: the two neighbours of the authors' code (the minimum → ``high``, the maximum →
        ``low``); a lower bound on δ(x), what Fig. 2 right plots.
    """
    eps = check_epsilon(epsilon)
    deltas, where = quantized_average_deltas(mechanism, codes, [eps], neighbours=neighbours)
    x = mechanism.check_codes(codes)
    value = float(deltas[0])
    log_delta = math.log(value) if value > 0 else -np.inf
    return _make_value(
        log_delta,
        eps,
        np.bincount(x - mechanism.low, minlength=mechanism.levels.size),
        where[0],
        f"exact subset-sum recursion ({neighbours} neighbours)",
    )
