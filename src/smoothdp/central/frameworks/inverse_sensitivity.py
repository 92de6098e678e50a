"""The inverse-sensitivity mechanism (Asi & Duchi, NeurIPS 2020), smoothed for continuous outputs.

**Reach and path length** (docs/theory/instance-optimal.md#reach-and-path-length). For a statistic f, data x
and k ≥ 0, let [L_k, U_k] be the values f takes on the data sets at most k substitutions away from x (its
*reach*: L_0 = U_0 = f(x), L non-increasing, U non-decreasing, ending at the bounds). The path length of an
output t is len(x; t) = min{k : L_k ≤ t ≤ U_k}, the number of records one must change to make f equal t.
For neighbours x, x′ the reach of x′ within k lies inside the reach of x within k + 1, so len has
sensitivity 1 in x, and the exponential mechanism with utility −len,

    p_x(t) ∝ exp(−ε·len(x; t)/2)   on the public bounds [a, b],

is ε-DP whatever the statistic (Asi & Duchi's inverse-sensitivity mechanism). For the q-quantile x_(r)
(r = max(1, ⌈qn⌉)) the reach is the order statistics themselves: U_k = x_(r+k), L_k = x_(r−k) (a, b past
the ends), and this mechanism *is* the exponential-mechanism quantile of Smith (2011).

**Smoothing** (Asi & Duchi's ρ-approximate version): U_k^ρ = min(U_k + ρ, b), L_k^ρ = max(L_k − ρ, a) (in
floats: a monotone rounding keeps the nesting that the proof needs). The core [x_(r) − ρ, x_(r) + ρ] then has
path length 0 even when x_(r) is tied or isolated, so tied values are released within ρ of themselves; the
default ρ is a quarter of the output grid's step, so a tied value on the grid is released exactly.

**Sampling**, exactly: the pieces between consecutive reach points have constant path length k, hence
weight |piece|·e^{−εk/2}; the piece is drawn by :func:`~smoothdp.central.quantiles.exact_categorical` from
certified float log weights (margin η, ε′ = ε − 4η, as the exponential-mechanism quantile), then a uniform
point inside it by :func:`smoothdp.exact.uniform_on_grid`. O(n log n) for the sort, O(n) after.

**Any statistic** (``reach=``): a callable returning the reach (L_0..L_K, U_0..U_K) of sorted, clipped data.
The guarantee then rests on the callable: it must return the exact reach (or a monotone rounding of it) of a
statistic whose values within k substitutions fill an interval.

Neighbours: ``"substitution"`` (n public).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import exact_categorical, log_weight_margin, prepare_data
from smoothdp.exact import OutputGrid, check_numerics, sampler_label, uniform_on_grid
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range

__all__ = [
    "InverseSensitivity",
    "Reach",
    "ReachMechanism",
    "quantile_reach",
    "reach_pieces",
]

Reach = Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]]
_AD = (
    "Asi & Duchi, Instance-optimality in differential privacy via approximate inverse sensitivity "
    "mechanisms, NeurIPS 2020"
)


def quantile_reach(
    sorted_x: NDArray[np.float64], q: float, lower: float, upper: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The reach of x_(r), r = max(1, ⌈qn⌉), under substitution: L_k = x_(r−k), U_k = x_(r+k) (a, b past the
    ends), k = 0..K with K = max(r − 1, n − r) + 1, so that L_K = a and U_K = b. Empty data: L_0 = a, U_0 = b
    (every output has path length 0: the uniform law on the bounds)."""
    from smoothdp.central.quantiles import target_rank

    n = int(sorted_x.size)
    if n == 0:
        return np.array([lower]), np.array([upper])
    r = int(target_rank(q, n) + 0.5)
    big_k = max(r - 1, n - r) + 1
    k = np.arange(big_k + 1)
    up_idx = r - 1 + k  # 0-based index of x_(r+k)
    down_idx = r - 1 - k
    up = np.where(up_idx < n, sorted_x[np.minimum(up_idx, n - 1)], upper)
    down = np.where(down_idx >= 0, sorted_x[np.maximum(down_idx, 0)], lower)
    return down.astype(np.float64), up.astype(np.float64)


