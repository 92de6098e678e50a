"""The privacy budget accountant: every release is charged before its noise is drawn.

>>> acc = Accountant(epsilon=1.0)
>>> median(x, epsilon=0.5, bounds=(0, 100), accountant=acc)      # doctest: +SKIP
>>> acc.spent, acc.remaining                                       # doctest: +SKIP
(Budget(epsilon=0.5, delta=0.0), Budget(epsilon=0.5, delta=0.0))

A charge that would take the total past the budget raises :class:`BudgetError` and records nothing; the
mechanism then draws no noise and releases nothing.

How the total is computed (docs/theory/privacy-definitions.md#advanced-composition): the accountant keeps
every
charge and reports the smallest total ε that a composition theorem proves, among

* **basic composition**: Σ ε_i, Σ δ_i (always);
* **advanced composition** (Dwork, Rothblum & Vadhan 2010), when ``slack`` δ' > 0 and no zCDP charge:
  √(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), with δ = Σ δ_i + δ';
* **zCDP** (Bun & Steinke 2016), when ``slack`` > 0: the zCDP charges and the pure ones (ε-DP is
  ε²/2-zCDP) add their ρ, converted once to (ρ + 2√(ρ ln(1/δ')), δ'); the (ε, δ) charges add on top.

Neighbour relations: the accountant has one (``neighbours``). A charge under the same relation counts as
it is; an add/remove charge on a substitution accountant is converted by group privacy to
(2ε, (1 + e^ε)δ) (a substitution is a removal and an addition); every other mix is refused with a
``ValueError``. A geo-privacy accountant (``neighbours="metric"``) counts ε per unit of ``metric``
distance, for what one user spends; only geo-privacy charges of the same metric go on it.

The budget check is exact: the charges are added as exact rationals of their floats and compared with
the budget, up to a relative 1e−12 that absorbs the binary rounding of decimal budgets (0.5 + 0.4 + 0.1
is 1 + 2.8e−17 in binary). ``spent`` and ``remaining`` are those exact totals rounded to the nearest float.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from typing import Any

from smoothdp.privacy import (
    ZCDP,
    GeoPrivacy,
    Guarantee,
    PrivacyGuarantee,
    check_neighbours,
    pure_as_zcdp,
)
from smoothdp.validation import check_delta, check_epsilon, check_in_range

__all__ = ["Accountant", "Budget", "BudgetError", "Charge", "charge"]

#: Relative allowance of the exact budget check for the binary rounding of decimal budgets.
RELATIVE_TOLERANCE = 1e-12


class BudgetError(RuntimeError):
    """A release would take the accountant past its budget; nothing was charged and nothing released."""


@dataclass(frozen=True, eq=False)
class Budget:
    """An (ε, δ) amount: ``acc.spent``, ``acc.remaining``, ``acc.total``. Unpacks as ``eps, delta = b``.

    It compares equal to the tuple ``(ε, δ)``, and a pure budget (δ = 0) to its ε: ``acc.spent == 0.9``.
    """

    epsilon: float
    delta: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.epsilon, self.delta))

    def __getitem__(self, index: int) -> float:
        return (self.epsilon, self.delta)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Real) and not isinstance(other, bool):
            return self.delta == 0.0 and self.epsilon == float(other)
        if isinstance(other, Budget | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.epsilon, self.delta))


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: what a release declared and what the accountant counted for it."""

    guarantee: PrivacyGuarantee
    counted: PrivacyGuarantee
    label: str = ""
    #: When it was charged: UTC, ISO 8601 to the second (kept by :meth:`Accountant.to_dict`).
    time: str = ""


