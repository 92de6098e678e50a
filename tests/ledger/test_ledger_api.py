"""The persistent ledger from Python, on SQLite and on PostgreSQL: charges, the budget check, the chain.

Every test runs on both stores (the PostgreSQL ones are skipped, with the reason, when no server can
start: tests/ledger/conftest.py).
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from ledger_tampering import RawLedger

import smoothdp
from smoothdp.ledger import ChainHead, LedgerError, LedgerTampered
from smoothdp.ledger.chain import genesis, link
from smoothdp.ledger.records import BudgetDefinition, encode_record

DATA = np.arange(50.0)


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "budget.db")
    return request.getfixturevalue("postgres_ledger")


def _spend(acc: smoothdp.Accountant, epsilon: float) -> smoothdp.Release:
    return smoothdp.median(DATA, epsilon=epsilon, bounds=(0, 100), accountant=acc, numerics="float")


def test_create_charge_reopen_and_refuse(target):
    with smoothdp.Accountant.create(target, epsilon=1.0, delta=1e-6) as acc:
        assert acc.location and len(acc) == 0 and acc.head.charges == 0
        _spend(acc, 0.5)
        _spend(acc, 0.25)
        [first, second] = acc.charged_here
        assert (first.seq, second.seq) == (1, 2) and first.digest != second.digest
    with smoothdp.Accountant.open(target) as again:
        assert again.spent == (0.75, 0.0) and again.remaining == (0.25, 1e-6)
        assert again.total == (1.0, 1e-6) and again.charges == (first, second)
        assert again.head == ChainHead(2, second.digest)
        with pytest.raises(smoothdp.BudgetError, match="exceed the budget"):
            _spend(again, 0.5)
        assert len(again) == 2 and again.charged_here == ()
        again.charge(smoothdp.PureDP(0.25), label="the last quarter")
        assert again.spent == 1.0


def test_two_accountants_on_one_ledger_see_each_other(target):
    one = smoothdp.Accountant.create(target, epsilon=1.0)
    two = smoothdp.Accountant.open(target)
    try:
        one.charge(smoothdp.PureDP(0.6))
        assert two.spent == 0.6  # re-read: not a copy made when it was opened
        with pytest.raises(smoothdp.BudgetError):
            two.charge(smoothdp.PureDP(0.6))
        two.charge(smoothdp.PureDP(0.4))
        with pytest.raises(smoothdp.BudgetError):
            one.charge(smoothdp.PureDP(0.01))
    finally:
        one.close()
        two.close()


def test_threads_never_overspend(target):
    smoothdp.Accountant.create(target, epsilon=2.0).close()
    results: list[str] = []

    def worker() -> None:
        with smoothdp.Accountant.open(target) as acc:
            for _ in range(3):
                try:
                    acc.charge(smoothdp.PureDP(0.25))
                    results.append("charged")
                except smoothdp.BudgetError:
                    results.append("refused")

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("charged") == 8 and results.count("refused") == 10
    with smoothdp.Accountant.open(target) as acc:
        assert acc.spent == 2.0 and len(acc) == 8 and acc.verify() == acc.head


def test_create_never_overwrites_and_open_never_creates(target, tmp_path):
    smoothdp.Accountant.create(target, epsilon=1.0).close()
    with pytest.raises(LedgerError, match="exists"):
        smoothdp.Accountant.create(target, epsilon=5.0)
    with smoothdp.Accountant.open(target) as acc:
        assert acc.total == 1.0
    missing = str(tmp_path / "absent.db") if not target.startswith("postgresql") else target + "-absent"
    with pytest.raises(LedgerError, match="create it first"):
        smoothdp.Accountant.open(missing)
    assert not (tmp_path / "absent.db").exists()


def test_bad_parameters_name_themselves(tmp_path):
    with pytest.raises(ValueError, match="epsilon"):
        smoothdp.Accountant.create(tmp_path / "a.db", epsilon=0.0)
    with pytest.raises(ValueError, match="key must hold at least 16 bytes"):
        smoothdp.Accountant.create(tmp_path / "b.db", epsilon=1.0, key=b"short")
    with pytest.raises(TypeError, match="target"):
        smoothdp.Accountant.open(42)  # type: ignore[arg-type]
    with pytest.raises(LedgerError, match="no folder"):
        smoothdp.Accountant.create(tmp_path / "no" / "a.db", epsilon=1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_export_and_migrate_reproduce_the_chain(target, tmp_path):
    with smoothdp.Accountant.create(target, epsilon=3.0, neighbours="substitution") as acc:
        _spend(acc, 1.0)
        acc.charge(smoothdp.PureDP(0.5, neighbours="add_remove"), label="a mean")
        exported, head = acc.to_dict(), acc.head
    assert exported["ledger"]["head"] == {"charges": 2, "digest": head.digest}
    assert [c["seq"] for c in exported["charges"]] == [1, 2]
    copy = tmp_path / "copy.db"
    with smoothdp.ledger.migrate(json.loads(json.dumps(exported)), copy) as restored:
        assert restored.head == head and restored.spent == 2.0  # the same chain: anchors still hold
        assert [c.label for c in restored.charges] == [c["label"] for c in exported["charges"]]
    edited = json.loads(json.dumps(exported))
    edited["charges"][0]["label"] = "something else"
    with pytest.raises(LedgerTampered, match="charge #1"):
        smoothdp.ledger.migrate(edited, tmp_path / "edited.db")
    assert not (tmp_path / "edited.db").exists()


def test_an_old_json_budget_migrates_and_is_refused_as_a_ledger(tmp_path):
    old = smoothdp.Accountant(epsilon=2.0)
    old.charge(smoothdp.PureDP(0.5), label="median")
    old.charge(smoothdp.PureDP(0.25, neighbours="add_remove"), label="mean")
    path = tmp_path / "budget.json"
    path.write_text(json.dumps(old.to_dict()))
    with pytest.raises(LedgerError, match="smoothdp budget migrate"):
        smoothdp.Accountant.open(path)
    with smoothdp.ledger.migrate(path, tmp_path / "budget.db") as acc:
        assert acc.spent == old.spent and [c.label for c in acc.charges] == ["median", "mean"]
        assert [c.time for c in acc.charges] == [c.time for c in old.charges]
    over = old.to_dict()
    over["charges"] *= 4  # beyond its own total: refused, nothing created
    with pytest.raises(ValueError, match="exceeds its own budget"):
        smoothdp.ledger.migrate(over, tmp_path / "over.db")
    assert not (tmp_path / "over.db").exists()


# ------------------------------------------------------------------------------------------ tampering


def _ledger_with_charges(target: str, **options) -> tuple[list[smoothdp.ledger.records.Charge], ChainHead]:
    with smoothdp.Accountant.create(target, epsilon=3.0, **options) as acc:
        for epsilon in (0.5, 1.0, 0.75):
            acc.charge(smoothdp.PureDP(epsilon), label=f"release at {epsilon}")
        return list(acc.charges), acc.head


def _swap(raw: RawLedger, a: int, b: int) -> None:
    """Exchange two charges' contents (digests included), keeping their numbers: a reordering."""
    rows = {row[0]: row for row in raw.rows()}
    fields = ("time", "label", "guarantee", "counted", "digest")
    raw.set_charge(a, **dict(zip(fields, rows[b][1:], strict=True)))
    raw.set_charge(b, **dict(zip(fields, rows[a][1:], strict=True)))


