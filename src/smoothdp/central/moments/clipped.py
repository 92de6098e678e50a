"""The clipped mean and variance with global-sensitivity noise, under substitution (n public).

* :class:`ClippedMean`: the mean of the records clipped into [a, b] moves by at most (b − a)/n when one
  record is replaced (docs/theory/moments.md#clipped-mean).
* :class:`ClippedVariance`: the variance (1/(n − ddof))·Σ(x_i − x̄)² of records in [a, b] moves by at most
  (b − a)²·(n − 1)/(n·(n − ddof)) (docs/theory/moments.md#clipped-variance); ``root=True`` releases its
  square root, the standard deviation (post-processing).

Noise: :class:`~smoothdp.noise.Staircase` for that sensitivity (default; the ε-DP additive noise of least
expected |error|, Geng & Viswanath 2016) or Laplace(Δ/ε). Exact release
(docs/theory/floating-point.md#the-exact-release-path): the statistic is an exact rational
(:func:`~smoothdp.central.smooth_sensitivity.statistics.exact_sum`,
:func:`~smoothdp.central.moments.exact_sums.exact_variance`) and the output is exactly the rounding onto a
public grid of statistic + Z. The release is clamped into [a, b] (the mean) or [0, (b − a)²·n/(4(n − ddof))]
(the variance): post-processing.

:func:`release_mean` and :func:`release_variance` do one release on given bounds; the mechanisms on a
private range (:mod:`smoothdp.central.moments.on_private_range`) call them with the range they found.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.exact_sums import exact_variance
from smoothdp.central.quantiles import prepare_data
from smoothdp.central.smooth_sensitivity.statistics import exact_sum
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Laplace, NoiseDistribution, Staircase
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_int
from smoothdp.work import tally_passes

__all__ = [
    "MOMENT_NOISES",
    "ClippedMean",
    "ClippedVariance",
    "Moment",
    "check_ddof",
    "check_moment_noise",
    "check_moment_options",
    "check_variance_size",
    "mean_noise",
    "moment_noise",
    "release_mean",
    "release_variance",
    "round_down",
    "round_up",
    "variance_ceiling",
    "variance_grid",
    "variance_noise",
]

MOMENT_NOISES = ("staircase", "laplace")
STAIRCASE_SOURCE = (
    "staircase noise: Geng & Viswanath, The optimal noise-adding mechanism in differential privacy, IEEE "
    "Transactions on Information Theory 2016"
)


def round_up(value: Fraction) -> float:
    """The float at or just above a non-negative rational (a sensitivity is never rounded down)."""
    out = float(value)
    if Fraction(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def check_moment_noise(noise: Any) -> str:
    if noise not in MOMENT_NOISES:
        raise ValueError(f"noise must be one of {MOMENT_NOISES} for this method; got {noise!r}")
    return str(noise)


def check_moment_options(
    lower: float, upper: float, *, noise: Any, clip: Any, clamp: Any, numerics: Any
) -> tuple[str, bool, bool, str, OutputGrid]:
    """(noise, clip, clamp, numerics, grid): the options every moment mechanism checks, in this order, after
    ε, the bounds and its own; the grid of the declared bounds validates extreme bounds up front."""
    return (
        check_moment_noise(noise),
        check_bool("clip", clip),
        check_bool("clamp", clamp),
        check_numerics(numerics),
        OutputGrid.for_bounds(lower, upper),
    )


def check_ddof(ddof: Any) -> int:
    """ddof ∈ {0, 1}: population (0) or sample (1) variance."""
    return check_int("ddof", ddof, minimum=0, maximum=1)


def check_variance_size(n: int, ddof: int) -> None:
    """The variance needs n > ddof records (n is public under substitution)."""
    if n <= ddof:
        raise ValueError(
            f"x must hold at least {ddof + 1} value(s) for the variance with ddof={ddof} (n is public under "
            f"substitution); got {n}"
        )


def moment_noise(kind: str, sensitivity: float, epsilon: float) -> NoiseDistribution:
    """Staircase(Δ, ε) or Laplace(Δ/ε, rounded up) for a sensitivity Δ > 0."""
    if kind == "staircase":
        return Staircase(sensitivity, epsilon=epsilon)
    return Laplace(round_up(Fraction(sensitivity) / Fraction(epsilon)))


def round_down(value: Fraction) -> float:
    """The float at or just below a rational (a clamp that must stay inside an exact bound)."""
    out = float(value)
    if Fraction(out) > value:
        out = math.nextafter(out, -math.inf)
    return out


def variance_ceiling(bounds: tuple[float, float], n: int, ddof: int) -> float:
    """(b − a)²·n/(4(n − ddof)), rounded down: no variance of n records in [a, b] exceeds it, and the clamp
    stays inside the exact bound."""
    a, b = bounds
    return round_down((Fraction(b) - Fraction(a)) ** 2 * n / (4 * (n - ddof)))


def variance_grid(lower: float, upper: float) -> OutputGrid:
    """The public output grid of a variance of records in the declared bounds (up to (u − l)²/2)."""
    width = upper - lower
    top = width * width
    if not math.isfinite(top) or top > 2.0**1020:
        raise ValueError(
            f"bounds too wide for a variance: (upper − lower)² must be at most 2^1020; got ({lower!r}, "
            f"{upper!r})"
        )
    return OutputGrid.for_bounds(0.0, max(top, 2.0**-1000))


class Moment:
    """What one release on bounds [a, b] gives: the value and the noise that was added."""

    def __init__(self, value: float, noise: NoiseDistribution | None) -> None:
        self.value = value
        self.noise = noise

    def not_private(self) -> NotPrivate:
        if self.noise is None:
            return NotPrivate(noise_scale=0.0, noise_std=0.0)
        return NotPrivate(noise_scale=self.noise.scale, noise_std=self.noise.std())


def mean_noise(kind: str, bounds: tuple[float, float], n: int, epsilon: float) -> NoiseDistribution | None:
    """The noise of an ε-DP clipped mean of n records on [a, b]: sensitivity (b − a)/n (rounded up);
    ``None`` when a = b (the clipped mean is then a constant)."""
    a, b = bounds
    if a == b:
        return None
    return moment_noise(kind, round_up((Fraction(b) - Fraction(a)) / n), epsilon)


def variance_noise(
    kind: str, bounds: tuple[float, float], n: int, ddof: int, epsilon: float
) -> NoiseDistribution | None:
    """The noise of an ε-DP clipped variance of n > ddof records on [a, b]: sensitivity
    (b − a)²(n − 1)/(n(n − ddof)) (rounded up); ``None`` when it is 0 (a = b, or one record)."""
    a, b = bounds
    if a == b or n == 1:
        return None
    width = Fraction(b) - Fraction(a)
    return moment_noise(kind, round_up(width * width * (n - 1) / (n * (n - ddof))), epsilon)


def release_mean(
    values: NDArray[np.float64],
    bounds: tuple[float, float],
    noise: NoiseDistribution | None,
    *,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    clamp: bool = True,
) -> Moment:
    """One release of the mean of ``values`` clipped into ``bounds`` = [a, b] with ``noise`` (ε-DP when it is
    :func:`mean_noise` for n = values.size ≥ 1, n public): exact mean + noise, clamped into [a, b].
    a = b releases a (the clipped mean is then constant: no noise is needed, and no pass is made: a = b is
    public, the declared bounds or a released range). Work: one pass (the exact sum)."""
    a, b = bounds
    if noise is None:
        return Moment(a, None)
    tally_passes(values.size)
    center = exact_sum(np.clip(values, a, b)) / values.size
    value = float(add_noise(center, noise, grid=grid, rng=rng, numerics=numerics))
    return Moment(float(np.clip(value, a, b)) if clamp else value, noise)


def release_variance(
    values: NDArray[np.float64],
    bounds: tuple[float, float],
    noise: NoiseDistribution | None,
    *,
    ddof: int,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str,
    clamp: bool = True,
) -> Moment:
    """One release of the variance (ddof) of ``values`` clipped into [a, b] with ``noise`` (ε-DP when it is
    :func:`variance_noise`; n > ddof public): exact variance + noise, clamped into
    [0, (b − a)²n/(4(n − ddof))]. One record (ddof = 0) or a = b: the variance is 0 whatever the data,
    released as is (no pass: a = b and n are public). Work: two passes (the exact sum and the exact sum of
    squares)."""
    a, b = bounds
    n = values.size
    if noise is None:
        return Moment(0.0, None)
    tally_passes(n, 2)
    center = exact_variance(np.clip(values, a, b), ddof)
    value = float(add_noise(center, noise, grid=grid, rng=rng, numerics=numerics))
    if clamp:
        value = min(max(value, 0.0), variance_ceiling(bounds, n, ddof))
    return Moment(value, noise)


class _OnDeclaredBounds(Mechanism):
    """Shared set-up of the two global-sensitivity mechanisms on the declared bounds."""

    def __init__(
        self,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        noise: str = "staircase",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds)
        self.noise, self.clip, self.clamp, self.numerics, self.grid = check_moment_options(
            self.lower, self.upper, noise=noise, clip=clip, clamp=clamp, numerics=numerics
        )
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None

    def _details(self) -> dict[str, Any]:
        return {
            "method": "clipped",
            "bounds": (self.lower, self.upper),
            "noise": self.noise,
            "clip": self.clip,
            "clamp": self.clamp,
        }


class ClippedMean(_OnDeclaredBounds):
    """The mean of the records clipped into the declared bounds plus staircase (or Laplace) noise of
    sensitivity (u − l)/n: pure ε-DP under **substitution** (docs/theory/moments.md#clipped-mean).

    Parameters
    ----------
    epsilon
        ε > 0.
    bounds
        Public ``(lower, upper)``; records are clipped into them (NaN: imputed with their midpoint).
    noise
        ``"staircase"`` (default) or ``"laplace"``.
    clip
        ``True`` (default): clip records into the bounds; ``False``: refuse records outside them.
    clamp
        Clamp the release into the bounds (post-processing; default ``True``).
    numerics
        ``"exact"`` (default) or ``"float"``.
    """

    name: ClassVar[str] = "clipped mean (global sensitivity)"
    proof: ClassVar[str] = "docs/theory/moments.md#clipped-mean"
    source = f"the sensitivity (u − l)/n of the clipped mean under substitution; {STAIRCASE_SOURCE}"

    @property
    def statistic_name(self) -> str:
        return "mean"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = prepare_data(data, self.lower, self.upper, clip=self.clip)
        if values.size == 0:
            raise ValueError("x must hold at least 1 value(s) (n is public under substitution); got 0")
        return values

    def noise_for(self, n: int) -> NoiseDistribution | None:
        """The noise added for n records: :func:`mean_noise` on the declared bounds at ε."""
        return mean_noise(self.noise, (self.lower, self.upper), n, self.epsilon)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        out = release_mean(
            prepared,
            (self.lower, self.upper),
            self.noise_for(prepared.size),
            grid=self.grid,
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        return self._make_release(
            out.value,
            sampler=sampler_label(self.numerics),
            details=self._details(),
            not_private=out.not_private(),
        )


class ClippedVariance(_OnDeclaredBounds):
    """The variance (``ddof``) of the records clipped into the declared bounds plus staircase (or Laplace)
    noise of sensitivity (u − l)²(n − 1)/(n(n − ddof)): pure ε-DP under **substitution**
    (docs/theory/moments.md#clipped-variance). ``root=True``: the standard deviation, √ of the clamped
    variance release (post-processing).

    Parameters
    ----------
    ddof
        0 (population variance, numpy's default) or 1 (sample variance, the default here); needs n > ddof.
    root
        Release the standard deviation instead (default ``False``).
    epsilon, bounds, noise, clip, clamp, numerics
        As :class:`ClippedMean`; the variance is clamped into [0, (u − l)²n/(4(n − ddof))].
    """

    name: ClassVar[str] = "clipped variance (global sensitivity)"
    proof: ClassVar[str] = "docs/theory/moments.md#clipped-variance"
    source = (
        "the sensitivity (u − l)²(n − 1)/(n(n − ddof)) of the clipped variance under substitution; "
        f"{STAIRCASE_SOURCE}"
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
        ddof: int = 1,
        root: bool = False,
    ) -> None:
        super().__init__(
            epsilon=epsilon, bounds=bounds, noise=noise, clip=clip, clamp=clamp, numerics=numerics
        )
        self.ddof = check_ddof(ddof)
        self.root = check_bool("root", root)
        self.variance_grid = variance_grid(self.lower, self.upper)

    @property
    def statistic_name(self) -> str:
        return "std" if self.root else "var"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        values = prepare_data(data, self.lower, self.upper, clip=self.clip)
        check_variance_size(values.size, self.ddof)
        return values

    def noise_for(self, n: int) -> NoiseDistribution | None:
        """The noise added for n records: :func:`variance_noise` on the declared bounds at ε."""
        return variance_noise(self.noise, (self.lower, self.upper), n, self.ddof, self.epsilon)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        out = release_variance(
            prepared,
            (self.lower, self.upper),
            self.noise_for(prepared.size),
            ddof=self.ddof,
            grid=self.variance_grid,
            rng=rng,
            numerics=self.numerics,
            clamp=self.clamp,
        )
        value = math.sqrt(max(out.value, 0.0)) if self.root else out.value
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={**self._details(), "ddof": self.ddof},
            not_private=out.not_private(),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
