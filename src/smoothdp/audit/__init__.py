"""Public privacy-checking tools.

* :func:`max_log_density_ratio`: the log density ratio of any mechanism with a density, on an output grid.
* :func:`worst_case_privacy_loss`: the worst privacy loss (or hockey-stick divergence) of a calibrated
  smooth-sensitivity noise over adversarial neighbours, with a verdict.
* :func:`audit_mechanism`: a statistical (ε, δ) test of any mechanism that can be sampled on two
  neighbouring inputs (the neighbour-pair test of DP stochastic testers, e.g. Ding, Wang, Wang, Zhang &
  Kifer, *Detecting Violations of Differential Privacy*, CCS 2018, with exact Clopper–Pearson bounds).
"""

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
    "PrivacyLossReport",
    "WorstCase",
    "audit_mechanism",
    "hockey_stick_divergence",
    "max_log_density_ratio",
    "worst_case_privacy_loss",
]
