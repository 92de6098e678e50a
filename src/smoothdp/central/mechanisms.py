"""The smooth-sensitivity mechanism: release f(x) + S_β(x)·Z (NRS07; HT Theorem 8 for PolyPlace).

The calibration (:func:`smoothdp.calibration.calibrate`) turns the budget into a smoothness β and a
standardized noise Z; the statistic supplies f and its β-smooth sensitivity S_β (an exact, rounded-up
smooth upper bound on its local sensitivity). The guarantee is the calibration's, under the statistic's
neighbour relation:

* ``"polyplace"`` (default): pure ε-DP, HT Theorem 8 (any β < ε);
* ``"student_t"``, ``"cauchy"``: pure ε-DP (notes/noise_and_ss.md §2.2, §2.3, §3.2);
* ``"laplace"``: (ε, δ)-DP, NRS07 Lemma 2.9 (needs δ > 0).

What is private: ``Release.value`` only. The smooth sensitivity, and with it the noise scale and standard
deviation, are functions of the data that the guarantee does **not** cover (for the add/remove mean,
S = (u−l)/n gives n away); they are returned for the data holder, not for publication.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp import calibration as _calibration
from smoothdp.calibration import Calibration
from smoothdp.central.statistics import PreparedData, Statistic, describe_neighbours
from smoothdp.release import Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_int

__all__ = ["NOT_PRIVATE_FIELDS", "SmoothSensitivityMechanism"]

#: Release fields that depend on the data without privacy protection (for the data holder only).
NOT_PRIVATE_FIELDS = ("smooth_sensitivity", "noise_scale", "noise_std")


class SmoothSensitivityMechanism:
    """Release a statistic plus noise scaled to its smooth sensitivity.

    Parameters
    ----------
    statistic
        A :class:`~smoothdp.central.statistics.Statistic` (median, quantile, trimmed mean, mean, min, max).
    epsilon, delta
        The budget. δ > 0 only for ``noise="laplace"``.
    noise
        ``"polyplace"`` (pure DP, default), ``"student_t"``, ``"cauchy"`` or ``"laplace"`` ((ε, δ)).
    beta
        The smoothness β; ``None`` lets the calibration choose.
    **shape
        Shape parameters of the noise family passed to the calibration (``df`` for Student's T,
        ``gamma`` for the generalized Cauchy).

    Notes
    -----
    Release: f(x) + S_β(x)·Z with (β, Z) from ``calibrate(noise, epsilon, delta, beta, model="dp")`` and
    S_β from ``statistic.smooth_sensitivity(x, β)``. Source: the calibration's lemma and NRS07 Def. 2.1.
    """

    def __init__(
        self,
        statistic: Statistic,
        epsilon: float,
        noise: str = "polyplace",
        delta: float = 0.0,
        beta: float | None = None,
        **shape: Any,
    ) -> None:
        cal = _calibration.calibrate(noise, epsilon, delta, beta, model="dp", **shape)
        self._setup(statistic, cal)

    @classmethod
    def from_calibration(cls, statistic: Statistic, calibration: Calibration) -> SmoothSensitivityMechanism:
        """Build the mechanism from a ready :class:`~smoothdp.calibration.Calibration` (model ``"dp"``)."""
        mech = cls.__new__(cls)
        mech._setup(statistic, calibration)
        return mech

    def _setup(self, statistic: Statistic, cal: Calibration) -> None:
        if not isinstance(statistic, Statistic):
            raise TypeError(f"statistic must be a smoothdp.central Statistic; got {type(statistic).__name__}")
        if cal.model != "dp":
            raise ValueError(f"calibration.model must be 'dp' for a central statistic; got {cal.model!r}")
        if cal.growth != "exponential":
            raise ValueError(
                f"calibration.growth must be 'exponential' (e^(βk)) for the Hamming smooth sensitivity; "
                f"got {cal.growth!r}"
            )
        self.statistic = statistic
        self.calibration = cal

    @property
    def beta(self) -> float:
        return self.calibration.beta

    @property
    def guarantee(self):
        return self.calibration.guarantee

    def smooth_sensitivity(self, x: ArrayLike | PreparedData) -> float:
        """S_β(x) at the calibrated β (not private: for the data holder)."""
        return self.statistic.smooth_sensitivity(x, self.calibration.beta)

    def sample(self, x: ArrayLike | PreparedData, size: int, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent outputs of the mechanism on x (one sort, one S_β, vectorized noise)."""
        n = check_int("size", size, minimum=1)
        d = self.statistic.prepare(x)
        s = self.statistic.smooth_sensitivity(d, self.calibration.beta)
        z = np.asarray(self.calibration.noise.sample(n, resolve_rng(rng)), dtype=np.float64)
        return self.statistic.value(d) + s * z

    def release(self, x: ArrayLike | PreparedData, rng: SeedLike = None) -> Release:
        """One private release of the statistic on x."""
        cal = self.calibration
        d = self.statistic.prepare(x)
        s = self.statistic.smooth_sensitivity(d, cal.beta)
        z = float(np.asarray(cal.noise.sample(None, resolve_rng(rng))))
        std = s * cal.std_per_unit
        return Release(
            value=self.statistic.value(d) + s * z,
            guarantee=cal.guarantee,
            statistic=self.statistic.name,
            mechanism=f"smooth sensitivity ({cal.family})",
            source=f"{cal.source}; smooth sensitivity: {self.statistic.source}",
            noise_scale=s * cal.noise.scale,
            noise_std=std if np.isfinite(std) else float("inf"),
            smooth_sensitivity=s,
            beta=cal.beta,
            sampler=cal.noise.sampler,
            details={
                "noise_family": cal.family,
                "neighbours": describe_neighbours(self.statistic),
                "bounds": (self.statistic.lower, self.statistic.upper),
                "not_private": NOT_PRIVATE_FIELDS,
            },
        )

    def __repr__(self) -> str:
        cal = self.calibration
        return (
            f"SmoothSensitivityMechanism({self.statistic!r}, {cal.guarantee}, noise={cal.family!r}, "
            f"beta={cal.beta:g})"
        )
