"""Where a ledger lives: a SQLite file (a path) or a PostgreSQL budget (a URL), chosen from the target's
spelling. The two stores import the transaction protocol of :mod:`smoothdp.ledger.store`; this module sits
above all three, so the protocol never imports its implementations.
"""

from __future__ import annotations

from collections.abc import Sequence

from smoothdp.ledger.records import BudgetDefinition, Charge
from smoothdp.ledger.store import ChainedStore, is_postgres_url

__all__ = ["create_store", "open_store"]


def open_store(target: str, key: bytes | None) -> ChainedStore:
    """The store of an existing ledger: a SQLite file (a path) or a PostgreSQL budget (a URL)."""
    if is_postgres_url(target):
        from smoothdp.ledger.postgres import PostgresStore

        return PostgresStore.open(target, key)
    from smoothdp.ledger.sqlite import SQLiteStore

    return SQLiteStore.open(target, key)


def create_store(
    target: str, definition: BudgetDefinition, key: bytes | None, charges: Sequence[Charge] = ()
) -> ChainedStore:
    """Create a new ledger holding ``charges`` (usually none), in one step: an error if one exists at
    ``target``; it appears whole or not at all. Returns it opened."""
    if is_postgres_url(target):
        from smoothdp.ledger.postgres import PostgresStore

        return PostgresStore.create(target, definition, key, charges)
    from smoothdp.ledger.sqlite import SQLiteStore

    return SQLiteStore.create(target, definition, key, charges)
