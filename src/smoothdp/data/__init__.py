"""Real data sets shipped with smoothdp, and the synthetic models that stand in for unavailable ones.

The machines these reproductions run on cannot download data, so the small real data sets the
experiments need ship inside the package (gzip-compressed CSV). Every loader also accepts a user's own
file of the same shape (``path=...``).

* ``adult``: UCI Adult training split, 32,561 rows, 15 columns. UCI Machine Learning Repository
  "Adult" (Becker & Kohavi 1996), CC BY 4.0. The ``adult['Age']`` column of the local-sensitivity chapter of
  Near & Abuah, *Programming Differential Privacy* (``docs/references.md#pdp``).
* ``ca_pums_2000_persons``: 10,000 California persons from the 2000 Census PUMS (age, sex, educ,
  income in USD with negatives allowed, married). "PUMS California Subsample" (Honaker 2015, Dataverse),
  via the PSI-Library R package; public Census microdata. Stands in for the 2022 California household
  incomes (IPUMS USA extract) of Liang & Yi, CCS 2024 (``docs/references.md#ly24``), which are not
  redistributable: compare shapes, not levels.
* ``nyc_collisions_sample``: 13,032 NYC motor-vehicle collisions with coordinates (crash_date, borough,
  latitude, longitude). NYC Open Data "Motor Vehicle Collisions - Crashes" (public), a subsample of
  mostly 2016 crashes.

The US presidential election data of Liu, Wang & Xia, TMLR 2023 (``docs/references.md#lwx23``) live in
:mod:`smoothdp.data.elections`.
"""

from __future__ import annotations

from importlib import resources
from os import PathLike

import numpy as np
from numpy.typing import NDArray

from smoothdp.data.csv_reader import read_csv, typed_column

__all__ = ["DATASETS", "load_adult_ages", "load_ca_incomes", "load_csv", "load_nyc_collisions"]

#: Data sets shipped in the package, with one line of provenance each.
DATASETS: dict[str, str] = {
    "adult": "UCI Adult training split (Becker & Kohavi 1996), CC BY 4.0; 32,561 rows",
    "ca_pums_2000_persons": "California 2000 Census PUMS persons (Honaker 2015, PSI-Library); 10,000 rows",
    "nyc_collisions_sample": "NYC Open Data Motor Vehicle Collisions, mostly 2016; 13,032 rows",
}


def load_csv(name: str, path: str | PathLike[str] | None = None) -> dict[str, NDArray]:
    """Load a shipped data set (or the user's own CSV at ``path``) as a dict of column arrays.

    Read by :func:`smoothdp.data.csv_reader.read_csv`, the parser the command line uses too: every line
    after the header is a record. A column of type ``"number"`` (some cell is a number:
    :func:`~smoothdp.data.csv_reader.column_type`) becomes a float array (missing, ``NA``-like and
    unparseable cells NaN); a text column stays an array of strings.
    """
    if path is None:
        if name not in DATASETS:
            raise ValueError(f"name must be one of {sorted(DATASETS)}; got {name!r}")
        with resources.as_file(resources.files(__package__).joinpath(f"{name}.csv.gz")) as shipped:
            header, cells = read_csv(shipped, name=f"data set {name!r}")
    else:
        header, cells = read_csv(path, name=f"data set {name!r}")
    if not header or not cells[header[0]]:
        raise ValueError(f"data set {name!r} has no rows")
    return {column: typed_column(cells[column]) for column in header}


def _require(columns: dict[str, NDArray], needed: tuple[str, ...], name: str) -> None:
    missing = [c for c in needed if c not in columns]
    if missing:
        raise ValueError(f"data set {name!r} lacks column(s) {missing}; it has {sorted(columns)}")


def load_adult_ages(path: str | PathLike[str] | None = None) -> NDArray[np.float64]:
    """The ``age`` column of UCI Adult (Near & Abuah's ``adult['Age']``): 32,561 ages in [17, 90]."""
    columns = load_csv("adult", path)
    _require(columns, ("age",), "adult")
    return columns["age"].astype(np.float64)


def load_ca_incomes(path: str | PathLike[str] | None = None) -> NDArray[np.float64]:
    """Annual person incomes (USD) of the California 2000 PUMS subsample; negatives are kept.

    It stands in for the 2022 California household incomes of Liang & Yi, CCS 2024 (an IPUMS USA extract,
    not redistributable): compare shapes, not levels.
    """
    columns = load_csv("ca_pums_2000_persons", path)
    _require(columns, ("income",), "ca_pums_2000_persons")
    income = columns["income"]
    return income[np.isfinite(income)].astype(np.float64)


def load_nyc_collisions(path: str | PathLike[str] | None = None) -> NDArray[np.float64]:
    """NYC collision locations projected to planar metres, shape (n, 2).

    Local equirectangular projection about the sample's mean latitude/longitude:
    x = R·cos(φ₀)·(λ − λ₀), y = R·(φ − φ₀) with R = 6,371,008.8 m (mean Earth radius). Over the ~50 km
    of New York City the distortion against a geodesic is below 0.1 %.
    """
    columns = load_csv("nyc_collisions_sample", path)
    _require(columns, ("latitude", "longitude"), "nyc_collisions_sample")
    lat, lon = columns["latitude"], columns["longitude"]
    keep = np.isfinite(lat) & np.isfinite(lon)
    return project_to_metres(lat[keep], lon[keep])


EARTH_RADIUS_M = 6_371_008.8


def project_to_metres(latitude: NDArray[np.float64], longitude: NDArray[np.float64]) -> NDArray[np.float64]:
    """Local equirectangular projection of degrees to metres about the points' mean (shape (n, 2))."""
    phi, lam = np.radians(latitude), np.radians(longitude)
    phi0, lam0 = phi.mean(), lam.mean()
    x = EARTH_RADIUS_M * np.cos(phi0) * (lam - lam0)
    y = EARTH_RADIUS_M * (phi - phi0)
    return np.column_stack([x, y])
