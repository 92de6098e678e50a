"""Central-DP statistics with their local sensitivity at distance k and their smooth sensitivity.

Every statistic is computed on data in declared public ``bounds=(lower, upper)``, under one data policy
(:func:`smoothdp.validation.prepare_records`, applied first): a NaN record is kept and imputed with the
midpoint of the bounds; then every record (±inf included) is clipped into the bounds (``clip=True``, the
default; the statistic is the one of the imputed, clipped data). ``clip=False`` refuses records outside the
bounds, for trusted data only (that error depends on the data). Nothing reports how many records were
imputed or clipped. One record per person. The neighbour relation (``Statistic.neighbours``, one of the
relation names of :mod:`smoothdp.privacy`) is ``"substitution"`` (n fixed and public) except for
:class:`Mean`, which uses ``"add_remove"`` (n private).

Each statistic has

* ``value(x)``: the statistic (a float, for users);
* ``exact_value(x)``: the statistic's exact value, which the mechanisms release around: the data value for
  order statistics, an exact rational (:class:`fractions.Fraction`, from :func:`exact_sum`) for the mean
  and trimmed mean (docs/central.md#exact-statistics);
* ``local_sensitivity(x, k=0)``: A^(k)(x) = max_{d(x,y) ≤ k} LS(y) (an upper bound for :class:`Mean`);
* ``smooth_sensitivity(x, beta)``: S_β(x) = max_{k ≥ 0} e^{−βk} A^(k)(x), exact, rounded up;
* ``global_sensitivity(n)``: the worst case over all data sets of size n.

``prepare(x)`` applies the data policy once (as :class:`~smoothdp.scale.engine.Records`: exact order
statistics in rank windows, in memory or on Dask, never a full sort); the result can be passed to every
method in place of x.

Formulas and proofs: docs/theory/smooth-sensitivity.md#median-and-quantiles (order statistics, NRS07 §3.1),
docs/theory/smooth-sensitivity.md#minimum-and-maximum, docs/theory/smooth-sensitivity.md#trimmed-mean (BS19)
and docs/theory/smooth-sensitivity.md#mean-with-clipping, computed by
:mod:`smoothdp.central.smooth_sensitivity._pairs` in O(n log n) after sorting
(docs/theory/smooth-sensitivity.md#exact-on-log-n-algorithm).

NRS07 = Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in private data analysis", STOC 2007;
BS19 = Bun & Steinke, "Average-case averages: private algorithms for smooth sensitivity and mean
estimation", NeurIPS 2019.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.smooth_sensitivity._pairs import (
    PairProblem,
    local_sensitivity_at,
    smooth_sensitivity_pairs,
)
from smoothdp.keywords import check_keywords_of
from smoothdp.scale.engine import Records, as_records
from smoothdp.sensitivity.rounding import round_up
from smoothdp.sums import exact_sum
from smoothdp.validation import (
    check_bool,
    check_bounds,
    check_in_range,
    check_int,
    check_positive,
)

__all__ = [
    "Max",
    "Mean",
    "Median",
    "Min",
    "OrderStatistic",
    "PreparedData",
    "Quantile",
    "Statistic",
    "TrimmedMean",
    "exact_sum",
]

Neighbours = Literal["substitution", "add_remove"]


def kept_sum(records: Records, first: int, last: int) -> Fraction:
    """Σ_{i=first}^{last} x_(i) exactly, from two one-rank windows and one exact sum of the values strictly
    between them: with v = x_(first), w = x_(last), the ranks first..last hold every record in (v, w), plus
    #{x ≤ v} − (first − 1) copies of v and last − #{x < w} copies of w (v = w: last − first + 1 copies)."""
    low, high = records.window(first, first), records.window(last, last)
    v, w = float(low.values[0]), float(high.values[0])
    if v == w:
        return Fraction(v) * (last - first + 1)
    copies_v = records.n - low.n_above - (first - 1)
    copies_w = last - high.n_below
    return records.exact_sum_open(v, w) + Fraction(v) * copies_v + Fraction(w) * copies_w


