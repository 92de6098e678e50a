"""Level.contains (one rounded division and one comparison) against the exact floor of Level.scan, on
records of every kind and on the points next to the reach K of every default level; the heavy-level
selection's counts against every level tested on every record."""

from __future__ import annotations

from typing import Any

import numpy as np

from smoothdp.central.quantiles.atom_selection import coarse_to_fine, selection_counts
from smoothdp.central.quantiles.atoms import MULTISCALE, build_atoms, check_lattice


def test_contains_is_the_scan_membership() -> None:
    atoms = build_atoms(MULTISCALE)
    assert atoms is not None
    g = np.random.default_rng(0)
    values = np.concatenate(
        (
            g.normal(0, 1, 20_000),
            np.round(g.normal(0, 100, 20_000), 2),
            np.round(g.normal(0, 5, 20_000) * 32) / 32,
            np.round(g.normal(0, 1, 20_000), 4),
            g.integers(-(2**53), 2**53, 20_000).astype(float),
            np.ldexp(g.integers(-(2**20), 2**20, 20_000).astype(float), g.integers(-1000, 1000, 20_000)),
            [0.0, -0.0, 2.0**50, 2.0**51, 2.0**51 + 2, 1e300, -1e300, 5e-324, 0.1, 0.3, 1.1e11, 1.2e11 + 0.5],
        )
    )
    for level in atoms.levels:
        ks = [float(level.reach + d) for d in range(-3, 4)] + [float(-level.reach + d) for d in range(-3, 4)]
        ks += list(g.integers(-(2**50), 2**50, 1000).astype(float))
        pts = level.point(np.array([k for k in ks if abs(k) <= level.reach + 2]))
        v = np.concatenate((values, pts, np.nextafter(pts, np.inf), np.nextafter(pts, -np.inf)))
        np.testing.assert_array_equal(level.contains(v), level.scan(v)[1])
        assert level.contains(pts[np.abs(pts) <= level.top]).all()


def _naive_counts(x: np.ndarray, atoms: Any) -> np.ndarray:
    order = coarse_to_fine(atoms)
    on = np.array([atoms.levels[i].contains(x) for i in order]).reshape(len(order), x.size)
    coarser = np.zeros(x.size, dtype=bool)
    below = []
    for row in on:
        below.append(int(coarser.sum()))
        coarser |= row
    return np.array([int(on.any(axis=0).sum()), *(int(r.sum()) for r in on), *below])


def test_selection_counts_are_every_level_tested() -> None:
    """selection_counts (a level read off its finest divisor level's index when the bounds lie within that
    level's reach, else tested) against every level tested on every record, on data of every kind, with
    and without bounds, large values near the divisor levels' reach included."""
    g = np.random.default_rng(0)
    data = [
        g.normal(0, 1, 100_000),
        np.round(g.normal(0, 100, 100_000), 2),
        np.round(g.normal(0, 5, 100_000) * 32) / 32,
        g.integers(-(2**53), 2**53, 100_000).astype(float),
        np.concatenate((g.normal(0, 1, 70_000), np.round(g.normal(0, 1e12, 1000), 1), [2.0**50, 3e14])),
        np.round(g.normal(0, 1e10, 100_000), 1),
        np.round(g.normal(0, 1e10, 100_000), 4),
    ]
    every_bounds = (None, (-1e4, 1e4), (-1.1e11, 1.1e11), (-1e15, 1e15))
    for spec in ("multiscale", (1.0, 0.25), 0.1, (1.0, 0.1, 0.01), (0.5, 0.1, 0.02), (2.5, 0.5)):
        atoms = build_atoms(check_lattice(spec))
        for x in data:
            for bounds in (*every_bounds, (float(x.min()), float(x.max()))):
                clipped = x if bounds is None else np.clip(x, *bounds)
                np.testing.assert_array_equal(
                    selection_counts(clipped, atoms, bounds), _naive_counts(clipped, atoms)
                )


def test_selection_counts_do_the_same_work_on_any_data(monkeypatch: Any) -> None:
    """The levels tested directly, and on how many records, are the same on continuous records, records
    tied at tenths and one record moved onto a lattice point (the old pass skipped levels where a chunk
    held no point of a finer level)."""
    from smoothdp.central.quantiles.atoms import Level

    calls: list[tuple[str, int]] = []
    original = Level.index_of

    def counted(self: Any, v: Any) -> Any:
        calls.append((repr(self), int(np.size(v))))
        return original(self, v)

    monkeypatch.setattr(Level, "index_of", counted)
    atoms = build_atoms(MULTISCALE)
    g = np.random.default_rng(1)
    continuous = g.normal(50.0, 10.0, 150_000)
    moved = continuous.copy()
    moved[7] = 50.5
    work = []
    for x in (continuous, np.round(continuous, 1), moved):
        calls.clear()
        selection_counts(np.clip(x, 0.0, 100.0), atoms, (0.0, 100.0))
        work.append(list(calls))
    assert work[0] == work[1] == work[2]
    assert len({name for name, _ in work[0]}) == 2  # the two levels with no finer divisor: 1/32 and 1/10^4


def test_round_counts_are_exact_and_do_the_same_work_on_any_data(monkeypatch: Any) -> None:
    """round_counts against a count in exact integers, at every magnitude, with negatives, halves, -0.0 and
    values past 2^53; and the same calls, on as many records, whatever the data."""
    from fractions import Fraction

    from smoothdp.central.quantiles.atom_selection import round_counts
    from smoothdp.central.quantiles.atoms import ROUND_SPACINGS, Level

    g = np.random.default_rng(2)
    x = np.concatenate(
        [
            g.integers(-(10**6), 10**6, 3000).astype(float),
            np.round(g.uniform(-1e5, 1e5, 3000), -2),
            np.array([0.0, -0.0, 0.5, 1e3 + 0.5, 2.0**53, 2.0**60, -(2.0**55), 1e15, 123456789000.0]),
            2.0**51
            - np.array([0.0, 1.0, 2.0**51 % 10, 2.0**51 % 100, 2.0**51 % 1000, 2.0**51 % 1000 + 1000]),
            -(2.0**51 - np.array([2.0**51 % 1000, 2.0**51 % 100 + 100, 3.0])),
        ]
    )
    naive = [
        sum(1 for v in x if Fraction(v).denominator == 1 and abs(v) <= 2.0**51 and int(v) % s == 0)
        for s in ROUND_SPACINGS
    ]
    assert list(round_counts(x)) == naive

    calls: list[int] = []
    original = Level.index_of

    def counted(self: Any, v: Any) -> Any:
        calls.append(int(np.size(v)))
        return original(self, v)

    monkeypatch.setattr(Level, "index_of", counted)
    work = []
    for data in (g.normal(0.0, 1.0, 70_000), np.round(g.normal(0.0, 1e4, 70_000), -3)):
        calls.clear()
        round_counts(data)
        work.append(list(calls))
    assert work[0] == work[1] == [1 << 16, 70_000 - (1 << 16)]
