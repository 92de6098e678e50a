"""An adversarial audit of the public entry points, the way an outside reviewer probes a DP library.

Three promises (docs/central.md, "Data policy"; the module docstring of :mod:`smoothdp.validation`):

1. **Data is never a reason to fail.** NaN, ±inf, values far outside the bounds, ties, one record, every
   numeric kind of input: no exception, no warning, a finite release inside the declared bounds (default
   ``clamp=True``), and a Release whose public fields (keys, types, texts, warnings) are the same for two
   data sets that differ in one record.
2. **Bad parameters get a clear error naming the parameter.**
3. **Seeds reproduce, and a seeded release says it is a simulation** (an unseeded one does not).

Every expected value here is written down from the documented policy, never computed by the code under
test. The cases marked "regression" failed before the fix named next to them.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import smoothdp as sd
from smoothdp import geo
from smoothdp.cli import SIMULATION_BANNER, main
from smoothdp.release import SIMULATION_NOTE, Release

B = (0.0, 100.0)
LO, HI = B

# ------------------------------------------------------------------------------------------ entry points
#: name -> f(x, **overrides) with the declared bounds B (or "private" where the name says so).
ENTRY: dict[str, Callable[..., Release]] = {
    "median": lambda x, **k: sd.median(x, **{"epsilon": 1.0, "bounds": B, **k}),
    "median_exponential": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "exponential", **k}
    ),
    "median_exponential_continuum": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "exponential", "lattice": None, **k}
    ),
    "median_smooth": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "smooth_sensitivity", **k}
    ),
    "median_smooth_float": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "smooth_sensitivity", "numerics": "float", **k}
    ),
    "median_student_t": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "noise": "student_t", **k}
    ),
    "median_laplace": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "noise": "laplace", "delta": 1e-6, **k}
    ),
    "median_candidates": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "candidates": [0.0, 1.0, 2.0, 3.0, 50.0, 100.0], **k}
    ),
    "quantile_0.9": lambda x, **k: sd.quantile(x, 0.9, **{"epsilon": 1.0, "bounds": B, **k}),
    "quantiles": lambda x, **k: sd.quantiles(x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": B, **k}),
    "quantiles_joint_exp": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": B, "method": "joint_exp", **k}
    ),
    "quantiles_recursive": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": B, "method": "recursive", **k}
    ),
    "quantiles_exponential": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": B, "method": "exponential", **k}
    ),
    "quantiles_smooth": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": B, "method": "smooth_sensitivity", **k}
    ),
    "mean": lambda x, **k: sd.mean(x, **{"epsilon": 1.0, "bounds": B, **k}),
    "mean_private_range": lambda x, **k: sd.mean(
        x, **{"epsilon": 1.0, "bounds": B, "method": "private_range", **k}
    ),
    "mean_add_remove": lambda x, **k: sd.mean(
        x, **{"epsilon": 1.0, "bounds": B, "neighbours": "add_remove", **k}
    ),
    "var": lambda x, **k: sd.var(x, **{"epsilon": 1.0, "bounds": B, "ddof": 0, **k}),
    "std_private_range": lambda x, **k: sd.std(
        x, **{"epsilon": 1.0, "bounds": B, "method": "private_range", "ddof": 0, **k}
    ),
    "var_add_remove": lambda x, **k: sd.var(
        x, **{"epsilon": 1.0, "bounds": B, "neighbours": "add_remove", **k}
    ),
    "trimmed_mean": lambda x, **k: sd.trimmed_mean(x, 0.1, **{"epsilon": 1.0, "bounds": B, **k}),
    "private_clip_mean": lambda x, **k: sd.private_clip_mean(x, **{"epsilon": 1.0, "bounds": B, **k}),
    "median_private_bounds": lambda x, **k: sd.median(x, **{"epsilon": 1.0, "bounds": "private", **k}),
    "median_no_bounds": lambda x, **k: sd.median(x, **{"epsilon": 1.0, "bounds": None, **k}),
    "median_no_bounds_scale_free": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": None, "method": "exponential", **k}
    ),
    "median_no_bounds_range": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": None, "method": "piecewise_laplace", **k}
    ),
    "median_inverse_sensitivity": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "inverse_sensitivity", **k}
    ),
    "median_piecewise_laplace": lambda x, **k: sd.median(
        x, **{"epsilon": 1.0, "bounds": B, "method": "piecewise_laplace", **k}
    ),
    "quantiles_no_bounds": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": None, **k}
    ),
    "mean_no_bounds": lambda x, **k: sd.mean(x, **{"epsilon": 1.0, "bounds": None, **k}),
    "var_no_bounds": lambda x, **k: sd.var(x, **{"epsilon": 1.0, "bounds": None, "ddof": 0, **k}),
    "mean_no_bounds_add_remove": lambda x, **k: sd.mean(
        x, **{"epsilon": 1.0, "bounds": None, "neighbours": "add_remove", **k}
    ),
    "std_no_bounds_add_remove": lambda x, **k: sd.std(
        x, **{"epsilon": 1.0, "bounds": None, "neighbours": "add_remove", **k}
    ),
    "quantiles_private_bounds": lambda x, **k: sd.quantiles(
        x, [0.1, 0.5, 0.9], **{"epsilon": 1.0, "bounds": "private", **k}
    ),
}
#: Entry points whose bounds are found privately: their release has no declared bounds to stay in.
PRIVATE_BOUNDS = {
    "median_private_bounds",
    "quantiles_private_bounds",
    "median_no_bounds",
    "median_no_bounds_scale_free",
    "median_no_bounds_range",
    "quantiles_no_bounds",
    "mean_no_bounds",
    "var_no_bounds",
    "mean_no_bounds_add_remove",
    "std_no_bounds_add_remove",
}
#: Entry points whose statistic is defined on empty data (documented: n public, or the add/remove mean and
#: variance).
EMPTY_OK = {
    "median",
    "median_exponential",
    "median_exponential_continuum",
    "median_candidates",
    "quantile_0.9",
    "quantiles",
    "quantiles_joint_exp",
    "quantiles_recursive",
    "quantiles_exponential",
    "mean_add_remove",
    "var_add_remove",
    "median_private_bounds",
    "quantiles_private_bounds",
    "median_inverse_sensitivity",
    "median_piecewise_laplace",
    "median_no_bounds",
    "median_no_bounds_scale_free",
    "median_no_bounds_range",
    "quantiles_no_bounds",
    "mean_no_bounds_add_remove",
    "std_no_bounds_add_remove",
}


def _run_quiet(f: Callable[[], Release]) -> tuple[Release, list[str]]:
    """f() with every warning recorded (the test fails on any, see callers)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = f()
    return release, [f"{w.category.__name__}: {w.message}" for w in caught]


