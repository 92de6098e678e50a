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
    "tied_and_small_datasets",
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
    log-spaced grid, for incomes), ``"linear"`` (evenly spaced over the bounds) or ``"step:<s>"`` (data
    recorded at a public precision s, e.g. ``"step:0.01"`` for cents: every multiple of s in the bounds,
    as the floats k/(1/s) a user writes).
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
        Dataset(
            "adult_age",
            ages,
            AGE_BOUNDS,
            med,
            "integer",
            f"UCI Adult ages, n = {ages.size}, bounds {AGE_BOUNDS}",
        ),
        Dataset(
            "ca_income",
            incomes,
            CA_INCOME_BOUNDS,
            med,
            "log",
            f"CA 2000 PUMS person incomes (USD), n = {incomes.size}, bounds {CA_INCOME_BOUNDS}",
        ),
        Dataset(
            "nyc_latitude",
            lat[keep],
            NYC_LAT_BOUNDS,
            med,
            "linear",
            f"NYC collision latitudes (degrees), n = {int(keep.sum())}, bounds {NYC_LAT_BOUNDS}",
        ),
        Dataset(
            "nyc_longitude",
            lon[keep],
            NYC_LON_BOUNDS,
            med,
            "linear",
            f"NYC collision longitudes (degrees), n = {int(keep.sum())}, bounds {NYC_LON_BOUNDS}",
        ),
        Dataset(
            "normal_n100",
            syn["normal_100"],
            WIDE_BOUNDS,
            med,
            "linear",
            f"N(1.2, 1), n = 100, bounds {WIDE_BOUNDS}",
        ),
        Dataset(
            "normal_n1000",
            syn["normal_1000"],
            WIDE_BOUNDS,
            med,
            "linear",
            f"N(1.2, 1), n = 1000, bounds {WIDE_BOUNDS}",
        ),
        Dataset(
            "ties_0_5",
            syn["ties"],
            TIES_BOUNDS,
            med,
            "integer",
            f"integers 0..5 with counts 100/150/200/300/150/100, n = 1000, bounds {TIES_BOUNDS}",
        ),
        Dataset(
            "bimodal_gap",
            syn["bimodal"],
            WIDE_BOUNDS,
            med,
            "linear",
            f"500 × N(-10, 1) + 501 × N(10, 1), n = 1001, bounds {WIDE_BOUNDS}",
        ),
        Dataset(
            "adult_age_deciles",
            ages,
            AGE_BOUNDS,
            DECILES,
            "integer",
            "UCI Adult ages, deciles under one ε",
            kind="deciles",
        ),
        Dataset(
            "ca_income_deciles",
            incomes,
            CA_INCOME_BOUNDS,
            DECILES,
            "log",
            "CA incomes, deciles under one ε",
            kind="deciles",
        ),
        Dataset(
            "normal_n1000_deciles",
            syn["normal_1000"],
            WIDE_BOUNDS,
            DECILES,
            "linear",
            "N(1.2, 1), n = 1000, bounds ±1e4, deciles under one ε",
            kind="deciles",
        ),
    ]
    return rows + tied_and_small_datasets()


#: Half-year data: years recorded in half-years (bin midpoints), frequencies that keep every decile
#: inside a run of ties (cumulative shares 0.07, 0.28, 0.47, 0.63, 0.77, 0.89, 1).
HALF_YEARS = (0.5, 2.5, 6.0, 9.0, 13.0, 16.5, 23.0)
HALF_YEAR_SHARES = (0.07, 0.21, 0.19, 0.16, 0.14, 0.12, 0.11)
#: A price list: menu prices in cents and how often each is paid.
PRICES = (0.99, 1.49, 2.99, 4.99, 9.99, 14.99, 19.99, 29.99, 49.99, 99.99)
PRICE_SHARES = (0.06, 0.08, 0.13, 0.17, 0.19, 0.12, 0.10, 0.07, 0.05, 0.03)


def tied_and_small_datasets() -> list[Dataset]:
    """Issue 22's rows: data tied at halves, tenths and cents (and a constant column), and small n with
    wide bounds, for medians and deciles. The OpenDP grids use the data's public precision."""
    from smoothdp.data import load_adult_ages

    rng = np.random.default_rng(SYNTHETIC_SEED + 22)
    half = np.repeat(np.array(HALF_YEARS), np.round(np.array(HALF_YEAR_SHARES) * 1500).astype(int))
    rng.shuffle(half)
    temps = np.round(rng.normal(15.0, 8.0, 2000), 1)
    prices = np.repeat(np.array(PRICES), np.round(np.array(PRICE_SHARES) * 1000).astype(int))
    rng.shuffle(prices)
    constant = np.full(200, 62.5)
    ages = rng.choice(load_adult_ages(), 100, replace=False).astype(np.float64)
    uniform_100 = rng.uniform(20.0, 80.0, 100)
    uniform_50 = rng.uniform(20.0, 80.0, 50)
    one_to_ten = np.arange(1.0, 11.0)
    med, quartiles = (0.5,), (0.25, 0.5, 0.75)
    rows = []
    for name, x, bounds, grid, what in [
        ("half_years", half, (0.0, 100.0), "step:0.5", f"years in half-years 0.5..23, n = {half.size}"),
        (
            "temperature_tenths",
            temps,
            (-50.0, 60.0),
            "step:0.1",
            f"N(15, 8) to one decimal, n = {temps.size}",
        ),
        ("prices_cents", prices, (0.0, 200.0), "step:0.01", f"menu prices 0.99..99.99, n = {prices.size}"),
        ("constant_62_5", constant, (0.0, 125.0), "step:0.5", "200 copies of 62.5"),
        ("ages_n100_wide", ages, (0.0, 1.0e4), "integer", "100 Adult ages, bounds (0, 1e4)"),
    ]:
        rows.append(Dataset(name, x, bounds, med, grid, f"{what}, bounds {bounds}"))
        rows.append(Dataset(f"{name}_deciles", x, bounds, DECILES, grid, f"{what}, deciles", kind="deciles"))
    rows += [
        Dataset("uniform_n100_deciles", uniform_100, (0.0, 100.0), DECILES, "linear",
                "U(20, 80), n = 100, bounds (0, 100), deciles", kind="deciles"),
        Dataset("uniform_n50_deciles", uniform_50, (0.0, 100.0), DECILES, "linear",
                "U(20, 80), n = 50, bounds (0, 100), deciles", kind="deciles"),
        Dataset("one_to_ten_quartiles", one_to_ten, (0.0, 100.0), quartiles, "integer",
                "1..10, bounds (0, 100), quartiles", kind="quartiles"),
    ]  # fmt: skip
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
    if dataset.grid.startswith("step:"):
        per_unit = round(1.0 / float(dataset.grid[5:]))  # 2 for halves, 100 for cents
        k = np.arange(np.ceil(lo * per_unit), np.floor(hi * per_unit) + 1.0)
        return k / per_unit
    raise ValueError(f"grid must be 'integer', 'log' or 'linear'; got {dataset.grid!r}")