@dataclass(frozen=True)
class PreparedData:
    """Data under a statistic's data policy, as :class:`~smoothdp.scale.engine.Records` (in memory or on
    Dask): its size n and exact order statistics in rank windows; never sorted as a whole unless asked."""

    records: Records
    owner: Statistic

    @property
    def n(self) -> int:
        return self.records.n

    @property
    def values(self) -> NDArray[np.float64]:
        """Every record, sorted (gathers the data on the driver for a Dask engine)."""
        return self.records.sorted_values()


class Statistic(ABC):
    """A real statistic of a data set in public bounds, with its sensitivities.

    Parameters
    ----------
    bounds
        ``(lower, upper)``: the public bounds of every record (lower < upper, finite).
    clip
        ``True`` (default): clip records (±inf included) into the bounds, as part of the mechanism.
        ``False``: refuse records outside them, for trusted data only (the error depends on the data).
        Either way a NaN record is first imputed with the midpoint of the bounds.

    Attributes
    ----------
    neighbours
        The neighbour relation the sensitivities are computed for: ``"substitution"`` or ``"add_remove"``.
    """

    name: ClassVar[str] = "statistic"
    neighbours: ClassVar[Neighbours] = "substitution"
    source: ClassVar[str] = ""
    needs_sorting: ClassVar[bool] = True
    #: The fewest records the statistic is defined for (n is public under substitution).
    min_size: ClassVar[int] = 1

    def __init__(self, *, bounds: tuple[float, float], clip: bool = True) -> None:
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.clip = check_bool("clip", clip)

    @property
    def bounds(self) -> tuple[float, float]:
        """The public bounds (lower, upper)."""
        return self.lower, self.upper

    # -- data --------------------------------------------------------------------------------------------
    def prepare(self, x: ArrayLike | Records | PreparedData) -> PreparedData:
        """Apply the data policy to x (1-D; NaN imputed, then clipped or checked); idempotent.

        x may be an array, a dask collection (the Dask engine), or :class:`~smoothdp.scale.engine.Records`
        already prepared for these bounds (:func:`smoothdp.scale.as_records`, any engine).
        """
        if isinstance(x, PreparedData):
            if x.owner is not self and not self._compatible(x.owner):
                return self.prepare(x.records if x.records.bounds == self.bounds else x.values)
            self._check_size(x.n)
            return x
        records = as_records(x, self.lower, self.upper, clip=self.clip, min_size=self.min_size)
        self._check_size(records.n)
        return PreparedData(records, self)

    def _compatible(self, other: Statistic) -> bool:
        return type(other).needs_sorting >= self.needs_sorting and (other.lower, other.upper, other.clip) == (
            self.lower,
            self.upper,
            self.clip,
        )

    def _check_size(self, n: int) -> None:  # noqa: B027 (optional hook)
        """Raise if the statistic is undefined for n records."""

    # -- public API --------------------------------------------------------------------------------------
    def value(self, x: ArrayLike | PreparedData) -> float:
        """The statistic of x (of the imputed, clipped data), as the float nearest its exact value."""
        return float(self._exact_value(self.prepare(x)))

    def exact_value(self, x: ArrayLike | PreparedData) -> float | Fraction:
        """The statistic's exact value: a data value (order statistics) or an exact rational (means).

        This is what a mechanism adds noise to (:func:`smoothdp.exact.add_noise`); no rounding error can
        separate two neighbours whose exact statistics agree.
        """
        return self._exact_value(self.prepare(x))

    def local_sensitivity(self, x: ArrayLike | PreparedData, k: int = 0) -> float:
        """A^(k)(x) = max over data sets y within k neighbour steps of LS(y); k = 0 is LS(x). Rounded up."""
        kk = check_int("k", k, minimum=0)
        return float(round_up(self._local_sensitivity(self.prepare(x), kk)))

    def smooth_sensitivity(self, x: ArrayLike | PreparedData, beta: float) -> float:
        """S_β(x) = max_{k ≥ 0} e^{−βk} A^(k)(x) (NRS07 Def. 2.1 with k from 0), exact and rounded up."""
        b = check_positive("beta", beta)
        s = self._smooth_sensitivity(self.prepare(x), b)
        return float(round_up(max(s, np.finfo(np.float64).tiny)))  # never 0: noise scale must be > 0

    def global_sensitivity(self, n: int) -> float:
        """max over all data sets with n records of LS (A^(k) for k ≥ n)."""
        nn = check_int("n", n, minimum=1)
        self._check_size(nn)
        return float(round_up(self._global_sensitivity(nn)))

    # -- implemented by each statistic ---------------------------------------------------------------------
    @abstractmethod
    def _exact_value(self, d: PreparedData) -> float | Fraction: ...

    @abstractmethod
    def _local_sensitivity(self, d: PreparedData, k: int) -> float: ...

    @abstractmethod
    def _smooth_sensitivity(self, d: PreparedData, beta: float) -> float: ...

    @abstractmethod
    def _global_sensitivity(self, n: int) -> float: ...

    def describe(self) -> str:
        return f"{self.name} on [{self.lower:g}, {self.upper:g}]"

    def __repr__(self) -> str:
        bounds = f"bounds=({self.lower:g}, {self.upper:g})"
        return f"{type(self).__name__}({self._params()}{bounds}, clip={self.clip})"

    def _params(self) -> str:
        return ""


