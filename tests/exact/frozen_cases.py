"""Frozen inputs of the exact release path, for the bit-for-bit regression test.

Every case is a function of a seed that releases through the public exact path (``sample``, ``add_noise``,
``uniform_on_grid``, geo ``privatize``) or the engine (``_core.run``) and returns the released floats.
``frozen_releases.json`` holds, per case and seed, the SHA-256 of those floats and their first values,
**recorded by the release path as it was before the fused kernel** (commit c12560b, by
``make_frozen_releases.py`` run against that commit's ``src``). ``test_frozen_releases.py`` recomputes
every case with the current code and compares: the released values must not change for a given stream.

The cases cover every family and both paths of the engine: the float fast path (large draws), the arb
slow path (a grid so fine that every element goes there), refinement of the uniforms (elements whose
64-bit box straddles a rounding boundary on that grid), rejection (generalized Cauchy), exact centers
(``Fraction``, object arrays, refinable ``Enclosure``), S = 0, tiny and huge S (overflow to ±inf),
planar noise, and the geo mechanisms block by block.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from smoothdp.exact import Enclosure, OutputGrid, add_noise, uniform_on_grid
from smoothdp.noise import (
    Gaussian,
    GeneralizedCauchy,
    Laplace,
    NoiseDistribution,
    PlanarLaplace,
    PolyPlace,
    StudentT,
)
from smoothdp.rng import default_rng

Case = Callable[[int], np.ndarray]

SEEDS = (11, 12)

_FAMILIES: dict[str, NoiseDistribution] = {
    "laplace-1": Laplace(1.0),
    "laplace-3e-5": Laplace(3e-5),
    "gaussian-1": Gaussian(1.0),
    "gaussian-250": Gaussian(250.0),
    "polyplace-9-9": PolyPlace(9.0, 9.0),
    "polyplace-1-near1": PolyPlace(1.0, 1.0 + 1e-6),
    "polyplace-2-3": PolyPlace(2.0, 3.0),
    "polyplace-1-1e6": PolyPlace(1.0, 1e6),
    "student_t-3": StudentT(3.0),
    "student_t-7.5": StudentT(7.5),
    "student_t-0.5": StudentT(0.5, scale=4.0),
    "cauchy-4": GeneralizedCauchy(4.0),
    "cauchy-2": GeneralizedCauchy(2.0),
    "cauchy-2.5": GeneralizedCauchy(2.5),
    "cauchy-1.5": GeneralizedCauchy(1.5),
    "cauchy-3": GeneralizedCauchy(3.0),
    "planar-1": PlanarLaplace(1.0),
}

#: Every element goes to the slow path on this grid (relative spacing 2⁻⁵², far below the fast path's
#: error), and about 2⁻¹⁰ of them straddle a boundary with their first 64 bits (refinement).
FINE_GRID = OutputGrid(exponent=-1000, precision=52)


def _sample(dist: NoiseDistribution, n: int) -> Case:
    return lambda seed: np.asarray(dist.sample(n, default_rng(seed)), dtype=np.float64)


def _fine(dist: NoiseDistribution, n: int) -> Case:
    center = np.zeros(2) if dist.dimension == 2 else 0.0
    return lambda seed: np.asarray(
        add_noise(center, dist, grid=FINE_GRID, rng=default_rng(seed), size=n), dtype=np.float64
    )


def _centers(dist: NoiseDistribution) -> Case:
    """Float centers and an array of S with zeros, tiny and huge values, on a grid of exponent 4."""

    def run(seed: int) -> np.ndarray:
        gen = np.random.default_rng(seed)
        c = gen.normal(0.0, 10.0, 3000)
        s = gen.exponential(1.0, 3000)
        s[::17] = 0.0
        s[5::23] = 1e-300
        s[7::29] = 1e300
        s[9::31] = 2.0**-40
        return np.asarray(
            add_noise(c, dist, grid=OutputGrid(4), rng=default_rng(seed), sensitivity=s), dtype=np.float64
        )

    return run


def _fraction_center(seed: int) -> np.ndarray:
    out = add_noise(Fraction(1, 3), StudentT(3.0), grid=OutputGrid(2), rng=default_rng(seed), size=(4, 500))
    return np.asarray(out, dtype=np.float64).reshape(-1)


def _object_center(seed: int) -> np.ndarray:
    c = np.array([Fraction(k, 7) for k in range(-20, 20)], dtype=object)
    out = add_noise(c, PolyPlace(0.5, 4.0), grid=OutputGrid(3), rng=default_rng(seed), sensitivity=0.25)
    return np.asarray(out, dtype=np.float64)


def _enclosure_center(dist: NoiseDistribution) -> Case:
    """A refinable enclosure [v − 2⁻⁴⁰, v + 2⁻⁴⁰] of v = k/3 on a grid of spacing 2⁻⁴⁰ below 2¹⁰: every
    enclosure straddles a boundary, so the slow path refines the center (to k/3 exactly)."""

    def run(seed: int) -> np.ndarray:
        k = np.arange(-300, 300)
        v = k / 3.0
        lower, upper = v - 2.0**-40, v + 2.0**-40

        def refine(i: int, bits: int) -> Fraction:
            return Fraction(int(k[i]), 3)

        s = np.full(k.shape, 2.0**-30)
        s[::3] = 1.0
        center = Enclosure(lower, upper, refine)
        out = add_noise(center, dist, grid=OutputGrid(10, 50), rng=default_rng(seed), sensitivity=s)
        return np.asarray(out, dtype=np.float64)

    return run


def _midpoint_enclosure(seed: int) -> np.ndarray:
    lower = np.linspace(-3.0, 3.0, 500)
    upper = lower + 2.0**-45
    out = add_noise(Enclosure(lower, upper), Laplace(1e-9), grid=OutputGrid(2, 50), rng=default_rng(seed))
    return np.asarray(out, dtype=np.float64)


def _planar_centers(seed: int) -> np.ndarray:
    c = np.random.default_rng(seed).normal(0.0, 3.0, (1500, 2))
    s = np.linspace(0.0, 2.0, 1500)
    out = add_noise(c, PlanarLaplace(0.7), grid=OutputGrid(3), rng=default_rng(seed), sensitivity=s)
    return np.asarray(out, dtype=np.float64).reshape(-1)


def _uniform(seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    lo = gen.normal(0.0, 5.0, 4000)
    hi = lo + gen.exponential(2.0, 4000)
    hi[::13] = lo[::13]
    return np.asarray(uniform_on_grid(lo, hi, grid=OutputGrid(4), rng=default_rng(seed)), dtype=np.float64)


def _uniform_fine(seed: int) -> np.ndarray:
    lo = np.linspace(-1.0, 1.0, 1000)
    return np.asarray(uniform_on_grid(lo, lo + 0.5, grid=FINE_GRID, rng=default_rng(seed)), dtype=np.float64)


def _geo(noise: str, query: str, n: int, **options: float) -> Case:
    def run(seed: int) -> np.ndarray:
        from smoothdp.geo import SmoothSensitivityMechanism, SoftThreshold, TwoWayThreshold

        gen = np.random.default_rng(seed)
        if query == "soft":
            q: SoftThreshold | TwoWayThreshold = SoftThreshold(10_000.0, 1_600.0)
            x = gen.lognormal(9.2, 0.5, n)
        else:
            q = TwoWayThreshold([10_000.0, 10_000.0], 1_600.0)
            x = gen.normal(10_000.0, 3_000.0, (n, 2))
        mech = SmoothSensitivityMechanism(q, epsilon=1 / 800, noise=noise, **options)
        return np.asarray(mech.privatize(x, rng=default_rng(seed)), dtype=np.float64).reshape(-1)

    return run


def _geo_baselines(seed: int) -> np.ndarray:
    from smoothdp.geo import GlobalLipschitz, NoiseAPriori, SoftThreshold, TwoWayThreshold

    gen = np.random.default_rng(seed)
    x1 = gen.lognormal(9.2, 0.5, 20_000)
    x2 = gen.normal(10_000.0, 3_000.0, (5_000, 2))
    lipschitz = GlobalLipschitz(SoftThreshold(10_000.0, 1_600.0), epsilon=1 / 800)
    a_priori = NoiseAPriori(TwoWayThreshold([1e4, 1e4], 1_600.0), epsilon=1 / 800)
    a = lipschitz.privatize(x1, rng=default_rng(seed))
    b = a_priori.privatize(x2, rng=default_rng(seed))
    return np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b).reshape(-1)])


CASES: dict[str, Case] = {
    **{f"sample/{name}": _sample(dist, 20_000) for name, dist in _FAMILIES.items()},
    **{
        f"fine/{name}": _fine(_FAMILIES[name], 600)
        for name in (
            "laplace-1",
            "gaussian-1",
            "polyplace-9-9",
            "polyplace-1-near1",
            "student_t-3",
            "student_t-0.5",
            "cauchy-4",
            "cauchy-2.5",
            "planar-1",
        )
    },
    **{
        f"centers/{name}": _centers(_FAMILIES[name])
        for name in (
            "laplace-1",
            "gaussian-1",
            "polyplace-2-3",
            "student_t-3",
            "cauchy-4",
            "cauchy-1.5",
        )
    },
    "fraction-center": _fraction_center,
    "object-center": _object_center,
    "enclosure/laplace": _enclosure_center(Laplace(1.0)),
    "enclosure/student_t": _enclosure_center(StudentT(3.0)),
    "enclosure/cauchy": _enclosure_center(GeneralizedCauchy(4.0)),
    "enclosure-midpoint": _midpoint_enclosure,
    "planar-centers": _planar_centers,
    "uniform": _uniform,
    "uniform-fine": _uniform_fine,
    "geo/soft/polyplace": _geo("polyplace", "soft", 70_000),
    "geo/soft/student_t": _geo("student_t", "soft", 70_000),
    "geo/soft/cauchy": _geo("cauchy", "soft", 70_000),
    "geo/soft/laplace": _geo("laplace", "soft", 70_000, delta=1e-6),
    "geo/two-way/polyplace": _geo("polyplace", "two-way", 20_000),
    "geo/two-way/student_t": _geo("student_t", "two-way", 10_000),
    "geo/baselines": _geo_baselines,
}


def digest(values: np.ndarray) -> str:
    """SHA-256 of the released floats (C order, little-endian float64)."""
    import hashlib

    data = np.ascontiguousarray(values, dtype="<f8")
    return hashlib.sha256(data.tobytes()).hexdigest()
