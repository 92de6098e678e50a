"""What a ledger holds: the budget's definition and its charges, as values and as canonical bytes.

A ledger is a budget **definition** (total ε and δ, neighbour relation, metric, slack, the chain's kind and
a random identifier) followed by **charges**, numbered 1, 2, … in the order they were recorded. Each charge
keeps the guarantee the release declared, what the budget counted for it (converted to the budget's
relation), a label and a time, and the digest that chains it to everything before it
(:mod:`smoothdp.ledger.chain`).

The bytes that are hashed are canonical JSON (:func:`canonical_json`): sorted keys, no spaces, UTF-8,
floats in Python's shortest round-trip form. A float is therefore hashed exactly, and the same values give
the same bytes on every machine.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from json.encoder import encode_basestring  # what json.dumps(s, ensure_ascii=False) writes
from typing import Any

from smoothdp.privacy import PrivacyGuarantee

__all__ = [
    "DEFINITION_FORMAT",
    "DEFINITION_VERSION",
    "BudgetDefinition",
    "ChainHead",
    "Charge",
    "LedgerError",
    "LedgerTampered",
    "canonical_json",
    "encode_record",
    "guarantee_from_dict",
    "parse_guarantee",
]

#: The ``format`` and ``version`` of a ledger's definition.
DEFINITION_FORMAT = "smoothdp ledger"
DEFINITION_VERSION = 1


class LedgerError(RuntimeError):
    """A persistent ledger cannot be used: missing, not a ledger, forked (a hard link, a replaced or removed
    file), a wrong key, or an outcome that is unknown (a lost connection during a commit).

    Nothing is released when a charge raises it: the mechanism draws its noise only after the charge
    returned.
    """


class LedgerTampered(LedgerError):
    """The ledger's hash chain does not verify: a charge or the definition was edited, charges were
    reordered, inserted or removed. The ledger is refused, never repaired or reset."""


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: what a release declared and what the accountant counted for it.

    ``seq`` (1, 2, …) and ``digest`` (the hex hash chained over the budget and every earlier charge) are
    set on a persistent ledger (:meth:`smoothdp.Accountant.open`) and ``None`` in memory.
    """

    guarantee: PrivacyGuarantee
    counted: PrivacyGuarantee
    label: str = ""
    #: When it was charged: UTC, ISO 8601 to the second (kept by :meth:`Accountant.to_dict`).
    time: str = ""
    #: The position in a persistent ledger (1 for the first charge).
    seq: int | None = None
    #: The chain digest of a persistent ledger after this charge (64 hex digits).
    digest: str | None = None

    def record(self, seq: int) -> dict[str, Any]:
        """The values the chain hashes for this charge at position ``seq`` (its digest excluded)."""
        return {
            "seq": seq,
            "time": self.time,
            "label": self.label,
            "guarantee": self.guarantee.as_dict(),
            "counted": self.counted.as_dict(),
        }

    def texts(self) -> tuple[str, str]:
        """The canonical JSON of the declared and of the counted guarantee, as stored."""
        return (
            canonical_json(self.guarantee.as_dict()).decode("utf-8"),
            canonical_json(self.counted.as_dict()).decode("utf-8"),
        )

    def encoded(self, seq: int) -> bytes:
        """``canonical_json(self.record(seq))``, the bytes the chain hashes."""
        return encode_record(seq, self.time, self.label, *self.texts())


