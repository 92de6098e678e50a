"""Reproductions of the source papers' experiments (the ``smoothdp reproduce`` command).

One module per figure family; :data:`EXPERIMENTS` lists them. :func:`reproduce` runs some or all and
writes, per experiment, PNG figures, a CSV of every plotted number and a Markdown report, plus an index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = [
    "EXPERIMENTS",
    "MODES",
    "Experiment",
    "Outcome",
    "RunRecord",
    "Table",
    "UnknownExperimentError",
    "get_experiment",
    "reproduce",
]

_EXPORTS = {
    "Outcome": "smoothdp.experiments._framework",
    "Table": "smoothdp.experiments._framework",
    "EXPERIMENTS": "smoothdp.experiments.registry",
    "Experiment": "smoothdp.experiments.registry",
    "UnknownExperimentError": "smoothdp.experiments.registry",
    "get_experiment": "smoothdp.experiments.registry",
    "MODES": "smoothdp.experiments.runner",
    "RunRecord": "smoothdp.experiments.runner",
    "reproduce": "smoothdp.experiments.runner",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = (
    "_framework",
    "central_adaptive",
    "geo_kde",
    "geo_threshold",
    "geo_two_way",
    "polyplace_std",
    "private_ratio",
    "registry",
    "report",
    "runner",
    "smoothed_elections",
    "smoothed_sgd",
    "smoothed_three_candidates",
    "style",
)

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.experiments._framework import Outcome, Table
    from smoothdp.experiments.registry import EXPERIMENTS, Experiment, UnknownExperimentError, get_experiment
    from smoothdp.experiments.runner import MODES, RunRecord, reproduce
