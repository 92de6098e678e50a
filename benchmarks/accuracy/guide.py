"""The decision guide on top of ``docs/which-mechanism.md``: a hand-written template, numbers from the JSON.

The template (``benchmarks/accuracy/decision_guide.md``) is prose and code written by hand; every number it
quotes from the benchmark is a placeholder filled here from the committed results, so the guide cannot drift
from them (a placeholder naming a missing cell is an error, not a blank):

* ``{{err S D E M}}``: the median |error| of method ``M`` on data set ``D`` at ε = ``E`` in source ``S``;
* ``{{p90 S D E M}}``: its 90th-percentile |error|;
* ``{{other S D E}}``: the best other library's median |error| on that cell; ``{{othername S D E}}`` its name;
* ``{{ratio S D E M}}``: ``M``'s median |error| over the best other library's (the template adds ``×``);
* ``{{within F}}``, ``{{better F}}``, ``{{cells F}}``: the done-when counts of family ``F`` (``medians``,
  ``deciles``, ``means``, ``variances`` or ``all``), as in ``accuracy_summary.md``.

Sources ``S``: ``q`` = ``accuracy.json`` (medians, deciles), ``m`` = ``accuracy_moments.json`` (means,
variances), ``nb`` = ``new_mechanisms.json`` (``bounds=None`` columns ``none:*``, competitors given bounds).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.accuracy.report import compare_default, fmt

__all__ = ["GUIDE_TEMPLATE", "SOURCE_FILES", "fill_guide", "load_sources"]

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
GUIDE_TEMPLATE = Path(__file__).with_name("decision_guide.md")
SOURCE_FILES = {"q": "accuracy.json", "m": "accuracy_moments.json", "nb": "new_mechanisms.json"}
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)((?:\s+[^\s}]+)*)\s*\}\}")
Cell = dict[str, Any]


def load_sources(results: Path = RESULTS) -> dict[str, list[Cell]]:
    """The cells of each source (a missing file: no cells; ``new_mechanisms.json`` is a bare list)."""
    out: dict[str, list[Cell]] = {}
    for key, name in SOURCE_FILES.items():
        path = results / name
        if not path.exists():
            out[key] = []
            continue
        payload = json.loads(path.read_text(encoding="utf-8"))
        out[key] = list(payload["cells"] if isinstance(payload, dict) else payload)
    return out


def _cells(sources: dict[str, list[Cell]], src: str, ds: str, eps: str) -> list[Cell]:
    group = [c for c in sources[src] if c["dataset"] == ds and math.isclose(float(c["epsilon"]), float(eps))]
    if not group:
        raise KeyError(f"decision guide: no cells for {ds!r} at ε = {eps} in {SOURCE_FILES[src]}")
    return group


def _method(group: Sequence[Cell], method: str) -> Cell:
    for c in group:
        if c["method"] == method and not c.get("failure"):
            return c
    raise KeyError(
        f"decision guide: no successful cell of {method!r} for {group[0]['dataset']!r} "
        f"at ε = {group[0]['epsilon']}"
    )


def _best_other(group: Sequence[Cell]) -> Cell:
    others = [c for c in group if c["role"] == "competitor" and not c.get("failure")]
    if not others:
        raise KeyError(f"decision guide: no competitor cell for {group[0]['dataset']!r}")
    return min(others, key=lambda c: float(c["median_abs_error"]))


def _family_counts(
    sources: dict[str, list[Cell]], family: str, widths: dict[str, float] | None
) -> tuple[int, int, int]:
    from benchmarks.accuracy.summary import FAMILY_OF_KIND, MIN_TRIALS

    cells = [c for c in sources["q"] + sources["m"] if int(c["trials"]) >= MIN_TRIALS or c.get("failure")]
    kind = {str(c["dataset"]): str(c["kind"]) for c in cells}
    comps = [
        c
        for c in compare_default(cells, widths)
        if family == "all" or FAMILY_OF_KIND.get(kind[c.dataset]) == family
    ]
    return len(comps), sum(c.within for c in comps), sum(c.strictly_better for c in comps)


def _value(
    sources: dict[str, list[Cell]], name: str, args: list[str], widths: dict[str, float] | None
) -> str:
    if name in ("cells", "within", "better"):
        n, w, b = _family_counts(sources, args[0], widths)
        return str({"cells": n, "within": w, "better": b}[name])
    src, ds, eps, *rest = args
    group = _cells(sources, src, ds, eps)
    if name == "err":
        return fmt(float(_method(group, rest[0])["median_abs_error"]))
    if name == "p90":
        return fmt(float(_method(group, rest[0])["p90_abs_error"]))
    if name == "other":
        return fmt(float(_best_other(group)["median_abs_error"]))
    if name == "othername":
        return str(_best_other(group)["method"])
    if name == "ratio":
        mine, theirs = (
            float(_method(group, rest[0])["median_abs_error"]),
            float(_best_other(group)["median_abs_error"]),
        )
        return "1" if mine == theirs else ("inf" if theirs == 0 else fmt(mine / theirs))
    raise KeyError(f"decision guide: unknown placeholder {name!r}")


def fill_guide(template: str, sources: dict[str, list[Cell]], widths: dict[str, float] | None = None) -> str:
    """The template with every ``{{...}}`` replaced by its number from the results; ``widths`` (each data
    set's bound width) lets the counts treat an error below 1e-9 × the width as exact, as the summary does."""
    return PLACEHOLDER.sub(lambda m: _value(sources, m.group(1), m.group(2).split(), widths), template)
