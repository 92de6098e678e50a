"""The counting queries: ``count``, ``sum`` and ``histogram``, with exact integer noise.

Each releases an integer-valued query plus exact discrete noise (:mod:`smoothdp.central.counting.noise`):
the discrete Laplace (pure ε-DP, default) or the discrete Gaussian (``noise="gaussian"``: ρ-zCDP with
``rho=``, or (ε, δ)-DP with ``epsilon=`` and ``delta > 0``). The noise is drawn exactly in integer
arithmetic, so the released numbers are exactly those of the proved mechanism; a sum is released on a
public fixed-point lattice (multiples of a power of two q chosen from the bounds), so it is exact too.
Proofs: docs/theory/counting-queries.md.

Neighbours (``neighbours=``, default ``"add_remove"``, the convention of counting queries: under
substitution the number of records n is public):

* :func:`count`: the number of records (NaN and missing records are records). Sensitivity 1 under
  add/remove. Under substitution n is public and a noisy count protects nothing: ``neighbours="substitution"``
  is an error that says so (``len(x)`` is then the exact, free answer).
* :func:`sum`: records clipped into public ``bounds`` (NaN: the midpoint). Sensitivity max(|L|, |U|) under
  add/remove, U − L under substitution (in units of the lattice, rounded up).
* :func:`histogram`: counts of public ``categories`` (records matching none are dropped) or of public bin
  edges ``bins`` (records clipped into the outer bins; NaN: the midpoint of the outer edges). ℓ1 sensitivity
  1 under add/remove, 2 under substitution (ℓ2²: 1 and 2).

Empty data is valid (a noisy 0 under add/remove). Bad parameters raise errors naming them; data never
makes a release fail.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.counting.batch import (
    SumQuantizer,
    add_integer_noise,
    bin_codes,
    category_codes,
    cell_counts,
    check_bins,
    check_categories,
    grouped_sums,
)
from smoothdp.central.counting.noise import IntegerNoise, calibrate_integer_noise
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.scale.engine import is_dask_collection
from smoothdp.validation import check_int

__all__ = ["NoisyCount", "NoisyHistogram", "NoisySum", "count", "histogram", "sum"]

PAGE = "docs/theory/counting-queries.md"
SAMPLER = "exact integer noise (uniform integers compared with integers; CKS20 Algorithms 1-3)"
_SOURCE_LAPLACE = (
    "discrete Laplace mechanism: Canonne, Kamath & Steinke, The discrete Gaussian for differential privacy, "
    "NeurIPS 2020 (exact samplers, Algorithms 1-2)"
)
_SOURCE_GAUSS = (
    "discrete Gaussian mechanism, Δ₂²/(2σ²)-zCDP: Canonne, Kamath & Steinke, The discrete Gaussian for "
    "differential privacy, NeurIPS 2020 (sampler: Algorithm 3); zCDP to (ε, δ): Bun & Steinke, TCC 2016"
)


class _CountingMechanism(Mechanism):
    """Shared parts: the budget keywords, the noise, and the public description of the noise."""

    noise: IntegerNoise
    #: The class-level citation; an instance names the one of its noise family.
    source = (
        "discrete Laplace and discrete Gaussian mechanisms: Canonne, Kamath & Steinke, The discrete Gaussian "
        "for differential privacy, NeurIPS 2020"
    )

    def _calibrate(
        self,
        *,
        l1: int,
        l2_squared: int,
        epsilon: float | None,
        delta: float,
        rho: float | None,
        noise: str,
        neighbours: str,
    ) -> None:
        self.noise, self.guarantee = calibrate_integer_noise(
            l1=l1, l2_squared=l2_squared, epsilon=epsilon, delta=delta, rho=rho, noise=noise,
            neighbours=neighbours,
        )  # fmt: skip
        self.source = _SOURCE_LAPLACE if self.noise.family == "discrete_laplace" else _SOURCE_GAUSS

    def _noise_details(self) -> dict[str, Any]:
        return {"noise": self.noise.family}

    def sample(self, x: Any, size: int, *, rng: SeedLike = None) -> NDArray[Any]:
        """``size`` independent releases on x (for simulations and audits; no accountant), vectorized:
        one exact query value, ``size`` noise draws."""
        n = check_int("size", size, minimum=1)
        exact = np.asarray(self._prepare(x))
        noisy = exact.astype(object) + self.noise.sample((n, *exact.shape), resolve_rng(rng)).astype(object)
        return self._output(noisy)

    def _output(self, noisy: NDArray[Any]) -> NDArray[Any]:
        """Integer noisy values → released values (post-processing; counts: int64)."""
        return noisy.astype(np.int64)

    def _not_private(self, unit: float = 1.0) -> NotPrivate:
        # Data-independent here; reported where every mechanism reports its noise (one place to read it).
        return NotPrivate(noise_scale=self.noise.scale * unit, noise_std=self.noise.std() * unit)


def _number_of_records(x: Any) -> int:
    """len(x) for anything that holds records (arrays: the first axis; frames and series: rows)."""
    if isinstance(x, str | bytes):
        raise TypeError(
            "x must be a collection of records (an array, list, Series or DataFrame); got a string"
        )
    if is_dask_collection(x):  # rows of a dask frame or series (one pass), or of a dask array
        if hasattr(x, "columns") or not hasattr(x, "compute_chunk_sizes"):
            return len(x)
        rows = x.shape[0]
        return int(x.compute_chunk_sizes().shape[0] if math.isnan(rows) else rows)
    shape = getattr(x, "shape", None)
    if shape is not None and not callable(shape):
        if len(shape) == 0:
            raise TypeError("x must be a collection of records; got a 0-dimensional array")
        return int(shape[0])
    try:
        return len(x)
    except TypeError as err:
        raise TypeError(f"x must be a collection of records; got {type(x).__name__}") from err


class NoisyCount(_CountingMechanism):
    """The number of records plus exact integer noise: pure ε-DP (discrete Laplace, rate ε) or ρ-zCDP /
    (ε, δ)-DP (discrete Gaussian, σ² = 1/(2ρ)) under **add/remove**.

    Guarantee: the count has sensitivity 1 when one record is added or removed; the discrete Laplace and
    discrete Gaussian lemmas (docs/theory/counting-queries.md#the-noisy-count). Under substitution n is
    public, so ``neighbours="substitution"`` is refused (``len(x)`` is the exact answer at no cost).
    """

    name = "noisy count (exact integer noise)"
    proof = "docs/theory/counting-queries.md#the-noisy-count"

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float = 0.0,
        rho: float | None = None,
        noise: str = "laplace",
        neighbours: str = "add_remove",
    ) -> None:
        if check_neighbours(neighbours, allowed=("add_remove", "substitution")) == "substitution":
            raise ValueError(
                "neighbours='substitution' makes the number of records public (one record is replaced, n "
                "stays): the count is then len(x), exactly and at no privacy cost. A private count hides n: "
                "use neighbours='add_remove' (the default)"
            )
        self._calibrate(
            l1=1, l2_squared=1, epsilon=epsilon, delta=delta, rho=rho, noise=noise, neighbours=neighbours
        )

    @property
    def statistic_name(self) -> str:
        return "count"

    def _prepare(self, data: Any) -> int:
        return _number_of_records(data)

    def _release(self, prepared: int, rng: np.random.Generator) -> Release:
        value = int(add_integer_noise(np.int64(prepared), self.noise, rng))
        return self._make_release(
            value, sampler=SAMPLER, details=self._noise_details(), not_private=self._not_private()
        )


class NoisySum(_CountingMechanism):
    """The clipped sum on a public fixed-point lattice plus exact integer noise.

    Guarantee: pure ε-DP (discrete Laplace) or ρ-zCDP / (ε, δ)-DP (discrete Gaussian) under ``neighbours``
    (``"add_remove"``, default, or ``"substitution"``): the lattice sum f = ⌊A·r/q + 1/2⌋ (records clipped,
    NaN → midpoint, rounded to r, summed exactly) has sensitivity ⌈D/2^s⌉ in units of q
    (:class:`~smoothdp.central.counting.batch.SumQuantizer`), and the output q·(f + Z) is post-processing of
    f + Z (docs/theory/counting-queries.md#the-noisy-sum).
    """

    name = "noisy clipped sum (exact integer noise on a public lattice)"
    proof = "docs/theory/counting-queries.md#the-noisy-sum"

    def __init__(
        self,
        *,
        bounds: tuple[float, float],
        epsilon: float | None = None,
        delta: float = 0.0,
        rho: float | None = None,
        noise: str = "laplace",
        neighbours: str = "add_remove",
    ) -> None:
        self.quantizer = SumQuantizer.for_bounds(bounds, neighbours)
        d = self.quantizer.sensitivity
        self._calibrate(
            l1=d, l2_squared=d * d, epsilon=epsilon, delta=delta, rho=rho, noise=noise, neighbours=neighbours
        )

    @property
    def statistic_name(self) -> str:
        return "sum"

    def _prepare(self, data: Any) -> int:
        """f, the exact lattice sum (no randomness, no budget)."""
        return int(grouped_sums(data, None, 1, self.quantizer)[0])

    def _output(self, noisy: NDArray[Any]) -> NDArray[Any]:
        out: NDArray[Any] = self.quantizer.to_float(noisy)
        return out

    def _release(self, prepared: int, rng: np.random.Generator) -> Release:
        q = self.quantizer
        value = q.to_float(prepared + int(self.noise.sample(None, rng)))
        return self._make_release(
            float(value),
            sampler=SAMPLER,
            details={"bounds": (q.lower, q.upper), "quantum": q.quantum, **self._noise_details()},
            not_private=self._not_private(q.quantum),
        )


class NoisyHistogram(_CountingMechanism):
    """Counts over public categories or public bins plus exact integer noise, one draw per cell.

    Guarantee: pure ε-DP (discrete Laplace) or ρ-zCDP / (ε, δ)-DP (discrete Gaussian) under ``neighbours``:
    one record added or removed changes one cell by 1 (ℓ1 = ℓ2² = 1); one record replaced changes at most two
    cells by 1 each (ℓ1 = ℓ2² = 2). Dropping the records that match no category, and clipping into the outer
    bins, are fixed per-record maps (docs/theory/counting-queries.md#the-noisy-histogram).
    """

    name = "noisy histogram (exact integer noise)"
    proof = "docs/theory/counting-queries.md#the-noisy-histogram"

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        categories: ArrayLike | None = None,
        bins: ArrayLike | None = None,
        delta: float = 0.0,
        rho: float | None = None,
        noise: str = "laplace",
        neighbours: str = "add_remove",
    ) -> None:
        if (categories is None) == (bins is None):
            raise TypeError("pass exactly one of categories= (public values) or bins= (public bin edges)")
        self.categories: list[Any] | None = None
        self.edges: NDArray[np.float64] | None = None
        if categories is not None:
            self.categories, self._keys = check_categories(categories)
            self.n_cells = len(self.categories)
        else:
            self.edges = check_bins(bins)
            self.n_cells = self.edges.size - 1
        d = 1 if check_neighbours(neighbours, allowed=("add_remove", "substitution")) == "add_remove" else 2
        self._calibrate(
            l1=d, l2_squared=d, epsilon=epsilon, delta=delta, rho=rho, noise=noise, neighbours=neighbours
        )

    @property
    def statistic_name(self) -> str:
        return "histogram"

    def cell_codes(self, data: Any) -> NDArray[np.int64]:
        """Each record's cell (−1: matches no category, dropped)."""
        if self.edges is not None:
            return bin_codes(data, self.edges)
        return category_codes(data, self._keys)

    def _prepare(self, data: Any) -> NDArray[np.int64]:
        return cell_counts(self.cell_codes(data), self.n_cells)

    def _release(self, prepared: NDArray[np.int64], rng: np.random.Generator) -> Release:
        cells: dict[str, Any] = (
            {"categories": list(self.categories)}
            if self.categories is not None
            else {"bins": self.edges.tolist() if self.edges is not None else None}
        )
        return self._make_release(
            add_integer_noise(prepared, self.noise, rng),
            sampler=SAMPLER,
            details={**cells, **self._noise_details()},
            not_private=self._not_private(),
        )


# -- entry points --------------------------------------------------------------------------------------------
def count(
    x: Any,
    *,
    epsilon: float | None = None,
    neighbours: str = "add_remove",
    delta: float = 0.0,
    rho: float | None = None,
    noise: str = "laplace",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Private number of records of ``x``: n + K, K exact integer noise (an ``int``).

    Every record counts, NaN and missing ones too. Pure ε-DP under add/remove with the discrete Laplace
    (rate ε; std √2/ε for small ε). ``noise="gaussian"``: the discrete Gaussian, σ² = 1/(2ρ), with ``rho=``
    (ρ-zCDP) or ``epsilon=`` and ``delta > 0`` ((ε, δ)-DP through zCDP, the largest ρ the library's
    conversion maps within ε). ``neighbours="substitution"`` is an error: n is then public (``len(x)``).

    Proof: docs/theory/counting-queries.md#the-noisy-count. Canonne, Kamath & Steinke, NeurIPS 2020.

    Examples
    --------
    >>> import smoothdp
    >>> int(smoothdp.count([1.0, 2.0, float("nan")], epsilon=1.0, rng=7).value) in range(-40, 44)
    True
    """
    mech = NoisyCount(epsilon=epsilon, delta=delta, rho=rho, noise=noise, neighbours=neighbours)
    return mech.release(x, accountant=accountant, rng=rng)


def sum(
    x: Any,
    *,
    epsilon: float | None = None,
    bounds: tuple[float, float],
    neighbours: str = "add_remove",
    delta: float = 0.0,
    rho: float | None = None,
    noise: str = "laplace",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Private sum of ``x`` clipped into ``bounds = (L, U)`` (NaN records: the midpoint), a float.

    Released as q·(f + K): f the exact sum of the clipped records on the public lattice of
    :class:`~smoothdp.central.counting.batch.SumQuantizer` (q = 2^(⌊log2 Δ⌋ − 20), Δ = max(|L|, |U|) under
    add/remove and U − L under substitution), K exact integer noise for the sensitivity ⌈Δ/q⌉ (the lattice
    adds ≤ q/2 of rounding and ≤ 2⁻²⁰ of extra noise). Discrete Laplace (pure ε-DP, default) or discrete
    Gaussian (``noise="gaussian"``, ``rho=`` or ``epsilon`` with ``delta > 0``).
    ``release.details["quantum"]`` is q.

    Proof: docs/theory/counting-queries.md#the-noisy-sum.
    """
    mech = NoisySum(bounds=bounds, epsilon=epsilon, delta=delta, rho=rho, noise=noise, neighbours=neighbours)
    return mech.release(x, accountant=accountant, rng=rng)


def histogram(
    x: Any,
    *,
    epsilon: float | None = None,
    categories: ArrayLike | None = None,
    bins: ArrayLike | None = None,
    neighbours: str = "add_remove",
    delta: float = 0.0,
    rho: float | None = None,
    noise: str = "laplace",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Private counts of ``x`` over public ``categories`` or public bin edges ``bins`` (int64 array).

    ``categories``: distinct values, all numbers or all strings; counts in their order; a record matching
    none (another value, NaN, missing, another kind) is dropped. ``bins``: edges e_0 < … < e_k, cells
    [e_j, e_{j+1}) and a closed last cell (as ``numpy.histogram``); records outside are clipped into the outer
    cells, NaN counts in the cell of the midpoint (e_0 + e_k)/2. ``release.details`` lists the categories or
    edges. Noise and budget keywords as :func:`count`; ℓ1 sensitivity 1 (add/remove) or 2 (substitution).
    Counts may be negative: ``numpy.maximum(release.value, 0)`` is post-processing, at the price of a bias.

    Proof: docs/theory/counting-queries.md#the-noisy-histogram.
    """
    mech = NoisyHistogram(
        epsilon=epsilon, categories=categories, bins=bins, delta=delta, rho=rho, noise=noise,
        neighbours=neighbours,
    )  # fmt: skip
    return mech.release(x, accountant=accountant, rng=rng)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
