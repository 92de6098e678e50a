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

The ε each stage spends is in the release's ``details`` (``epsilon_bounds``, ``epsilon_statistic``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from smoothdp.accounting import Accountant
from smoothdp.central.choose import choose_unbounded_method
from smoothdp.central.unbounded.ladder import (
    PROOF_RANGE,
    RANGE_RATIO,
    UnboundedQuantile,
    UnboundedRange,
    prepare_unbounded,
)
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile
from smoothdp.central.unbounded.two_stage import release_within_found_bounds
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.validation import check_epsilon, check_in_range

__all__ = [
    "RANGE_SHARE",
    "private_range",
    "range_quantiles",
    "release_in_private_range",
    "split_epsilon",
    "unbounded_quantile",
]

#: The share of ε a bounded method run with ``bounds=None`` spends on the private range.
RANGE_SHARE = 0.25


def split_epsilon(epsilon: float, share: float) -> tuple[float, float]:
    """(ε₁, ε₂) with ε₁ = share·ε and ε₁ + ε₂ ≤ ε exactly (ε₂ stepped down if rounding overshoots)."""
    eps1 = share * epsilon
    eps2 = epsilon - eps1
    while Fraction(eps1) + Fraction(eps2) > Fraction(epsilon):
        eps2 = math.nextafter(eps2, 0.0)
    return eps1, eps2


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
) -> Release:
    """``build(ε₂, ℓ, u)`` released on the data inside a private range (ℓ, u) found with ε₁ = range_share·ε
    (basic composition: ε₁ + ε₂ ≤ ε). The records are clipped into (ℓ, u) by the second stage (a clip
    keeps every rank). The range's walks step by ``ratio`` (default: octaves) and aim at the ranks
    ``quantiles`` (default :func:`range_quantiles` of ``qs``), on −x mirrored back for a column below 0
    with ``mirror`` (:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`); ``statistic`` names the
    release in the accountant's ledger. ``details``: ``bounds`` (the range, a private output),
    ``epsilon_bounds``, ``epsilon_statistic`` and the range's parameters."""
    eps = check_epsilon(epsilon)
    eps_range, eps_main = split_epsilon(eps, range_share)
    aim = range_quantiles(qs) if quantiles is None else quantiles
    ranger = UnboundedRange(
        epsilon=eps_range, quantiles=aim, neighbours=neighbours, numerics=numerics, ratio=ratio, mirror=mirror
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


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
