"""A ledger in PostgreSQL: one budget shared by several analysts or machines (the ``postgres`` extra).

``postgresql://user@host/database#name`` names the budget ``name`` (default ``default``) in that database;
the part before ``#`` is a libpq connection URL (``?host=/run/postgresql`` for a Unix socket,
``sslmode=verify-full`` …). Two tables hold every budget of the database: ``smoothdp_budgets`` (one row
per budget: the definition, the key check, the head) and ``smoothdp_charges`` (one row per charge;
triggers refuse an update or a delete).

Every charge is one transaction that first takes the budget row's lock (``SELECT … FOR UPDATE``): two
charges on one budget run one after the other, and each reads, under ``READ COMMITTED``, every charge
committed before it got the lock (docs/theory/ledger.md#why-a-charge-is-atomic). A read outside a charge
is one ``REPEATABLE READ`` snapshot, so the head and the charges it reads agree. The session sets
``synchronous_commit = on``: a commit has reached the server's disk when it returns. A connection lost
during ``COMMIT`` leaves the outcome unknown: the charge raises :class:`~smoothdp.ledger.LedgerError`
(nothing is released), and the chain shows afterwards whether it was recorded.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import Sequence
from typing import Any

from smoothdp.ledger.records import (
    BudgetDefinition,
    ChainHead,
    Charge,
    LedgerError,
    LedgerTampered,
)
from smoothdp.ledger.store import ChainedStore, LedgerState, chained

__all__ = ["DEFAULT_BUDGET", "PostgresStore", "split_target"]

#: The budget a URL without a fragment names.
DEFAULT_BUDGET = "default"

SCHEMA = """
CREATE TABLE IF NOT EXISTS smoothdp_budgets (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    key_check TEXT,
    head_charges BIGINT NOT NULL,
    head_digest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS smoothdp_charges (
    budget TEXT NOT NULL REFERENCES smoothdp_budgets (name),
    seq BIGINT NOT NULL,
    time TEXT NOT NULL,
    label TEXT NOT NULL,
    guarantee TEXT NOT NULL,
    counted TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (budget, seq)
);
CREATE OR REPLACE FUNCTION smoothdp_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'smoothdp ledger: %', TG_ARGV[0];
END $$;
DROP TRIGGER IF EXISTS charges_are_append_only ON smoothdp_charges;
CREATE TRIGGER charges_are_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON smoothdp_charges
    FOR EACH STATEMENT EXECUTE FUNCTION smoothdp_refuse_change('charges are append-only');
DROP TRIGGER IF EXISTS budget_definition_is_fixed ON smoothdp_budgets;
CREATE TRIGGER budget_definition_is_fixed BEFORE UPDATE OF name, definition, key_check OR DELETE OR TRUNCATE
    ON smoothdp_budgets
    FOR EACH STATEMENT EXECUTE FUNCTION smoothdp_refuse_change('the budget definition is fixed');
"""
#: A transaction-level advisory lock key, so that two processes creating the schema at once take turns.
_SCHEMA_LOCK = 0x736D6470


def split_target(target: str) -> tuple[str, str, str]:
    """``(connection URL, budget name, location shown to users)`` of ``postgresql://…#name``."""
    url, _, name = target.partition("#")
    name = urllib.parse.unquote(name) or DEFAULT_BUDGET
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    shown = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")) + f"#{name}"
    return url, name, shown


def _connect(url: str, shown: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise LedgerError("a PostgreSQL ledger needs psycopg 3: pip install 'smoothdp[postgres]'") from None
    try:
        connection = psycopg.connect(url, autocommit=True)
        connection.execute("SET synchronous_commit = on")
    except psycopg.Error as error:
        raise LedgerError(f"cannot connect to {shown}: {str(error).strip().splitlines()[0]}") from None
    return connection


def _text(value: Any) -> Any:
    """Text columns as ``str`` (a SQL_ASCII database hands them to psycopg as bytes)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class PostgresStore(ChainedStore):
    """A budget in a PostgreSQL database (see the module docstring)."""

    def __init__(
        self, connection: Any, name: str, shown: str, definition: BudgetDefinition, key: bytes | None
    ):
        super().__init__(definition, key, shown)
        self._connection = connection
        self._name = name
        self._write = False

    @classmethod
    def open(cls, target: str, key: bytes | None) -> PostgresStore:
        import psycopg

        url, name, shown = split_target(target)
        connection = _connect(url, shown)
        try:
            try:
                row = connection.execute(
                    "SELECT definition FROM smoothdp_budgets WHERE name = %s", (name,)
                ).fetchone()
            except psycopg.errors.UndefinedTable:
                row = None
            except psycopg.Error as error:
                raise LedgerError(f"cannot read {shown}: {str(error).strip().splitlines()[0]}") from None
            if row is None:
                raise LedgerError(
                    f"no budget {name!r} at {shown}: create it first (smoothdp budget init URL --epsilon E, "
                    "or smoothdp.Accountant.create)"
                )
            definition = BudgetDefinition.from_text(_text(row[0]))
        except BaseException:
            connection.close()
            raise
        return cls(connection, name, shown, definition, key)  # every read verifies the chain

    @classmethod
    def create(
        cls, target: str, definition: BudgetDefinition, key: bytes | None, charges: Sequence[Charge] = ()
    ) -> PostgresStore:
        import psycopg

        url, name, shown = split_target(target)
        check, records, head = chained(definition, key, charges)
        connection = _connect(url, shown)
        try:
            connection.execute("BEGIN")
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            exists = connection.execute("SELECT to_regclass('smoothdp_budgets') IS NOT NULL").fetchone()[0]
            if not exists:
                connection.execute(SCHEMA)
            connection.execute(
                "INSERT INTO smoothdp_budgets (name, definition, key_check, head_charges, head_digest) "
                "VALUES (%s, %s, %s, %s, %s)",
                (name, definition.to_text(), check, head.charges, head.digest),
            )
            cls(connection, name, shown, definition, key).append(records, head)
            connection.execute("COMMIT")
        except psycopg.errors.UniqueViolation:
            connection.close()
            raise LedgerError(
                f"a budget {name!r} already exists at {shown} (never overwritten); open it"
            ) from None
        except psycopg.Error as error:
            connection.close()
            raise LedgerError(f"cannot create {shown}: {str(error).strip().splitlines()[0]}") from None
        except BaseException:
            connection.close()
            raise
        connection.close()
        return cls.open(target, key)

    # -- the hooks of ChainedStore -------------------------------------------------------------------------
    def _run(self, statement: str, values: Sequence[Any] = ()) -> Any:
        import psycopg

        try:
            return self._connection.execute(statement, values)
        except psycopg.Error as error:
            self.rollback()
            raise LedgerError(f"{self.location}: {str(error).strip().splitlines()[0]}") from None

    def begin(self, *, write: bool) -> None:
        self._write = write
        if write:
            self._run("BEGIN ISOLATION LEVEL READ COMMITTED")
            locked = self._run(
                "SELECT 1 FROM smoothdp_budgets WHERE name = %s FOR UPDATE", (self._name,)
            ).fetchone()
            if locked is None:
                self.rollback()
                raise LedgerTampered(f"the budget row of {self.location} was removed: refused")
        else:
            self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def fetch(self) -> LedgerState:
        row = self._run(
            "SELECT definition, key_check, head_charges, head_digest FROM smoothdp_budgets WHERE name = %s",
            (self._name,),
        ).fetchone()
        if row is None:
            raise LedgerTampered(f"the budget row of {self.location} was removed: refused")
        rows = self._run(
            "SELECT seq, time, label, guarantee, counted, digest FROM smoothdp_charges WHERE budget = %s "
            "ORDER BY seq",
            (self._name,),
        ).fetchall()
        definition_text, check, count, digest = (_text(v) for v in row)
        return LedgerState(
            definition_text, check, ChainHead(int(count), digest), [tuple(map(_text, r)) for r in rows]
        )

    def append(self, charges: Sequence[Charge], head: ChainHead) -> None:
        for c in charges:
            self._run(
                "INSERT INTO smoothdp_charges (budget, seq, time, label, guarantee, counted, digest) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    self._name,
                    c.seq,
                    c.time,
                    c.label,
                    *c.texts(),
                    c.digest,
                ),
            )
        self._run(
            "UPDATE smoothdp_budgets SET head_charges = %s, head_digest = %s WHERE name = %s",
            (head.charges, head.digest, self._name),
        )

    def commit(self) -> None:
        import psycopg

        try:
            self._connection.execute("COMMIT")
        except psycopg.Error as error:
            self.rollback()
            raise LedgerError(
                f"{self.location}: the commit failed ({str(error).strip().splitlines()[0]}); "
                "the charge may or "
                "may not be recorded; nothing was released"
            ) from None

    def rollback(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.execute("ROLLBACK")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.close()
