"""Entry points without bounds (``bounds=None``): one quantile, a private range, and any bounded method run
inside a private range.

* :func:`unbounded_quantile`: the q-quantile with no bounds at all, by the scale-free exponential mechanism
  (:class:`~smoothdp.central.unbounded.scale_free.ScaleFreeQuantile`) or AboveThreshold on a ladder
  (:class:`~smoothdp.central.unbounded.ladder.UnboundedQuantile`); ``method="auto"`` picks one from public
  parameters (:func:`~smoothdp.central.choose.choose_unbounded_method`).
* :func:`private_range`: bounds [ℓ, u] for the data from ε alone
  (:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`), e.g. the clipping range of a mean.
* :func:`release_in_private_range`: two stages under one ε (basic composition): a private range with
  ``range_share``·ε, then a bounded mechanism on it with the rest; the range is a private output, covered by
  the guarantee, and the second stage treats it as public (docs/theory/unbounded.md#a-private-range).
* :func:`moment_without_bounds`: ``mean``, ``var`` and ``std`` with ``bounds=None``, the bounded default on a
  mirrored private range aimed at the tails (docs/theory/moments.md#no-bounds; the section below).

The ε each stage spends is in the release's ``details`` (``epsilon_bounds``, ``epsilon_statistic``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from smoothdp.accounting import Accountant
from smoothdp.central.choose import choose_unbounded_method
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
from smoothdp.central.unbounded.ladder import (
    PROOF_RANGE,
    RANGE_RATIO,
    UnboundedQuantile,
    UnboundedRange,
    prepare_unbounded,
)
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile
from smoothdp.central.unbounded.two_stage import release_within_found_bounds
from smoothdp.composition import split_epsilon
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.validation import check_epsilon, check_in_range

__all__ = [
    "MOMENT_FINE_LADDERS",
    "MOMENT_RANGE_CAP",
    "RANGE_SHARE",
    "RANGE_SLACK",
    "capped_range",
    "far_end_slack",
    "moment_top_ratio",
    "moment_without_bounds",
    "private_range",
    "range_quantiles",
    "release_in_private_range",
    "split_epsilon",
    "tail_share",
    "unbounded_quantile",
]

#: The share of ε a bounded method run with ``bounds=None`` spends on the private range.
RANGE_SHARE = 0.25


def range_quantiles(qs: Any) -> tuple[float, float]:
    """The ranks a private range aims at for the quantiles ``qs``: (q_min/2, (1 + q_max)/2), halfway to the
    ends, so that the quantiles lie well inside it (a clip into the range keeps every rank), while the
    upper walk's target stays far enough from n that its threshold noise rarely carries it past the data."""
    arr = np.atleast_1d(np.asarray(qs, dtype=np.float64))
    return float(arr.min()) / 2.0, (1.0 + float(arr.max())) / 2.0


