"""Persistent privacy-budget ledgers: one budget across processes, analysts and machines.

Use them through :class:`smoothdp.Accountant`:

>>> acc = smoothdp.Accountant.create("budget.db", epsilon=3.0)          # doctest: +SKIP
>>> acc = smoothdp.Accountant.open("budget.db")                          # doctest: +SKIP
>>> smoothdp.median(x, epsilon=1, bounds=(0, 100), accountant=acc)       # doctest: +SKIP
>>> acc = smoothdp.Accountant.open("postgresql://dp@db.internal/privacy#census")  # doctest: +SKIP

A file path is a SQLite ledger (:mod:`smoothdp.ledger.sqlite`, the default: standard library, no server);
a ``postgresql://`` URL is a budget in a PostgreSQL database (:mod:`smoothdp.ledger.postgres`, the
``postgres`` extra), for a budget shared by several analysts or machines. Either way every charge is one
transaction (re-read what is spent, check the budget, record the charge), and every charge carries a hash
chained over the budget's definition and every earlier charge (:mod:`smoothdp.ledger.chain`): an edited,
reordered or truncated ledger, or a raised total, is refused with :class:`LedgerTampered`, never reset.
What that does and does not protect: docs/ledger.md.

This package also moves old JSON budget files (``Accountant.to_dict``, the CLI's earlier ``--budget``
format) into a ledger: :func:`migrate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = ["ChainHead", "LedgerError", "LedgerTampered", "migrate"]

_EXPORTS = {
    "ChainHead": "smoothdp.ledger.records",
    "LedgerError": "smoothdp.ledger.records",
    "LedgerTampered": "smoothdp.ledger.records",
    "migrate": "smoothdp.ledger.migration",
}
_SUBMODULES = ("chain", "file_identity", "migration", "postgres", "records", "sqlite", "store")

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.ledger.migration import migrate
    from smoothdp.ledger.records import ChainHead, LedgerError, LedgerTampered
