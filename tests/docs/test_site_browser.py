"""The built documentation site, opened in a real headless browser (Debian's Chromium, driven by Playwright).

* every page whose formulas are written in LaTeX (``TYPESET_PAGES``: the theory pages and the guides
  converted so far; add a page there when its formulas are converted) shows typeset formulas: MathML with a
  real size on screen, and none of the raw TeX (``\\frac``, ``_{``, ``^{``, ``$$``, ``\\(``) in the text a
  reader sees; a broken twin (a converted page with its MathML replaced by the TeX source, as an unrendered
  page shows it) must be caught;
* the API reference shows no raw Sphinx roles (``:func:``, ``:class:``, ...);
* no page makes a request off the machine (the site is served on 127.0.0.1; every request the browser makes,
  scripts, styles, fonts and search index included, must go there).

The site is built once per test session (the ``site`` fixture of tests/docs/conftest.py). Without Chromium
(``apt-get install chromium``; ``.ci/run`` installs it) or Playwright (``docs`` extra) the tests are skipped
with the reason printed.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Chromium flags for a closed network: no background requests to Google's services.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: The pages whose formulas are LaTeX ($…$, $$…$$), relative to docs/: every theory page and guide (add a new
#: one here). Not listed: references.md and the API pages (a Greek letter in a title or citation, no formula).
THEORY_PAGES = [
    "theory/index.md",
    "theory/calibration.md",
    "theory/central-frameworks.md",
    "theory/counting-queries.md",
    "theory/floating-point.md",
    "theory/geo-privacy.md",
    "theory/instance-optimal.md",
    "theory/ledger.md",
    "theory/moments.md",
    "theory/noise.md",
    "theory/privacy-definitions.md",
    "theory/quantiles.md",
    "theory/smooth-sensitivity.md",
    "theory/smoothed-dp.md",
    "theory/tables.md",
    "theory/unbounded.md",
]
GUIDE_PAGES = [
    "index.md",
    "calibration.md",
    "geo.md",
    "smoothed_dp.md",
    "scale.md",
    "reproductions.md",
    "ledger.md",
    "comparison.md",
    "tutorials/geo.md",
    "tutorials/smoothed-dp.md",
    "central.md",
    "means.md",
    "cli.md",
    "getting-started.md",
    "which-mechanism.md",
    "gallery.md",
    "tutorials/central.md",
    "tutorials/tables.md",
    "quantiles.md",
    "tables.md",
]
TYPESET_PAGES = THEORY_PAGES + GUIDE_PAGES
RAW_TEX = re.compile(r"\\frac|\\sqrt|\\mathrm|_\{|\^\{|\$\$|\\\(|\\\[")
RAW_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|ref):`")

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (docs extra)")
if CHROMIUM is None:
    pytest.skip(
        "Chromium is not installed (apt-get install chromium; .ci/run installs it)", allow_module_level=True
    )


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _pages(site: Path, folder: str) -> list[str]:
    return sorted(
        str(page.relative_to(site).parent) + "/"
        for page in (site / folder).rglob("index.html")
        if page.parent != site / folder or folder == ""
    )


def _visit(browser: Any, url: str) -> tuple[str, list[float], list[str]]:
    """The page's visible article text, the on-screen widths of its formulas, and every URL it requested."""
    requested: list[str] = []
    page = browser.new_page()
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url, wait_until="networkidle")
    # the text a reader sees as prose and formulas: code (where `_{` and `^{` are Python) is left out
    page.add_style_tag(content="article pre, article code { display: none !important; }")
    text = page.inner_text("article")
    widths = page.evaluate(
        "() => Array.from(document.querySelectorAll('article math'))"
        ".map(m => m.getBoundingClientRect().width)"
    )
    page.close()
    return text, widths, requested


def _url(page: str) -> str:
    """docs/<page>.md → its address in the built site (mkdocs' directory URLs)."""
    stem = page[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def _typesetting_problems(browser: Any, url: str, *, needs_formulas: bool) -> list[str]:
    text, widths, _ = _visit(browser, url)
    raw = sorted(set(RAW_TEX.findall(text)))
    problems = [f"shows raw TeX {raw} to its readers"] if raw else []
    if needs_formulas and not widths:
        problems.append("has no typeset formula")
    if widths and min(widths) <= 0:
        problems.append("has a formula with no width on screen")
    return problems


def test_the_typeset_pages_exist(site: Path) -> None:
    theory_on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs" / "theory").glob("*.md")}
    assert set(THEORY_PAGES) <= theory_on_disk
    for page in TYPESET_PAGES:
        assert (site / _url(page) / "index.html").is_file(), page


@pytest.mark.parametrize("page", TYPESET_PAGES)
def test_page_shows_typeset_formulas(page: str, site: Path, base_url: str, browser: Any) -> None:
    needs = page.startswith("theory/") and page != "theory/index.md"
    problems = _typesetting_problems(browser, base_url + _url(page), needs_formulas=needs)
    assert not problems, f"{page} {'; '.join(problems)}"


def test_an_unrendered_page_is_caught(site: Path, base_url: str, browser: Any) -> None:
    """Broken twin: the smooth-sensitivity page as it reads when its formulas are not typeset (each MathML
    element replaced by its TeX source) must fail the check that the real page passes."""
    built = (site / "theory" / "smooth-sensitivity" / "index.html").read_text(encoding="utf-8")
    tex = re.compile(r'<math\b.*?<annotation encoding="application/x-tex">(.*?)</annotation>.*?</math>', re.S)
    assert tex.search(built), "the page has no MathML with its TeX source"
    twin = site / "theory" / "broken-twin" / "index.html"
    twin.parent.mkdir(exist_ok=True)
    twin.write_text(tex.sub(lambda m: m.group(1), built), encoding="utf-8")
    try:
        problems = _typesetting_problems(browser, base_url + "theory/broken-twin/", needs_formulas=True)
    finally:
        twin.unlink()
        twin.parent.rmdir()
    assert any("raw TeX" in p for p in problems), problems
    assert any("no typeset formula" in p for p in problems), problems


def test_api_reference_has_no_raw_roles(site: Path, base_url: str, browser: Any) -> None:
    for path in _pages(site, "api"):
        text, _, _ = _visit(browser, base_url + path)
        roles = sorted(set(RAW_ROLE.findall(text)))
        assert not roles, f"{path} prints raw Sphinx roles {roles}"


def test_no_page_requests_anything_off_the_machine(site: Path, base_url: str, browser: Any) -> None:
    every = _pages(site, "")
    assert len(every) >= 20
    for path in every:
        _, _, requested = _visit(browser, base_url + path)
        outside = [u for u in requested if not (u.startswith(base_url) or u.startswith("data:"))]
        assert not outside, f"{path} requested {outside}"
