"""Where an :class:`~smoothdp.Accountant` keeps its charges: in memory, or in a database, one transaction per
charge.

Every store offers the same two operations to the accountant:

* :meth:`LedgerStore.read`: the charges as they are now (verified against the chain);
* :meth:`LedgerStore.transaction`: the charges as they are now, **under the ledger's write lock**, and a
  place to append new ones; the new charges are committed when the block ends without an error, and
  rolled back otherwise. The accountant checks the budget inside that block, so that re-reading what is
  spent, checking the budget and recording the charge are one atomic step
  (docs/theory/ledger.md#why-a-charge-is-atomic).

:class:`MemoryStore` is the in-process list of a plain ``Accountant(epsilon=...)``. :class:`ChainedStore`
is the shared logic of the databases (:mod:`smoothdp.ledger.sqlite`, :mod:`smoothdp.ledger.postgres`):
a budget row (the definition, the key check, the head) and one row per charge, with the chain of
:mod:`smoothdp.ledger.chain` verified on every read and every charge.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from smoothdp.ledger.chain import StoredCharge, genesis, key_check, link, verify_chain
from smoothdp.ledger.records import (
    BudgetDefinition,
    ChainHead,
    Charge,
    LedgerError,
    LedgerTampered,
)

__all__ = [
    "ChainedStore",
    "LedgerState",
    "LedgerStore",
    "MemoryStore",
    "Transaction",
    "chained",
    "is_postgres_url",
    "new_definition",
]


@dataclass
class Transaction:
    """The charges under the write lock, and the ones appended in this transaction (with their seq and
    digest on a chained ledger)."""

    charges: list[Charge]
    head: ChainHead | None
    key: bytes | None = None
    new: list[Charge] = field(default_factory=list)

    def append(self, charge: Charge) -> Charge:
        """Queue ``charge`` for the commit; returns it with its position and digest (chained ledgers)."""
        if self.head is not None:
            seq = self.head.charges + 1
            digest = link(self.head.digest, charge.encoded(seq), self.key)
            charge = dataclasses.replace(charge, seq=seq, digest=digest)
            self.head = ChainHead(seq, digest)
        self.new.append(charge)
        self.charges.append(charge)
        return charge


class LedgerStore:
    """The interface the accountant uses (see the module docstring)."""

    #: Where the ledger lives (the real path of a SQLite file, a URL without its password); None in memory.
    location: str | None = None
    #: The budget's definition as stored (None in memory).
    definition: BudgetDefinition | None = None

    def read(self) -> list[Charge]:
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[Transaction]:
        raise NotImplementedError

    def head(self) -> ChainHead | None:
        """The chain's head now (None in memory)."""
        return None

    def genesis(self) -> str | None:
        """d_0, the digest of the budget's definition (None in memory)."""
        return None

    def confirm(self, charge: Charge) -> None:
        """Raise :class:`LedgerError` unless the ledger at :attr:`location` holds ``charge`` as recorded."""
        if charge not in self.read():
            raise LedgerError(f"the ledger does not hold the charge {charge.label or '(no label)'}")

    def close(self) -> None:
        """Release the connection (a no-op in memory)."""


class MemoryStore(LedgerStore):
    """A list in this process, under a thread lock (the plain :class:`~smoothdp.Accountant`)."""

    def __init__(self) -> None:
        self._charges: list[Charge] = []
        self._lock = threading.Lock()

    def read(self) -> list[Charge]:
        with self._lock:
            return list(self._charges)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._lock:
            txn = Transaction(list(self._charges), None)
            yield txn
            self._charges.extend(txn.new)


@dataclass(frozen=True)
class LedgerState:
    """What a chained store read in one transaction (before verification)."""

    definition_text: str
    key_check: str | None
    head: ChainHead
    rows: Sequence[StoredCharge]


