"""Exact producibility (lattice) audit: could this released float have come from that input?

Floating-point noise samplers can only produce finitely many floats, and *which* floats depends on the
statistic f(x) and the scale S (Mironov, *On Significance of the Least Significant Bits for Differential
Privacy*, ACM CCS 2012). An output of M(x') that M(x) cannot produce tells x and x' apart with certainty,
whatever ε is printed. This module decides producibility **exactly** (no sampling, no tolerance) for the
two kinds of release path in smoothdp:

(a) **Float samplers on a finite uniform lattice** (the fast path, ``numerics="float"``): the output is
    y = g(k), a fixed float computation of a lattice index k ∈ {first, …, last} (for numpy's uniform
    doubles, U = k·2⁻⁵³). When g is **monotone** in k, the floats it produces are decided by bisection
    over the lattice: y is producible iff g(k*) = y for k* the first index with g(k) ≥ y
    (:func:`producible_on_lattice`). Monotonicity holds for an inverse-CDF sampler evaluated as
    fl(c + fl(S·fl(b·F⁻¹(U)))) when the float F⁻¹ is itself non-decreasing in U (a correctly rounded or
    faithful monotone log, as glibc's, for numpy's Laplace), because each float operation x ↦ fl(a + x),
    x ↦ fl(s·x) with s > 0 is non-decreasing. It does **not** hold for rejection samplers or
    two-uniform transforms (Box–Muller, ziggurat): model those otherwise. :func:`is_monotone_on_sample`
    spot-checks a model; :func:`numpy_laplace_release` is the exact model of numpy's Laplace draw
    scaled and shifted in floats.
(b) **The exact path** (:func:`smoothdp.exact.add_noise`): the output is R(c + S·Z) exactly, R the
    public :class:`~smoothdp.exact.OutputGrid`'s rounding. Then y is producible iff y is a grid point
    and its cell R⁻¹(y) = {t : R(t) = y} has positive probability under c + S·Z
    (:func:`producible_on_grid`). :func:`grid_cell` gives the cell's bounds exactly (as fractions);
    for a law with a positive density on an interval support (every continuous family of
    :mod:`smoothdp.noise` has full support) the probability is positive iff the open cell meets the
    open support, so no CDF evaluation decides anything; :func:`cell_probability` reports the
    probability in floats for information.

:func:`unproducible_share` turns either decision into the audit's number: the share of outputs of M(x')
that M(x) cannot produce. For a release path whose every output is producible from every input (the
exact path with full-support noise), it is 0; a positive share is a certificate of distinguishability.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact.grid import OutputGrid
from smoothdp.keywords import check_keywords_of

__all__ = [
    "NUMPY_DOUBLE_BITS",
    "LatticeSampler",
    "cell_probability",
    "grid_cell",
    "is_monotone_on_sample",
    "numpy_laplace_release",
    "numpy_laplace_std",
    "producible_on_grid",
    "producible_on_lattice",
    "unproducible_share",
]

#: numpy's uniform doubles: U = k·2⁻⁵³, k = (64-bit word) >> 11, k ∈ {0, …, 2⁵³ − 1}.
NUMPY_DOUBLE_BITS = 53

LatticeMap = Callable[[NDArray[np.int64]], NDArray[np.float64]]


# ----------------------------------------------------------------------------------- (a) float lattices
@dataclass(frozen=True)
class LatticeSampler:
    """A float sampler as a monotone map of a finite lattice: it outputs ``output(k)``, k ∈ [first, last].

    ``output`` must be elementwise, deterministic and monotone in k (non-decreasing, or non-increasing
    with ``increasing=False``); :meth:`producible` is then exact (:func:`producible_on_lattice`).
    """

    output: LatticeMap
    first: int
    last: int
    increasing: bool = True

    def producible(self, y: ArrayLike) -> NDArray[np.bool_]:
        """Whether each float in ``y`` is an output of this sampler (exact, by bisection)."""
        return producible_on_lattice(
            y, self.output, first=self.first, last=self.last, increasing=self.increasing
        )

    def is_monotone_on_sample(self, *, samples: int = 10_000, rng: np.random.Generator | None = None) -> bool:
        """Spot-check of the monotonicity requirement (:func:`is_monotone_on_sample`)."""
        return is_monotone_on_sample(
            self.output,
            first=self.first,
            last=self.last,
            increasing=self.increasing,
            samples=samples,
            rng=rng,
        )


def producible_on_lattice(
    y: ArrayLike,
    output: LatticeMap,
    *,
    first: int,
    last: int,
    increasing: bool = True,
) -> NDArray[np.bool_]:
    """Decide exactly, for each float ``y``, whether ``output(k) == y`` for some lattice index k.

    Parameters
    ----------
    y
        The floats to decide (any shape; NaN is never producible).
    output
        The sampler's output as a function of the lattice index: int64 array in, float64 array out,
        elementwise, deterministic and **monotone** in k (non-decreasing, or non-increasing with
        ``increasing=False``). The decision is exact only under that requirement (module docstring).
    first, last
        The lattice indices the sampler can use, inclusive (e.g. 1 and 2⁵³ − 1 for numpy's Laplace,
        which rejects U = 0). ``last`` < 2⁶².
    increasing
        Direction of monotonicity.

    Returns
    -------
    ndarray of bool
        ``True`` where y is produced by some index in [first, last].

    Notes
    -----
    Vectorized bisection for the first index k* with output(k*) ≥ y (≤ y if decreasing), then one
    equality test: about log₂(last − first) evaluations of ``output`` per y.
    """
    if not (0 <= first <= last < 2**62):
        raise ValueError(f"need 0 <= first <= last < 2**62; got first={first}, last={last}")
    target = np.asarray(y, dtype=np.float64)
    flat = target.ravel()
    lo = np.full(flat.shape, first, dtype=np.int64)
    hi = np.full(flat.shape, last + 1, dtype=np.int64)
    active = np.flatnonzero(lo < hi)
    while active.size:
        mid = lo[active] + (hi[active] - lo[active]) // 2
        values = np.asarray(output(mid), dtype=np.float64)
        below = values < flat[active] if increasing else values > flat[active]
        lo[active[below]] = mid[below] + 1
        hi[active[~below]] = mid[~below]
        active = active[lo[active] < hi[active]]
    found = lo <= last
    result = np.zeros(flat.shape, dtype=bool)
    idx = np.flatnonzero(found)
    if idx.size:
        result[idx] = np.asarray(output(lo[idx]), dtype=np.float64) == flat[idx]
    return result.reshape(target.shape)


def is_monotone_on_sample(
    output: LatticeMap,
    *,
    first: int,
    last: int,
    increasing: bool = True,
    samples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> bool:
    """Spot-check the monotonicity :func:`producible_on_lattice` needs (a necessary check, not a proof).

    Tests ``samples`` random adjacent pairs (k, k + 1), the ends of the lattice, and a sorted random
    sample of indices.
    """
    from smoothdp.rng import resolve_rng

    gen = resolve_rng(rng)
    if last == first:
        return True
    k = gen.integers(first, last, size=samples, dtype=np.int64)
    pairs_ok = _ordered(output(k), output(k + 1), increasing)
    ks = np.sort(np.concatenate([[first, last], gen.integers(first, last + 1, size=samples, dtype=np.int64)]))
    v = np.asarray(output(ks), dtype=np.float64)
    return bool(np.all(pairs_ok) and np.all(_ordered(v[:-1], v[1:], increasing)))


def _ordered(a: ArrayLike, b: ArrayLike, increasing: bool) -> NDArray[np.bool_]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return (a <= b) if increasing else (a >= b)


_libm_log = np.frompyfunc(math.log, 1, 1)


def numpy_laplace_std(k: ArrayLike) -> NDArray[np.float64]:
    """numpy's standard Laplace draw ``Generator.laplace(0.0, 1.0)`` as a function of its uniform index.

    numpy draws U = k·2⁻⁵³ (k ≥ 1; U = 0 is rejected) and returns −log(2 − U − U) for U ≥ 1/2 and
    log(U + U) below, with the C library's ``log`` (reproduced here through :func:`math.log`, which
    calls the same function, not numpy's vectorized ``np.log``). Non-decreasing in k when ``log`` is.
    """
    u = np.ldexp(np.asarray(k, dtype=np.int64).astype(np.float64), -NUMPY_DOUBLE_BITS)
    upper = u >= 0.5
    arg = np.where(upper, (2.0 - u) - u, u + u)
    arg = np.where(arg > 0.0, arg, 1.0)  # k = 0 is outside numpy's lattice; keep log defined
    logs = np.asarray(_libm_log(arg), dtype=np.float64)
    out: NDArray[np.float64] = np.where(upper, 0.0 - logs, 0.0 + logs)
    return out


def numpy_laplace_release(center: float, sensitivity: float, scale: float) -> LatticeSampler:
    """The float path's Laplace release as a lattice model (k ≥ 1: numpy rejects U = 0).

    ``output(k) = fl(center + fl(sensitivity · fl(scale · L(k))))`` with L = :func:`numpy_laplace_std`:
    what ``center + sensitivity * Laplace(scale).sample(rng=gen)`` computes in floats with numpy's
    sampler. Monotone non-decreasing for sensitivity ≥ 0 and scale > 0.
    """
    c, s, b = float(center), float(sensitivity), float(scale)
    if not (s >= 0.0 and b > 0.0):
        raise ValueError(f"need sensitivity >= 0 and scale > 0; got {sensitivity!r}, {scale!r}")

    def output(k: NDArray[np.int64]) -> NDArray[np.float64]:
        z = b * numpy_laplace_std(k)
        out: NDArray[np.float64] = c + s * z
        return out

    return LatticeSampler(output, 1, 2**NUMPY_DOUBLE_BITS - 1)


# ----------------------------------------------------------------------------------- (b) exact path
def _spacing(grid: OutputGrid, magnitude_exponent: int) -> Fraction:
    """The grid spacing on [2^e, 2^(e+1)) (fixed-point floor below 2^E), e = ``magnitude_exponent``."""
    return Fraction(2) ** (max(magnitude_exponent, grid.exponent) - grid.precision)


def grid_cell(y: float, grid: OutputGrid) -> tuple[Fraction, Fraction] | None:
    """The exact cell R⁻¹(y) = {t : R(t) = y} of a grid point y, as (lower, upper); ``None`` off the grid.

    The cell runs from the midpoint with the grid point below y to the midpoint with the one above
    (which endpoint is included follows ties-to-even; it has probability 0 under a continuous law).
    Spacing changes at the binade boundaries 2^e (e ≥ E), so the two half-gaps can differ.
    """
    v = float(y)
    if not math.isfinite(v) or float(grid.round(v)) != v:
        return None
    fy = Fraction(v)
    if v == 0.0:
        half = _spacing(grid, grid.exponent - 1) / 2
        return -half, half
    a = abs(fy)
    e = math.frexp(abs(v))[1] - 1  # |y| in [2^e, 2^(e+1))
    above = _spacing(grid, e)  # gap to the next point away from 0
    below = _spacing(grid, e - 1) if a == Fraction(2) ** e else above  # gap towards 0
    if v > 0:
        return fy - below / 2, fy + above / 2
    return fy - above / 2, fy + below / 2


def producible_on_grid(
    y: ArrayLike,
    *,
    grid: OutputGrid,
    center: float | Fraction,
    sensitivity: float = 1.0,
    support: tuple[float, float] = (-math.inf, math.inf),
) -> NDArray[np.bool_]:
    """Decide exactly whether each ``y`` can be released by the exact path R(c + S·Z) from ``center``.

    Parameters
    ----------
    y
        Released floats (any shape; for planar releases decide each coordinate, the law being a
        product-support one).
    grid
        The public output grid of the release.
    center, sensitivity
        c (exact: a float or Fraction) and S ≥ 0 of the input audited.
    support
        The support of the noise Z (with its scale), an interval on which its law has a positive
        density. Default: the whole line, which is the case of every continuous family in
        :mod:`smoothdp.noise`.

    Returns
    -------
    ndarray of bool
        ``True`` where y is a grid point whose cell meets c + S·(support) in a set of positive length
        (for S = 0: where R(c) = y).
    """
    s = Fraction(float(sensitivity))
    if s < 0:
        raise ValueError(f"sensitivity must be >= 0; got {sensitivity!r}")
    c = Fraction(center)
    lo_z, hi_z = float(support[0]), float(support[1])
    if not lo_z < hi_z:
        raise ValueError(f"support must be an interval (lower < upper); got {support!r}")
    values = np.asarray(y, dtype=np.float64)
    out = np.zeros(values.shape, dtype=bool)
    # Full support and S > 0: producible iff y is a grid point (vectorized).
    if s > 0 and lo_z == -math.inf and hi_z == math.inf:
        out[...] = np.isfinite(values) & (grid.round(np.where(np.isfinite(values), values, 0.0)) == values)
        return out
    lower = None if lo_z == -math.inf else c + s * Fraction(lo_z)
    upper = None if hi_z == math.inf else c + s * Fraction(hi_z)
    for index, v in np.ndenumerate(values):
        cell = grid_cell(float(v), grid)
        if cell is None:
            continue
        a, b = cell
        if s == 0:
            out[index] = (a < c < b) or (c in (a, b) and _tie_goes_to(c, float(v), grid))
            continue
        left = a if lower is None else max(a, lower)
        right = b if upper is None else min(b, upper)
        out[index] = left < right
    return out


def _tie_goes_to(c: Fraction, y: float, grid: OutputGrid) -> bool:
    """For c exactly on a cell boundary: whether R(c) = y (R's ties go to the even grid point)."""
    return float(grid.round(float(c))) == y if Fraction(float(c)) == c else False


def cell_probability(
    y: ArrayLike,
    *,
    grid: OutputGrid,
    center: float | Fraction,
    sensitivity: float,
    noise: object,
) -> NDArray[np.float64]:
    """P[R(c + S·Z) = y] in floating point, Z ~ ``noise`` (an object with a ``cdf``), for information.

    Float CDFs underflow in the far tails, so a 0 here does not decide producibility; use
    :func:`producible_on_grid` for the exact decision. Off-grid y get 0.
    """
    cdf = getattr(noise, "cdf", None)
    if cdf is None:
        raise TypeError("noise must have a cdf method (a smoothdp.noise distribution)")
    s = float(sensitivity)
    if not s > 0:
        raise ValueError(f"sensitivity must be > 0 for a probability; got {sensitivity!r}")
    c = Fraction(center)
    values = np.asarray(y, dtype=np.float64)
    out = np.zeros(values.shape, dtype=np.float64)
    for index, v in np.ndenumerate(values):
        cell = grid_cell(float(v), grid)
        if cell is None:
            continue
        za, zb = (float((t - c) / Fraction(s)) for t in cell)
        out[index] = max(0.0, float(cdf(zb)) - float(cdf(za)))
    return out


# ----------------------------------------------------------------------------------- summary
def unproducible_share(
    outputs: ArrayLike, producible_fn: Callable[[NDArray[np.float64]], ArrayLike]
) -> float:
    """The share of ``outputs`` (releases of M(x')) that ``producible_fn`` (M(x)'s exact decision) rejects.

    ``producible_fn`` is typically ``numpy_laplace_release(c, S, b).producible`` (float path) or
    ``lambda y: producible_on_grid(y, grid=grid, center=c, sensitivity=S)`` (exact path). A positive
    share certifies that the outputs of x' are distinguishable from x with certainty on that share of
    draws.
    """
    y = np.asarray(outputs, dtype=np.float64).ravel()
    if y.size == 0:
        raise ValueError("outputs must not be empty")
    ok = np.asarray(producible_fn(y), dtype=bool).ravel()
    if ok.shape != y.shape:
        raise ValueError(f"producible_fn must return one bool per output; got shape {ok.shape} for {y.shape}")
    return float(np.count_nonzero(~ok)) / y.size


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
