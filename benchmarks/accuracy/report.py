"""Write the results: CSV (one row per cell), JSON (cells + settings), the markdown table with its
comparison section, and the generated docs page ``docs/which-mechanism.md``.

Everything here is computed from the list of cell dicts, so the markdown and the docs page can be rebuilt
from ``accuracy.json`` alone (``python -m benchmarks.accuracy --docs``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "TOLERANCE",
    "Comparison",
    "compare_default",
    "fmt",
    "render_docs",
    "render_markdown",
    "trial_counts",
    "write_csv",
    "write_json",
]

#: smoothdp's default must be within this factor of the best competitor's median |error| (issue 12).
TOLERANCE = 1.10
#: ... or below this fraction of the bounds' width: numerically exact (e.g. 4e-9 against 0 on tied data).
EXACT_SLACK = 1e-9

Cell = dict[str, Any]


def fmt(v: float) -> str:
    """Three significant digits, plain below 1e5, 'inf'/'—' for infinite/missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.2e}"
    return f"{v:.3g}"


def _key(c: Cell) -> tuple[str, float]:
    return (str(c["dataset"]), float(c["epsilon"]))


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


_ROLE_RANK = {"default": 0, "smoothdp": 1, "competitor": 2}


def method_columns(cells: Sequence[Cell]) -> list[str]:
    """Method names in table order: smoothdp's default, smoothdp's named methods, the competitors."""
    first: dict[str, tuple[int, int]] = {}
    for i, c in enumerate(cells):
        first.setdefault(str(c["method"]), (_ROLE_RANK.get(str(c["role"]), 3), i))
    return sorted(first, key=lambda m: first[m])


def merge_cells(old: Sequence[Cell], new: Sequence[Cell]) -> list[Cell]:
    """``old`` with every (data set, ε, method) cell that ``new`` has replaced by the new one; new cells
    appended."""
    fresh = {(str(c["dataset"]), float(c["epsilon"]), str(c["method"])): c for c in new}
    out = [fresh.pop((str(c["dataset"]), float(c["epsilon"]), str(c["method"])), c) for c in old]
    return out + list(fresh.values())


@dataclass(frozen=True)
class Comparison:
    dataset: str
    epsilon: float
    default: float
    best_competitor: str
    best_competitor_error: float
    best_smoothdp: str
    best_smoothdp_error: float
    default_out_of_bounds: float
    width: float = math.inf

    @property
    def ratio(self) -> float:
        if self.best_competitor_error == 0:
            return 1.0 if self.default == 0 else math.inf
        return self.default / self.best_competitor_error

    @property
    def within(self) -> bool:
        exact = self.default <= EXACT_SLACK * self.width if math.isfinite(self.width) else False
        return exact or self.default <= TOLERANCE * self.best_competitor_error

    @property
    def strictly_better(self) -> bool:
        return self.default < self.best_competitor_error


def compare_default(cells: Sequence[Cell], widths: dict[str, float] | None = None) -> list[Comparison]:
    """Per (data set, ε): smoothdp's default against the best competitor (smallest median |error|).
    ``widths``: each data set's bound width (for :data:`EXACT_SLACK`); without it only the ratio counts."""
    groups: dict[tuple[str, float], list[Cell]] = {}
    for c in cells:
        groups.setdefault(_key(c), []).append(c)
    out = []
    for (ds, eps), group in groups.items():
        default = [c for c in group if c["role"] == "default"]
        competitors = [c for c in group if c["role"] == "competitor" and not c.get("failure")]
        ours = [c for c in group if c["library"] == "smoothdp" and not c.get("failure")]
        if not default or not competitors:
            continue
        best = min(competitors, key=lambda c: float(c["median_abs_error"]))
        best_ours = min(ours, key=lambda c: float(c["median_abs_error"])) if ours else default[0]
        out.append(
            Comparison(
                dataset=ds,
                epsilon=eps,
                default=float(default[0]["median_abs_error"]),
                best_competitor=str(best["method"]),
                best_competitor_error=float(best["median_abs_error"]),
                best_smoothdp=str(best_ours["method"]),
                best_smoothdp_error=float(best_ours["median_abs_error"]),
                default_out_of_bounds=float(default[0]["out_of_bounds"]),
                width=(widths or {}).get(ds, math.inf),
            )
        )
    return out


def bound_widths(meta: dict[str, Any]) -> dict[str, float]:
    return {name: float(hi) - float(lo) for name, (lo, hi) in meta.get("bounds", {}).items()}


