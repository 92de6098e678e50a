"""The protocol every noise distribution follows, in the style of ``scipy.stats`` frozen distributions.

A subclass implements the *standardized* law (scale 1) in five methods: ``_logpdf_std``, ``_cdf_std``,
``_sf_std``, ``_ppf_std`` and ``_sample_std``, plus ``_var_std``. The base class applies the scale, the
vectorization and the validation once, so every family behaves the same way:

* ``pdf``, ``logpdf``, ``cdf``, ``sf``, ``ppf``: numpy ufunc-like, any array shape in, same shape out;
* ``sample(size=None, rng=None)``: ``rng=None`` means the secure generator (:mod:`smoothdp.rng`);
* ``mean()``, ``var()``, ``std()``: ``inf`` (never NaN) where the moment does not exist, and
  ``nan`` only for the mean of a law that has none (Cauchy-like), as scipy does.

**Sampling** (``sample(size, rng, *, numerics="exact")``): the default draws are *hardened*: each is
exactly R(Z) for the public grid R = ``OutputGrid.for_magnitude(scale)`` and Z an ideal draw of the law
(inversion from lazily refined uniform bits, :func:`smoothdp.exact.add_noise`;
``docs/theory/floating-point.md#the-exact-release-path``). ``numerics="float"`` keeps the fast
floating-point samplers (``_sample_std``), whose guarantee assumes idealized arithmetic. ``sampler`` is
the label of the default path (:func:`smoothdp.exact.sampler_label`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_positive

__all__ = ["FLOAT_SAMPLER", "HARDENED_SAMPLER", "Draws", "NoiseDistribution"]

#: Label of the floating-point sampling path (``numerics="float"``).
FLOAT_SAMPLER = sampler_label("float")
#: Label of the default, hardened sampling path (``numerics="exact"``).
HARDENED_SAMPLER = sampler_label("exact")

Size = int | tuple[int, ...] | None
#: What a sampler returns: float64 draws for the laws on the real line, int64 for lattice laws.
Draws = NDArray[np.float64] | NDArray[np.int64]


class NoiseDistribution(ABC):
    """A symmetric location-0 noise law with a scale parameter, on the real line.

    Subclasses set ``name`` and implement the standardized (scale 1) methods.
    """

    name: ClassVar[str] = "noise"
    #: Number of coordinates of one draw (2 for planar Laplace).
    dimension: ClassVar[int] = 1
    sampler: ClassVar[str] = HARDENED_SAMPLER

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_positive("scale", scale)

    # -- standardized law, implemented by each family ------------------------------------------------
    @abstractmethod
    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]: ...

    @abstractmethod
    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def _sf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        # Symmetric laws: sf(z) = cdf(-z), accurate in the upper tail.
        return self._cdf_std(-z)

    @abstractmethod
    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]: ...

    @abstractmethod
    def _sample_std(self, size: Size, rng: np.random.Generator) -> Draws: ...

    @abstractmethod
    def _var_std(self) -> float: ...

    def _exact_law(self) -> Any:
        """The law as a map of uniforms for the exact path (:mod:`smoothdp.exact.laws`), scale included."""
        raise TypeError(f"{type(self).__name__} has no exact sampler")

    # -- public, scaled API --------------------------------------------------------------------------
    def logpdf(self, x: ArrayLike) -> NDArray[np.float64]:
        z = np.asarray(x, dtype=np.float64) / self.scale
        return self._logpdf_std(z) - np.log(self.scale)

    def pdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpdf(x))

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        return self._cdf_std(np.asarray(x, dtype=np.float64) / self.scale)

    def sf(self, x: ArrayLike) -> NDArray[np.float64]:
        return self._sf_std(np.asarray(x, dtype=np.float64) / self.scale)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        qa = np.asarray(q, dtype=np.float64)
        if np.any((qa < 0) | (qa > 1) | np.isnan(qa)):
            raise ValueError("q must hold probabilities in [0, 1]")
        return self.scale * self._ppf_std(qa)

    def sample(self, size: Size = None, rng: SeedLike = None, *, numerics: str = "exact") -> Draws | float:
        """Draw from the law. ``rng=None``: secure generator; pass a seeded one only for simulations.

        ``numerics="exact"`` (default): hardened draws, each exactly the rounding of an ideal draw onto
        ``OutputGrid.for_magnitude(scale)`` (relative spacing ≤ 2⁻³⁶ of the scale). ``"float"``: the
        floating-point sampler (not hardened).
        """
        gen = resolve_rng(rng)
        if check_numerics(numerics) == "exact":
            center = np.zeros(2) if self.dimension == 2 else 0.0
            grid = OutputGrid.for_magnitude(self.scale)
            out = add_noise(center, self, grid=grid, rng=gen, size=size)
            return float(out) if size is None and self.dimension == 1 else np.asarray(out, dtype=np.float64)
        draws = self._sample_std(size, gen)
        scaled: NDArray[np.float64]
        if isinstance(draws, np.ndarray) and draws.ndim and draws.dtype == np.float64:
            scaled = draws.astype(np.float64, copy=False)  # the same array: the draws are fresh,
            scaled *= self.scale  # so scale them in place (no temporary)
        else:
            scaled = np.asarray(self.scale * np.asarray(draws), dtype=np.float64)
        return float(scaled) if size is None and self.dimension == 1 else scaled

    def mean(self) -> float:
        return 0.0

    def var(self) -> float:
        return self.scale**2 * self._var_std()

    def std(self) -> float:
        return float(np.sqrt(self.var()))

    def breakpoints(self) -> tuple[float, ...]:
        """Points x ≥ 0 (in the law's units, i.e. scaled) where d/dx ln pdf is discontinuous or extreme.

        The worst-case privacy-loss search (:func:`smoothdp.audit.worst_case_privacy_loss`) puts output grid
        points at ± each of them, since the log density ratio of two shifted and rescaled copies peaks there.
        Default: none (a smooth log density with no interior extreme of its slope); the law is symmetric,
        so only the non-negative points are listed.
        """
        return ()

    def with_scale(self, scale: float) -> NoiseDistribution:
        """The same family with another scale (shape parameters kept)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.scale = check_positive("scale", scale)
        return clone

    def _params(self) -> str:
        return f"scale={self.scale:g}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._params()})"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
