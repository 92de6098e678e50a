"""Reproductions of the source papers' experiments (the ``smoothdp reproduce`` command).

One module per figure family; :data:`EXPERIMENTS` lists them. :func:`reproduce` runs some or all and
writes, per experiment, PNG figures, a CSV of every plotted number and a Markdown report, plus an index.
"""

from smoothdp.experiments._framework import Outcome, Table
from smoothdp.experiments.registry import EXPERIMENTS, Experiment, UnknownExperimentError, get_experiment
from smoothdp.experiments.runner import MODES, RunRecord, reproduce

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
