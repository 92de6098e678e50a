"""Accuracy of the newer mechanisms (inverse sensitivity, piecewise Laplace) and of ``bounds=None``, side by
side with smoothdp's defaults and with diffprivlib / OpenDP (issue 22).

    nice -n 10 .venv/bin/python -m benchmarks.accuracy_new_mechanisms            # everything, 200 trials
    .venv/bin/python -m benchmarks.accuracy_new_mechanisms --trials 20 --datasets normal_n100 --epsilons 1

Rows: the data sets of ``benchmarks/accuracy`` (medians and deciles) plus skewed, heavy-tailed, small-n,
large-n and tied data. Columns (every release under one ε, substitution neighbours, 200 trials per cell):

* with the data set's public bounds: smoothdp's default call, ``method="exponential"``,
  ``"inverse_sensitivity"``, ``"piecewise_laplace"``; diffprivlib and OpenDP as in ``benchmarks/accuracy``;
* with ``bounds=None`` (no bounds, no scale hint): ``method="auto"``, ``"exponential"`` (the scale-free
  exponential mechanism), ``"unbounded"`` (AboveThreshold on a ladder), and a bounded method inside a private
  range (``"inverse_sensitivity"``, ``"piecewise_laplace"``; deciles: the default); and the old
  ``bounds="private"`` (scale hint 1) for comparison. The competitors keep the data set's (generous) bounds.

Writes ``benchmarks/results/new_mechanisms.{md,csv,json}`` (``*_partial`` for restricted runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from benchmarks.accuracy.datasets import DECILES, Dataset, build_datasets
from benchmarks.accuracy.harness import EPSILONS, CellResult, run_all
from benchmarks.accuracy.methods import Method, competitor_methods

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
EXTRA_SEED = 20250722


def extra_datasets() -> list[Dataset]:
    """Data the issue asks for beyond the original table: skewed, heavy-tailed, small and large n, tied at
    halves and at cents, far from 0. Drawn once from a fixed seed."""
    rng = np.random.default_rng(EXTRA_SEED)
    logn = np.round(rng.lognormal(10.0, 1.0, 1000), 2)  # skewed amounts in cents
    pareto = (rng.pareto(1.5, 2000) + 1.0) * 1000.0  # heavy tail
    cauchy = rng.standard_cauchy(300) * 10.0 + 50.0
    small20 = rng.normal(40.0, 10.0, 20)
    small50 = rng.uniform(20.0, 80.0, 50)
    large = rng.normal(1.2, 1.0, 100_000)
    halves = rng.choice(np.array([0.5, 2.5, 6.0, 9.0, 13.0, 16.5, 23.0]), 1000)
    years = np.round(rng.uniform(1950.0, 2020.0, 1000))
    negative = rng.normal(-50.0, 5.0, 200)
    med = (0.5,)
    wide = (-1e4, 1e4)
    return [
        Dataset("lognormal_cents", logn, (0.0, 1e7), med, "log", "lognormal(10, 1) in cents, n = 1000"),
        Dataset("pareto_1_5", pareto, (0.0, 1e8), med, "log", "1000·(Pareto(1.5) + 1), n = 2000"),
        Dataset("cauchy_n300", cauchy, (-1e6, 1e6), med, "linear", "50 + 10·Cauchy, n = 300"),
        Dataset("normal_n20", small20, (0.0, 1000.0), med, "linear", "N(40, 10), n = 20, bounds (0, 1000)"),
        Dataset("uniform_n50", small50, (0.0, 100.0), med, "linear", "U(20, 80), n = 50, bounds (0, 100)"),
        Dataset("normal_n1e5", large, wide, med, "linear", "N(1.2, 1), n = 100,000"),
        Dataset("halves", halves, (0.0, 125.0), med, "linear", "tied at 0.5, 2.5, 6, 9, 13, 16.5, 23"),
        Dataset("years", years, (0.0, 3000.0), med, "integer", "integer years 1950..2020, n = 1000"),
        Dataset("negative_n200", negative, wide, med, "linear", "N(−50, 5), n = 200"),
        Dataset(
            "halves_deciles", halves, (0.0, 125.0), DECILES, "linear", "half-years, deciles", kind="deciles"
        ),
        Dataset(
            "lognormal_deciles", logn, (0.0, 1e7), DECILES, "log", "lognormal cents, deciles", kind="deciles"
        ),
    ]


def _smoothdp(name: str, method: str | None, bounds: Any, *, label: str) -> Method:
    """A smoothdp column: ``method`` (None: the default), ``bounds`` ("declared": the data set's, None,
    or "private")."""

    def prepare(ds: Dataset, epsilon: float, seed: int) -> Any:
        import smoothdp
        from smoothdp.rng import default_rng

        gen = default_rng(seed)
        b = ds.bounds if bounds == "declared" else bounds
        kw: dict[str, Any] = {} if method is None else {"method": method}
        x, qs = ds.x, list(ds.qs)
        if qs == [0.5]:
            return lambda: np.atleast_1d(smoothdp.median(x, epsilon=epsilon, bounds=b, rng=gen, **kw).value)
        return lambda: np.atleast_1d(
            smoothdp.quantiles(x, qs, epsilon=epsilon, bounds=b, rng=gen, **kw).value
        )

    return Method(name, "smoothdp", "smoothdp", prepare, label)


def methods(kind: str) -> list[Method]:
    out = [_smoothdp("smoothdp", None, "declared", label="default call, declared bounds")]
    if kind == "median":
        for m in ("exponential", "inverse_sensitivity", "piecewise_laplace"):
            out.append(_smoothdp(f"smoothdp:{m}", m, "declared", label=f"method={m!r}, declared bounds"))
        for m in ("auto", "exponential", "unbounded", "inverse_sensitivity", "piecewise_laplace"):
            out.append(_smoothdp(f"none:{m}", m, None, label=f"bounds=None, method={m!r}"))
        out.append(_smoothdp("private:auto", None, "private", label="bounds='private' (scale hint 1)"))
    else:
        out.append(_smoothdp("none:auto", None, None, label="bounds=None, default method in a private range"))
        out.append(_smoothdp("private:auto", None, "private", label="bounds='private' (scale hint 1)"))
    return out + competitor_methods()


def _known_competitor_cells() -> dict[tuple[str, float, str], CellResult]:
    """The competitors' cells already measured (same data sets, bounds, settings, seeds): those of the
    committed accuracy table, then those of an earlier full run of this benchmark."""
    out = {}
    for name in ("accuracy.json", "new_mechanisms_competitors.json"):
        path = RESULTS / name
        if not path.exists():
            continue
        payload = json.loads(path.read_text(encoding="utf-8"))
        cells = payload["cells"] if isinstance(payload, dict) else payload
        for c in cells:
            if c["library"] != "smoothdp" and c["trials"] >= 200:
                out[(c["dataset"], float(c["epsilon"]), c["method"])] = CellResult(**c)
    return out


COMPETITOR_NAMES = ("diffprivlib", "opendp-em", "opendp-tree")


def _summary(cells: list[CellResult]) -> str:
    """Per smoothdp column: on how many cells its median |error| is within 10% of the best competitor's
    (given the data set's bounds) or strictly below it, and within 10% of smoothdp's default call."""
    by: dict[tuple[str, float], dict[str, float]] = {}
    for c in cells:
        by.setdefault((c.dataset, c.epsilon), {})[c.method] = c.median_abs_error
    names = sorted({c.method for c in cells if c.library == "smoothdp"})
    lines = [
        "| column | cells | ≤ 1.1 × best competitor | < best competitor | ≤ 1.1 × smoothdp default |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        total = near = better = near_default = 0
        for row in by.values():
            if name not in row:
                continue
            comp = [row[m] for m in COMPETITOR_NAMES if m in row]
            if not comp:
                continue
            best, mine = min(comp), row[name]
            total += 1
            near += mine <= 1.1 * best or mine <= best + 1e-12
            better += mine < best
            if "smoothdp" in row:
                near_default += mine <= 1.1 * row["smoothdp"] or mine <= row["smoothdp"] + 1e-12
        lines.append(f"| {name} | {total} | {near} | {better} | {near_default} |")
    return "\n".join(lines)


def _table(cells: list[CellResult]) -> str:
    by: dict[tuple[str, float], dict[str, CellResult]] = {}
    names: list[str] = []
    for c in cells:
        by.setdefault((c.dataset, c.epsilon), {})[c.method] = c
        if c.method not in names:
            names.append(c.method)
    lines = ["| data | ε | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for (ds, eps), row in by.items():
        vals = []
        for m in names:
            c = row.get(m)
            vals.append("" if c is None else f"{c.median_abs_error:.3g} ({c.p90_abs_error:.3g})")
        lines.append(f"| {ds} | {eps:g} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--decile-trials", type=int, default=100, help="trials of the decile rows (slow)")
    parser.add_argument("--datasets", type=str, default=None)
    parser.add_argument("--epsilons", type=str, default=None)
    parser.add_argument(
        "--part",
        choices=("all", "smoothdp", "competitors"),
        default="all",
        help="run only smoothdp's columns or only the competitors' (each writes its own part file; a run "
        "with --part all, or --merge, combines the part files present)",
    )
    parser.add_argument("--merge", action="store_true", help="only combine the part files into the table")
    parser.add_argument("--stem", type=str, default=None, help="output file stem (default from the options)")
    parser.add_argument(
        "--fresh-competitors",
        action="store_true",
        help="re-run the competitors on the original data sets too (default: their cells from accuracy.json)",
    )
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.merge:
        known = {} if args.fresh_competitors else _known_competitor_cells()
        datasets = build_datasets() + extra_datasets()
        if args.datasets:
            wanted = {d.strip() for d in args.datasets.split(",")}
            datasets = [d for d in datasets if d.name in wanted]
        epsilons = tuple(float(e) for e in args.epsilons.split(",")) if args.epsilons else EPSILONS
        cells: list[CellResult] = []
        for ds in datasets:
            ms = methods(ds.kind)
            if args.part == "smoothdp":
                ms = [m for m in ms if m.library == "smoothdp"]
            elif args.part == "competitors":
                ms = [m for m in ms if m.library != "smoothdp"]
            keys = [(ds.name, e, m.name) for m in ms for e in epsilons]
            reused = [known[k] for k in keys if k in known]
            ms_run = [m for m in ms if not all((ds.name, e, m.name) in known for e in epsilons)]
            trials = args.trials if ds.kind == "median" else args.decile_trials
            cells += run_all([ds], ms_run, epsilons=epsilons, trials=trials, progress=_flush_print) + reused
        partial = bool(args.datasets or args.epsilons or args.trials < 200)
        stem = args.stem or ("new_mechanisms_partial" if partial else "new_mechanisms") + (
            "" if args.part == "all" else f"_{args.part}"
        )
        _write(stem, cells, args.trials)
        if args.part == "all" or partial or args.stem:
            return 0
    parts = [RESULTS / f"new_mechanisms_{p}.json" for p in ("smoothdp", "competitors")]
    merged = [CellResult(**c) for p in parts if p.exists() for c in json.loads(p.read_text(encoding="utf-8"))]
    have = {(c.dataset, c.epsilon, c.method) for c in merged}
    rows = {(c.dataset, c.epsilon) for c in merged}
    merged += [c for k, c in _known_competitor_cells().items() if k not in have and k[:2] in rows]
    order = {name: i for i, name in enumerate(d.name for d in build_datasets() + extra_datasets())}
    merged.sort(key=lambda c: (order.get(c.dataset, len(order)), c.epsilon))
    _write("new_mechanisms", merged, args.trials)
    return 0


def _flush_print(line: str) -> None:
    print(line, flush=True)


def _write(stem: str, cells: list[CellResult], trials: int) -> None:
    header = (
        "# Newer mechanisms and no bounds: median |error| (90th percentile)\n\n"
        f"Command: `python -m benchmarks.accuracy_new_mechanisms` ({trials} trials per median cell, fewer "
        "for deciles: see `trials` in the JSON); columns `none:*` run with `bounds=None`, competitors "
        "with the data set's bounds; deciles: mean |error| over the nine deciles.\n\n"
    )
    body = _table(cells) + "\n\n## Summary\n\n" + _summary(cells) + "\n"
    (RESULTS / f"{stem}.md").write_text(header + body, encoding="utf-8")
    (RESULTS / f"{stem}.json").write_text(
        json.dumps([replace(c).as_dict() for c in cells], indent=1, default=str), encoding="utf-8"
    )
    print(f"wrote {RESULTS / stem}.md", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
