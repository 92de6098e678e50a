"""Run the cells of the table (data set × ε × method) and summarise them.

Per trial the error is the mean over the released quantiles of |released − true| (one quantile: just
|released − true|); a release that fails or is not finite counts as an infinite error. Per cell: the
median and the 90th percentile of that error over the trials, the fraction of releases with a value
outside the declared bounds, and the median wall time of one release (``prepare`` timed apart).
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import numpy as np
from benchmarks.accuracy.datasets import Dataset
from benchmarks.accuracy.methods import Method
from numpy.typing import NDArray

__all__ = [
    "EPSILONS",
    "CellResult",
    "cell_seed",
    "run_all",
    "run_cell",
    "summarise_errors",
    "trial_error",
]

EPSILONS: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0)
DEFAULT_TRIALS = 200


@dataclass
class CellResult:
    dataset: str
    kind: str
    n: int
    epsilon: float
    method: str
    library: str
    role: str
    trials: int
    median_abs_error: float
    p90_abs_error: float
    out_of_bounds: float
    nonfinite: float
    ms_per_release: float
    setup_seconds: float
    failure: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def cell_seed(base: int, dataset: str, epsilon: float, method: str) -> int:
    """A stable per-cell seed (independent of the order the cells run in)."""
    return (base * 1_000_003 + zlib.crc32(f"{dataset}|{epsilon!r}|{method}".encode())) % 2**32


def trial_error(released: NDArray[np.float64], truth: NDArray[np.float64]) -> float:
    """Mean |released − true| over the quantiles; ``inf`` if the release has the wrong shape or a
    non-finite value."""
    released = np.asarray(released, dtype=np.float64)
    if released.shape != truth.shape or not np.all(np.isfinite(released)):
        return float("inf")
    return float(np.mean(np.abs(released - truth)))


def summarise_errors(errors: Iterable[float]) -> tuple[float, float]:
    """(median, 90th percentile) of the per-trial errors; infinities allowed (no interpolation across
    them: the 90th percentile is the order statistic ⌈0.9·T⌉)."""
    e = np.asarray(list(errors), dtype=np.float64)
    if e.size == 0:
        return float("nan"), float("nan")
    return float(np.median(e)), float(np.quantile(e, 0.9, method="inverted_cdf"))


def run_cell(ds: Dataset, epsilon: float, method: Method, trials: int, base_seed: int = 0) -> CellResult:
    seed = cell_seed(base_seed, ds.name, epsilon, method.name)
    lo, hi = getattr(ds, "release_bounds", ds.bounds)  # a variance lies in [0, ...], not in the data bounds
    trials *= getattr(ds, "trial_factor", 1)
    errors: list[float] = []
    times: list[float] = []
    outside = nonfinite = 0
    failure = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        try:
            release = method.prepare(ds, epsilon, seed)
        except Exception as exc:  # a method that cannot run this cell: recorded, not fatal
            release = None
            failure = f"prepare: {type(exc).__name__}: {exc}"[:300]
        setup = time.perf_counter() - t0
        for _ in range(trials if release is not None else 0):
            t1 = time.perf_counter()
            try:
                out = release()  # type: ignore[misc]
            except Exception as exc:
                failure = failure or f"release: {type(exc).__name__}: {exc}"[:300]
                out = np.full(ds.truth.shape, np.nan)
            times.append(time.perf_counter() - t1)
            finite = np.isfinite(out)
            nonfinite += int(not np.all(finite))
            outside += int(bool(np.any((out < lo) | (out > hi))))
            errors.append(trial_error(out, ds.truth))
    done = max(len(errors), 1)
    med, p90 = summarise_errors(errors)
    return CellResult(
        dataset=ds.name,
        kind=ds.kind,
        n=ds.n,
        epsilon=epsilon,
        method=method.name,
        library=method.library,
        role=method.role,
        trials=len(errors),
        median_abs_error=med,
        p90_abs_error=p90,
        out_of_bounds=outside / done,
        nonfinite=nonfinite / done,
        ms_per_release=float(np.median(times) * 1e3) if times else float("nan"),
        setup_seconds=setup,
        failure=failure,
    )


def run_all(
    datasets: list[Dataset],
    methods: list[Method],
    *,
    epsilons: tuple[float, ...] = EPSILONS,
    trials: int = DEFAULT_TRIALS,
    base_seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[CellResult]:
    results: list[CellResult] = []
    start = time.perf_counter()
    for ds in datasets:
        for eps in epsilons:
            for method in methods:
                r = run_cell(ds, eps, method, trials, base_seed)
                results.append(r)
                if progress is not None:
                    progress(
                        f"[{time.perf_counter() - start:7.1f}s] {ds.name:22s} ε={eps:<4g} {method.name:26s} "
                        f"med={r.median_abs_error:.4g} p90={r.p90_abs_error:.4g} "
                        f"{r.ms_per_release:.2f} ms{'  FAILED ' + r.failure if r.failure else ''}"
                    )
    return results
