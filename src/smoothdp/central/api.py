"""Numpy-style entry points: ``smoothdp.median(x, epsilon=1.0, bounds=(0, 100))`` and friends.

Each is a thin wrapper over one smooth-sensitivity release
(:class:`~smoothdp.central.mechanisms.SmoothSensitivityMechanism`), returning a
:class:`~smoothdp.release.Release` (``float(release)`` gives the number). Privacy parameters are
keyword-only. Pure ε-DP with the default PolyPlace noise (HT Theorem 8); ``noise="student_t"`` or
``"cauchy"`` are pure too (LY Lemmas 3.5, 3.3); ``noise="laplace"`` is (ε, δ)-DP and needs δ > 0
(NRS07 Lemma 2.9, capped). Proof: docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism.

Neighbours: one record substituted (median, quantile, trimmed mean: ``"substitution"``) or added/removed
(mean: ``"add_remove"``); ``release.guarantee.neighbours`` says which. ``accountant=`` is charged before
any noise is drawn (a :class:`~smoothdp.accounting.BudgetError` releases and charges nothing). Data outside
``bounds`` is an error unless ``clip=True``. Only ``Release.value`` is private (``release.not_private``
holds the smooth sensitivity and noise scale, for the data holder only).

NRS07 = Nissim, Raskhodnikova & Smith, STOC 2007; HT = Hladík & Tětek, FORC 2025; LY = Liang & Yi, CCS 2024.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from smoothdp.accounting import Accountant
from smoothdp.calibration import DEFAULT_NOISE
from smoothdp.central.mechanisms import SmoothSensitivityMechanism
from smoothdp.central.statistics import Mean, Median, Quantile, Statistic, TrimmedMean
from smoothdp.release import Release
from smoothdp.rng import SeedLike

__all__ = ["mean", "median", "quantile", "trimmed_mean"]


def _release(
    statistic: Statistic,
    x: ArrayLike,
    *,
    epsilon: float,
    noise: str,
    delta: float,
    beta: float | None,
    rng: SeedLike,
    accountant: Accountant | None,
    noise_options: dict[str, Any],
) -> Release:
    mech = SmoothSensitivityMechanism(
        statistic, epsilon=epsilon, delta=delta, beta=beta, noise=noise, **noise_options
    )
    return mech.release(x, accountant=accountant, rng=rng)


def median(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    **noise_options: Any,
) -> Release:
    """Private (lower) median x_(⌈n/2⌉) of x in ``bounds``: ε-DP (or (ε, δ) with Laplace noise) under
    substitution (docs/theory/smooth-sensitivity.md#median-and-quantiles).

    Parameters
    ----------
    x
        1-D data, one record per person.
    epsilon, delta
        The budget (δ only for ``noise="laplace"``).
    bounds
        Public ``(lower, upper)``.
    noise
        ``"polyplace"`` (default), ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    beta
        Smoothness (default: the calibration's data-independent choice).
    clip
        Clip records into ``bounds`` (else records outside them are an error).
    rng
        ``None`` (secure) or a seed / generator for simulations.
    accountant
        A :class:`~smoothdp.accounting.Accountant` charged before the noise is drawn.
    **noise_options
        The noise family's keywords (``df`` for Student's T, ``gamma`` for Cauchy, ...); a keyword that
        does not apply to ``noise`` is a ``TypeError`` naming the valid ones.
    """
    return _release(
        Median(bounds=bounds, clip=clip),
        x,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        beta=beta,
        rng=rng,
        accountant=accountant,
        noise_options=noise_options,
    )


def quantile(
    x: ArrayLike,
    q: float,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    **noise_options: Any,
) -> Release:
    """Private q-quantile x_(max(1, ⌈qn⌉)) (numpy's ``inverted_cdf``) under substitution; other arguments
    as :func:`median`."""
    return _release(
        Quantile(q, bounds=bounds, clip=clip),
        x,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        beta=beta,
        rng=rng,
        accountant=accountant,
        noise_options=noise_options,
    )


def trimmed_mean(
    x: ArrayLike,
    trim: int | float,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    **noise_options: Any,
) -> Release:
    """Private trimmed mean (Bun & Steinke, NeurIPS 2019) under substitution: ``trim`` records per end
    (int) or a proportion per end (float) (docs/theory/smooth-sensitivity.md#trimmed-mean); other
    arguments as :func:`median`."""
    return _release(
        TrimmedMean(trim, bounds=bounds, clip=clip),
        x,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        beta=beta,
        rng=rng,
        accountant=accountant,
        noise_options=noise_options,
    )


def mean(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    clip: bool = False,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    **noise_options: Any,
) -> Release:
    """Private mean under **add/remove** neighbours (n private), S_β = max((u−l)/n, (u−l)e^{−β(n−1)})
    (docs/theory/smooth-sensitivity.md#mean-with-clipping); other arguments as :func:`median`.

    On a substitution accountant (the default) an add/remove ε is counted as 2ε (group privacy:
    docs/theory/privacy-definitions.md#converting-between-neighbour-relations).
    """
    return _release(
        Mean(bounds=bounds, clip=clip),
        x,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        beta=beta,
        rng=rng,
        accountant=accountant,
        noise_options=noise_options,
    )