class ChainedStore(LedgerStore):
    """The protocol shared by the databases; a subclass supplies the statements.

    Subclass hooks (each called with the store's thread lock held): :meth:`begin` (``write=True``: take the
    ledger's write lock for the whole transaction), :meth:`fetch` (the budget row and every charge, in
    order), :meth:`append` (the new charges and the new head), :meth:`commit` (a :class:`LedgerError` when
    its outcome is unknown), :meth:`rollback`, and :meth:`after_commit` (checks that the ledger the charge
    went to is still the one at its location).
    """

    definition: BudgetDefinition

    def __init__(self, definition: BudgetDefinition, key: bytes | None, location: str) -> None:
        self.definition = definition
        self.key = key
        self.location = location
        self._lock = threading.RLock()
        self._pid = os.getpid()

    def _same_process(self) -> None:
        """A database connection does not survive ``fork``: a child must open the ledger itself."""
        if os.getpid() != self._pid:
            raise LedgerError(
                f"this ledger ({self.location}) was opened in another process (before a fork): open it again "
                "in this one (smoothdp.Accountant.open)"
            )

    def genesis(self) -> str:
        return genesis(self.definition, self.key)

    # -- hooks ---------------------------------------------------------------------------------------------
    def begin(self, *, write: bool) -> None:
        raise NotImplementedError

    def fetch(self) -> LedgerState:
        raise NotImplementedError

    def append(self, charges: Sequence[Charge], head: ChainHead) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def rollback(self) -> None:
        raise NotImplementedError

    def after_commit(self) -> None:
        """Called after every commit, before the charge is returned (nothing by default)."""

    # -- the protocol ----------------------------------------------------------------------------------------
    def _verified(self) -> tuple[list[Charge], ChainHead]:
        state = self.fetch()
        stored = BudgetDefinition.from_text(state.definition_text)
        if stored != self.definition:
            raise LedgerTampered(
                f"the budget's definition changed since the ledger was opened (now {stored.as_dict()}): "
                "refused"
            )
        charges = verify_chain(self.definition, state.key_check, state.rows, state.head, self.key)
        return charges, state.head

    def read(self) -> list[Charge]:
        self._same_process()
        with self._lock:
            self.begin(write=False)
            try:
                charges, _ = self._verified()
            finally:
                self.rollback()
        return charges

    def head(self) -> ChainHead:
        self._same_process()
        with self._lock:
            self.begin(write=False)
            try:
                _, head = self._verified()
            finally:
                self.rollback()
        return head

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        self._same_process()
        with self._lock:
            self.begin(write=True)
            try:
                charges, head = self._verified()
                txn = Transaction(charges, head, self.key)
                yield txn
                if txn.new and txn.head is not None:
                    self.append(txn.new, txn.head)
            except BaseException:
                self.rollback()
                raise
            self.commit()
            if txn.new:
                self.after_commit()

    def confirm(self, charge: Charge) -> None:
        if charge.seq is None or charge.digest is None:
            raise LedgerError("this charge was not recorded in a persistent ledger")
        charges = self.read()
        if len(charges) < charge.seq or charges[charge.seq - 1].digest != charge.digest:
            raise LedgerError(
                f"the ledger at {self.location} does not hold charge #{charge.seq} as it was recorded: "
                "it was "
                "replaced, rolled back or forked after the charge"
            )


# ------------------------------------------------------------------------------------------ dispatch


def is_postgres_url(target: str) -> bool:
    """A ``postgresql://`` (or ``postgres://``) URL: a PostgreSQL ledger; anything else is a SQLite path."""
    return target.startswith(("postgresql://", "postgres://"))


def new_definition(
    epsilon: float, delta: float, neighbours: str, metric: str | None, slack: float, key: bytes | None
) -> BudgetDefinition:
    """A definition with a fresh random identifier (128 bits) and the chain kind the key implies."""
    return BudgetDefinition(
        epsilon=epsilon,
        delta=delta,
        neighbours=neighbours,
        metric=metric,
        slack=slack,
        ledger_id=secrets.token_hex(16),
        chain="sha256" if key is None else "hmac-sha256",
    )


def chained(
    definition: BudgetDefinition, key: bytes | None, charges: Sequence[Charge] = ()
) -> tuple[str | None, list[Charge], ChainHead]:
    """The key check, the charges with their seq and digest, and the head of a new ledger holding
    ``charges`` (none: an empty ledger; some: a migrated one)."""
    txn = Transaction([], ChainHead(0, genesis(definition, key)), key)
    for charge in charges:
        txn.append(dataclasses.replace(charge, seq=None, digest=None))
    assert txn.head is not None
    return (None if key is None else key_check(definition, key)), txn.new, txn.head
