"""JSON in, ledger out: move an old JSON budget file, or a ledger's JSON export, into a persistent ledger.

Two kinds of JSON are read, both in the format of :meth:`smoothdp.Accountant.to_dict`:

* an **old budget file** (what ``smoothdp budget init FILE`` wrote before the ledger, or any
  ``Accountant.to_dict()``): its charges are replayed through the budget check in order (a charge whose
  counted ε or δ is not what the budget counts, or a file beyond its own total, is refused), then written,
  with their labels and times, into a new ledger with a fresh chain;
* an **export** of a ledger (``smoothdp budget export``, ``to_dict`` of a persistent accountant): its own
  chain is verified first (with its key when it is keyed), then the new ledger is built on the same
  definition, so that it has the same chain and the same head as the export (an anchor kept for the old
  ledger still verifies). A key given for a keyless export starts a new, keyed chain instead.

The new ledger appears whole or not at all (one transaction; for SQLite a file linked into place).
"""

from __future__ import annotations

import json
import os
from typing import Any

from smoothdp.accounting import Accountant
from smoothdp.ledger.chain import check_key, key_check, verify_chain
from smoothdp.ledger.records import BudgetDefinition, ChainHead, LedgerError, LedgerTampered, canonical_json
from smoothdp.ledger.store import chained, new_definition
from smoothdp.ledger.where import create_store

__all__ = ["migrate", "read_json"]


def read_json(source: str | os.PathLike[str]) -> Any:
    """The JSON value of the file ``source`` (a :class:`LedgerError` naming it when unreadable)."""
    try:
        with open(source, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise LedgerError(f"no file {os.fspath(source)}") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise LedgerError(f"{os.fspath(source)} is not a JSON budget file: {error}") from None


def migrate(
    source: str | os.PathLike[str] | dict[str, Any],
    target: str | os.PathLike[str],
    *,
    key: bytes | str | None = None,
) -> Accountant:
    """Create the ledger ``target`` (a new SQLite path or a ``postgresql://`` URL) from the JSON ``source``
    (a file or its parsed value); returns its accountant, open.

    ``key``: the secret of a keyed export, or the key of the new ledger (see the module docstring).
    Raises :class:`LedgerError` for an unreadable source, :class:`LedgerTampered` for an export whose chain
    does not verify, and ``ValueError`` for a JSON that is not a consistent budget (from
    :meth:`Accountant.from_dict`); nothing is created then.
    """
    data = source if isinstance(source, dict) else read_json(source)
    secret = check_key(key)
    replayed = Accountant.from_dict(data)  # the budget check, every charge in order
    charges = replayed.charges
    export = data.get("ledger") if isinstance(data, dict) else None
    if export is not None:
        definition = _verified_export(data, export, secret)
        if definition.chain == "sha256" and secret is not None:  # a keyless export given a key: new chain
            definition = _fresh(replayed, secret)
        elif chained(definition, secret, charges)[2] != _stated_head(export):
            raise LedgerTampered("the export's charges do not replay to its own head: edited")
    else:
        definition = _fresh(replayed, secret)
    store = create_store(_target(target), definition, secret, charges)
    store.close()
    return Accountant.open(_target(target), key=secret)


def _fresh(accountant: Accountant, key: bytes | None) -> BudgetDefinition:
    total = accountant.total
    return new_definition(
        total.epsilon, total.delta, accountant.neighbours, accountant.metric, accountant.slack, key
    )


def _stated_head(export: dict[str, Any]) -> ChainHead:
    return ChainHead(int(export["head"]["charges"]), str(export["head"]["digest"]))


def _verified_export(data: dict[str, Any], export: Any, key: bytes | None) -> BudgetDefinition:
    """The definition of an export whose chain verifies (and matches the budget it states)."""
    try:
        definition = BudgetDefinition.from_text(canonical_json(export["definition"]).decode("utf-8"))
        head = _stated_head(export)
        rows = [
            (
                c["seq"],
                c["time"],
                c["label"],
                canonical_json(c["guarantee"]).decode("utf-8"),
                canonical_json(c["counted"]).decode("utf-8"),
                c["digest"],
            )
            for c in data["charges"]
        ]
    except (KeyError, TypeError, ValueError) as error:
        raise LedgerTampered(f"the export's ledger section is incomplete ({error!r})") from None
    stated = (
        data["total"]["epsilon"],
        data["total"]["delta"],
        data["neighbours"],
        data["metric"],
        data["slack"],
    )
    if stated != (
        definition.epsilon,
        definition.delta,
        definition.neighbours,
        definition.metric,
        definition.slack,
    ):
        raise LedgerTampered("the export's budget differs from the definition its chain hashes: edited")
    check = key_check(definition, key) if key is not None and definition.chain == "hmac-sha256" else None
    if key is not None and definition.chain == "sha256":
        verify_chain(definition, None, rows, head, None)  # verified keyless, then re-chained under the key
    else:
        verify_chain(definition, check, rows, head, key)
    return definition


def _target(target: Any) -> str:
    if isinstance(target, os.PathLike):
        return os.fspath(target)
    if not isinstance(target, str) or not target:
        raise TypeError(f"target must be a file path or a postgresql:// URL; got {target!r}")
    return target