@dataclass(frozen=True)
class BudgetDefinition:
    """What a ledger's budget is: hashed at the root of its chain, so that a raised total is seen.

    ``ledger_id`` is random (128 bits, hex) and makes every ledger's chain its own: a charge copied from
    another ledger with the same total does not verify. ``chain`` is ``"sha256"`` (keyless) or
    ``"hmac-sha256"`` (keyed).
    """

    epsilon: float
    delta: float
    neighbours: str
    metric: str | None
    slack: float
    ledger_id: str
    chain: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": DEFINITION_FORMAT,
            "version": DEFINITION_VERSION,
            "id": self.ledger_id,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "metric": self.metric,
            "slack": self.slack,
            "chain": self.chain,
        }

    def to_text(self) -> str:
        """The canonical JSON text stored in the ledger (and hashed)."""
        return canonical_json(self.as_dict()).decode("utf-8")

    @classmethod
    def from_text(cls, text: Any) -> BudgetDefinition:
        """Parse a stored definition; anything unexpected is a :class:`LedgerError` saying what."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("format") != DEFINITION_FORMAT:
                raise ValueError("not a smoothdp ledger definition")
            if data.get("version") != DEFINITION_VERSION:
                raise ValueError(
                    f"ledger version {data.get('version')!r} "
                    f"(this smoothdp reads version {DEFINITION_VERSION})"
                )
            definition = cls(
                epsilon=_number(data["epsilon"], "epsilon"),
                delta=_number(data["delta"], "delta"),
                neighbours=_text(data["neighbours"], "neighbours"),
                metric=None if data["metric"] is None else _text(data["metric"], "metric"),
                slack=_number(data["slack"], "slack"),
                ledger_id=_text(data["id"], "id"),
                chain=_text(data["chain"], "chain"),
            )
        except (TypeError, KeyError, ValueError) as error:
            raise LedgerError(f"the ledger's budget definition is unreadable: {error}") from None
        if definition.chain not in ("sha256", "hmac-sha256"):
            raise LedgerError(f"the ledger's chain kind {definition.chain!r} is unknown")
        return definition


@dataclass(frozen=True)
class ChainHead:
    """Where a persistent ledger's chain stands: ``charges`` recorded, the last ``digest`` (hex).

    Keep it somewhere the ledger's writers cannot edit (it is printed with every CLI release): a later
    :meth:`smoothdp.Accountant.verify` with ``anchor=`` proves that the ledger still holds those charges,
    unchanged (docs/theory/ledger.md#what-the-chain-proves).
    """

    charges: int
    digest: str

    def __str__(self) -> str:
        return f"{self.charges}:{self.digest}"

    @classmethod
    def parse(cls, text: str) -> ChainHead:
        """Read ``"N:HEX"`` (what ``str`` gives); a ``ValueError`` naming the anchor otherwise."""
        count, sep, digest = str(text).partition(":")
        digest = digest.strip().lower()
        if (
            not sep
            or not count.strip().isdigit()
            or len(digest) != 64
            or any(c not in "0123456789abcdef" for c in digest)
        ):
            raise ValueError(f"anchor must be N:HEX (a charge count, a colon, 64 hex digits); got {text!r}")
        return cls(int(count), digest)


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, shortest round-trip floats; NaN and infinities refused."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def encode_record(seq: int, time: str, label: str, guarantee_text: str, counted_text: str) -> bytes:
    """The canonical JSON of a charge's record, assembled from its stored guarantee texts (which are
    hashed as stored: a guarantee re-encoded in another way does not verify). Equal to
    ``canonical_json(charge.record(seq))`` for the canonical texts of :meth:`Charge.texts`."""
    return "".join(
        (
            '{"counted":',
            counted_text,
            ',"guarantee":',
            guarantee_text,
            ',"label":',
            encode_basestring(label),
            ',"seq":',
            str(int(seq)),
            ',"time":',
            encode_basestring(time),
            "}",
        )
    ).encode("utf-8")


@functools.lru_cache(maxsize=4096)
def parse_guarantee(text: str) -> PrivacyGuarantee:
    """The (immutable) guarantee of a stored JSON text; a ledger repeats a few texts many times."""
    return guarantee_from_dict(json.loads(text))


def guarantee_from_dict(d: Any) -> PrivacyGuarantee:
    """The guarantee of :meth:`~smoothdp.privacy.PrivacyGuarantee.as_dict` (its validation included)."""
    from smoothdp import privacy

    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise ValueError(f"a charge's guarantee must be an object with a 'type'; got {d!r}")
    fields = dict(d)
    kind = getattr(privacy, fields.pop("type"), None)
    if not (isinstance(kind, type) and issubclass(kind, PrivacyGuarantee)):
        raise ValueError(f"unknown guarantee type {d['type']!r}")
    guarantee: PrivacyGuarantee = kind(**fields)
    return guarantee


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number; got {value!r}")
    return float(value)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string; got {value!r}")
    return value
