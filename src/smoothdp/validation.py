"""Input validation shared by the whole library.

Every public entry point checks its arguments here, so that bad input always gets the same kind of
error: a :class:`ValueError` (wrong value) or :class:`TypeError` (wrong kind) whose message names the
parameter, the value given and the allowed range. Never a silent NaN or a wrong answer.

**Data is not a parameter.** Records never make a release fail: :func:`prepare_records` is the one data
policy of the mechanisms with public bounds, applied before any data-dependent work:

1. **NaN first** (:func:`impute_missing`): a NaN record is kept (n unchanged) and replaced by a public
   value, the midpoint of the public bounds. How many were imputed is never reported.
2. **Clipping** (``clip=True``, the default): every record, ±inf included, is clipped into the bounds as
   part of the mechanism. How many were clipped is never reported.
3. ``clip=False`` is for **trusted data** only: a record outside the bounds is an error, and that error
   depends on the data (its message carries no count and no value, but raising at all reveals that some
   record is out of bounds). docs/central.md describes the policy.

**Inputs** (:func:`as_float_array`, used by every entry point that takes data): numpy arrays, lists, pandas
and polars Series and one-column DataFrames (duck-typed: no pandas or polars import), of real numbers.
Missing values (``None``, pandas ``NA``, polars nulls, the masked entries of a numpy masked array) become
NaN, which the policy above imputes; a masked entry's hidden value is never read. Strings
are refused, numeric-looking ones too (``["1", "2"]``): a :class:`TypeError` naming the parameter, as for
any input whose kind (dtype, or the element kinds of a list or object array) is not a real number. Like the
shape, the kind is the schema of the data, not the value of a record.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "apply_data_policy",
    "as_float_array",
    "check_beta",
    "check_bounds",
    "check_data",
    "check_delta",
    "check_epsilon",
    "check_in_range",
    "check_int",
    "check_positive",
    "check_probability",
    "check_released_count",
    "clip_or_check",
    "impute_missing",
    "prepare_records",
    "to_float_array",
]


# ------------------------------------------------------------------------------------------ inputs

#: numpy dtype kinds converted to float64 as they are (bool, signed and unsigned integers, floats).
_NUMERIC_KINDS = frozenset("biuf")
#: Type names of the missing-value singletons of pandas (``pd.NA``), matched without importing pandas.
_MISSING_TYPES = frozenset({"NAType"})


def _describe(x: Any) -> str:
    dtype = getattr(x, "dtype", None)
    return f"{type(x).__name__} of dtype {dtype}" if dtype is not None else type(x).__name__


def _not_numbers(name: str, x: Any, detail: str = "") -> TypeError:
    extra = f" ({detail})" if detail else ""
    return TypeError(f"{name} must be an array of real numbers; got {_describe(x)}{extra}")


def _masked_constant() -> Any:
    """numpy's ``np.ma.masked`` if numpy.ma was imported (a sentinel nothing is otherwise)."""
    ma = sys.modules.get("numpy.ma")
    return ma.masked if ma is not None else _NOT_MASKED


_NOT_MASKED = object()


def _object_to_float(value: Any, name: str) -> float:
    """One element of an object array: a real number, or a missing value (None, pandas NA, numpy's
    ``np.ma.masked``) → NaN."""
    if value is None or value is _masked_constant() or type(value).__name__ in _MISSING_TYPES:
        return math.nan
    if isinstance(value, str | bytes):
        raise TypeError(
            f"{name} must hold real numbers, not strings (numeric-looking ones are not converted: parse "
            "them first, e.g. with float)"
        )
    if isinstance(value, complex | np.complexfloating):
        raise TypeError(f"{name} must hold real numbers; got a complex number")
    try:
        return float(value)
    except OverflowError:  # a real number beyond the float range (a huge int or Fraction): ±inf, then clipped
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError) as err:
        kind = type(value).__name__
        raise TypeError(f"{name} must hold real numbers; got an element of type {kind}") from err