# ------------------------------------------------------------------------------------------------------------
# Order statistics: x_(r) for a rank r(n), 1-based.
# ------------------------------------------------------------------------------------------------------------
class OrderStatistic(Statistic):
    """The order statistic x_(r) of the sorted data, for a rank rule r(n) ∈ {1, …, n}.

    A^(k)(x) = max_{t=0..k+1} (x_(r+t) − x_(r+t−k−1)) with the padding x_(i) = lower for i ≤ 0 and upper
    for i ≥ n+1 (NRS07 §3.1; docs/theory/smooth-sensitivity.md#median-and-quantiles, checked against brute
    force). Neighbours: ``"substitution"``.
    """

    source: ClassVar[str] = (
        "Nissim, Raskhodnikova & Smith, STOC 2007, §3.1 (order statistics); "
        "docs/theory/smooth-sensitivity.md#median-and-quantiles"
    )

    @abstractmethod
    def rank(self, n: int) -> int:
        """The 1-based rank r(n) released for n records."""

    def _problem(self, d: PreparedData) -> PairProblem:
        return PairProblem(d.records, self.lower, self.upper, i_hi=self.rank(d.n), gap=1, scale=1.0)

    def _exact_value(self, d: PreparedData) -> float:
        return d.records.value_at(self.rank(d.n))

    def _local_sensitivity(self, d: PreparedData, k: int) -> float:
        return local_sensitivity_at(self._problem(d), k)

    def _smooth_sensitivity(self, d: PreparedData, beta: float) -> float:
        return smooth_sensitivity_pairs(self._problem(d), beta)

    def _global_sensitivity(self, n: int) -> float:
        return self.upper - self.lower


class Median(OrderStatistic):
    """The (lower) median x_(r), r = ⌈n/2⌉: the middle element for odd n, the lower middle for even n.

    Not ``np.median``, which averages the two middle elements for even n and has another sensitivity.
    """

    name: ClassVar[str] = "median"

    def rank(self, n: int) -> int:
        return (n + 1) // 2