#: Where a variance or standard deviation of records in [LO, HI] lies (the data bounds hold the others).
SPREAD_RANGE = {"var": (0.0, (HI - LO) ** 2 / 2), "std": (0.0, (HI - LO) / math.sqrt(2.0))}


def _check_value(name: str, release: Release) -> None:
    value = np.asarray(release.value, dtype=np.float64)
    assert np.all(np.isfinite(value)), (name, value)
    if name not in PRIVATE_BOUNDS:
        lo, hi = SPREAD_RANGE.get(name.split("_")[0], (LO, HI))
        assert np.all((value >= lo) & (value <= hi)), (name, value)
    if name.startswith("quantiles"):
        assert value.shape == (3,)
    else:
        assert value.shape == ()


# ------------------------------------------------------------------------------ 1. data never fails
def _object(values: list[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


DATASETS: dict[str, Any] = {
    "nan_some": [np.nan, np.nan, 1.0, 2.0, 3.0],
    "nan_all": [np.nan] * 7,
    "inf_both": [np.inf, -np.inf, 1.0, 2.0, 3.0],
    "far_outside": [1e308, -1e308, 5.0, 6.0],
    "all_equal": [7.0] * 50,
    "all_equal_at_bound": [100.0] * 9,
    "single": [3.0],
    "single_nan": [np.nan],
    "single_inf": [np.inf],
    "subnormal": [5e-324, 1e-310, 0.0, -5e-324],
    "negative_zero": [-0.0] * 5,
    "int64": np.arange(10, dtype=np.int64),
    "int64_extremes": np.array([2**63 - 1, -(2**63), 5], dtype=np.int64),
    "uint64_max": np.array([2**64 - 1, 3], dtype=np.uint64),
    "bool": np.array([True, False, True]),
    "float32": np.arange(10, dtype=np.float32),
    "float16": np.array([1.0, 65504.0, -65504.0], dtype=np.float16),
    "object_with_none": _object([1.0, 2.5, None]),
    "decimal": [Decimal("1.5"), Decimal("2"), Decimal("1e400")],
    "fraction": [Fraction(1, 3), Fraction(2, 3)],
    "list": [1, 2, 3],
    "tuple": (1.0, 2.0, 3.0),
    # regression: validation._object_to_float raised OverflowError on a Python int beyond the float range
    "python_int_beyond_float": [10**400, -(10**400), 2],
    "fraction_beyond_float": [Fraction(10**400, 3), Fraction(1, 2)],
}


@pytest.mark.parametrize("data", list(DATASETS))
@pytest.mark.parametrize("name", list(ENTRY))
def test_data_never_fails(name: str, data: str) -> None:
    """No exception, no warning, a finite release inside the bounds, whatever the records."""
    release, caught = _run_quiet(lambda: ENTRY[name](DATASETS[data], rng=11))
    assert caught == []
    _check_value(name, release)


def test_pandas_inputs() -> None:
    pd = pytest.importorskip("pandas")
    for x in (
        pd.Series([1.0, np.nan, 3.0]),
        pd.Series([1, None, 3], dtype="Int64"),
        pd.DataFrame({"a": [1.0, 2.0]}),
    ):
        for name in ("median", "quantiles", "mean", "trimmed_mean"):
            release, caught = _run_quiet(lambda x=x, name=name: ENTRY[name](x, rng=3))  # type: ignore[misc]
            assert caught == []
            _check_value(name, release)


@pytest.mark.parametrize("name", list(ENTRY))
def test_large_n(name: str) -> None:
    """n = 10^6 with NaN, ±inf and huge records sprinkled in: fine, and fast (a loose bound)."""
    x = np.random.default_rng(0).uniform(0.0, 100.0, 10**6)
    x[::1000], x[1::1000], x[2::1000] = np.nan, np.inf, -1e308
    if name in ("quantiles", "quantiles_joint_exp", "quantiles_private_bounds", "median_candidates"):
        x = x[: 10**5]  # the joint sampler is O(n·m): keep the whole file fast on a loaded machine
    start = time.perf_counter()
    release, caught = _run_quiet(lambda: ENTRY[name](x, rng=5))
    assert time.perf_counter() - start < 30.0
    assert caught == []
    _check_value(name, release)


@pytest.mark.parametrize("name", sorted(set(ENTRY) - EMPTY_OK))
def test_empty_data_is_a_clear_error(name: str) -> None:
    """Empty data is a parameter error (n public) where the statistic needs a record: a ValueError naming x.

    Regression: the smooth-sensitivity median raised IndexError (Statistic.prepare skipped ``min_size``
    for records prepared by ``as_records`` without it).
    """
    with pytest.raises(ValueError, match=r"^x must hold at least 1 value"):
        ENTRY[name]([], rng=1)


@pytest.mark.parametrize("name", sorted(EMPTY_OK))
def test_empty_data_releases(name: str) -> None:
    """Documented: the exponential-mechanism quantiles (n = 0 public), the add/remove mean (noise around the
    midpoint) and the add/remove variance (noisy sums) release on empty data."""
    release, caught = _run_quiet(lambda: ENTRY[name]([], rng=1))
    assert caught == []
    _check_value(name, release)


@pytest.mark.parametrize("shape", [(), (3, 2), (1, 1)])
@pytest.mark.parametrize(
    "name", ["median", "median_smooth", "quantiles", "mean", "trimmed_mean", "private_clip_mean"]
)
def test_wrong_shape_names_x(name: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"^x must have ndim in \(1,\); got shape"):
        ENTRY[name](np.ones(shape), rng=1)


@pytest.mark.parametrize(
    "kind", [["1", "2"], np.array(["a"]), [1 + 2j], np.array(["2020-01-01"], dtype="datetime64[D]")]
)
def test_non_numbers_are_a_type_error_naming_x(kind: Any) -> None:
    with pytest.raises(TypeError, match=r"^x must"):
        sd.median(kind, epsilon=1.0, bounds=B)


# ------------------------------------------------------------------- 1b. neighbours look the same
_BASE = [float(v) for v in np.random.default_rng(3).uniform(0.0, 100.0, 30)]
NEIGHBOURS: dict[str, list[float]] = {"base": _BASE}
for _label, _record in [
    ("nan", math.nan),
    ("inf", math.inf),
    ("minus_inf", -math.inf),
    ("huge", 1e308),
    ("below", -5.0),
    ("at_upper", 100.0),
    ("negative_zero", -0.0),
    ("subnormal", 5e-324),
    ("duplicate", _BASE[1]),
]:
    NEIGHBOURS[_label] = [_record, *_BASE[1:]]
#: Release details that are private outputs (covered by the guarantee) or functions of them only.
PRIVATE_DETAILS = {
    "bounds",
    "bounds_used",
    "lattice_test",
    "epsilon_float_margin",
    "epsilon_in_weights",
    "clip_range",
    "reverted_to_bounds",
    "direction",  # AboveThreshold's walk (bounds=None): its output
    "steps",
    "stopped",
}


def _public_signature(release: Release, caught: list[str]) -> dict[str, Any]:
    public = release.to_dict()
    public.pop("value")
    details = public.pop("details")
    return {
        **public,
        "value_type": (type(release.value).__name__, np.shape(release.value)),
        "details_types": {k: type(v).__name__ for k, v in release.details.items()},
        "details_public": {k: v for k, v in details.items() if k not in PRIVATE_DETAILS},
        "not_private_kinds": (
            type(release.not_private.smooth_sensitivity).__name__,
            type(release.not_private.noise_scale).__name__,
            sorted(release.not_private.extra),
        ),
        "warnings": caught,
        "repr_fields": re.sub(r"value=[^,]*(,|$)", "", repr(release)).count("="),
    }


@pytest.mark.parametrize("name", list(ENTRY))
def test_neighbours_share_every_public_field(name: str) -> None:
    """Two data sets differing in one record (NaN, ±inf, huge, out of bounds, -0, a tie): the same keys,
    types, texts and warnings; only the private value (and documented private details) may differ."""
    reference = _public_signature(*_run_quiet(lambda: ENTRY[name](NEIGHBOURS["base"], rng=2)))
    for label, x in NEIGHBOURS.items():
        signature = _public_signature(*_run_quiet(lambda x=x: ENTRY[name](x, rng=2)))  # type: ignore[misc]
        assert signature == reference, label


# ----------------------------------------------------------------------- 2. bad parameters
SINGLE = ["median", "median_smooth", "median_exponential", "quantile_0.9", "mean", "trimmed_mean"]
ALL_DECLARED = [*SINGLE, "quantiles", "quantiles_joint_exp", "quantiles_recursive", "private_clip_mean"]
#: Entry points for which ``bounds=None`` is not a bad parameter but the no-bounds mechanisms.
NO_BOUNDS_OK = {
    "mean",
    "median",
    "median_smooth",
    "median_exponential",
    "quantile_0.9",
    "quantiles",
    "quantiles_joint_exp",
    "quantiles_recursive",
}

BAD_COMMON: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"epsilon": 0.0}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": -1.0}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": math.nan}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": math.inf}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": 1e-300}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": 5e-324}, ValueError, r"^epsilon must be in \[2\^-64, inf\)"),
    ({"epsilon": "1"}, TypeError, r"^epsilon must be a real number"),
    ({"epsilon": None}, TypeError, r"^epsilon must be a real number"),
    ({"epsilon": True}, TypeError, r"^epsilon must be a real number"),
    ({"bounds": (10.0, 0.0)}, ValueError, r"^bounds.*lower < upper"),
    ({"bounds": (1.0, 1.0)}, ValueError, r"^bounds.*lower < upper"),
    ({"bounds": (math.nan, 1.0)}, ValueError, r"^bounds.*finite"),
    ({"bounds": (0.0, math.inf)}, ValueError, r"^bounds.*finite"),
    ({"bounds": (0.0,)}, TypeError, r"^bounds.*pair"),
    ({"bounds": (0.0, 1.0, 2.0)}, TypeError, r"^bounds.*pair"),
    ({"bounds": None}, TypeError, r"^bounds.*pair"),
    ({"bounds": ("0", "1")}, TypeError, r"^bounds.*real number"),
    # regression: "exponent must be an integer in [-1000, 1024]" / "magnitude must be a finite positive
    # number" (OutputGrid.for_bounds did not name the bounds)
    ({"bounds": (0.0, 5e-324)}, ValueError, r"^bounds"),
    ({"bounds": (-1e308, 1e308)}, ValueError, r"^bounds"),
    ({"rng": "seed"}, TypeError, r"^rng must be"),
    ({"rng": 1.5}, TypeError, r"^rng must be"),
    ({"rng": np.random.RandomState(0)}, TypeError, r"^rng must be"),
    ({"rng": -1}, ValueError, r"^seed must be a non-negative int"),
    ({"numerics": "fast"}, ValueError, r"^numerics must be one of"),
    ({"clip": 1}, TypeError, r"^clip must be True or False"),
    ({"clamp": "no"}, TypeError, r"^clamp must be True or False"),
    ({"accountant": "x"}, TypeError, r"^accountant must be"),
]


