"""The mean, variance and standard deviation with no bounds at all (``bounds=None``): the bounded default's
clipped mechanism on a private range found from ε alone (docs/theory/moments.md#no-bounds).

Stage one spends ε₁ = f·ε (f = 1/4) on a range [ℓ, u] by two AboveThreshold walks on a ladder
(:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`; Durfee, NeurIPS 2023), aimed at the ranks
(q, 1 − q) of the tails; the walks need no bound and no scale, and a column below 0 is walked on −x and
mirrored back (``mirror=True``: its end near 0 would otherwise be sought with the small target count q·n).
Stage two releases, with ε₂ = ε − ε₁, the bounded default on [ℓ, u] as if they were declared bounds: under
substitution the clipped mean or variance (:class:`~smoothdp.central.moments.clipped.ClippedMean`,
:class:`~smoothdp.central.moments.clipped.ClippedVariance`), or from ε₂·n ≥ 2000 the same on a range swept
inside [ℓ, u] (:class:`~smoothdp.central.moments.on_private_range.RangeMean`,
:class:`~smoothdp.central.moments.on_private_range.RangeVariance`), which narrows an octave to the data's
spread; under add/remove the noisy count and sums
(:class:`~smoothdp.central.moments.ratio_mean.RatioMean`,
:class:`~smoothdp.central.moments.noisy_sums.NoisyMoments`). This is the instance-optimal mean's recipe
(Huang, Liang & Yi, NeurIPS 2021: clip at a private range around the bulk of the data, then add the noise
of that range) with an unbounded range finder.

The tail share q is public: under substitution q = min(1/4, max(1/1000, 40/(ε·n))), so that q·n stays
above the ~10/ε₁ records the walks need not to overshoot past the data (docs/theory/unbounded.md); under
add/remove (n private) q = 1/100. The range is clipped into ±2^250 (post-processing), so that the second
stage's noise is finite for every range the walks can return: that widest noise is built before any data
is read, and an ε too small for it is refused then, never after.

Data policy: NaN → 0, ±inf → ±2^1021 (as every ``bounds=None`` release), then clipped into [ℓ, u].

Guarantee: pure ε-DP under ``neighbours``, by adaptive basic composition of the range (ε₁) and the bounded
statistic on the range it returned (ε₂), ε₁ + ε₂ ≤ ε in exact arithmetic (Lemma 7,
docs/theory/moments.md#no-bounds).

The walks step by 1.25 (not octaves: data far from 0 relative to their spread, N(1000, 10), got a lower end
at 0 and a range twice their magnitude); ratio, tail and share were chosen on
``benchmarks/accuracy/moments_without_bounds.py`` (docs/theory/moments.md#no-bounds).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from smoothdp.accounting import Accountant
from smoothdp.central.moments.clipped import (
    ClippedMean,
    ClippedVariance,
    check_ddof,
    check_variance_size,
    mean_noise,
    variance_noise,
)
from smoothdp.central.moments.noisy_sums import NoisyMoments
from smoothdp.central.moments.on_private_range import RangeMean, RangeVariance, choose_moment_method
from smoothdp.central.moments.ratio_mean import RatioMean
from smoothdp.central.no_bounds import release_in_private_range
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.validation import check_epsilon

__all__ = [
    "RANGE_CAP",
    "RANGE_SHARE",
    "capped_range",
    "moment_without_bounds",
    "tail_share",
]

#: f: the share of ε spent on the range.
RANGE_SHARE = 0.25
#: The ratio of the range walks' ladder.
LADDER_RATIO = 1.25
#: The found range is clipped into ±RANGE_CAP (post-processing): the widest second stage stays finite.
RANGE_CAP = 2.0**250
#: q·n ≥ TAIL_RANKS/ε under substitution; q within [TAIL_MIN, TAIL_MAX]; q under add/remove.
TAIL_RANKS, TAIL_MIN, TAIL_MAX, TAIL_ADD_REMOVE = 40.0, 1e-3, 0.25, 0.01


def tail_share(*, n: int | None, epsilon: float) -> float:
    """q, the share of records each end of the range aims to leave outside (public): under substitution
    min(1/4, max(1/1000, 40/(ε·n))); ``n=None`` (add/remove: n private) 1/100."""
    if n is None:
        return TAIL_ADD_REMOVE
    return min(TAIL_MAX, max(TAIL_MIN, TAIL_RANKS / (epsilon * max(n, 1))))


def capped_range(lo: float, hi: float) -> tuple[float, float]:
    """[ℓ, u] (ℓ < u) clipped into [−2^250, 2^250] (post-processing); a range wholly beyond one end becomes
    that end's top octave, (2^249, 2^250) or (−2^250, −2^249), so that lower < upper always."""
    a, b = min(max(lo, -RANGE_CAP), RANGE_CAP), min(max(hi, -RANGE_CAP), RANGE_CAP)
    if a < b:
        return a, b
    return (0.5 * RANGE_CAP, RANGE_CAP) if b > 0.0 else (-RANGE_CAP, -0.5 * RANGE_CAP)


