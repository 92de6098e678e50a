"""A mean with a private clipping range: for public bounds far wider than the data (docs/means.md).

:class:`PrivateClipMean` spends part of ε (``range_fraction``, default 25%) on a private range
[a, b] = [max(l, c − G), min(u, c + G)] inside the public bounds [l, u], G from
:class:`~smoothdp.central.unbounded.private_bounds.PrivateRange` on the magnitudes |x_i − c| (c a public
centre, default 0), then releases the mean of the records clipped into [a, b] plus Laplace((b − a)/(n·ε₂))
with the rest ε₂ of the budget, clamped into [a, b] (post-processing). The Laplace noise of a clipped mean
with the public bounds (diffprivlib's ``mean``) is (u − l)/(nε); here it is about 4·q/(nε₂), q the magnitude
at the coverage level, so it wins when the data occupy a small part of [l, u], and loses ~25% to it when
they fill the bounds (docs/means.md has the measured table).

The coverage level of the range is chosen from public parameters only: c(n, ε₁) = max(1/2, 1 − 20/(ε₁n)),
a rank n − 20/ε₁ from the top, far enough from n that the empty octaves above the data lose to it in the
exponential mechanism (the same idea as instance-optimal mean estimation, Huang, Liang & Yi, NeurIPS
2021, which clips at a private rank n − O(1/ε)). The log continuum spans the 40 octaves below the public
magnitude 2^⌈log2 max(|l − c|, |u − c|)⌉.

Guarantee: pure ε-DP under **substitution** (n public): the range is ε₁-DP
(docs/theory/quantiles.md#private-bounds), the clipped mean with the range it was given is ε₂-DP by the
Laplace mechanism, and ε₁ + ε₂ ≤ ε by sequential (adaptive) composition
(docs/theory/central-frameworks.md#mean-with-a-private-clipping-range).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.smooth_sensitivity.statistics import exact_sum
from smoothdp.central.unbounded.private_bounds import DEFAULT_RANGE_FRACTION, PrivateRange
from smoothdp.composition import split_epsilon
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Laplace
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike
from smoothdp.validation import (
    check_bool,
    check_bounds,
    check_epsilon,
    check_in_range,
    check_int,
    prepare_records,
)

__all__ = ["RANGE_OCTAVES", "PrivateClipMean", "auto_coverage", "private_clip_mean"]

PROOF = "docs/theory/central-frameworks.md#mean-with-a-private-clipping-range"
#: Octaves of the log continuum below the public magnitude of the bounds.
RANGE_OCTAVES = 40
#: The rank distance from the top of the automatic coverage level, in units of 1/ε₁.
_TOP_DISTANCE = 20.0


def auto_coverage(n: int, epsilon_range: float) -> float:
    """The public coverage level max(1/2, 1 − 20/(ε₁·n)) of the private range (n ≥ 1, ε₁ > 0)."""
    nn = check_int("n", n, minimum=1)
    eps = check_epsilon(epsilon_range, "epsilon_range")
    # Below 1 even when 20/(ε₁n) underflows next to 1 (a coverage must lie in (0, 1)).
    return min(max(0.5, 1.0 - _TOP_DISTANCE / (eps * nn)), math.nextafter(1.0, 0.0))


def _scale_up(numerator: Fraction, denominator: Fraction) -> float:
    """The float just at or above numerator/denominator (a Laplace scale never below the one needed)."""
    exact = numerator / denominator
    value = float(exact)
    if Fraction(value) < exact:
        value = math.nextafter(value, math.inf)
    return value


class PrivateClipMean(Mechanism):
    """Clipped mean on a private range inside the public bounds, plus Laplace noise: pure ε-DP under
    **substitution** (docs/theory/central-frameworks.md#mean-with-a-private-clipping-range).

    Parameters
    ----------
    bounds
        Public ``(lower, upper)`` of every record (may be far wider than the data).
    epsilon
        ε > 0 in all.
    range_fraction
        Share of ε spent on the range, in (0, 1) (default 0.25).
    coverage
        Coverage level of the range in (0, 1), or ``None`` (default): :func:`auto_coverage` from n and ε₁.
    center
        Public centre c in the bounds: the range is [c − G, c + G] ∩ [lower, upper] (default 0; choose a
        public guess of the data's location when the data lie far from 0).
    clip
        ``True`` (default): clip records into ``bounds``; ``False``: refuse records outside them (trusted
        data only). NaN records are imputed with the midpoint of the bounds first.
    clamp
        Clamp the release into the private range [a, b] (post-processing; default ``True``).
    numerics
        ``"exact"`` (default) or ``"float"``.
    """

    name = "clipped mean on a private range (Laplace)"
    proof = PROOF
    source = (
        "private range by the exponential mechanism on log-magnitudes (Smith, STOC 2011), then the Laplace "
        "mechanism on the clipped mean (Dwork, McSherry, Nissim & Smith, TCC 2006); clipping at a private "
        "rank n − O(1/ε) as in Huang, Liang & Yi, NeurIPS 2021"
    )

    def __init__(
        self,
        *,
        bounds: tuple[float, float],
        epsilon: float,
        range_fraction: float = DEFAULT_RANGE_FRACTION,
        coverage: float | None = None,
        center: float = 0.0,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        self.numerics = check_numerics(numerics)
        self.lower, self.upper = check_bounds(bounds)
        self.epsilon = check_epsilon(epsilon)
        self.range_fraction = check_in_range("range_fraction", range_fraction, 0.0, 1.0)
        self.coverage = None if coverage is None else check_in_range("coverage", coverage, 0.0, 1.0)
        self.center = check_in_range(
            "center", center, self.lower, self.upper, low_open=False, high_open=False
        )
        self.clip, self.clamp = check_bool("clip", clip), check_bool("clamp", clamp)
        self.epsilon_range, self.epsilon_mean = split_epsilon(self.epsilon, self.range_fraction)
        magnitude = max(abs(self.lower - self.center), abs(self.upper - self.center))
        self.top = math.frexp(magnitude)[1]  # 2^top ≥ the largest |x − c| in the bounds
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "mean"

    def range_mechanism(self, n: int) -> PrivateRange:
        """The ε₁-DP range of the first stage for n records (public)."""
        coverage = self.coverage if self.coverage is not None else auto_coverage(n, self.epsilon_range)
        half = RANGE_OCTAVES // 2
        return PrivateRange(
            epsilon=self.epsilon_range,
            scale=math.ldexp(1.0, self.top - half),
            octaves=half,
            coverage=coverage,
            numerics=self.numerics,
        )

    def clip_range(self, half_width: float) -> tuple[float, float]:
        """[a, b] = [max(l, c − G), min(u, c + G)] (post-processing of the private G)."""
        return max(self.lower, self.center - half_width), min(self.upper, self.center + half_width)

    def laplace_scale(self, a: float, b: float, n: int) -> float:
        """(b − a)/(n·ε₂), rounded up."""
        return _scale_up(Fraction(b) - Fraction(a), n * Fraction(self.epsilon_mean))

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_records(data, self.lower, self.upper, clip=self.clip, min_size=1)  # n public

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        n = prepared.size
        ranger = self.range_mechanism(n)
        _, half_width = ranger.sample(ranger._prepare(prepared - self.center), rng)
        a, b = self.clip_range(half_width)
        scale = self.laplace_scale(a, b, n)
        clipped = np.clip(prepared, a, b)
        value = float(
            add_noise(exact_sum(clipped) / n, Laplace(scale), grid=self.grid, rng=rng, numerics=self.numerics)
        )
        if self.clamp:
            value = float(np.clip(value, a, b))
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "bounds": (self.lower, self.upper),
                "clip_range": (a, b),  # a private output, covered by the guarantee
                "epsilon_range": self.epsilon_range,
                "epsilon_mean": self.epsilon_mean,
                "coverage": ranger.coverage,
                "center": self.center,
                "clip": self.clip,
                "clamp": self.clamp,
            },
            not_private=NotPrivate(noise_scale=scale, noise_std=math.sqrt(2.0) * scale),
        )

    def __repr__(self) -> str:
        return (
            f"PrivateClipMean({self.guarantee}, bounds=({self.lower:g}, {self.upper:g}), "
            f"range_fraction={self.range_fraction:g})"
        )


def private_clip_mean(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    range_fraction: float = DEFAULT_RANGE_FRACTION,
    coverage: float | None = None,
    center: float = 0.0,
    clip: bool = True,
    clamp: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Private mean, pure ε-DP under substitution, clipped on a private range inside wide public bounds
    (see :class:`PrivateClipMean`; when to use it: docs/means.md)."""
    mech = PrivateClipMean(
        bounds=bounds,
        epsilon=epsilon,
        range_fraction=range_fraction,
        coverage=coverage,
        center=center,
        clip=clip,
        clamp=clamp,
        numerics=numerics,
    )
    return mech.release(x, accountant=accountant, rng=rng)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
