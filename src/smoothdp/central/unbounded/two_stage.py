"""A bounded mechanism released inside privately found bounds: two stages under one ε (basic composition).

Stage one finds bounds (ℓ, u) with ε₁ (:class:`~smoothdp.central.unbounded.private_bounds.PrivateRange`,
symmetric bounds on a log grid around a public scale, for ``bounds="private"``; or
:class:`~smoothdp.central.unbounded.ladder.UnboundedRange`, two AboveThreshold walks, for ``bounds=None``).
Stage two builds the bounded mechanism on (ℓ, u) with ε₂ and releases on the same data; ε₁ + ε₂ ≤ ε, so
the pair is ε-DP. The bounds are a private output covered by the guarantee; the second stage treats them as
public, and a clip into them keeps every rank (docs/theory/unbounded.md#a-private-range,
docs/theory/quantiles.md#private-bounds). Every parameter is validated (the mechanism built once on
placeholder bounds) before the accountant is charged, and the accountant is charged before any noise is
drawn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from smoothdp.accounting import Accountant, charge
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike, is_secure, resolve_rng

__all__ = ["BoundsFinder", "release_within_found_bounds"]


class BoundsFinder(Protocol):
    """A private bounds finder: ``sample(prepared, rng) -> (ℓ, u)``, ε₁-DP on the data it prepared."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...

    def sample(self, prepared: Any, rng: np.random.Generator) -> tuple[float, float]: ...


def release_within_found_bounds(
    x: Any,
    build: Callable[[float, float, float], Mechanism],
    finder: BoundsFinder,
    *,
    prepare: Callable[[Any], tuple[Any, Any]],
    guarantee: PureDP,
    epsilon_bounds: float,
    epsilon_statistic: float,
    method: str,
    phrase: str,
    source_label: str,
    details: Mapping[str, Any],
    rng: SeedLike,
    accountant: Accountant | None,
    statistic: str = "quantile",
) -> Release:
    """``build(ε₂, ℓ, u)`` released on ``x`` inside the bounds (ℓ, u) that ``finder`` draws (module
    docstring).

    Parameters
    ----------
    x
        The data.
    build
        ``build(epsilon, lower, upper)``: the bounded mechanism (called once on (−1, 1) to validate its
        parameters, then on the bounds found).
    finder
        The first stage, built with ``epsilon_bounds``.
    prepare
        ``prepare(x) -> (data for the finder, data for the bounded mechanism's ``_prepare``)``: the data
        policy, applied after the parameters are validated.
    guarantee
        The pair's guarantee (ε ≥ ``epsilon_bounds`` + ``epsilon_statistic``), charged to ``accountant``.
    epsilon_bounds
        ε₁, the finder's budget (reported in ``details``).
    epsilon_statistic
        ε₂, the bounded mechanism's budget (reported in ``details``).
    method
        The method of the second stage, named in the accountant's label.
    phrase
        How the mechanism's name joins the bounds (``"with private bounds"``, ``"within a private range"``).
    source_label
        The label of the finder's source (``"bounds"``, ``"range"``).
    details
        Extra public details of the first stage, after ``bounds``, ``bounds_private``, ``epsilon_bounds`` and
        ``epsilon_statistic``.
    rng
        ``None``: the library's secure generator; a seed or a generator: a reproducible simulation. The one
        generator draws both stages.
    accountant
        Charged ``guarantee`` after the parameters are validated and before any noise is drawn; ``None``: no
        charge.
    statistic
        What is released, for the accountant's label (``"quantile"``, ``"mean"``, …).

    Returns
    -------
    Release
        The second stage's release with the pair's guarantee; ``details["bounds"]`` is the (private) range.
    """
    build(epsilon_statistic, -1.0, 1.0)  # every parameter validated before any budget is charged
    finder_data, data = prepare(x)
    gen = resolve_rng(rng)
    charge(accountant, guarantee, label=f"{statistic} {phrase} ({method})")
    lo, hi = finder.sample(finder_data, gen)
    mech = build(epsilon_statistic, lo, hi)
    inner = mech._release(mech._prepare(data), gen)
    return dataclasses.replace(
        inner,
        is_simulation=not is_secure(gen),
        guarantee=guarantee,
        mechanism=f"{inner.mechanism} {phrase} ({finder.name})",
        source=f"{inner.source}; {source_label}: {finder.source}",
        details={
            **inner.details,
            "bounds": (lo, hi),
            "bounds_private": True,
            "epsilon_bounds": epsilon_bounds,
            "epsilon_statistic": epsilon_statistic,
            **details,
        },
    )
