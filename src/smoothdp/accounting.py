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
The theorems themselves are in :mod:`smoothdp.composition`.

**One budget across processes** (docs/ledger.md): ``Accountant.create(path_or_url, epsilon=...)`` makes a
persistent ledger (a SQLite file, or a budget in PostgreSQL for several analysts), ``Accountant.open`` opens
it. The accountant is the same; its charges then live in the ledger (:mod:`smoothdp.ledger`), and every
charge is one transaction: re-read what is spent, check the budget as above, record the charge. Every read
verifies the ledger's hash chain: an edited ledger raises :class:`~smoothdp.ledger.LedgerTampered`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from types import TracebackType
from typing import Any

from smoothdp.composition import advanced_composition, basic_composition, epsilon_delta, zcdp_composition
from smoothdp.ledger.chain import check_key
from smoothdp.ledger.records import ChainHead, Charge, LedgerTampered, guarantee_from_dict
from smoothdp.ledger.store import LedgerStore, MemoryStore, new_definition
from smoothdp.ledger.where import create_store, open_store
from smoothdp.privacy import (
    ZCDP,
    GeoPrivacy,
    Guarantee,
    PrivacyGuarantee,
    check_neighbours,
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

    Notes
    -----
    ``Accountant(...)`` keeps its charges in memory, for one process. :meth:`create` and :meth:`open` give
    the same accountant on a persistent ledger (a SQLite file or a PostgreSQL budget) that every process
    shares, one transaction per charge, with a hash chain that refuses an edited ledger (docs/ledger.md).
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
        self._store: LedgerStore = MemoryStore()
        self._label_prefix = ""
        self._made: list[Charge] = []

    # -- what is spent -----------------------------------------------------------------------------------
    @property
    def total(self) -> Budget:
        """The budget given at construction."""
        return Budget(self._epsilon, self._delta)

    @property
    def spent(self) -> Budget:
        """The composed total of every charge (the tightest of the theorems in the module docstring); on a
        persistent ledger, as it is now (every process's charges)."""
        return self._spent(self._store.read())

    @property
    def remaining(self) -> Budget:
        """total − spent (never below 0)."""
        return self._remaining(self._store.read())

    def _spent(self, charges: Sequence[Charge]) -> Budget:
        eps, delta = self._composed([c.counted for c in charges])
        return Budget(float(eps), float(delta))

    def _remaining(self, charges: Sequence[Charge]) -> Budget:
        eps, delta = self._composed([c.counted for c in charges])
        left_eps = float(Fraction(self._epsilon) - eps)
        left_delta = float(Fraction(self._delta) - delta)
        return Budget(max(0.0, left_eps), max(0.0, left_delta))

    @property
    def charges(self) -> tuple[Charge, ...]:
        """The ledger, in order (on a persistent ledger: every process's charges, as they are now)."""
        return tuple(self._store.read())

    @property
    def charged_here(self) -> tuple[Charge, ...]:
        """The charges recorded through this object, in order (on a persistent ledger, other processes'
        charges are in :attr:`charges` only)."""
        return tuple(self._made)

    def __len__(self) -> int:
        return len(self._store.read())

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
        """Raise :class:`BudgetError` if charging ``guarantee`` would exceed the budget (charges nothing).

        On a persistent ledger this reads what is spent now; another process may spend before a later
        :meth:`charge`, which checks again.
        """
        self._would_fit(self.counted(guarantee), label, guarantee, self._store.read())

    def charge(self, guarantee: PrivacyGuarantee, *, label: str = "", time: str | None = None) -> Charge:
        """Record ``guarantee`` (after the budget check); returns the ledger entry.

        On a persistent ledger this is one transaction under the ledger's write lock: re-read what is spent
        (verifying the chain), check the budget, record the charge, commit
        (docs/theory/ledger.md#why-a-charge-is-atomic). It returns only once the charge is durable in the
        ledger at :attr:`location`; a :class:`BudgetError` records nothing, and a
        :class:`~smoothdp.ledger.LedgerError` means the ledger cannot be trusted or reached (nothing may be
        released).

        ``time`` (UTC, ISO 8601) is for importing an older ledger; the default is now.
        """
        counted = self.counted(guarantee)
        if not isinstance(label, str) or not (time is None or isinstance(time, str)):
            raise TypeError("label and time must be strings")
        with self._store.transaction() as txn:
            self._check_counted(txn.charges)
            self._would_fit(counted, label, guarantee, txn.charges)
            entry = txn.append(
                Charge(guarantee, counted, self._label_prefix + label, _utc_now() if time is None else time)
            )
        self._made.append(entry)
        return entry

    def _would_fit(
        self, counted: PrivacyGuarantee, label: str, declared: PrivacyGuarantee, charges: Sequence[Charge]
    ) -> None:
        eps, delta = self._composed([*(c.counted for c in charges), counted])
        allowance = 1.0 + RELATIVE_TOLERANCE
        if eps > Fraction(self._epsilon) * Fraction(allowance) or delta > Fraction(self._delta) * Fraction(
            allowance
        ):
            what = f"{label or 'this release'} ({declared}"
            if counted != declared:  # converted to the accountant's relation: say how
                what += f", counted as {counted} under {self.neighbours} by group privacy"
            what += ")"
            rem, spent = self._remaining(charges), self._spent(charges)
            raise BudgetError(
                f"{what} would exceed the budget: spent {spent.epsilon:.6g} of ε = {self._epsilon:g}, "
                f"δ = {self._delta:g}; remaining (ε = {rem.epsilon:.6g}, δ = {rem.delta:.3g}). "
                "Nothing was charged and nothing released."
            )

    def _check_counted(self, charges: Sequence[Charge]) -> None:
        """Every stored charge counts what this budget counts for its guarantee (else: edited)."""
        for i, c in enumerate(charges):
            try:
                counted = self.counted(c.guarantee)
            except ValueError:
                counted = None
            if counted != c.counted:
                raise LedgerTampered(
                    f"charge #{c.seq or i + 1} ({c.label or 'no label'}) records {c.counted} but this budget "
                    f"counts {counted} for its guarantee {c.guarantee}: the ledger was edited or is corrupt"
                )

    # -- composition -------------------------------------------------------------------------------------
    def _composed(self, guarantees: list[PrivacyGuarantee]) -> tuple[Fraction, Fraction]:
        """The smallest proven (ε, δ) total of ``guarantees`` whose δ fits the budget."""
        if not guarantees:
            return Fraction(0), Fraction(0)
        options = []
        has_zcdp = any(isinstance(g, ZCDP) for g in guarantees)
        if not has_zcdp:
            options.append(basic_composition(guarantees))
        if self.slack:
            if not has_zcdp:
                options.append(advanced_composition(guarantees, self.slack))
            options.append(zcdp_composition(guarantees, self.slack))
        fitting = [o for o in options if o[1] <= Fraction(self._delta) * Fraction(1.0 + RELATIVE_TOLERANCE)]
        return min(fitting or options)

    def __repr__(self) -> str:
        charges = self._store.read()
        s = self._spent(charges)
        where = f"metric={self.metric!r}" if self.metric else f"neighbours={self.neighbours!r}"
        at = f" at {self.location}" if self.location else ""
        return (
            f"Accountant(epsilon={self._epsilon:g}, delta={self._delta:g}, {where}{at}; "
            f"spent ε = {s.epsilon:.6g}, δ = {s.delta:.3g} in {len(charges)} charge(s))"
        )

    # -- a persistent ledger (SQLite file or PostgreSQL) -------------------------------------------------
    @classmethod
    def create(
        cls,
        target: str | os.PathLike[str],
        epsilon: float,
        delta: float = 0.0,
        *,
        neighbours: str = "substitution",
        metric: str | None = None,
        slack: float = 0.0,
        key: bytes | str | None = None,
        label_prefix: str = "",
    ) -> Accountant:
        """Create a persistent ledger with this budget and return its accountant (docs/ledger.md).

        Parameters
        ----------
        target
            A file path (a SQLite ledger; the file must not exist) or a ``postgresql://`` URL (a budget in
            a PostgreSQL database, named by the URL's fragment: ``postgresql://host/db#census``, default
            ``default``; it must not exist).
        epsilon, delta, neighbours, metric, slack
            The budget, as for ``Accountant(...)``; they are hashed at the root of the ledger's chain.
        key
            A secret of at least 16 bytes: the chain is then HMAC-SHA-256 under it, which no one without
            the key can recompute (docs/theory/ledger.md#what-the-chain-proves). Every later :meth:`open`
            needs it.
        label_prefix
            Put in front of the label of every charge made through this object.
        """
        budget = cls(epsilon, delta, neighbours=neighbours, metric=metric, slack=slack)
        secret = check_key(key)
        definition = new_definition(
            budget._epsilon, budget._delta, budget.neighbours, budget.metric, budget.slack, secret
        )
        budget._store = create_store(_target(target), definition, secret)
        budget._label_prefix = _prefix(label_prefix)
        return budget

    @classmethod
    def open(
        cls, target: str | os.PathLike[str], *, key: bytes | str | None = None, label_prefix: str = ""
    ) -> Accountant:
        """The accountant of an existing persistent ledger (a SQLite path or a ``postgresql://`` URL).

        The whole ledger is verified first (:meth:`verify`): a missing ledger, a file that is not one, a
        hard-linked file, a wrong or missing key, or a chain that does not verify (an edited, reordered or
        truncated ledger, a raised total) is a :class:`~smoothdp.ledger.LedgerError` saying which; a
        ledger is never created, repaired or reset by opening it. Close it with :meth:`close` or a
        ``with`` block. ``label_prefix`` goes in front of every label charged through this object.
        """
        secret = check_key(key)
        store = open_store(_target(target), secret)
        d = store.definition
        assert d is not None
        try:
            try:
                accountant = cls(d.epsilon, d.delta, neighbours=d.neighbours, metric=d.metric, slack=d.slack)
            except (TypeError, ValueError) as error:
                raise LedgerTampered(f"the ledger's budget is not a valid budget: {error}") from None
            accountant._store = store
            accountant._label_prefix = _prefix(label_prefix)
            accountant.verify()
        except BaseException:
            store.close()
            raise
        return accountant

    @property
    def location(self) -> str | None:
        """Where the ledger lives: the real path of its SQLite file, or its URL (no password); None in
        memory."""
        return self._store.location

    @property
    def head(self) -> ChainHead | None:
        """The chain head of a persistent ledger now: ``ChainHead(charges, digest)`` (None in memory). Keep
        it elsewhere to anchor the ledger (:meth:`verify`)."""
        return self._store.head()

    def verify(self, *, anchor: ChainHead | str | None = None) -> ChainHead | None:
        """Check the whole ledger; returns its head (None in memory).

        The chain from the budget's definition through every charge, every charge's counted amount (what
        this budget counts for its guarantee), and that the charges fit the total. With ``anchor`` (a
        :class:`~smoothdp.ledger.ChainHead` kept elsewhere, or its text ``"N:HEX"``), also that charge N
        still has that digest: the ledger was neither rolled back nor rewritten before it. Any failure is a
        :class:`~smoothdp.ledger.LedgerError` (:class:`~smoothdp.ledger.LedgerTampered` for a broken chain).
        """
        charges = self._store.read()
        self._check_counted(charges)
        eps, delta = self._composed([c.counted for c in charges])
        allowance = Fraction(1.0 + RELATIVE_TOLERANCE)
        if eps > Fraction(self._epsilon) * allowance or delta > Fraction(self._delta) * allowance:
            raise LedgerTampered(
                f"the ledger's charges exceed its total (spent ε = {float(eps):.6g} of {self._epsilon:g}, "
                f"δ = {float(delta):.3g} of {self._delta:g}): refused"
            )
        definition = self._store.definition
        if definition is None:
            if anchor is not None:
                raise ValueError("anchor applies to a persistent ledger only")
            return None
        start = self._store.genesis()
        assert start is not None
        head = ChainHead(len(charges), charges[-1].digest or "") if charges else ChainHead(0, start)
        if anchor is not None:
            mark = anchor if isinstance(anchor, ChainHead) else ChainHead.parse(anchor)
            found = None
            if mark.charges == 0:
                found = start
            elif mark.charges <= len(charges):
                found = charges[mark.charges - 1].digest
            if found != mark.digest:
                raise LedgerTampered(
                    f"the ledger does not match the anchor {mark}: it holds {len(charges)} charge(s) and its "
                    f"charge #{mark.charges} has another digest or is gone (rolled back or rewritten)"
                )
        return head

    def confirm(self, charge: Charge) -> None:
        """Raise :class:`~smoothdp.ledger.LedgerError` unless the ledger at :attr:`location` holds ``charge``
        as it was recorded (the CLI checks this before it prints a value)."""
        self._store.confirm(charge)

    def close(self) -> None:
        """Close the connection of a persistent ledger (nothing in memory). Charges are committed already."""
        self._store.close()

    def __enter__(self) -> Accountant:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    # -- persistence (for pipelines: one budget across processes) ----------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The budget and the ledger as JSON-ready values (see :meth:`from_dict`).

        ``{"format": "smoothdp accountant", "version": 1, "total": {"epsilon", "delta"}, "neighbours",
        "metric", "slack", "charges": [...], "spent": {...}, "remaining": {...}}``; each charge holds its
        ``label``, the ``epsilon`` and ``delta`` counted on this budget, its ``time`` (UTC, ISO 8601) and the
        ``guarantee`` the release declared (:meth:`~smoothdp.privacy.PrivacyGuarantee.as_dict`). ``spent``
        and ``remaining`` are informational: :meth:`from_dict` recomputes them from the charges. Floats are
        kept exactly by ``json`` (shortest round-trip repr).

        On a persistent ledger (the JSON export of ``smoothdp budget export``), each charge also holds its
        ``seq``, ``digest`` and ``counted`` guarantee, and ``"ledger"`` holds the ``definition`` hashed at
        the chain's root and the ``head`` (``{"charges", "digest"}``): enough to verify the chain of the
        export itself (:func:`smoothdp.ledger.migrate` does). All of it is read in one transaction.
        """
        charges = self._store.read()
        spent, remaining = self._spent(charges), self._remaining(charges)
        payload = {
            "format": PERSISTENCE_FORMAT,
            "version": PERSISTENCE_VERSION,
            "total": {"epsilon": self._epsilon, "delta": self._delta},
            "neighbours": self.neighbours,
            "metric": self.metric,
            "slack": self.slack,
            "charges": [_charge_dict(c) for c in charges],
            "spent": {"epsilon": spent.epsilon, "delta": spent.delta},
            "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
        }
        definition, start = self._store.definition, self._store.genesis()
        if definition is not None and start is not None:
            last = charges[-1].digest if charges else start
            payload["ledger"] = {
                "location": self.location,
                "definition": definition.as_dict(),
                "head": {"charges": len(charges), "digest": last},
            }
        return payload

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
            entry = acc.charge(guarantee_from_dict(c["guarantee"]), label=label, time=when)
            if isinstance(entry.counted, Guarantee) and ("epsilon" in c or "delta" in c):
                counted = epsilon_delta(entry.counted)
                recorded = (_number(c["epsilon"], "epsilon"), _number(c["delta"], "delta"))
                if recorded != counted:
                    raise ValueError(
                        f"charge {i} ({label or 'no label'}) records (ε, δ) = {recorded} but this budget "
                        f"counts {counted} for its guarantee {entry.guarantee}: the ledger was edited or is "
                        "corrupt"
                    )
        return acc


#: The ``format`` and ``version`` fields of :meth:`Accountant.to_dict`.
PERSISTENCE_FORMAT = "smoothdp accountant"
PERSISTENCE_VERSION = 1


def _target(target: Any) -> str:
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if not isinstance(target, str) or not target:
        raise TypeError(f"target must be a file path or a postgresql:// URL; got {target!r}")
    return target


def _prefix(label_prefix: Any) -> str:
    if not isinstance(label_prefix, str):
        raise TypeError(f"label_prefix must be a string; got {type(label_prefix).__name__}")
    return label_prefix


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
    if c.seq is not None:  # a persistent ledger: what its chain hashes
        entry["seq"], entry["digest"], entry["counted"] = c.seq, c.digest, c.counted.as_dict()
    return entry


def charge(accountant: Accountant | None, guarantee: PrivacyGuarantee, *, label: str = "") -> None:
    """Charge ``accountant`` (if any) with ``guarantee``; every mechanism calls this before drawing noise."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a smoothdp.Accountant or None; got {type(accountant).__name__}")
    accountant.charge(guarantee, label=label)
