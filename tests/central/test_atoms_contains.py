"""Level.contains (one rounded division and one comparison) against the exact floor of Level.scan, on
records of every kind and on the points next to the reach K of every default level."""

from __future__ import annotations

import numpy as np

from smoothdp.central.quantiles.atoms import MULTISCALE, build_atoms


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
