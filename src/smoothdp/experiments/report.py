"""Writing the outputs of a reproduction: one CSV per table, one Markdown report per experiment, an index."""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from smoothdp.experiments._framework import Outcome, Table

__all__ = ["RunRecord", "format_seconds", "write_index", "write_report", "write_tables"]


@dataclass
class RunRecord:
    """What happened to one experiment: ``status`` is ``done``, ``skipped`` (a module it needs is
    missing) or ``failed`` (an exception; ``reason`` holds its last line).

    It lives here, with the writers that read it, so that :mod:`smoothdp.experiments.runner` imports this
    module and not the other way round (``outcome`` is set exactly when ``status`` is ``done``).
    """

    name: str
    status: str
    seconds: float = 0.0
    outcome: Outcome | None = None
    reason: str = ""
    report: Path | None = None


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return repr(float(value)) if math.isfinite(value) else str(float(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def write_tables(tables: dict[str, Table], out_dir: Path) -> list[Path]:
    """Write each table as ``out_dir/<name>.csv`` (full float precision); return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, table in tables.items():
        path = out_dir / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(table.columns))
            for row in table.rows():
                writer.writerow([_cell(v) for v in row])
        paths.append(path)
    return paths


def format_seconds(seconds: float) -> str:
    """``12.3 s`` or ``4 min 05 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:04.1f} s"


def _value_text(value: Any) -> str:
    if isinstance(value, tuple | list):
        if len(value) > 12:
            return f"{len(value)} values from {_value_text(value[0])} to {_value_text(value[-1])}"
        return ", ".join(_value_text(v) for v in value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _randomness_text(seed: int | None) -> str:
    if seed is None:
        return (
            "secure: the default cryptographically secure generator (AES-128-CTR, or ChaCha20 without "
            "AES-NI) keyed from the operating system (no seed), so a rerun gives "
            "different numbers; pass `--seed N` for a reproducible run."
        )
    return (
        f"reproducible: `--seed {seed}` (ChaCha20 through `smoothdp.rng.default_rng`, one stream per "
        "experiment derived from the seed and its name). Seeded randomness is for simulations only."
    )


def write_report(
    record: RunRecord,
    out_dir: Path,
    *,
    title: str,
    source: str,
    mode: str,
    seed: int | None,
    config: Any,
    csv_paths: Sequence[Path],
) -> Path:
    """Write ``out_dir/report.md`` for one experiment and return its path."""
    outcome = record.outcome
    if outcome is None:
        raise ValueError(f"experiment {record.name!r} has no outcome (status {record.status!r})")
    lines = [f"# {record.name}: {title}", "", f"Source: {source}.", ""]
    lines += ["## Headline", "", outcome.headline, ""]
    reduced = (
        " (reduced: fewer repetitions, smaller grids; `smoothdp reproduce` without `--quick` uses the "
        "papers' parameters)"
    )
    lines += [
        "## Run",
        "",
        f"- Mode: **{mode}**" + ("" if mode == "full" else reduced),
        f"- Wall time: {format_seconds(record.seconds)} on {os.cpu_count()} cores "
        f"({platform.python_implementation()} {platform.python_version()}, numpy {np.__version__})",
        f"- Randomness: {_randomness_text(seed)}",
        f"- Finished: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        "",
    ]
    for key, value in outcome.extra.items():
        lines.append(f"- {key}: {_value_text(value)}")
    if outcome.extra:
        lines.append("")
    lines += ["## Parameters", "", "| parameter | value |", "|---|---|"]
    for field in dataclasses.fields(config):
        lines.append(f"| `{field.name}` | {_value_text(getattr(config, field.name))} |")
    lines += ["", "## Data and provenance", ""]
    lines += [f"- {line}" for line in outcome.data] or ["- none (analytic)"]
    lines += ["", "## Figures", ""]
    for figure in outcome.figures:
        lines += [f"![{figure.stem}]({figure.name})", ""]
    lines += ["## Tables (every plotted number)", ""]
    for path, (_name, table) in zip(csv_paths, outcome.tables.items(), strict=True):
        description = f": {table.description}" if table.description else ""
        lines.append(f"- [`{path.name}`]({path.name}) ({table.n_rows} rows){description}")
    if outcome.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}" for note in outcome.notes]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_index(records: Sequence[RunRecord], out_dir: Path, *, mode: str, seed: int | None) -> Path:
    """Write ``out_dir/index.md`` linking every experiment's report, with its status and runtime."""
    total = sum(r.seconds for r in records)
    lines = [
        "# smoothdp reproductions",
        "",
        f"Mode: **{mode}**. Total wall time: {format_seconds(total)} on {os.cpu_count()} cores. "
        f"Randomness: {_randomness_text(seed)}",
        "",
        "| experiment | status | time | headline |",
        "|---|---|---|---|",
    ]
    for r in records:
        if r.status == "done" and r.outcome is not None:
            link = f"[{r.name}]({r.name}/report.md)"
            text = r.outcome.headline.replace("|", "/")
        else:
            link, text = r.name, r.reason.replace("|", "/")
        lines.append(f"| {link} | {r.status} | {format_seconds(r.seconds)} | {text} |")
    path = out_dir / "index.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
