"""The one release path: ``add_noise`` and ``uniform_on_grid`` (see :mod:`smoothdp.exact`).

``numerics="exact"`` returns exactly R(c + S·Z) on the public grid: the noise Z is a fixed map of
uniforms known bit by bit (:mod:`smoothdp.exact.laws`), a certified float enclosure decides almost every
element, and python-flint ``arb`` with more bits decides the rest (:mod:`smoothdp.exact._core`). Proof
that this is post-processing of the ideal mechanism: docs/theory/floating-point.md#the-exact-release-path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import engine
from smoothdp.exact import lazy_flint as flint
from smoothdp.exact._core import BASIC_ERR, Affine, GridRounder, fraction_float_bounds
from smoothdp.exact._core import hi as upper_float
from smoothdp.exact._core import lo as lower_float
from smoothdp.exact.grid import OutputGrid
from smoothdp.exact.laws import LogUniformLaw, TruncatedExponentialLaw, UniformLaw

__all__ = [
    "FLOAT_SAMPLER_LABEL",
    "HARDENED_SAMPLER_LABEL",
    "NUMERICS",
    "Enclosure",
    "add_noise",
    "check_numerics",
    "log_uniform_on_grid",
    "sampler_label",
    "truncated_exponential_on_grid",
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
    rounding; i is the flat (C-order) index into the broadcast of ``lower`` and ``upper`` (for planar
    noise, including the last axis of length 2). The enclosures must shrink to the exact value as
    ``precision_bits`` grows. Without ``refine``, an undecided element is decided at the enclosure's
    midpoint — which is only sound if the caller documents the statistic as that midpoint (e.g. a
    user-supplied function's float output).
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
        The exact statistic: float(s), a ``Fraction`` (or an object array of them), or an
        :class:`Enclosure`. Arrays broadcast with ``sensitivity``; for planar noise the last axis has
        length 2.
    noise
        A :class:`smoothdp.noise.NoiseDistribution` (its scale is part of Z).
    grid
        The public output grid.
    rng
        A resolved generator (:func:`smoothdp.rng.resolve_rng`); uniform bits are drawn from it.
    sensitivity
        S ≥ 0 (finite float or array, exact as given): the multiplier of Z. S = 0 releases R(c).
    size
        The draw shape, broadcast with the shapes of center (without its last axis for planar noise)
        and sensitivity (``None``: their broadcast shape).
    numerics
        ``"exact"`` (default) or ``"float"`` (fast path: c + S·Z in floats, not rounded, not hardened).

    Returns
    -------
    float or ndarray
        A float for a scalar release, an array otherwise (shape + (2,) for planar noise). An ideal
        output beyond the float range is released as ±inf (the grid's rounding of it).
    """
    check_numerics(numerics)
    s = np.asarray(sensitivity, dtype=np.float64)
    if s.size and not bool(np.all(np.isfinite(s) & (s >= 0))):
        raise ValueError("sensitivity must be finite and ≥ 0 (a caller bug, not a data condition)")
    dim = int(getattr(noise, "dimension", 1))
    if numerics == "float":
        return _add_noise_float(center, noise, s, size, dim, rng)
    law = noise._exact_law()
    parsed = _parse_center(center)
    c_shape = parsed.shape
    if dim == 2 and (len(c_shape) == 0 or c_shape[-1] != 2):
        raise ValueError(f"planar noise needs a center whose last axis has length 2; got shape {c_shape}")
    base = c_shape[:-1] if dim == 2 else c_shape
    shape = np.broadcast_shapes(base, s.shape, _as_shape(size))
    n = math.prod(shape)
    full = (*shape, dim)
    c_lo, c_hi, c_index = _center_rows(parsed, base, shape, dim)
    s_flat = s.reshape(n) if s.shape == shape else np.broadcast_to(s, shape).reshape(n)
    s2 = np.broadcast_to(s_flat.reshape(n, 1), (n, dim))
    affine = Affine(
        c_lo=c_lo,
        c_hi=c_hi,
        s_lo=s2,
        s_hi=s2,
        c_arb=lambda i, j: parsed.arb(c_index(i, j)),
        s_arb=lambda i: flint.arb(float(s_flat[i])),
    )
    out = engine.run(law, affine, n, _rounder(grid), rng) if n else np.empty((0, dim))
    res = out.reshape(full) if dim == 2 else out.reshape(shape)
    return float(res) if res.ndim == 0 else res