@pytest.mark.parametrize(
    ("overrides", "error", "pattern"), BAD_COMMON, ids=[str(c[0])[:40] for c in BAD_COMMON]
)
@pytest.mark.parametrize("name", ALL_DECLARED)
def test_bad_common_parameter(
    name: str, overrides: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    """Regression (clamp): ``median(..., method="smooth_sensitivity", clamp="no")`` was accepted (and
    clamped, ``bool("no")`` being True); _SmoothQuantile now checks it like every other path."""
    if "bounds" in overrides and overrides["bounds"] is None and name in NO_BOUNDS_OK:
        pytest.skip("bounds=None is valid here: no bounds at all (docs/quantiles.md#no-bounds)")
    with pytest.raises(error, match=pattern):
        ENTRY[name]([1.0, 2.0, 3.0, 4.0, 5.0], **overrides)


BAD_SPECIFIC: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("q<0", lambda: sd.quantile([1.0], -0.1, epsilon=1.0, bounds=B), ValueError, r"^q must be in \[0, 1\]"),
    ("q>1", lambda: sd.quantile([1.0], 1.1, epsilon=1.0, bounds=B), ValueError, r"^q must be in \[0, 1\]"),
    ("q nan", lambda: sd.quantile([1.0], math.nan, epsilon=1.0, bounds=B), ValueError, r"^q must be in"),
    ("q str", lambda: sd.quantile([1.0], "0.5", epsilon=1.0, bounds=B), TypeError, r"^q must be a real"),  # type: ignore[arg-type]
    (
        "qs empty",
        lambda: sd.quantiles([1.0], [], epsilon=1.0, bounds=B),
        ValueError,
        r"^qs must be a non-empty",
    ),
    (
        "qs >1",
        lambda: sd.quantiles([1.0], [0.5, 1.5], epsilon=1.0, bounds=B),
        ValueError,
        r"^qs must lie in \[0, 1\]",
    ),
    (
        "qs nan",
        lambda: sd.quantiles([1.0], [math.nan], epsilon=1.0, bounds=B),
        ValueError,
        r"^qs must lie in",
    ),
    ("qs 2-D", lambda: sd.quantiles([1.0], [[0.5]], epsilon=1.0, bounds=B), ValueError, r"^qs must be"),
    ("qs str", lambda: sd.quantiles([1.0], ["a"], epsilon=1.0, bounds=B), TypeError, r"^qs must be"),
    (
        "delta<0",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, noise="laplace", delta=-0.1),
        ValueError,
        r"^delta must be in \[0, 1\)",
    ),
    (
        "delta=1",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, noise="laplace", delta=1.0),
        ValueError,
        r"^delta must be in \[0, 1\)",
    ),
    (
        "delta nan",
        lambda: sd.mean([1.0], epsilon=1.0, bounds=B, noise="laplace", delta=math.nan),
        ValueError,
        r"^delta must be in",
    ),
    (
        "delta=0 laplace",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, noise="laplace"),
        ValueError,
        r"^delta must be in \(0, 1\)",
    ),
    (
        "delta pure",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, delta=0.5),
        ValueError,
        r"^delta applies only",
    ),
    (
        "method",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, method="bogus"),
        ValueError,
        r"^method must be one of",
    ),
    (
        "method None",
        lambda: sd.quantiles([1.0], [0.5], epsilon=1.0, bounds=B, method=None),  # type: ignore[arg-type]
        ValueError,
        r"^method must be one of",
    ),
    (
        "method multi",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, method="joint_exp"),
        ValueError,
        r"^method must be one of",
    ),
    (
        "bounds str",
        lambda: sd.median([1.0], epsilon=1.0, bounds="auto"),
        ValueError,
        r"^bounds must be \(lower, upper\) or 'private'",
    ),
    (
        "noise",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, noise="gauss"),
        ValueError,
        r"^noise must be one of",
    ),
    ("beta", lambda: sd.median([1.0], epsilon=1.0, bounds=B, beta=5.0), ValueError, r"^beta must be in"),
    ("unknown kw", lambda: sd.median([1.0], epsilon=1.0, bounds=B, foo=1), TypeError, r"foo"),
    ("unknown kw mean", lambda: sd.mean([1.0], epsilon=1.0, bounds=B, foo=1), TypeError, r"foo"),
    (
        "unknown kw quantiles",
        lambda: sd.quantiles([1.0], [0.5], epsilon=1.0, bounds=B, foo=1),  # type: ignore[call-arg]
        TypeError,
        r"foo",
    ),
    (
        "kw exponential",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, method="exponential", beta=0.1),
        TypeError,
        r"method='exponential' takes no",
    ),
    (
        "candidates smooth",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, method="smooth_sensitivity", candidates=[1.0]),
        TypeError,
        r"^candidates applies",
    ),
    (
        "candidates empty",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, candidates=[]),
        ValueError,
        r"^candidates must be",
    ),
    (
        "candidates nan",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, candidates=[1.0, math.nan]),
        ValueError,
        r"^candidates must be",
    ),
    (
        "candidates outside",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, candidates=[-5.0, 20.0]),
        ValueError,
        r"^candidates must lie in the bounds",
    ),
    (
        "lattice 0",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, lattice=0.0),
        ValueError,
        r"^lattice must be",
    ),
    (
        "lattice str",
        lambda: sd.quantiles([1.0], [0.5], epsilon=1.0, bounds=B, lattice="1"),
        ValueError,
        r"^lattice must be",
    ),
    (
        "lattice bool",
        lambda: sd.quantiles([1.0], [0.5], epsilon=1.0, bounds=B, lattice=True),  # type: ignore[arg-type]
        TypeError,
        r"^lattice must be",
    ),
    (
        "trim 0.5",
        lambda: sd.trimmed_mean([1.0], 0.5, epsilon=1.0, bounds=B),
        ValueError,
        r"^trim must be in \[0, 0.5\)",
    ),
    (
        "trim -1",
        lambda: sd.trimmed_mean([1.0], -1, epsilon=1.0, bounds=B),
        ValueError,
        r"^trim must be an integer",
    ),
    ("trim too big", lambda: sd.trimmed_mean([1.0] * 5, 3, epsilon=1.0, bounds=B), ValueError, r"^trim=3"),
    (
        "scale 0",
        lambda: sd.median([1.0], epsilon=1.0, bounds="private", scale=0.0),
        ValueError,
        r"^scale must be in \(0, inf\)",
    ),
    # regression: math.ldexp raised OverflowError ("math range error") before PrivateRange's own check
    (
        "scale huge",
        lambda: sd.median([1.0], epsilon=1.0, bounds="private", scale=1e308),
        ValueError,
        r"^scale",
    ),
    (
        "pcm center",
        lambda: sd.private_clip_mean([20.0], epsilon=1.0, bounds=(18.0, 100.0)),
        ValueError,
        r"^center must be in",
    ),
    (
        "engine",
        lambda: sd.median([1.0], epsilon=1.0, bounds=B, engine="spark"),
        ValueError,
        r"^engine must be",
    ),
]


