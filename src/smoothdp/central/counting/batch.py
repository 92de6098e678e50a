"""Vectorized building blocks of the counting queries, for one column or for all groups of a table at once.

Pure functions (arrays in, arrays out, no accountant, no global state), composed by
:mod:`smoothdp.central.counting.queries` (``count``, ``sum``, ``histogram``) and by the tables layer, which
releases every group in one call (no Python loop over groups):

* :func:`category_codes`, :func:`bin_codes`: each record's cell (−1: no cell, dropped);
* :func:`cell_counts` and :func:`add_integer_noise`: exact counts per cell, plus exact integer noise;
* :class:`SumQuantizer` and :func:`grouped_sums`: exact clipped sums per group on a public fixed-point
  lattice; :func:`noisy_grouped_sums`: the same plus noise, as floats.

The calibration (noise law and guarantee) comes from
:func:`smoothdp.central.counting.noise.calibrate_integer_noise`. Proofs:
docs/theory/counting-queries.md (#the-noisy-histogram, #the-noisy-sum).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.counting.noise import IntegerNoise
from smoothdp.privacy import check_neighbours
from smoothdp.validation import as_float_array, check_bounds, check_int, prepare_records

__all__ = [
    "SumQuantizer",
    "add_integer_noise",
    "bin_codes",
    "category_codes",
    "cell_counts",
    "check_bins",
    "check_categories",
    "grouped_sums",
    "noisy_grouped_sums",
]

I64 = NDArray[np.int64]
#: Bits of the fixed-point sensitivity: the sum's quantum q is 2⁻²⁰ of the sensitivity (rounded to a power
#: of two), so the rounding of the sum (≤ q/2) and of the sensitivity (⌈Δ/q⌉ ≤ Δ/q + 1) cost ≤ 2⁻²⁰.
QUANTUM_BITS = 20
#: Records per block (cache-sized) and per flush to Python integers of the exact per-group sums: the float
#: totals of 27-bit halves stay below 2⁵³ over 2²⁵ records.
_SUM_BLOCK = 1 << 20
_SUM_FLUSH = 1 << 25
_HALF_BITS = 26
_HALF_DOWN = 2.0**-_HALF_BITS
_HALF_UP = 2.0**_HALF_BITS


# -- cells: categories and bins -----------------------------------------------------------------------------
def check_categories(categories: Any) -> tuple[list[Any], NDArray[Any]]:
    """Public categories: a non-empty sequence of distinct values, all real numbers (no NaN) or all strings.

    Returns the categories as given (a list, the output order) and their sorted array (floats or str).
    """
    if isinstance(categories, str | bytes) or not hasattr(categories, "__len__"):
        raise TypeError(f"categories must be a sequence of values (a list); got {type(categories).__name__}")
    values = list(categories.tolist() if hasattr(categories, "tolist") else categories)
    if not values:
        raise ValueError("categories must hold at least one value")
    if all(isinstance(v, str) for v in values):
        keys: NDArray[Any] = np.asarray(values, dtype=str)
    elif all(isinstance(v, int | float | np.integer | np.floating) for v in values):
        keys = np.asarray(values, dtype=np.float64)
        if np.isnan(keys).any():
            raise ValueError("categories must not hold NaN (a NaN record matches no category)")
    else:
        raise TypeError("categories must be all real numbers or all strings; got a mix or another kind")
    ordered = np.sort(keys)
    if ordered.size > 1 and np.any(ordered[1:] == ordered[:-1]):
        raise ValueError("categories must be distinct")
    return values, keys


def _records(x: Any) -> NDArray[Any]:
    """The records of x as a one-dimensional numpy array (Series and one-column frames unwrapped; a masked
    array as an object array with None at its masked entries)."""
    if hasattr(x, "columns") and hasattr(x, "to_numpy"):
        columns = list(x.columns)
        if len(columns) != 1:
            raise ValueError(f"x must be a one-column DataFrame or a Series; got {len(columns)} columns")
        x = x[columns[0]]
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
    if isinstance(x, np.ma.MaskedArray):  # masked entries are missing values: never read what they hide
        data = np.ma.getdata(x).astype(object)
        data[np.ma.getmaskarray(x)] = None
        x = data
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as err:  # ragged nested lists
        raise TypeError(f"x must be a one-dimensional collection of records; got {type(x).__name__}") from err
    if arr.ndim != 1:
        raise ValueError(f"x must be one-dimensional; got shape {arr.shape}")
    return arr


def _kind_mismatch(arr: NDArray[Any], wanted: str) -> TypeError:
    return TypeError(f"x holds values of dtype {arr.dtype}; the categories are {wanted}: kinds must agree")


def _as_labels(arr: NDArray[Any]) -> tuple[NDArray[np.str_], NDArray[np.bool_]]:
    """Records as strings, with a mask of those that are strings (the others match no string category)."""
    if arr.dtype.kind == "U":
        return arr, np.ones(arr.size, dtype=np.bool_)
    if arr.dtype.kind != "O":
        raise _kind_mismatch(arr, "strings")
    is_str = np.fromiter((isinstance(v, str) for v in arr), dtype=np.bool_, count=arr.size)
    return np.where(is_str, arr, "").astype(str), is_str


def _is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, str)


def _as_reals(arr: NDArray[Any]) -> NDArray[np.float64]:
    """Records as floats, NaN for those that are not real numbers (they match no numeric category)."""
    if arr.dtype.kind in "biuf":
        out: NDArray[np.float64] = arr.astype(np.float64)
        return out
    if arr.dtype.kind != "O":
        raise _kind_mismatch(arr, "numbers")
    return np.fromiter((float(v) if _is_real(v) else math.nan for v in arr), dtype=np.float64, count=arr.size)


def category_codes(x: Any, keys: NDArray[Any]) -> I64:
    """Each record's index in ``keys`` (the categories in output order), −1 where it matches none.

    A record matches a category when it equals it and is of the same kind (numbers: compared as floats, so
    1 and 1.0 match; NaN matches nothing); in an object column, a record of another kind (a string among
    numbers, None, pandas NA) matches nothing. Unmatched records are dropped by the histogram: a fixed
    per-record rule, so neighbours stay neighbours (docs/theory/counting-queries.md#the-noisy-histogram).
    A column whose dtype cannot hold the categories' kind (numbers for string categories, strings or dates
    for numeric ones) is a TypeError: the kind of a column is its schema, not a record's value.
    """
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    arr = _records(x)
    values: NDArray[Any]
    if keys.dtype.kind == "U":
        values, valid = _as_labels(arr)
    else:
        values = _as_reals(arr)
        valid = ~np.isnan(values)
    pos = np.clip(np.searchsorted(ordered, values), 0, ordered.size - 1)
    hit = valid & (ordered[pos] == values)
    codes: I64 = np.where(hit, order[pos], -1).astype(np.int64)
    return codes


def check_bins(bins: Any) -> NDArray[np.float64]:
    """Public bin edges: at least two finite, strictly increasing numbers."""
    try:
        edges = as_float_array(bins, "bins")
    except TypeError as err:
        raise TypeError(f"bins must be an array of at least 2 increasing edges; got {bins!r}") from err
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(
            "bins must be a one-dimensional array of at least 2 edges (for k equal bins over (lo, hi), pass "
            f"numpy.linspace(lo, hi, k + 1)); got {bins!r}"
        )
    if not np.all(np.isfinite(edges)) or not np.all(edges[1:] > edges[:-1]):
        raise ValueError(f"bins must be finite and strictly increasing; got {bins!r}")
    return edges


def bin_codes(x: Any, edges: NDArray[np.float64]) -> I64:
    """Each record's bin: [e_j, e_{j+1}) for j < k − 1 and [e_{k−1}, e_k] for the last (as numpy.histogram).

    The data policy of bounded records with bounds (e_0, e_k): NaN → the midpoint (e_0 + e_k)/2, then ±inf
    and every value outside are clipped into the outer bins; every record lands in exactly one bin.
    """
    values = prepare_records(x, float(edges[0]), float(edges[-1]), min_size=0)
    codes: I64 = np.searchsorted(edges, values, side="right").astype(np.int64) - 1
    np.clip(codes, 0, edges.size - 2, out=codes)
    return codes


def cell_counts(codes: ArrayLike, n_cells: int) -> I64:
    """Exact counts of the codes 0, …, n_cells − 1 (negative codes are dropped)."""
    k = check_int("n_cells", n_cells, minimum=1)
    c = np.asarray(codes, dtype=np.int64).ravel()
    if c.size and int(c.max()) >= k:
        raise ValueError(f"codes must be below n_cells={k}")
    counts: I64 = np.bincount(c[c >= 0], minlength=k).astype(np.int64)
    return counts


def add_integer_noise(values: ArrayLike, noise: IntegerNoise, rng: np.random.Generator) -> I64:
    """``values`` (integers, any shape) plus independent exact draws of ``noise``, as int64."""
    v = np.asarray(values)
    if v.dtype.kind not in "iu":
        raise TypeError(f"values must be integers; got dtype {v.dtype}")
    out: I64 = v.astype(np.int64) + noise.sample(v.shape, rng)
    return out


# -- sums on a public fixed-point lattice -----------------------------------------------------------------
def _exponent_above(m: float) -> int:
    """The least E with m < 2^E (m > 0 finite)."""
    _, e = math.frexp(m)  # m = f·2^e, f ∈ [1/2, 1)
    return e


@dataclass(frozen=True)
class SumQuantizer:
    """The public lattice of a clipped sum (docs/theory/counting-queries.md#the-noisy-sum).

    Records are clipped into ``bounds`` (NaN: the midpoint) and rounded to the record unit r = 2^(E−53),
    2^E > max(|L|, |U|) (at most half an ulp of the largest bound; exact for records of the bounds'
    magnitude): a_i = rint(x_i/r), an integer with |a_i| < 2⁵³. A group's A = Σa_i is summed exactly in
    integers, then rounded to the quantum q = 2^j ≥ r, j = ⌊log2 Δ⌋ − 20 (Δ: the sensitivity below), by
    f = ⌊A·r/q + 1/2⌋.

    Sensitivity of f in units of q: ``sensitivity`` = ⌈D/2^s⌉, q = r·2^s, with D the largest change of A:
    max(|rint(L/r)|, |rint(U/r)|) under add/remove (one record in or out), rint(U/r) − rint(L/r) under
    substitution. The released sum is q·(f + Z).
    """

    lower: float
    upper: float
    neighbours: str
    record_exponent: int
    quantum_exponent: int
    sensitivity: int

    @classmethod
    def for_bounds(cls, bounds: Any, neighbours: str = "add_remove") -> SumQuantizer:
        lower, upper = check_bounds(bounds)
        relation = check_neighbours(neighbours, allowed=("add_remove", "substitution"))
        top = max(abs(lower), abs(upper))
        e_r = max(_exponent_above(top) - 53, -1074)
        r = Fraction(2) ** e_r
        lo_units, hi_units = round(Fraction(lower) / r), round(Fraction(upper) / r)  # ties to even, as rint
        if relation == "add_remove":
            largest = max(abs(lo_units), abs(hi_units))
            real = top
        else:
            largest = hi_units - lo_units
            real = upper - lower if math.isfinite(upper - lower) else math.ldexp(1.0, 1024)
        e_q = max(_exponent_above(real) - 1 - QUANTUM_BITS, e_r)  # ⌊log2 Δ⌋ − 20, never below r
        s = e_q - e_r
        units = max(-(-largest // (1 << s)), 1)
        return cls(lower, upper, relation, e_r, e_q, units)

    @property
    def quantum(self) -> float:
        """q, the spacing of the released sums (a power of two)."""
        return math.ldexp(1.0, self.quantum_exponent)

    def to_float(self, units: Any) -> Any:
        """q·k for integers k (a Python int or an array of them) as floats: the correctly rounded float of
        k (exact below 2⁵³), times the power of two q (exact unless it overflows to ±inf)."""
        k = np.asarray(units)
        return np.ldexp(k.astype(np.float64), self.quantum_exponent)  # object ints: float(int), rounded

    def record_units(self, x: Any) -> I64:
        """a_i = rint(x_i/r) of the records under the data policy (NaN → midpoint, clip into the bounds)."""
        values = prepare_records(x, self.lower, self.upper, min_size=0)
        units: I64 = np.rint(np.ldexp(values, -self.record_exponent)).astype(np.int64)
        return units


def grouped_sums(
    values: Any, groups: ArrayLike | None, n_groups: int, quantizer: SumQuantizer
) -> NDArray[Any]:
    """f_g = ⌊A_g·r/q + 1/2⌋ for each group g < n_groups (exact; Python ints in an object array).

    ``groups`` holds each record's group index (integers in [0, n_groups), one per record; the tables layer
    drops records of unlisted keys before); ``None``: every record in group 0.

    A_g = Σ a_i exactly, in floats: a_i = rint(x_i·2^−e) is an integer-valued float (|a_i| ≤ 2⁵³, the
    scaling by a power of two exact), split as a_i = h_i·2²⁶ + l_i with h_i = ⌊a_i·2⁻²⁶⌋ (|h_i| ≤ 2²⁷)
    and 0 ≤ l_i < 2²⁶, both exact. ``np.bincount`` sums each half per group over blocks of 2²⁰ records;
    the float totals are flushed to Python integers every 2²⁵ records, before any can reach 2⁵³, so every
    float sum is exact. One pass, no conversion to int64, no Python loop over groups or records.
    """
    k = check_int("n_groups", n_groups, minimum=1)
    x = prepare_records(values, quantizer.lower, quantizer.upper, min_size=0)
    g = np.zeros(x.size, dtype=np.intp) if groups is None else np.asarray(groups)
    if g.dtype.kind not in "iu" or g.shape != x.shape:
        raise ValueError(
            f"groups must be integers, one per record (shape {x.shape}); got {g.dtype} {g.shape}"
        )
    if g.size and (int(g.min()) < 0 or int(g.max()) >= k):
        raise ValueError(f"groups must be in [0, n_groups={k})")
    to_units = math.ldexp(1.0, -quantizer.record_exponent)
    high_total = np.zeros(k, dtype=object)  # Python ints: no overflow at any n
    low_total = np.zeros(k, dtype=object)
    for flush in range(0, x.size, _SUM_FLUSH):
        high_acc = np.zeros(k)
        low_acc = np.zeros(k)
        for start in range(flush, min(x.size, flush + _SUM_FLUSH), _SUM_BLOCK):
            units = x[start : start + _SUM_BLOCK] * to_units  # exact: a power of two
            np.rint(units, out=units)
            high = units * _HALF_DOWN
            np.floor(high, out=high)
            units -= high * _HALF_UP  # l_i = a_i − h_i·2²⁶, exact
            labels = g[start : start + _SUM_BLOCK]
            high_acc += np.bincount(labels, weights=high, minlength=k)
            low_acc += np.bincount(labels, weights=units, minlength=k)
        high_total += high_acc.astype(np.int64).astype(object)
        low_total += low_acc.astype(np.int64).astype(object)
    s = quantizer.quantum_exponent - quantizer.record_exponent
    total = high_total * (1 << _HALF_BITS) + low_total
    if s == 0:
        return total
    out: NDArray[Any] = (total + (1 << (s - 1))) // (1 << s)
    return out


def noisy_grouped_sums(
    values: Any,
    groups: ArrayLike | None,
    n_groups: int,
    quantizer: SumQuantizer,
    noise: IntegerNoise,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """q·(f_g + Z_g) for every group, as floats (Z_g independent draws of ``noise``, calibrated to
    ``quantizer.sensitivity``). The float of an integer beyond 2⁵³ is its correct rounding:
    post-processing."""
    f = grouped_sums(values, groups, n_groups, quantizer)
    out: NDArray[np.float64] = quantizer.to_float(f + noise.sample(f.shape, rng).astype(object))
    return out
