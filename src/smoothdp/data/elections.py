"""US presidential election data for the smoothed-DP experiments (Liu, Wang & Xia, *Smoothed Differential
Privacy*, TMLR 2023 (LWX), Figures 1 and 2 left).

Two small CSV files ship inside the package (read with :mod:`importlib.resources`):

``election_2020_president.csv`` (57 rows; columns unit, biden, trump, other)
    2020 presidential general-election votes for the 50 states, DC, the congressional districts ME-1, ME-2,
    NE-1, NE-2, NE-3, and the national total ``US``. Source: FiveThirtyEight's election-results data
    (``election_results_presidential.csv``), compiled from the official state canvasses. LWX's Π is "the
    57 districts"; the two-party Biden shares span NE-3 (0.2286) to DC (0.9447), the hull vertices (LWX
    name NE-2, 0.5334, which is interior; the maximum of δ_SDP is at the DC vertex either way).

``election_history_national.csv`` (31 rows; columns year, candidate_a_votes, candidate_b_votes)
    National popular votes of the two leading presidential candidates, 1900–2020. The columns do not
    consistently mean one party. Source: the smoothed-DP authors' own data file (``election_history.xls`` in
    github.com/AoLiu-CS/SmoothedDP), used for LWX Figure 1 (1920–2020, 0.2% of ballots lost).

Every loader also accepts a user's own CSV of the same columns (``path=...``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources
from os import PathLike

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Election2020",
    "ElectionHistory",
    "load_election_2020",
    "load_election_history",
]

_ELECTION_2020 = "election_2020_president.csv"
_HISTORY = "election_history_national.csv"


def _read_rows(
    filename: str, path: str | PathLike[str] | None, columns: tuple[str, ...]
) -> list[dict[str, str]]:
    if path is None:
        text = resources.files("smoothdp.data").joinpath(filename).read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        raise ValueError(f"{filename if path is None else path}: no data rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise ValueError(
            f"{filename if path is None else path} lacks column(s) {missing}; it has {sorted(rows[0])}"
        )
    return rows


def _counts(rows: list[dict[str, str]], column: str) -> NDArray[np.int64]:
    try:
        values = np.array([int(row[column]) for row in rows], dtype=np.int64)
    except ValueError as err:
        raise ValueError(f"column {column!r} must hold integer vote counts: {err}") from err
    if np.any(values < 0):
        raise ValueError(f"column {column!r} must hold non-negative vote counts")
    return values


@dataclass(frozen=True)
class Election2020:
    """2020 votes per unit (arrays aligned with ``units``; the national row ``US`` included)."""

    units: NDArray[np.str_]
    biden: NDArray[np.int64]
    trump: NDArray[np.int64]
    other: NDArray[np.int64]

    def jurisdictions(self) -> Election2020:
        """The 56 units without the national total ``US``."""
        keep = self.units != "US"
        return Election2020(self.units[keep], self.biden[keep], self.trump[keep], self.other[keep])

    def two_party_distributions(self) -> NDArray[np.float64]:
        """Rows (Biden share, Trump share) of the two-party vote: Π for the binary experiment."""
        total = (self.biden + self.trump).astype(np.float64)
        return np.column_stack([self.biden / total, self.trump / total])

    def three_way_distributions(self) -> NDArray[np.float64]:
        """Rows (Biden, Trump, other) shares: Π for the three-category variant."""
        total = (self.biden + self.trump + self.other).astype(np.float64)
        return np.column_stack([self.biden / total, self.trump / total, self.other / total])

    def unit(self, name: str) -> tuple[int, int, int]:
        """(biden, trump, other) of one unit, e.g. ``"DC"`` or ``"NE-3"``."""
        hits = np.flatnonzero(self.units == name)
        if hits.size == 0:
            raise ValueError(f"unknown unit {name!r}; units are {', '.join(self.units)}")
        i = int(hits[0])
        return int(self.biden[i]), int(self.trump[i]), int(self.other[i])


@dataclass(frozen=True)
class ElectionHistory:
    """National two-candidate totals per year (newest first, as in the file)."""

    years: NDArray[np.int64]
    candidate_a: NDArray[np.int64]
    candidate_b: NDArray[np.int64]

    @property
    def totals(self) -> NDArray[np.int64]:
        """n: the number of two-candidate ballots per year."""
        return self.candidate_a + self.candidate_b

    @property
    def minority(self) -> NDArray[np.int64]:
        """The smaller of the two counts per year (the k of Figure 1)."""
        return np.minimum(self.candidate_a, self.candidate_b)

    def since(self, year: int) -> ElectionHistory:
        """Only the years ≥ ``year`` (Figure 1 uses 1920–2020)."""
        keep = self.years >= year
        return ElectionHistory(self.years[keep], self.candidate_a[keep], self.candidate_b[keep])


def load_election_2020(path: str | PathLike[str] | None = None) -> Election2020:
    """The 2020 presidential votes per unit (57 rows; provenance in the module docstring)."""
    rows = _read_rows(_ELECTION_2020, path, ("unit", "biden", "trump", "other"))
    return Election2020(
        units=np.array([row["unit"] for row in rows]),
        biden=_counts(rows, "biden"),
        trump=_counts(rows, "trump"),
        other=_counts(rows, "other"),
    )


def load_election_history(path: str | PathLike[str] | None = None) -> ElectionHistory:
    """National two-candidate vote totals, 1900–2020 (31 rows; provenance in the module docstring)."""
    rows = _read_rows(_HISTORY, path, ("year", "candidate_a_votes", "candidate_b_votes"))
    return ElectionHistory(
        years=_counts(rows, "year"),
        candidate_a=_counts(rows, "candidate_a_votes"),
        candidate_b=_counts(rows, "candidate_b_votes"),
    )