@pytest.mark.parametrize(
    ("label", "call", "error", "pattern"), BAD_SPECIFIC, ids=[c[0] for c in BAD_SPECIFIC]
)
def test_bad_specific_parameter(
    label: str, call: Callable[[], Any], error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        call()


def test_documented_quantile_lists_are_accepted() -> None:
    """Documented (quantiles' docstring): any order, duplicates allowed; the result follows qs."""
    release = sd.quantiles([1.0, 2.0, 3.0], [0.9, 0.1, 0.9], epsilon=1.0, bounds=B, rng=1)
    value = np.asarray(release.value)
    assert value.shape == (3,) and value[0] == value[2]


def _run_python(code: str, *, timeout: float) -> str:
    """Run ``code`` in a fresh interpreter (a hang or a memory blow-up fails the test instead of the
    suite); its stdout, after asserting it exited cleanly."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_huge_epsilon_completes() -> None:
    """Regression: ε = 10^12 made the exponential-mechanism median build 2^(−10^12) as an exact rational
    (quantiles.window: every window weight was turned into a Fraction to keep the outside regions' two).
    In a subprocess under a 3 GB address-space limit, so that a regression fails instead of exhausting
    the machine's memory."""
    code = (
        "import resource, smoothdp as sd\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "limit = 3 << 30 if hard == resource.RLIM_INFINITY else min(3 << 30, hard)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, hard))\n"
        "for method in ('exponential', 'auto'):\n"
        "    r = sd.median([1.0, 2.0, 3.0, 4.0, 5.0], epsilon=1e12, bounds=(0, 10), method=method, rng=1)\n"
        "    print(float(r))\n"
        "try:\n"
        "    sd.private_clip_mean([1.0, 2.0, 3.0], epsilon=1e300, bounds=(0, 10), rng=1)\n"
        "except ValueError as err:\n"
        "    print(repr(str(err)))\n"
    )
    lines = _run_python(code, timeout=120).splitlines()
    values = [float(v) for v in lines[:2]]
    # At ε = 10^12 the mechanism puts mass e^{-10^12} outside the gaps next to the median, x_(3) = 3.
    assert 2.0 <= values[0] <= 4.0 and 2.0 <= values[1] <= 4.0
    # ε = 10^300: no longer "coverage must be in (0, 1)" (a parameter the user never passed, the automatic
    # coverage rounding to 1.0) but the allowed range of epsilon·(n + 1) for the exact sampler.
    assert len(lines) == 3 and "epsilon" in lines[2] and "2^50" in lines[2] and "coverage" not in lines[2]


