"""Global-sensitivity baselines the seeds compare against.

* :class:`GlobalSensitivityMean`: noisy sum over noisy count (PDP ``gs_avg``, seed 001), add/remove
  neighbours: the clipped sum has sensitivity max(|l|, |u|), the count 1; ε/2 each, pure ε-DP by
  composition and post-processing.
* :class:`GlobalSensitivityMedian`: Laplace on the clipped (lower) median with its global sensitivity u − l
  under substitution (one record can move the median from l to u); pure ε-DP.
* :func:`ratio_local_sensitivity_laplace`: seed 002's plotted reference a/b + Lap(LS(a, b)/ε). **Not
  private** (the noise scale depends on the data); for comparison plots only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.ratio import ratio_local_sensitivity
from smoothdp.central.statistics import Median
from smoothdp.noise import Laplace
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_bounds, check_data, check_epsilon, check_int, clip_or_check

__all__ = [
    "GlobalSensitivityMean",
    "GlobalSensitivityMedian",
    "global_sensitivity_mean",
    "global_sensitivity_median",
    "ratio_local_sensitivity_laplace",
]


class GlobalSensitivityMean:
    """Noisy clipped sum over noisy count, ε/2 each (PDP ``gs_avg``, seed 001): pure ε-DP, add/remove."""

    source = "Laplace mechanism on sum and count, basic composition (PDP, seed 001: gs_avg)"

    def __init__(self, bounds: tuple[float, float], epsilon: float, *, clip: bool = False) -> None:
        self.lower, self.upper = check_bounds(bounds)
        self.epsilon = check_epsilon(epsilon)
        self.clip = bool(clip)
        self.sum_sensitivity = max(abs(self.lower), abs(self.upper))
        self._sum_noise = Laplace(self.sum_sensitivity / (0.5 * self.epsilon))
        self._count_noise = Laplace(1.0 / (0.5 * self.epsilon))

    def _data(self, x: ArrayLike) -> NDArray[np.float64]:
        return clip_or_check(check_data(x, "x", ndim=1), self.lower, self.upper, clip=self.clip)

    def sample(self, x: ArrayLike, size: int, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases on x."""
        data, n, gen = self._data(x), check_int("size", size, minimum=1), resolve_rng(rng)
        return (data.sum() + self._sum_noise.sample(n, gen)) / (data.size + self._count_noise.sample(n, gen))

    def release(self, x: ArrayLike, rng: SeedLike = None) -> Release:
        return Release(
            value=float(self.sample(x, 1, rng)[0]),
            guarantee=PureDP(self.epsilon),
            statistic="mean",
            mechanism="global sensitivity: noisy sum / noisy count",
            source=self.source,
            noise_scale=self._sum_noise.scale,
            sampler=Laplace.sampler,
            details={
                "neighbours": "one record added or removed",
                "count_noise_scale": self._count_noise.scale,
            },
        )


class GlobalSensitivityMedian:
    """Laplace((u − l)/ε) on the clipped lower median: pure ε-DP under substitution."""

    source = "Laplace mechanism with the median's global sensitivity u − l (Dwork et al. 2006)"

    def __init__(self, bounds: tuple[float, float], epsilon: float, *, clip: bool = False) -> None:
        lower, upper = check_bounds(bounds)
        self.statistic = Median(lower, upper, clip=clip)
        self.epsilon = check_epsilon(epsilon)
        self._noise = Laplace((upper - lower) / self.epsilon)

    def sample(self, x: ArrayLike, size: int, rng: SeedLike = None) -> NDArray[np.float64]:
        n = check_int("size", size, minimum=1)
        return self.statistic.value(x) + self._noise.sample(n, resolve_rng(rng))

    def release(self, x: ArrayLike, rng: SeedLike = None) -> Release:
        return Release(
            value=float(self.sample(x, 1, rng)[0]),
            guarantee=PureDP(self.epsilon),
            statistic="median",
            mechanism="global sensitivity: Laplace on the clipped median",
            source=self.source,
            noise_scale=self._noise.scale,
            noise_std=self._noise.std(),
            sampler=Laplace.sampler,
            details={"neighbours": "one record substituted"},
        )


def global_sensitivity_mean(
    x: ArrayLike, bounds: tuple[float, float], epsilon: float, rng: SeedLike = None, *, clip: bool = False
) -> Release:
    """Noisy sum over noisy count (see :class:`GlobalSensitivityMean`)."""
    return GlobalSensitivityMean(bounds, epsilon, clip=clip).release(x, rng)


def global_sensitivity_median(
    x: ArrayLike, bounds: tuple[float, float], epsilon: float, rng: SeedLike = None, *, clip: bool = False
) -> Release:
    """Laplace on the clipped median with global sensitivity (see :class:`GlobalSensitivityMedian`)."""
    return GlobalSensitivityMedian(bounds, epsilon, clip=clip).release(x, rng)


def ratio_local_sensitivity_laplace(
    a: int, b: int, epsilon: float, size: int, rng: SeedLike = None
) -> NDArray[np.float64]:
    """a/b + Lap(LS(a, b)/ε): seed 002's "noise scaled to local sensitivity" reference. NOT private."""
    eps = check_epsilon(epsilon)
    if check_int("b", b, minimum=2) < check_int("a", a, minimum=0):
        raise ValueError(f"a must be at most b; got a={a}, b={b}")
    scale = float(ratio_local_sensitivity(a, b)) / eps  # > 0: a ≥ 1 or b − a ≥ 1
    return a / b + Laplace(scale).sample(check_int("size", size, minimum=1), resolve_rng(rng))