class Accountant:
    """A privacy budget, charged by every release that is given ``accountant=``.

    Parameters
    ----------
    epsilon
        The total ε > 0 (per unit of distance for ``neighbours="metric"``).
    delta
        The total δ ∈ [0, 1), including ``slack``.
    neighbours
        The neighbour relation of the budget: ``"substitution"`` (default), ``"add_remove"``, ``"local"``
        or ``"metric"`` (geo-privacy; then ``metric`` names the distance).
    metric
        The distance of a geo-privacy budget (default ``"euclidean"`` when ``neighbours="metric"``).
    slack
        δ' ∈ [0, delta] reserved for advanced composition and the zCDP conversion (0: basic composition
        only, and zCDP charges are refused).
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = "substitution",
        metric: str | None = None,
        slack: float = 0.0,
    ) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._delta = check_delta(delta)
        self.neighbours = check_neighbours(neighbours)
        if metric is not None and self.neighbours != "metric":
            raise ValueError(f"metric applies only to neighbours='metric'; got neighbours={neighbours!r}")
        self.metric = (metric or "euclidean") if self.neighbours == "metric" else None
        self.slack = check_in_range("slack", slack, 0.0, self._delta, low_open=False, high_open=False)
        if self.slack and self.neighbours in ("metric", "local"):
            raise ValueError(f"slack applies to central DP budgets only; got neighbours={neighbours!r}")
        self._charges: list[Charge] = []
        self._lock = threading.Lock()

    # -- what is spent -----------------------------------------------------------------------------------
    @property
    def total(self) -> Budget:
        """The budget given at construction."""
        return Budget(self._epsilon, self._delta)

    @property
    def spent(self) -> Budget:
        """The composed total of every charge (the tightest of the theorems in the module docstring)."""
        eps, delta = self._composed([c.counted for c in self._charges])
        return Budget(float(eps), float(delta))

    @property
    def remaining(self) -> Budget:
        """total − spent (never below 0)."""
        eps, delta = self._composed([c.counted for c in self._charges])
        left_eps = float(Fraction(self._epsilon) - eps)
        left_delta = float(Fraction(self._delta) - delta)
        return Budget(max(0.0, left_eps), max(0.0, left_delta))

    @property
    def charges(self) -> tuple[Charge, ...]:
        """The ledger, in order."""
        return tuple(self._charges)

    def __len__(self) -> int:
        return len(self._charges)

    def __iter__(self) -> Iterator[Charge]:
        return iter(self.charges)

    # -- charging ----------------------------------------------------------------------------------------
    def counted(self, guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
        """What this accountant counts for ``guarantee`` (converted to its relation, or a ``ValueError``)."""
        if not isinstance(guarantee, PrivacyGuarantee):
            raise TypeError(f"guarantee must be a smoothdp guarantee; got {type(guarantee).__name__}")
        if self.neighbours == "metric":
            if not isinstance(guarantee, GeoPrivacy) or guarantee.metric != self.metric:
                raise ValueError(
                    f"this accountant counts geo-privacy per unit {self.metric} distance; "
                    f"it cannot count {guarantee}"
                )
            return guarantee
        if isinstance(guarantee, GeoPrivacy):
            raise ValueError(
                f"this accountant counts central DP under {self.neighbours!r}; geo-privacy ({guarantee}) "
                "needs Accountant(..., neighbours='metric')"
            )
        if isinstance(guarantee, ZCDP) and not self.slack:
            raise ValueError("a zCDP charge needs an Accountant with slack > 0 to convert it to (ε, δ)")
        if guarantee.neighbours == self.neighbours:
            return guarantee
        if self.neighbours == "substitution" and guarantee.neighbours == "add_remove":
            if isinstance(guarantee, ZCDP):  # ρ-zCDP under add/remove is 4ρ-zCDP under substitution
                return ZCDP(4.0 * guarantee.rho, neighbours="substitution")
            assert isinstance(guarantee, Guarantee)
            return guarantee.as_substitution()
        raise ValueError(
            f"this accountant counts neighbours={self.neighbours!r}; a guarantee under "
            f"{guarantee.neighbours!r} ({guarantee}) does not convert to it"
        )

    def check(self, guarantee: PrivacyGuarantee, *, label: str = "") -> None:
        """Raise :class:`BudgetError` if charging ``guarantee`` would exceed the budget (charges nothing)."""
        self._would_fit(self.counted(guarantee), label, guarantee)

    def charge(self, guarantee: PrivacyGuarantee, *, label: str = "") -> Charge:
        """Record ``guarantee`` (after the budget check); returns the ledger entry."""
        counted = self.counted(guarantee)
        with self._lock:
            self._would_fit(counted, label, guarantee)
            entry = Charge(guarantee, counted, label, _utc_now())
            self._charges.append(entry)
        return entry

    def _would_fit(self, counted: PrivacyGuarantee, label: str, declared: PrivacyGuarantee) -> None:
        eps, delta = self._composed([*(c.counted for c in self._charges), counted])
        allowance = 1.0 + RELATIVE_TOLERANCE
        if eps > Fraction(self._epsilon) * Fraction(allowance) or delta > Fraction(self._delta) * Fraction(
            allowance
        ):
            what = f"{label or 'this release'} ({declared}"
            if counted != declared:  # converted to the accountant's relation: say how
                what += f", counted as {counted} under {self.neighbours} by group privacy"
            what += ")"
            rem = self.remaining
            raise BudgetError(
                f"{what} would exceed the budget: spent {self.spent.epsilon:.6g} of ε = {self._epsilon:g}, "
                f"δ = {self._delta:g}; remaining (ε = {rem.epsilon:.6g}, δ = {rem.delta:.3g}). "
                "Nothing was charged and nothing released."
            )

    # -- composition -------------------------------------------------------------------------------------
    def _composed(self, guarantees: list[PrivacyGuarantee]) -> tuple[Fraction, Fraction]:
        """The smallest proven (ε, δ) total of ``guarantees`` whose δ fits the budget."""
        if not guarantees:
            return Fraction(0), Fraction(0)
        options = []
        has_zcdp = any(isinstance(g, ZCDP) for g in guarantees)
        if not has_zcdp:
            options.append(_basic(guarantees))
        if self.slack:
            if not has_zcdp:
                options.append(_advanced(guarantees, self.slack))
            options.append(_zcdp(guarantees, self.slack))
        fitting = [o for o in options if o[1] <= Fraction(self._delta) * Fraction(1.0 + RELATIVE_TOLERANCE)]
        return min(fitting or options)

    def __repr__(self) -> str:
        s = self.spent
        where = f"metric={self.metric!r}" if self.metric else f"neighbours={self.neighbours!r}"
        return (
            f"Accountant(epsilon={self._epsilon:g}, delta={self._delta:g}, {where}; "
            f"spent ε = {s.epsilon:.6g}, δ = {s.delta:.3g} in {len(self)} charge(s))"
        )

    # -- persistence (for pipelines: one budget across processes) ----------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The budget and the ledger as JSON-ready values (see :meth:`from_dict`).

        ``{"format": "smoothdp accountant", "version": 1, "total": {"epsilon", "delta"}, "neighbours",
        "metric", "slack", "charges": [...], "spent": {...}, "remaining": {...}}``; each charge holds its
        ``label``, the ``epsilon`` and ``delta`` counted on this budget, its ``time`` (UTC, ISO 8601) and the
        ``guarantee`` the release declared (:meth:`~smoothdp.privacy.PrivacyGuarantee.as_dict`). ``spent``
        and ``remaining`` are informational: :meth:`from_dict` recomputes them from the charges. Floats are
        kept exactly by ``json`` (shortest round-trip repr).
        """
        spent, remaining = self.spent, self.remaining
        return {
            "format": PERSISTENCE_FORMAT,
            "version": PERSISTENCE_VERSION,
            "total": {"epsilon": self._epsilon, "delta": self._delta},
            "neighbours": self.neighbours,
            "metric": self.metric,
            "slack": self.slack,
            "charges": [_charge_dict(c) for c in self._charges],
            "spent": {"epsilon": spent.epsilon, "delta": spent.delta},
            "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
        }

    @classmethod
    def from_dict(cls, data: Any) -> Accountant:
        """Rebuild an accountant written by :meth:`to_dict`: the charges are replayed through the budget
        check, in order, keeping their labels and times.

        Anything else is a ``ValueError`` that says what is wrong: not a mapping, another format or version,
        a missing or mistyped field, a charge whose recorded ε or δ is not what this budget counts for its
        guarantee, or a ledger that exceeds its own total.
        """
        try:
            return cls._from_dict(data)
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a smoothdp accountant: bad or missing field ({error!r})") from None
        except BudgetError as error:
            raise ValueError(f"the ledger exceeds its own budget: {error}") from None

    @classmethod
    def _from_dict(cls, data: Any) -> Accountant:
        if not isinstance(data, dict):
            raise ValueError(f"not a smoothdp accountant: expected a JSON object, got {type(data).__name__}")
        if data.get("format", PERSISTENCE_FORMAT) != PERSISTENCE_FORMAT:
            raise ValueError(f"not a smoothdp accountant: format {data.get('format')!r}")
        if data.get("version", PERSISTENCE_VERSION) != PERSISTENCE_VERSION:
            raise ValueError(
                f"unsupported accountant version {data.get('version')!r} (this smoothdp reads version "
                f"{PERSISTENCE_VERSION})"
            )
        total = data["total"] if "total" in data else data  # version 1 also read the flat form
        acc = cls(
            _number(total["epsilon"], "total epsilon"),
            _number(total["delta"], "total delta"),
            neighbours=data["neighbours"],
            metric=data.get("metric"),
            slack=_number(data.get("slack", 0.0), "slack"),
        )
        charges = data.get("charges", [])
        if not isinstance(charges, list):
            raise ValueError(
                f"not a smoothdp accountant: charges must be a list, got {type(charges).__name__}"
            )
        for i, c in enumerate(charges):
            if not isinstance(c, dict):
                raise ValueError(f"charge {i} is not a JSON object")
            label, when = c.get("label", ""), c.get("time", "")
            if not isinstance(label, str) or not isinstance(when, str):
                raise ValueError(f"charge {i}: label and time must be strings")
            entry = acc.charge(_guarantee_from_dict(c["guarantee"]), label=label)
            if isinstance(entry.counted, Guarantee) and ("epsilon" in c or "delta" in c):
                counted = _ed(entry.counted)
                recorded = (_number(c["epsilon"], "epsilon"), _number(c["delta"], "delta"))
                if recorded != counted:
                    raise ValueError(
                        f"charge {i} ({label or 'no label'}) records (ε, δ) = {recorded} but this budget "
                        f"counts {counted} for its guarantee {entry.guarantee}: the ledger was edited or is "
                        "corrupt"
                    )
            acc._charges[-1] = dataclasses.replace(entry, time=when)
        return acc


