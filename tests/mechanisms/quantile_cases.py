"""Registry cases of the exponential-mechanism quantiles, the recursive and joint quantiles and the private
range, with exact privacy losses computed from closed-form output densities (not from the code's sampler).

Every output density here is piecewise constant between the data points of x and x' (and, for two
outputs, on products of such pieces), so the supremum of the log ratio is a maximum over the pieces.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

BOUNDS = (0.0, 1.0)
GRID = (0.0, 0.1, 0.5, 0.55, 1.0)


def _log_em_density(
    xs: np.ndarray, lower: float, upper: float, target: float, coef: float, y: np.ndarray
) -> np.ndarray:
    """ln of the density ∝ exp(−coef·|#{x < y} − target|) on [lower, upper], written out from scratch."""
    xs = np.sort(np.asarray(xs, float))
    edges = np.concatenate(([lower], xs, [upper]))
    lengths = np.diff(edges)
    weights = lengths * np.exp(-coef * np.abs(np.arange(lengths.size) - target))
    below = np.array([np.sum(xs < v) for v in np.atleast_1d(y)], float)
    return -coef * np.abs(below - target) - math.log(weights.sum())


def _pieces(x: Any, x2: Any, lower: float, upper: float) -> np.ndarray:
    """One point inside each piece between the data points of both data sets."""
    cuts = np.unique(np.concatenate(([lower, upper], np.asarray(x, float), np.asarray(x2, float))))
    cuts = cuts[(cuts >= lower) & (cuts <= upper)]
    return 0.5 * (cuts[:-1] + cuts[1:])


def _rank_target(q: float, n: int) -> float:
    return max(1, math.ceil(q * n - 1e-12)) - 0.5


#: The documented atom mass per unit of spacing (docs/theory/quantiles.md#choosing-the-atom-mass).
ATOM_MASS_PER_SPACING = 2.0**-14


@functools.lru_cache(maxsize=16)
def _atoms_of(spec: Any, lower: float, upper: float) -> dict[float, float]:
    """The atoms of a ``lattice=`` value in [lower, upper] with their masses, from the documented definition
    (tests/central/atoms_law.py: correctly rounded fl(k·P/Q), mass 2^-14·fl(P/Q) summed over the levels)."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "central"))
    from atoms_law import atom_masses
    from greedy_law import spec_levels

    return atom_masses(spec_levels(spec), ATOM_MASS_PER_SPACING, lower, upper)


def _tie_dist(xs: np.ndarray, t: float, y: np.ndarray) -> np.ndarray:
    """dist(t, [#{x < y}, #{x ≤ y}]) (counts by binary search in the sorted records)."""
    below = np.searchsorted(xs, y, side="left").astype(float)
    at_most = np.searchsorted(xs, y, side="right").astype(float)
    return np.maximum(0.0, np.maximum(below - t, t - at_most))


def _log_lattice_em_density(
    xs: Any,
    lower: float,
    upper: float,
    t: float,
    coef: float,
    atoms: dict[float, float],
    y: np.ndarray,
) -> np.ndarray:
    """ln of the density ∝ exp(−coef·dist(t, [#{x < y}, #{x ≤ y}])) w.r.t. μ = Lebesgue on [lower, upper]
    + Σ mass·δ_atom, written out from scratch: Z = Σ over the pieces between the distinct data values of
    length × weight, + Σ over the atoms of mass × weight. (The density at y is the same w.r.t. either
    part of μ: the ratio of the laws of any set is bounded by the sup of the density ratio.)"""
    xs = np.sort(np.asarray(xs, float))
    cuts = np.unique(np.concatenate(([lower, upper], xs)))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    z = float(np.sum(np.diff(cuts) * np.exp(-coef * _tie_dist(xs, t, mids))))
    pts = np.array(list(atoms), dtype=float)
    mass = np.array(list(atoms.values()), dtype=float)
    z += float(np.sum(mass * np.exp(-coef * _tie_dist(xs, t, pts))))
    return -coef * _tie_dist(xs, t, np.atleast_1d(y)) - math.log(z)


def em_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """Exponential-mechanism quantile: continuous (max over pieces), with the lattice atoms (max over the
    pieces and the lattice points: the densities w.r.t. the common base measure), or over candidates."""
    n = len(x)
    coef = 0.5 * mech.epsilon_used(n)
    t = _rank_target(mech.q, n)
    if mech.candidates is not None:

        def log_p(data: Any) -> np.ndarray:
            data = np.asarray(data, float)
            below = np.array([np.sum(data < g) for g in mech.candidates], float)
            at_most = np.array([np.sum(data <= g) for g in mech.candidates], float)
            dist = np.maximum(0.0, np.maximum(below - t, t - at_most))
            lw = -coef * dist
            return lw - np.log(np.sum(np.exp(lw)))

        return float(np.max(np.abs(log_p(x) - log_p(x2))))
    y = _pieces(x, x2, mech.lower, mech.upper)
    if mech.lattice is None:
        a = _log_em_density(x, mech.lower, mech.upper, t, coef, y)
        b = _log_em_density(x2, mech.lower, mech.upper, t, coef, y)
        return float(np.max(np.abs(a - b)))
    assert mech.atom_mass == ATOM_MASS_PER_SPACING
    atoms = _atoms_of(mech.lattice, mech.lower, mech.upper)
    y = np.concatenate((y, np.array(list(atoms), dtype=float)))
    a = _log_lattice_em_density(x, mech.lower, mech.upper, t, coef, atoms, y)
    b = _log_lattice_em_density(x2, mech.lower, mech.upper, t, coef, atoms, y)
    return float(np.max(np.abs(a - b)))


def recursive_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """KSS on two quantiles (two levels): p(v1)·p(v2 | v1), with the node rule written out from scratch:
    level 1 is quantile qs[0] on all data with ε/(2L)/max(q, 1−q); level 2 is qs[1] rescaled on x ≥ v1."""
    q1, q2 = (float(q) for q in mech.unique_qs)
    levels = 2
    eps_node = mech.epsilon / (2.0 * levels)

    def node(data: np.ndarray, lo: float, hi: float, q: float, v: np.ndarray) -> np.ndarray:
        sens = max(q, 1.0 - q)
        eps_eff = eps_node / sens
        from smoothdp.central.quantiles import log_weight_margin

        eta = log_weight_margin(epsilon=eps_eff, n=data.size, width=hi - lo)
        return _log_em_density(data, lo, hi, q * data.size, 0.5 * (eps_eff - 4 * eta), v)

    xa, xb = np.sort(np.asarray(x, float)), np.sort(np.asarray(x2, float))
    worst = 0.0
    for v1 in _pieces(xa, xb, mech.lower, mech.upper):
        l1 = node(xa, mech.lower, mech.upper, q1, np.array([v1]))[0]
        l1b = node(xb, mech.lower, mech.upper, q1, np.array([v1]))[0]
        ra, rb = xa[xa >= v1], xb[xb >= v1]
        q_rel = (q2 - q1) / (1.0 - q1)
        v2 = _pieces(ra, rb, v1, mech.upper)
        l2 = node(ra, v1, mech.upper, q_rel, v2)
        l2b = node(rb, v1, mech.upper, q_rel, v2)
        worst = max(worst, float(np.max(np.abs((l1 + l2) - (l1b + l2b)))))
    return worst


def joint_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """JointExp on two quantiles: density ∝ exp(−ε′/4·Σ_j |c_j − g_j n|) on o1 ≤ o2, normalised by the
    exact integral over pairs of intervals (|I|·|I′|, or |I|²/2 on the diagonal)."""
    q1, q2 = (float(q) for q in mech.unique_qs)

    def log_density_table(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = data.size
        coef = (mech.epsilon - mech.margin(n)) / 4.0
        edges = np.concatenate(([mech.lower], np.sort(data), [mech.upper]))
        lengths = np.diff(edges)
        i = np.arange(n + 1)[:, None]
        k = np.arange(n + 1)[None, :]
        u = -(np.abs(i - q1 * n) + np.abs(k - i - (q2 - q1) * n) + np.abs(n - k - (1 - q2) * n))
        vol = np.where(k > i, lengths[:, None] * lengths[None, :], 0.0)
        vol = vol + np.diag(lengths**2 / 2.0)
        log_z = math.log(float(np.sum(vol * np.exp(coef * u))))
        return edges, coef, log_z

    def log_p(data: np.ndarray, o1: float, o2: float) -> float:
        edges, coef, log_z = log_density_table(data)
        n = data.size
        c1 = np.sum(data < o1)
        c2 = np.sum((data >= o1) & (data < o2))
        c3 = n - c1 - c2
        u = -(abs(c1 - q1 * n) + abs(c2 - (q2 - q1) * n) + abs(c3 - (1 - q2) * n))
        del edges
        return coef * u - log_z

    xa, xb = np.asarray(x, float), np.asarray(x2, float)
    pts = _pieces(xa, xb, mech.lower, mech.upper)
    worst = 0.0
    for o1, o2 in itertools.combinations_with_replacement(pts, 2):
        worst = max(worst, abs(log_p(xa, o1, o2) - log_p(xb, o1, o2)))
    return worst


def range_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """PrivateRange: the EM on clamped log-magnitudes (G is post-processing of its output y)."""
    lo, hi = mech.log_bounds
    la, lb = mech._prepare(x), mech._prepare(x2)
    n = la.size
    from smoothdp.central.quantiles import log_weight_margin

    eta = log_weight_margin(epsilon=mech.epsilon, n=n, width=hi - lo)
    coef = 0.5 * (mech.epsilon - 4.0 * eta)
    y = _pieces(la, lb, lo, hi)
    t = mech.coverage * n
    return float(
        np.max(np.abs(_log_em_density(la, lo, hi, t, coef, y) - _log_em_density(lb, lo, hi, t, coef, y)))
    )


def quantile_cases() -> list[Any]:
    """The cases (built on call: mechanism_cases imports this module at its end)."""
    from mechanism_cases import Case, _attr_times, _substitution_pairs

    from smoothdp.central import ExponentialQuantile, JointQuantiles, PrivateRange, RecursiveQuantiles

    data = np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3])
    bad_eps = [({"epsilon": 0.0}, ValueError, "epsilon"), ({"epsilon": -1.0}, ValueError, "epsilon")]
    return [
        Case(
            mechanism=ExponentialQuantile,
            label="median, continuous",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": None, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(4, GRID),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
                ({"numerics": "fast"}, ValueError, "numerics"),
                ({"clamp": "yes"}, TypeError, "clamp"),
            ],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="median, lattice 0.25, ties",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.5, **{"epsilon": epsilon, "bounds": BOUNDS, "lattice": 0.25, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.5, 0.75, 0.3]),
            neighbours=lambda: _substitution_pairs(4, (0.0, 0.1, 0.25, 0.5, 0.55, 1.0)),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"lattice": 1 / 3}, ValueError, "lattice"),
                ({"lattice": 0.0}, ValueError, "lattice"),
                ({"lattice": "1"}, ValueError, "lattice"),
                ({"lattice": True}, TypeError, "lattice"),
            ],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="q=0.4, multiscale default, ties at tenths and halves",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.4, **{"epsilon": epsilon, "bounds": BOUNDS, **kw}
            ),
            data=np.array([0.3, 0.3, 0.5, 0.5, 0.25, 0.71]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.3, 0.5, 0.55, 0.71, 1.0)),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"lattice": []}, ValueError, "lattice")],
        ),
        Case(
            mechanism=ExponentialQuantile,
            label="q=0.3, candidates",
            build=lambda epsilon, **kw: ExponentialQuantile(
                0.3, **{"epsilon": epsilon, "bounds": BOUNDS, "candidates": [0.0, 0.1, 0.5, 0.75, 1.0], **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(4, GRID),
            privacy_loss=em_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"candidates": [2.0]}, ValueError, "candidates")],
        ),
        Case(
            mechanism=RecursiveQuantiles,
            build=lambda epsilon, **kw: RecursiveQuantiles(
                **{"qs": [0.25, 0.75], "epsilon": epsilon, "bounds": BOUNDS, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.1, 0.5, 1.0)),
            privacy_loss=recursive_loss,
            broken=_attr_times("epsilon", 3.0),
            bad_parameters=[*bad_eps, ({"qs": [1.5]}, ValueError, "qs")],
            epsilon=2.0,
        ),
        Case(
            mechanism=JointQuantiles,
            label="continuum",
            build=lambda epsilon, **kw: JointQuantiles(
                **{"qs": [0.25, 0.75], "epsilon": epsilon, "bounds": BOUNDS, "lattice": None, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.1, 0.5, 1.0)),
            privacy_loss=joint_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"qs": []}, ValueError, "qs")],
            epsilon=2.0,
        ),
        Case(
            mechanism=PrivateRange,
            build=lambda epsilon, **kw: PrivateRange(
                **{"epsilon": epsilon, "scale": 1.0, "octaves": 4, **kw}
            ),
            data=data * 10,
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.3, 1.0, 5.0, 100.0)),
            privacy_loss=range_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"scale": 0.0}, ValueError, "scale"),
                ({"octaves": 0}, ValueError, "octaves"),
                ({"coverage": 1.0}, ValueError, "coverage"),
            ],
        ),
    ]
