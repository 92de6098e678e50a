"""mkdocs hook: LaTeX math in the pages and docstrings, typeset at build time as MathML.

``pymdownx.arithmatex`` (generic mode) marks ``$…$`` / ``\\(…\\)`` as ``<span class="arithmatex">`` and
``$$…$$`` / ``\\[…\\]`` as ``<div class="arithmatex">``; this hook converts each one to MathML with
``latex2mathml`` (pure Python) while the site is built. Browsers typeset MathML natively, so the site loads no
script, font or style sheet for its formulas and makes no request off the machine. The TeX source is kept in
an ``<annotation encoding="application/x-tex">`` (not displayed; copy-paste and screen readers can use it).

A formula that ``latex2mathml`` cannot convert fails the build (strict), naming the page and the formula.
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert

#: What arithmatex's generic mode writes: the TeX between \( \) (inline) or \[ \] (display).
_INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)
_DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)


def _mathml(tex_html: str, display: str, where: str) -> str:
    tex = html.unescape(tex_html).strip()
    try:
        math = convert(tex, display=display)
    except Exception as error:  # a formula the converter does not understand: fail the build loudly
        raise ValueError(f"{where}: cannot typeset the formula {tex!r}: {error}") from error
    annotation = f'<annotation encoding="application/x-tex">{html.escape(tex)}</annotation>'
    # <math ...><mrow>…</mrow></math> → <math ...><semantics><mrow>…</mrow><annotation/></semantics></math>
    head, _, rest = math.partition(">")
    body = rest[: -len("</math>")]
    return f"{head}><semantics>{body}{annotation}</semantics></math>"


def on_page_content(html_text: str, page: Any, **_: Any) -> str:
    """Replace every arithmatex span/div of the page by its MathML."""
    where = getattr(getattr(page, "file", None), "src_path", "a page")
    html_text = _DISPLAY.sub(
        lambda m: f'<div class="math-display">{_mathml(m.group(1), "block", where)}</div>', html_text
    )
    return _INLINE.sub(lambda m: _mathml(m.group(1), "inline", where), html_text)
