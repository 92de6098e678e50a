"""The data sets of the accuracy benchmark: each one row of the table (1-D data, public bounds, quantiles).

Every data set is FIXED (synthetic ones are drawn once from a fixed seed): the randomness measured is the
mechanisms' only. The true statistic is numpy's ``inverted_cdf`` quantile, x_(max(1, ⌈qn⌉)), for every
method (:func:`true_quantiles`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DECILES",
    "QUANTILE_DEFINITION",
    "Dataset",
    "build_datasets",
    "true_quantiles",
]

#: The one definition of the true quantile used for every method's error.
QUANTILE_DEFINITION = "inverted_cdf"
DECILES: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(1, 10))
SYNTHETIC_SEED = 20240612

# New York City's bounding box is about latitude 40.477..40.918, longitude -74.259..-73.700; widened by
# about 0.25 degrees (~25 km) on each side and rounded, so that the bounds are public and generous.
NYC_LAT_BOUNDS = (40.25, 41.15)
NYC_LON_BOUNDS = (-74.5, -73.45)
# A priori income range: losses down to -$100k, incomes up to $10M (the data span -$10k..$713k).
CA_INCOME_BOUNDS = (-1.0e5, 1.0e7)
AGE_BOUNDS = (0.0, 125.0)
WIDE_BOUNDS = (-1.0e4, 1.0e4)
TIES_BOUNDS = (0.0, 10.0)


@dataclass(frozen=True)
class Dataset:
    """One row family of the table.

    ``grid`` names the candidate grid a careful OpenDP user would choose from PUBLIC knowledge only:
    ``"integer"`` (integer-valued data: every integer in the bounds), ``"log"`` (a symmetric
    log-spaced grid, for incomes) or ``"linear"`` (evenly spaced over the bounds).
    """

    name: str
    x: NDArray[np.float64]
    bounds: tuple[float, float]
    qs: tuple[float, ...]
    grid: str
    description: str
    kind: str = "median"
    truth: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lo, hi = self.bounds
        if not (np.all(self.x >= lo) and np.all(self.x <= hi)):
            raise ValueError(f"data set {self.name!r}: data outside its declared bounds {self.bounds}")
        object.__setattr__(self, "truth", true_quantiles(self.x, self.qs))

    @property
    def n(self) -> int:
        return int(self.x.size)


def true_quantiles(x: NDArray[np.float64], qs: tuple[float, ...] | list[float]) -> NDArray[np.float64]:
    """x_(max(1, ⌈qn⌉)) for each q (numpy's ``inverted_cdf``), the target of every method."""
    values = np.asarray(x, dtype=np.float64)
    return np.asarray(np.quantile(values, np.asarray(qs, dtype=np.float64), method="inverted_cdf"))


def _synthetic() -> dict[str, NDArray[np.float64]]:
    rng = np.random.default_rng(SYNTHETIC_SEED)
    normal_100 = rng.normal(1.2, 1.0, 100)
    normal_1000 = rng.normal(1.2, 1.0, 1000)
    # heavy ties: integers 0..5 with fixed counts (median 3, unambiguous: CDF 0.10, 0.25, 0.45, 0.75, ...)
    ties = np.repeat(np.arange(6.0), [100, 150, 200, 300, 150, 100])
    rng.shuffle(ties)
    # bimodal gap at the median: 500 from N(-10, 1), 501 from N(10, 1); n odd so that every quantile
    # definition agrees on the median (the smallest point of the upper mode), the gap lies just below it
    bimodal = np.concatenate([rng.normal(-10.0, 1.0, 500), rng.normal(10.0, 1.0, 501)])
    rng.shuffle(bimodal)
    return {"normal_100": normal_100, "normal_1000": normal_1000, "ties": ties, "bimodal": bimodal}


def build_datasets() -> list[Dataset]:
    """All rows: medians on every data set, deciles (q = 0.1, ..., 0.9 under one ε) on three."""
    from smoothdp.data import load_adult_ages, load_ca_incomes, load_csv

    ages = load_adult_ages()
    incomes = load_ca_incomes()
    nyc = load_csv("nyc_collisions_sample")
    lat, lon = nyc["latitude"], nyc["longitude"]
    keep = np.isfinite(lat) & np.isfinite(lon)
    syn = _synthetic()
    med = (0.5,)
    rows = [
        Dataset("adult_age", ages, AGE_BOUNDS, med, "integer",
                f"UCI Adult ages, n = {ages.size}, bounds {AGE_BOUNDS}"),
        Dataset("ca_income", incomes, CA_INCOME_BOUNDS, med, "log",
                f"CA 2000 PUMS person incomes (USD), n = {incomes.size}, bounds {CA_INCOME_BOUNDS}"),
        Dataset("nyc_latitude", lat[keep], NYC_LAT_BOUNDS, med, "linear",
                f"NYC collision latitudes (degrees), n = {int(keep.sum())}, bounds {NYC_LAT_BOUNDS}"),
        Dataset("nyc_longitude", lon[keep], NYC_LON_BOUNDS, med, "linear",
                f"NYC collision longitudes (degrees), n = {int(keep.sum())}, bounds {NYC_LON_BOUNDS}"),
        Dataset("normal_n100", syn["normal_100"], WIDE_BOUNDS, med, "linear",
                f"N(1.2, 1), n = 100, bounds {WIDE_BOUNDS}"),
        Dataset("normal_n1000", syn["normal_1000"], WIDE_BOUNDS, med, "linear",
                f"N(1.2, 1), n = 1000, bounds {WIDE_BOUNDS}"),
        Dataset("ties_0_5", syn["ties"], TIES_BOUNDS, med, "integer",
                f"integers 0..5 with counts 100/150/200/300/150/100, n = 1000, bounds {TIES_BOUNDS}"),
        Dataset("bimodal_gap", syn["bimodal"], WIDE_BOUNDS, med, "linear",
                f"500 × N(-10, 1) + 501 × N(10, 1), n = 1001, bounds {WIDE_BOUNDS}"),
        Dataset("adult_age_deciles", ages, AGE_BOUNDS, DECILES, "integer",
                "UCI Adult ages, deciles under one ε", kind="deciles"),
        Dataset("ca_income_deciles", incomes, CA_INCOME_BOUNDS, DECILES, "log",
                "CA incomes, deciles under one ε", kind="deciles"),
        Dataset("normal_n1000_deciles", syn["normal_1000"], WIDE_BOUNDS, DECILES, "linear",
                "N(1.2, 1), n = 1000, bounds ±1e4, deciles under one ε", kind="deciles"),
    ]
    return rows


def candidate_grid(dataset: Dataset, size: int = 10_001) -> NDArray[np.float64]:
    """The public candidate grid an OpenDP user would choose (see :class:`Dataset`), sorted, unique."""
    lo, hi = dataset.bounds
    if dataset.grid == "integer":
        return np.arange(np.ceil(lo), np.floor(hi) + 1.0)
    if dataset.grid == "log":
        # {0} ∪ ±geomspace(1, |bound|): relative spacing ~0.2% above $1; a tenth of the points for losses
        n_neg = max(size // 10, 1) if lo < 0 else 0
        n_pos = size - 1 - n_neg
        parts = [np.array([0.0])]
        if n_neg:
            parts.insert(0, -np.geomspace(1.0, -lo, n_neg)[::-1])
        if hi > 0:
            parts.append(np.geomspace(1.0, hi, n_pos))
        return np.unique(np.clip(np.concatenate(parts), lo, hi))
    if dataset.grid == "linear":
        return np.linspace(lo, hi, size)
    raise ValueError(f"grid must be 'integer', 'log' or 'linear'; got {dataset.grid!r}")
