"""Global-sensitivity baselines (docs/theory/central-frameworks.md#global-sensitivity-baselines).

* :class:`GlobalSensitivityMean`: noisy clipped sum over noisy count (the ``gs_avg`` baseline of Near &
  Abuah, *Programming Differential Privacy*), **add/remove** neighbours: the clipped sum has sensitivity
  max(|l|, |u|), the count 1; ε/2 each, pure ε-DP by basic composition and post-processing.
* :class:`GlobalSensitivityMedian`: Laplace on the clipped (lower) median with its global sensitivity u − l
  under **substitution** (one record can move the median from l to u); pure ε-DP (the Laplace mechanism,
  Dwork, McSherry, Nissim & Smith, TCC 2006).
* :class:`GaussianMean`: Gaussian noise on the clipped mean under **substitution** (n public), sensitivity
  Δ = (u − l)/n, σ = Δ/√(2ρ): ρ-zCDP (Bun & Steinke, TCC 2016, Proposition 1.6). The library's zCDP
  mechanism: an :class:`~smoothdp.accounting.Accountant` with ``slack > 0`` composes it in ρ.
* :func:`ratio_local_sensitivity_laplace`: the plotted reference a/b + Lap(LS(a, b)/ε) of Harrison 2024
  (docs/references.md#har24). **Not private** (the noise scale depends on the data), so it is a plain
  function, not a mechanism; for comparison plots only.

Data policy (as every central mechanism, :func:`smoothdp.validation.prepare_records`): NaN records are
imputed with the midpoint of the bounds, then clipped (``clip=True``, default; ±inf too) or refused
(``clip=False``, trusted data only). Exact release (docs/theory/floating-point.md#the-exact-release-path):
each noisy quantity is the exact rounding, onto a public grid of the bounds, of its exact value (a data
value, or an exact rational sum or mean from :func:`~smoothdp.sums.exact_sum`) plus the noise
(:func:`smoothdp.exact.add_noise`); the mean's ratio of noisy sum to noisy count is post-processing.
``numerics="float"`` keeps the float fast path.

Every noise scale here is data-independent (n is public under substitution); it is still reported in
``Release.not_private`` like every mechanism's noise scale (one place to read it), not in ``details``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.frameworks.ratio import ratio_local_sensitivity
from smoothdp.central.smooth_sensitivity.statistics import Median, PreparedData
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Gaussian, Laplace
from smoothdp.privacy import ZCDP, PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.rounding import round_up
from smoothdp.sums import exact_sum
from smoothdp.validation import (
    check_bool,
    check_bounds,
    check_epsilon,
    check_int,
    check_positive,
    prepare_records,
)

__all__ = [
    "GaussianMean",
    "GlobalSensitivityMean",
    "GlobalSensitivityMedian",
    "gaussian_mean",
    "global_sensitivity_mean",
    "global_sensitivity_median",
    "ratio_local_sensitivity_laplace",
]

PROOF = "docs/theory/central-frameworks.md#global-sensitivity-baselines"
#: Public grid of a noisy count: fixed-point below 2, 36 significant bits above.
_COUNT_GRID = OutputGrid.for_magnitude(1.0)


class GlobalSensitivityMean(Mechanism):
    """Noisy clipped sum over noisy count, ε/2 each: pure ε-DP under **add/remove**.

    Guarantee: ``PureDP(epsilon, neighbours="add_remove")``. Lemma: the Laplace mechanism on the sum
    (sensitivity max(|l|, |u|)) and on the count (sensitivity 1), basic composition, post-processing
    (docs/theory/central-frameworks.md#global-sensitivity-baselines). Empty data is allowed (n is
    private): the noisy sum and count are then pure noise.
    """

    name = "global sensitivity: noisy sum / noisy count"
    proof = PROOF
    source = (
        "Laplace mechanism on the clipped sum and the count, basic composition (Dwork, McSherry, Nissim & "
        "Smith, TCC 2006; the gs_avg baseline of Near & Abuah, Programming Differential Privacy)"
    )

    def __init__(
        self, *, bounds: tuple[float, float], epsilon: float, clip: bool = True, numerics: str = "exact"
    ) -> None:
        self.numerics = check_numerics(numerics)
        self.lower, self.upper = check_bounds(bounds)
        self.epsilon = check_epsilon(epsilon)
        self.clip = check_bool("clip", clip)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        self.sum_sensitivity = max(abs(self.lower), abs(self.upper))
        self._sum_noise = Laplace(self.sum_sensitivity / (0.5 * self.epsilon))
        self._count_noise = Laplace(1.0 / (0.5 * self.epsilon))
        self.guarantee = PureDP(self.epsilon, neighbours="add_remove")

    @property
    def statistic_name(self) -> str:
        return "mean"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_records(data, self.lower, self.upper, clip=self.clip, min_size=0)

    def _draw(self, data: NDArray[np.float64], size: int, rng: np.random.Generator) -> NDArray[np.float64]:
        total = add_noise(
            exact_sum(data), self._sum_noise, grid=self.grid, rng=rng, size=size, numerics=self.numerics
        )
        count = add_noise(
            float(data.size), self._count_noise, grid=_COUNT_GRID, rng=rng, size=size, numerics=self.numerics
        )
        with np.errstate(divide="ignore", invalid="ignore"):  # post-processing of the two noisy values
            return np.asarray(np.asarray(total) / np.asarray(count), dtype=np.float64)

    def sample(self, x: ArrayLike, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases on x (for simulations; no accountant; ``numerics`` as set)."""
        n = check_int("size", size, minimum=1)
        return self._draw(self._prepare(x), n, resolve_rng(rng))

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            float(self._draw(prepared, 1, rng)[0]),
            sampler=sampler_label(self.numerics),
            details={"bounds": (self.lower, self.upper)},
            not_private=NotPrivate(
                noise_scale=self._sum_noise.scale,  # of the sum; the ratio has no simple std
                extra={"count_noise_scale": self._count_noise.scale},
            ),
        )