class Quantile(OrderStatistic):
    """The q-quantile x_(r) with r = max(1, ⌈q·n⌉).

    The rank rule is numpy's ``method="inverted_cdf"``: the smallest x_(r) with r/n ≥ q. The product q·n is
    computed exactly from q's shortest decimal form (``repr``), so q = 0.1 means 1/10 and 0.1·10 has rank 1,
    with no floating-point rounding either way. q = 0.5 gives :class:`Median`, q = 0 the minimum and q = 1
    the maximum.
    """

    def __init__(self, q: float, *, bounds: tuple[float, float], clip: bool = True) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        super().__init__(bounds=bounds, clip=clip)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"quantile({self.q:g})"

    def rank(self, n: int) -> int:
        return max(1, math.ceil(Fraction(repr(self.q)) * n))

    def _params(self) -> str:
        return f"q={self.q:g}, "


class Min(OrderStatistic):
    """The minimum x_(1): A^(k) = max(x_(k+1) − lower, x_(k+2) − x_(1)).

    Proof: docs/theory/smooth-sensitivity.md#minimum-and-maximum. Neighbours: ``"substitution"``.
    """

    name: ClassVar[str] = "min"

    def rank(self, n: int) -> int:
        return 1


class Max(OrderStatistic):
    """The maximum x_(n): A^(k) = max(upper − x_(n−k), x_(n) − x_(n−k−1)) (by reflection of the minimum).

    Proof: docs/theory/smooth-sensitivity.md#minimum-and-maximum. Neighbours: ``"substitution"``.
    """

    name: ClassVar[str] = "max"

    def rank(self, n: int) -> int:
        return n


# ------------------------------------------------------------------------------------------------------------
# Trimmed mean (Bun–Steinke)
# ------------------------------------------------------------------------------------------------------------
class TrimmedMean(Statistic):
    """The m-trimmed mean (1/(n−2m)) Σ_{i=m+1}^{n−m} x_(i) (Bun & Steinke 2019, "Average-case averages").

    A^(k)(x) = (1/(n−2m)) · max_{ℓ=0..k+1} (x_(n−m+1+k−ℓ) − x_(m+1−ℓ)) with the order-statistic padding
    (docs/theory/smooth-sensitivity.md#trimmed-mean, checked against brute force). Neighbours:
    ``"substitution"``.

    Parameters
    ----------
    trim
        An ``int`` m ≥ 0: the number of records cut from *each* end (needs n > 2m); or a ``float`` in
        [0, 0.5): the proportion cut from each end, m = ⌊trim·n⌋ (as ``scipy.stats.trim_mean``; the product
        is exact in trim's shortest decimal form).
    bounds, clip
        As for every statistic.
    """

    source: ClassVar[str] = (
        "Bun & Steinke, NeurIPS 2019 (trimmed mean); docs/theory/smooth-sensitivity.md#trimmed-mean"
    )

    def __init__(self, trim: int | float, *, bounds: tuple[float, float], clip: bool = True) -> None:
        if isinstance(trim, bool) or not isinstance(trim, int | float | np.integer | np.floating):
            raise TypeError(f"trim must be an int (records per end) or a float proportion; got {trim!r}")
        if isinstance(trim, int | np.integer):
            self.trim: int | float = check_int("trim", trim, minimum=0)
        else:
            self.trim = check_in_range("trim", trim, 0.0, 0.5, low_open=False, high_open=True)
        super().__init__(bounds=bounds, clip=clip)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"trimmed_mean({self.trim:g})"

    def trimmed(self, n: int) -> int:
        """m: records cut from each end for n records."""
        if isinstance(self.trim, int):
            return self.trim
        return math.floor(Fraction(repr(self.trim)) * n)

    def _check_size(self, n: int) -> None:
        m = self.trimmed(n)
        if n <= 2 * m:
            raise ValueError(
                f"trim={self.trim!r} cuts {m} record(s) from each end, too many for n={n}; "
                f"the trimmed mean needs n > 2·trim (trim ≤ {(n - 1) // 2} here)"
            )

    def _problem(self, d: PreparedData) -> PairProblem:
        m = self.trimmed(d.n)
        return PairProblem(
            d.records, self.lower, self.upper, i_hi=m + 1, gap=d.n - 2 * m, scale=1.0 / (d.n - 2 * m)
        )

    def _exact_value(self, d: PreparedData) -> Fraction:
        """(1/(n−2m)) Σ kept records, exactly (:func:`exact_sum`; a float mean can differ between
        neighbours by far more than a tiny smooth sensitivity)."""
        m = self.trimmed(d.n)
        return kept_sum(d.records, m + 1, d.n - m) / (d.n - 2 * m)

    def _local_sensitivity(self, d: PreparedData, k: int) -> float:
        return local_sensitivity_at(self._problem(d), k)

    def _smooth_sensitivity(self, d: PreparedData, beta: float) -> float:
        return smooth_sensitivity_pairs(self._problem(d), beta)

    def _global_sensitivity(self, n: int) -> float:
        return (self.upper - self.lower) / (n - 2 * self.trimmed(n))

    def _params(self) -> str:
        return f"trim={self.trim!r}, "


