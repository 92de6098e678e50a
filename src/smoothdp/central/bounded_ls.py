"""Privately bounded local sensitivity (seed 002, Theorem 1, with its inequality the right way round).

**Theorem** (seed 002, Thm 1, corrected). Let g be an ε₁-DP randomized function of the data such that, for
*every* data set x, Pr[g(x) ≥ LS_f(x)] ≥ 1 − δ. Then releasing (g(x), f(x) + Lap(g(x)/ε₂)) is
(ε₁ + ε₂, δ)-DP.

Proof sketch. Fix neighbours x, x' and an output set S. Let E = {g(x) ≥ LS_f(x)}; Pr[¬E] ≤ δ. On E,
|f(x) − f(x')| ≤ LS_f(x) ≤ g, so for each value of g the Laplace density ratio is at most e^{ε₂}; the law of g
changes by at most e^{ε₁}. Hence Pr[M(x) ∈ S] ≤ δ + e^{ε₁+ε₂} Pr[M(x') ∈ S]. (The seed states
Pr[g ≤ LS] ≥ 1 − δ, the reverse, and its proof of Thm 2 joins the two tail events with ∧ where a union bound
is needed; notes/smoothed_dp.md, "Private ratios".)

The bound g is usually built from noisy counts; :func:`private_count_interval` gives the interval
[ĉ − T, ĉ + T] that holds the true count with probability ≥ 1 − failure, from discrete-Laplace noise, with the
exact two-sided tail Pr[|K| ≥ t] = 2e^{−αt}/(1 + e^{−α}) (not the seed's e^{−αt}).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from smoothdp.noise import DiscreteLaplace, Laplace
from smoothdp.privacy import ApproxDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_delta, check_epsilon, check_probability

__all__ = ["SOURCE", "bounded_local_sensitivity", "count_interval_halfwidth", "private_count_interval"]

SOURCE = "Privately bounded local sensitivity: seed 002 (Harrison 2024) Theorem 1, corrected (bounded_ls.py)"


def count_interval_halfwidth(epsilon: float, failure_probability: float) -> int:
    """The smallest integer T with Pr[|K| > T] ≤ failure for K ~ discrete Laplace, pmf ∝ e^{−ε|k|}.

    Pr[|K| > T] = Pr[|K| ≥ T+1] = 2e^{−ε(T+1)}/(1 + e^{−ε}).
    """
    eps = check_epsilon(epsilon)
    p = check_probability("failure_probability", failure_probability)
    log_tail = lambda t: math.log(2.0) - eps * (t + 1) - math.log1p(math.exp(-eps))  # noqa: E731
    t = max(0, math.ceil((math.log(2.0 / p) - math.log1p(math.exp(-eps))) / eps - 1.0))
    while t > 0 and log_tail(t - 1) <= math.log(p):  # never larger than needed
        t -= 1
    while log_tail(t) > math.log(p):  # never smaller (guards the float rounding above)
        t += 1
    return t


def private_count_interval(
    count: int | NDArray[np.int64],
    epsilon: float,
    failure_probability: float,
    rng: SeedLike = None,
    size: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """An ε-DP interval for a count of sensitivity 1: (noisy, noisy − T, noisy + T).

    The noisy count is count + K with K discrete Laplace (pmf ∝ e^{−ε|k|}, ε-DP for sensitivity 1), and
    T = :func:`count_interval_halfwidth` (ε, failure), so the true count lies in [noisy − T, noisy + T] with
    probability ≥ 1 − failure for every count.
    """
    eps = check_epsilon(epsilon)
    t = count_interval_halfwidth(eps, failure_probability)
    noisy = np.asarray(count, dtype=np.int64) + DiscreteLaplace(1.0 / eps).sample(size, resolve_rng(rng))
    return noisy, noisy - t, noisy + t


def bounded_local_sensitivity(
    value: float,
    sensitivity_bound: Callable[[np.random.Generator], float],
    epsilon_1: float,
    epsilon_2: float,
    delta: float,
    rng: SeedLike = None,
    *,
    statistic: str = "statistic",
    bound_source: str = "",
) -> Release:
    """Release ``value`` + Lap(g/ε₂) with g = ``sensitivity_bound(rng)``: (ε₁ + ε₂, δ)-DP (see module).

    Parameters
    ----------
    value
        f(x), the exact statistic.
    sensitivity_bound
        Draws g ≥ 0 from a randomized function of the data that **must** be ε₁-DP and satisfy
        Pr[g ≥ LS_f(x)] ≥ 1 − δ for every data set x (build it from :func:`private_count_interval`).
    epsilon_1, epsilon_2, delta
        The budget of the bound, of the release, and the bound's failure probability.
    statistic, bound_source
        Labels for the :class:`~smoothdp.release.Release`.

    Returns
    -------
    Release
        ``noise_scale`` g/ε₂ is ε₁-DP and may be published with the value (the theorem covers the pair).
    """
    e1, e2 = check_epsilon(epsilon_1, "epsilon_1"), check_epsilon(epsilon_2, "epsilon_2")
    d = check_delta(delta)
    gen = resolve_rng(rng)
    g = float(sensitivity_bound(gen))
    if not (math.isfinite(g) and g >= 0):
        raise ValueError(f"sensitivity_bound must return a finite bound ≥ 0; got {g!r}")
    scale = float(round_up(g / e2))
    noise = 0.0 if scale == 0 else float(Laplace(scale).sample(None, gen))
    return Release(
        value=float(value) + noise,
        guarantee=ApproxDP(e1 + e2, d),
        statistic=statistic,
        mechanism="privately bounded local sensitivity + Laplace",
        source=SOURCE + (f"; bound: {bound_source}" if bound_source else ""),
        noise_scale=scale,
        noise_std=math.sqrt(2.0) * scale,
        sampler=Laplace.sampler,
        details={"sensitivity_bound": g, "epsilon_1": e1, "epsilon_2": e2},
    )