def test_tie_run_at_the_quantile_does_not_hang() -> None:
    """Regression: a run of equal records (off the lattice) covering the exponential mechanism's window of
    ranks left the window without an outcome of positive weight; every draw went to the outside regions,
    whose rejection loop (reading all the data each round) almost never accepted: a data-dependent hang
    (quantiles.window.sample_em_windowed). In a subprocess with a timeout, so that a regression fails."""
    code = (
        "import numpy as np, smoothdp as sd\n"
        "x = np.random.default_rng(0).uniform(0.0, 100.0, 10_000); x[::10] = 50.5\n"
        "print(float(sd.median(x, epsilon=1.0, bounds=(0.0, 100.0), rng=5)))\n"
        "y = np.random.default_rng(1).uniform(0.0, 100.0, 10**6); y[::1000] = np.nan  # imputed: 50.0\n"
        "print(float(sd.median(y, epsilon=1.0, bounds=(0.0, 100.0), method='exponential',\n"
        "                      lattice=None, rng=5)))\n"
        "z = np.full(2_000, 50.5); z[:700] = np.linspace(0.0, 40.0, 700)\n"
        "z[-700:] = np.linspace(60.0, 100.0, 700)\n"
        "print(float(sd.quantile(z, 0.5, epsilon=1.0, bounds=(0.0, 100.0), method='exponential', rng=5)))\n"
    )
    first, second, third = (float(v) for v in _run_python(code, timeout=90).split())
    # The medians: x_(5000) = 50.5 inside a run of ~1000 ties; y's 1000 imputed 50.0 sit at its median; z's
    # run of 600 ties at 50.5 covers ranks 701..1300 around rank 1000. ε = 1 keeps the release within a few
    # records' ranks of them: the records next to the runs are within 1 of them.
    assert abs(first - 50.5) < 1.0 and abs(second - 50.0) < 1.0 and 40.0 <= third <= 60.0