def uniform_on_grid(
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str = "exact",
) -> Any:
    """Release ``grid.round(U)`` with U uniform on [lower, upper] (exact floats, lower ≤ upper), exactly."""
    check_numerics(numerics)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if not bool(np.all(np.isfinite(lo) & np.isfinite(hi) & (lo <= hi))):
        raise ValueError("uniform_on_grid needs finite lower ≤ upper")
    shape = np.broadcast_shapes(lo.shape, hi.shape)
    if numerics == "float":
        u = rng.random(shape)
        y = lo + u * (hi - lo)
        return float(y) if np.ndim(y) == 0 else y
    n = math.prod(shape)
    lo_f = np.broadcast_to(lo, shape).reshape(n, 1)
    hi_f = np.broadcast_to(hi, shape).reshape(n, 1)
    with np.errstate(all="ignore"):
        d = hi_f - lo_f
        d_lo = np.maximum(lower_float(d, BASIC_ERR), 0.0)
        d_hi = upper_float(d, BASIC_ERR)
    affine = Affine(
        c_lo=lo_f,
        c_hi=lo_f,
        s_lo=np.where(d == 0, 0.0, d_lo),
        s_hi=np.where(d == 0, 0.0, d_hi),
        c_arb=lambda i, j: flint.arb(float(lo_f[i, 0])),
        s_arb=lambda i: flint.arb(float(hi_f[i, 0])) - flint.arb(float(lo_f[i, 0])),
    )
    out = engine.run(UniformLaw(1.0), affine, n, _rounder(grid), rng) if n else np.empty((0, 1))
    res = out.reshape(shape)
    return float(res) if res.ndim == 0 else res


def truncated_exponential_on_grid(
    lower: float,
    upper: float,
    *,
    rate: float,
    increasing: bool,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str = "exact",
) -> float:
    """Release ``grid.round(lower + (upper − lower)·W)`` exactly, W on [0, 1] with density ∝ e^{−rate·w}
    (or ∝ e^{rate·w} when ``increasing``): a truncated exponential on [lower, upper] decaying away from
    ``lower`` (towards ``upper``). Finite floats lower ≤ upper; 0 < rate ≤ 700."""
    check_numerics(numerics)
    lo_f, hi_f = float(lower), float(upper)
    if not (math.isfinite(lo_f) and math.isfinite(hi_f) and lo_f <= hi_f):
        raise ValueError("truncated_exponential_on_grid needs finite lower ≤ upper")
    if not 0.0 < rate <= 700.0:
        raise ValueError(f"rate must lie in (0, 700]; got {rate!r}")
    law = TruncatedExponentialLaw(rate, increasing=increasing)
    if numerics == "float":
        u = float(rng.random())
        w = (
            math.log1p(u * math.expm1(rate)) / rate
            if increasing
            else -math.log1p(-u * -math.expm1(-rate)) / rate
        )
        return lo_f + (hi_f - lo_f) * min(max(w, 0.0), 1.0)
    return _affine_draw(law, lo_f, lo_f, hi_f, grid, rng)


def log_uniform_on_grid(
    lower: float,
    upper: float,
    *,
    grid: OutputGrid,
    rng: np.random.Generator,
    numerics: str = "exact",
) -> float:
    """Release ``grid.round(Y)`` exactly, Y log-uniform on [lower, upper] (density ∝ 1/y), for floats
    0 < lower < upper; the mirror image −Y for upper < lower < 0 ... is the caller's (R is odd)."""
    check_numerics(numerics)
    lo_f, hi_f = float(lower), float(upper)
    if not (math.isfinite(lo_f) and math.isfinite(hi_f) and 0.0 < lo_f < hi_f):
        raise ValueError("log_uniform_on_grid needs finite 0 < lower < upper")
    if numerics == "float":
        return lo_f * math.exp(float(rng.random()) * math.log(hi_f / lo_f))
    return _affine_draw(LogUniformLaw(lo_f, hi_f), lo_f, lo_f, hi_f, grid, rng, multiplier=lo_f)


def _affine_draw(
    law: Any,
    center: float,
    lower: float,
    upper: float,
    grid: OutputGrid,
    rng: np.random.Generator,
    multiplier: float | None = None,
) -> float:
    """R(center + S·Z) for one draw Z of ``law``, S = ``multiplier`` (exact float) or upper − lower (exact
    in arb, enclosed in floats)."""
    c = np.full((1, 1), center)
    if multiplier is None:
        with np.errstate(all="ignore"):
            d = np.full((1, 1), upper - lower)
            s_lo = np.maximum(lower_float(d, BASIC_ERR), 0.0)
            s_hi = upper_float(d, BASIC_ERR)
        s_lo, s_hi = np.where(d == 0, 0.0, s_lo), np.where(d == 0, 0.0, s_hi)

        def s_arb(i: int) -> Any:
            return flint.arb(upper) - flint.arb(lower)

    else:
        s_lo = s_hi = np.full((1, 1), multiplier)

        def s_arb(i: int) -> Any:
            return flint.arb(multiplier)

    affine = Affine(c_lo=c, c_hi=c, s_lo=s_lo, s_hi=s_hi, c_arb=lambda i, j: flint.arb(center), s_arb=s_arb)
    return float(engine.run(law, affine, 1, _rounder(grid), rng)[0, 0])