# ------------------------------------------------------------------------------------------------------------
# Mean under add/remove
# ------------------------------------------------------------------------------------------------------------
class Mean(Statistic):
    """The mean of records in [lower, upper] under **add/remove** neighbours (n is private).

    Local sensitivity at distance k, the size-only bound of
    docs/theory/smooth-sensitivity.md#mean-with-clipping (the u/(n+1) of Near & Abuah's *Programming
    Differential Privacy* ignores removals; removing x_i moves the mean by |x̄ − x_i|/(n−1) ≤ (u−l)/n):

        A^(k)(x) ≤ (u − l)/max(n − k, 1),

    since every y within k steps has |y| ≥ n − k and LS(y) ≤ (u−l)/max(|y|, 1). k ↦ −βk − ln(n − k) is
    convex, so for n ≥ 1

        S_β(x) = max( (u − l)/n, (u − l)·e^{−β(n−1)} ).

    **Empty data** (n = 0, a neighbour of every one-record data set) is not an error: its mean is the public
    default, the midpoint (l + u)/2, and its smooth sensitivity is S_β(∅) = u − l. Derivation: every y
    within k steps of ∅ has LS(y) ≤ (u − l)/max(|y|, 1) ≤ u − l (for ∅ itself LS = (u − l)/2: its only
    neighbours are the singletons {v}, whose mean v is within (u − l)/2 of the midpoint), so A^(k)(∅) ≤ u − l
    for every k and max_k e^{−βk}·A^(k)(∅) ≤ u − l, reached at k = 0 by the bound. It is the n = 0 case of
    the bound (u − l)/max(n − k, 1) and stays β-smooth: S_β({v}) = u − l = S_β(∅).

    This bound is β-smooth: a neighbour's n differs by one, which shifts k by one.
    """

    name: ClassVar[str] = "mean"
    neighbours: ClassVar[Neighbours] = "add_remove"
    source: ClassVar[str] = (
        "Near & Abuah, Programming Differential Privacy, chapter Local Sensitivity, corrected for removals: "
        "docs/theory/smooth-sensitivity.md#mean-with-clipping"
    )
    needs_sorting: ClassVar[bool] = False
    min_size: ClassVar[int] = 0  # n is private: empty data releases around the midpoint

    def _exact_value(self, d: PreparedData) -> Fraction:
        """(1/n) Σ x_i exactly (:func:`exact_sum`); the midpoint (l + u)/2 for empty data."""
        if d.n == 0:
            return (Fraction(self.lower) + Fraction(self.upper)) / 2
        return d.records.exact_sum() / d.n

    def _local_sensitivity(self, d: PreparedData, k: int) -> float:
        return (self.upper - self.lower) / max(d.n - k, 1)

    def _smooth_sensitivity(self, d: PreparedData, beta: float) -> float:
        width = self.upper - self.lower
        if d.n == 0:
            return width
        return max(width / d.n, width * math.exp(-beta * (d.n - 1)))

    def _global_sensitivity(self, n: int) -> float:
        return self.upper - self.lower


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
