"""Calibration: privacy budget → smoothness β and standardized noise Z.

A calibration makes ``f(x) + S_β(x)·Z`` private, where S_β is any β-smooth upper bound on the local
sensitivity (central DP, Hamming metric) or on the pointwise Lipschitz constant (geo-privacy, ε per unit
distance). The growth of the smooth bound is ``growth`` (see :mod:`smoothdp.smooth.growth`).

This module is filled in by the calibration rules; the :class:`Calibration` record is the contract the
mechanisms code against.
"""

from __future__ import annotations

from dataclasses import dataclass

from smoothdp.noise import NoiseDistribution
from smoothdp.privacy import Guarantee
from smoothdp.smooth.growth import Growth

__all__ = ["Calibration"]


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes
    ----------
    family
        ``"polyplace"``, ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    model
        ``"dp"`` (Hamming metric) or ``"geo"`` (ε per unit of distance).
    epsilon, delta
        The budget this calibration spends.
    beta
        The smoothness the sensitivity must have: S must be a G_β-smooth upper bound.
    growth
        The growth function G_β the bound must respect (``"exponential"`` or ``"linear"``).
    noise
        The standardized noise Z: release ``f(x) + S_β(x)·Z``.
    guarantee
        The :class:`~smoothdp.privacy.Guarantee` it gives.
    source
        Paper and lemma the rule rests on.
    """

    family: str
    model: str
    epsilon: float
    delta: float
    beta: float
    growth: Growth
    noise: NoiseDistribution
    guarantee: Guarantee
    source: str

    @property
    def std_per_unit(self) -> float:
        """Standard deviation of the added noise per unit of smooth sensitivity (``inf`` if none)."""
        return self.noise.std()
