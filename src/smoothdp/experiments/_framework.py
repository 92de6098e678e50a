"""What every experiment module shares: its result record, progress bars and figure saving.

An experiment module holds, at the top, a frozen ``Config`` dataclass (defaults = the paper's own
parameters) and a ``CONFIGS`` dict with ``"full"``, ``"quick"`` and ``"tiny"`` (tests) instances; then
``run(config, rng, out_dir) -> Outcome`` that computes the tables, draws the figures and states the
headline. The runner (:mod:`smoothdp.experiments.runner`) times it and writes the CSVs and the report.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")  # no display on the machines that run the reproductions

import matplotlib.pyplot as plt
import numpy as np
from tqdm import tqdm

__all__ = [
    "Outcome",
    "Table",
    "numerics_note",
    "plt",
    "progress",
    "save_figure",
    "save_figures",
    "set_figure_dpi",
    "set_progress",
]

T = TypeVar("T")

#: Whether long loops show a progress bar (the runner turns it off for ``--quiet`` and in tests).
_PROGRESS_ENABLED = {"value": True}


#: The resolution of the saved figures (the runner lowers it for the documentation's gallery).
_FIGURE_DPI = {"value": 150}


def set_figure_dpi(dpi: int) -> None:
    """Set the resolution, in dots per inch, at which :func:`save_figure` writes every experiment's PNGs."""
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 20 <= dpi <= 600:
        raise ValueError(f"figure_dpi must be an integer in [20, 600]; got {dpi!r}")
    _FIGURE_DPI["value"] = dpi


def set_progress(enabled: bool) -> None:
    """Turn the tqdm progress bars of all experiments on or off."""
    _PROGRESS_ENABLED["value"] = bool(enabled)


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None) -> Iterator[T]:
    """Wrap a loop over configurations (never over users) in a tqdm bar on stderr."""
    return iter(
        tqdm(
            iterable,
            desc=desc,
            total=total,
            file=sys.stderr,
            leave=False,
            disable=not _PROGRESS_ENABLED["value"],
        )
    )


@dataclass
class Table:
    """Columns of equal length: every number a figure plots, written as one CSV.

    ``columns`` maps a column name to a 1-D sequence (numbers or strings).
    """

    columns: Mapping[str, Sequence[Any] | np.ndarray]
    description: str = ""

    def __post_init__(self) -> None:
        lengths = {name: len(values) for name, values in self.columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"table columns must have equal lengths; got {lengths}")

    @property
    def n_rows(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def column(self, name: str) -> np.ndarray:
        return np.asarray(self.columns[name])

    def rows(self) -> Iterator[list[Any]]:
        names = list(self.columns)
        for i in range(self.n_rows):
            yield [self.columns[name][i] for name in names]


@dataclass
class Outcome:
    """What :func:`run` of an experiment returns.

    Attributes
    ----------
    tables
        Name → :class:`Table`; each becomes ``<name>.csv`` next to the report.
    figures
        PNG files written by the experiment's plot function.
    headline
        The headline comparison in one sentence.
    data
        The data used and its provenance, one line each (say "synthetic" where it is).
    notes
        Caveats and deviations from the paper, one line each.
    extra
        Facts for the report (e.g. the time one configuration took), name → value.
    """

    tables: dict[str, Table]
    figures: list[Path]
    headline: str
    data: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)


def save_figure(fig: Any, out_dir: Path, name: str) -> Path:
    """Save ``fig`` as ``out_dir/name.png`` (150 dpi unless :func:`set_figure_dpi` says) and close it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.png"
    fig.savefig(path, dpi=_FIGURE_DPI["value"], bbox_inches="tight")
    plt.close(fig)
    return path


def save_figures(figures: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Save every figure of ``figures`` (name → matplotlib figure) with :func:`save_figure`, in order."""
    return [save_figure(fig, out_dir, name) for name, fig in figures.items()]


def numerics_note(numerics: str, what: str) -> str:
    """The report's note on how ``what`` (the simulated releases of an experiment) were computed."""
    if numerics == "exact":
        return (
            f"{what.capitalize()} run the library's hardened exact release path (numerics='exact', "
            "the default of every mechanism)."
        )
    return (
        f"{what.capitalize()} run numerics='float' (the papers' floating-point arithmetic): the same "
        "noise distributions as the library's default exact path, which only rounds each report onto a "
        "public grid of spacing at most 2^-36 of its scale (no plotted number moves beyond ~1e-10 "
        "relative) and costs several times the run time here; set the parameter `numerics` to 'exact' "
        "to run it (docs/geo.md, exact release path)."
    )
