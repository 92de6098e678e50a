"""Every citation leads somewhere: docs sections that exist, proofs that resolve, no private notes."""

from __future__ import annotations

import importlib
import pkgutil
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest

import smoothdp
from smoothdp.mechanism import REGISTRY

# ``import smoothdp`` is lazy: import every library module (not the command line or the reproductions) so
# that the registry is complete whatever tests ran before this one.
for _module in pkgutil.walk_packages(smoothdp.__path__, "smoothdp."):
    if not _module.name.startswith(("smoothdp.cli", "smoothdp.experiments")):
        importlib.import_module(_module.name)

ROOT = Path(__file__).resolve().parents[1]
CITING = [
    *sorted((ROOT / "src").rglob("*.py")),
    *sorted((ROOT / "docs").rglob("*.md")),
    *[ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md") if (ROOT / name).exists()],
]
FORBIDDEN = re.compile(r"notes/[a-z_]+\.md|notes §|seed ?00[0-4]", re.IGNORECASE)
DOCS_LINK = re.compile(r"docs/[\w/.-]+?\.md(?:#[\w-]+)?")


def slugify(heading: str) -> str:
    """The heading anchor that mkdocs (Python-Markdown's toc) gives a heading."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@cache
def anchors(path: Path) -> frozenset[str]:
    found = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        heading = re.match(r"#{1,6}\s+(.*?)\s*(?:\{#([\w-]+)\})?\s*$", line)
        if heading:
            found.add(heading.group(2) or slugify(heading.group(1)))
        found.update(re.findall(r"<a (?:id|name)=\"([\w-]+)\"", line))
    return frozenset(found)


def resolve(link: str) -> str | None:
    """None if ``docs/page.md#anchor`` exists, else what is wrong with it."""
    page, _, anchor = link.partition("#")
    path = ROOT / page
    if not path.is_file():
        return f"no file {page}"
    if anchor and anchor not in anchors(path):
        return f"no section #{anchor} in {page}"
    return None


def test_nothing_cites_the_private_reading_notes_or_seed_tags():
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
        for p in CITING
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert not hits, "citations that lead nowhere:\n" + "\n".join(hits)


def test_every_cited_docs_section_exists():
    broken = []
    for p in CITING:
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            for link in DOCS_LINK.findall(line):
                problem = resolve(link)
                if problem:
                    broken.append(f"{p.relative_to(ROOT)}:{i}: {link}: {problem}")
    assert not broken, "\n".join(broken)


def test_the_registry_is_complete():
    assert len(REGISTRY) >= 30, sorted(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_mechanism_cites_a_proof_that_resolves(name):
    mechanism = REGISTRY[name]
    assert DOCS_LINK.fullmatch(mechanism.proof) and "#" in mechanism.proof, (
        f"{name}.proof must be 'docs/<page>.md#<section>'; got {mechanism.proof!r}"
    )
    assert resolve(mechanism.proof) is None, resolve(mechanism.proof)
    assert mechanism.source, f"{name} names no source"


def test_the_checker_itself_catches_a_broken_link():
    assert slugify("Lemma 5: capped Laplace rule") == "lemma-5-capped-laplace-rule"
    assert slugify("Student's T") == "students-t"
    assert resolve("docs/theory/no-such-page.md") is not None
    assert resolve("docs/theory/calibration.md#no-such-section") is not None