def _unwrap_frame(x: Any, name: str) -> Any:
    """A DataFrame (pandas, polars: anything with ``columns`` and ``to_numpy``) with one column → that
    column; a Series-like with ``to_numpy`` → its values (pandas nullable numbers: NA → NaN)."""
    if hasattr(x, "columns") and hasattr(x, "to_numpy"):
        columns = list(x.columns)
        if len(columns) != 1:
            raise ValueError(
                f"{name} must be a one-column DataFrame or a Series; got a DataFrame with {len(columns)} "
                "columns (select the column, e.g. df['age'], or pass df.to_numpy() for points)"
            )
        x = x[columns[0]]
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        if getattr(getattr(x, "dtype", None), "kind", None) in _NUMERIC_KINDS:
            try:  # pandas nullable numbers (Int64, Float64, boolean): NA → NaN, vectorized
                return x.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                pass
        return x.to_numpy()
    return x


def as_float_array(x: Any, name: str = "x") -> NDArray[np.float64]:
    """``x`` as a float64 array: the one conversion of data inputs (module docstring, **Inputs**).

    Accepts arrays and nested lists of real numbers (bool, int, float), pandas and polars Series and
    one-column DataFrames, numpy masked arrays; missing values (``None``, pandas ``NA``, polars nulls,
    masked entries) become NaN. Refuses strings, complex numbers, dates and other non-numbers with a
    :class:`TypeError` naming ``name`` (a masked array by its dtype, like any array), and a DataFrame with
    several columns with a :class:`ValueError`. Shape is not checked here.
    """
    values = _unwrap_frame(x, name)
    ma = sys.modules.get("numpy.ma")  # no masked array can exist before numpy.ma is imported:
    if ma is not None and isinstance(values, ma.MaskedArray):  # spare a release its import
        return _unmask(values, name)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as err:  # ragged nested lists
        raise _not_numbers(name, x) from err
    kind = arr.dtype.kind
    if kind in _NUMERIC_KINDS:
        out: NDArray[np.float64] = arr.astype(np.float64, copy=False)
        return out
    if kind in "US":
        raise _not_numbers(name, x, "strings are not converted, numeric-looking ones too: parse them first")
    if kind != "O":  # complex, datetime, timedelta, structured, void
        raise _not_numbers(name, x)
    # Object arrays (lists holding None, pandas object columns): element by element, the slow path.
    flat = arr.ravel()
    converted = np.fromiter((_object_to_float(v, name) for v in flat), dtype=np.float64, count=flat.size)
    return converted.reshape(arr.shape)


def _unmask(x: np.ma.MaskedArray, name: str) -> NDArray[np.float64]:
    """A masked array as floats: every masked entry NaN (the missing-value policy), whatever it hides.

    The kind is the data array's dtype (strings refused as in any array); in an object array the masked
    elements are not inspected (they become ``None`` first).
    """
    mask = np.ma.getmaskarray(x)
    data = np.ma.getdata(x)
    if data.dtype.kind == "O":
        data = data.copy()
        data[mask] = None
    out = as_float_array(data, name)
    return np.where(mask, np.nan, out)


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number; got {value!r} of type {type(value).__name__}")
    return float(value)


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, after checking it is > 0 (and finite unless ``allow_inf``)."""
    x = _as_float(name, value)
    if math.isnan(x) or x <= 0 or (math.isinf(x) and not allow_inf):
        allowed = "(0, inf]" if allow_inf else "(0, inf)"
        raise ValueError(f"{name} must be in {allowed}; got {value!r}")
    return x


def _short(v: float) -> str:
    """v in ``:g`` form when that reads back as v, else its exact repr (ends 1e15 and 1e15 + 1 differ)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def check_in_range(
    name: str,
    value: Any,
    low: float,
    high: float,
    *,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    """Return ``value`` as a float after checking it lies in the interval (low, high) (ends as told)."""
    x = _as_float(name, value)
    too_low = x <= low if low_open else x < low
    too_high = x >= high if high_open else x > high
    if math.isnan(x) or too_low or too_high:
        interval = f"{'(' if low_open else '['}{_short(low)}, {_short(high)}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval}; got {value!r}")
    return x


