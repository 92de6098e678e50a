"""docs/ledger.md's examples run verbatim: the file ledger in a temporary folder, and the PostgreSQL example
against the session's real throw-away cluster (its URL given the way the page says: ``SMOOTHDP_LEDGER``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import smoothdp

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_ledger_page_runs_verbatim(postgres_ledger, tmp_path, monkeypatch, capsys):
    assert len(BLOCKS) >= 2, "docs/ledger.md shows a file ledger and a PostgreSQL ledger"
    with smoothdp.Accountant.create(postgres_ledger, epsilon=2.0):  # the budget the page opens
        pass
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SMOOTHDP_LEDGER", postgres_ledger)
    namespace: dict[str, object] = {"__name__": "__docs_example__"}
    for index, code in enumerate(BLOCKS):
        exec(compile(code, f"docs/ledger.md, python block {index}", "exec"), namespace)
    assert (tmp_path / "budget.db").exists()
    printed = capsys.readouterr().out
    assert printed.strip(), "the examples print what they show"
    acc = namespace["acc"]
    assert isinstance(acc, smoothdp.Accountant) and acc.total.epsilon == pytest.approx(2.0)
    acc.close()