def test_records_packed_in_subnormal_gaps_do_not_hang() -> None:
    """Regression: 1000 records 5e-324 apart in bounds (0, 1e10). The exact law sits on the wide gap above
    the data (ln 1e10 − 250 against −744 for every gap inside), but the right region's bound exceeded its
    weight by about e^183, so the rejection rounds of the windowed sampler never ended. Now one rejected
    round hands over to the whole-data sampler (same law)."""
    code = (
        "import numpy as np, smoothdp as sd\n"
        "x = 5e-324 * np.arange(1000.0)\n"
        "for seed in range(3):\n"
        "    print(float(sd.median(x, epsilon=1.0, bounds=(0.0, 1e10), rng=seed)))\n"
    )
    values = [float(v) for v in _run_python(code, timeout=90).split()]
    assert len(values) == 3 and all(5e-321 < v <= 1e10 for v in values)


# ------------------------------------------------------------ 3. seeds and simulation labels
@pytest.mark.parametrize("name", list(ENTRY))
def test_seed_reproduces_and_labels_simulation(name: str) -> None:
    x = [float(v) for v in np.random.default_rng(0).uniform(0.0, 100.0, 200)]
    f = ENTRY[name]
    a, b, other = f(x, rng=7), f(x, rng=7), f(x, rng=8)
    assert np.array_equal(np.asarray(a.value), np.asarray(b.value))
    if name != "median_candidates":  # a few public candidates: two seeds may well give the same one
        assert not np.array_equal(np.asarray(a.value), np.asarray(other.value))
    simulated = [a, f(x, rng=np.random.default_rng(3)), f(x, rng=sd.default_rng(5))]
    secure = [f(x), f(x, rng=sd.default_rng())]
    for release in simulated:
        assert release.is_simulation
        assert SIMULATION_NOTE in release.guarantee_text and SIMULATION_NOTE in str(release)
        assert release.to_dict()["is_simulation"] is True
    for release in secure:
        assert not release.is_simulation
        assert "SIMULATION" not in release.guarantee_text and "SIMULATION" not in str(release)
        assert release.to_dict()["is_simulation"] is False
    assert a.guarantee == secure[0].guarantee  # the same budget either way


# ---------------------------------------------------------------------------------------- geo
GEO_QUERIES: dict[str, Callable[[], Any]] = {
    "soft": lambda: geo.SoftThreshold(50.0, 10.0),
    "soft_grid": lambda: geo.SoftThreshold(np.array([10.0, 50.0, 90.0]), 10.0),
    "range": lambda: geo.BoundedRange((20.0, 60.0), 10.0),
    "kde": lambda: geo.GaussianKDE(50.0, 5.0),
    "kde_plane": lambda: geo.GaussianKDE([0.0, 0.0], 1.0),
    "two_way": lambda: geo.TwoWayThreshold([[0.0, 0.0]], 1.0),
}
GEO_MECHANISMS: dict[str, Callable[[Any], Any]] = {
    "smooth": lambda q: geo.SmoothSensitivityMechanism(q, epsilon=1.0),
    "smooth_t": lambda q: geo.SmoothSensitivityMechanism(q, epsilon=1.0, noise="student_t"),
    "smooth_laplace": lambda q: geo.SmoothSensitivityMechanism(q, epsilon=1.0, noise="laplace", delta=1e-6),
    "smooth_float": lambda q: geo.SmoothSensitivityMechanism(q, epsilon=1.0, numerics="float"),
    "global": lambda q: geo.GlobalLipschitz(q, epsilon=1.0),
    "global_float": lambda q: geo.GlobalLipschitz(q, epsilon=1.0, numerics="float"),
    "local_dp": lambda q: geo.LocalDP(q, epsilon=1.0),
    "a_priori": lambda q: geo.NoiseAPriori(q, epsilon=1.0),
}
GEO_LINE: dict[str, Any] = {
    "nan": [np.nan, 1.0, 2.0],
    "inf": [np.inf, -np.inf, 3.0],
    "huge": [1e308, -1e308],
    "subnormal": [5e-324, -0.0],
    "int": np.arange(5),
    "bool": [True, False],
    "float16": np.arange(3, dtype=np.float16),
    "object": _object([1.0, None]),
    "one_user_scalar": np.array(
        4.0
    ),  # regression: GlobalLipschitz/LocalDP raised "return arrays must be of ArrayType"
    "python_int_beyond_float": [10**400, 1],  # regression: OverflowError
}
GEO_PLANE: dict[str, Any] = {
    "nan": [[np.nan, 1.0], [2.0, np.nan]],
    "inf": [[np.inf, -np.inf], [3.0, 1.0]],
    "huge": [[1e308, -1e308]],
    "int": np.ones((3, 2), dtype=int),
    "one_user_point": np.array([1.0, 2.0]),  # regression (GlobalLipschitz, LocalDP on the plane KDE)
    "python_int_beyond_float": [[10**400, 1]],
}


