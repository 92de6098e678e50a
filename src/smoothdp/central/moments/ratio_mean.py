"""The mean under **add/remove** (n private): a noisy count, then a centred noisy sum on a range that the
noisy count lets us look for (docs/theory/moments.md#the-mean-when-n-is-private).

:class:`RatioMean` splits ε into public shares ε_N = ``COUNT_SHARE``·ε, ε_q = ``RANGE_SHARE``·ε (or
``range_fraction``·ε; 0: no range is tried) and ε_S = the rest, and releases, in this order (sequential,
adaptive composition; every choice is a function of public parameters and of outputs already released):

1. **the count** Ñ = n + K, K exact discrete Laplace of scale t = 1/ε_N (rounded up);
2. **the clipping range** [a, b]: when ε_q·Ñ ≥ ``MIN_RANKS``, y = the add/remove exponential-mechanism
   γ-quantile (:class:`~smoothdp.central.quantiles.ExponentialQuantile`, ε_q) of the log-magnitudes
   log2|x_i − c| (c = 0 clamped into the bounds) clamped into a public window of ``OCTAVES`` octaves, with
   γ = max(1/2, 1 − ``RANK_DISTANCE``/(ε_q·Ñ)), a rank O(1/ε) from the top as in instance-optimal mean
   estimation (Huang, Liang & Yi, NeurIPS 2021), located with the noisy count since n is private; then
   G = 2^(⌈y⌉ + ``PAD_OCTAVES``) and [a, b] = [max(l, c − G), min(u, c + G)]. Otherwise [a, b] = [l, u]
   and the range's share goes to the sum;
3. **the centred sum** S̃ = Σ(clip(x_i, a, b) − m) + Z, m = (a + b)/2, Z staircase noise for the
   sensitivity (b − a)/2 (one record added or removed moves the centred sum by its own term). On the whole
   bounds a public ``centre`` m may replace the midpoint: the sensitivity is then max(u − m, m − l), and the
   count gets ``CENTRED_COUNT_SHARE`` (the count's noise enters only through |x̄ − m|).

The release is m + S̃/max(Ñ, 1), clamped into [a, b] ⊆ [l, u] (post-processing). Centring makes the
count's noise matter only through |x̄ − m|, hence the larger share for the sum; the range cuts the sum's
noise from (u − l)/2 to about four times the data's top magnitudes on skewed or heavy-tailed data with
wide public bounds; on data that fill their bounds it is [l, u] and costs ε_q.

Guarantee: pure ε-DP under add/remove (ε_N + ε_q + ε_S ≤ ε in exact arithmetic). Empty data is valid (an
empty group): Ñ is noise around 0 and the sum is noise around 0. The count, the range and the noisy sum
are released with the exact samplers (:mod:`smoothdp.exact`), so the float released is a post-processing
of the proved mechanism.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.clipped import (
    STAIRCASE_SOURCE,
    check_moment_options,
    moment_noise,
    round_up,
)
from smoothdp.central.quantiles import ExponentialQuantile, prepare_data
from smoothdp.central.smooth_sensitivity.statistics import exact_sum
from smoothdp.composition import split_epsilon
from smoothdp.exact import OutputGrid, add_noise, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism, mark_simulation
from smoothdp.noise import DiscreteLaplace, NoiseDistribution
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_bounds, check_epsilon, check_in_range, check_released_count
from smoothdp.work import tally_passes

__all__ = [
    "CENTRED_COUNT_SHARE",
    "COUNT_SHARE",
    "MIN_RANKS",
    "RANGE_SHARE",
    "RANK_DISTANCE",
    "RatioMean",
    "magnitude_scale",
]

#: Shares of ε: the count, the range (one quantile of the log-magnitudes); the sum gets the rest.
COUNT_SHARE = 0.3
#: The count's share with a public ``centre`` near the data (docs/theory/moments.md#a-public-centre).
CENTRED_COUNT_SHARE = 0.15
RANGE_SHARE = 0.1
#: The coverage of the range: the rank RANK_DISTANCE/ε_q from the top.
RANK_DISTANCE = 20.0
#: The range is tried when ε_q·Ñ ≥ MIN_RANKS.
MIN_RANKS = 20.0
#: Octaves of the log-magnitude window, and of padding above the private quantile.
OCTAVES = 40
PAD_OCTAVES = 2


def magnitude_scale(lower: float, upper: float) -> tuple[float, float]:
    """(c, R): the public centre c of the magnitudes |x − c| (0 clamped into [lower, upper]) and the largest
    magnitude in the bounds, R = max(upper − c, c − lower)."""
    c = min(max(0.0, lower), upper)
    return c, max(upper - c, c - lower)


class RatioMean(Mechanism):
    """The mean as a centred noisy sum over a noisy count, clipped to a private range when the noisy count
    is large enough: pure ε-DP under **add/remove** (module docstring;
    docs/theory/moments.md#the-mean-when-n-is-private).

    Guarantee: ``PureDP(epsilon, neighbours="add_remove")``. Lemma: the count (sensitivity 1, discrete
    Laplace), the two exponential-mechanism quantiles and the centred sum (sensitivity max(b − m, m − a)
    for a range [a, b] already released, m its midpoint or, on the whole bounds, the public ``centre``:
    Lemma 6a) composed sequentially and adaptively; the ratio, the sorting of the range and the clamping
    are post-processing.

    Parameters
    ----------
    epsilon
        ε > 0 in all.
    bounds
        Public ``(lower, upper)``; records are clipped into them (NaN: imputed with their midpoint).
    noise
        The sum's noise: ``"staircase"`` (default) or ``"laplace"``.
    clip
        Clip records into ``bounds`` (default) or refuse records outside them (trusted data).
    clamp
        Clamp the release into the range [a, b] (default; post-processing).
    numerics
        ``"exact"`` (default) or ``"float"``.
    range_fraction
        The range's public share of ε, in [0, 1/2] (default ``RANGE_SHARE``); 0: no range is ever tried and
        the sum gets ε − ε_N (a grouped mean's pooled range decision passes 0 when the pooled records say
        that no group's range could narrow the bounds:
        docs/theory/tables.md#one-range-decision-for-every-group).
    released_count
        A noisy count of these same records already released privately under add/remove (a table's count
        column), never the true n: step 1 is skipped, Ñ is this value, and the count's share goes to the
        sum (docs/theory/tables.md#a-mean-beside-a-count). ``None`` (default): the mechanism draws its own.
    centre
        A public point m in the bounds on which the sum is centred when it runs on the whole bounds (no range
        tried or found), instead of their midpoint: the sum's sensitivity is max(u − m, m − l) and the count
        gets ``CENTRED_COUNT_SHARE`` of ε. A centre near the data's mean pays when that mean is far from the
        midpoint (a grouped mean's pooled centre: docs/theory/tables.md#a-pooled-centre;
        docs/theory/moments.md#a-public-centre). ``None`` (default): the midpoint.
    """

    name: ClassVar[str] = "centred noisy sum over a noisy count, on a private range"
    proof: ClassVar[str] = "docs/theory/moments.md#the-mean-when-n-is-private"
    source = (
        "noisy count and centred noisy sum, basic and adaptive composition (Dwork & Roth, The Algorithmic "
        "Foundations of Differential Privacy, 2014); clipping at private ranks n − O(1/ε) (Huang, Liang & "
        f"Yi, NeurIPS 2021) found by the exponential mechanism (Smith, STOC 2011); {STAIRCASE_SOURCE}"
    )

    def __init__(
        self,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        noise: str = "staircase",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        range_fraction: float | None = None,
        released_count: float | None = None,
        centre: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.released_count = check_released_count(released_count)
        self.range_share = (
            RANGE_SHARE
            if range_fraction is None
            else check_in_range("range_fraction", range_fraction, 0.0, 0.5, low_open=False, high_open=False)
        )
        self.lower, self.upper = check_bounds(bounds)
        self.noise, self.clip, self.clamp, self.numerics, self.grid = check_moment_options(
            self.lower, self.upper, noise=noise, clip=clip, clamp=clamp, numerics=numerics
        )
        if not float((Fraction(self.upper) - Fraction(self.lower)) / 2) < 2.0**1000:
            raise ValueError(
                f"bounds too wide for a mean: (upper − lower)/2 must be below 2^1000; got {bounds!r}"
            )
        self.centre = (
            None
            if centre is None
            else check_in_range("centre", centre, self.lower, self.upper, low_open=False, high_open=False)
        )
        count_share = COUNT_SHARE if self.centre is None else CENTRED_COUNT_SHARE
        count_share = count_share if self.released_count is None else 0.0
        # (ε_N, ε_q, ε_S) with a range, and ε_S' = ε − ε_N without one, each summing to at most ε exactly
        self.eps_count, self.eps_quantile, self.eps_sum = split_epsilon(
            self.epsilon, count_share, self.range_share
        )
        self.eps_sum_alone = split_epsilon(self.epsilon, count_share)[1]
        # 1/t ≤ ε_N (no count drawn, t unused, when a released count is given)
        self.count_scale = math.nextafter(1.0 / self.eps_count, math.inf) if self.eps_count else math.inf
        self.guarantee = PureDP(self.epsilon, neighbours="add_remove")
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "mean"

    def coverage(self, noisy_count: float) -> float | None:
        """The public coverage level max(1/2, 1 − RANK_DISTANCE/(ε_q·Ñ)) of the range, or ``None`` (no range)
        when ε_q·Ñ < MIN_RANKS (always without a range share)."""
        if self.range_share == 0.0 or self.eps_quantile * noisy_count < MIN_RANKS:
            return None
        return max(0.5, 1.0 - RANK_DISTANCE / (self.eps_quantile * noisy_count))

    def centre_of_magnitudes(self) -> float:
        """The public centre c of the magnitudes: 0 clamped into the bounds (:func:`magnitude_scale`)."""
        return magnitude_scale(self.lower, self.upper)[0]

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)  # sorted; empty data allowed

    def log_window(self) -> tuple[float, float]:
        """The public window [T − OCTAVES, T] of the log-magnitudes, 2^T ≥ max(u − c, c − l) (frexp's
        exponent)."""
        top = float(math.frexp(magnitude_scale(self.lower, self.upper)[1])[1])
        return top - OCTAVES, top

    def log_magnitudes(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """log2|x_i − c| clamped into the window, sorted (one fixed map per record)."""
        low, top = self.log_window()
        tally_passes(x.size)  # one pass: the magnitudes
        with np.errstate(divide="ignore"):
            logs = np.clip(np.log2(np.abs(x - self.centre_of_magnitudes())), low, top)
        # x is sorted, so the magnitudes are one or two monotone runs: a merge sort sees the runs (linear).
        logs.sort(kind="stable")
        return logs

    def range_mechanism(self, coverage: float) -> ExponentialQuantile:
        """The add/remove exponential mechanism of the coverage-quantile of the log-magnitudes at ε_q."""
        return ExponentialQuantile(
            coverage,
            epsilon=self.eps_quantile,
            bounds=self.log_window(),
            lattice=None,
            numerics=self.numerics,
            neighbours="add_remove",
        )

    def range_of(self, y: float) -> tuple[float, float]:
        """[a, b] = [max(l, c − G), min(u, c + G)], G = 2^(⌈y⌉ + PAD_OCTAVES), from the quantile y."""
        c, g = self.centre_of_magnitudes(), math.ldexp(1.0, math.ceil(y) + PAD_OCTAVES)
        return max(self.lower, c - g), min(self.upper, c + g)

    def sum_centre(self, a: float, b: float) -> Fraction:
        """The point m the sum on [a, b] is centred on: the public ``centre`` when [a, b] is the whole bounds
        (no range tried, or a range as wide as the bounds), else the midpoint (a + b)/2."""
        whole = (a, b) == (self.lower, self.upper)
        return Fraction(self.centre) if whole and self.centre is not None else (Fraction(a) + Fraction(b)) / 2

    def sum_noise(self, a: float, b: float, epsilon: float) -> NoiseDistribution | None:
        """The centred sum's noise on [a, b] at ``epsilon``: for the sensitivity max(b − m, m − a) rounded up,
        m = :meth:`sum_centre` ((b − a)/2 at the midpoint; ``None`` when a = b: the centred sum is then 0 on
        every data set)."""
        m = self.sum_centre(a, b)
        reach = max(Fraction(b) - m, m - Fraction(a))
        return None if reach == 0 else moment_noise(self.noise, round_up(reach), epsilon)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        n = prepared.size
        noisy_count = self._noisy_count(n, rng)
        coverage = self.coverage(noisy_count)
        if coverage is None:
            a, b, eps_sum = self.lower, self.upper, self.eps_sum_alone
        else:
            y = float(self.range_mechanism(coverage).sample(self.log_magnitudes(prepared), rng))
            (a, b), eps_sum = self.range_of(y), self.eps_sum
        tally_passes(n)  # one pass: the clipped exact sum
        clipped_sum = exact_sum(np.clip(prepared, a, b))  # exact: each clipped value is a record or an end
        return self._ratio(n, clipped_sum, noisy_count, (a, b), eps_sum, coverage is not None, rng)

    def release_totals(self, n: int, clipped_sum: Fraction, *, rng: SeedLike = None) -> Release:
        """The release from the records' number n and the exact sum of the records clipped into the bounds,
        the two totals the mechanism reads when it tries no range (``range_fraction=0``): a table's pooled
        centre computes them partition by partition (docs/theory/tables.md#a-pooled-centre). The same law
        as :meth:`release` on records with these totals; no accountant is charged."""
        if self.range_share != 0.0:
            raise ValueError("release_totals needs range_fraction=0 (the range reads every record)")
        gen = resolve_rng(rng)
        noisy_count = self._noisy_count(n, gen)
        whole = (self.lower, self.upper)
        return mark_simulation(
            self._ratio(n, clipped_sum, noisy_count, whole, self.eps_sum_alone, False, gen), gen
        )

    def _noisy_count(self, n: int, rng: np.random.Generator) -> float:
        """Ñ: the released count when one is given (paid for there: a public input here), else n + K."""
        if self.released_count is not None:
            return self.released_count
        return float(n + int(DiscreteLaplace(self.count_scale).sample(rng=rng, numerics=self.numerics)))

    def _ratio(
        self,
        n: int,
        clipped_sum: Fraction,
        noisy_count: float,
        clip_range: tuple[float, float],
        eps_sum: float,
        range_used: bool,
        rng: np.random.Generator,
    ) -> Release:
        """Step 3 and the ratio: the centred noisy sum on [a, b] over Ñ, clamped into [a, b]."""
        a, b = clip_range
        centre = self.sum_centre(a, b)
        exact = clipped_sum - n * centre
        z = self.sum_noise(a, b, eps_sum)
        if z is None:  # every clipped record is the centre: the centred sum is 0 on every data set
            noisy_sum = 0.0
        else:
            grid = OutputGrid.for_magnitude(z.scale)
            noisy_sum = float(add_noise(exact, z, grid=grid, rng=rng, numerics=self.numerics))
        value = float(centre) + noisy_sum / max(noisy_count, 1.0)
        if self.clamp or not math.isfinite(value):
            value = min(max(value, a), b) if math.isfinite(value) else float(centre)
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "method": "ratio",
                "bounds": (self.lower, self.upper),
                "range_fraction": self.range_share,
                "count": "drawn" if self.released_count is None else "released before (a public input)",
                "centre": "midpoint" if self.centre is None else self.centre,
                # public: the split with a range (count, range, sum) and without one (count, sum)
                "epsilon_count_range_sum": (self.eps_count, self.eps_quantile, self.eps_sum),
                "epsilon_count_sum_without_range": (self.eps_count, self.eps_sum_alone),
                "noise": self.noise,
                "clip": self.clip,
                "clamp": self.clamp,
            },
            # The noisy count and the range are private outputs (covered by the guarantee), kept out of the
            # public details so that a table's description is the same for every group and data set.
            not_private=NotPrivate(
                extra={
                    "n": n,
                    "noisy_count": noisy_count,
                    "clip_range": (a, b),
                    "range_used": range_used,
                }
            ),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
