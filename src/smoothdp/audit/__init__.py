"""Public privacy-checking tools.

* :func:`max_log_density_ratio`: the log density ratio of any mechanism with a density, on an output grid.
* :func:`worst_case_privacy_loss`: the worst privacy loss (or hockey-stick divergence) of a calibrated
  smooth-sensitivity noise over adversarial neighbours, with a verdict.
* :func:`audit_mechanism`: a statistical (ε, δ) test of any mechanism that can be sampled on two
  neighbouring inputs (the neighbour-pair test of DP stochastic testers, e.g. Ding, Wang, Wang, Zhang &
  Kifer, *Detecting Violations of Differential Privacy*, CCS 2018, with exact Clopper–Pearson bounds).
* :mod:`smoothdp.audit.lattice`: exact producibility (lattice) checks: could a released float have come
  from a given input, for float samplers on a finite uniform lattice (:func:`producible_on_lattice`,
  :func:`numpy_laplace_release`) and for the exact path (:func:`producible_on_grid`), and
  :func:`unproducible_share` (Mironov, ACM CCS 2012).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smoothdp._lazy import attach

__all__ = [
    "AuditReport",
    "DistanceResult",
    "LatticeSampler",
    "PrivacyLossReport",
    "WorstCase",
    "audit_mechanism",
    "cell_probability",
    "grid_cell",
    "hockey_stick_divergence",
    "is_monotone_on_sample",
    "max_log_density_ratio",
    "numpy_laplace_release",
    "numpy_laplace_std",
    "producible_on_grid",
    "producible_on_lattice",
    "unproducible_share",
    "worst_case_privacy_loss",
]

_EXPORTS = {
    "LatticeSampler": "smoothdp.audit.lattice",
    "cell_probability": "smoothdp.audit.lattice",
    "grid_cell": "smoothdp.audit.lattice",
    "is_monotone_on_sample": "smoothdp.audit.lattice",
    "numpy_laplace_release": "smoothdp.audit.lattice",
    "numpy_laplace_std": "smoothdp.audit.lattice",
    "producible_on_grid": "smoothdp.audit.lattice",
    "producible_on_lattice": "smoothdp.audit.lattice",
    "unproducible_share": "smoothdp.audit.lattice",
    "DistanceResult": "smoothdp.audit.privacy_loss",
    "PrivacyLossReport": "smoothdp.audit.privacy_loss",
    "WorstCase": "smoothdp.audit.privacy_loss",
    "hockey_stick_divergence": "smoothdp.audit.privacy_loss",
    "max_log_density_ratio": "smoothdp.audit.privacy_loss",
    "worst_case_privacy_loss": "smoothdp.audit.privacy_loss",
    "AuditReport": "smoothdp.audit.statistical",
    "audit_mechanism": "smoothdp.audit.statistical",
}
#: The package's modules, reachable as attributes once imported on first access.
_SUBMODULES = ("lattice", "privacy_loss", "statistical")

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:
    from smoothdp.audit.lattice import (
        LatticeSampler,
        cell_probability,
        grid_cell,
        is_monotone_on_sample,
        numpy_laplace_release,
        numpy_laplace_std,
        producible_on_grid,
        producible_on_lattice,
        unproducible_share,
    )
    from smoothdp.audit.privacy_loss import (
        DistanceResult,
        PrivacyLossReport,
        WorstCase,
        hockey_stick_divergence,
        max_log_density_ratio,
        worst_case_privacy_loss,
    )
    from smoothdp.audit.statistical import AuditReport, audit_mechanism
