"""The hash chain of a persistent ledger: every charge's digest covers the budget and every earlier charge.

With ``H`` SHA-256 (keyless ledger) or HMAC-SHA-256 under the ledger's secret key (keyed ledger), and
``c(·)`` the canonical JSON bytes of :mod:`smoothdp.ledger.records`::

    d_0 = H("smoothdp ledger genesis" ‖ 0x00 ‖ c(definition))          the budget: ε, δ, relation, slack, id
    d_k = H("smoothdp ledger charge"  ‖ 0x00 ‖ d_{k-1} ‖ c(record_k))   record_k = (k, time, label,
                                                                          declared and counted guarantees)

and the ledger stores every ``d_k`` next to its charge, and ``(n, d_n)`` (the head) next to the definition.
:func:`verify_chain` recomputes the chain from the stored values and refuses the ledger at the first charge
whose stored digest differs, or when the head does not close it. What this proves, and what it cannot
(someone who recomputes a keyless chain, a truncated tail without an anchor):
docs/theory/ledger.md#what-the-chain-proves and docs/ledger.md#threat-model.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from smoothdp.ledger.records import (
    BudgetDefinition,
    ChainHead,
    Charge,
    LedgerError,
    LedgerTampered,
    canonical_json,
    encode_record,
    parse_guarantee,
)

__all__ = [
    "MIN_KEY_BYTES",
    "StoredCharge",
    "check_key",
    "genesis",
    "key_check",
    "link",
    "verify_chain",
]

#: The shortest secret key accepted for an HMAC chain (128 bits).
MIN_KEY_BYTES = 16
#: One stored charge: (seq, time, label, guarantee JSON, counted JSON, digest hex).
StoredCharge = tuple[int, str, str, str, str, str]


def check_key(key: Any) -> bytes | None:
    """``key`` as bytes: ``None`` (keyless), or bytes / a str (UTF-8) of at least 16 bytes."""
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes | bytearray):
        raise TypeError(
            f"key must be bytes or str (at least {MIN_KEY_BYTES} bytes) or None; got {type(key).__name__}"
        )
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key must hold at least {MIN_KEY_BYTES} bytes (128 bits); got {len(key)}")
    return bytes(key)


def _digest(message: bytes, key: bytes | None) -> str:
    if key is None:
        return hashlib.sha256(message).hexdigest()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def genesis(definition: BudgetDefinition, key: bytes | None) -> str:
    """d_0: the digest of the budget's definition (a raised total changes every digest after it)."""
    return _digest(b"smoothdp ledger genesis\x00" + canonical_json(definition.as_dict()), key)


def link(previous: str, encoded: bytes, key: bytes | None) -> str:
    """d_k from d_{k-1} (hex) and the k-th charge's encoded record (:meth:`Charge.encoded`)."""
    return _digest(b"smoothdp ledger charge\x00" + bytes.fromhex(previous) + encoded, key)


def key_check(definition: BudgetDefinition, key: bytes) -> str:
    """A value stored with a keyed ledger so that a wrong key is named as such (it reveals nothing of the
    key: an HMAC output)."""
    return _digest(b"smoothdp ledger key check\x00" + definition.ledger_id.encode("ascii"), key)


def _check_key_fits(definition: BudgetDefinition, stored_check: str | None, key: bytes | None) -> None:
    if definition.chain == "hmac-sha256":
        if key is None:
            raise LedgerError("this ledger is keyed (HMAC-SHA-256 chain): open it with its secret key")
        if stored_check is None or not hmac.compare_digest(stored_check, key_check(definition, key)):
            raise LedgerError("the key does not open this ledger (a wrong key, or its key check was edited)")
    elif key is not None:
        raise LedgerTampered(
            "a key was given but this ledger's chain is keyless (SHA-256): a keyed ledger rewritten without "
            "its key, or the wrong ledger; refused"
        )


def verify_chain(
    definition: BudgetDefinition,
    stored_check: str | None,
    rows: Sequence[StoredCharge],
    head: ChainHead,
    key: bytes | None,
) -> list[Charge]:
    """The charges of a ledger after checking its whole chain; :class:`LedgerTampered` at the first break.

    ``rows`` are the stored charges in ``seq`` order, ``head`` the stored ``(n, d_n)``. Every charge is parsed
    and hashed again from what is stored: nothing read earlier is trusted.
    """
    _check_key_fits(definition, stored_check, key)
    seqs = [row[0] for row in rows]
    if seqs != list(range(1, len(rows) + 1)):
        gap = next(i + 1 for i, s in enumerate([*seqs, None]) if s != i + 1)
        raise LedgerTampered(f"charge #{gap} is missing or out of place: charges were deleted or renumbered")
    if head.charges != len(rows):
        raise LedgerTampered(
            f"the ledger's head counts {head.charges} charge(s) but {len(rows)} are stored: charges were "
            "deleted or inserted"
        )
    charges: list[Charge] = []
    previous = genesis(definition, key)
    for seq, when, label, guarantee_text, counted_text, stored in rows:
        if not all(isinstance(v, str) for v in (when, label, guarantee_text, counted_text, stored)):
            raise LedgerTampered(f"charge #{seq} holds a value of the wrong type: the ledger was edited")
        computed = link(previous, encode_record(seq, when, label, guarantee_text, counted_text), key)
        if not hmac.compare_digest(computed, stored):
            what = "the charge or the budget's definition" if seq == 1 else "the charge"
            raise LedgerTampered(
                f"charge #{seq} does not match the ledger's hash chain: {what} was edited, or charges were "
                "reordered or inserted"
            )
        try:
            charge = Charge(
                parse_guarantee(guarantee_text), parse_guarantee(counted_text), label, when, seq, stored
            )
        except (TypeError, ValueError) as error:
            raise LedgerTampered(f"charge #{seq} is unreadable ({error}): the ledger was edited") from None
        charges.append(charge)
        previous = computed
    if not hmac.compare_digest(previous, head.digest):
        raise LedgerTampered(
            "the ledger's head does not close its chain: the budget's definition was edited "
            "(a raised total), "
            "or the charges after the stored ones were removed"
        )
    return charges
