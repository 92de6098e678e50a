"""Privacy guarantees as values: what a release spent, and how guarantees compose.

* :class:`PureDP` (ε): neighbouring data sets (one record substituted unless a mechanism says
  add/remove) give output laws within a factor e^ε.
* :class:`ApproxDP` (ε, δ): the same up to an additive δ.
* :class:`GeoPrivacy` (ε, δ): ε *per unit of distance* in the local model: for any two private points
  x, x' and output set A, P[M(x) ∈ A] ≤ e^{ε·d(x,x')} P[M(x') ∈ A] + δ (seed 000, Definition 5;
  ``notes/gp_paper.md`` §1.3).

Sequential composition (basic): ε's add, δ's add. ``a + b`` or :func:`compose`. Geo-privacy composes
with geo-privacy of the same metric only; central DP with central DP only (pure + approximate gives
approximate).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from smoothdp.validation import check_delta, check_epsilon

__all__ = ["ApproxDP", "GeoPrivacy", "Guarantee", "PureDP", "compose"]


@dataclass(frozen=True)
class Guarantee:
    """Base class of privacy guarantees. ``epsilon`` and ``delta`` are always defined."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def is_pure(self) -> bool:
        return self.delta == 0.0

    def __add__(self, other: Guarantee) -> Guarantee:
        return compose(self, other)


@dataclass(frozen=True)
class PureDP(Guarantee):
    """ε-differential privacy (δ = 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta != 0.0:
            raise ValueError(f"PureDP has delta = 0; got delta={self.delta!r} (use ApproxDP)")

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP"


@dataclass(frozen=True)
class ApproxDP(Guarantee):
    """(ε, δ)-differential privacy."""

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP"


@dataclass(frozen=True)
class GeoPrivacy(Guarantee):
    """(ε, δ)-geo-privacy: ε per unit of distance under ``metric`` (seed 000, Definition 5)."""

    metric: str = "euclidean"

    def __str__(self) -> str:
        d = f", {self.delta:g}" if self.delta else ""
        return f"({self.epsilon:g}{d})-geo-privacy per unit {self.metric} distance"


def _compose_pair(a: Guarantee, b: Guarantee) -> Guarantee:
    eps, delta = a.epsilon + b.epsilon, a.delta + b.delta  # δ ≥ 1 is refused: no guarantee left
    if isinstance(a, GeoPrivacy) or isinstance(b, GeoPrivacy):
        if not (isinstance(a, GeoPrivacy) and isinstance(b, GeoPrivacy)) or a.metric != b.metric:
            raise TypeError(
                f"cannot compose {type(a).__name__} with {type(b).__name__}: geo-privacy composes only "
                "with geo-privacy of the same metric"
            )
        return GeoPrivacy(eps, delta, metric=a.metric)
    if delta == 0.0:
        return PureDP(eps)
    return ApproxDP(eps, delta)


def compose(*guarantees: Guarantee) -> Guarantee:
    """Basic sequential composition: the ε's add and the δ's add."""
    if not guarantees:
        raise ValueError("compose needs at least one guarantee")
    for g in guarantees:
        if not isinstance(g, Guarantee):
            raise TypeError(f"compose takes Guarantee objects; got {type(g).__name__}")
    return reduce(_compose_pair, guarantees)
