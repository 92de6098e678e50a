r"""Privacy guarantees as values: what a release spent, under which neighbour relation, and how they compose.

* :class:`PureDP` ($\varepsilon$): neighbouring data sets give output laws within a factor $e^\varepsilon$.
* :class:`ApproxDP` ($\varepsilon$, $\delta$): the same up to an additive $\delta$.
* :class:`GeoPrivacy` ($\varepsilon$, $\delta$): $\varepsilon$ *per unit of distance* in the local model: for
  any two private points $x, x'$ and output set A,
  $P[M(x) \in A] \le e^{\varepsilon \cdot d(x,x')} P[M(x') \in A] + \delta$.
* :class:`ZCDP` ($\rho$): zero-concentrated DP, the natural currency of Gaussian noise.

Every guarantee records its **neighbour relation** (``neighbours``):

* ``"substitution"``: one record replaced by another (n is public);
* ``"add_remove"``: one record added or removed;
* ``"local"``: the local model, any two values of one user's input (local DP);
* ``"metric"``: geo-privacy, neighbours at any distance d under ``metric``, charged $\varepsilon \cdot d$.

Composition (:func:`compose`, ``a + b``, ``sum(...)``) adds the $\varepsilon$'s and the $\delta$'s (the
$\rho$'s for zCDP) of guarantees under the **same** relation and refuses to mix relations; a conversion that
is a theorem is an explicit method: :meth:`Guarantee.as_substitution` (one substitution = one removal + one
addition) and :meth:`ZCDP.as_approx_dp`. The :class:`~smoothdp.accounting.Accountant` applies those
conversions for you. Proofs: docs/theory/privacy-definitions.md#basic-composition and the sections after it.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from fractions import Fraction
from functools import reduce
from typing import Any

from smoothdp.keywords import check_keywords_of
from smoothdp.validation import check_delta, check_epsilon, check_positive

__all__ = [
    "NEIGHBOUR_RELATIONS",
    "ZCDP",
    "ApproxDP",
    "GeoPrivacy",
    "Guarantee",
    "PrivacyGuarantee",
    "PureDP",
    "compose",
    "sum_up",
]

#: The neighbour relations a guarantee can be stated under, with what they mean.
NEIGHBOUR_RELATIONS: dict[str, str] = {
    "substitution": "one record substituted (n public)",
    "add_remove": "one record added or removed",
    "local": "any two inputs of one user (local model)",
    "metric": "any two inputs of one user, charged per unit of distance (geo-privacy)",
}


def check_neighbours(neighbours: Any, *, allowed: tuple[str, ...] = tuple(NEIGHBOUR_RELATIONS)) -> str:
    """``neighbours`` must name one of the relations in ``allowed``."""
    if not isinstance(neighbours, str) or neighbours not in allowed:
        raise ValueError(f"neighbours must be one of {allowed}; got {neighbours!r}")
    return neighbours


def sum_up(values: list[float] | tuple[float, ...]) -> float:
    r"""The smallest float $\ge$ the exact sum of ``values`` (a composed budget never understates the
    total)."""
    total = math.fsum(values)
    if math.isfinite(total) and Fraction(total) < sum(map(Fraction, values)):
        total = math.nextafter(total, math.inf)
    return total


class PrivacyGuarantee:
    """Base of every guarantee: it has a neighbour relation and composes with ``+`` and ``sum``."""

    neighbours: str

    @property
    def relation(self) -> str:
        """The neighbour relation in words."""
        return NEIGHBOUR_RELATIONS[self.neighbours]

    def __add__(self, other: PrivacyGuarantee) -> PrivacyGuarantee:
        return compose(self, other)

    def __radd__(self, other: Any) -> PrivacyGuarantee:
        if isinstance(other, int) and other == 0:  # sum() starts at 0
            return self
        return NotImplemented

    def as_dict(self) -> dict[str, Any]:
        """The guarantee as plain JSON-ready values."""
        return {"type": type(self).__name__, **self.__dict__}


@dataclass(frozen=True)
class Guarantee(PrivacyGuarantee):
    r"""$(\varepsilon, \delta)$ under a neighbour relation: the base of :class:`PureDP`, :class:`ApproxDP` and
    :class:`GeoPrivacy`."""

    epsilon: float
    delta: float = 0.0
    _: KW_ONLY
    neighbours: str = "substitution"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        check_neighbours(self.neighbours)

    @property
    def is_pure(self) -> bool:
        return self.delta == 0.0

    def _suffix(self) -> str:
        return "" if self.neighbours == "substitution" else f" ({self.neighbours.replace('_', '/')})"

    def as_substitution(self) -> Guarantee:
        r"""The same mechanism's guarantee under substitution.

        Add/remove $(\varepsilon, \delta)$ gives $(2\varepsilon, (1 + e^\varepsilon) \cdot \delta)$ under
        substitution: a substitution is a removal then an addition, and the two steps compose by group privacy
        (docs/theory/privacy-definitions.md#converting-between-neighbour-relations). Substitution is returned
        unchanged; nothing else converts.
        """
        if self.neighbours == "substitution":
            return self
        if self.neighbours != "add_remove":
            raise ValueError(
                f"a guarantee under neighbours={self.neighbours!r} has no substitution form "
                "(only add_remove converts)"
            )
        delta = sum_up([self.delta, math.exp(self.epsilon) * self.delta]) if self.delta else 0.0
        return _make(sum_up([self.epsilon, self.epsilon]), delta, "substitution")


@dataclass(frozen=True)
class PureDP(Guarantee):
    r"""$\varepsilon$-differential privacy ($\delta = 0$)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta != 0.0:
            raise ValueError(f"PureDP has delta = 0; got delta={self.delta!r} (use ApproxDP)")

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP{self._suffix()}"


@dataclass(frozen=True)
class ApproxDP(Guarantee):
    r"""$(\varepsilon, \delta)$-differential privacy."""

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP{self._suffix()}"


@dataclass(frozen=True)
class GeoPrivacy(Guarantee):
    r"""$(\varepsilon, \delta)$-geo-privacy: $\varepsilon$ per unit of distance under ``metric``
    (Chatzikokolakis et al. 2013)."""

    _: KW_ONLY
    neighbours: str = "metric"
    metric: str = "euclidean"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_neighbours(self.neighbours, allowed=("metric",))
        if not isinstance(self.metric, str) or not self.metric:
            raise ValueError(f"metric must be a non-empty name; got {self.metric!r}")

    def __str__(self) -> str:
        d = f", {self.delta:g}" if self.delta else ""
        return f"({self.epsilon:g}{d})-geo-privacy per unit {self.metric} distance"

    def as_substitution(self) -> Guarantee:
        raise ValueError("geo-privacy has no substitution form: it is a guarantee per unit of distance")


@dataclass(frozen=True)
class ZCDP(PrivacyGuarantee):
    r"""$\rho$-zero-concentrated DP (Bun & Steinke, TCC 2016): Rényi divergence
    $D_\alpha \le \rho \cdot \alpha$ for every $\alpha > 1$."""

    rho: float
    _: KW_ONLY
    neighbours: str = "substitution"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_positive("rho", self.rho))
        check_neighbours(self.neighbours, allowed=("substitution", "add_remove"))

    def as_approx_dp(self, delta: float) -> ApproxDP:
        r"""$(\rho + 2\sqrt{\rho \ln(1/\delta)}, \delta)$-DP (Bun & Steinke 2016, Proposition 1.3), for
        $\delta \in (0, 1)$."""
        d = check_delta(delta, allow_zero=False)
        eps = self.rho + 2.0 * math.sqrt(self.rho * math.log(1.0 / d))
        return ApproxDP(math.nextafter(eps, math.inf), d, neighbours=self.neighbours)

    def __str__(self) -> str:
        suffix = "" if self.neighbours == "substitution" else f" ({self.neighbours.replace('_', '/')})"
        return f"{self.rho:g}-zCDP{suffix}"


