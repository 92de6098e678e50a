"""Raw access to a ledger's tables, as someone editing the database by hand would have it (tests only).

The append-only triggers are what a careless edit meets first; these helpers go around them (SQLite: drop
them; PostgreSQL: ``session_replication_role = replica``), as a deliberate editor would.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from smoothdp.ledger.postgres import split_target


class RawLedger:
    """The budget row and the charges of one ledger (SQLite path or PostgreSQL ``URL#name``)."""

    def __init__(self, target: str) -> None:
        self.postgres = target.startswith("postgresql://")
        if self.postgres:
            import psycopg

            url, self.name, _ = split_target(target)
            self.db: Any = psycopg.connect(url, autocommit=True)
            self.db.execute("SET session_replication_role = replica")  # triggers off
            self.charges, self.budget, self.where = "smoothdp_charges", "smoothdp_budgets", "budget = %s"
            self.budget_where, self.args = "name = %s", (self.name,)
        else:
            self.db = sqlite3.connect(target, isolation_level=None)
            for (trigger,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'"
            ).fetchall():
                self.db.execute(f"DROP TRIGGER {trigger}")
            self.charges, self.budget, self.where = "charges", "budget", "1 = 1"
            self.budget_where, self.args = "id = 1", ()

    def _sql(self, text: str) -> str:
        return text if self.postgres else text.replace("%s", "?")

    def run(self, text: str, values: tuple[Any, ...] = ()) -> list[Any]:
        cursor = self.db.execute(self._sql(text), values)
        return cursor.fetchall() if cursor.description else []

    def rows(self) -> list[tuple[Any, ...]]:
        return self.run(
            f"SELECT seq, time, label, guarantee, counted, digest FROM {self.charges} WHERE {self.where} "
            "ORDER BY seq",
            self.args,
        )

    def head(self) -> tuple[int, str]:
        [(count, digest)] = self.run(
            f"SELECT head_charges, head_digest FROM {self.budget} WHERE {self.budget_where}", self.args
        )
        return int(count), digest

    def definition(self) -> str:
        [(text,)] = self.run(f"SELECT definition FROM {self.budget} WHERE {self.budget_where}", self.args)
        return text

    def set_charge(self, seq: int, **fields: Any) -> None:
        assignments = ", ".join(f"{name} = %s" for name in fields)
        self.run(
            f"UPDATE {self.charges} SET {assignments} WHERE {self.where} AND seq = %s",
            (*fields.values(), *self.args, seq),
        )

    def delete_charge(self, seq: int) -> None:
        self.run(f"DELETE FROM {self.charges} WHERE {self.where} AND seq = %s", (*self.args, seq))

    def insert_charge(self, row: tuple[Any, ...]) -> None:
        if self.postgres:
            self.run(f"INSERT INTO {self.charges} VALUES (%s, %s, %s, %s, %s, %s, %s)", (self.name, *row))
        else:
            self.run(f"INSERT INTO {self.charges} VALUES (%s, %s, %s, %s, %s, %s)", row)

    def set_budget(self, **fields: Any) -> None:
        assignments = ", ".join(f"{name} = %s" for name in fields)
        self.run(
            f"UPDATE {self.budget} SET {assignments} WHERE {self.budget_where}",
            (*fields.values(), *self.args),
        )

    def delete_budget(self) -> None:
        self.run(f"DELETE FROM {self.charges} WHERE {self.where}", self.args)
        self.run(f"DELETE FROM {self.budget} WHERE {self.budget_where}", self.args)

    def close(self) -> None:
        self.db.close()
