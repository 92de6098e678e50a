"""Numpy-style entry points: ``smoothdp.median(x, epsilon=1.0, bounds=(0, 100))`` and
``smoothdp.trimmed_mean``.

Each is a thin wrapper over one smooth-sensitivity release
(:class:`~smoothdp.central.smooth_sensitivity.mechanism.SmoothSensitivityMechanism`), returning a
:class:`~smoothdp.release.Release` (``float(release)`` gives the number). Privacy parameters are
keyword-only. Pure ε-DP with the default PolyPlace noise (HT Theorem 8); ``noise="student_t"`` or
``"cauchy"`` are pure too (LY Lemmas 3.5, 3.3); ``noise="laplace"`` is (ε, δ)-DP and needs δ > 0
(NRS07 Lemma 2.9, capped). Proof: docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism.

Neighbours: one record substituted (``"substitution"``); ``release.guarantee.neighbours`` says so. The mean,
variance and standard deviation are in :mod:`smoothdp.central.moments_api`. ``accountant=`` is charged before
any noise is drawn (a :class:`~smoothdp.accounting.BudgetError` releases and charges nothing). Data outside
``bounds`` is an error unless ``clip=True``. Only ``Release.value`` is private (``release.not_private``
holds the smooth sensitivity and noise scale, for the data holder only).

``median`` is ``quantile(x, 0.5)`` (:mod:`smoothdp.central.quantile_api`, with ``quantiles``) and takes
``method=`` (default ``"auto"``: chosen from public parameters only by
:func:`smoothdp.central.choose.choose_method`; the Release's ``details["method"]`` says which ran),
``clamp=True`` (the released value clamped into the bounds, post-processing), ``clip=True`` and
``bounds="private"`` (private range finding with part of the budget,
:mod:`smoothdp.central.unbounded.private_bounds`). The exponential-mechanism quantiles are in
:mod:`smoothdp.central.quantiles` (docs/theory/quantiles.md#the-exponential-mechanism-quantile).

NRS07 = Nissim, Raskhodnikova & Smith, STOC 2007; HT = Hladík & Tětek, FORC 2025; LY = Liang & Yi, CCS 2024.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from smoothdp.accounting import Accountant
from smoothdp.calibration import DEFAULT_NOISE, noise_options_given
from smoothdp.central.quantile_api import Bounds, quantile
from smoothdp.central.quantiles.atoms import MULTISCALE, LatticeSpec
from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
from smoothdp.central.smooth_sensitivity.statistics import Statistic, TrimmedMean
from smoothdp.keywords import check_keywords_of
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.scale.engine import as_records, check_engine
from smoothdp.validation import check_bool

__all__ = ["median", "trimmed_mean"]


def _release(
    statistic: Statistic,
    x: ArrayLike,
    *,
    epsilon: float,
    noise: str,
    delta: float,
    beta: float | None,
    clamp: bool,
    numerics: str,
    rng: SeedLike,
    accountant: Accountant | None,
    noise_options: dict[str, Any],
    engine: Any = None,
) -> Release:
    """One smooth-sensitivity release of ``statistic``, clamped into its bounds if asked (post-processing)."""
    check_bool("clamp", clamp)
    check_engine(engine)
    mech = SmoothSensitivityMechanism(
        statistic, epsilon=epsilon, delta=delta, beta=beta, noise=noise, numerics=numerics, **noise_options
    )
    data = x if engine is None else as_records(x, *statistic.bounds, clip=statistic.clip, engine=engine)
    release = mech.release(data, accountant=accountant, rng=rng)
    if not clamp:
        return release
    lo, hi = statistic.bounds
    return dataclasses.replace(
        release, value=float(np.clip(release.value, lo, hi)), details={**release.details, "clamp": True}
    )


def median(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: Bounds,
    method: Literal[
        "auto", "exponential", "smooth_sensitivity", "inverse_sensitivity", "piecewise_laplace", "unbounded"
    ] = "auto",
    clamp: bool = True,
    clip: bool = True,
    candidates: ArrayLike | None = None,
    lattice: LatticeSpec = MULTISCALE,
    atoms: Literal["auto", "test", "light", "heavy"] = "auto",
    scale: float = 1.0,
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    engine: Any = None,
    neighbours: str = "substitution",
    df: float | None = None,
    gamma: float | None = None,
    constants: str | None = None,
) -> Release:
    """Private (lower) median x_(⌈n/2⌉) of x in ``bounds``: pure ε-DP under substitution (or (ε, δ) with
    Laplace noise).

    Parameters
    ----------
    x
        1-D data, one record per person (NaN: imputed with the bounds' midpoint; outside: clipped).
    epsilon, delta
        The budget (δ only for ``noise="laplace"``).
    bounds
        Public ``(lower, upper)``; ``None``: no bounds at all (docs/quantiles.md#no-bounds): ``method="auto"``
        and ``"exponential"`` run the scale-free exponential mechanism on the whole line, ``"unbounded"``
        AboveThreshold on a geometric ladder, every other method runs inside a private range found with
        25% of ε (``details["epsilon_bounds"]``); or ``"private"``: found privately with 25% of ε around
        the public scale hint ``scale`` (:class:`~smoothdp.central.unbounded.private_bounds.PrivateRange`).
        The bounds used are in ``release.details["bounds"]`` (private outputs, covered by the guarantee).
    method
        ``"auto"`` (default, from public parameters: docs/quantiles.md#which-method), ``"exponential"``
        (docs/theory/quantiles.md#the-exponential-mechanism-quantile), ``"smooth_sensitivity"``
        (docs/theory/smooth-sensitivity.md#median-and-quantiles), ``"inverse_sensitivity"`` (Asi & Duchi,
        smoothed: docs/theory/instance-optimal.md#the-inverse-sensitivity-mechanism),
        ``"piecewise_laplace"`` (Durfee 2025: docs/theory/instance-optimal.md#piecewise-laplace) or
        ``"unbounded"`` (``bounds=None`` only: docs/theory/unbounded.md#unbounded-quantile-estimation).
    clamp
        Clamp the release into the bounds (post-processing; ``False``: the unbiased smooth-sensitivity value).
    clip
        Clip records into the bounds (default), or refuse records outside them (trusted data only).
    candidates
        Public sorted candidate values for discrete data: the exponential mechanism outputs one of them
        (``method="auto"`` then picks it).
    lattice
        Exponential mechanism only: the public atoms of its base measure, so that a tied value on them is
        released exactly (docs/theory/quantiles.md#a-multi-scale-lattice). Default ``"multiscale"``: every
        dyadic number with at most five binary places (halves, quarters, …, 1/32) and every decimal number
        with at most four decimal places (tenths, cents, …), a point carrying less mass the more digits it
        needs; nothing to pass for data tied at 62.5, 9.99 or 21.3. A spacing (``1.0``: the integers;
        ``0.1``; ``0.25``), a sequence of spacings, or ``None`` (the pure continuum) for explicit control.
        The smooth-sensitivity release ignores it (it is already exact on heavy ties).
    atoms
        Exponential mechanism only: the atoms' masses, a public choice. ``"auto"`` (default): under
        substitution, light atoms (2^-14·σ per point), or on enough records (n from 680 at ε = 1 to 2^20) a
        private selection (5% of ε) that makes the one level holding nearly all the records heavy
        (docs/theory/quantiles.md#the-heavy-level-of-one-quantile); under add/remove a private test (5% of
        ε) picks light or heavy atoms and a private choice (2.5%) the heavy level. ``"heavy"``: 64·σ per
        point on every level of ``lattice``, nothing spent on a test (for data known to lie on one lattice:
        ``lattice=0.5, atoms="heavy"`` releases a value tied at a half exactly from a few ranks of margin);
        ``"light"``: light atoms, no test; ``"test"``: the selection (or the add/remove test) whatever n.
    scale
        Public scale hint for ``bounds="private"``.
    noise
        The smooth-sensitivity noise family: ``"polyplace"`` (default), ``"student_t"``, ``"cauchy"`` or
        ``"laplace"`` (with ``delta``); passing it selects the smooth-sensitivity method under ``"auto"``.
    beta
        The smoothness β of the smooth sensitivity (``None``: :func:`~smoothdp.central.choose.choose_beta`,
        from public parameters).
    df
        Degrees of freedom of Student's T (``noise="student_t"`` only; default 3).
    gamma
        Exponent γ > 1 of the generalized Cauchy (``noise="cauchy"`` only; default 4).
    constants
        ``"bun_steinke"`` (Student's T) or ``"nrs"`` (Cauchy): the papers' constants, for comparison.
    numerics
        ``"exact"`` (default) or ``"float"``.
    rng
        ``None`` (default): the library's secure generator; a seed or a generator from
        :func:`smoothdp.rng.default_rng`: a reproducible SIMULATION (``release.is_simulation``), not private.
    accountant
        An :class:`~smoothdp.accounting.Accountant` charged the release's guarantee before any noise is
        drawn (a release that does not fit raises ``BudgetError`` and draws nothing); ``None``: no charge.
    engine
        ``None``/``"numpy"`` (in memory), ``"dask"`` or a ``dask.distributed.Client`` (docs/scale.md).
    neighbours
        ``"substitution"`` (default: one record replaced, n public) or ``"add_remove"`` (n private; what a
        grouped release needs). Under add/remove only the exponential mechanism runs (``method="auto"``
        picks it), with target q·n and every parameter from ε, q and the bounds, never from n; an empty x
        releases a draw from the base measure (docs/theory/quantiles.md#adding-or-removing-a-record).
        ``method="smooth_sensitivity"`` and ``bounds="private"`` support substitution only.
    """
    return quantile(
        x,
        0.5,
        epsilon=epsilon,
        bounds=bounds,
        method=method,
        clamp=clamp,
        clip=clip,
        candidates=candidates,
        lattice=lattice,
        atoms=atoms,
        scale=scale,
        noise=noise,
        delta=delta,
        beta=beta,
        numerics=numerics,
        rng=rng,
        accountant=accountant,
        engine=engine,
        neighbours=neighbours,
        _median=True,
        df=df,
        gamma=gamma,
        constants=constants,
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
    clip: bool = True,
    clamp: bool = True,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    engine: Any = None,
    df: float | None = None,
    gamma: float | None = None,
    constants: str | None = None,
) -> Release:
    """Private trimmed mean (Bun & Steinke, NeurIPS 2019) under substitution: ``trim`` records per end
    (int) or a proportion per end (float) (docs/theory/smooth-sensitivity.md#trimmed-mean). Records are
    clipped into ``bounds`` (NaN imputed with their midpoint) and the release is clamped into them unless
    ``clamp=False``; other arguments as :func:`median`."""
    noise_options = noise_options_given(df=df, gamma=gamma, constants=constants)
    return _release(
        TrimmedMean(trim, bounds=bounds, clip=clip),
        x,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        beta=beta,
        clamp=clamp,
        numerics=numerics,
        rng=rng,
        accountant=accountant,
        noise_options=noise_options,
        engine=engine,
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