#: The largest magnitude of a released count (the floats that are exact integers).
MAX_COUNT = 2.0**53


def check_released_count(value: Any) -> float | None:
    """``released_count``, a noisy count released before (a table's count column), as a float in the range of
    exact integers, or ``None`` (the mechanism draws its own count)."""
    if value is None:
        return None
    return check_in_range("released_count", value, -MAX_COUNT, MAX_COUNT, low_open=False)


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    v = int(value)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        lo = "-inf" if minimum is None else str(minimum)
        hi = "inf" if maximum is None else str(maximum)
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}]; got {value!r}")
    return v


#: Smallest ε accepted: below it noise scales such as Δ/ε leave the float range (and no release is useful).
MIN_EPSILON = 2.0**-64


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """ε must be finite and at least 2^-64 (:data:`MIN_EPSILON`)."""
    eps = _as_float(name, epsilon)
    if not MIN_EPSILON <= eps < math.inf:  # NaN fails too
        raise ValueError(f"{name} must be in [2^-64, inf); got {epsilon!r}")
    return eps


def check_delta(delta: Any, name: str = "delta", *, allow_zero: bool = True) -> float:
    """δ must be in [0, 1) (or (0, 1) when the rule needs δ > 0)."""
    return check_in_range(name, delta, 0.0, 1.0, low_open=not allow_zero, high_open=True)


def check_probability(name: str, value: Any, *, open_low: bool = True, open_high: bool = True) -> float:
    """A probability-like parameter in (0, 1) (ends as told)."""
    return check_in_range(name, value, 0.0, 1.0, low_open=open_low, high_open=open_high)


def check_beta(beta: Any, upper: float, *, rule: str, name: str = "beta") -> float:
    """β (the smoothness) must be in (0, upper); ``rule`` names the rule that imposes the upper end."""
    b = _as_float(name, beta)
    if math.isnan(b) or not (0.0 < b < upper):
        raise ValueError(f"{name} must be in (0, {upper:.6g}) for {rule}; got {beta!r}")
    return b


def check_data(
    x: ArrayLike,
    name: str = "x",
    *,
    ndim: int | Sequence[int] | None = None,
    last_dim: int | None = None,
    min_size: int = 1,
    dtype: type = np.float64,
) -> NDArray[np.float64]:
    """Return ``x`` as a float array after checking it is finite, non-empty and of the right shape.

    ``x`` is converted by :func:`as_float_array` (Series, one-column DataFrames; strings refused).

    Parameters
    ----------
    ndim
        Allowed number(s) of dimensions (None: any).
    last_dim
        Required length of the last axis (2 for points in the plane).
    min_size
        The fewest elements (points, when ``last_dim`` is set) allowed.
    """
    arr: NDArray[np.float64] = as_float_array(x, name)
    if dtype is not np.float64:
        arr = arr.astype(dtype)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}; got shape {arr.shape}")
    if last_dim is not None and (arr.ndim == 0 or arr.shape[-1] != last_dim):
        raise ValueError(f"{name} must have shape (..., {last_dim}); got shape {arr.shape}")
    count = arr.size // last_dim if last_dim else arr.size
    if count < min_size:
        raise ValueError(f"{name} must hold at least {min_size} value(s); got {count}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinite values)")
    return arr


def to_float_array(
    x: ArrayLike,
    name: str = "x",
    *,
    ndim: int | Sequence[int] | None = None,
    min_size: int = 0,
) -> NDArray[np.float64]:
    """``x`` as a float array (:func:`as_float_array`), checking its kind and shape only (NaN and ±inf are
    allowed: see :func:`prepare_records`). ``min_size`` is the fewest records allowed (a public n only)."""
    arr = as_float_array(x, name)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}; got shape {arr.shape}")
    count = arr.shape[0] if arr.ndim else arr.size
    if count < min_size:
        raise ValueError(f"{name} must hold at least {min_size} value(s); got {count}")
    return arr


