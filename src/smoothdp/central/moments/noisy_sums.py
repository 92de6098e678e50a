"""The variance and standard deviation under **add/remove** (n private): noisy count, sum and sum of squares.

With n private the variance's sensitivity is not a function of public values, so :class:`NoisyMoments`
releases three sums of the records clipped into [l, u], centred at the bounds' midpoint c (so that each
record's contribution is as small as it can be):

* N = n, sensitivity 1;
* S₁ = Σ(x_i − c), sensitivity (u − l)/2;
* S₂ = Σ(x_i − c)², sensitivity (u − l)²/4

(adding or removing one record changes each by that record's own term), with staircase noise for each
sensitivity (Geng & Viswanath 2016) at 30%, 40% and 30% of ε: the split that minimises the worst case of the
first-order error W²/(4ε_N) + W²/(2ε₁) + W²/(4ε₂) of the variance below. Pure ε-DP under add/remove by
basic composition (docs/theory/moments.md#the-variance-when-n-is-private). The variance is post-processing:

    N' = max(Ñ, ddof + 1),  v = (S̃₂/N' − (S̃₁/N')²)·N'/(N' − ddof),

clamped into [0, (u − l)²(ddof + 1)/4] (no variance of records in [l, u] exceeds it for n > ddof), and its
square root for the standard deviation. Empty data is valid (an empty group): the three sums are then pure
noise. Each noisy sum is the exact rounding onto a public grid of the exact rational sum plus the noise
(:func:`smoothdp.exact.add_noise`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.clipped import (
    STAIRCASE_SOURCE,
    check_ddof,
    check_moment_options,
    moment_noise,
    round_down,
    round_up,
)
from smoothdp.central.moments.exact_sums import exact_sum_of_squares
from smoothdp.central.quantiles import prepare_data
from smoothdp.central.smooth_sensitivity.statistics import exact_sum
from smoothdp.composition import split_epsilon
from smoothdp.exact import OutputGrid, add_noise, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_released_count
from smoothdp.work import tally_passes

__all__ = ["SHARES", "NoisyMoments"]

#: Shares of ε for (N, S₁, S₂).
SHARES = (0.3, 0.4, 0.3)


class NoisyMoments(Mechanism):
    """The variance (or standard deviation) from a noisy count, sum and sum of squares: pure ε-DP under
    **add/remove** (module docstring; docs/theory/moments.md#the-variance-when-n-is-private).

    Parameters
    ----------
    epsilon
        ε > 0 in all.
    bounds
        Public ``(lower, upper)``; records are clipped into them (NaN: imputed with their midpoint).
    ddof
        0 or 1 (default, the sample variance).
    root
        Release the standard deviation (default ``False``: the variance).
    noise
        ``"staircase"`` (default) or ``"laplace"``.
    clip, clamp, numerics
        As :class:`~smoothdp.central.moments.clipped.ClippedVariance`.
    released_count
        A noisy count of these same records already released privately under add/remove (a table's count
        column), never the true n: N is not released again, Ñ is this value, and the count's 30% of ε goes
        to the two sums in proportion (docs/theory/tables.md#a-mean-beside-a-count). ``None`` (default):
        the mechanism draws its own.
    """

    name: ClassVar[str] = "variance from a noisy count, sum and sum of squares"
    proof: ClassVar[str] = "docs/theory/moments.md#the-variance-when-n-is-private"
    source = f"the Laplace-type mechanism on three sums and basic composition; {STAIRCASE_SOURCE}"

    def __init__(
        self,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        ddof: int = 1,
        root: bool = False,
        noise: str = "staircase",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        released_count: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds)
        self.released_count = check_released_count(released_count)
        self.ddof = check_ddof(ddof)
        self.root = check_bool("root", root)
        self.noise, self.clip, self.clamp, self.numerics, _ = check_moment_options(
            self.lower, self.upper, noise=noise, clip=clip, clamp=clamp, numerics=numerics
        )
        width = Fraction(self.upper) - Fraction(self.lower)
        square = width * width / 4
        if not float(square) < 2.0**1000:
            raise ValueError(
                f"bounds too wide for a variance: ((upper − lower)/2)² must be below 2^1000; got {bounds!r}"
            )
        self.center = (Fraction(self.lower) + Fraction(self.upper)) / 2
        self.sensitivities = (1.0, round_up(width / 2), round_up(square))
        rest = 1.0 - SHARES[0]  # a released count: its share goes to the two sums, in proportion
        shares = SHARES if self.released_count is None else (0.0, SHARES[1] / rest, SHARES[2] / rest)
        self.epsilons = split_epsilon(self.epsilon, shares[0], shares[1])  # the third: the rest
        self.grids = tuple(OutputGrid.for_magnitude(s) for s in self.sensitivities)
        self.ceiling = round_down(square * (self.ddof + 1))
        self.guarantee = PureDP(self.epsilon, neighbours="add_remove")
        self.calibration = None

    @property
    def statistic_name(self) -> str:
        return "std" if self.root else "var"

    def sums(self, values: NDArray[np.float64]) -> tuple[Fraction, Fraction, Fraction]:
        """(N, S₁, S₂) exactly, for records already clipped into the bounds (two passes: Σx, Σx²)."""
        n = values.size
        tally_passes(n, 2)
        total, squares, c = exact_sum(values), exact_sum_of_squares(values), self.center
        return Fraction(n), total - n * c, squares - 2 * c * total + n * c * c

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)  # empty data allowed

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        noisy = []
        for exact, sens, eps, grid in zip(
            self.sums(prepared), self.sensitivities, self.epsilons, self.grids, strict=True
        ):
            if eps == 0.0:  # the count, released before and paid for there: a public input here
                assert self.released_count is not None
                noisy.append(self.released_count)
                continue
            z = moment_noise(self.noise, sens, eps)
            noisy.append(float(add_noise(exact, z, grid=grid, rng=rng, numerics=self.numerics)))
        count, first, second = noisy
        size = max(count, self.ddof + 1.0)
        value = (second / size - (first / size) ** 2) * size / (size - self.ddof)
        if self.clamp or self.root:
            value = min(max(value, 0.0), self.ceiling) if self.clamp else max(value, 0.0)
        if self.root:
            value = math.sqrt(value)
        return self._make_release(
            float(value),
            sampler=sampler_label(self.numerics),
            details={
                "method": "noisy_moments",
                "bounds": (self.lower, self.upper),
                "ddof": self.ddof,
                "epsilon_count_sum_squares": self.epsilons,
                "count": "drawn" if self.released_count is None else "released before (a public input)",
                "noise": self.noise,
                "clip": self.clip,
                "clamp": self.clamp,
            },
            not_private=NotPrivate(extra={"noise_scales": self.sensitivities}),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