class GlobalSensitivityMedian(Mechanism):
    """Laplace((u − l)/ε) on the clipped lower median: pure ε-DP under **substitution**.

    Guarantee: ``PureDP(epsilon)`` (substitution). Lemma: the Laplace mechanism with the median's global
    sensitivity u − l (docs/theory/central-frameworks.md#global-sensitivity-baselines).
    """

    name = "global sensitivity: Laplace on the clipped median"
    proof = PROOF
    source = (
        "Laplace mechanism with the median's global sensitivity u − l (Dwork, McSherry, Nissim & Smith, "
        "TCC 2006)"
    )

    def __init__(
        self, *, bounds: tuple[float, float], epsilon: float, clip: bool = True, numerics: str = "exact"
    ) -> None:
        self.numerics = check_numerics(numerics)
        self.statistic = Median(bounds=bounds, clip=clip)
        self.epsilon = check_epsilon(epsilon)
        lower, upper = self.statistic.bounds
        self.grid = OutputGrid.for_bounds(lower, upper)
        self._noise = Laplace((upper - lower) / self.epsilon)
        self.guarantee = PureDP(self.epsilon, neighbours=self.statistic.neighbours)

    @property
    def statistic_name(self) -> str:
        return "median"

    def _prepare(self, data: Any) -> PreparedData:
        return self.statistic.prepare(data)

    def sample(self, x: ArrayLike, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases on x (for simulations; no accountant): the release path
        vectorized over the draws, with the law of :meth:`release` (``numerics`` as set)."""
        n = check_int("size", size, minimum=1)
        value = self.statistic.exact_value(self._prepare(x))
        gen = resolve_rng(rng)
        draws = add_noise(value, self._noise, grid=self.grid, rng=gen, size=n, numerics=self.numerics)
        return np.asarray(draws, dtype=np.float64)

    def _release(self, prepared: PreparedData, rng: np.random.Generator) -> Release:
        value = add_noise(
            self.statistic.exact_value(prepared), self._noise, grid=self.grid, rng=rng, numerics=self.numerics
        )
        return self._make_release(
            float(value),
            sampler=sampler_label(self.numerics),
            details={"bounds": self.statistic.bounds},
            not_private=NotPrivate(noise_scale=self._noise.scale, noise_std=self._noise.std()),
        )


class GaussianMean(Mechanism):
    """The clipped mean plus N(0, σ²), σ = Δ/√(2ρ), Δ = (u − l)/n: ρ-zCDP under **substitution**.

    Guarantee: ``ZCDP(rho)`` (substitution: n is public, one record is replaced, so the clipped mean moves
    by at most Δ = (u − l)/n). Lemma: the Gaussian mechanism with sensitivity Δ and variance σ² is
    Δ²/(2σ²)-zCDP (Bun & Steinke, TCC 2016, Proposition 1.6;
    docs/theory/privacy-definitions.md#zero-concentrated-differential-privacy). Δ and σ are rounded up, so
    the computed σ is never below the one the lemma needs.

    On an :class:`~smoothdp.accounting.Accountant` it needs ``slack > 0`` (the zCDP total is converted to
    (ε, δ) once, docs/theory/privacy-definitions.md#zcdp-composition-and-conversion).

    Parameters
    ----------
    bounds
        Public ``(lower, upper)`` of every record.
    rho
        ρ > 0.
    clip
        ``True`` (default): clip records into ``bounds``; ``False``: refuse records outside them (trusted
        data only). NaN records are imputed with the midpoint of the bounds first.
    numerics
        ``"exact"`` (default) or ``"float"`` (the float fast path, not hardened).
    """

    name = "global sensitivity: Gaussian on the clipped mean"
    proof = PROOF
    source = (
        "Gaussian mechanism, Δ²/(2σ²)-zCDP: Bun & Steinke, TCC 2016, Proposition 1.6; sensitivity (u − l)/n "
        "of the clipped mean under substitution"
    )

    def __init__(
        self, *, bounds: tuple[float, float], rho: float, clip: bool = True, numerics: str = "exact"
    ) -> None:
        self.numerics = check_numerics(numerics)
        self.lower, self.upper = check_bounds(bounds)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        self.rho = check_positive("rho", rho)
        self.clip = check_bool("clip", clip)
        self.guarantee = ZCDP(self.rho, neighbours="substitution")

    @property
    def statistic_name(self) -> str:
        return "mean"

    def sigma(self, n: int) -> float:
        """σ = Δ/√(2ρ) for n records (public under substitution), rounded up."""
        nn = check_int("n", n, minimum=1)
        delta_f = float(round_up((self.upper - self.lower) / nn))
        return float(round_up(delta_f / math.sqrt(2.0 * self.rho)))

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_records(data, self.lower, self.upper, clip=self.clip, min_size=1)  # n public

    def sample(self, x: ArrayLike, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases on x (for simulations; no accountant): the release path
        vectorized over the draws, with the law of :meth:`release` (``numerics`` as set)."""
        n = check_int("size", size, minimum=1)
        data = self._prepare(x)
        noise = Gaussian(self.sigma(data.size))
        mean = exact_sum(data) / data.size
        draws = add_noise(mean, noise, grid=self.grid, rng=resolve_rng(rng), size=n, numerics=self.numerics)
        return np.asarray(draws, dtype=np.float64)

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        sigma = self.sigma(prepared.size)
        noise = Gaussian(sigma)
        value = add_noise(
            exact_sum(prepared) / prepared.size, noise, grid=self.grid, rng=rng, numerics=self.numerics
        )
        return self._make_release(
            float(value),
            sampler=sampler_label(self.numerics),
            details={"bounds": (self.lower, self.upper), "rho": self.rho},
            not_private=NotPrivate(noise_scale=sigma, noise_std=sigma),
        )


def global_sensitivity_mean(
    x: ArrayLike,
    *,
    bounds: tuple[float, float],
    epsilon: float,
    clip: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Noisy sum over noisy count, pure ε-DP under add/remove (see :class:`GlobalSensitivityMean`)."""
    mech = GlobalSensitivityMean(bounds=bounds, epsilon=epsilon, clip=clip, numerics=numerics)
    return mech.release(x, accountant=accountant, rng=rng)


def global_sensitivity_median(
    x: ArrayLike,
    *,
    bounds: tuple[float, float],
    epsilon: float,
    clip: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Laplace on the clipped median, pure ε-DP under substitution (see :class:`GlobalSensitivityMedian`)."""
    mech = GlobalSensitivityMedian(bounds=bounds, epsilon=epsilon, clip=clip, numerics=numerics)
    return mech.release(x, accountant=accountant, rng=rng)


def gaussian_mean(
    x: ArrayLike,
    *,
    bounds: tuple[float, float],
    rho: float,
    clip: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Gaussian noise on the clipped mean, ρ-zCDP under substitution (see :class:`GaussianMean`)."""
    mech = GaussianMean(bounds=bounds, rho=rho, clip=clip, numerics=numerics)
    return mech.release(x, accountant=accountant, rng=rng)


def ratio_local_sensitivity_laplace(
    a: int, b: int, *, epsilon: float, size: int, rng: SeedLike = None
) -> NDArray[np.float64]:
    """a/b + Lap(LS(a, b)/ε): Harrison 2024's "noise scaled to local sensitivity" reference. NOT private."""
    eps = check_epsilon(epsilon)
    if check_int("b", b, minimum=2) < check_int("a", a, minimum=0):
        raise ValueError(f"a must be at most b; got a={a}, b={b}")
    scale = float(ratio_local_sensitivity(a, b)) / eps  # > 0: a ≥ 1 or b − a ≥ 1
    noise = Laplace(scale).sample(check_int("size", size, minimum=1), resolve_rng(rng), numerics="float")
    return np.asarray(a / b + noise, dtype=np.float64)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