def impute_missing(x: NDArray[np.float64], fill: float | ArrayLike) -> NDArray[np.float64]:
    """Replace every NaN of ``x`` by the public value ``fill`` (broadcast), keeping every record.

    The first step of the data policy (:func:`prepare_records`): no exception, no count. ``fill`` must not
    depend on the data (the midpoint of public bounds, of a public domain, ...).
    """
    nan = np.isnan(x)
    if not nan.any():
        return x
    out: NDArray[np.float64] = np.where(nan, np.asarray(fill, dtype=np.float64), x)
    return out


def prepare_records(
    x: ArrayLike,
    lower: float,
    upper: float,
    *,
    clip: bool = True,
    name: str = "x",
    ndim: int | Sequence[int] | None = 1,
    min_size: int = 1,
) -> NDArray[np.float64]:
    """The data policy of every mechanism with public bounds [lower, upper] (module docstring).

    NaN → the midpoint (lower + upper)/2, first; then clip into the bounds (``clip=True``: ±inf too) or,
    with ``clip=False`` (trusted data only), refuse records outside them without saying how many.
    Only the kind and shape of ``x`` and a too-small public n are errors.
    """
    arr = to_float_array(x, name, ndim=ndim, min_size=min_size)
    return apply_data_policy(arr, lower, upper, clip=clip, name=name)


def apply_data_policy(
    x: NDArray[np.float64], lower: float, upper: float, *, clip: bool, name: str = "x"
) -> NDArray[np.float64]:
    """NaN → (lower + upper)/2, then clip into [lower, upper] (or, ``clip=False``, check), −0 → +0.

    With ``clip=True`` (every default path) the work does not depend on the data: clip first (a NaN stays
    NaN), then overwrite the NaN with the midpoint under a mask, always: the same passes whether the data
    hold no NaN or many (the midpoint is inside the bounds, so clipping before imputing gives the same
    records). ``clip=False`` (trusted data only) imputes, then refuses records outside the bounds.
    """
    if check_bool("clip", clip):
        out: NDArray[np.float64] = np.clip(x, lower, upper)
        out += 0.0  # −0 + 0 = +0 (round to nearest); in place on the fresh array
        np.copyto(out, 0.5 * lower + 0.5 * upper, where=np.isnan(out))
        return out
    return clip_or_check(impute_missing(x, 0.5 * lower + 0.5 * upper), lower, upper, clip=False, name=name)


def check_bool(name: str, value: Any) -> bool:
    """A flag (``clip``, ``clamp``, ...): True or False (numpy booleans too), nothing else."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float]:
    """Public bounds (lower, upper): two finite reals with lower < upper."""
    try:
        lower, upper = bounds
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a pair (lower, upper); got {bounds!r}") from err
    lo = _as_float(f"{name}[0] (lower)", lower)
    hi = _as_float(f"{name}[1] (upper)", upper)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name} must be finite; got ({lower!r}, {upper!r})")
    if not lo < hi:
        raise ValueError(f"{name} must satisfy lower < upper; got ({lower!r}, {upper!r})")
    return lo, hi


def clip_or_check(
    x: NDArray[np.float64], lower: float, upper: float, *, clip: bool, name: str = "x"
) -> NDArray[np.float64]:
    """Clip ``x`` to [lower, upper] (``clip=True``: ±inf too, nothing reported), else refuse data outside
    them (``clip=False``, for trusted data: the error carries no count, but raising depends on the data).

    NaN is neither clipped nor refused here: :func:`impute_missing` handles it first. −0 becomes +0 (one
    zero, so that no order statistic, window or release carries a record's sign of zero).
    """
    if check_bool("clip", clip):
        out: NDArray[np.float64] = np.clip(x, lower, upper)
        out += 0.0  # −0 + 0 = +0 (round to nearest); in place on the fresh array
        return out
    if np.any((x < lower) | (x > upper)):
        raise ValueError(
            f"{name} has value(s) outside the declared bounds [{lower:g}, {upper:g}]. clip=False is for "
            "trusted data only (this error itself depends on the data); use clip=True (the default) to "
            "clip records into the bounds as part of the mechanism"
        )
    folded: NDArray[np.float64] = x + 0.0  # −0 → +0, and never the caller's array itself
    return folded
