"""What the public atoms cost on continuous data, and what they buy on tied data: the exact median |error| of
the exponential-mechanism quantile (``ExponentialQuantile``) from its closed-form law, no sampling.

Run: ``.venv/bin/python benchmarks/bench_lattice_cost.py [--quick]``. For each data set, ε and ``lattice``
(None: the continuum; 1.0: the integers; ``"multiscale"``: the default) it prints the median of |Y − x_(r)|
under the mechanism's law at ε′ (docs/theory/quantiles.md#a-multi-scale-lattice). Continuous data: normal
samples at several scales, each shifted by 20 public offsets so that the quantile lands anywhere relative
to the atoms; the table gives the mean and the largest ratio of the error to the continuum's.

The law: gap j (between padded order statistics) has mass |I_j| + Σ c_ℓ·m_ℓj and weight
mass·e^{−coef|j − t|}; a knot (a distinct value that is an atom) has weight μ({v})·e^{−coef·dist}. Inside a
gap the continuum is uniform and the atoms of a level equally likely, so P(|Y − m| ≤ r) is a sum of
overlaps and of atom counts in [m − r, m + r], computed exactly by the levels' own counting.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles import ExponentialQuantile, target_rank
from smoothdp.central.quantiles.atoms import Atoms, build_atoms, check_lattice


def _law(
    x: NDArray[np.float64], lower: float, upper: float, q: float, epsilon: float, lattice: object
) -> Callable[[float, float], float]:
    """r ↦ P(|Y − m| ≤ r) for the mechanism's law on x (sorted), m given at call time."""
    mech = ExponentialQuantile(q, epsilon=epsilon, bounds=(lower, upper), lattice=lattice)  # type: ignore[arg-type]
    n = x.size
    coef = 0.5 * mech.epsilon_used(n)
    t = target_rank(q, n)
    atoms: Atoms | None = build_atoms(check_lattice(lattice))
    edges = np.concatenate(([lower], x, [upper]))
    lengths = np.diff(edges)
    if atoms is None:
        gap_mass = np.zeros(lengths.size)
        knot_mass = np.zeros(edges.size)
    else:
        _, gap_mass, knot_mass = atoms.scan(edges)
    j = np.arange(lengths.size, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_gap = np.log(lengths + gap_mass) - coef * np.abs(j - t)
    new = np.concatenate(([True], edges[1:] != edges[:-1]))
    starts = np.flatnonzero(new)
    ends = np.concatenate((starts[1:], [n + 2])) - 1
    keep = knot_mass[starts] > 0
    below = np.maximum(starts[keep] - 1, 0)
    at_most = np.minimum(ends[keep], n)
    dist = np.maximum(0.0, np.maximum(below - t, t - at_most))
    with np.errstate(divide="ignore"):
        log_knot = np.log(knot_mass[starts[keep]]) - coef * dist
    knots = edges[starts[keep]]
    top = max(float(np.max(log_gap)), float(np.max(log_knot)) if log_knot.size else -np.inf)
    z = float(np.sum(np.exp(log_gap - top)) + np.sum(np.exp(log_knot - top)))
    p_gap = np.exp(log_gap - top) / z
    p_knot = np.exp(log_knot - top) / z
    live = p_gap > 1e-16
    lo, hi = edges[:-1][live], edges[1:][live]
    pg, gm = p_gap[live], (lengths + gap_mass)[live]

    def cdf(m: float, r: float) -> float:
        a, b = np.maximum(lo, m - r), np.minimum(hi, m + r)
        overlap = np.maximum(0.0, b - a)
        inside = overlap.copy()
        if atoms is not None:
            for level, c in zip(atoms.levels, atoms.masses, strict=True):
                # atoms of the level in the gap and in [m − r, m + r]: points of (lo, hi) ∩ [a, b]
                first = np.maximum(level.floor(np.maximum(lo, np.nextafter(a, -np.inf))) + 1.0, -level.reach)
                last = np.minimum(level.floor(np.minimum(np.nextafter(hi, -np.inf), b)), level.reach)
                inside = inside + c * np.maximum(0.0, last - first + 1.0) * (overlap > 0)
        return float(np.sum(pg * np.where(gm > 0, inside / np.where(gm > 0, gm, 1.0), 0.0))) + float(
            np.sum(p_knot[np.abs(knots - m) <= r])
        )

    return cdf


def median_abs_error(
    x: NDArray[np.float64], bounds: tuple[float, float], q: float, epsilon: float, lattice: object
) -> float:
    xs = np.sort(np.asarray(x, dtype=np.float64))
    m = float(np.quantile(xs, q, method="inverted_cdf"))
    cdf = _law(xs, bounds[0], bounds[1], q, epsilon, lattice)
    if cdf(m, 0.0) >= 0.5:
        return 0.0
    lo, hi = 0.0, bounds[1] - bounds[0]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if cdf(m, mid) >= 0.5 else (mid, hi)
    return hi


LATTICES: tuple[object, ...] = (None, 1.0, "multiscale")


def continuous(quick: bool) -> None:
    print("continuous data: N(μ, σ²), 20 public shifts; ratio of the median |error| to the continuum's")
    print("| n | σ | ε | continuum | integers: mean ratio (max) | multiscale: mean ratio (max) |")
    print("|---|---|---|---|---|---|")
    ns = (100, 1000) if quick else (100, 1000, 10_000, 100_000)
    scales = (0.01, 1.0) if quick else (0.01, 0.1, 1.0, 10.0)
    for n in ns:
        base = np.random.default_rng(n).normal(0.0, 1.0, n)
        for sigma in scales:
            for eps in (0.1, 0.5, 1.0, 2.0):
                errs = {lat: [] for lat in LATTICES}
                for shift in np.linspace(0.0, 1.0, 6 if quick else 20, endpoint=False):
                    x = 3.0 + shift + sigma * base  # the quantile anywhere relative to the atoms
                    bounds = (-100.0 * max(sigma, 1.0), 100.0 * max(sigma, 1.0))
                    for lat in LATTICES:
                        errs[lat].append(median_abs_error(x, bounds, 0.5, eps, lat))
                cont = np.array(errs[None])
                cells = []
                for lat in LATTICES[1:]:
                    ratio = np.array(errs[lat]) / cont
                    cells.append(f"{ratio.mean():.3f} ({ratio.max():.2f})")
                print(
                    f"| {n} | {sigma:g} | {eps:g} | {np.median(cont):.3g} | {cells[0]} | {cells[1]} |",
                    flush=True,
                )


def tied(quick: bool) -> None:
    print("\ntied data: median |error| (0 = the tied value itself in more than half of the releases)")
    gen = np.random.default_rng(7)
    rows = {
        "200 × 62.5, bounds (0, 125)": (np.full(200, 62.5), (0.0, 125.0)),
        "200 × 9.99, bounds (0, 100)": (np.full(200, 9.99), (0.0, 100.0)),
        "half-years 0.5..23, n = 1000, bounds (0, 50)": (
            gen.choice(
                [0.5, 2.5, 6.0, 9.0, 13.0, 16.5, 23.0], 1000, p=[0.1, 0.2, 0.25, 0.2, 0.12, 0.08, 0.05]
            ),
            (0.0, 50.0),
        ),
        "temperatures to 0.1, n = 1000, bounds (-50, 60)": (
            np.round(gen.normal(15.0, 8.0, 1000), 1),
            (-50.0, 60.0),
        ),
        "prices to the cent, n = 1000, bounds (0, 1000)": (
            np.round(np.exp(gen.normal(3.0, 1.0, 1000)), 2),
            (0.0, 1000.0),
        ),
    }
    print("| data | ε | continuum | integers | multiscale |")
    print("|---|---|---|---|---|")
    for name, (x, bounds) in rows.items():
        for eps in (0.1, 0.5, 1.0, 2.0):
            vals = [median_abs_error(x, bounds, 0.5, eps, lat) for lat in LATTICES]
            print(f"| {name} | {eps:g} | " + " | ".join(f"{v:.3g}" for v in vals) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    tied(args.quick)
    continuous(args.quick)


if __name__ == "__main__":
    main()