@pytest.mark.parametrize("mechanism", list(GEO_MECHANISMS))
@pytest.mark.parametrize("query", list(GEO_QUERIES))
def test_geo_data_never_fails(query: str, mechanism: str) -> None:
    q = GEO_QUERIES[query]()
    m = GEO_MECHANISMS[mechanism](q)
    data = GEO_PLANE if q.dimension == 2 else GEO_LINE
    for label, x in data.items():
        release, caught = _run_quiet(lambda x=x: m.release(x, rng=4))  # type: ignore[misc]
        assert caught == [], label
        reports = np.asarray(release.value)
        if mechanism == "a_priori":  # one noisy location answers every query (documented): shape of x
            assert reports.shape == np.shape(x), label
        else:
            users = np.shape(x)[:-1] if q.dimension == 2 else np.shape(x)
            assert reports.shape == q.param_shape + tuple(users), label
        assert np.all(np.isfinite(reports)), label
        assert np.array_equal(m.privatize(x, rng=4), reports), label  # one entry point, one answer
        estimate = m.estimate(release)
        assert np.all(np.isfinite(estimate.mean)), label
        assert release.is_simulation and SIMULATION_NOTE in release.guarantee_text
    secure = m.release(next(iter(data.values())))
    assert not secure.is_simulation and "SIMULATION" not in secure.guarantee_text


GEO_BAD: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "epsilon 0",
        lambda: geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=0.0),
        ValueError,
        r"^epsilon",
    ),
    (
        "epsilon nan",
        lambda: geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=math.nan),
        ValueError,
        r"^epsilon",
    ),
    ("epsilon str", lambda: geo.LocalDP(geo.SoftThreshold(0.0, 1.0), epsilon="1"), TypeError, r"^epsilon"),  # type: ignore[arg-type]
    (
        "delta",
        lambda: geo.SmoothSensitivityMechanism(
            geo.SoftThreshold(0.0, 1.0), epsilon=1.0, noise="laplace", delta=1.5
        ),
        ValueError,
        r"^delta",
    ),
    (
        "noise",
        lambda: geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=1.0, noise="gauss"),
        ValueError,
        r"^noise",
    ),
    (
        "unknown kw",
        lambda: geo.SmoothSensitivityMechanism(geo.SoftThreshold(0.0, 1.0), epsilon=1.0, foo=1),
        TypeError,
        r"foo",
    ),
    ("query", lambda: geo.SmoothSensitivityMechanism("q", epsilon=1.0), TypeError, r"^query must be"),  # type: ignore[arg-type]
    (
        "variant",
        lambda: geo.NoiseAPriori(geo.SoftThreshold(0.0, 1.0), epsilon=1.0, variant="x"),
        ValueError,
        r"^variant",
    ),
    ("width 0", lambda: geo.SoftThreshold(0.0, 0.0), ValueError, r"^width must be in \[2\^-500, inf\)"),
    # a subnormal width made the Lipschitz constant 1/θ infinite: an error that did not name the width
    ("width 1e-320", lambda: geo.SoftThreshold(0.0, 1e-320), ValueError, r"^width must be in \[2\^-500"),
    ("threshold nan", lambda: geo.SoftThreshold(math.nan, 1.0), ValueError, r"^threshold must be finite"),
    ("range reversed", lambda: geo.BoundedRange((60.0, 20.0), 10.0), ValueError, r"upper - lower"),
    ("bandwidth inf", lambda: geo.GaussianKDE(0.0, math.inf), ValueError, r"^bandwidth"),
    ("thresholds shape", lambda: geo.TwoWayThreshold([0.0], 1.0), ValueError, r"^thresholds must have shape"),
    (
        "rng",
        lambda: geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=1.0).release([1.0], rng="x"),  # type: ignore[arg-type]
        TypeError,
        r"^rng must be",
    ),
    (
        "no users",
        lambda: geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=1.0).release([], rng=1),
        ValueError,
        r"^x must hold at least 1 point",
    ),
    (
        "plane shape",
        lambda: geo.LocalDP(geo.GaussianKDE([0.0, 0.0], 1.0), epsilon=1.0).release([1.0, 2.0, 3.0], rng=1),
        ValueError,
        r"^x must have shape \(\.\.\., 2\)",
    ),
    (
        "reports nan",
        lambda: geo.GlobalLipschitz(geo.SoftThreshold(0.0, 1.0), epsilon=1.0).estimate([math.nan]),
        ValueError,
        r"^reports must be finite",
    ),
]