def write_csv(cells: Sequence[Cell], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(cells[0]))
        writer.writeheader()
        writer.writerows(cells)


def write_json(cells: Sequence[Cell], meta: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"meta": meta, "cells": list(cells)}, handle, indent=1, default=str)
        handle.write("\n")


def _table(cells: Sequence[Cell], methods: list[str]) -> list[str]:
    """Rows (data set, ε) × columns (methods): 'median (p90)'; the smallest median in bold."""
    lines = [
        "| data set | ε | " + " | ".join(methods) + " |",
        "|---|---|" + "---|" * len(methods),
    ]
    by_key: dict[tuple[str, float], dict[str, Cell]] = {}
    for c in cells:
        by_key.setdefault(_key(c), {})[str(c["method"])] = c
    for (ds, eps), row in by_key.items():
        ok = [float(c["median_abs_error"]) for c in row.values() if not c.get("failure")]
        best = min(ok) if ok else math.nan
        entries = []
        for m in methods:
            cell = row.get(m)
            if cell is None:
                entries.append("")
                continue
            c = cell
            if c.get("failure"):
                entries.append("n/a" if _not_applicable(c) else "failed")
                continue
            text = f"{fmt(float(c['median_abs_error']))} ({fmt(float(c['p90_abs_error']))})"
            if float(c["median_abs_error"]) == best:
                text = f"**{text}**"
            if float(c["out_of_bounds"]) > 0:
                text += f" ⚠{float(c['out_of_bounds']):.0%} out"
            entries.append(text)
        lines.append(f"| {ds} | {eps:g} | " + " | ".join(entries) + " |")
    return lines


