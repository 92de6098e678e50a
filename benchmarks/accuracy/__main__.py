"""``python -m benchmarks.accuracy``: run the accuracy benchmark and write its table and docs page.

    nice -n 10 .venv/bin/python -m benchmarks.accuracy                 # everything, 200 trials per cell
    .venv/bin/python -m benchmarks.accuracy --trials 20 --datasets normal_n100 --methods smoothdp,diffprivlib
    .venv/bin/python -m benchmarks.accuracy --docs                     # docs page + .md from accuracy.json
    nice -n 10 .venv/bin/python -m benchmarks.accuracy --smoothdp-only --update   # smoothdp changed:
                                   # re-run its columns (~2 min), keep the competitors' cells, rewrite all

A run restricted by ``--datasets``, ``--methods``, ``--epsilons`` or fewer than 200 trials writes
``accuracy_partial.*`` (unless ``--stem`` is given), never the committed ``accuracy.*``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import platform
import sys
from pathlib import Path
from typing import Any

from benchmarks.accuracy.datasets import QUANTILE_DEFINITION, build_datasets
from benchmarks.accuracy.guide import GUIDE_TEMPLATE, fill_guide, load_sources
from benchmarks.accuracy.harness import DEFAULT_TRIALS, EPSILONS, run_all
from benchmarks.accuracy.methods import OPENDP_GRID_SIZE, all_methods
from benchmarks.accuracy.moments import build_moment_datasets, moment_methods
from benchmarks.accuracy.report import (
    bound_widths,
    merge_cells,
    render_docs,
    render_markdown,
    write_csv,
    write_json,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
DOCS_PAGE = ROOT / "docs" / "which-mechanism.md"
MOMENTS_STEM = "accuracy_moments"


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("smoothdp", "diffprivlib", "opendp", "numpy"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def _csv_list(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def _load(stem: str) -> dict[str, Any]:
    with open(RESULTS / f"{stem}.json", encoding="utf-8") as handle:
        payload: dict[str, Any] = json.load(handle)
    meta = payload["meta"]
    if "bounds" not in meta:  # results written before the bounds were recorded
        known = meta.get("datasets", {})
        meta["bounds"] = {d.name: list(d.bounds) for d in build_datasets() if d.name in known}
    return payload


def _write_docs(stem: str) -> None:
    payload = _load(stem)
    cells, meta = payload["cells"], payload["meta"]
    (RESULTS / f"{stem}.md").write_text(render_markdown(cells, meta), encoding="utf-8")
    if stem == "accuracy":
        _write_page()
    print(f"wrote {RESULTS / (stem + '.md')}")


def render_page() -> str:
    """docs/which-mechanism.md: the decision guide (numbers from the results), then the medians and
    quantiles of accuracy.json and the means and variances of accuracy_moments.json."""
    payload = _load("accuracy")
    cells, meta = list(payload["cells"]), dict(payload["meta"])
    if (RESULTS / f"{MOMENTS_STEM}.json").exists():
        moments = _load(MOMENTS_STEM)
        cells += moments["cells"]
        for key in ("datasets", "bounds"):
            meta[key] = {**meta.get(key, {}), **moments["meta"].get(key, {})}
    guide = fill_guide(GUIDE_TEMPLATE.read_text(encoding="utf-8"), load_sources(RESULTS), bound_widths(meta))
    return render_docs(cells, meta, guide)


def _write_page() -> None:
    DOCS_PAGE.write_text(render_page(), encoding="utf-8")
    print(f"wrote {DOCS_PAGE}")


def _settings(methods: list[Any]) -> dict[str, str]:
    """Each method's setting; a name used by both families (the default row) lists both settings."""
    out: dict[str, str] = {}
    for m in methods:
        known = out.get(m.name)
        out[m.name] = m.setting if known is None or m.setting in known else f"{known}; {m.setting}"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.accuracy",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS, help="releases per cell (default 200)")
    parser.add_argument("--epsilons", help="comma-separated ε values (default 0.1,0.5,1,2)")
    parser.add_argument("--datasets", help="comma-separated data set names (default: all)")
    parser.add_argument("--methods", help="comma-separated method names (default: all detected)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the per-cell seeds")
    parser.add_argument("--stem", help="output file stem in benchmarks/results (default accuracy)")
    parser.add_argument(
        "--docs",
        action="store_true",
        help="only rebuild <stem>.md and (stem accuracy) docs/which-mechanism.md from the JSON",
    )
    parser.add_argument("--list", action="store_true", help="list data sets and detected methods, then exit")
    parser.add_argument(
        "--smoothdp-only",
        action="store_true",
        help="run only smoothdp's methods (default + every detected method=)",
    )
    parser.add_argument(
        "--only",
        choices=("quantiles", "moments"),
        help="run one family of rows only: medians and quantiles, or means and variances",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="merge the cells run into the existing <stem>.json (after smoothdp changed, "
        "--smoothdp-only --update re-runs its columns and keeps the competitors')",
    )
    args = parser.parse_args(argv)

    if args.docs:
        _write_docs(args.stem or "accuracy")
        return 0

    # Two families of rows, each with its own methods: quantiles (median, deciles) and moments (mean, var).
    families: list[tuple[list[Any], list[Any]]] = []
    if args.only != "moments":
        families.append((build_datasets(), all_methods()))
    if args.only != "quantiles":
        families.append((build_moment_datasets(), moment_methods()))
    datasets = [d for fam, _ in families for d in fam]
    methods = [m for _, ms in families for m in ms]
    if args.list:
        for ds in datasets:
            print(f"data set {ds.name:28s} n={ds.n:6d} kind={ds.kind} bounds={ds.bounds}")
        for m in methods:
            print(f"method   {m.name:22s} [{m.role}] {m.setting}")
        return 0
    wanted_ds, wanted_m = _csv_list(args.datasets), _csv_list(args.methods)
    epsilons = tuple(float(e) for e in _csv_list(args.epsilons) or []) or EPSILONS
    if wanted_ds:
        unknown = set(wanted_ds) - {d.name for d in datasets}
        if unknown:
            parser.error(f"--datasets: unknown {sorted(unknown)}; known: {[d.name for d in datasets]}")
    if wanted_m:
        unknown = set(wanted_m) - {m.name for m in methods}
        if unknown:
            parser.error(f"--methods: unknown {sorted(unknown)}; available: {[m.name for m in methods]}")
    families = [
        (
            [d for d in fam if not wanted_ds or d.name in wanted_ds],
            [
                m
                for m in ms
                if (not wanted_m or m.name in wanted_m)
                and (not args.smoothdp_only or m.library == "smoothdp")
            ],
        )
        for fam, ms in families
    ]
    datasets = [d for fam, _ in families for d in fam]
    methods = [m for _, ms in families for m in ms]
    restricted = wanted_ds or wanted_m or args.epsilons or args.smoothdp_only or args.only
    full = not restricted and args.trials >= DEFAULT_TRIALS
    stem = args.stem or ("accuracy" if full or args.update else "accuracy_partial")

    command = "python -m benchmarks.accuracy" + (" " + " ".join(sys.argv[1:]) if argv is None else "")
    meta: dict[str, Any] = {
        "command": command.strip(),
        "date": dt.date.today().isoformat(),
        "trials": args.trials,
        "epsilons": list(epsilons),
        "seed": args.seed,
        "versions": _versions(),
        "python": platform.python_version(),
        "definition": f"numpy.quantile(x, q, method={QUANTILE_DEFINITION!r}) = x_(max(1, ⌈qn⌉))",
        "opendp_grid_size": OPENDP_GRID_SIZE,
        "settings": _settings(methods),
        "datasets": {d.name: d.description for d in datasets},
        "bounds": {d.name: list(d.bounds) for d in datasets},
    }
    cells = [
        r.as_dict()
        for fam, ms in families
        for r in run_all(
            fam,
            ms,
            epsilons=epsilons,
            trials=args.trials,
            base_seed=args.seed,
            progress=lambda s: print(s, flush=True),
        )
    ]
    if args.update and (RESULTS / f"{stem}.json").exists():
        old = _load(stem)
        cells = merge_cells(old["cells"], cells)
        merged = dict(old["meta"])
        for key in ("settings", "datasets", "bounds"):
            merged[key] = {**old["meta"].get(key, {}), **meta[key]}
        merged["versions"] = meta["versions"]
        merged["updates"] = [*old["meta"].get("updates", []), f"{meta['date']}: {meta['command']}"]
        meta = merged
    write_csv(cells, RESULTS / f"{stem}.csv")
    write_json(cells, meta, RESULTS / f"{stem}.json")
    (RESULTS / f"{stem}.md").write_text(render_markdown(cells, meta), encoding="utf-8")
    print(f"wrote {RESULTS / stem}.{{csv,json,md}}")
    if stem in ("accuracy", MOMENTS_STEM):
        _write_page()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
