"""Private partition selection: which group keys get a row when the keys are not public
(docs/theory/tables.md#private-partition-selection).

The candidates are the keys present after contribution bounding. For each, the number c of distinct
persons with a row under it gets exact discrete Laplace noise Z of scale t ≥ l/ε (P(Z = z) ∝ e^{−|z|/t}; a
person touches at most l keys, so the vector of counts moves by at most l in ℓ1), and the key is released
when c + Z ≥ τ. The threshold τ = 1 + m, m the smallest integer ≥ 1 with l·α^m/(1 + α) ≤ δ, α = e^{−1/t}:
a key held by one person alone (c = 1) survives with probability α^m/(1 + α), and a person holds at most l
of them. This is the thresholded-noisy-count selection of Korolova, Kenthapadi, Mishra & Ntoulas (WWW 2009)
and Wilson et al. (PoPETs 2020), with exact integer noise; Desfontaines, Voss, Gipson & Mandayam (PoPETs
2022) derive the optimal threshold rule, which this simple one spends a little more to match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from flint import arb
from numpy.typing import NDArray

from smoothdp.noise import DiscreteLaplace

__all__ = ["Selection", "select_keys", "selection_scale", "selection_threshold"]


def selection_scale(epsilon: float, max_groups: int) -> float:
    """t = fl(l/ε) rounded up, so that l/t ≤ ε exactly."""
    return math.nextafter(max_groups / epsilon, math.inf)


def selection_threshold(*, epsilon: float, delta: float, max_groups: int) -> int:
    """τ = 1 + m, m the smallest integer ≥ 1 with l·α^m/(1 + α) ≤ δ (α = e^{−1/t}), certified in ball
    arithmetic (public: ε, δ, l)."""
    t = arb(selection_scale(epsilon, max_groups))
    alpha = (-1 / t).exp()
    need = t * (arb(max_groups).log() - arb(delta).log() - (1 + alpha).log())
    m = max(1, math.ceil(float(need.mid() + need.rad())))
    while not (arb(max_groups) * (-arb(m) / t).exp() / (1 + alpha) <= arb(delta)):
        m += 1
    return 1 + m


@dataclass(frozen=True)
class Selection:
    """The public parameters of one selection (the noisy counts are not released)."""

    epsilon: float
    delta: float
    max_groups: int
    scale: float
    threshold: int

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "method": "thresholded discrete Laplace counts of distinct persons",
            "epsilon": self.epsilon,
            "delta": self.delta,
            "max_groups_per_person": self.max_groups,
            "noise_scale": self.scale,
            "threshold": self.threshold,
        }


def select_keys(
    person_counts: NDArray[np.int64],
    *,
    epsilon: float,
    delta: float,
    max_groups: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.bool_], Selection]:
    """Which candidates are released: ``person_counts[i] + Z_i ≥ τ`` (module docstring)."""
    scale = selection_scale(epsilon, max_groups)
    threshold = selection_threshold(epsilon=epsilon, delta=delta, max_groups=max_groups)
    noise = DiscreteLaplace(scale).sample(person_counts.size, rng=rng)
    keep = np.asarray(person_counts, dtype=np.int64) + np.asarray(noise, dtype=np.int64) >= threshold
    return keep, Selection(epsilon, delta, max_groups, scale, threshold)