def pure_as_zcdp(guarantee: Guarantee) -> ZCDP:
    r"""$\varepsilon$-DP implies $(\varepsilon^2/2)$-zCDP (Bun & Steinke 2016, Proposition 1.4)."""
    if not guarantee.is_pure or isinstance(guarantee, GeoPrivacy):
        raise ValueError(f"only pure central DP converts to zCDP; got {guarantee}")
    return ZCDP(math.nextafter(guarantee.epsilon**2 / 2.0, math.inf), neighbours=guarantee.neighbours)


def _make(epsilon: float, delta: float, neighbours: str, metric: str | None = None) -> Guarantee:
    if metric is not None:
        return GeoPrivacy(epsilon, delta, metric=metric)
    if delta == 0.0:
        return PureDP(epsilon, neighbours=neighbours)
    return ApproxDP(epsilon, delta, neighbours=neighbours)


def _mix_error(a: PrivacyGuarantee, b: PrivacyGuarantee) -> ValueError:
    hint = (
        " Convert explicitly: g.as_substitution() turns add/remove (ε, δ) into (2ε, (1+e^ε)δ) under "
        "substitution, or charge both to an Accountant(neighbours='substitution'), which does it for you."
        if {a.neighbours, b.neighbours} == {"substitution", "add_remove"}
        else ""
    )
    return ValueError(
        f"cannot compose {a} (neighbours={a.neighbours!r}) with {b} (neighbours={b.neighbours!r}): "
        f"composition needs one neighbour relation.{hint}"
    )


