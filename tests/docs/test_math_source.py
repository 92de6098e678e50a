"""The LaTeX of the documentation says what its writer meant: mistakes that the MathML converter accepts
silently and the browser test cannot see (the result is typeset, only wrong).

* an exponent or subscript of several characters without braces: ``2^1021`` is typeset as 2¹021 and
  ``10^-741`` as 10⁻741 (TeX takes one character after ``^`` and ``_``);
* escaped braces after a command that takes an argument: ``\\vec\\{\\pi \\}`` shows the braces instead of an
  arrow over π (``\\max\\{…\\}``, a set, is right).

Formulas are the ``$…$`` and ``$$…$$`` spans of docs/**/*.md outside code blocks and code spans, as
pymdownx.arithmatex finds them. A broken twin (each mistake planted in a formula) must be caught.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.S)
FORMULA = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)(.+?)(?<![\s\\])\$", re.S)
#: ^ or _ followed by two or more characters that TeX would split: 2^1021, 10^-741, e^-40, x_10
UNBRACED = re.compile(r"[\^_](?:-[0-9A-Za-z.]+|[0-9]{2,}(?:\.[0-9]+)?)")
#: a command that takes an argument, given \{ (a literal brace) instead: \vec\{\pi \}, \dot\{w\}
ESCAPED_ARGUMENT = re.compile(
    r"\\(?:vec|hat|tilde|bar|dot|ddot|overline|widehat|widetilde|math[a-z]+|operatorname|text[a-z]*|sqrt|frac)\\\{"
)


def formulas(text: str) -> list[str]:
    """The TeX of every formula of a Markdown page."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    return [m.group(1) or m.group(2) for m in FORMULA.finditer(text)]


def mistakes(tex: str) -> list[str]:
    return UNBRACED.findall(tex) + ESCAPED_ARGUMENT.findall(tex)


@pytest.mark.parametrize("page", sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")))
def test_formulas_have_no_silent_tex_mistakes(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    found = [(tex, bad) for tex in formulas(text) if (bad := mistakes(tex))]
    assert not found, f"{page}: {found}"


def test_a_planted_mistake_is_caught() -> None:
    """Broken twin: the mistakes the first conversion made, planted in a page, are found; their corrected
    forms and code are not."""
    page = (
        "clipped into $[-2^1021, 2^{1021}]$, down to $10^-741$, $\\vec\\{\\pi \\}$\n"
        "$$\nx_{(j)} = e^{-\\beta k} \\sum_{1 \\le k \\le 2^20} y\n$$\n"
        "code `x_10 = 2^1021` and\n```python\ny = 2^-30\n```\n"
    )
    found = [bad for tex in formulas(page) for bad in mistakes(tex)]
    assert found == ["^1021", "^-741", "\\vec\\{", "^20"], found
    right = "2^{1021} 10^{-741} \\vec{\\pi} x_{(j)} e^{-\\beta k} 2^{-53} x_1 e^\\varepsilon \\max\\{a, b\\}"
    assert not mistakes(right)