PUREDP_01 = '{"delta":0.0,"epsilon":0.1,"neighbours":"substitution","type":"PureDP"}'

#: (attack, what the error says): each one refused when the ledger is opened.
ATTACKS = {
    "lower a charge": (lambda raw: raw.set_charge(2, guarantee=PUREDP_01, counted=PUREDP_01), "charge #2"),
    "relabel a charge": (lambda raw: raw.set_charge(1, label="nothing to see"), "charge #1"),
    "delete a middle charge": (lambda raw: raw.delete_charge(2), "charge #2 is missing"),
    "delete the last charge": (lambda raw: raw.delete_charge(3), "head counts 3"),
    "swap two charges": (lambda raw: _swap(raw, 1, 2), "charge #1"),
    "insert a charge": (
        lambda raw: (
            raw.insert_charge((4, "", "free", PUREDP_01, PUREDP_01, "0" * 64)),
            raw.set_budget(head_charges=4),
        ),
        "charge #4",
    ),
    "raise the total": (
        lambda raw: raw.set_budget(definition=raw.definition().replace('"epsilon":3.0', '"epsilon":30.0')),
        "definition",
    ),
    "wipe the charges": (lambda raw: [raw.delete_charge(s) for s in (1, 2, 3)], "head counts 3"),
    "delete the budget": (lambda raw: raw.delete_budget(), "budget"),
    "garble a digest": (lambda raw: raw.set_charge(3, digest="f" * 64), "charge #3"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_edited_ledger_is_refused_never_reset(target, attack):
    _ledger_with_charges(target)
    edit, message = ATTACKS[attack]
    raw = RawLedger(target)
    before = raw.rows() if attack != "delete the budget" else None
    edit(raw)
    raw.close()
    with pytest.raises(LedgerError, match=message) as refused:
        smoothdp.Accountant.open(target)
    assert isinstance(refused.value, LedgerTampered) or "no budget" in str(refused.value)
    raw = RawLedger(target)
    if before is not None:
        assert raw.rows() != before or attack == "raise the total"  # the edit is there: nothing repaired
    raw.close()


def test_an_open_accountant_refuses_an_edit_made_under_it(target):
    _ledger_with_charges(target)
    with smoothdp.Accountant.open(target) as acc:
        raw = RawLedger(target)
        raw.set_charge(1, guarantee=PUREDP_01, counted=PUREDP_01)
        raw.close()
        with pytest.raises(LedgerTampered, match="charge #1"):
            _spend(acc, 0.1)  # the mechanism is stopped before it draws noise
        with pytest.raises(LedgerTampered):
            _ = acc.spent


def test_the_tables_are_append_only_for_a_careless_edit(target):
    _ledger_with_charges(target)
    if target.startswith("postgresql"):
        import psycopg

        from smoothdp.ledger.postgres import split_target

        url, name, _ = split_target(target)
        with psycopg.connect(url, autocommit=True) as db:
            for statement in (
                "UPDATE smoothdp_charges SET label = 'x' WHERE budget = %s",
                "DELETE FROM smoothdp_charges WHERE budget = %s",
                "UPDATE smoothdp_budgets SET definition = 'x' WHERE name = %s",
            ):
                with pytest.raises(psycopg.Error, match="smoothdp ledger"):
                    db.execute(statement, (name,))
    else:
        import sqlite3

        db = sqlite3.connect(target, isolation_level=None)
        for statement in (
            "UPDATE charges SET label = 'x'",
            "DELETE FROM charges",
            "UPDATE budget SET definition = 'x'",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="smoothdp ledger"):
                db.execute(statement)
        db.close()
    with smoothdp.Accountant.open(target) as acc:
        assert len(acc) == 3


def _rechain(raw: RawLedger, definition_text: str, rows: list[tuple], key: bytes | None) -> None:
    """What someone who knows the chain's recipe (not the key) does: recompute every digest."""
    definition = BudgetDefinition.from_text(definition_text)
    previous = genesis(definition, key)
    for seq, when, label, guarantee, counted, _ in rows:
        previous = link(previous, encode_record(seq, when, label, guarantee, counted), key)
        raw.set_charge(seq, digest=previous)
    raw.set_budget(definition=definition_text, head_charges=len(rows), head_digest=previous)


def test_the_hashed_bytes_are_the_canonical_json_of_the_record():
    """The chain hashes the stored texts as they are; for what the ledger stores, that is the canonical
    JSON of the record (so that an export, which carries values, verifies the same way)."""
    from smoothdp.ledger.records import Charge, canonical_json, encode_record

    for label in ("", 'médiane "x"', "a\nb"):
        charge = Charge(smoothdp.PureDP(0.1), smoothdp.ApproxDP(0.2, 1e-9), label, "2026-01-01T00:00:00Z")
        assert charge.encoded(7) == canonical_json(charge.record(7))
        assert encode_record(7, charge.time, label, *charge.texts()) == charge.encoded(7)
    respaced = charge.texts()[0].replace(",", ", ")  # the same guarantee, stored another way
    assert encode_record(7, charge.time, label, respaced, charge.texts()[1]) != charge.encoded(7)


def test_a_recomputed_keyless_chain_passes_but_an_anchor_catches_it(target):
    charges, head = _ledger_with_charges(target)
    raw = RawLedger(target)
    rows = raw.rows()
    for seq in (2, 3):
        raw.delete_charge(seq)
    raised = raw.definition().replace('"epsilon":3.0', '"epsilon":30.0')
    _rechain(raw, raised, rows[:1], key=None)  # total raised and the tail cut: the chain is rebuilt
    raw.close()
    with smoothdp.Accountant.open(target) as acc:  # the documented limit of a keyless chain
        assert acc.total == 30.0 and len(acc) == 1
        with pytest.raises(LedgerTampered, match="anchor"):
            acc.verify(anchor=head)  # the head printed with the last release, kept elsewhere
        with pytest.raises(LedgerTampered, match="anchor"):
            acc.verify(anchor=str(ChainHead(1, charges[0].digest)))  # the raised total changed charge #1


def test_a_truncated_tail_passes_alone_but_not_against_an_anchor(target):
    charges, head = _ledger_with_charges(target)
    raw = RawLedger(target)
    raw.delete_charge(3)
    raw.set_budget(head_charges=2, head_digest=charges[1].digest)  # no hash to compute: just cut
    raw.close()
    with smoothdp.Accountant.open(target) as acc:
        assert len(acc) == 2
        assert acc.verify(anchor=ChainHead(2, charges[1].digest)) == ChainHead(2, charges[1].digest)
        with pytest.raises(LedgerTampered, match="holds 2 charge"):
            acc.verify(anchor=head)


def test_a_keyed_chain_cannot_be_recomputed_without_the_key(target):
    key = b"0123456789abcdef-secret"
    _ledger_with_charges(target, key=key)
    with pytest.raises(LedgerError, match="keyed"):
        smoothdp.Accountant.open(target)
    with pytest.raises(LedgerError, match="does not open"):
        smoothdp.Accountant.open(target, key=b"another key of 16+ bytes")
    raw = RawLedger(target)
    rows = raw.rows()
    raised = raw.definition().replace('"epsilon":3.0', '"epsilon":30.0')
    _rechain(raw, raised, rows, key=b"the attacker's own key!!")  # without the real key
    raw.close()
    with pytest.raises(LedgerError):
        smoothdp.Accountant.open(target, key=key)


def test_a_keyed_ledger_rewritten_as_keyless_is_refused(target):
    key = b"0123456789abcdef-secret"
    _ledger_with_charges(target, key=key)
    raw = RawLedger(target)
    rows = raw.rows()
    keyless = raw.definition().replace('"hmac-sha256"', '"sha256"')
    raw.set_budget(key_check=None)
    _rechain(raw, keyless, rows, key=None)
    raw.close()
    with pytest.raises(LedgerTampered, match="keyless"):
        smoothdp.Accountant.open(target, key=key)  # whoever holds the key always passes it


def test_postgres_permissions_let_analysts_charge_but_not_erase(postgres_ledger):
    """docs/ledger.md: the grants an analysts' role needs, and what they forbid."""
    import psycopg

    from smoothdp.ledger.postgres import split_target

    url, name, _ = split_target(postgres_ledger)
    smoothdp.Accountant.create(postgres_ledger, epsilon=1.0).close()
    role = f"analyst_{name.replace('-', '_')}"
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN")
        owner.execute(f"GRANT SELECT, INSERT ON smoothdp_charges TO {role}")
        owner.execute(f"GRANT SELECT, UPDATE (head_charges, head_digest) ON smoothdp_budgets TO {role}")
    analyst = postgres_ledger.replace("postgresql://smoothdp@", f"postgresql://{role}@")
    with smoothdp.Accountant.open(analyst) as acc:
        acc.charge(smoothdp.PureDP(0.5), label="by an analyst")
        assert acc.remaining == 0.5
    analyst_url = url.replace("postgresql://smoothdp@", f"postgresql://{role}@")
    with psycopg.connect(analyst_url, autocommit=True) as db:
        for statement in (
            "DELETE FROM smoothdp_charges WHERE budget = %s",
            "UPDATE smoothdp_charges SET label = 'x' WHERE budget = %s",
            "UPDATE smoothdp_budgets SET definition = 'x' WHERE name = %s",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(statement, (name,))


def test_a_postgres_url_names_its_budget_and_hides_its_password():
    from smoothdp.ledger.postgres import split_target

    url, name, shown = split_target("postgresql://dp:s3cret@db.internal:5433/privacy?sslmode=require#census")
    assert url == "postgresql://dp:s3cret@db.internal:5433/privacy?sslmode=require" and name == "census"
    assert (
        shown == "postgresql://dp@db.internal:5433/privacy?sslmode=require#census" and "s3cret" not in shown
    )
    assert split_target("postgresql:///privacy")[1] == "default"
