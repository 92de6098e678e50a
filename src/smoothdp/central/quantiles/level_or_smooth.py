"""One quantile at large ε under substitution: the private selection of a heavy level, then the exponential
mechanism on that level's atoms, or the smooth-sensitivity quantile when no level is heavy
(docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity).

From ε = 1.5 on, ``method="auto"`` releases one quantile of continuous data with the smooth-sensitivity
mechanism, which beats the exponential mechanism there but has no atoms: a quantile of data tied at tenths
or cents comes out a few hundredths off instead of exact. :class:`HeavyLevelOrSmoothQuantile` spends
ε_t = ``TEST_SHARE``·ε on the selection of a heavy level
(:func:`~smoothdp.central.quantiles.atom_selection.select_heavy_level`, the one
:class:`~smoothdp.central.quantiles.ExponentialQuantile` runs), and with the rest:

* a level was selected: the exponential mechanism with that level's atoms made heavy, at ε − ε_t − 4η
  (:meth:`ExponentialQuantile.draw_on_atoms`);
* every level stayed light: the smooth-sensitivity quantile at ε_s = ε − ε_t, β chosen from public n
  (:func:`~smoothdp.central.smooth_sensitivity.quantile_beta.choose_beta`).

Guarantee: pure ε-DP under substitution, by adaptive sequential composition (the second mechanism is chosen
by the first's output, each private at its own ε). The selection's outcome is a private output covered by
the guarantee; the release reports it under ``details["lattice_test"]``, its other fields are public.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from smoothdp.central.quantiles.atom_selection import TEST_SHARE
from smoothdp.central.quantiles.atoms import MULTISCALE, LatticeSpec
from smoothdp.central.quantiles.exponential import ExponentialQuantile
from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
from smoothdp.central.smooth_sensitivity.quantile_beta import choose_beta
from smoothdp.central.smooth_sensitivity.statistics import Median, Quantile
from smoothdp.composition import split_epsilon
from smoothdp.exact import sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.scale.engine import Records
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range

__all__ = ["METHOD", "HeavyLevelOrSmoothQuantile"]

#: What a release reports as ``details["method"]``.
METHOD = "heavy_level_or_smooth_sensitivity"


class HeavyLevelOrSmoothQuantile(Mechanism):
    """The q-quantile: a heavy level selected privately, then the exponential mechanism on its atoms, or
    the smooth-sensitivity quantile when no level is heavy (module docstring).

    Guarantee: ``PureDP(epsilon, neighbours="substitution")``. Lemma: the selection is ε_t-DP
    (docs/theory/quantiles.md#the-heavy-level-of-one-quantile), the exponential mechanism with any of the
    atom measures the selection may set is (ε − ε_t)-DP, the smooth-sensitivity quantile at ε_s is
    ε_s-DP; composed sequentially and adaptively
    (docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity).

    Parameters
    ----------
    q
        The level in [0, 1]: the target x_(max(1, ⌈q·n⌉)).
    epsilon
        ε > 0 in all.
    bounds
        Public ``(lower, upper)``; records are clipped into them (NaN: imputed with their midpoint).
    lattice
        The atoms' levels (default: the multi-scale lattice), as :func:`smoothdp.quantile`'s.
    beta
        The smooth sensitivity's β at ε_s; ``None`` (default): chosen from n, ε_s and the bounds
        (:func:`~smoothdp.central.smooth_sensitivity.quantile_beta.choose_beta`, public under substitution).
    clip, clamp, numerics
        As :class:`~smoothdp.central.quantiles.ExponentialQuantile`.
    """

    name: ClassVar[str] = "selection of a heavy level, then the exponential mechanism or smooth sensitivity"
    proof: ClassVar[str] = "docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity"
    source = (
        "exponential mechanism (McSherry & Talwar, FOCS 2007) over the lattice levels, then the "
        "exponential-mechanism quantile (Smith, STOC 2011) on the chosen atoms or the smooth-sensitivity "
        "quantile (Nissim, Raskhodnikova & Smith, STOC 2007; Bun & Steinke, NeurIPS 2019), adaptive "
        "sequential composition (Dwork & Roth, 2014)"
    )

    def __init__(
        self,
        q: float,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        lattice: LatticeSpec = MULTISCALE,
        beta: float | None = None,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.clip, self.clamp = check_bool("clip", clip), check_bool("clamp", clamp)
        if lattice is None:
            raise ValueError("lattice: a heavy level needs a lattice (None has no atoms)")
        # atoms="test": the selection always runs (stage 1 and the atoms of stage 2)
        self.exponential = ExponentialQuantile(
            self.q, epsilon=self.epsilon, bounds=(self.lower, self.upper), lattice=lattice, atoms="test",
            clip=self.clip, clamp=self.clamp, numerics=numerics,
        )  # fmt: skip
        self.epsilon_selection, self.epsilon_smooth = split_epsilon(self.epsilon, TEST_SHARE)
        if beta is not None:  # PolyPlace needs 0 < β < ε_s
            beta = check_in_range("beta", beta, 0.0, self.epsilon_smooth, low_open=True, high_open=True)
        self.beta = beta
        self.numerics = numerics
        self._smooth: dict[int, SmoothSensitivityMechanism] = {}
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")

    @property
    def statistic_name(self) -> str:
        return self.exponential.statistic_name

    def smooth_mechanism(self, n: int) -> SmoothSensitivityMechanism:
        """The smooth-sensitivity quantile at ε_s for n records (β from n when not given; public)."""
        if n not in self._smooth:
            bounds = (self.lower, self.upper)
            stat = Median(bounds=bounds) if self.q == 0.5 else Quantile(self.q, bounds=bounds)
            beta = self.beta
            if beta is None:
                beta = choose_beta(n=max(n, 1), epsilon=self.epsilon_smooth, bounds=bounds, q=self.q)
            self._smooth[n] = SmoothSensitivityMechanism(
                stat, epsilon=self.epsilon_smooth, beta=beta, numerics=self.numerics
            )
        return self._smooth[n]

    def _prepare(self, data: Any) -> Records:
        return self.exponential._prepare(data)

    def _release(self, prepared: Records, rng: np.random.Generator) -> Release:
        n = prepared.n
        atoms, info = self.exponential.select_atoms(prepared, rng)
        smooth = self.smooth_mechanism(n)
        not_private = NotPrivate()
        if info.get("atoms") == "heavy":
            value = self.exponential.draw_on_atoms(prepared, atoms, rng)
        else:
            inner = smooth._release(smooth.statistic.prepare(prepared), rng)
            value, not_private = inner.value, inner.not_private
        if self.clamp:
            value = float(np.clip(value, self.lower, self.upper))
        return self._make_release(
            float(value),
            beta=smooth.calibration.beta,
            sampler=sampler_label(self.numerics),
            details={
                "method": METHOD,
                "bounds": (self.lower, self.upper),
                "clip": self.clip,
                "clamp": self.clamp,
                "lattice": self.exponential.atoms.label if self.exponential.atoms is not None else None,
                "epsilon_selection": self.epsilon_selection,
                "epsilon_in_weights": self.exponential.epsilon_used(n),
                "epsilon_smooth_sensitivity": self.epsilon_smooth,
                "noise_family": smooth.calibration.family,
                "engine": prepared.engine,
                "lattice_test": info,
            },
            not_private=not_private,
        )

    def __repr__(self) -> str:
        return (
            f"HeavyLevelOrSmoothQuantile(q={self.q:g}, {self.guarantee}, "
            f"bounds=({self.lower:g}, {self.upper:g}))"
        )


check_keywords_of(globals(), __all__)