@pytest.mark.parametrize(("label", "call", "error", "pattern"), GEO_BAD, ids=[c[0] for c in GEO_BAD])
def test_geo_bad_parameter(label: str, call: Callable[[], Any], error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        call()


def test_geo_seed_reproduces() -> None:
    x = np.linspace(0.0, 100.0, 50)
    for make in GEO_MECHANISMS.values():
        m = make(geo.SoftThreshold(50.0, 10.0))
        a, b, c = m.privatize(x, rng=9), m.privatize(x, rng=9), m.privatize(x, rng=10)
        assert np.array_equal(a, b) and not np.array_equal(a, c)


# ---------------------------------------------------------------------------------------- CLI
def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # pragma: no cover - main returns its status
            code = int(stop.code or 0)
    return code, out.getvalue(), err.getvalue()


_CSV_BASE = [23, 45, 31, 60, 52, 38, 29, 41, 47, 55]
CSV_CELLS = ["NA", "", "inf", "-inf", "1e400", "abc", "-5", "nan", " ", "1" + "0" * 400, "-0.0"]
CLI_RELEASES = [
    ["median"],
    ["median", "--method", "exponential"],
    ["median", "--method", "smooth_sensitivity"],
    ["median", "--noise", "laplace", "--delta", "1e-6"],
    ["quantile", "--q", "0.9"],
    ["quantiles", "--q", "0.1", "0.5", "0.9"],
    ["quantiles", "--q", "0.5", "--method", "recursive"],
    ["mean"],
    ["trimmed-mean", "--trim", "0.1"],
]


def _cli_signature(out: str, as_json: bool) -> Any:
    if as_json:
        payload = json.loads(out)
        payload.pop("value")
        payload["details"] = sorted(payload["details"])
        return payload
    text = re.sub(r"value:.*", "value:", out)
    return re.sub(r"(noise scale:|noise std:|smooth sensitivity:)\s*\S+", r"\1", text)


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("release", CLI_RELEASES, ids=[" ".join(r) for r in CLI_RELEASES])
def test_cli_neighbouring_files_print_the_same(tmp_path: Any, release: list[str], as_json: bool) -> None:
    """One cell changed to a missing, unparseable, infinite or huge value: exit 0 and the same output but
    the value and the data holder's not-private numbers."""
    statistic, *options = release
    outputs = []
    for cell in [str(_CSV_BASE[0]), *CSV_CELLS]:
        path = tmp_path / "d.csv"
        path.write_text("age\n" + "\n".join([cell, *map(str, _CSV_BASE[1:])]) + "\n")
        argv = ["release", statistic, str(path), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
        code, out, err = _cli([*argv, *options, "--seed", "3", *(["--json"] if as_json else [])])
        assert code == 0, (cell, err)
        outputs.append((_cli_signature(out, as_json), err))
        if not as_json:
            assert out.startswith(SIMULATION_BANNER)
    assert all(o == outputs[0] for o in outputs), [i for i, o in enumerate(outputs) if o != outputs[0]]


@pytest.mark.parametrize("bounds", [["-1e3", "1e3"], ["-1E+3", "5"], ["-.5", "5"], ["-5", "5"]])
def test_cli_negative_bounds_in_any_notation(tmp_path: Any, bounds: list[str]) -> None:
    """Regression: argparse took ``-1e3`` for an option ("argument --bounds: expected 2 arguments")."""
    path = tmp_path / "d.csv"
    path.write_text("x\n-3\n1\n2\n")
    code, out, err = _cli(
        [
            "release",
            "median",
            str(path),
            "--column",
            "x",
            "--epsilon",
            "1",
            "--bounds",
            *bounds,
            "--seed",
            "1",
            "--json",
        ]
    )
    assert code == 0, err
    assert json.loads(out)["details"]["bounds"] == [float(bounds[0]), float(bounds[1])]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--epsilon", "0", "--bounds", "0", "1"], "--epsilon"),
        (["--epsilon", "nan", "--bounds", "0", "1"], "--epsilon"),
        (["--epsilon", "1", "--bounds", "1", "0"], "--bounds"),
        (["--epsilon", "1", "--bounds", "nan", "1"], "--bounds"),
        (["--epsilon", "1", "--bounds", "-inf", "inf"], "bounds"),
        (["--epsilon", "1", "--bounds", "-1e308", "1e308"], "bounds"),
        (["--epsilon", "1", "--bounds", "0", "1e-320"], "bounds"),
        (["--epsilon", "1"], "--bounds"),
        (["--epsilon", "1", "--bounds", "0", "1", "--noise", "laplace", "--delta", "2"], "delta"),
        (["--epsilon", "1", "--bounds", "0", "1", "--seed", "-1"], "--seed"),
        (["--epsilon", "1", "--bounds", "0", "1", "--method", "bogus"], "--method"),
        (["--epsilon", "1", "--bounds", "0", "1", "--foo"], "--foo"),
    ],
)
def test_cli_bad_parameters(tmp_path: Any, options: list[str], fragment: str) -> None:
    path = tmp_path / "d.csv"
    path.write_text("age\n1\n2\n")
    code, out, err = _cli(["release", "median", str(path), "--column", "age", *options])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smoothdp: error: ") and fragment in lines[0], err


def test_cli_unseeded_release_is_not_labelled_a_simulation(tmp_path: Any) -> None:
    path = tmp_path / "d.csv"
    path.write_text("age\n1\n2\n3\n")
    argv = ["release", "median", str(path), "--column", "age", "--epsilon", "1", "--bounds", "0", "10"]
    code, out, err = _cli(argv)
    assert code == 0 and "NOT PRIVATE (simulation" not in out + err and "SIMULATION" not in out
    code, out, err = _cli([*argv, "--json"])
    assert code == 0 and json.loads(out)["simulation"] is False and json.loads(out)["is_simulation"] is False
    code, out, err = _cli([*argv, "--seed", "1", "--json"])
    assert code == 0 and json.loads(out)["simulation"] is True and err.startswith(SIMULATION_BANNER)
