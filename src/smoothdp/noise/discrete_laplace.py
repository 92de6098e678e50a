"""Discrete Laplace (two-sided geometric) on the integers: P(K = k) ∝ e^{−|k|/t}."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import check_numerics
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.noise.exact_integer import discrete_laplace
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_in_range

__all__ = ["DiscreteLaplace"]

#: Largest scale accepted: the exact sampler's rates are at least 2⁻⁵⁰ (1/10¹⁵ ≈ 2⁻⁴⁹·⁸).
MAX_SCALE = 1e15


class DiscreteLaplace(NoiseDistribution):
    r"""The discrete Laplace law with scale t on ℤ (Inusah & Kozubowski 2006; scipy's ``dlaplace(1/t)``).

    $$
    P(K = k) = \tanh(1/(2t)) \cdot e^{-\vert k\vert/t}
    = (1 - e^{-1/t})/(1 + e^{-1/t}) \cdot e^{-\vert k\vert/t}, \quad k \in \mathbb{Z}.
    $$

    $\mathrm{Var}\, K = 2e^{-1/t}/(1 - e^{-1/t})^2$. It is not a location-scale family: ``scale`` is the
    parameter t, and ``with_scale`` builds the law with another t.

    Conventions (a lattice law in a real-line protocol)
    ---------------------------------------------------
    * ``pdf``/``logpdf`` return the **probability mass function**: $P(K = x)$ for integer x, and 0 (log: −inf)
      for any real x that is not an integer.
    * ``cdf(x) = P(K ≤ x)`` and ``sf(x) = P(K > x)`` for every real x (step functions); both are computed
      from the nearer tail, so neither is 1 minus a tiny number.
    * ``ppf(q)`` is the smallest integer k with $P(K \le k) \ge q$ (scipy's convention), returned as floats
      (``ppf(0) = −inf``, ``ppf(1) = +inf``).
    * ``sample`` returns **int64** integers: the difference of two independent geometric variables with
      success probability $p = 1 - e^{-1/t}$, which is exactly this law. The default sampler is exact in
      integer arithmetic for the rational rate 1/t of the float t (Canonne, Kamath & Steinke 2020,
      :mod:`smoothdp.noise.exact_integer`); ``numerics="float"`` uses numpy's ``geometric``, whose
      floating-point inversion is not exact.
    """

    name = "discrete_laplace"

    def __init__(self, scale: float = 1.0) -> None:
        # The base class's check_positive is repeated with an upper end (see MAX_SCALE).
        super().__init__(check_in_range("scale", scale, 0.0, MAX_SCALE, high_open=False))

    def with_scale(self, scale: float) -> DiscreteLaplace:
        return type(self)(scale)

    # -- constants of the current scale (computed on demand, so they follow with_scale) -----------------
    @property
    def _ratio(self) -> float:
        """e^{−1/t}, the ratio of successive probabilities."""
        return math.exp(-1.0 / self.scale)

    @property
    def _success(self) -> float:
        """p = 1 − e^{−1/t} of each geometric half."""
        return -math.expm1(-1.0 / self.scale)

    def _log_lower(self, k: NDArray[np.float64]) -> NDArray[np.float64]:
        """ln P(K ≤ k) = k/t − ln(1 + e^{−1/t}) for integers k ≤ 0."""
        return k / self.scale - math.log1p(self._ratio)

    def _lower(self, k: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(K ≤ k) for integer-valued k (±inf allowed), from the nearer tail."""
        upper_tail = np.exp(self._log_lower(-np.abs(k) - 1.0))  # P(K > k) = P(K ≤ −k−1) for k ≥ 0
        return np.where(k < 0, np.exp(self._log_lower(np.minimum(k, 0.0))), 1.0 - upper_tail)

    # -- the standardized hooks, here in integer units (the public methods below call them) -------------
    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        log_mass = math.log(math.tanh(0.5 / self.scale)) - np.abs(z) / self.scale
        off_lattice = np.where(np.isnan(z), np.nan, -np.inf)  # NaN stays NaN, never a silent 0
        return np.where(np.floor(z) == z, log_mass, off_lattice)

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._lower(np.floor(z))

    def _sf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._lower(-np.floor(z) - 1.0)  # P(K > x) = P(K ≥ ⌊x⌋+1) = P(K ≤ −⌊x⌋−1)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        # Lower half (q ≤ 1/2): smallest k ≤ 0 with e^{k/t}/(1+e^{−1/t}) ≥ q.
        # Upper half: by symmetry, k = −j − 1 with j the largest integer with P(K ≤ j) ≤ 1 − q.
        c = math.log1p(self._ratio)
        lower = q <= 0.5
        p = np.where(lower, q, 1.0 - q)
        with np.errstate(divide="ignore"):
            x = self.scale * (np.log(p) + c)
        k = np.where(lower, np.ceil(x), -np.floor(x) - 1.0)
        # One step of correction against the cdf itself (the same floating-point function users see), so
        # that cdf(ppf(q)) ≥ q > cdf(ppf(q) − 1) holds exactly despite rounding in ln/exp.
        k = np.where(self._lower(k - 1.0) >= q, k - 1.0, k)
        k = np.where(self._lower(k) < q, k + 1.0, k)
        return k + 0.0  # + 0.0 turns −0.0 into 0.0

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.int64]:
        p = self._success
        return rng.geometric(p, size) - rng.geometric(p, size)

    def _var_std(self) -> float:
        return 2.0 * self._ratio / self._success**2

    # -- public API: the lattice is not rescaled ---------------------------------------------------------
    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""$\ln P(K = x)$; −inf where x is not an integer."""
        return self._logpdf_std(np.asarray(x, dtype=np.float64))

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""$P(K \le x)$ for real x."""
        return self._cdf_std(np.asarray(x, dtype=np.float64))

    def sf(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""$P(K > x)$ for real x."""
        return self._sf_std(np.asarray(x, dtype=np.float64))

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        r"""Smallest integer k with $P(K \le k) \ge q$ (as a float; ±inf at q = 0, 1)."""
        qa = np.asarray(q, dtype=np.float64)
        if np.any((qa < 0) | (qa > 1) | np.isnan(qa)):
            raise ValueError("q must hold probabilities in [0, 1]")
        return self._ppf_std(qa)

    def sample(
        self, size: Size = None, rng: SeedLike = None, *, numerics: str = "exact"
    ) -> NDArray[np.int64] | int:
        r"""Integer draws (int64). ``rng=None``: secure generator.

        ``numerics="exact"`` (default): $K = G_1 - G_2$ with $G_1, G_2$ geometric with ratio $e^{-1/t}$, each
        drawn exactly from uniform integers (no floating-point exp or log decides an outcome;
        docs/theory/counting-queries.md#exact-integer-samplers), so K has exactly this law for the rate 1/t of
        the float t (a rational with denominator below $2^{53}$). ``"float"``: numpy's ``geometric`` (its
        inversion is in floating point, so the law is only approximately this one).
        """
        gen = resolve_rng(rng)
        if check_numerics(numerics) == "float":
            draws = self._sample_std(size, gen)
        else:
            draws = discrete_laplace(1 / Fraction(self.scale), size, gen)
        return int(draws) if size is None else draws

    def var(self) -> float:
        return self._var_std()


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
