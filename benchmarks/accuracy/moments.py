"""Means and variances: the data sets, the true values and the methods of the moments cells.

Each data set is a row family of the table like the quantile ones (``benchmarks.accuracy.datasets``), with
``kind`` ``"mean"`` or ``"var"`` and ``truth`` the exact statistic of the data: ``numpy.mean`` and
``numpy.var(ddof=1)`` (the sample variance, smoothdp's default; diffprivlib's population variance is
rescaled by n/(n − 1), post-processing with the public n). ``release_bounds`` is what "inside the bounds"
means for the release: the data bounds for a mean, [0, (u − l)²n/(4(n − 1))] for a variance.

Neighbours: substitution (one record changed, n public) for everyone, at the same ε.

* smoothdp: ``smoothdp.mean`` / ``smoothdp.var`` with every argument default (the row ``smoothdp``), and
  ``method=`` ``"clipped"``, ``"private_range"``; for the mean also ``"smooth_sensitivity"`` (the former
  default: the add/remove mean at ε/2). ``smoothdp.trimmed_mean(x, 0.05)`` (against the mean) is
  available as :func:`trimmed_method` and left out of the default run (0.59 on Adult ages at every ε:
  its target is not the mean of skewed data).
* diffprivlib 0.6.6: ``tools.mean(x, epsilon=, bounds=)`` (Laplace((u − l)/(nε)) truncated into the bounds:
  ε-DP under substitution, n public) and ``tools.var(x, epsilon=, bounds=)·n/(n − 1)`` (LaplaceBoundedDomain
  with sensitivity (u − l)²(n − 1)/n²).
* OpenDP 0.16: sized vector domain (n public), ``then_clamp(bounds) >> then_mean()`` (or
  ``then_variance(ddof=1)``) ``>> then_laplace(s)``, s from ``binary_search_chain(..., d_in=2, d_out=ε)``
  (substitution is symmetric distance 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from benchmarks.accuracy.methods import Method, Release
from numpy.typing import NDArray

__all__ = [
    "MOMENT_KINDS",
    "TRIAL_FACTOR",
    "MomentDataset",
    "build_moment_datasets",
    "moment_methods",
    "trimmed_method",
]

MOMENT_KINDS = ("mean", "var")
#: Moments cells run TRIAL_FACTOR times the harness's trials (cheap releases; at 200 trials the median
#: |error| of a mechanism equal to the better of two competitors' exceeds theirs by 10% in a quarter of the
#: cells, at 1000 in about one cell in ten).
TRIAL_FACTOR = 5
SYNTHETIC_SEED = 20261127


@dataclass(frozen=True)
class MomentDataset:
    """A mean or variance row: the interface of :class:`benchmarks.accuracy.datasets.Dataset` that the
    harness uses (``name``, ``x``, ``bounds``, ``kind``, ``truth``, ``n``), plus ``release_bounds``."""

    name: str
    x: NDArray[np.float64]
    bounds: tuple[float, float]
    description: str
    kind: str
    qs: tuple[float, ...] = ()
    grid: str = "linear"
    truth: NDArray[np.float64] = field(init=False, repr=False, compare=False)
    release_bounds: tuple[float, float] = field(init=False, repr=False, compare=False)
    trial_factor: int = TRIAL_FACTOR

    def __post_init__(self) -> None:
        lo, hi = self.bounds
        if not (np.all(self.x >= lo) and np.all(self.x <= hi)):
            raise ValueError(f"data set {self.name!r}: data outside its declared bounds {self.bounds}")
        if self.kind == "mean":
            truth, out = float(np.mean(self.x)), self.bounds
        else:
            n = self.x.size
            top = (Fraction(hi) - Fraction(lo)) ** 2 * n / (4 * (n - 1))  # the exact largest variance
            ceiling = float(top) if Fraction(float(top)) >= top else math.nextafter(float(top), math.inf)
            truth, out = float(np.var(self.x, ddof=1)), (0.0, ceiling)
        object.__setattr__(self, "truth", np.array([truth]))
        object.__setattr__(self, "release_bounds", out)

    @property
    def n(self) -> int:
        return int(self.x.size)


def _columns() -> dict[str, tuple[NDArray[np.float64], tuple[float, float], str]]:
    from smoothdp.data import load_adult_ages, load_ca_incomes, load_csv

    adult = load_csv("adult")
    nyc = load_csv("nyc_collisions_sample")
    lat, lon = nyc["latitude"], nyc["longitude"]
    keep = np.isfinite(lat) & np.isfinite(lon)
    rng = np.random.default_rng(SYNTHETIC_SEED)
    base = np.random.default_rng(20240612)  # the quantile cells' N(1.2, 1) and bimodal samples
    normal_100, normal_1000 = base.normal(1.2, 1.0, 100), base.normal(1.2, 1.0, 1000)
    bimodal = np.concatenate([base.normal(-10.0, 1.0, 500), base.normal(10.0, 1.0, 501)])
    ties = np.repeat(np.arange(6.0), [100, 150, 200, 300, 150, 100])
    at_upper = np.concatenate([rng.uniform(0.0, 50.0, 950), np.full(50, 100.0)])
    wide = (-1.0e4, 1.0e4)
    ages, incomes = load_adult_ages(), load_ca_incomes()
    hours = np.asarray(adult["hours_per_week"], dtype=np.float64)
    gains = np.asarray(adult["capital_gain"], dtype=np.float64)
    return {
        "adult_age": (ages, (0.0, 125.0), f"UCI Adult ages, n = {ages.size}"),
        "adult_hours": (hours, (0.0, 168.0), f"UCI Adult hours per week (40 for 47%), n = {hours.size}"),
        "adult_capital_gain": (
            gains,
            (0.0, 1.0e5),
            f"UCI Adult capital gains (92% zeros, top-coded at 99999), n = {gains.size}",
        ),
        "ca_income": (incomes, (-1.0e5, 1.0e7), f"CA 2000 PUMS person incomes (USD), n = {incomes.size}"),
        "nyc_latitude": (lat[keep], (40.25, 41.15), f"NYC collision latitudes, n = {int(keep.sum())}"),
        "nyc_longitude": (lon[keep], (-74.5, -73.45), f"NYC collision longitudes, n = {int(keep.sum())}"),
        "normal_n100": (normal_100, wide, "N(1.2, 1), n = 100"),
        "normal_n1000": (normal_1000, wide, "N(1.2, 1), n = 1000"),
        "ties_0_5": (ties, (0.0, 10.0), "integers 0..5, counts 100/150/200/300/150/100 (10% at the bound 0)"),
        "bimodal_gap": (bimodal, wide, "500 × N(−10, 1) + 501 × N(10, 1)"),
        "lognormal": (rng.lognormal(3.0, 1.5, 1000), (0.0, 1.0e6), "exp(N(3, 1.5²)), n = 1000 (heavy tail)"),
        "pareto": (1000.0 * (rng.pareto(1.5, 2000) + 1.0), (0.0, 1.0e7), "1000·Pareto(1.5), n = 2000"),
        "at_upper_5pct": (at_upper, (0.0, 100.0), "950 × U(0, 50) + 50 at the upper bound 100"),
        "far_from_zero": (rng.normal(1000.0, 10.0, 200), wide, "N(1000, 10), n = 200, far from 0"),
        "small_n40": (rng.exponential(10.0, 40), (0.0, 1000.0), "Exp(mean 10), n = 40, wide bounds"),
    }


def build_moment_datasets() -> list[MomentDataset]:
    """Every column twice: its mean and its (sample) variance."""
    rows = []
    for name, (x, bounds, desc) in _columns().items():
        for kind in MOMENT_KINDS:
            rows.append(
                MomentDataset(
                    f"{name}_{kind}",
                    np.asarray(x, dtype=np.float64),
                    bounds,
                    f"{desc}, bounds {bounds}: {kind}",
                    kind,
                )
            )
    return rows


def _value(release: Any) -> NDArray[np.float64]:
    return np.atleast_1d(np.asarray(getattr(release, "value", release), dtype=np.float64))


# --------------------------------------------------------------------------------------------- smoothdp
def _smoothdp(method: str | None) -> Any:
    def prepare(ds: MomentDataset, epsilon: float, seed: int) -> Release:
        import smoothdp
        from smoothdp.rng import default_rng

        gen = default_rng(seed)  # seeded: a simulation, as a benchmark must be
        kw: dict[str, Any] = {} if method is None else {"method": method}
        f = smoothdp.mean if ds.kind == "mean" else smoothdp.var
        if method == "smooth_sensitivity" and ds.kind != "mean":
            raise ValueError("method must be one of the variance's")  # reported as not applicable
        return lambda: _value(f(ds.x, epsilon=epsilon, bounds=ds.bounds, rng=gen, **kw))

    return prepare


def _trimmed(ds: MomentDataset, epsilon: float, seed: int) -> Release:
    import smoothdp
    from smoothdp.rng import default_rng

    if ds.kind != "mean":
        raise ValueError("method must be one of the mean's")
    gen = default_rng(seed)
    return lambda: _value(smoothdp.trimmed_mean(ds.x, 0.05, epsilon=epsilon, bounds=ds.bounds, rng=gen))


# ------------------------------------------------------------------------------------------ competitors
def _diffprivlib(ds: MomentDataset, epsilon: float, seed: int) -> Release:
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.tools import mean, var

    state = np.random.RandomState(seed)
    acc = BudgetAccountant()
    kw = {"epsilon": epsilon, "bounds": ds.bounds, "random_state": state, "accountant": acc}
    if ds.kind == "mean":
        return lambda: _value(mean(ds.x, **kw))
    scale = ds.n / (ds.n - 1.0)  # diffprivlib's var is the population variance; the sample one, rescaled
    return lambda: scale * _value(var(ds.x, **kw))


def _opendp(ds: MomentDataset, epsilon: float, seed: int) -> Release:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=ds.n), dp.symmetric_distance()
    stat = dp.t.then_mean() if ds.kind == "mean" else dp.t.then_variance(ddof=1)
    measurement = dp.binary_search_chain(
        lambda s: space >> dp.t.then_clamp(ds.bounds) >> stat >> dp.m.then_laplace(s), d_in=2, d_out=epsilon
    )
    data = np.ascontiguousarray(ds.x, dtype=np.float64)  # OpenDP takes float64 arrays (faster than a list)
    return lambda: _value(measurement(data))


def trimmed_method() -> Method:
    """The 5%-trimmed mean, measured against the mean (not in the default run)."""
    return Method(
        "smoothdp:trimmed_5%",
        "smoothdp",
        "smoothdp",
        _trimmed,
        "smoothdp.trimmed_mean(x, 0.05, epsilon=, bounds=) (a trimmed mean, against the mean)",
    )


def moment_methods() -> list[Method]:
    """smoothdp's default and named methods, then diffprivlib and OpenDP."""
    default = "smoothdp.mean / smoothdp.var(x, epsilon=, bounds=, rng=seeded), every other argument default"
    out = [Method("smoothdp", "smoothdp", "default", _smoothdp(None), default)]
    for name in ("clipped", "private_range", "smooth_sensitivity"):
        out.append(Method(f"smoothdp:{name}", "smoothdp", "smoothdp", _smoothdp(name), f"method={name!r}"))
    out.append(
        Method(
            "diffprivlib",
            "diffprivlib",
            "competitor",
            _diffprivlib,
            "diffprivlib.tools.mean / var(x, epsilon=, bounds=) (var rescaled by n/(n − 1))",
        )
    )
    out.append(
        Method(
            "opendp",
            "opendp",
            "competitor",
            _opendp,
            "sized domain >> then_clamp >> then_mean / then_variance(ddof=1) >> then_laplace, "
            "scale by binary_search_chain(d_in=2, d_out=ε)",
        )
    )
    return out