def _compose_pair(a: PrivacyGuarantee, b: PrivacyGuarantee) -> PrivacyGuarantee:
    if isinstance(a, GeoPrivacy) or isinstance(b, GeoPrivacy):
        if not (isinstance(a, GeoPrivacy) and isinstance(b, GeoPrivacy)):
            raise TypeError(
                f"cannot compose {type(a).__name__} with {type(b).__name__}: geo-privacy composes only "
                "with geo-privacy of the same metric"
            )
        if a.metric != b.metric:
            raise TypeError(f"cannot compose geo-privacy under metric {a.metric!r} with metric {b.metric!r}")
        return GeoPrivacy(sum_up([a.epsilon, b.epsilon]), sum_up([a.delta, b.delta]), metric=a.metric)
    if a.neighbours != b.neighbours:
        raise _mix_error(a, b)
    if isinstance(a, ZCDP) or isinstance(b, ZCDP):
        za = a if isinstance(a, ZCDP) else _pure_to_zcdp_or_fail(a, b)
        zb = b if isinstance(b, ZCDP) else _pure_to_zcdp_or_fail(b, a)
        return ZCDP(sum_up([za.rho, zb.rho]), neighbours=a.neighbours)
    assert isinstance(a, Guarantee) and isinstance(b, Guarantee)
    # δ ≥ 1 is refused by the guarantee itself: no guarantee left.
    return _make(sum_up([a.epsilon, b.epsilon]), sum_up([a.delta, b.delta]), a.neighbours)


def _pure_to_zcdp_or_fail(g: PrivacyGuarantee, other: PrivacyGuarantee) -> ZCDP:
    if isinstance(g, Guarantee) and g.is_pure:
        return pure_as_zcdp(g)
    raise TypeError(
        f"cannot compose {g} with {other}: (ε, δ)-DP with δ > 0 does not convert to zCDP; convert the zCDP "
        "one with .as_approx_dp(delta), or use an Accountant with slack > 0"
    )


def compose(*guarantees: PrivacyGuarantee) -> PrivacyGuarantee:
    r"""Basic sequential composition under one neighbour relation: the $\varepsilon$'s add and the $\delta$'s
    add.

    zCDP composes with zCDP ($\rho$'s add) and with pure DP ($\varepsilon$-DP is $\varepsilon^2/2$-zCDP).
    Mixed neighbour relations, DP with geo-privacy and different metrics are refused with an error that says
    how to convert where a conversion is a theorem. The total is rounded up
    (docs/theory/privacy-definitions.md#basic-composition).
    """
    if not guarantees:
        raise ValueError("compose needs at least one guarantee")
    for g in guarantees:
        if not isinstance(g, PrivacyGuarantee):
            raise TypeError(f"compose takes guarantee objects; got {type(g).__name__}")
    return reduce(_compose_pair, guarantees)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
