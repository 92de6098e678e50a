"""The list of reproduced experiments, one entry per figure family of the source papers.

Each entry names the module that implements it. Modules are imported only when used, so that
``smoothdp list`` works, and says what is missing, while a library module an experiment needs is
still being built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["EXPERIMENTS", "Experiment", "UnknownExperimentError", "get_experiment"]


class UnknownExperimentError(ValueError):
    """Raised for an experiment name that is not in :data:`EXPERIMENTS`."""


@dataclass(frozen=True)
class Experiment:
    """One reproduced experiment.

    Attributes
    ----------
    name
        The name used on the command line (``smoothdp reproduce NAME``).
    module
        The module that implements it (``Config``, ``CONFIGS``, ``run``, ``REQUIRES``).
    summary
        One line: what it reproduces and from where.
    """

    name: str
    module: str
    summary: str

    def load(self) -> ModuleType:
        """Import the experiment's module."""
        return importlib.import_module(self.module)

    def missing(self) -> list[str]:
        """The library names this experiment needs that do not exist yet (empty when it can run)."""
        try:
            module = self.load()
        except ImportError as error:
            return [f"{error.name or error}"]
        absent = []
        for requirement in getattr(module, "REQUIRES", ()):
            module_name, _, attribute = requirement.partition(":")
            try:
                target = importlib.import_module(module_name)
            except ImportError:
                absent.append(requirement)
                continue
            if attribute and not hasattr(target, attribute):
                absent.append(requirement)
        return absent


_PKG = "smoothdp.experiments"

#: All experiments, in the order ``reproduce`` runs them.
EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "polyplace-std",
            f"{_PKG}.polyplace_std",
            "noise std per unit of smooth sensitivity against the smoothness γ (Hladík & Tětek 2025, Fig. 1)",
        ),
        Experiment(
            "geo-threshold",
            f"{_PKG}.geo_threshold",
            "one-way threshold MSE against n, ε and the threshold (Liang & Yi, CCS 2024, Figs. 3 and 8)",
        ),
        Experiment(
            "geo-two-way",
            f"{_PKG}.geo_two_way",
            "two-way threshold ASE over a grid of threshold pairs (Liang & Yi, CCS 2024, Fig. 4)",
        ),
        Experiment(
            "geo-kde",
            f"{_PKG}.geo_kde",
            "Gaussian KDE of NYC collisions: contours and ASE (Liang & Yi, CCS 2024, Figs. 5, 6, 9-11)",
        ),
        Experiment(
            "central-adaptive",
            f"{_PKG}.central_adaptive",
            "PTR, smooth sensitivity and sample-and-aggregate on Adult ages (Near & Abuah)",
        ),
        Experiment(
            "private-ratio",
            f"{_PKG}.private_ratio",
            "private ratio a/b: naive, bounded local sensitivity, KSW (Harrison 2024)",
        ),
        Experiment(
            "smoothed-elections",
            f"{_PKG}.smoothed_elections",
            "smoothed-DP δ of lost ballots in US elections (Liu, Wang & Xia, TMLR 2023, Figs. 1 and 2 left)",
        ),
        Experiment(
            "smoothed-three-candidates",
            f"{_PKG}.smoothed_three_candidates",
            "smoothed-DP δ with three candidates, Biden / Trump / other, per state and nationally "
            "(extension of Liu, Wang & Xia, TMLR 2023, Fig. 2 left)",
        ),
        Experiment(
            "smoothed-sgd",
            f"{_PKG}.smoothed_sgd",
            "smoothed-DP δ of one SGD step with 8-bit gradients (Liu, Wang & Xia, TMLR 2023, Fig. 2 right)",
        ),
    )
}


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; a clear error listing the known names otherwise."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise UnknownExperimentError(
            f"unknown experiment {name!r}; choose from: {', '.join(EXPERIMENTS)}"
        ) from None