#: The ``format`` and ``version`` fields of :meth:`Accountant.to_dict`.
PERSISTENCE_FORMAT = "smoothdp accountant"
PERSISTENCE_VERSION = 1


def _utc_now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number; got {value!r}")
    return float(value)


def _charge_dict(c: Charge) -> dict[str, Any]:
    entry: dict[str, Any] = {"label": c.label}
    if isinstance(c.counted, Guarantee):  # (ε, δ) as counted on this budget; a zCDP charge has a ρ instead
        entry["epsilon"], entry["delta"] = c.counted.epsilon, c.counted.delta
    entry["time"] = c.time
    entry["guarantee"] = c.guarantee.as_dict()
    return entry


def _guarantee_from_dict(d: Any) -> PrivacyGuarantee:
    from smoothdp import privacy

    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise ValueError(f"a charge's guarantee must be an object with a 'type'; got {d!r}")
    fields = dict(d)
    kind = getattr(privacy, fields.pop("type"), None)
    if not (isinstance(kind, type) and issubclass(kind, PrivacyGuarantee)):
        raise ValueError(f"unknown guarantee type {d['type']!r}")
    return kind(**fields)


def _exact(values: list[float]) -> Fraction:
    return sum(map(Fraction, values), Fraction(0))


def _ed(g: PrivacyGuarantee) -> tuple[float, float]:
    assert isinstance(g, Guarantee)
    return g.epsilon, g.delta


