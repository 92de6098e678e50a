"""Numpy-style entry points: ``smoothdp.median(x, epsilon, bounds)`` and friends.

Each is a one-call smooth-sensitivity release
(:class:`~smoothdp.central.mechanisms.SmoothSensitivityMechanism`) returning a
:class:`~smoothdp.release.Release` (``float(release)`` gives the number). Pure ε-DP with the default
PolyPlace noise; ``noise="student_t"`` or ``"cauchy"`` are pure too; ``noise="laplace"`` needs δ > 0.

Data outside ``bounds`` is an error unless ``clip=True``. Neighbours: one record substituted (median,
quantile, trimmed mean) or added/removed (mean). Only ``Release.value`` is private (see
:mod:`smoothdp.central.mechanisms`).
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from smoothdp.central.mechanisms import SmoothSensitivityMechanism
from smoothdp.central.statistics import Mean, Median, Quantile, Statistic, TrimmedMean
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.validation import check_bounds

__all__ = ["mean", "median", "quantile", "trimmed_mean"]


def _release(
    statistic: Statistic,
    x: ArrayLike,
    epsilon: float,
    noise: str,
    rng: SeedLike,
    delta: float,
    beta: float | None,
    shape: dict[str, Any],
) -> Release:
    return SmoothSensitivityMechanism(statistic, epsilon, noise, delta, beta, **shape).release(x, rng)


def median(
    x: ArrayLike,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = "polyplace",
    rng: SeedLike = None,
    *,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    **shape: Any,
) -> Release:
    """Private (lower) median x_(⌈n/2⌉) of x in ``bounds`` (substitution neighbours).

    Parameters
    ----------
    x
        1-D data, one record per person.
    epsilon, delta
        The budget (δ only for ``noise="laplace"``).
    bounds
        Public (lower, upper).
    noise
        ``"polyplace"`` (default), ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    rng
        ``None`` (secure) or a seed / generator for simulations.
    beta, clip, **shape
        Smoothness (default: the calibration's), clipping into bounds, noise shape (``df``, ``gamma``).
    """
    lo, hi = check_bounds(bounds)
    return _release(Median(lo, hi, clip=clip), x, epsilon, noise, rng, delta, beta, shape)


def quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = "polyplace",
    rng: SeedLike = None,
    *,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    **shape: Any,
) -> Release:
    """Private q-quantile x_(max(1, ⌈qn⌉)) (numpy's ``inverted_cdf``); other arguments as :func:`median`."""
    lo, hi = check_bounds(bounds)
    return _release(Quantile(q, lo, hi, clip=clip), x, epsilon, noise, rng, delta, beta, shape)


def trimmed_mean(
    x: ArrayLike,
    trim: int | float,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = "polyplace",
    rng: SeedLike = None,
    *,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    **shape: Any,
) -> Release:
    """Private trimmed mean (Bun–Steinke): ``trim`` records per end (int) or a proportion per end (float)."""
    lo, hi = check_bounds(bounds)
    return _release(TrimmedMean(trim, lo, hi, clip=clip), x, epsilon, noise, rng, delta, beta, shape)


def mean(
    x: ArrayLike,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = "polyplace",
    rng: SeedLike = None,
    *,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    **shape: Any,
) -> Release:
    """Private mean under add/remove neighbours, S_β = max((u−l)/n, (u−l)e^{−β(n−1)}) (notes §4.5)."""
    lo, hi = check_bounds(bounds)
    return _release(Mean(lo, hi, clip=clip), x, epsilon, noise, rng, delta, beta, shape)