# -- helpers ------------------------------------------------------------------------------------------------
def _as_shape(size: int | tuple[int, ...] | None) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, int | np.integer):
        return (int(size),)
    return tuple(int(k) for k in size)


def _center_rows(
    parsed: _ParsedCenter, base: tuple[int, ...], shape: tuple[int, ...], dim: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], Callable[[int, int], int]]:
    """The center's bounds as (n, dim) rows of the output (views where the shapes allow it), and the flat
    index of the center element behind row i, coordinate j."""
    n = math.prod(shape)
    if base == shape:  # one center per output element: the rows are the center itself
        return parsed.lo.reshape(n, dim), parsed.hi.reshape(n, dim), lambda i, j: i * dim + j
    if math.prod(base) == 1:  # one center for every output element
        rows = (n, dim)
        lo_, hi_ = parsed.lo.reshape(1, dim), parsed.hi.reshape(1, dim)
        return np.broadcast_to(lo_, rows), np.broadcast_to(hi_, rows), lambda i, j: j
    index = np.broadcast_to(
        np.arange(math.prod(parsed.shape)).reshape(parsed.shape if dim == 2 else (*parsed.shape, 1)),
        (*shape, dim),
    ).reshape(n, dim)
    return parsed.lo.reshape(-1)[index], parsed.hi.reshape(-1)[index], lambda i, j: int(index[i, j])


def _rounder(grid: OutputGrid) -> GridRounder:
    return GridRounder(grid.exponent, grid.precision)


@dataclass
class _ParsedCenter:
    shape: tuple[int, ...]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    arb: Callable[[int], Any]


def _parse_center(center: Center) -> _ParsedCenter:
    if isinstance(center, Enclosure):
        c_lo, c_hi = np.broadcast_arrays(
            np.asarray(center.lower, dtype=np.float64), np.asarray(center.upper, dtype=np.float64)
        )
        if not bool(np.all(c_lo <= c_hi)):
            raise ValueError("Enclosure needs lower ≤ upper")
        refine = center.refine
        lo_flat = c_lo.reshape(-1)
        hi_flat = c_hi.reshape(-1)

        def enclosure_arb(i: int) -> Any:
            if refine is None:
                return (flint.arb(float(lo_flat[i])) + flint.arb(float(hi_flat[i]))) / 2
            value = refine(i, flint.ctx.prec)
            if isinstance(value, Fraction):
                return flint.arb(flint.fmpq(value.numerator, value.denominator))
            return flint.arb(value)

        return _ParsedCenter(c_lo.shape, c_lo, c_hi, enclosure_arb)
    if isinstance(center, Fraction):
        f_lo, f_hi = fraction_float_bounds(center)
        q = flint.fmpq(center.numerator, center.denominator)
        return _ParsedCenter((), np.array(f_lo), np.array(f_hi), lambda i: flint.arb(q))
    arr = np.asarray(center)
    if arr.dtype == object:
        items = [Fraction(x) for x in arr.reshape(-1)]
        bounds = np.array([fraction_float_bounds(x) for x in items], dtype=np.float64).reshape(-1, 2)
        qs = [flint.fmpq(x.numerator, x.denominator) for x in items]
        lows, highs = bounds[:, 0].reshape(arr.shape), bounds[:, 1].reshape(arr.shape)
        return _ParsedCenter(arr.shape, lows, highs, lambda i: flint.arb(qs[i]))
    c = np.asarray(center, dtype=np.float64)
    flat = c.reshape(-1)
    return _ParsedCenter(c.shape, c, c, lambda i: flint.arb(float(flat[i])))


def _add_noise_float(
    center: Center, noise: Any, s: NDArray[np.float64], size: Any, dim: int, rng: np.random.Generator
) -> Any:
    """The idealized-numerics path: c + S·Z in floats, not rounded (not hardened)."""
    c = _center_float(center)
    base = np.shape(c)[:-1] if dim == 2 else np.shape(c)
    shape = np.broadcast_shapes(base, s.shape, _as_shape(size))
    draws = np.asarray(noise.sample(shape if shape != () else None, rng, numerics="float"), dtype=np.float64)
    if dim == 2:
        s = s[..., None] if s.ndim else s
    y = c + s * draws
    return float(y) if np.ndim(y) == 0 else y


def _center_float(center: Center) -> NDArray[np.float64] | float:
    if isinstance(center, Enclosure):
        return 0.5 * (np.asarray(center.lower) + np.asarray(center.upper))
    if isinstance(center, Fraction):
        return float(center)
    arr = np.asarray(center)
    if arr.dtype == object:
        return np.asarray([float(x) for x in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)
    return np.asarray(center, dtype=np.float64)