def moment_without_bounds(
    x: Any,
    *,
    statistic: str,
    epsilon: float,
    neighbours: str,
    n: int | None,
    ddof: int = 1,
    noise: str = "staircase",
    clamp: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """The mean (``statistic="mean"``), variance (``"var"``) or standard deviation (``"std"``) of x with no
    bounds (module docstring); ``n``: the public number of records under substitution, ``None`` under
    add/remove (n private). ``details`` state the range found (``bounds``, a private output), its tail
    share (``range_tail``) and the split ``epsilon_bounds`` + ``epsilon_statistic``."""
    eps = check_epsilon(epsilon)
    add_remove = neighbours == "add_remove"
    if add_remove != (n is None):
        raise ValueError("n must be given under substitution and None under add/remove (n private)")
    if statistic != "mean":
        check_ddof(ddof)
        if n is not None:
            check_variance_size(n, ddof)
    elif n == 0:  # public under substitution: refused before any budget is charged
        raise ValueError("x must hold at least 1 value(s) (n is public under substitution); got 0")
    q = tail_share(n=n, epsilon=eps)
    options: dict[str, Any] = {"noise": noise, "clamp": clamp, "numerics": numerics}

    def build(eps_main: float, lo: float, hi: float) -> Mechanism:
        bounds = capped_range(lo, hi)
        sweep = n is not None and choose_moment_method(n=n, epsilon=eps_main) == "private_range"
        if statistic == "mean":
            cls = RatioMean if add_remove else (RangeMean if sweep else ClippedMean)
            return cls(epsilon=eps_main, bounds=bounds, **options)
        cls_var = NoisyMoments if add_remove else (RangeVariance if sweep else ClippedVariance)
        return cls_var(epsilon=eps_main, bounds=bounds, ddof=ddof, root=statistic == "std", **options)

    if n is not None:  # the widest second stage, built before any data is read (public: ε, n, ddof)
        widest, eps_main = (-RANGE_CAP, RANGE_CAP), eps * (1.0 - RANGE_SHARE)
        if statistic == "mean":
            mean_noise(noise, widest, max(n, 1), eps_main)
        elif n > 1:
            variance_noise(noise, widest, n, ddof, eps_main)
    release = release_in_private_range(
        x,
        build,
        epsilon=eps,
        qs=None,
        quantiles=(q, 1.0 - q),
        method="auto",
        numerics=numerics,
        rng=rng,
        accountant=accountant,
        neighbours=neighbours,
        range_share=RANGE_SHARE,
        statistic=statistic,
        ratio=LADDER_RATIO,
        mirror=True,
    )
    found = release.details["bounds"]
    details = {**release.details, "bounds": capped_range(*found), "bounds_found": found, "range_tail": q}
    return dataclasses.replace(release, details=details)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
