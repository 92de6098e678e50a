"""The clipped mean and variance on a privately found range, under substitution (n public).

Public bounds are often far wider than the data (incomes with a cap of 10^7, values with a "safe" range):
the global-sensitivity noise (u − l)/(nε) of the clipped mean then swamps the answer. These mechanisms
spend a share f of ε on a private range [a, b] (a :class:`~smoothdp.central.moments.range_sweep.RangeFinder`,
by default :class:`~smoothdp.central.moments.range_sweep.SweepRange`), check it, and release the mean or
variance clipped into it with the rest (docs/theory/moments.md#mean-and-variance-on-a-private-range), in the
spirit of instance-optimal mean estimation (Huang, Liang & Yi, NeurIPS 2021: clip at a private range around
the data, then add noise for that range).

The range stage, with f·ε: a third of it finds [a, b], then

* **widening**: [a, b] becomes [a − w(b − a), b + w(b − a)] ∩ [l, u], w = 1/4, so that records just past
  the range found (a tie at the data's extreme, the last few of a tail) are not clipped;
* **reverting**: the declared bounds are used instead when the widened range covers at least θ = 20% of
  them (the range is a gamble on the empty stretch between the data and the bounds: at a share f of a few
  percent no count can see a tail of fewer than about 1/(fε) records, and such a tail at the bound, a
  top code or a spike, costs up to about 2/f times the bounds' noise once clipped; the gamble is taken only
  where it cuts the noise at least 1/θ = 5-fold), or when a noisy count of the records the widened range
  would clip, with the other two thirds of f·ε, exceeds 1.5 noise scales. The count is the safeguard of
  the sweeps: they cannot tell an empty stretch from a thin tail of fewer records than their noise (a
  zero-inflated or top-coded tail: Adult's capital gains), while one count can see a few hundred.

So the release is never much worse than the global-sensitivity one on data that fill their bounds (it
pays 1/(1 − f)), and gains (u − l)/(b − a) where the bounds are loose. The share
f(n, ε) = min(1/4, max(1/40, 100/(εn))) and the method choice (:func:`choose_moment_method`: the range only
where εn ≥ 2000, where f ≤ 1/20) are functions of public values; widening and reverting are
post-processing of private outputs. All constants were chosen on the accuracy benchmark
(``benchmarks/accuracy``, docs/means.md), with data sets built to break them (masses at a bound, thin far
tails, ties, tight bounds).

Guarantee: pure ε-DP under substitution, by adaptive sequential composition of the range (f·ε/3), the
clipped-count test (2f·ε/3) and the clipped statistic on the range they returned ((1 − f)·ε), the parts
summing to at most ε in exact arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.clipped import (
    STAIRCASE_SOURCE,
    Moment,
    check_ddof,
    check_moment_options,
    check_variance_size,
    mean_noise,
    release_mean,
    release_variance,
    variance_grid,
    variance_noise,
)
from smoothdp.central.moments.range_sweep import RangeFinder, SweepRange
from smoothdp.central.quantiles import prepare_data
from smoothdp.composition import split_epsilon as split_budget
from smoothdp.exact import sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import DiscreteLaplace, NoiseDistribution
from smoothdp.noise.discrete_laplace import MAX_SCALE
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range
from smoothdp.work import tally_passes

__all__ = [
    "FIND_SHARE",
    "RANGE_MIN_EPSILON_N",
    "REVERT_SHARE",
    "TEST_SCALES",
    "WIDENING",
    "RangeFinderFactory",
    "RangeMean",
    "RangeVariance",
    "choose_moment_method",
    "clipped_count_test",
    "range_share",
    "split_budget",
    "widened_range",
]

PROOF = "docs/theory/moments.md#mean-and-variance-on-a-private-range"
#: w: the found range is widened by w·(b − a) at each end.
WIDENING = 0.25
#: θ: a widened range covering this share of the bounds is replaced by the bounds. 0.2 (0.45 before) was
#: measured on the accuracy benchmark and on held-out columns (docs/means.md, where the range is kept):
#: thin tails at or near the bound (Adult's capital gains, fnlwgt, CA incomes in (0, 10^6), a 0.3% spike at
#: the bound) had 8% of releases 20-60× off; the loose-bounds wins shrink (CA incomes' mean 0.46 → 0.52 of
#: the clipped mean's error at ε = 1).
REVERT_SHARE = 0.2
#: The range is used by ``method="auto"`` from this ε·n on.
RANGE_MIN_EPSILON_N = 2000.0
_SHARE_MIN, _SHARE_MAX, _SHARE_EPSILON_N = 0.025, 0.25, 100.0
#: Share of the range's budget spent finding the range (the clipped-count test gets the rest), and the
#: test's threshold in noise scales: 1.5 (2.5 before) clips thin far tails less often, measured on the
#: accuracy benchmark (Adult capital gains' mean: median |error| 5.83 → 4.97 at ε = 0.5, the competitors
#: 4.27; up to 3.7× more error where the range wins by far at ε·n near 2000: docs/means.md).
FIND_SHARE = 1.0 / 3.0
TEST_SCALES = 1.5

#: Builds the finder for (ε_range, bounds, clip): the seam for other finders (e.g. unbounded ones).
RangeFinderFactory = Callable[[float, tuple[float, float], bool], RangeFinder]


def _sweep(epsilon: float, bounds: tuple[float, float], clip: bool) -> RangeFinder:
    return SweepRange(epsilon=epsilon, bounds=bounds, clip=clip)


def choose_moment_method(*, n: int, epsilon: float) -> str:
    """``"private_range"`` when ε·n ≥ 2000, else ``"clipped"`` (the declared bounds): public only."""
    return "private_range" if epsilon * n >= RANGE_MIN_EPSILON_N else "clipped"


def range_share(n: int, epsilon: float) -> float:
    """f(n, ε) = min(1/4, max(1/40, 100/(εn))): the share of ε spent on the range stage (public). The floor
    1/40 (1/20 before) was measured on the accuracy benchmark: 56 of 60 mean cells and 55 of 60 variance
    cells within 10% of the best other library, against 51 and 55 (docs/means.md)."""
    return min(_SHARE_MAX, max(_SHARE_MIN, _SHARE_EPSILON_N / (epsilon * max(n, 1))))


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


def clipped_count_test(
    values: NDArray[np.float64], clip_range: tuple[float, float], epsilon: float, rng: np.random.Generator
) -> bool:
    """True when #{x < a} + #{x > b} + ν > ⌈1.5/ε⌉, ν discrete Laplace with scale 1/ε (exact integers): the
    count has sensitivity 1, so the outcome is ε-DP. A scale beyond what the sampler takes (ε below about
    1e-15) answers True without looking at the data (0-DP)."""
    scale = 1.0 / epsilon
    if scale > MAX_SCALE:
        return True
    a, b = clip_range
    x = np.asarray(values, dtype=np.float64)
    tally_passes(x.size)  # one pass over every record, whatever the range
    clipped = int(np.count_nonzero(x < a)) + int(np.count_nonzero(x > b))
    noise = int(DiscreteLaplace(scale).sample(None, rng))
    return clipped + noise > math.ceil(TEST_SCALES * scale)


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
        self.noise, self.clip, self.clamp, self.numerics, self.grid = check_moment_options(
            self.lower, self.upper, noise=noise, clip=clip, clamp=clamp, numerics=numerics
        )
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None
        finder_source = self.finder(1.0, (0.0, 1.0), True).source
        self.source = (
            "adaptive composition of a private range and the clipped statistic on it (instance-optimal mean "
            f"estimation: Huang, Liang & Yi, NeurIPS 2021); range: {finder_source}; {STAIRCASE_SOURCE}"
        )

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def _range(self, values: NDArray[np.float64], rng: np.random.Generator) -> dict[str, Any]:
        """The range stage: the clipping range and its public account (budget split, reverts)."""
        share = (
            self.range_fraction if self.range_fraction is not None else range_share(values.size, self.epsilon)
        )
        eps_range, eps_stat = split_budget(self.epsilon, share)
        eps_find, eps_test = split_budget(eps_range, FIND_SHARE)
        finder = self.finder(eps_find, (self.lower, self.upper), self.clip)
        if finder.neighbours != "substitution" or finder.epsilon > eps_find:
            raise ValueError("finder must return an epsilon-DP range finder under substitution")
        found = finder.find(values, rng)
        clip_range, reverted = widened_range(found, (self.lower, self.upper))
        tested = clipped_count_test(values, clip_range, eps_test, rng)  # drawn whatever the range: same work
        if tested and not reverted:
            clip_range = (self.lower, self.upper)
        return {
            "clip_range": clip_range,  # a private output, covered by the guarantee
            "reverted_to_bounds": reverted or tested,  # post-processing of the range and the test: covered
            "range_fraction": share,
            "epsilon_range": eps_find,
            "epsilon_test": eps_test,
            "epsilon_statistic": eps_stat,
        }

    def _finish(self, out: Moment, value: float, stage: dict[str, Any], **extra: Any) -> Release:
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "method": "private_range",
                "bounds": (self.lower, self.upper),
                **stage,
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
        ``None`` (default: :class:`~smoothdp.central.moments.range_sweep.SweepRange`) or a callable
        (ε_range, bounds, clip) -> :class:`~smoothdp.central.moments.range_sweep.RangeFinder`.
    noise
        ``"staircase"`` (default) or ``"laplace"``: the noise of the second stage.
    clip, clamp, numerics
        As :class:`~smoothdp.central.moments.clipped.ClippedMean`; the release is clamped into the clipping
        range.
    """

    name: ClassVar[str] = "clipped mean on a private range"

    @property
    def statistic_name(self) -> str:
        return "mean"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = super()._prepare(data)
        if values.size == 0:
            raise ValueError("x must hold at least 1 value(s) (n is public under substitution); got 0")
        return values

    def noise_for(self, clip_range: tuple[float, float], n: int, epsilon: float) -> NoiseDistribution | None:
        """The second stage's noise: :func:`~smoothdp.central.moments.clipped.mean_noise` on the clipping
        range."""
        return mean_noise(self.noise, clip_range, n, epsilon)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        stage = self._range(prepared, rng)
        clip_range = stage["clip_range"]
        out = release_mean(
            prepared,
            clip_range,
            self.noise_for(clip_range, prepared.size, stage["epsilon_statistic"]),
            grid=self.grid,
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        return self._finish(out, out.value, stage)


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
        ddof: int = 1,
        root: bool = False,
    ) -> None:
        super().__init__(
            epsilon=epsilon, bounds=bounds, range_fraction=range_fraction, finder=finder, noise=noise,
            clip=clip, clamp=clamp, numerics=numerics,
        )  # fmt: skip
        self.ddof = check_ddof(ddof)
        self.root = check_bool("root", root)
        self.variance_grid = variance_grid(self.lower, self.upper)

    @property
    def statistic_name(self) -> str:
        return "std" if self.root else "var"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = super()._prepare(data)
        check_variance_size(values.size, self.ddof)
        return values

    def noise_for(self, clip_range: tuple[float, float], n: int, epsilon: float) -> NoiseDistribution | None:
        """The second stage's noise: :func:`~smoothdp.central.moments.clipped.variance_noise` on the range."""
        return variance_noise(self.noise, clip_range, n, self.ddof, epsilon)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        stage = self._range(prepared, rng)
        clip_range = stage["clip_range"]
        out = release_variance(
            prepared,
            clip_range,
            self.noise_for(clip_range, prepared.size, stage["epsilon_statistic"]),
            ddof=self.ddof,
            grid=self.variance_grid,
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        value = math.sqrt(max(out.value, 0.0)) if self.root else out.value
        return self._finish(out, value, stage, ddof=self.ddof)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
