"""Noise std per unit of smooth sensitivity against β, for every family (HT Figure 1).

HT = Hladík & Tětek, *Smooth Sensitivity Revisited: Towards Optimality*, FORC 2025; LY = Liang & Yi, CCS 2024;
NRS07 = Nissim, Raskhodnikova & Smith, STOC 2007; BS19 = Bun & Steinke, NeurIPS 2019. Derivation:
``docs/theory/calibration.md#noise-std-per-unit-of-smooth-sensitivity``.

This is an analysis of the calibration rules (used by the experiment that redraws HT Figure 1 and by the
tests), not a rule: the rules themselves are in :mod:`smoothdp.calibration`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.calibration import laplace_dp_eta
from smoothdp.noise import PolyPlace
from smoothdp.validation import check_delta, check_epsilon

__all__ = ["NoiseStdCurves", "noise_std_per_sensitivity"]

#: objective(shape, β) -> std, vectorized (both arguments broadcast).
Objective = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True)
class NoiseStdCurves:
    """Standard deviation of the noise per unit of smooth sensitivity, at fixed ε, against β.

    Every array has the shape of ``beta``; ``inf`` where the family is not admissible (or has infinite
    variance) at that β. Formulas: ``docs/theory/calibration.md#noise-std-per-unit-of-smooth-sensitivity``
    (variances in ``docs/theory/noise.md``).

    Attributes
    ----------
    polyplace
        std of PolyPlace(1/β, ε/β) (HT Lemma 13), finite for β < ε/2.
    student_t
        BS19 constants, d optimised: min_{d>2} (d+1)/(2√(d−2)(ε − β(d+1))) (HT Claim 17).
    cauchy
        NRS constants, c optimised: min_{c>3} (c+1)/((ε − β(c+1))√(2cos(2π/c)+1)) (HT Claim 16).
    laplace
        (ε, δ) Laplace as HT plot it: √2/(ε − β ln(2/δ)) (HT Claim 18).
    laplace_calibrated
        √2/η(β) with this library's (capped) rule :func:`laplace_dp_eta` (equal to ``laplace`` at ε = 1).
    student_t_ly, cauchy_ly
        The tighter LY constants: min_{d>2} (d+1)/(2√(d−2)(ε − dβ)) and
        min_{c>3} (c−1)^{(c−1)/c}·√(sin(π/c)/sin(3π/c))/(ε − (c−1)β).
    global_laplace
        The Laplace mechanism with global sensitivity: √2/ε (HT's dashed reference line).
    student_t_df, cauchy_gamma, student_t_ly_df, cauchy_ly_gamma
        The optimising d and c (``nan`` where inadmissible).
    """

    epsilon: float
    delta: float
    beta: NDArray[np.float64]
    polyplace: NDArray[np.float64]
    student_t: NDArray[np.float64]
    cauchy: NDArray[np.float64]
    laplace: NDArray[np.float64]
    laplace_calibrated: NDArray[np.float64]
    student_t_ly: NDArray[np.float64]
    cauchy_ly: NDArray[np.float64]
    global_laplace: NDArray[np.float64]
    student_t_df: NDArray[np.float64]
    cauchy_gamma: NDArray[np.float64]
    student_t_ly_df: NDArray[np.float64]
    cauchy_ly_gamma: NDArray[np.float64]

    def as_dict(self) -> dict[str, NDArray[np.float64] | float]:
        return dict(self.__dict__)


def noise_std_per_sensitivity(epsilon: float, betas: ArrayLike, *, delta: float = 1e-5) -> NoiseStdCurves:
    """Noise std per unit of smooth sensitivity for each family at ε, against β (HT Figure 1).

    Parameters
    ----------
    epsilon
        ε > 0.
    betas
        Array of smoothness values β > 0.
    delta
        δ ∈ (0, 1) of the Laplace (ε, δ) curves.

    Returns
    -------
    NoiseStdCurves
        One array per family (see :class:`NoiseStdCurves`); PolyPlace is the lowest at every β.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    b = np.asarray(betas, dtype=np.float64)
    if b.size == 0 or np.any(~np.isfinite(b)) or np.any(b <= 0):
        raise ValueError("betas must hold finite values in (0, inf)")
    flat = b.ravel()

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        alpha = eps / flat
        poly = np.array(
            [PolyPlace(1.0 / x, a).std() if a > 2.0 else math.inf for x, a in zip(flat, alpha, strict=True)]
        )

        def t_bs(d: NDArray[np.float64], bb: NDArray[np.float64]) -> NDArray[np.float64]:
            return (d + 1) / (2 * np.sqrt(d - 2) * (eps - bb * (d + 1)))

        def t_ly(d: NDArray[np.float64], bb: NDArray[np.float64]) -> NDArray[np.float64]:
            return (d + 1) / (2 * np.sqrt(d - 2) * (eps - bb * d))

        def gc_nrs(c: NDArray[np.float64], bb: NDArray[np.float64]) -> NDArray[np.float64]:
            return (c + 1) / ((eps - bb * (c + 1)) * np.sqrt(2 * np.cos(2 * np.pi / c) + 1))

        def gc_ly(c: NDArray[np.float64], bb: NDArray[np.float64]) -> NDArray[np.float64]:
            sd = np.sqrt(np.sin(np.pi / c) / np.sin(3 * np.pi / c))
            return (c - 1) ** ((c - 1) / c) * sd / (eps - (c - 1) * bb)

        t_bs_std, t_bs_d = _minimise_over_shape(t_bs, flat, 2.0, eps / flat - 1.0)
        t_ly_std, t_ly_d = _minimise_over_shape(t_ly, flat, 2.0, eps / flat)
        gc_std, gc_c = _minimise_over_shape(gc_nrs, flat, 3.0, eps / flat - 1.0)
        gc_ly_std, gc_ly_c = _minimise_over_shape(gc_ly, flat, 3.0, eps / flat + 1.0)
        lap_denominator = eps - flat * math.log(2.0 / dlt)
        lap = np.where(lap_denominator > 0, math.sqrt(2.0) / lap_denominator, math.inf)
        eta = laplace_dp_eta(eps, dlt, flat)
        lap_cal = np.where(eta > 0, math.sqrt(2.0) / eta, math.inf)

    def shaped(a: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(a, dtype=np.float64).reshape(b.shape)

    return NoiseStdCurves(
        epsilon=eps,
        delta=dlt,
        beta=b.copy(),
        polyplace=shaped(poly),
        student_t=shaped(t_bs_std),
        cauchy=shaped(gc_std),
        laplace=shaped(lap),
        laplace_calibrated=shaped(lap_cal),
        student_t_ly=shaped(t_ly_std),
        cauchy_ly=shaped(gc_ly_std),
        global_laplace=np.full(b.shape, math.sqrt(2.0) / eps),
        student_t_df=shaped(t_bs_d),
        cauchy_gamma=shaped(gc_c),
        student_t_ly_df=shaped(t_ly_d),
        cauchy_ly_gamma=shaped(gc_ly_c),
    )


def _minimise_over_shape(
    objective: Objective, beta: NDArray[np.float64], low: float, high: NDArray[np.float64], n_grid: int = 400
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """min over a shape parameter p ∈ (low, high(β)) of objective(p, β), vectorized over β.

    A geometric grid in p − low (so both small and huge optimal shapes are resolved), then golden-section
    search between the grid neighbours of the best point. Returns (minimum, argmin); (inf, nan) where
    the interval is empty.
    """
    n = beta.size
    admissible = high > low
    span = np.where(admissible, high - low, 1.0)
    # Offsets p − low from 1e−7·min(1, span) up to span: small and huge optima are both on the grid.
    t = np.linspace(0.0, 1.0, n_grid)
    log_lo = np.log(1e-7 * np.minimum(1.0, span))
    log_hi = np.log(span * (1.0 - 1e-9))
    p = low + np.exp(log_lo[:, None] + t[None, :] * (log_hi - log_lo)[:, None])
    values = objective(p, beta[:, None])
    values = np.where(np.isfinite(values) & (values > 0), values, np.inf)
    best = np.argmin(values, axis=1)
    rows = np.arange(n)
    lo = p[rows, np.maximum(best - 1, 0)]
    hi = p[rows, np.minimum(best + 1, n_grid - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):
        a = hi - ratio * (hi - lo)
        c = lo + ratio * (hi - lo)
        fa = objective(a, beta)
        fc = objective(c, beta)
        fa = np.where(np.isfinite(fa) & (fa > 0), fa, np.inf)
        fc = np.where(np.isfinite(fc) & (fc > 0), fc, np.inf)
        left = fa < fc
        hi = np.where(left, c, hi)
        lo = np.where(left, lo, a)
    arg = 0.5 * (lo + hi)
    refined = objective(arg, beta)
    refined = np.where(np.isfinite(refined) & (refined > 0), refined, np.inf)
    grid_best = values[rows, best]
    grid_arg = p[rows, best]
    use_refined = refined <= grid_best
    minimum = np.where(use_refined, refined, grid_best)
    argmin = np.where(use_refined, arg, grid_arg)
    ok = admissible & np.isfinite(minimum)
    return np.where(ok, minimum, math.inf), np.where(ok, argmin, math.nan)