def unbounded_quantile(
    x: Any,
    q: float,
    *,
    epsilon: float,
    method: str = "auto",
    neighbours: str = "substitution",
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """The q-quantile with no bounds, pure ε-DP under ``neighbours``.

    ``method``: ``"auto"`` (:func:`~smoothdp.central.choose.choose_unbounded_method`: the scale-free
    exponential mechanism from ε·n ≥ 64 on under substitution, else AboveThreshold), ``"exponential"``
    (:class:`~smoothdp.central.unbounded.scale_free.ScaleFreeQuantile`,
    docs/theory/unbounded.md#the-exponential-mechanism-on-the-whole-line) or ``"unbounded"``
    (:class:`~smoothdp.central.unbounded.ladder.UnboundedQuantile`,
    docs/theory/unbounded.md#unbounded-quantile-estimation). Data policy: NaN → 0, records clipped into
    [−2^1021, 2^1021].
    """
    qq = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
    eps = check_epsilon(epsilon)
    relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
    if method not in ("auto", "exponential", "unbounded"):
        raise ValueError(
            f"method must be 'auto', 'exponential' or 'unbounded' without bounds; got {method!r}"
        )
    data = prepare_unbounded(x)
    chosen = method
    if method == "auto":  # n is public under substitution only
        n = int(data.size) if relation == "substitution" else None
        chosen = choose_unbounded_method(n=n, epsilon=eps)
    mech: Mechanism
    if chosen == "exponential":
        mech = ScaleFreeQuantile(qq, epsilon=eps, neighbours=relation, numerics=numerics)
    else:
        mech = UnboundedQuantile(qq, epsilon=eps, neighbours=relation, numerics=numerics)
    release = mech.release(data, accountant=accountant, rng=rng)
    return dataclasses.replace(release, details={**release.details, "method_requested": method})


def private_range(
    x: Any,
    *,
    epsilon: float,
    quantiles: tuple[float, float] = (0.25, 0.75),
    neighbours: str = "substitution",
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    mirror: bool = False,
) -> Release:
    """Private bounds ``(ℓ, u)`` (the release's value) with ℓ at or below the ``quantiles[0]``-quantile and u
    at or above the ``quantiles[1]``-quantile, up to the noise, ℓ < u: pure ε-DP under ``neighbours`` with no
    bound or scale known (:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`: two AboveThreshold walks
    on an octave ladder, ε/2 each, the lower one down from the upper end;
    docs/theory/unbounded.md#a-private-range). Quantiles close to 0 or 1 on few records make the walks
    overshoot (the noise must carry a count past n − q·n): keep q·n and (1 − q)·n above ~10/ε. ``mirror``:
    a column below 0 gets the mirror of its positive twin's range (for a q_hi near 1)."""
    mech = UnboundedRange(
        epsilon=epsilon, quantiles=quantiles, neighbours=neighbours, numerics=numerics, mirror=mirror
    )
    return mech.release(x, accountant=accountant, rng=rng)


def release_in_private_range(
    x: Any,
    build: Callable[[float, float, float], Mechanism],
    *,
    epsilon: float,
    qs: Any,
    method: str,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    neighbours: str = "substitution",
    range_share: float = RANGE_SHARE,
    quantiles: tuple[float, float] | None = None,
    statistic: str = "quantile",
    ratio: float = RANGE_RATIO,
    mirror: bool = False,
    top_ratio: float | None = None,
) -> Release:
    """``build(ε₂, ℓ, u)`` released on the data inside a private range (ℓ, u) found with ε₁ = range_share·ε
    (basic composition: ε₁ + ε₂ ≤ ε). The records are clipped into (ℓ, u) by the second stage (a clip
    keeps every rank). The range's walks step by ``ratio`` (default: octaves; the first one, from 0, by
    ``top_ratio`` when given) and aim at the ranks
    ``quantiles`` (default :func:`range_quantiles` of ``qs``), on −x mirrored back for a column below 0
    with ``mirror`` (:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`); ``statistic`` names the
    release in the accountant's ledger. ``details``: ``bounds`` (the range, a private output),
    ``epsilon_bounds``, ``epsilon_statistic`` and the range's parameters."""
    eps = check_epsilon(epsilon)
    eps_range, eps_main = split_epsilon(eps, range_share)
    aim = range_quantiles(qs) if quantiles is None else quantiles
    ranger = UnboundedRange(
        epsilon=eps_range,
        quantiles=aim,
        neighbours=neighbours,
        numerics=numerics,
        ratio=ratio,
        mirror=mirror,
        top_ratio=top_ratio,
    )

    def prepare(data: Any) -> tuple[Any, Any]:
        prepared = prepare_unbounded(data)
        return prepared, prepared  # both stages see the unbounded data policy

    return release_within_found_bounds(
        x,
        build,
        ranger,
        prepare=prepare,
        guarantee=PureDP(eps, neighbours=ranger.guarantee.neighbours),
        epsilon_bounds=eps_range,
        epsilon_statistic=eps_main,
        method=method,
        phrase="within a private range",
        source_label="range",
        statistic=statistic,
        details={"range": ranger.details(), "range_proof": PROOF_RANGE},
        rng=rng,
        accountant=accountant,
    )


# -- the mean, variance and standard deviation without bounds (moment_without_bounds) --------------
#: The ratio of the range walks' ladder.
MOMENT_LADDER_RATIO = 1.25
#: The found range is clipped into ±MOMENT_RANGE_CAP (post-processing): the widest second stage stays finite.
MOMENT_RANGE_CAP = 2.0**250
#: q·n ≥ TAIL_RANKS/ε under substitution; q within [TAIL_MIN, TAIL_MAX]; q under add/remove.
TAIL_RANKS, TAIL_MIN, TAIL_MAX, TAIL_ADD_REMOVE = 40.0, 1e-3, 0.25, 0.01
#: The first walk's ladder under substitution, by ε·n: (from ε·n, ratio), finest last; below the first
#: entry (and under add/remove, n private) the walks' MOMENT_LADDER_RATIO. A finer ladder resolves data far
#: from 0 relative to their spread (NYC longitudes near −74 ± 0.1: a range 18° wide on the 1.25 ladder), but
#: takes more steps across every empty stretch, each a chance to stop early; measured on
#: ``benchmarks/accuracy/moments_without_bounds.py`` (docs/theory/moments.md#no-bounds).
MOMENT_FINE_LADDERS: tuple[tuple[float, float], ...] = ((300.0, 1.05), (3000.0, 1.01))
#: The slack the far end gets: RANGE_SLACK − (ratio − 1) of the range's width (post-processing). The
#: 1.25 ladder overshot the far end by up to a quarter of its magnitude, which spared skewed tails the
#: clip; a finer ladder gets that slack back from the range's width, so that it follows the spread.
RANGE_SLACK = 0.25


def moment_top_ratio(*, n: int | None, epsilon: float) -> float:
    """The ladder ratio of the range's first walk (public: n and ε; ``n=None`` under add/remove):
    MOMENT_LADDER_RATIO below ε·n = 300, then 1.05, and 1.01 from ε·n = 3000
    (:data:`MOMENT_FINE_LADDERS`)."""
    ratio = MOMENT_LADDER_RATIO
    if n is None:
        return ratio
    for start, fine in MOMENT_FINE_LADDERS:
        if epsilon * n >= start:
            ratio = fine
    return ratio


def far_end_slack(lo: float, hi: float, ratio: float) -> tuple[float, float]:
    """[ℓ, u] with its end farther from 0 (the one the first walk found) moved out by
    max(0, RANGE_SLACK − (ratio − 1))·(u − ℓ): post-processing of the private range."""
    width = max(0.0, RANGE_SLACK - (ratio - 1.0)) * (hi - lo)
    return (lo, hi + width) if abs(hi) >= abs(lo) else (lo - width, hi)


def tail_share(*, n: int | None, epsilon: float) -> float:
    """q, the share of records each end of the range aims to leave outside (public): under substitution
    min(1/4, max(1/1000, 40/(ε·n))); ``n=None`` (add/remove: n private) 1/100."""
    if n is None:
        return TAIL_ADD_REMOVE
    return min(TAIL_MAX, max(TAIL_MIN, TAIL_RANKS / (epsilon * max(n, 1))))


def capped_range(lo: float, hi: float) -> tuple[float, float]:
    """[ℓ, u] (ℓ < u) clipped into [−2^250, 2^250] (post-processing); a range wholly beyond one end becomes
    that end's top octave, (2^249, 2^250) or (−2^250, −2^249), so that lower < upper always."""
    cap = MOMENT_RANGE_CAP
    a, b = min(max(lo, -cap), cap), min(max(hi, -cap), cap)
    if a < b:
        return a, b
    return (0.5 * cap, cap) if b > 0.0 else (-cap, -0.5 * cap)


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
    bounds; ``n``: the public number of records under substitution, ``None`` under add/remove (n private).
    ``details`` state the range found (``bounds``, a private output, and ``bounds_found`` before the cap),
    its tail share (``range_tail``) and the split ``epsilon_bounds`` + ``epsilon_statistic``.

    The bounded default on a private range found from ε alone (docs/theory/moments.md#no-bounds).

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

    The walks step by 1.25 (not octaves: data far from 0 relative to their spread, N(1000, 10), got a lower
    end at 0 and a range twice their magnitude); under substitution the first one, from 0, steps finer from
    ε·n = 300 on (:func:`moment_top_ratio`: its steps are relative to the data's magnitude, the second
    walk's to their spread), and the end farther from 0 gets back the coarse ladder's overshoot as a slack
    of the range's width (:func:`far_end_slack`, post-processing); ratios, slack, tail and share were
    chosen on ``benchmarks/accuracy/moments_without_bounds.py`` (docs/theory/moments.md#no-bounds).
    """
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
    top_ratio = moment_top_ratio(n=n, epsilon=eps)
    options: dict[str, Any] = {"noise": noise, "clamp": clamp, "numerics": numerics}

    def used_range(lo: float, hi: float) -> tuple[float, float]:
        return capped_range(*far_end_slack(lo, hi, top_ratio))

    def build(eps_main: float, lo: float, hi: float) -> Mechanism:
        bounds = used_range(lo, hi)
        sweep = n is not None and choose_moment_method(n=n, epsilon=eps_main) == "private_range"
        if statistic == "mean":
            from smoothdp.central.moments.ratio_mean import RatioMean  # it loads scipy

            cls = RatioMean if add_remove else (RangeMean if sweep else ClippedMean)
            return cls(epsilon=eps_main, bounds=bounds, **options)
        cls_var = NoisyMoments if add_remove else (RangeVariance if sweep else ClippedVariance)
        return cls_var(epsilon=eps_main, bounds=bounds, ddof=ddof, root=statistic == "std", **options)

    if n is not None:  # the widest second stage's noise, built before any data is read (public: ε, n, ddof)
        widest, eps_main = (-MOMENT_RANGE_CAP, MOMENT_RANGE_CAP), split_epsilon(eps, RANGE_SHARE)[1]
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
        ratio=MOMENT_LADDER_RATIO,
        mirror=True,
        top_ratio=top_ratio,
    )
    found = release.details["bounds"]
    details = {**release.details, "bounds": used_range(*found), "bounds_found": found, "range_tail": q}
    return dataclasses.replace(release, details=details)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
