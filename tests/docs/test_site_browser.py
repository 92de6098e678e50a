"""The built documentation site, opened in a real headless browser (Debian's Chromium, driven by Playwright).

* every theory page shows typeset formulas: MathML with a real size on screen, and none of the raw TeX
  (``\\frac``, ``_{``, ``^{``, ``$$``, ``\\(``) in the text a reader sees;
* the API reference shows no raw Sphinx roles (``:func:``, ``:class:``, ...);
* no page makes a request off the machine (the site is served on 127.0.0.1; every request the browser makes,
  scripts, styles, fonts and search index included, must go there).

The site is built once per test session with ``mkdocs build --strict`` into a temporary folder. Without
Chromium (``apt-get install chromium``; ``.ci/run`` installs it) or Playwright (the ``docs`` extra) the tests are
skipped with the reason printed.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
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
RAW_TEX = re.compile(r"\\frac|\\sqrt|\\mathrm|_\{|\^\{|\$\$|\\\(|\\\[")
RAW_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|ref):`")

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (docs extra)")
if CHROMIUM is None:
    pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ},
    )
    return out


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
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
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
    text = page.inner_text("article")
    widths = page.evaluate("() => Array.from(document.querySelectorAll('article math')).map(m => m.getBoundingClientRect().width)")
    page.close()
    return text, widths, requested


def test_theory_pages_show_typeset_formulas(site: Path, base_url: str, browser: Any) -> None:
    theory = _pages(site, "theory")
    assert len(theory) >= 8, theory
    for path in theory:
        text, widths, _ = _visit(browser, base_url + path)
        raw = sorted(set(RAW_TEX.findall(text)))
        assert not raw, f"{path} shows raw TeX {raw} to its readers"
        if path != "theory/":
            assert widths, f"{path} has no typeset formula"
            assert min(widths) > 0, f"{path} has a formula with no width on screen"


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