def smooth_reach(
    down: NDArray[np.float64], up: NDArray[np.float64], rho: float, lower: float, upper: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """L_k^ρ = max(fl(L_k − ρ), a), U_k^ρ = min(fl(U_k + ρ), b), ending at the bounds (monotone maps of the
    reach: the nesting of neighbouring reaches is kept)."""
    lo = np.maximum(np.minimum.accumulate(np.clip(down, lower, upper)) - rho, lower)
    hi = np.minimum(np.maximum.accumulate(np.clip(up, lower, upper)) + rho, upper)
    if lo[-1] > lower or hi[-1] < upper:  # the reach always ends at the bounds
        lo = np.append(lo, lower)
        hi = np.append(hi, upper)
        lo[-1], hi[-1] = lower, upper
    return lo, hi


def reach_pieces(
    down: NDArray[np.float64], up: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """The pieces of [a, b] between consecutive reach points: (starts, ends, k, upward). The core
    [L_0, U_0] has k = 0; upper piece k is [U_{k−1}, U_k], lower piece k is [L_k, L_{k−1}] (k ≥ 1).
    ``upward``: the piece lies above the core (its path length grows with t)."""
    k = np.arange(1, up.size, dtype=np.float64)
    starts = np.concatenate(([down[0]], up[:-1], down[1:]))
    ends = np.concatenate(([up[0]], up[1:], down[:-1]))
    ks = np.concatenate(([0.0], k, k))
    upward = np.concatenate(([True], np.ones(k.size, dtype=bool), np.zeros(k.size, dtype=bool)))
    return starts, ends, ks, upward


def default_rho(grid: OutputGrid) -> float:
    """A quarter of the output grid's fixed-point step, 2^(E − p − 2): an output within ρ of a grid point v
    rounds to v, so a tied value on the grid is released exactly."""
    return math.ldexp(1.0, grid.exponent - grid.precision - 2)


class ReachMechanism(Mechanism):
    """Shared parameters of the mechanisms built on a statistic's reach (inverse sensitivity, piecewise
    Laplace): the statistic (``q=`` or ``reach=``), the bounds, the smoothing ρ, the data policy."""

    def __init__(
        self,
        q: float | None = None,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        reach: Reach | None = None,
        rho: float | None = None,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        if (q is None) == (reach is None):
            raise TypeError("give exactly one of q (a quantile) and reach (a statistic's reach function)")
        if reach is not None and not callable(reach):
            raise TypeError(f"reach must be a callable sorted_x -> (lower_reach, upper_reach); got {reach!r}")
        self.q = None if q is None else check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.reach = reach
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        if not math.isfinite(self.upper - self.lower):
            raise ValueError(f"bounds must have a finite width; got {bounds!r}")
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        self.rho = (
            default_rho(self.grid)
            if rho is None
            else check_in_range("rho", rho, 0.0, self.upper - self.lower, low_open=False, high_open=False)
        )
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        if self.q is None:
            return getattr(self.reach, "__name__", "statistic")
        return "median" if self.q == 0.5 else f"quantile({self.q:g})"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def smoothed_reach(
        self, sorted_x: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(L^ρ, U^ρ) of prepared data."""
        if self.reach is not None:
            down, up = self.reach(sorted_x)
            down, up = np.asarray(down, dtype=np.float64), np.asarray(up, dtype=np.float64)
            if down.ndim != 1 or down.shape != up.shape or down.size == 0 or down[0] != up[0]:
                raise ValueError("reach must return two 1-D arrays of one length with L_0 = U_0 = f(x)")
        else:
            assert self.q is not None
            down, up = quantile_reach(sorted_x, self.q, self.lower, self.upper)
        return smooth_reach(down, up, self.rho, self.lower, self.upper)

    def weight_margin(self, n: int) -> float:
        """η: the certified error of the float log weights (pieces at most n + 2 path lengths apart)."""
        return log_weight_margin(epsilon=self.epsilon, n=n + 2, width=self.upper - self.lower)

    def epsilon_used(self, n: int) -> float:
        """ε′ = ε − 4η."""
        return self.epsilon - 4.0 * self.weight_margin(n)

    @abstractmethod
    def piece_log_weights(
        self, lengths: NDArray[np.float64], ks: NDArray[np.float64], coef: float
    ) -> NDArray[np.float64]:
        """ln of each piece's mass under the unnormalised density (coef = ε′/2)."""

    @abstractmethod
    def draw_in_piece(self, start: float, end: float, k: float, upward: bool, coef: float, rng: Any) -> float:
        """A point of the piece [start, end] from the density restricted to it, on the output grid."""

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> float:
        """One output on prepared data (clipped, sorted), no accountant."""
        down, up = self.smoothed_reach(sorted_x)
        starts, ends, ks, upward = reach_pieces(down, up)
        coef = 0.5 * self.epsilon_used(int(sorted_x.size))
        logw = self.piece_log_weights(ends - starts, ks, coef)
        i = exact_categorical(logw, rng)
        value = self.draw_in_piece(float(starts[i]), float(ends[i]), float(ks[i]), bool(upward[i]), coef, rng)
        return float(np.clip(value, self.lower, self.upper)) if self.clamp else value

    def _details(self, n: int) -> dict[str, Any]:
        return {
            "bounds": (self.lower, self.upper),
            "rho": self.rho,
            "clip": self.clip,
            "clamp": self.clamp,
            "epsilon_in_weights": self.epsilon_used(n),
        }

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=sampler_label(self.numerics),
            details=self._details(int(prepared.size)),
            not_private=NotPrivate(),
        )


class InverseSensitivity(ReachMechanism):
    """The smoothed inverse-sensitivity mechanism: density ∝ exp(−ε·len_ρ(x; t)/2) on the bounds, len_ρ the
    path length to t with the reach widened by ρ (module docstring).

    Guarantee: pure ε-DP under substitution, by the exponential mechanism with the utility −len_ρ of
    sensitivity 1 (Asi & Duchi, NeurIPS 2020;
    docs/theory/instance-optimal.md#the-inverse-sensitivity-mechanism),
    sampled exactly from certified float weights.

    Parameters
    ----------
    q
        The quantile in [0, 1] (the statistic x_(r), r = max(1, ⌈qn⌉)); or give ``reach=`` instead.
    epsilon
        ε > 0.
    bounds
        Public ``(lower, upper)``: the output lies in them.
    reach
        A statistic's reach: a callable sorted_x -> (L_0..L_K, U_0..U_K) (module docstring).
    rho
        The smoothing ρ ≥ 0 (default: a quarter of the output grid's step; 0: no smoothing, the plain
        exponential-mechanism quantile for q).
    clip, clamp, numerics
        As :class:`~smoothdp.central.quantiles.ExponentialQuantile`.
    """

    name: ClassVar[str] = "inverse-sensitivity mechanism (smoothed)"
    proof: ClassVar[str] = "docs/theory/instance-optimal.md#the-inverse-sensitivity-mechanism"
    source = _AD

    def piece_log_weights(
        self, lengths: NDArray[np.float64], ks: NDArray[np.float64], coef: float
    ) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            out: NDArray[np.float64] = np.log(lengths) - coef * ks
        return out

    def draw_in_piece(self, start: float, end: float, k: float, upward: bool, coef: float, rng: Any) -> float:
        return float(uniform_on_grid(start, end, grid=self.grid, rng=rng, numerics=self.numerics))

    def _details(self, n: int) -> dict[str, Any]:
        return {**super()._details(n), "method": "inverse_sensitivity"}

    def __repr__(self) -> str:
        what = f"q={self.q:g}" if self.q is not None else "reach"
        return f"InverseSensitivity({what}, {self.guarantee}, bounds=({self.lower:g}, {self.upper:g}))"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
