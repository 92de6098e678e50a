"""The public atoms and the exponential-mechanism quantile's law written from the definition
(docs/theory/quantiles.md#a-multi-scale-lattice), independently of smoothdp.central.quantiles.atoms: the
points of a level of spacing P/Q are Python's correctly rounded float(Fraction(k·P, Q)), their masses
factor·fl(P/Q) summed over the levels that hold them."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

#: The default's levels, as the docs list them.
MULTISCALE_LEVELS = [(1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (1, 32)] + [(1, 10**d) for d in range(1, 5)]


def atom_masses(
    levels: list[tuple[int, int]], factors: float | list[float], lower: float, upper: float
) -> dict[float, float]:
    """Every atom in [lower, upper] with its mass (a level's factor times fl(P/Q), summed in level order)."""
    facs = factors if isinstance(factors, list) else [factors] * len(levels)
    out: dict[float, float] = {}
    for (p, q), f in zip(levels, facs, strict=True):
        sigma = Fraction(p, q)
        mass = f * float(sigma)
        for k in range(math.floor(Fraction(lower) / sigma) - 1, math.ceil(Fraction(upper) / sigma) + 2):
            v = float(Fraction(k * p, q))
            if lower <= v <= upper:
                out[v] = out.get(v, 0.0) + mass
    return dict(sorted(out.items()))


def em_law(x: Any, lower: float, upper: float, t: float, coef: float, atoms: dict[float, float]):
    """Closed-form law of the exponential-mechanism quantile w.r.t. Lebesgue + Σ mass·δ_atom: the pieces
    between consecutive cut points (bounds, records, atoms) and the atoms, by brute force."""
    xs = np.sort(np.asarray(x, dtype=float))
    pts = np.array(list(atoms), dtype=float)
    masses = np.array(list(atoms.values()), dtype=float)

    def dist(y: np.ndarray) -> np.ndarray:
        below = np.array([np.sum(xs < v) for v in y], float)
        at_most = np.array([np.sum(xs <= v) for v in y], float)
        return np.maximum(0.0, np.maximum(below - t, t - at_most))

    cuts = np.unique(np.concatenate(([lower, upper], xs, pts)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    w_pieces = np.diff(cuts) * np.exp(-coef * dist(mids))
    w_atoms = masses * np.exp(-coef * dist(pts))
    z = w_pieces.sum() + w_atoms.sum()
    return cuts, pts, w_pieces / z, w_atoms / z


def binned_counts(out: np.ndarray, cuts: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Counts of draws per piece (between cuts) and per atom, in the order of :func:`em_law`."""
    on_atom = np.isin(out, pts)
    pieces = np.bincount(np.searchsorted(cuts, out[~on_atom]) - 1, minlength=cuts.size - 1)
    return np.concatenate((pieces, [np.sum(out == v) for v in pts]))
