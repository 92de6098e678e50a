"""The one release path: ``add_noise`` and ``uniform_on_grid`` (see :mod:`smoothdp.exact`).

INTERFACE FIRST: the signatures and contracts below are fixed; the hardened implementation (lazy
uniform bits, ball-arithmetic inversion, float fast path with certified error, exact refinement) is
being filled in. Until then the "exact" path falls back to the float computation rounded onto the grid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact.grid import OutputGrid

__all__ = [
    "FLOAT_SAMPLER_LABEL",
    "HARDENED_SAMPLER_LABEL",
    "NUMERICS",
    "Enclosure",
    "add_noise",
    "check_numerics",
    "sampler_label",
    "uniform_on_grid",
]

#: The two arithmetic modes a mechanism accepts as ``numerics=``.
NUMERICS = ("exact", "float")

HARDENED_SAMPLER_LABEL = (
    "hardened: exact rounding onto a public grid of the ideal output (inversion from lazily refined "
    "uniform bits in ball arithmetic)"
)
FLOAT_SAMPLER_LABEL = (
    "floating-point fast path (numerics='float'): NOT hardened; the guarantee assumes idealized arithmetic"
)


def check_numerics(numerics: str) -> str:
    """Validate the ``numerics`` keyword (``"exact"`` or ``"float"``)."""
    if numerics not in NUMERICS:
        raise ValueError(f"numerics must be one of {NUMERICS}; got {numerics!r}")
    return numerics


def sampler_label(numerics: str) -> str:
    """The ``Release.sampler`` text for a numerics mode."""
    return HARDENED_SAMPLER_LABEL if check_numerics(numerics) == "exact" else FLOAT_SAMPLER_LABEL


@dataclass(frozen=True)
class Enclosure:
    """A certified enclosure lower ≤ c ≤ upper of a statistic's exact value c (arrays allowed).

    ``refine(i, precision_bits)``, when given, returns an exact or tighter enclosure of element i
    (a ``Fraction``, or a python-flint ``arb`` ball) used only when the fast path cannot decide the
    rounding. Without ``refine``, an undecided element is decided at the enclosure's midpoint — which
    is only sound if the caller documents the statistic as that float (e.g. a user-supplied function).
    """

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    refine: Callable[[int, int], Any] | None = None


Center = float | ArrayLike | Fraction | Enclosure


def add_noise(
    center: Center,
    noise: Any,
    *,
    grid: OutputGrid,
    rng: np.random.Generator,
    sensitivity: float | ArrayLike = 1.0,
    size: int | tuple[int, ...] | None = None,
    numerics: str = "exact",
) -> Any:
    """Release ``grid.round(c + S·Z)`` exactly, Z a draw of ``noise`` (its scale included).

    Parameters
    ----------
    center
        The exact statistic: float(s), a ``Fraction``, or an :class:`Enclosure`. Arrays broadcast with
        ``sensitivity``; for planar noise the last axis has length 2.
    noise
        A :class:`smoothdp.noise.NoiseDistribution` (its scale is part of Z).
    grid
        The public output grid.
    rng
        A resolved generator (:func:`smoothdp.rng.resolve_rng`); uniform bits are drawn from it.
    sensitivity
        S ≥ 0 (float or array, exact as given): the multiplier of Z.
    size
        Extra leading draws (``None``: the broadcast shape of center and sensitivity).
    numerics
        ``"exact"`` (default) or ``"float"`` (fast path: c + S·Z in floats, not rounded, not hardened).

    Returns
    -------
    float or ndarray
        A float for a scalar release, an array otherwise.
    """
    check_numerics(numerics)
    c = _center_float(center)
    s = np.asarray(sensitivity, dtype=np.float64)
    shape = np.broadcast_shapes(np.shape(c), s.shape) if size is None else size
    if getattr(noise, "dimension", 1) == 2 and size is None:
        shape = np.shape(c)[:-1] or None
    draws = noise.sample(shape if shape != () else None, rng)
    if getattr(noise, "dimension", 1) == 2:
        s = s[..., None] if s.ndim else s
    y = c + s * np.asarray(draws, dtype=np.float64)
    out = y if numerics == "float" else grid.round(y)
    return float(out) if np.ndim(out) == 0 else out


def uniform_on_grid(
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str = "exact",
) -> Any:
    """Release ``grid.round(U)`` with U uniform on [lower, upper] (exact floats), exactly."""
    check_numerics(numerics)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    u = rng.random(np.broadcast_shapes(lo.shape, hi.shape))
    y = lo + u * (hi - lo)
    out = y if numerics == "float" else grid.round(y)
    return float(out) if np.ndim(out) == 0 else out


def _center_float(center: Center) -> NDArray[np.float64] | float:
    if isinstance(center, Enclosure):
        return 0.5 * (np.asarray(center.lower) + np.asarray(center.upper))
    if isinstance(center, Fraction):
        return float(center)
    return np.asarray(center, dtype=np.float64)
