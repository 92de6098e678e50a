"""Accuracy of private means: smoothdp against diffprivlib, same data, same ε, same neighbour relation.

Run: ``nice -n 10 .venv/bin/python benchmarks/accuracy_means.py [--trials 200]``; writes
benchmarks/results/accuracy_means.md (do not edit it by hand).

Every method is compared under **substitution** neighbours (one record replaced, n public) at the same ε,
which is diffprivlib's relation: ``diffprivlib.tools.mean`` adds Laplace noise of scale (u − l)/(n·ε) to
the clipped mean (sensitivity (u − l)/n, n taken as public) and truncates the result into the bounds
(``LaplaceTruncated``): pure ε-DP under substitution. smoothdp's add/remove mechanisms (``smoothdp.mean``,
``GlobalSensitivityMean``) are run at ε/2: ε/2-DP under add/remove implies ε-DP under substitution
(a substitution is one removal and one addition; group privacy,
docs/theory/privacy-definitions.md#converting-between-neighbour-relations).

Error: |released − true mean| for every method, the trimmed means included (what a user who wants the
mean gets); a second table gives the trimmed means' error against their own target (the trimmed mean).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import sys
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import smoothdp
from smoothdp.central import GlobalSensitivityMean
from smoothdp.central.moments.private_clip import private_clip_mean
from smoothdp.data import load_adult_ages, load_ca_incomes

EPSILONS = (0.1, 0.5, 1.0, 2.0)
SYNTHETIC_SEED = 20240612  # the seed of benchmarks/accuracy/datasets.py: the same N(1.2, 1) samples
OUT = Path(__file__).resolve().parent / "results" / "accuracy_means.md"


@dataclass(frozen=True)
class Data:
    name: str
    x: NDArray[np.float64]
    bounds: tuple[float, float]
    description: str

    @property
    def mean(self) -> float:
        return float(np.mean(self.x))


def datasets() -> list[Data]:
    rng = np.random.default_rng(SYNTHETIC_SEED)
    normal_100 = rng.normal(1.2, 1.0, 100)
    normal_1000 = rng.normal(1.2, 1.0, 1000)
    heavy = np.random.default_rng(SYNTHETIC_SEED + 1).lognormal(3.0, 1.5, 1000)
    ages, incomes = load_adult_ages(), load_ca_incomes()
    return [
        Data("adult_age", ages, (0.0, 125.0), f"UCI Adult ages, n = {ages.size}, bounds (0, 125)"),
        Data(
            "ca_income",
            incomes,
            (-1.0e5, 1.0e7),
            f"CA 2000 PUMS incomes, n = {incomes.size}, bounds (−1e5, 1e7)",
        ),
        Data("normal_n100", normal_100, (-1.0e4, 1.0e4), "N(1.2, 1), n = 100, bounds ±1e4"),
        Data("normal_n1000", normal_1000, (-1.0e4, 1.0e4), "N(1.2, 1), n = 1000, bounds ±1e4"),
        Data(
            "lognormal_n1000",
            heavy,
            (0.0, 1.0e6),
            "lognormal exp(N(3, 1.5²)), n = 1000, bounds (0, 1e6) (median 21.7, max 1.76e4)",
        ),
    ]


Release = Callable[[Data, float, np.random.Generator], float]


def _diffprivlib(d: Data, eps: float, rng: np.random.Generator) -> float:
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.tools import mean as dpl_mean

    state = np.random.RandomState(int(rng.integers(2**32)))
    return float(
        dpl_mean(d.x, epsilon=eps, bounds=d.bounds, random_state=state, accountant=BudgetAccountant())
    )


def _smooth_mean(d: Data, eps: float, rng: np.random.Generator) -> float:
    return float(smoothdp.mean(d.x, epsilon=eps / 2.0, bounds=d.bounds, neighbours="add_remove", rng=rng))


def _trimmed(trim: float) -> Release:
    def run(d: Data, eps: float, rng: np.random.Generator) -> float:
        return float(smoothdp.trimmed_mean(d.x, trim, epsilon=eps, bounds=d.bounds, rng=rng))

    return run


def _gs_mean(d: Data, eps: float, rng: np.random.Generator) -> float:
    mech = GlobalSensitivityMean(bounds=d.bounds, epsilon=eps / 2.0)
    value = float(mech.release(d.x, rng=rng).value)
    lo, hi = d.bounds
    return float(np.clip(value, lo, hi)) if np.isfinite(value) else 0.5 * (lo + hi)  # clamping: free


def _private_clip(d: Data, eps: float, rng: np.random.Generator) -> float:
    return float(private_clip_mean(d.x, epsilon=eps, bounds=d.bounds, rng=rng))


METHODS: dict[str, tuple[Release, str]] = {
    "diffprivlib": (
        _diffprivlib,
        "diffprivlib.tools.mean(x, epsilon=ε, bounds=): Laplace((u−l)/(nε)), truncated",
    ),
    "private_clip": (_private_clip, "smoothdp.private_clip_mean(x, epsilon=ε, bounds=) (new)"),
    "smooth_mean": (
        _smooth_mean,
        "smoothdp.mean(x, epsilon=ε/2, bounds=, neighbours='add_remove') (add/remove ε/2 ⇒ substitution ε)",
    ),
    "gs_mean": (_gs_mean, "GlobalSensitivityMean(bounds=, epsilon=ε/2): noisy sum / noisy count, clamped"),
    "trimmed_5%": (_trimmed(0.05), "smoothdp.trimmed_mean(x, 0.05, epsilon=ε, bounds=)"),
    "trimmed_10%": (_trimmed(0.10), "smoothdp.trimmed_mean(x, 0.10, epsilon=ε, bounds=)"),
}


def _seed(base: int, *parts: object) -> int:
    return (base * 1_000_003 + zlib.crc32("|".join(map(repr, parts)).encode())) % 2**32


def trimmed_target(x: NDArray[np.float64], trim: float) -> float:
    m = int(np.floor(trim * x.size))
    s = np.sort(x)
    return float(np.mean(s[m : x.size - m]))


def run(
    trials: int, base_seed: int
) -> tuple[dict[tuple[str, float, str], NDArray[np.float64]], dict[str, float]]:
    values: dict[tuple[str, float, str], NDArray[np.float64]] = {}
    ms: dict[str, list[float]] = {m: [] for m in METHODS}
    for d in datasets():
        for eps in EPSILONS:
            for name, (release, _) in METHODS.items():
                rng = np.random.default_rng(_seed(base_seed, d.name, eps, name))
                out = np.empty(trials)
                t0 = time.perf_counter()
                for i in range(trials):
                    out[i] = release(d, eps, rng)
                ms[name].append(1e3 * (time.perf_counter() - t0) / trials)
                values[(d.name, eps, name)] = out
            print(f"{d.name} ε={eps} done", file=sys.stderr, flush=True)
    return values, {m: float(np.median(v)) for m, v in ms.items()}


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "inf"
    return "0" if v == 0 else (f"{v:.3g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.2e}")


def report(
    values: dict[tuple[str, float, str], NDArray[np.float64]], ms: dict[str, float], trials: int
) -> str:
    data = datasets()
    names = list(METHODS)
    versions = {p: importlib.metadata.version(p) for p in ("smoothdp", "diffprivlib", "numpy")}
    lines = [
        "# Accuracy of private means: smoothdp against diffprivlib",
        "",
        f"Generated by `python benchmarks/accuracy_means.py` on {datetime.date.today()} ({trials} trials per "
        f"cell; versions {versions}). Do not edit by hand.",
        "",
        "Each entry: **median |released − true mean| (90th percentile)**. Every method is pure ε-DP under "
        "**substitution** (one record replaced, n public), diffprivlib's relation; the add/remove "
        "mechanisms run at ε/2 (group privacy). Bold: the smallest median of the row. Last column: "
        "diffprivlib's median error divided by private_clip's (> 1: private_clip wins).",
        "",
    ]
    lines += [f"- `{n}`: {desc}" for n, (_, desc) in METHODS.items()]
    lines += ["", "## Data", ""] + [f"- `{d.name}`: {d.description}; true mean {d.mean:.6g}" for d in data]
    lines += ["", "## |error| against the true mean", ""]
    lines.append("| data | ε | " + " | ".join(names) + " | dpl / private_clip |")
    lines.append("|---|---|" + "---|" * len(names) + "---|")
    for d in data:
        for eps in EPSILONS:
            errs = {n: np.abs(values[(d.name, eps, n)] - d.mean) for n in names}
            med = {n: float(np.median(e)) for n, e in errs.items()}
            best = min(med.values())
            cells = []
            for n in names:
                s = f"{_fmt(med[n])} ({_fmt(float(np.quantile(errs[n], 0.9)))})"
                cells.append(f"**{s}**" if med[n] == best else s)
            ratio = med["diffprivlib"] / med["private_clip"] if med["private_clip"] > 0 else float("inf")
            lines.append(f"| {d.name} | {eps:g} | " + " | ".join(cells) + f" | {ratio:.3g} |")
    lines += ["", "## Trimmed means against their own target (the trimmed mean of the data)", ""]
    lines.append("| data | ε | target 5% | trimmed_5% | target 10% | trimmed_10% |")
    lines.append("|---|---|---|---|---|---|")
    for d in data:
        for eps in EPSILONS:
            row = [d.name, f"{eps:g}"]
            for trim, n in ((0.05, "trimmed_5%"), (0.10, "trimmed_10%")):
                t = trimmed_target(d.x, trim)
                e = np.abs(values[(d.name, eps, n)] - t)
                row += [f"{t:.6g}", f"{_fmt(float(np.median(e)))} ({_fmt(float(np.quantile(e, 0.9)))})"]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Time per release (median over cells, ms)", ""]
    lines += [f"- `{n}`: {ms[n]:.2f} ms" for n in names]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values, ms = run(args.trials, args.seed)
    args.out.write_text(report(values, ms, args.trials), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
