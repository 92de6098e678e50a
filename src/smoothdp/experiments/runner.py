"""Run experiments: pick the configuration, make the generator, time the run, write the outputs."""

from __future__ import annotations

import time
import traceback
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from smoothdp.experiments._framework import set_figure_dpi, set_progress
from smoothdp.experiments.registry import EXPERIMENTS, get_experiment
from smoothdp.experiments.report import RunRecord, write_index, write_report, write_tables
from smoothdp.rng import default_rng

__all__ = ["MODES", "RunRecord", "experiment_rng", "reproduce"]

#: ``full``: the papers' parameters; ``quick``: reduced (all experiments in minutes); ``tiny``: tests.
MODES = ("full", "quick", "tiny")


def experiment_rng(name: str, seed: int | None) -> np.random.Generator:
    """The generator of one experiment: secure without a seed; with one, a ChaCha20 stream derived from
    the seed and the experiment's name (so an experiment's numbers do not depend on which others ran)."""
    if seed is None:
        return default_rng()
    return default_rng(np.random.SeedSequence(seed, spawn_key=(zlib.crc32(name.encode()),)))


def reproduce(
    names: Sequence[str] | None = None,
    *,
    mode: str = "full",
    out_dir: str | Path = "results",
    seed: int | None = None,
    show_progress: bool = True,
    raise_errors: bool = False,
    figure_dpi: int = 150,
) -> list[RunRecord]:
    """Run the named experiments (all when ``names`` is empty) and write their outputs under ``out_dir``.

    Per experiment: ``out_dir/<name>/`` with PNG figures, one CSV per table and ``report.md``; then
    ``out_dir/index.md`` linking all. An experiment whose library module does not exist yet is skipped
    (and the index says what it waits for); one that raises is recorded as failed unless
    ``raise_errors``. ``figure_dpi`` is the resolution of the PNGs (the documentation's gallery uses a
    lower one, ``benchmarks/gallery_figures.py``).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    set_figure_dpi(figure_dpi)
    selected = [get_experiment(n) for n in (names or list(EXPERIMENTS))]
    out = Path(out_dir)
    set_progress(show_progress)
    records = []
    for experiment in selected:
        missing = experiment.missing()
        if missing:
            records.append(RunRecord(experiment.name, "skipped", reason=f"waiting for {', '.join(missing)}"))
            continue
        module = experiment.load()
        config = module.CONFIGS[mode]
        target = out / experiment.name
        target.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        try:
            outcome = module.run(config, experiment_rng(experiment.name, seed), target)
        except Exception as error:
            if raise_errors:
                raise
            last = traceback.format_exception_only(error)[-1].strip()
            records.append(RunRecord(experiment.name, "failed", time.perf_counter() - start, reason=last))
            continue
        seconds = time.perf_counter() - start
        record = RunRecord(experiment.name, "done", seconds, outcome)
        csv_paths = write_tables(outcome.tables, target)
        record.report = write_report(
            record,
            target,
            title=module.TITLE,
            source=module.SOURCE,
            mode=mode,
            seed=seed,
            config=config,
            csv_paths=csv_paths,
        )
        records.append(record)
    write_index(records, out, mode=mode, seed=seed)
    return records
