"""Monte Carlo estimates for mechanisms without a closed form (LWX Fig. 2 right).

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#monte-carlo-estimator``.

**δ of one pair of databases** (:func:`monte_carlo_delta`). From N draws of M(x) and N of M(x') (discrete
outputs) the plug-in estimate is d̂ = Σ_o (P̂(o) − e^ε Q̂(o))_+, both directions, the larger kept.

* It is **biased upward**: (·)_+ is convex, so E[d̂] ≥ d (Jensen), and the set S = {P̂ > e^ε Q̂} is chosen on
  the same draws. The bias is about Σ_o √(P(o)/N) over outputs where P ≈ e^ε Q; values below ~1/N are noise.
* ``interval``: estimate ± z·se with se² = P̂(S)(1−P̂(S))/N + e^{2ε} Q̂(S)(1−Q̂(S))/N (normal
  approximation for the chosen S; it ignores the selection of S, i.e. the bias above).
* ``held_out``: S chosen on the first half of the draws, P̂(S) − e^ε Q̂(S) measured on the second half: an
  unbiased estimate of d_S ≤ d, so a *lower* estimate of d. The two bracket the truth in practice.

**δ_SDP by sampled databases** (:func:`sampled_smoothed_delta`, the paper's protocol for Fig. 2 right): for
each mixture ratio r, draw databases with round(r·n) records from the first distribution and the rest from the
second, compute δ(x) for each (exactly, or by Monte Carlo), and average; the confidence interval is the
t-interval over databases. δ_SDP is estimated by the largest mean over ratios. Only the given ratios are
searched (the paper uses {0, .25, .5, .75, 1}), so this estimates a lower bound on the maximum over all
mixtures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.smoothed_dp.base import sample_subsets
from smoothdp.smoothed_dp.hull import check_distributions
from smoothdp.smoothed_dp.quantized import QuantizedSamplingAverage, quantized_average_deltas
from smoothdp.validation import check_epsilon, check_int, check_probability

__all__ = [
    "MonteCarloDelta",
    "SampledSmoothedDelta",
    "monte_carlo_delta",
    "quantized_average_delta_mc",
    "sampled_smoothed_delta",
]


@dataclass(frozen=True)
class MonteCarloDelta:
    """A Monte Carlo estimate of δ for one pair of databases (see the module docstring for the bias)."""

    estimate: float
    interval: tuple[float, float]
    held_out: float
    direction: str
    n_draws: int
    confidence: float
    note: str = "plug-in estimate, biased upward (Jensen); values below ~1/n_draws are noise"


def _plug_in(x_codes: NDArray, y_codes: NDArray, c: float, levels: int) -> tuple[float, NDArray[np.bool_]]:
    p = np.bincount(x_codes, minlength=levels) / x_codes.size
    q = np.bincount(y_codes, minlength=levels) / y_codes.size
    chosen = p > c * q
    return float(np.sum((p - c * q)[chosen])), chosen


def _delta_from_draws(
    out_x: ArrayLike, out_y: ArrayLike, epsilon: float, confidence: float
) -> MonteCarloDelta:
    x, y = np.asarray(out_x), np.asarray(out_y)
    if x.ndim > 1:  # vector outputs: label each distinct row
        _, codes = np.unique(np.concatenate([x, y]), axis=0, return_inverse=True)
    else:
        _, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    codes = codes.ravel()
    levels = int(codes.max()) + 1
    cx, cy = codes[: x.shape[0]], codes[x.shape[0] :]
    c = math.exp(epsilon)
    candidates = []
    for first, second, direction in ((cx, cy, "forward"), (cy, cx, "backward")):
        value, chosen = _plug_in(first, second, c, levels)
        candidates.append((value, chosen, first, second, direction))
    # the larger of the two directions (ties: forward, the first)
    value, chosen, first, second, direction = max(candidates, key=lambda cand: cand[0])
    n = first.size
    p_s = float(np.isin(first, np.flatnonzero(chosen)).mean())
    q_s = float(np.isin(second, np.flatnonzero(chosen)).mean())
    se = math.sqrt(p_s * (1 - p_s) / n + c * c * q_s * (1 - q_s) / second.size)
    from scipy import stats  # imported on first use: scipy.stats is slow to import

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    half_a, half_b = first[: n // 2], second[: second.size // 2]
    _, s_half = _plug_in(half_a, half_b, c, levels)
    rest_a, rest_b = first[n // 2 :], second[second.size // 2 :]
    held = float(
        np.isin(rest_a, np.flatnonzero(s_half)).mean() - c * np.isin(rest_b, np.flatnonzero(s_half)).mean()
    )
    return MonteCarloDelta(
        estimate=value,
        interval=(max(0.0, value - z * se), min(1.0, value + z * se)),
        held_out=held,
        direction=direction,
        n_draws=n,
        confidence=confidence,
    )


def monte_carlo_delta(
    sample_x: Callable[[int, np.random.Generator], ArrayLike],
    sample_x_prime: Callable[[int, np.random.Generator], ArrayLike],
    epsilon: float,
    n_draws: int = 1_000_000,
    *,
    rng: SeedLike = None,
    confidence: float = 0.99,
) -> MonteCarloDelta:
    """Estimate max(d(x, x'), d(x', x)) from draws of a mechanism with discrete outputs.

    ``sample_x(k, rng)`` returns k i.i.d. outputs of M(x) (1-D, or one row per output). Bias and interval:
    module docstring.
    """
    eps = check_epsilon(epsilon)
    n_draws = check_int("n_draws", n_draws, minimum=2)
    confidence = check_probability("confidence", confidence)
    gen = resolve_rng(rng)
    return _delta_from_draws(sample_x(n_draws, gen), sample_x_prime(n_draws, gen), eps, confidence)


def quantized_average_delta_mc(
    mechanism: QuantizedSamplingAverage,
    codes: ArrayLike,
    epsilon: float,
    n_draws: int = 1_000_000,
    *,
    rng: SeedLike = None,
    confidence: float = 0.99,
) -> MonteCarloDelta:
    """The authors' Monte Carlo δ(x) for the 8-bit sampling-average, with their heuristic neighbours (the
    minimum → ``high``, the maximum → ``low``); the larger of the two estimates is returned.

    Unlike the authors' code, which reuses one set of subset draws for all three databases, the draws for x
    and for each neighbour are independent, as the interval of :class:`MonteCarloDelta` assumes. The exact
    value: :func:`~smoothdp.smoothed_dp.quantized.quantized_average_profile`.
    """
    eps = check_epsilon(epsilon)
    n_draws = check_int("n_draws", n_draws, minimum=2)
    confidence = check_probability("confidence", confidence)
    x = mechanism.check_codes(codes)
    t = mechanism.sample_size(x.size)
    gen = resolve_rng(rng)
    out_x = mechanism.output_of_sum(x[sample_subsets(x.size, t, n_draws, gen)].sum(axis=1), t)
    results = []
    for index, new in ((int(np.argmin(x)), mechanism.high), (int(np.argmax(x)), mechanism.low)):
        draws_y = sample_subsets(x.size, t, n_draws, gen)
        sums_y = x[draws_y].sum(axis=1) + (new - x[index]) * np.any(draws_y == index, axis=1)
        results.append(_delta_from_draws(out_x, mechanism.output_of_sum(sums_y, t), eps, confidence))
    return max(results, key=lambda result: result.estimate)  # ties: the first neighbour


@dataclass(frozen=True)
class SampledSmoothedDelta:
    """δ_SDP estimated over sampled databases, per mixture ratio (module docstring)."""

    estimate: float
    upper: float
    ratio: float
    ratios: tuple[float, ...]
    means: tuple[float, ...]
    intervals: tuple[tuple[float, float], ...]
    n_databases: int
    epsilon: float
    n: int
    dp_delta: float
    method: str
    per_database: dict[float, NDArray[np.float64]] = field(repr=False, default_factory=dict)


def sampled_smoothed_delta(
    mechanism: QuantizedSamplingAverage,
    epsilon: float | Sequence[float],
    n: int,
    distributions: ArrayLike,
    *,
    ratios: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    n_databases: int = 200,
    method: str = "exact",
    neighbours: str = "heuristic",
    n_draws: int = 1_000_000,
    confidence: float = 0.99,
    rng: SeedLike = None,
) -> SampledSmoothedDelta | tuple[SampledSmoothedDelta, ...]:
    """Estimate δ_SDP of the 8-bit sampling-average for Π = two distributions over its codes (Fig. 2 right).

    Parameters
    ----------
    epsilon
        ε > 0, or a sequence of them: then one result per ε, all on the same sampled databases (the exact
        δ(x) of every ε comes from one recursion per database).
    distributions
        Shape (2, high − low + 1): e.g. ``[quantized_normal_pmf(0, .12), quantized_normal_pmf(.2, .12)]``.
        ratios Mixture ratios r: round(r·n) records from the first distribution, the rest from the second.
        method ``"exact"``: δ(x) by :func:`~smoothdp.smoothed_dp.quantized.quantized_average_profile` (fast);
        ``"monte_carlo"``: by :func:`quantized_average_delta_mc` with ``n_draws`` (the paper's method; biased
        up).
    neighbours
        For ``"exact"``: ``"heuristic"`` (the paper's two neighbours) or ``"all"`` (the exact δ(x), slower).
    """
    many = not isinstance(epsilon, int | float | np.integer | np.floating)
    eps_list = [check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilon, dtype=object))]
    n = check_int("n", n, minimum=2)
    n_databases = check_int("n_databases", n_databases, minimum=2)
    confidence = check_probability("confidence", confidence)
    if method not in ("exact", "monte_carlo"):
        raise ValueError(f"method must be 'exact' or 'monte_carlo'; got {method!r}")
    pi = check_distributions(distributions)
    levels = mechanism.levels
    if pi.shape != (2, levels.size):
        raise ValueError(f"distributions must have shape (2, {levels.size}); got {pi.shape}")
    ratio_list = tuple(check_probability("ratios", r, open_low=False, open_high=False) for r in ratios)
    gen = resolve_rng(rng)
    from scipy import stats

    z = float(stats.t.ppf(0.5 + confidence / 2, n_databases - 1))
    values = {r: np.empty((len(eps_list), n_databases)) for r in ratio_list}
    for r in ratio_list:
        n1 = round(r * n)
        for d in range(n_databases):
            codes = np.concatenate(
                [gen.choice(levels, size=n1, p=pi[0]), gen.choice(levels, size=n - n1, p=pi[1])]
            )
            if method == "exact":
                values[r][:, d] = quantized_average_deltas(mechanism, codes, eps_list, neighbours=neighbours)[
                    0
                ]
            else:
                values[r][:, d] = [
                    quantized_average_delta_mc(mechanism, codes, e, n_draws, rng=gen).estimate
                    for e in eps_list
                ]
    label = (
        f"{method} ({neighbours} neighbours)" if method == "exact" else "monte_carlo (heuristic neighbours)"
    )
    results = []
    for e_index, eps in enumerate(eps_list):
        means, intervals = [], []
        for r in ratio_list:
            row = values[r][e_index]
            mean = float(row.mean())
            half = z * float(row.std(ddof=1)) / math.sqrt(n_databases)
            means.append(mean)
            intervals.append((max(0.0, mean - half), min(1.0, mean + half)))
        best = int(np.argmax(means))
        results.append(
            SampledSmoothedDelta(
                estimate=means[best],
                upper=max(high for _, high in intervals),
                ratio=ratio_list[best],
                ratios=ratio_list,
                means=tuple(means),
                intervals=tuple(intervals),
                n_databases=n_databases,
                epsilon=eps,
                n=n,
                dp_delta=mechanism.dp_delta(n),
                method=label,
                per_database={r: values[r][e_index] for r in ratio_list},
            )
        )
    return tuple(results) if many else results[0]
