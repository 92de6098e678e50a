"""What the smoothed-DP modules share: the sampling base class, the result records, the generic path.

Reference: LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023 (arXiv:2107.01559); theory
pages: ``docs/theory/smoothed-dp.md``.

* :class:`SmoothedDPMechanism`: the base of the sampling mechanisms (T from an exact rate or a fixed size),
  with their declarative part (``name``, ``neighbours``, ``proof``, ``source``) and the methods the public
  analysis functions dispatch to (:func:`~smoothdp.smoothed_dp.privacy_profile`,
  :func:`~smoothdp.smoothed_dp.smoothed_delta`, ...).
* :class:`ProfileValue` (δ_{ε,M}(h)) and :class:`SmoothedDelta` (δ_SDP): the results.
* :func:`generic_log_profile`: δ_{ε,M}(h) by enumerating the outputs of any :class:`AnonymousMechanism`.

This module imports no other module of the package except :mod:`smoothdp.smoothed_dp._logmath`, so every
other one can import it (the package's imports form a DAG).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, ClassVar, NoReturn, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.smoothed_dp._logmath import log1mexp, logsumexp_or_neginf
from smoothdp.validation import check_data, check_int

__all__ = [
    "SOURCE",
    "AnonymousMechanism",
    "ProfileValue",
    "SmoothedDPMechanism",
    "SmoothedDelta",
    "check_histogram",
    "exact_rate",
    "generic_log_profile",
    "log_divergence",
    "make_profile_value",
    "sample_subsets",
]

SOURCE = "Liu, Wang & Xia, Smoothed Differential Privacy (TMLR 2023; arXiv:2107.01559)"
_LN10 = math.log(10.0)


# -- inputs -------------------------------------------------------------------------------------------------
def exact_rate(eta: Any, name: str = "eta") -> Fraction:
    """η as an exact fraction in (0, 1). A float is read as the decimal it prints as (0.998 → 499/500).

    Why: ⌈ηn⌉ in floating point can be off by one when ηn is an integer (0.07·100 = 7.000000000000001).
    """
    if isinstance(eta, bool) or not isinstance(
        eta, int | float | Fraction | Decimal | np.integer | np.floating
    ):
        raise TypeError(f"{name} must be a real number in (0, 1); got {eta!r} of type {type(eta).__name__}")
    value: Fraction
    if isinstance(eta, float | np.floating):
        if not math.isfinite(float(eta)):
            raise ValueError(f"{name} must be in (0, 1); got {eta!r}")
        value = Fraction(repr(float(eta)))
    elif isinstance(eta, np.integer):
        value = Fraction(int(eta))
    else:
        value = Fraction(eta)
    if not 0 < value < 1:
        raise ValueError(f"{name} must be in (0, 1); got {eta!r}")
    return value


def check_histogram(
    histogram: ArrayLike, name: str = "histogram", *, categories: int | None = None
) -> NDArray[np.int64]:
    """A histogram: a 1-D array of m ≥ 2 non-negative integer counts with a positive total."""
    arr = check_data(histogram, name, ndim=1, min_size=2)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold non-negative integer counts; got {np.asarray(histogram)!r}")
    if categories is not None and arr.size != categories:
        raise ValueError(f"{name} must have {categories} categories; got {arr.size}")
    counts = arr.astype(np.int64)
    if counts.sum() < 1:
        raise ValueError(f"{name} must hold at least one record (n ≥ 1); got total {counts.sum()}")
    return counts


def sample_subsets(n: int, t: int, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``size`` independent uniform t-subsets of range(n), shape (size, t) (vectorized).

    Small t(t-1)/2n: draw t indices with replacement and redraw the rows that repeat an index (rejection; each
    row is then uniform over ordered t-tuples without repetition). Otherwise rank random keys (argpartition).
    """
    if t * (t - 1) <= 2 * n:  # acceptance probability ≳ e^-1
        out = rng.integers(0, n, size=(size, t))
        while True:
            srt = np.sort(out, axis=1)
            bad = np.flatnonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))
            if bad.size == 0:
                return out
            out[bad] = rng.integers(0, n, size=(bad.size, t))
    chunk = max(1, 2_000_000 // n)
    parts = []
    for start in range(0, size, chunk):
        rows = min(chunk, size - start)
        keys = rng.random((rows, n))
        parts.append(np.argpartition(keys, t - 1, axis=1)[:, :t] if t < n else np.argsort(keys, axis=1))
    return np.concatenate(parts, axis=0).astype(np.int64, copy=False)


# -- the privacy profile δ_{ε,M}(h) -----------------------------------------------------------------------
@runtime_checkable
class AnonymousMechanism(Protocol):
    """A mechanism whose output law depends on the histogram only, with discrete outputs it can enumerate."""

    def output_log_pmf(self, histogram: ArrayLike) -> dict[Any, float]: ...


#: (a, b, direction) of the worst neighbour h − e_a + e_b; (-1, -1, "") when there is none.
Neighbour = tuple[int, int, str]


@dataclass(frozen=True)
class ProfileValue:
    """δ_{ε,M}(h) with its logs (δ may be far below the float range: read ``log10_delta``).

    ``neighbour`` is (a, b, direction): the worst neighbour h − e_a + e_b and whether the worst divergence is
    d(h, h') ("forward") or d(h', h) ("backward"); (-1, -1, "") when h has no neighbour (δ = 0).
    """

    delta: float
    log_delta: float
    log10_delta: float
    epsilon: float
    histogram: tuple[int, ...]
    neighbour: Neighbour
    method: str
    source: str = SOURCE + ", Definition 2"

    def __float__(self) -> float:
        return self.delta


def make_profile_value(
    log_delta: float, epsilon: float, h: NDArray[np.int64], neighbour: Neighbour, method: str
) -> ProfileValue:
    """A :class:`ProfileValue` from ln δ (clipped to δ ≤ 1: rounding can leave +1e-16)."""
    log_delta = min(float(log_delta), 0.0)
    return ProfileValue(
        delta=math.exp(log_delta) if np.isfinite(log_delta) else 0.0,
        log_delta=log_delta,
        log10_delta=log_delta / _LN10,
        epsilon=epsilon,
        histogram=tuple(int(v) for v in h),
        neighbour=neighbour,
        method=method,
    )


def log_divergence(log_p: dict[Any, float], log_q: dict[Any, float], epsilon: float) -> float:
    """ln Σ_o (P(o) − e^ε Q(o))_+ for two discrete laws given as {output: ln probability}."""
    keys = list(log_p)
    lp = np.array([log_p[o] for o in keys], dtype=np.float64)
    lq = np.array([log_q.get(o, -np.inf) for o in keys], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        gap = epsilon + lq - lp  # ln(e^ε Q/P); the term is positive where gap < 0
    positive = (gap < 0) & np.isfinite(lp)
    if not positive.any():
        return -np.inf
    return float(logsumexp_or_neginf(lp[positive] + log1mexp(gap[positive])))


def generic_log_profile(
    mechanism: AnonymousMechanism, h: NDArray[np.int64], epsilon: float
) -> tuple[float, Neighbour]:
    """(ln δ_{ε,M}(h), worst neighbour) by enumerating the outputs of h and of every h − e_a + e_b."""
    law = mechanism.output_log_pmf(h)
    best: tuple[float, Neighbour] = (-np.inf, (-1, -1, ""))
    for a in np.flatnonzero(h >= 1):
        for b in range(h.size):
            if b == a:
                continue
            neighbour = h.copy()
            neighbour[a] -= 1
            neighbour[b] += 1
            other = mechanism.output_log_pmf(neighbour)
            for value, direction in (
                (log_divergence(law, other, epsilon), "forward"),
                (log_divergence(other, law, epsilon), "backward"),
            ):
                if value > best[0]:
                    best = (value, (int(a), int(b), direction))
    return best


def generic_privacy_profile(
    mechanism: AnonymousMechanism, h: NDArray[np.int64], epsilon: float
) -> ProfileValue:
    """δ_{ε,M}(h) of any :class:`AnonymousMechanism` by enumeration (small cases)."""
    log_delta, neighbour = generic_log_profile(mechanism, h, epsilon)
    return make_profile_value(log_delta, epsilon, h, neighbour, "generic enumeration of outputs")


# -- δ_SDP ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SmoothedDelta:
    """The result of Algorithm 1 (:func:`smoothdp.smoothed_dp.smoothed_delta`).

    Attributes
    ----------
    delta, log_delta, log10_delta
        δ_SDP (0.0 when below the float range: read the logs), ln δ_SDP and log10 δ_SDP.
    mixture
        The maximising mixture: records drawn from each vertex (same order as ``vertices``).
    vertices
        Π*, the vertices of CH(Π) (LWX Proposition 7), shape (ℓ*, m).
    dp_delta
        δ of plain DP for the same mechanism and n (any ε), for comparison.
    evaluated
        {mixture: log10 E[δ]} for every mixture evaluated.
    exact_max
        True when every mixture was evaluated; False when the maximum over mixtures was searched.
    upper_bound
        True when ``delta`` is a certified upper bound on E[δ] of the reported mixture rather than its exact
        value (the m = 3 large-n path); ``log10_lower`` is then a certified lower bound on the same E[δ].
    """

    delta: float
    log_delta: float
    log10_delta: float
    mixture: tuple[int, ...]
    vertices: NDArray[np.float64]
    epsilon: float
    n: int
    dp_delta: float
    mechanism: str
    method: str
    exact_max: bool
    evaluated: dict[tuple[int, ...], float] = field(repr=False, default_factory=dict)
    source: str = SOURCE + ", Algorithm 1 with Proposition 7"
    upper_bound: bool = False
    log10_lower: float | None = None

    def __float__(self) -> float:
        return self.delta

    @classmethod
    def from_log(
        cls,
        log_value: float,
        *,
        mixture: tuple[int, ...],
        vertices: NDArray[np.float64],
        epsilon: float,
        n: int,
        dp_delta: float,
        mechanism: str,
        method: str,
        exact_max: bool,
        evaluated: dict[tuple[int, ...], float],
        upper_bound: bool = False,
        log_lower: float | None = None,
    ) -> SmoothedDelta:
        """The record for ln δ_SDP = ``log_value`` (clipped to δ ≤ 1)."""
        log_value = min(float(log_value), 0.0)
        return cls(
            delta=math.exp(log_value) if np.isfinite(log_value) else 0.0,
            log_delta=log_value,
            log10_delta=log_value / _LN10,
            mixture=tuple(int(v) for v in mixture),
            vertices=vertices,
            epsilon=epsilon,
            n=n,
            dp_delta=dp_delta,
            mechanism=mechanism,
            method=method,
            exact_max=exact_max,
            evaluated=evaluated,
            upper_bound=upper_bound,
            log10_lower=None if log_lower is None else min(float(log_lower), log_value) / _LN10,
        )


# -- the mechanisms' base class ------------------------------------------------------------------------------
class SmoothedDPMechanism:
    """Base of the sampling mechanisms analysed under smoothed DP: the sample size T and the declarative part.

    These are **analysis objects, not** :class:`smoothdp.mechanism.Mechanism` **subclasses**. They add no
    noise, so they have no fixed (ε, δ) guarantee worth charging to an accountant: their δ depends on the
    database (the privacy profile δ_{ε,M}(x)) and, under smoothed DP, on the set Π of data distributions
    (δ_SDP). The guarantee is therefore an output of the analysis
    (:func:`~smoothdp.smoothed_dp.smoothed_delta`, :func:`~smoothdp.smoothed_dp.privacy_profile`), not a
    budget fixed before the data are seen, and ``release(..., accountant=...)`` would have nothing honest to
    charge. They still declare what a mechanism of the contract declares: ``name``, ``neighbours`` (LWX's
    relation: one record substituted, n fixed; ``docs/theory/privacy-definitions.md#neighbour-relations``),
    ``proof`` and ``source``.

    Subclasses set ``eta``/``size`` in ``__init__`` and override the analysis hooks that apply to them; the
    defaults raise a :class:`TypeError` naming the function that does not apply.
    """

    name: ClassVar[str] = "smoothed_dp_mechanism"
    neighbours: ClassVar[str] = "substitution"
    proof: ClassVar[str] = "docs/theory/smoothed-dp.md#definition"
    source: ClassVar[str] = SOURCE

    eta: Fraction | None
    size: int | str | None

    @staticmethod
    def _init_size(eta: Any, size: Any) -> tuple[Fraction | None, int | str | None]:
        """(η as a fraction, None), (None, T) or (None, "sqrt") from the constructor's arguments."""
        if (eta is None) == (size is None):
            raise ValueError(
                f"give exactly one of eta (the sampling rate) and size; got eta={eta!r}, size={size!r}"
            )
        if eta is not None:
            return exact_rate(eta), None
        if isinstance(size, str):
            if size != "sqrt":
                raise ValueError(f"size must be a positive integer or 'sqrt'; got {size!r}")
            return None, "sqrt"
        return None, check_int("size", size, minimum=1)

    def sample_size(self, n: int) -> int:
        """T for a database of n records: ⌈ηn⌉ (exact), the fixed size, or round(√n) (``size='sqrt'``)."""
        n = check_int("n", n, minimum=1)
        if self.eta is not None:
            t = math.ceil(self.eta * n)
        elif isinstance(self.size, int):
            t = self.size
        else:  # size == "sqrt"
            t = max(1, math.floor(math.sqrt(n) + 0.5))
        if t > n:
            raise ValueError(f"size T = {t} exceeds the number of records n = {n}")
        return t

    def dp_delta(self, n: int) -> float:
        """T/n: the smallest δ of plain (ε, δ)-DP for every ε (the changed record is sampled w.p. T/n)."""
        return self.sample_size(n) / n

    # -- hooks of the public analysis functions (thin dispatchers) -------------------------------------------
    def _privacy_profile(self, histogram: ArrayLike, epsilon: float, method: str) -> ProfileValue:
        """δ_{ε,M}(h) for :func:`~smoothdp.smoothed_dp.privacy_profile` (ε already checked)."""
        self._unsupported("privacy_profile")

    def _binary_log_profile(self, n: int, epsilon: float, counts: ArrayLike | None) -> NDArray[np.float64]:
        """ln δ(k), k = 0..n, for :func:`~smoothdp.smoothed_dp.binary_privacy_profile`."""
        self._unsupported("binary_privacy_profile", "it needs a SamplingHistogram")

    def _smoothed_delta(
        self, epsilon: float, n: int, distributions: ArrayLike, mixtures: str | int
    ) -> SmoothedDelta:
        """δ_SDP for :func:`~smoothdp.smoothed_dp.smoothed_delta` (ε, n and ``mixtures`` already checked)."""
        self._unsupported("smoothed_delta")

    def _mixture_log_expected_delta(
        self, epsilon: float, counts: ArrayLike, distributions: ArrayLike
    ) -> float:
        """ln E[δ(x)] for one mixture, for :func:`~smoothdp.smoothed_dp.binary.mixture_expected_delta`."""
        self._unsupported("mixture_expected_delta", "it needs a SamplingHistogram")

    def _unsupported(self, function: str, why: str = "") -> NoReturn:
        reason = f": {why}" if why else ""
        raise TypeError(f"mechanism: {function} does not apply to {type(self).__name__}{reason}")


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
