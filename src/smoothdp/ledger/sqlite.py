"""A ledger in one SQLite file: the default persistent store (standard library, no server).

Every charge is one transaction, ``BEGIN IMMEDIATE`` … ``COMMIT``: SQLite's write lock is taken before the
charges are read, so re-reading what is spent, checking the budget and recording the charge happen with no
other writer in between (docs/theory/ledger.md#why-a-charge-is-atomic). The file is in WAL mode with
``synchronous=FULL``: a commit is on disk when it returns, and a process killed at any point leaves the
ledger as it was before or after its charge, never between. After each commit the log is copied into the
main file (a ``TRUNCATE`` checkpoint), so that a charge that returned lives in the file the path names.

The file is opened through its real path and must have one link; in every transaction the path must still
name the file opened (:mod:`smoothdp.ledger.file_identity`). There is no lock file beside it: the locks are
SQLite's own.

Layout (``PRAGMA application_id`` 0x736d6470, "smdp"; ``user_version`` 1): a ``budget`` table with one row
(the definition, the key check, the head) and an append-only ``charges`` table (triggers refuse an update
or a delete: a guard against mistakes, not against someone who drops the triggers; the chain is).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import time
import urllib.parse
from collections.abc import Sequence

from smoothdp.ledger.file_identity import FileIdentity, check_place, check_single_link, identity_of
from smoothdp.ledger.records import (
    BudgetDefinition,
    ChainHead,
    Charge,
    LedgerError,
    LedgerTampered,
)
from smoothdp.ledger.store import ChainedStore, LedgerState, chained

__all__ = ["APPLICATION_ID", "BUSY_TIMEOUT", "SQLiteStore"]

#: ``PRAGMA application_id`` of a smoothdp ledger ("smdp").
APPLICATION_ID = 0x736D6470
SCHEMA_VERSION = 1
#: Seconds a charge waits for another process's charge to finish before it fails (an error, not a refusal).
BUSY_TIMEOUT = 60.0
_SQLITE_HEADER = b"SQLite format 3\x00"

SCHEMA = f"""
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {SCHEMA_VERSION};
CREATE TABLE budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    definition TEXT NOT NULL,
    key_check TEXT,
    head_charges INTEGER NOT NULL,
    head_digest TEXT NOT NULL
);
CREATE TABLE charges (
    seq INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    label TEXT NOT NULL,
    guarantee TEXT NOT NULL,
    counted TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE TRIGGER charges_are_append_only_update BEFORE UPDATE ON charges
BEGIN SELECT RAISE(ABORT, 'smoothdp ledger: charges are append-only'); END;
CREATE TRIGGER charges_are_append_only_delete BEFORE DELETE ON charges
BEGIN SELECT RAISE(ABORT, 'smoothdp ledger: charges are append-only'); END;
CREATE TRIGGER budget_definition_is_fixed BEFORE UPDATE OF id, definition, key_check ON budget
BEGIN SELECT RAISE(ABORT, 'smoothdp ledger: the budget definition is fixed'); END;
CREATE TRIGGER budget_is_kept BEFORE DELETE ON budget
BEGIN SELECT RAISE(ABORT, 'smoothdp ledger: the budget row is kept'); END;
"""


def _connect(real: str, *, create: bool = False) -> sqlite3.Connection:
    mode = "rwc" if create else "rw"  # never create a ledger by opening it
    uri = f"file:{urllib.parse.quote(real)}?mode={mode}"
    connection = sqlite3.connect(
        uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
    )
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints only in after_commit, after the checks
    return connection


def _not_a_ledger(real: str, what: str) -> LedgerError:
    try:
        with open(real, "rb") as handle:
            start = handle.read(64).lstrip()
    except OSError:
        start = b""
    if start.startswith(b"{"):
        return LedgerError(
            f"{real} is a JSON budget file of an earlier smoothdp; move its charges to a ledger: "
            f"smoothdp budget migrate {real} NEW.db (or smoothdp.ledger.migrate)"
        )
    return LedgerError(f"{real} is not a smoothdp ledger ({what})")


class SQLiteStore(ChainedStore):
    """A ledger in a SQLite file (see the module docstring)."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        real: str,
        opened: FileIdentity,
        definition: BudgetDefinition,
        key: bytes | None,
    ) -> None:
        super().__init__(definition, key, real)
        self._connection = connection
        self._real = real
        self._opened = opened

    # -- opening -------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], key: bytes | None) -> SQLiteStore:
        real = os.path.realpath(path)
        if not os.path.lexists(path) or not os.path.exists(real):
            raise LedgerError(
                f"no ledger at {os.fspath(path)}: create it first (smoothdp budget init {os.fspath(path)} "
                "--epsilon E, or smoothdp.Accountant.create)"
            )
        opened, status = identity_of(real)
        check_single_link(real, status)
        if status.st_size == 0:
            raise LedgerError(f"{real} is not a smoothdp ledger (an empty file)")
        try:
            connection = _connect(real)
        except sqlite3.Error as error:
            if "not a database" in str(error):
                raise _not_a_ledger(real, "not a SQLite database") from None
            raise LedgerError(f"cannot open the ledger {real}: {error}") from None
        try:
            application = connection.execute("PRAGMA application_id").fetchone()[0]
            if application != APPLICATION_ID:
                raise LedgerError(f"{real} is not a smoothdp ledger (another SQLite database)")
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise LedgerError(f"cannot put the ledger {real} in WAL mode (journal mode {mode!r})")
            row = connection.execute("SELECT definition FROM budget WHERE id = 1").fetchone()
            if row is None:
                raise LedgerTampered(f"the ledger {real} has lost its budget row: refused")
            definition = BudgetDefinition.from_text(row[0])
        except sqlite3.DatabaseError as error:
            connection.close()
            if "not a database" in str(error):  # closed first: reading it cannot drop a SQLite lock of ours
                raise _not_a_ledger(real, "not a SQLite database") from None
            raise LedgerError(f"cannot read the ledger {real}: {error}") from None
        except BaseException:
            connection.close()
            raise
        return cls(connection, real, opened, definition, key)  # every read checks the place and the chain

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        definition: BudgetDefinition,
        key: bytes | None,
        charges: Sequence[Charge] = (),
    ) -> SQLiteStore:
        """Build the ledger in a temporary file beside ``path``, then link it into place: the name appears
        complete, and never replaces an existing file (``os.link`` fails on an existing name)."""
        name = os.fspath(path)
        if os.path.lexists(name):
            raise LedgerError(f"{name} already exists (a ledger is never overwritten); open it instead")
        folder = os.path.dirname(os.path.realpath(name))
        if not os.path.isdir(folder):
            raise LedgerError(f"cannot create the ledger {name}: no folder {os.path.dirname(name) or '.'}")
        real = os.path.join(folder, os.path.basename(os.path.realpath(name)))
        temporary = os.path.join(folder, f".{os.path.basename(real)}.{secrets.token_hex(6)}.tmp")
        check, records, head = chained(definition, key, charges)
        try:
            connection = _connect(temporary, create=True)
            try:
                connection.executescript(SCHEMA)
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("BEGIN IMMEDIATE")
                connection.execute(
                    "INSERT INTO budget (id, definition, key_check, head_charges, head_digest) "
                    "VALUES (1, ?, ?, ?, ?)",
                    (definition.to_text(), check, head.charges, head.digest),
                )
                store = cls(connection, temporary, FileIdentity(0, 0), definition, key)
                store.append(records, head)
                connection.execute("COMMIT")
            finally:
                connection.close()
            try:
                os.link(temporary, real)
            except FileExistsError:
                raise LedgerError(
                    f"{name} already exists (a ledger is never overwritten); open it instead"
                ) from None
            except OSError as error:
                raise LedgerError(f"cannot create the ledger {name}: {error.strerror}") from None
        except sqlite3.Error as error:
            raise LedgerError(f"cannot create the ledger {name}: {error}") from None
        finally:
            for leftover in (temporary, temporary + "-wal", temporary + "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
        _sync_folder(folder)
        return cls.open(real, key)

    # -- the hooks of ChainedStore -------------------------------------------------------------------------
    def begin(self, *, write: bool) -> None:
        try:
            self._connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            if not write:  # a read transaction starts at its first read: one snapshot for what follows
                self._connection.execute("SELECT 1 FROM budget LIMIT 1").fetchall()
        except sqlite3.OperationalError as error:
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("ROLLBACK")
            raise LedgerError(f"the ledger {self._real} is busy or unreadable: {error}") from None
        try:
            check_place(self._real, self._opened)
        except BaseException:
            self.rollback()
            raise

    def fetch(self) -> LedgerState:
        try:
            row = self._connection.execute(
                "SELECT definition, key_check, head_charges, head_digest FROM budget WHERE id = 1"
            ).fetchone()
            rows = self._connection.execute(
                "SELECT seq, time, label, guarantee, counted, digest FROM charges ORDER BY seq"
            ).fetchall()
        except sqlite3.DatabaseError as error:
            raise LedgerTampered(f"the ledger {self._real} is damaged or was altered: {error}") from None
        if row is None:
            raise LedgerTampered(f"the ledger {self._real} has lost its budget row: refused")
        definition_text, check, count, digest = row
        if not isinstance(count, int) or not isinstance(digest, str):
            raise LedgerTampered(f"the ledger {self._real} has an altered head: refused")
        return LedgerState(definition_text, check, ChainHead(count, digest), rows)

    def append(self, charges: Sequence[Charge], head: ChainHead) -> None:
        self._connection.executemany(
            "INSERT INTO charges (seq, time, label, guarantee, counted, digest) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    c.seq,
                    c.time,
                    c.label,
                    *c.texts(),
                    c.digest,
                )
                for c in charges
            ],
        )
        self._connection.execute(
            "UPDATE budget SET head_charges = ?, head_digest = ? WHERE id = 1", (head.charges, head.digest)
        )

    def commit(self) -> None:
        try:
            check_place(self._real, self._opened)  # a stale view rolls back instead of committing
        except BaseException:
            self.rollback()
            raise
        try:
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            self.rollback()
            raise LedgerError(f"the ledger {self._real} could not commit the charge: {error}") from None

    def rollback(self) -> None:
        if self._connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("ROLLBACK")

    def after_commit(self) -> None:
        """Copy the log into the main file (waiting for readers, as for a write), then check the place.

        The place is checked before the copy too: a process whose -wal or -shm was removed during its
        commit must not write its log's pages into a main file that other processes now write through
        other logs.
        """
        check_place(self._real, self._opened)
        deadline = time.monotonic() + BUSY_TIMEOUT
        while True:
            busy, _, _ = self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                break
            if time.monotonic() > deadline:
                raise LedgerError(
                    f"the charge is committed to {self._real}'s log but could not be copied into the file "
                    f"within {BUSY_TIMEOUT:g} s; nothing was released"
                )
            time.sleep(0.005)
        check_place(self._real, self._opened)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._connection.close()


def _sync_folder(folder: str) -> None:
    """fsync the folder, so that the new name is on disk (best effort: not every system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
