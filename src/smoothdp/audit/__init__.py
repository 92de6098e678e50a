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