def _basic(gs: list[PrivacyGuarantee]) -> tuple[Fraction, Fraction]:
    pairs = [_ed(g) for g in gs]
    return _exact([e for e, _ in pairs]), _exact([d for _, d in pairs])


def _advanced(gs: list[PrivacyGuarantee], slack: float) -> tuple[Fraction, Fraction]:
    """Dwork, Rothblum & Vadhan (FOCS 2010), heterogeneous form; rounded up."""
    pairs = [_ed(g) for g in gs]
    sq = math.fsum(e * e for e, _ in pairs)
    drift = math.fsum(e * math.expm1(e) for e, _ in pairs)
    eps = math.sqrt(2.0 * math.log(1.0 / slack) * sq) + drift
    eps = eps * (1.0 + 1e-12)  # covers the float error of the few operations above
    return Fraction(eps), _exact([d for _, d in pairs]) + Fraction(slack)


def _zcdp(gs: list[PrivacyGuarantee], slack: float) -> tuple[Fraction, Fraction]:
    """zCDP for the zCDP and pure charges, basic composition for the (ε, δ) ones; rounded up."""
    rho, eps_rest, delta_rest = [], [], []
    for g in gs:
        if isinstance(g, ZCDP):
            rho.append(g.rho)
        elif isinstance(g, Guarantee) and g.is_pure:
            rho.append(pure_as_zcdp(g).rho)
        else:
            e, d = _ed(g)
            eps_rest.append(e)
            delta_rest.append(d)
    eps = 0.0
    if rho:
        r = math.fsum(rho)
        eps = (r + 2.0 * math.sqrt(r * math.log(1.0 / slack))) * (1.0 + 1e-12)
    return Fraction(eps) + _exact(eps_rest), _exact(delta_rest) + (Fraction(slack) if rho else Fraction(0))


def charge(accountant: Accountant | None, guarantee: PrivacyGuarantee, *, label: str = "") -> None:
    """Charge ``accountant`` (if any) with ``guarantee``; every mechanism calls this before drawing noise."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a smoothdp.Accountant or None; got {type(accountant).__name__}")
    accountant.charge(guarantee, label=label)