def _runtime_table(cells: Sequence[Cell], methods: list[str]) -> list[str]:
    lines = ["| data set | n | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    by_ds: dict[str, dict[str, list[Cell]]] = {}
    for c in cells:
        by_ds.setdefault(str(c["dataset"]), {}).setdefault(str(c["method"]), []).append(c)
    for ds, per in by_ds.items():
        n = next(iter(per.values()))[0]["n"]
        entries = []
        for m in methods:
            group = per.get(m, [])
            times = [float(c["ms_per_release"]) for c in group if int(c["trials"]) > 0]
            setups = [float(c["setup_seconds"]) for c in group]
            if not times:
                entries.append("")
                continue
            text = f"{fmt(sorted(times)[len(times) // 2])}"
            if setups and max(setups) > 0.05:
                text += f" (+{fmt(max(setups))} s setup)"
            entries.append(text)
        lines.append(f"| {ds} | {n} | " + " | ".join(entries) + " |")
    return lines


def render_markdown(cells: Sequence[Cell], meta: dict[str, Any]) -> str:
    methods = method_columns(cells)
    comps = compare_default(cells, bound_widths(meta))
    lines = [
        "# Accuracy of private medians, quantiles, means and variances: smoothdp, diffprivlib and OpenDP",
        "",
        f"Generated by `{meta.get('command', 'python -m benchmarks.accuracy')}` on {meta.get('date', '?')} "
        f"({meta.get('trials', '?')} trials per cell; versions: {meta.get('versions', {})}). "
        "Do not edit by hand."
        + (f" Cells updated since: {'; '.join(meta['updates'])}." if meta.get("updates") else ""),
        "",
        "Each entry: **median |error| (90th-percentile |error|)** over the trials, against the true "
        f"statistic {meta.get('definition', '')}. Deciles: the per-trial error is the mean |error| over "
        "q = 0.1, ..., 0.9, all released under ONE total ε. Neighbours: substitution (one record "
        "changed, n public) for every method. Bold: the smallest median |error| of the row. "
        "⚠ x% out: the share of releases with a value outside the declared bounds.",
        "",
    ]
    for name, setting in meta.get("settings", {}).items():
        lines.append(f"- `{name}`: {setting}")
    lines += ["", "## Data sets", ""]
    for name, desc in meta.get("datasets", {}).items():
        lines.append(f"- `{name}`: {desc}")
    for title, family in _families(cells):
        table = _table(family, method_columns(family))
        lines += ["", f"## Median |error| (90th percentile): {title}", "", *table, ""]
    lines += [
        "## Runtime: median milliseconds per release (one-off setup per cell in brackets)",
        "",
        "Seeded generators everywhere (smoothdp's secure default generator is slower per draw; OpenDP "
        "always uses its own secure sampler). OpenDP's setup is building the measurement and choosing "
        "its noise scale by binary search, once per query.",
        "",
        *_runtime_table(cells, methods),
        "",
    ]
    lines += _comparison_section(comps)
    for title, family in _families(cells):
        names = {str(c["dataset"]) for c in family}
        part = [c for c in comps if c.dataset in names]
        if part and len(part) < len(comps):
            better = sum(c.strictly_better for c in part)
            lines.append(
                f"- {title}: {len(part)} cells; within {TOLERANCE - 1:.0%}: {sum(c.within for c in part)}; "
                f"strictly better: {better} ({better / len(part):.0%})."
            )
    failures = [c for c in cells if c.get("failure") and not _not_applicable(c)]
    if failures:
        lines += ["", "## Failures", ""]
        for c in failures:
            lines.append(f"- {c['dataset']} ε={c['epsilon']:g} `{c['method']}`: {c['failure']}")
    return "\n".join(lines) + "\n"


#: Row families with their own table: (title, kinds).
FAMILIES = (("medians and quantiles", ("median", "deciles")), ("means and variances", ("mean", "var")))


def _families(cells: Sequence[Cell]) -> list[tuple[str, list[Cell]]]:
    """The cells split by family (each its own table and columns); kinds of no family go last."""
    out = []
    known: set[str] = set()
    for title, kinds in FAMILIES:
        known.update(kinds)
        group = [c for c in cells if c.get("kind", "median") in kinds]
        if group:
            out.append((title, group))
    rest = [c for c in cells if c.get("kind", "median") not in known]
    return out + ([("other", rest)] if rest else [])


def _not_applicable(cell: Cell) -> bool:
    """A method that does not apply to the cell (e.g. a several-quantile method on a single median)."""
    return "method must be one of" in str(cell.get("failure", ""))


def _comparison_section(comps: list[Comparison]) -> list[str]:
    if not comps:
        return []
    lost = [c for c in comps if not c.within]
    better = [c for c in comps if c.strictly_better]
    oob = [c for c in comps if c.default_out_of_bounds > 0]
    lines = [
        "## smoothdp's default against the best competitor",
        "",
        f"Target (issue 12): within {TOLERANCE - 1:.0%} of the best of diffprivlib / OpenDP / OpenDP's tree "
        "in median |error| on every cell, strictly better on at least half, no default release outside "
        f"the bounds. A median |error| below {EXACT_SLACK:g} × the bounds' width counts as exact (within).",
        "",
        f"- cells: {len(comps)}; within {TOLERANCE - 1:.0%} (or better): {len(comps) - len(lost)}; "
        f"strictly better: {len(better)} ({len(better) / len(comps):.0%}); "
        f"cells with default releases outside the bounds: {len(oob)}.",
        "",
        f"### Cells where smoothdp's default is not within {TOLERANCE - 1:.0%} of the best competitor",
        "",
    ]
    if not lost:
        lines.append("None.")
        return lines
    lines += [
        "| data set | ε | smoothdp default | best competitor | its error | ratio | best smoothdp method | "
        "its error | default out of bounds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in sorted(lost, key=lambda c: -c.ratio):
        lines.append(
            f"| {c.dataset} | {c.epsilon:g} | {fmt(c.default)} | {c.best_competitor} | "
            f"{fmt(c.best_competitor_error)} | {fmt(c.ratio)}× | {c.best_smoothdp} | "
            f"{fmt(c.best_smoothdp_error)} | {c.default_out_of_bounds:.0%} |"
        )
    return lines


def trial_counts(cells: Sequence[Cell]) -> str:
    """The releases per cell of ``cells``: "200", or "200–1000" when they were run with different counts."""
    counts = sorted({int(c["trials"]) for c in cells})
    if not counts:
        return "?"
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def _trial_counts(cells: Sequence[Cell], kinds: tuple[str, ...], *, exclude: bool = False) -> str:
    """:func:`trial_counts` of the rows whose kind is in ``kinds`` (or not, with ``exclude``)."""
    return trial_counts([c for c in cells if (str(c["kind"]) in kinds) != exclude])


def render_docs(cells: Sequence[Cell], meta: dict[str, Any], guide: str | None = None) -> str:
    """The 'which mechanism should I use' page: the decision ``guide`` (hand-written, numbers already filled
    in by :func:`benchmarks.accuracy.guide.fill_guide`) on top, then for each data set the most accurate
    smoothdp method and the most accurate method overall at each ε, with their median |error|."""
    datasets = _ordered(str(c["dataset"]) for c in cells)
    epsilons = sorted({float(c["epsilon"]) for c in cells})
    descriptions = meta.get("datasets", {})
    comps = {(c.dataset, c.epsilon): c for c in compare_default(cells, bound_widths(meta))}
    lines = [
        "# Which mechanism should I use?",
        "",
        "<!-- GENERATED by `python -m benchmarks.accuracy --docs` from benchmarks/accuracy/decision_guide.md "
        "and benchmarks/results/accuracy.json, accuracy_moments.json: do not edit by hand. -->",
        "",
    ]
    if guide:
        lines += [guide.strip(), "", "## The measurements", ""]
    lines += [
        "Measured, not argued: the accuracy benchmark (`benchmarks/accuracy/`, table in "
        "`benchmarks/results/accuracy.md`) releases each statistic "
        f"{_trial_counts(cells, ('mean', 'var'), exclude=True)} times per cell on fixed data and reports the "
        "median absolute error against the true quantile (numpy's `inverted_cdf`), under substitution "
        "neighbours, for smoothdp and for diffprivlib and OpenDP called as a careful user would call them "
        "(means and variances: against `numpy.mean` and `numpy.var(ddof=1)`, "
        f"{_trial_counts(cells, ('mean', 'var'))} releases per cell; each cell's count is in the JSON).",
        "",
        "## Winners by data set" if guide else "## Short answer",
        "",
    ]
    lines += _short_answer(cells, datasets, epsilons)
    lines += ["", "## Per data set", ""]
    for ds in datasets:
        lines += [f"### {ds}", "", descriptions.get(ds, ""), ""]
        lines += [
            "| ε | smoothdp default | best smoothdp method | best overall | best competitor |",
            "|---|---|---|---|---|",
        ]
        for eps in epsilons:
            group = [
                c for c in cells if c["dataset"] == ds and float(c["epsilon"]) == eps and not c.get("failure")
            ]
            if not group:
                continue
            default = [c for c in group if c["role"] == "default"]
            ours = [c for c in group if c["library"] == "smoothdp"]
            theirs = [c for c in group if c["role"] == "competitor"]

            d = f"{fmt(float(default[0]['median_abs_error']))}" if default else "—"
            comp = comps.get((ds, eps))
            if comp is not None and not comp.within:
                d += f" ({fmt(comp.ratio)}× the best competitor)"
            lines.append(f"| {eps:g} | {d} | {_best(ours)} | {_best(group)} | {_best(theirs)} |")
        lines.append("")
    lines += [
        "## Reproduce",
        "",
        "```bash",
        "nice -n 10 .venv/bin/python -m benchmarks.accuracy   # all cells, 200 trials; rewrites this page",
        ".venv/bin/python -m benchmarks.accuracy --docs       # this page only, from accuracy.json",
        "```",
    ]
    return "\n".join(lines) + "\n"


def _best(cs: list[Cell]) -> str:
    if not cs:
        return "—"
    b = min(cs, key=lambda c: float(c["median_abs_error"]))
    return f"`{b['method']}` {fmt(float(b['median_abs_error']))}"


def _short_answer(cells: Sequence[Cell], datasets: list[str], epsilons: list[float]) -> list[str]:
    """One line per data set: which smoothdp method won most ε, and how the default fared."""
    lines = []
    for ds in datasets:
        wins: dict[str, int] = {}
        for eps in epsilons:
            ours = [
                c
                for c in cells
                if c["dataset"] == ds
                and float(c["epsilon"]) == eps
                and c["library"] == "smoothdp"
                and not c.get("failure")
            ]
            if ours:
                b = min(ours, key=lambda c: float(c["median_abs_error"]))
                wins[str(b["method"])] = wins.get(str(b["method"]), 0) + 1
        if not wins:
            continue
        top = max(wins, key=lambda k: wins[k])
        overall = []
        for eps in epsilons:
            group = [
                c for c in cells if c["dataset"] == ds and float(c["epsilon"]) == eps and not c.get("failure")
            ]
            if group:
                b = min(group, key=lambda c: float(c["median_abs_error"]))
                overall.append(f"ε={eps:g}: `{b['method']}`")
        lines.append(
            f"- **{ds}**: best smoothdp method `{top}` (most accurate of smoothdp's at {wins[top]} of "
            f"{len(epsilons)} ε); most accurate overall: {', '.join(overall)}."
        )
    return lines
