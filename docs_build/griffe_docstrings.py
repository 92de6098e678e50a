"""Griffe extension for the API reference: docstrings read as the site renders them, without editing ``src/``.

Two rewrites of every docstring of the package, before mkdocstrings parses it (numpy style):

* **Sphinx roles become cross-references.** ``:func:`~smoothdp.median```, ``:class:`Release```,
  ``:mod:``, ``:meth:``, ``:attr:``, ``:data:``, ``:exc:``, ``:obj:`` are written as mkdocs-autorefs'
  *optional* reference ``<autoref identifier="smoothdp.central.api.median" optional>`` around
  ``<code>median()</code>``: a link when the target is documented on the site, inline code otherwise
  (never the raw role text, never a build warning).
  A relative target is looked up as written, under ``smoothdp.``, in the object's module and in its class.
* **Grouped parameter entries are split.** numpy's ``epsilon, delta`` / ``rng, accountant : ...`` entries are
  parsed by griffe as one entry per name that all carry the *first* name's type and default (``delta`` shown
  as required, ``accountant`` as ``SeedLike``); each name gets its own entry (same description), so its type
  and default come from the signature.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

#: ``:role:`target``` or ``:role:`title <target>```, optionally with a ``py:`` domain.
ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|exc|obj|const|type):`([^`]+)`")
#: A section header of a numpy docstring whose entries are ``name : type`` lines with indented descriptions.
_SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Keyword Arguments")
_GROUPED = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)+)(?P<rest>\s*:.*)?$")


def _exists(collection: Any, path: str) -> Any:
    try:
        return collection.get_member(path)
    except Exception:  # griffe raises KeyError / AliasResolutionError / ValueError for unknown paths
        return None


def _target(obj: griffe.Object, collection: Any, name: str) -> str:
    """The full path ``name`` refers to from ``obj`` (``name`` itself when nothing matches)."""
    module = obj.module.path if obj.kind is not griffe.Kind.MODULE else obj.path
    scopes = [name, f"smoothdp.{name}", f"{module}.{name}"]
    if obj.parent is not None:
        scopes.append(f"{obj.parent.path}.{name}")
        if obj.parent.kind is griffe.Kind.CLASS and obj.parent.parent is not None:
            scopes.append(f"{obj.parent.parent.path}.{name}")
    for path in scopes:
        found = _exists(collection, path)
        if found is not None:
            try:
                return str(found.canonical_path)
            except Exception:
                return path
    return name


def convert_roles(text: str, resolve: Any) -> str:
    """Every Sphinx role of ``text`` → an optional autorefs reference (see the module docstring)."""

    def replace(match: re.Match[str]) -> str:
        role, body = match.group(1), match.group(2).strip()
        titled = re.fullmatch(r"(.+?)\s*<(.+)>", body)
        if titled:
            title, target = titled.group(1), titled.group(2)
        else:
            target = body
            title = body.lstrip("~.")
            if body.startswith("~"):
                title = title.rsplit(".", 1)[-1]
            if role in ("func", "meth") and not title.endswith(")"):
                title += "()"
        target = target.lstrip("~.").removesuffix("()")
        identifier = resolve(target)
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>"
        )

    return ROLE.sub(replace, text)


def split_grouped_parameters(text: str) -> str:
    """``a, b : T`` + description → ``a : T`` + description, ``b : T`` + description."""
    lines = text.split("\n")
    out: list[str] = []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and line.strip():
            section = line.strip()
        grouped = _GROUPED.match(line) if section in _SECTIONS else None
        if grouped:
            j = i + 1
            while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
                if not lines[j].strip() and (j + 1 >= len(lines) or not lines[j + 1].startswith((" ", "\t"))):
                    break
                j += 1
            description = lines[i + 1 : j]
            for name in re.split(r"\s*,\s*", grouped.group("names")):
                out.append(name + (grouped.group("rest") or ""))
                out.extend(description)
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class ApiDocstrings(griffe.Extension):
    """Rewrite the package's docstrings once it is loaded (roles → references, grouped entries split)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        collection = loader.modules_collection
        seen: set[int] = set()

        def visit(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None:
                text = split_grouped_parameters(obj.docstring.value)
                obj.docstring.value = convert_roles(text, lambda name: _target(obj, collection, name))
            for member in obj.members.values():
                if not member.is_alias:
                    visit(member)  # type: ignore[arg-type]

        visit(pkg)
