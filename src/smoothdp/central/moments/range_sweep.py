"""A private range [a, b] inside public bounds, by two AboveThreshold sweeps over a public grid.

The clipped mean and variance on a private range (:mod:`smoothdp.central.moments.on_private_range`) need
bounds that hug the data. :class:`SweepRange` finds them with AboveThreshold (Dwork, Naor, Reingold, Rothblum
& Vadhan, STOC 2009; Dwork & Roth 2014, §3.6), run as Durfee's unbounded quantile estimation does (Durfee,
"Unbounded differentially private quantile and maximum estimation", NeurIPS 2023): walk a public list of
thresholds towards a bound and stop at the first one past which (noisily) no record lies.

* **Upper end b**: thresholds t_1 < t_2 < … below u, in increasing order; query q_j = −#{x_i > t_j} against
  the threshold C: b = the first t_j with q_j + ν_j ≥ C + ρ, or u if none.
* **Lower end a**: the mirror image, thresholds above l in decreasing order, q_j = −#{x_i < t_j}.

ρ and ν_j are discrete Laplace with scale 2/ε_s each (ε_s = ε/2 per sweep), sampled exactly: counts,
noise and C are integers, so every comparison is exact. C = ⌈c·2/ε_s⌉ (c = 2 by default) puts the
noisy threshold above "no record past t": the sweep stops just past the data's extreme, after a few
thresholds with no record beyond, and rarely inside the data, where clipping would bias the mean.

Guarantee: pure ε-DP under substitution and under add/remove alike
(docs/theory/moments.md#range-by-two-sweeps): each count moves by at most one between neighbours and all
of a sweep's counts move the same way (the queries are monotone), so one sweep is ε_s-DP with noise of
scale 2/ε_s on the threshold and on each query (Lyu, Su & Li, "Understanding the sparse vector technique
for differential privacy", VLDB 2017, the monotone case); two sweeps compose to ε. Nothing here uses n,
so the add/remove version reveals nothing of it.

The grid (:func:`sweep_grid`) depends on the bounds only: 33 evenly spaced points and, where they fall in
the bounds, the points ±M·2^{−j/4} (j = 0 … 80, M = max(|l|, |u|)): four per octave over 20 octaves below
the bounds' magnitude, so that data far smaller than the bounds (incomes in dollars with bounds of 10^7)
are located to within 19%.

:class:`RangeFinder` is the seam for other finders (an unbounded one for ``bounds=None``): anything with
``epsilon``, ``neighbours``, ``source`` and ``find(sorted_values, rng) -> (a, b)``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import prepare_data
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import DiscreteLaplace
from smoothdp.noise.discrete_laplace import MAX_SCALE
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range

__all__ = ["DEFAULT_OFFSET", "RangeFinder", "SweepRange", "sweep_grid"]

PROOF = "docs/theory/moments.md#range-by-two-sweeps"
#: c: the noisy threshold sits c noise scales past "no record beyond t".
DEFAULT_OFFSET = 2.0
#: Evenly spaced intervals of the grid, and geometric points per octave / octaves below the magnitude.
_LINEAR_STEPS = 32
_PER_OCTAVE = 4
_OCTAVES = 20
_RELATIONS = ("substitution", "add_remove")


class RangeFinder(Protocol):
    """A private range finder: ``find`` returns (a, b), an ``epsilon``-DP output under ``neighbours``."""

    @property
    def epsilon(self) -> float: ...

    @property
    def neighbours(self) -> str: ...

    @property
    def source(self) -> str: ...

    def find(self, sorted_values: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]: ...


def sweep_grid(lower: float, upper: float) -> NDArray[np.float64]:
    """The public thresholds for bounds (l, u), sorted, l and u included (see the module docstring)."""
    lo, hi = check_bounds((lower, upper))
    linear = lo + (hi - lo) * (np.arange(_LINEAR_STEPS + 1) / _LINEAR_STEPS)
    magnitude = max(abs(lo), abs(hi))
    powers = magnitude * np.exp2(-np.arange(_PER_OCTAVE * _OCTAVES + 1) / _PER_OCTAVE)
    points = np.concatenate([linear, powers, -powers, [0.0, lo, hi]])
    return np.unique(points[(points >= lo) & (points <= hi)])


def neighbours_of(value: Any) -> str:
    """Validate ``neighbours`` for the mechanisms that offer both relations."""
    if value not in _RELATIONS:
        raise ValueError(f"neighbours must be one of {_RELATIONS}; got {value!r}")
    return str(value)


class SweepRange(Mechanism):
    """A private range [a, b] ⊆ [l, u]: two AboveThreshold sweeps (module docstring).

    Guarantee: pure ε-DP under ``neighbours`` (substitution or add/remove), by the monotone AboveThreshold
    lemma and basic composition (docs/theory/moments.md#range-by-two-sweeps).

    Parameters
    ----------
    epsilon
        ε > 0 in all (ε/2 per sweep).
    bounds
        Public ``(lower, upper)``; a ≤ b and both lie in them.
    neighbours
        ``"substitution"`` (default) or ``"add_remove"``.
    offset
        c ≥ 0: the threshold C = ⌈c·2/ε_s⌉ (default 2).
    clip
        Clip records into the bounds (default) or refuse records outside them (trusted data only).
    """

    name: ClassVar[str] = "private range (AboveThreshold sweeps)"
    proof: ClassVar[str] = PROOF
    source = (
        "AboveThreshold (Dwork, Naor, Reingold, Rothblum & Vadhan, STOC 2009) with monotone queries (Lyu, "
        "Su & Li, VLDB 2017), swept towards the bounds as in Durfee, NeurIPS 2023"
    )

    def __init__(
        self,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        neighbours: str = "substitution",
        offset: float = DEFAULT_OFFSET,
        clip: bool = True,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds)
        self.offset = check_in_range("offset", offset, 0.0, 1e6, low_open=False, high_open=False)
        self.clip = check_bool("clip", clip)
        self.grid = sweep_grid(self.lower, self.upper)
        self.noise_scale = 2.0 / (0.5 * self.epsilon)  # 2/ε_s on the threshold and on each query
        self.threshold = math.ceil(self.offset * self.noise_scale) if self.noise_scale <= MAX_SCALE else 0
        self.guarantee = PureDP(self.epsilon, neighbours=neighbours_of(neighbours))
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "range"

    def _first_firing(self, exceed: NDArray[np.int64], rng: np.random.Generator) -> int:
        """The index of the first j with ν_j − ρ ≥ C + exceed_j (len(exceed) if none): one sweep."""
        law = DiscreteLaplace(self.noise_scale)
        rho = int(law.sample(None, rng))
        nu = np.asarray(law.sample(exceed.size, rng), dtype=np.int64)
        fired = np.flatnonzero(nu - rho >= self.threshold + exceed)
        return int(fired[0]) if fired.size else int(exceed.size)

    def find(self, sorted_values: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]:
        """(a, b) on data clipped into the bounds and sorted (no accountant)."""
        if self.noise_scale > MAX_SCALE:  # ε below ~4e-15: no sweep can say anything; the bounds (0-DP)
            return self.lower, self.upper
        x = np.asarray(sorted_values, dtype=np.float64)
        up = self.grid[:-1]  # below u, increasing
        above = (x.size - np.searchsorted(x, up, side="right")).astype(np.int64)  # #{x > t}
        j = self._first_firing(above, rng)
        b = float(up[j]) if j < up.size else self.upper
        down = self.grid[:0:-1]  # above l, decreasing
        below = np.searchsorted(x, down, side="left").astype(np.int64)  # #{x < t}
        i = self._first_firing(below, rng)
        a = float(down[i]) if i < down.size else self.lower
        return (a, b) if a <= b else (b, a)

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.find(prepared, rng),
            sampler="exact: integer counts and discrete Laplace noise",
            details={
                "bounds": (self.lower, self.upper),
                "thresholds": int(self.grid.size),
                "offset": self.offset,
                "noise_scale": self.noise_scale,  # public: 2/ε_s
            },
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"SweepRange({self.guarantee}, bounds=({self.lower:g}, {self.upper:g}))"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
