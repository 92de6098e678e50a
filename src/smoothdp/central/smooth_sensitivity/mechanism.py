"""The smooth-sensitivity mechanism: release f(x) + S_β(x)·Z (NRS07; HT Theorem 8 for PolyPlace).

The calibration (:func:`smoothdp.calibration.calibrate`) turns the budget into a smoothness β and a
standardized noise Z; the statistic supplies f and its β-smooth sensitivity S_β (an exact, rounded-up
smooth upper bound on its local sensitivity). The guarantee is the calibration's, under the statistic's
neighbour relation (``"substitution"`` for the median, quantiles, trimmed mean, min and max;
``"add_remove"`` for :class:`~smoothdp.central.smooth_sensitivity.statistics.Mean`):

* ``"polyplace"`` (default): pure ε-DP, HT Theorem 8 (any β < ε;
  docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy);
* ``"student_t"``, ``"cauchy"``: pure ε-DP (LY Lemmas 3.3 and 3.5 at the Hamming metric;
  docs/theory/calibration.md#students-t-and-generalized-cauchy-rules);
* ``"laplace"``: (ε, δ)-DP, NRS07 Lemma 2.9, capped (docs/theory/calibration.md#lemma-5-capped-laplace-rule;
  needs δ > 0).

Proof of the mechanism: docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism.

The release is exact (docs/theory/floating-point.md#the-exact-release-path): the value is
``grid.round(f(x) + S_β(x)·Z)`` computed by :func:`smoothdp.exact.add_noise` from the statistic's exact
value (:meth:`~smoothdp.central.smooth_sensitivity.statistics.Statistic.exact_value`), on the public grid
``OutputGrid.for_bounds(lower, upper)`` of the statistic's bounds; ``numerics="float"`` keeps the float
fast path, whose guarantee assumes idealized arithmetic (``Release.sampler`` says which).

What is private: ``Release.value`` only. The smooth sensitivity, and with it the noise scale and standard
deviation, are functions of the data that the guarantee does **not** cover (for the add/remove mean,
S = (u−l)/n gives n away); they are kept in ``Release.not_private`` for the data holder.

NRS07 = Nissim, Raskhodnikova & Smith, STOC 2007; HT = Hladík & Tětek, FORC 2025; LY = Liang & Yi, CCS 2024.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp import calibration as _calibration
from smoothdp.calibration import Calibration
from smoothdp.central.smooth_sensitivity.statistics import PreparedData, Statistic
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.mechanism import Mechanism
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_int

__all__ = ["SmoothSensitivityMechanism"]


class SmoothSensitivityMechanism(Mechanism):
    """Release a statistic plus noise scaled to its smooth sensitivity: f(x) + S_β(x)·Z.

    Guarantee: the calibration's (pure ε-DP for PolyPlace, Student's T and Cauchy noise; (ε, δ)-DP for
    Laplace noise), under the statistic's neighbour relation (``statistic.neighbours``). Lemma: the
    calibration rule for a β-smooth upper bound on the local sensitivity
    (docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism; NRS07 §2).

    Parameters
    ----------
    statistic
        A :class:`~smoothdp.central.smooth_sensitivity.statistics.Statistic` (median, quantile, trimmed mean,
        mean, min, max).
    epsilon, delta
        The budget (keyword-only). δ > 0 only for ``noise="laplace"``.
    beta
        The smoothness β; ``None`` lets the calibration choose (data-independent default).
    noise
        ``"polyplace"`` (pure DP, default), ``"student_t"``, ``"cauchy"`` or ``"laplace"`` ((ε, δ)).
    numerics
        ``"exact"`` (default): the released float is exactly ``grid.round(f(x) + S_β(x)·Z)`` for the exact
        statistic and the public grid of the bounds. ``"float"``: the float fast path (not hardened).
    df
        Degrees of freedom of Student's T (``noise="student_t"`` only; default 3).
    gamma
        Exponent γ > 1 of the generalized Cauchy (``noise="cauchy"`` only; default 4).
    constants
        ``None`` (the tightest proven constants) or ``"bun_steinke"`` (Student's T) / ``"nrs"`` (Cauchy),
        for comparison. A keyword the family does not take is a ``ValueError`` naming the valid ones.

    Notes
    -----
    Release: f(x) + S_β(x)·Z with (β, Z) from ``calibrate(noise, epsilon=…, delta=…, beta=…, model="dp")``
    and S_β from ``statistic.smooth_sensitivity(x, β)``, rounded onto the public grid.
    """

    name = "smooth sensitivity"
    proof = "docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism"
    source = (
        "Nissim, Raskhodnikova & Smith, STOC 2007 (docs/references.md#nrs07), with the calibration rule of "
        "the chosen noise (docs/theory/calibration.md#overview-of-the-rules)"
    )

    def __init__(
        self,
        statistic: Statistic,
        *,
        epsilon: float,
        delta: float = 0.0,
        beta: float | None = None,
        noise: str = _calibration.DEFAULT_NOISE,
        numerics: str = "exact",
        df: float | None = None,
        gamma: float | None = None,
        constants: str | None = None,
    ) -> None:
        cal = _calibration.calibrate(
            noise,
            epsilon=epsilon,
            delta=delta,
            beta=beta,
            model="dp",
            df=df,
            gamma=gamma,
            constants=constants,
        )
        self._setup(statistic, cal, numerics)

    @classmethod
    def from_calibration(
        cls, statistic: Statistic, calibration: Calibration, *, numerics: str = "exact"
    ) -> SmoothSensitivityMechanism:
        """Build the mechanism from a ready :class:`~smoothdp.calibration.Calibration` (model ``"dp"``)."""
        mech = cls.__new__(cls)
        mech._setup(statistic, calibration, numerics)
        return mech

    def _setup(self, statistic: Statistic, cal: Calibration, numerics: str) -> None:
        self.numerics = check_numerics(numerics)
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
        self.grid = OutputGrid.for_bounds(statistic.lower, statistic.upper)  # public: bounds only
        self.calibration = cal
        self.guarantee = dataclasses.replace(cal.guarantee, neighbours=statistic.neighbours)
        self.source = f"{cal.source}; smooth sensitivity: {statistic.source}"

    @property
    def beta(self) -> float:
        """The smoothness β of the calibration (data-independent)."""
        return float(self.calibration.beta)

    @property
    def statistic_name(self) -> str:
        return self.statistic.name

    def smooth_sensitivity(self, x: ArrayLike | PreparedData) -> float:
        """S_β(x) at the calibrated β (not private: for the data holder)."""
        return self.statistic.smooth_sensitivity(x, self.calibration.beta)

    def sample(self, x: ArrayLike | PreparedData, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent outputs of the mechanism on x, each with the law of :meth:`release`.

        For simulations and statistical tests (no accountant is charged): one sort, one S_β, and the
        release path itself vectorized over the draws, :func:`smoothdp.exact.add_noise` with
        ``size=size`` and the mechanism's ``numerics`` (exactly ``grid.round(f(x) + S_β(x)·Z)`` by default).
        With the same generator state, ``sample(x, 1, rng=g)[0]`` is the value ``release(x, rng=g)`` gives.
        """
        n = check_int("size", size, minimum=1)
        d = self.statistic.prepare(x)
        cal = self.calibration
        draws = add_noise(
            self.statistic.exact_value(d),
            cal.noise,
            grid=self.grid,
            rng=resolve_rng(rng),
            sensitivity=self.statistic.smooth_sensitivity(d, cal.beta),
            size=n,
            numerics=self.numerics,
        )
        return np.asarray(draws, dtype=np.float64)

    def _prepare(self, data: Any) -> PreparedData:
        return self.statistic.prepare(data)

    def _release(self, prepared: PreparedData, rng: np.random.Generator) -> Release:
        cal = self.calibration
        s = self.statistic.smooth_sensitivity(prepared, cal.beta)
        value = add_noise(
            self.statistic.exact_value(prepared),
            cal.noise,
            grid=self.grid,
            rng=rng,
            sensitivity=s,
            numerics=self.numerics,
        )
        std = s * cal.std_per_unit
        return self._make_release(
            float(value),
            mechanism=f"smooth sensitivity ({cal.family})",
            beta=cal.beta,
            sampler=sampler_label(self.numerics),
            details={
                "noise_family": cal.family,
                "bounds": self.statistic.bounds,
                "clip": self.statistic.clip,
            },
            not_private=NotPrivate(
                smooth_sensitivity=s,
                noise_scale=s * cal.noise.scale,
                noise_std=std if math.isfinite(std) else math.inf,
            ),
        )

    def __repr__(self) -> str:
        cal = self.calibration
        return (
            f"SmoothSensitivityMechanism({self.statistic!r}, {self.guarantee}, noise={cal.family!r}, "
            f"beta={cal.beta:g})"
        )
