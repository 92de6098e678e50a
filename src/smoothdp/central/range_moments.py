"""The clipped mean and variance on a privately found range, under substitution (n public).

Public bounds are often far wider than the data (incomes with a cap of 10^7, values with a "safe" range):
the global-sensitivity noise (u − l)/(nε) of the clipped mean then swamps the answer. These mechanisms
spend a share f of ε on a private range [a, b] (a :class:`~smoothdp.central.range_sweep.RangeFinder`,
by default :class:`~smoothdp.central.range_sweep.SweepRange`), widen it, and release the mean or variance
clipped into it with the rest (docs/theory/moments.md#mean-and-variance-on-a-private-range), in the spirit
of instance-optimal mean estimation (Huang, Liang & Yi, NeurIPS 2021: clip at a private range around the
data, then add noise for that range).

Three public rules, each measured by the accuracy benchmark (``benchmarks/accuracy``, docs/means.md):

* **the share** f(n, ε) = min(1/4, max(3/100, 50/(εn))): what the range needs, no more; above εn ≈ 1700
  it is 3% of ε;
* **widening**: [a, b] becomes [a − w(b − a), b + w(b − a)] ∩ [l, u], w = 1/4, so that records just past
  the range found (a tie at the data's extreme, the last few of a tail) are not clipped;
* **reverting**: when the widened range covers at least θ = 60% of the bounds, the declared bounds are
  used instead. A range that narrow buys little (at most 1/0.6 in noise), and clipping then has the most
  to lose: records massed at a bound past a gap, which the range stops short of. So the release is never
  much worse than the global-sensitivity one on data that fill their bounds (it pays 1/(1 − f)), and
  gains (u − l)/(b − a) where the bounds are loose.

All three are functions of public values (n, ε, the bounds) or of the private range (post-processing).
The method choice (:func:`choose_moment_method`) uses the range only where εn ≥ 1000: below it a range
costs more than it can save on data that fill their bounds.

Guarantee: pure ε-DP under substitution, by adaptive sequential composition of the range (f·ε) and the
clipped statistic on the range it returned ((1 − f)·ε), ε_range + ε_statistic ≤ ε in exact arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments import (
    STAIRCASE_SOURCE,
    Moment,
    check_ddof,
    check_moment_noise,
    release_mean,
    release_variance,
    variance_grid,
)
from smoothdp.central.quantiles import prepare_data
from smoothdp.central.range_sweep import RangeFinder, SweepRange
from smoothdp.exact import OutputGrid, check_numerics, sampler_label
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range

__all__ = [
    "RANGE_MIN_EPSILON_N",
    "REVERT_SHARE",
    "WIDENING",
    "RangeFinderFactory",
    "RangeMean",
    "RangeVariance",
    "choose_moment_method",
    "range_share",
    "split_budget",
    "widened_range",
]

PROOF = "docs/theory/moments.md#mean-and-variance-on-a-private-range"
#: w: the found range is widened by w·(b − a) at each end.
WIDENING = 0.25
#: θ: a widened range covering this share of the bounds is replaced by the bounds.
REVERT_SHARE = 0.6
#: The range is used by ``method="auto"`` from this ε·n on.
RANGE_MIN_EPSILON_N = 1000.0
_SHARE_MIN, _SHARE_MAX, _SHARE_EPSILON_N = 0.03, 0.25, 50.0

#: Builds the finder for (ε_range, bounds, clip): the seam for other finders (e.g. unbounded ones).
RangeFinderFactory = Callable[[float, tuple[float, float], bool], RangeFinder]


def _sweep(epsilon: float, bounds: tuple[float, float], clip: bool) -> RangeFinder:
    return SweepRange(epsilon=epsilon, bounds=bounds, clip=clip)


def choose_moment_method(*, n: int, epsilon: float) -> str:
    """``"private_range"`` when ε·n ≥ 1000, else ``"clipped"`` (the declared bounds): public only."""
    return "private_range" if epsilon * n >= RANGE_MIN_EPSILON_N else "clipped"


def range_share(n: int, epsilon: float) -> float:
    """f(n, ε) = min(1/4, max(3/100, 50/(εn))): the share of ε spent on the range (public)."""
    return min(_SHARE_MAX, max(_SHARE_MIN, _SHARE_EPSILON_N / (epsilon * max(n, 1))))


def split_budget(epsilon: float, share: float) -> tuple[float, float]:
    """(ε₁, ε₂) with ε₁ = share·ε and ε₁ + ε₂ ≤ ε exactly (ε₂ stepped down if rounding overshoots)."""
    eps1 = share * epsilon
    eps2 = epsilon - eps1
    while Fraction(eps1) + Fraction(eps2) > Fraction(epsilon):
        eps2 = math.nextafter(eps2, 0.0)
    return eps1, eps2


def widened_range(
    found: tuple[float, float], bounds: tuple[float, float]
) -> tuple[tuple[float, float], bool]:
    """The clipping range from the found one (post-processing): widened by w·(b − a) each side within
    the bounds, or the bounds themselves when that covers θ of them. Returns (range, reverted)."""
    (a, b), (lo, hi) = found, bounds
    pad = WIDENING * (b - a)
    a2, b2 = max(lo, a - pad), min(hi, b + pad)
    if b2 - a2 >= REVERT_SHARE * (hi - lo):
        return (lo, hi), True
    return (a2, b2), False


class _OnPrivateRange(Mechanism):
    """Shared set-up and first stage of :class:`RangeMean` and :class:`RangeVariance`."""

    proof: ClassVar[str] = PROOF
    source = (
        "adaptive composition of a private range and the clipped statistic on it (instance-optimal mean "
        f"estimation: Huang, Liang & Yi, NeurIPS 2021); range: {SweepRange.source}; {STAIRCASE_SOURCE}"
    )

    def __init__(
        self,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        range_fraction: float | None = None,
        finder: RangeFinderFactory | None = None,
        noise: str = "staircase",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds)
        self.range_fraction = (
            None if range_fraction is None else check_in_range("range_fraction", range_fraction, 0.0, 1.0)
        )
        if finder is not None and not callable(finder):
            raise TypeError(
                f"finder must be a callable (epsilon, bounds, clip) -> RangeFinder; got {finder!r}"
            )
        self.finder = finder or _sweep
        self.noise = check_moment_noise(noise)
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None
        finder_source = self.finder(1.0, (0.0, 1.0), True).source
        self.source = (
            "adaptive composition of a private range and the clipped statistic on it (instance-optimal mean "
            f"estimation: Huang, Liang & Yi, NeurIPS 2021); range: {finder_source}; {STAIRCASE_SOURCE}"
        )

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def _range(
        self, values: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[tuple[float, float], bool, float, float, float]:
        """Stage 1: (clipping range, reverted, share, ε_range, ε_statistic)."""
        share = (
            self.range_fraction if self.range_fraction is not None else range_share(values.size, self.epsilon)
        )
        eps_range, eps_stat = split_budget(self.epsilon, share)
        finder = self.finder(eps_range, (self.lower, self.upper), self.clip)
        if finder.neighbours != "substitution" or finder.epsilon > eps_range:
            raise ValueError("finder must return an epsilon-DP range finder under substitution")
        found = finder.find(values, rng)
        clip_range, reverted = widened_range(found, (self.lower, self.upper))
        return clip_range, reverted, share, eps_range, eps_stat

    def _finish(
        self, out: Moment, value: float, clip_range: tuple[float, float], reverted: bool, share: float,
        eps_range: float, eps_stat: float, **extra: Any,
    ) -> Release:  # fmt: skip
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "method": "private_range",
                "bounds": (self.lower, self.upper),
                "clip_range": clip_range,  # a private output, covered by the guarantee
                "reverted_to_bounds": reverted,  # post-processing of the range: covered too
                "range_fraction": share,
                "epsilon_range": eps_range,
                "epsilon_statistic": eps_stat,
                "noise": self.noise,
                "clip": self.clip,
                "clamp": self.clamp,
                **extra,
            },
            not_private=out.not_private(),
        )


class RangeMean(_OnPrivateRange):
    """The mean clipped into a private range (module docstring): pure ε-DP under **substitution**
    (docs/theory/moments.md#mean-and-variance-on-a-private-range).

    Parameters
    ----------
    epsilon
        ε > 0 in all.
    bounds
        Public ``(lower, upper)``; the range and the release lie in them.
    range_fraction
        The share f of ε for the range, in (0, 1), or ``None`` (default): :func:`range_share` of n and ε.
    finder
        ``None`` (default: :class:`~smoothdp.central.range_sweep.SweepRange`) or a callable
        (ε_range, bounds, clip) -> :class:`~smoothdp.central.range_sweep.RangeFinder`.
    noise
        ``"staircase"`` (default) or ``"laplace"``: the noise of the second stage.
    clip, clamp, numerics
        As :class:`~smoothdp.central.moments.ClippedMean`; the release is clamped into the clipping range.
    """

    name: ClassVar[str] = "clipped mean on a private range"

    @property
    def statistic_name(self) -> str:
        return "mean"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = super()._prepare(data)
        if values.size == 0:
            raise ValueError("x must hold at least 1 value: the mean under substitution (n is public)")
        return values

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        clip_range, reverted, share, eps_range, eps_stat = self._range(prepared, rng)
        out = release_mean(
            prepared,
            clip_range,
            epsilon=eps_stat,
            noise=self.noise,
            grid=OutputGrid.for_bounds(self.lower, self.upper),
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        return self._finish(out, out.value, clip_range, reverted, share, eps_range, eps_stat)


class RangeVariance(_OnPrivateRange):
    """The variance (``ddof``) clipped into a private range: pure ε-DP under **substitution**
    (docs/theory/moments.md#mean-and-variance-on-a-private-range). ``root=True`` releases the standard
    deviation, √ of the clamped variance (post-processing).

    Parameters
    ----------
    ddof
        0 or 1 (default; the sample variance); needs n > ddof.
    root
        Release the standard deviation (default ``False``).
    epsilon, bounds, range_fraction, finder, noise, clip, clamp, numerics
        As :class:`RangeMean`; the variance is clamped into [0, (b − a)²n/(4(n − ddof))], [a, b] the
        clipping range.
    """

    name: ClassVar[str] = "clipped variance on a private range"

    def __init__(self, *, ddof: int = 1, root: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ddof = check_ddof(ddof)
        self.root = check_bool("root", root)
        self.grid = variance_grid(self.lower, self.upper)

    @property
    def statistic_name(self) -> str:
        return "std" if self.root else "var"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = super()._prepare(data)
        if values.size <= self.ddof:
            raise ValueError(
                f"x must hold at least {self.ddof + 1} value(s): the variance with ddof={self.ddof} "
                f"(n is public under substitution); got n={values.size}"
            )
        return values

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        clip_range, reverted, share, eps_range, eps_stat = self._range(prepared, rng)
        out = release_variance(
            prepared,
            clip_range,
            ddof=self.ddof,
            epsilon=eps_stat,
            noise=self.noise,
            grid=self.grid,
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        value = math.sqrt(max(out.value, 0.0)) if self.root else out.value
        return self._finish(out, value, clip_range, reverted, share, eps_range, eps_stat, ddof=self.ddof)
