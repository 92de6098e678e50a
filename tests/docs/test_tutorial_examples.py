"""The documentation site's examples run as written, and its pages and quoted numbers lead somewhere.

* every ```python block of the home page, getting-started.md, tables.md and tutorials/*.md runs (in a fresh
  namespace, in a temporary working directory), fast;
* the shell example of getting-started.md (`smoothdp release median - ... --json` on standard input) prints
  one JSON object with the public fields;
* a newcomer finds the four tasks of issue 14 in the tutorials (median, deciles, geo heat-map, smoothed δ);
* mkdocs.yml's nav lists every page under docs/ and only existing pages;
* every number in a table of docs/comparison.md that names its source file appears in that file.

The site itself is built by `.ci/run` (`mkdocs build --strict`), which checks links and anchors.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [
    DOCS / "index.md",
    DOCS / "getting-started.md",
    DOCS / "tables.md",
    *sorted((DOCS / "tutorials").glob("*.md")),
]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
#: Generous guard against an example that became slow (each takes well under 2 s on an idle machine).
SECONDS_PER_BLOCK = 15.0


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for index, code in enumerate(PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))):
            found.append((str(page.relative_to(DOCS)), index, code))
    return found


BLOCKS = _blocks()


def test_the_tutorials_exist_and_show_code():
    names = {p.name for p in (DOCS / "tutorials").glob("*.md")}
    assert {"central.md", "geo.md", "smoothed-dp.md"} <= names
    per_page = {page: sum(1 for p, _, _ in BLOCKS if p == page) for page, _, _ in BLOCKS}
    tutorials = ("tutorials/central.md", "tutorials/geo.md", "tutorials/smoothed-dp.md")
    for page in ("getting-started.md", *tutorials):
        assert per_page.get(page, 0) >= 2, f"{page} shows fewer than two runnable examples"


def test_a_newcomer_finds_the_four_tasks():
    """Issue 14: how to release a private median, deciles, a geo heat-map and a smoothed δ."""
    code = {page: "\n".join(c for p, _, c in BLOCKS if p == page) for page, _, _ in BLOCKS}
    assert "smoothdp.median(" in code["getting-started.md"]
    assert "smoothdp.quantiles(" in code["tutorials/central.md"] and "0.9]" in code["tutorials/central.md"]
    assert "GaussianKDE(" in code["tutorials/geo.md"] and ".estimate(" in code["tutorials/geo.md"]
    assert "smoothed_delta(" in code["tutorials/smoothed-dp.md"]


@pytest.mark.parametrize(("page", "index", "code"), BLOCKS, ids=[f"{p}-{i}" for p, i, _ in BLOCKS])
def test_example_runs(page, index, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example may write a file (the heat-map figure)
    start = time.perf_counter()
    exec(compile(code, f"docs/{page}, python block {index}", "exec"), {"__name__": "__docs_example__"})
    elapsed = time.perf_counter() - start
    if "matplotlib" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")
    assert elapsed < SECONDS_PER_BLOCK, f"docs/{page} block {index} took {elapsed:.1f} s"


def _shell_lines() -> list[str]:
    text = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    lines = [line for block in BASH_BLOCK.findall(text) for line in block.splitlines()]
    return [line for line in lines if line.startswith(("printf ", "smoothdp "))]


def test_the_documented_pipeline_prints_json(tmp_path):
    script_dir = Path(sys.executable).parent
    if shutil.which("smoothdp", path=str(script_dir)) is None:
        pytest.skip("the smoothdp command is not installed next to this interpreter")
    lines = _shell_lines()
    json_lines = [line for line in lines if "--json" in line and " - " in line]
    assert json_lines, "getting-started.md shows the stdin + --json pipeline"
    env = {**os.environ, "PATH": f"{script_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line in lines:
        done = subprocess.run(
            line, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{line!r} exited {done.returncode}: {done.stderr}"
        if line in json_lines:
            out = json.loads(done.stdout)
            assert isinstance(out["value"], float) and 0.0 <= out["value"] <= 125.0
            assert out["guarantee"]["neighbours"] == "substitution"
            assert out["simulation"] is False and out["refused"] is False
            assert "not_private" not in out and "smooth_sensitivity" not in done.stdout


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_the_nav_lists_every_page_and_only_existing_ones():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    missing = [page for page in nav if not (DOCS / page).is_file()]
    assert not missing, f"nav entries without a page: {missing}"
    generated = DOCS / "reproductions" / "run"  # local reproduction reports (git-ignored)
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if generated not in p.parents}
    assert not pages - set(nav), f"pages not in mkdocs.yml's nav: {sorted(pages - set(nav))}"
    assert len(nav) == len(set(nav)), "a page appears twice in the nav"


NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:e[+-]\d+)?$")


def test_comparison_numbers_come_from_the_cited_results():
    text = (DOCS / "comparison.md").read_text(encoding="utf-8")
    sections = re.split(r"^Source: `([^`]+)`", text, flags=re.M)
    assert len(sections) >= 3, "comparison.md cites its benchmark files"
    checked = 0
    for source, body in zip(sections[1::2], sections[2::2], strict=True):
        results = (ROOT / source).read_text(encoding="utf-8")
        table = [line for line in body.split("\n## ")[0].splitlines() if line.startswith("|")]
        for row in table[2:]:
            for cell in row.strip("|").split("|")[2:]:  # the data set and ε columns are labels
                value = cell.strip().strip("*")
                if NUMBER.match(value):
                    checked += 1
                    assert re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", results), (
                        f"docs/comparison.md quotes {value} ({row.strip()[:60]}...) "
                        f"but {source} has no such number"
                    )
    assert checked >= 20
