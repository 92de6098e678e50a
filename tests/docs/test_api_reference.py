"""The built API reference (docs/api/*.md rendered by mkdocstrings) says what the code does.

* no raw Sphinx role (``:func:`…```, ``:class:``, ``:mod:``, ``:meth:``, ``:attr:``, ``:data:``, ...) in
  any API page: docs_build/griffe_docstrings.py turns them into links (or code when the target is not on
  the site);
* every documented function's parameter table agrees with ``inspect.signature`` of the real function: a
  parameter with a default is never shown as "required", a required one never shows a default, and each
  parameter has its own row (a grouped numpy entry such as ``rng, accountant`` used to give every name the
  first one's type and default);
* the roles really became links: ``smoothdp.median``'s docstring refers to documented objects.

Reads the site built once per session by the ``site`` fixture (tests/docs/conftest.py); no browser needed.
"""

from __future__ import annotations

import html
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`")
#: One documented object: its heading anchor (the full path) up to the next object's heading.
OBJECT = re.compile(r'<h[2-6] id="(?P<path>smoothdp[\w.]*)" class="doc doc-heading">')
TABLE = re.compile(r'<span class="doc-section-title">Parameters:</span></p>\s*<table>(.*?)</table>', re.S)
ROW = re.compile(r"<tr.*?</tr>", re.S)
CELL = re.compile(r"<td.*?</td>", re.S)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _api_pages(site: Path) -> list[Path]:
    pages = sorted((site / "api").rglob("index.html"))
    assert len(pages) >= 6, pages
    return pages


def _import(path: str) -> Any:
    """The Python object at a dotted path (module, then attributes)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def _parameter_tables(site: Path) -> list[tuple[str, dict[str, str]]]:
    """(object path, {parameter name: shown default}) for every function/method parameter table of the API."""
    found = []
    for page in _api_pages(site):
        text = page.read_text(encoding="utf-8")
        heads = list(OBJECT.finditer(text))
        for k, head in enumerate(heads):
            end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
            body = text[head.end() : end]
            table = TABLE.search(body)
            if table is None:
                continue
            rows: dict[str, str] = {}
            for row in ROW.findall(table.group(1)):
                cells = [_text(c) for c in CELL.findall(row)]
                if len(cells) == 4:
                    rows[cells[0]] = cells[3]
            found.append((head.group("path"), rows))
    return found


def test_no_raw_sphinx_role_in_the_api_reference(site: Path) -> None:
    for page in _api_pages(site):
        source = page.read_text(encoding="utf-8")
        visible = _text(re.sub(r"<(script|style)\b.*?</\1>", "", source, flags=re.S))
        roles = sorted(set(RAW_ROLE.findall(visible)))
        assert not roles, f"{page.relative_to(site)} prints raw Sphinx roles {roles}"


def test_the_parameter_tables_agree_with_the_signatures(site: Path) -> None:
    tables = _parameter_tables(site)
    assert len(tables) >= 30, len(tables)
    checked = 0
    problems = []
    for path, rows in tables:
        try:
            obj = _import(path)
        except (ImportError, AttributeError):
            continue
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        parameters = signature.parameters
        for name, shown in rows.items():
            bare = name.lstrip("*")
            if bare not in parameters:
                continue
            parameter = parameters[bare]
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            checked += 1
            has_default = parameter.default is not parameter.empty
            if has_default and shown == "required":
                problems.append(f"{path}: {name} has the default {parameter.default!r}, shown as required")
            if not has_default and shown != "required":
                problems.append(f"{path}: {name} is required but is shown with the default {shown!r}")
    assert checked >= 100, checked
    assert not problems, "\n".join(problems)


def test_grouped_entries_get_their_own_type_and_default(site: Path) -> None:
    rows = dict(_parameter_tables(site))["smoothdp.central.api.median"]
    assert rows["delta"] == "0.0"
    assert rows["epsilon"] == "required"
    assert rows["accountant"] == "None"


def test_roles_became_links(site: Path) -> None:
    page = (site / "api" / "core" / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="([^"]+)"', page)
    assert len(links) >= 10, links


@pytest.mark.parametrize(
    ("docstring", "expected"),
    [
        (":func:`~smoothdp.median`", '<autoref identifier="X" optional><code>median()</code></autoref>'),
        (":class:`Release`", '<autoref identifier="X" optional><code>Release</code></autoref>'),
        (":mod:`the rng <smoothdp.rng>`", '<autoref identifier="X" optional><code>the rng</code></autoref>'),
    ],
)
def test_role_conversion(docstring: str, expected: str) -> None:
    roles = pytest.importorskip("docs_build.griffe_docstrings", reason="griffe is not installed (docs extra)")
    assert roles.convert_roles(docstring, lambda name: "X") == expected


def test_grouped_parameters_are_split() -> None:
    roles = pytest.importorskip("docs_build.griffe_docstrings", reason="griffe is not installed (docs extra)")
    text = "Summary.\n\nParameters\n----------\nx\n    Data.\nrng, accountant\n    As every release.\n"
    split = roles.split_grouped_parameters(text)
    assert "rng\n    As every release.\naccountant\n    As every release." in split
    assert "x\n    Data." in split
