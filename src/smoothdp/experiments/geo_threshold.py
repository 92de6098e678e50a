"""Liang & Yi, Smooth Sensitivity for Geo-Privacy, Figures 3 and 8: the one-way threshold.

Each user holds an income x; the analyst estimates the fraction above a threshold t through the soft
threshold f_θ (band θ = min(0.2t, 2/ε)) under ε-geo-privacy per USD. Mechanisms (all from
:mod:`smoothdp.geo`):

* smooth sensitivity with Student's T(3) noise, β = ε/9, η = ε/√3 (the paper's mechanism, Lemma 3.5);
* smooth sensitivity with PolyPlace noise (ours: the noise of Hladík & Tětek, FORC 2025, under
  geo-privacy);
* global Lipschitz: f_θ(x) + Lap(1/(θε)) (Lemma 2.3);
* noise a priori: x̃ = x + Lap(1/ε), then f_θ(x̃) (biased);
* local DP: f_θ(x) + Lap(1/ε_L), ε_L = ε·D (D per threshold, as in the authors' code).

**MSE**: for every n the data sample is drawn once (as in the paper) and the MSE of the estimated mean is
computed *exactly in expectation over the mechanisms' noise* from the library's per-user variances
(``GeoMechanism.variance``) and, for noise a priori, its exact moments (``NoiseAPriori.mse``): no Monte
Carlo error at any n. A Monte Carlo run of the actual mechanisms (``privatize`` + ``estimate``, repeated)
at the smallest n checks the exact values. Both truths are reported: the soft query (1/n)Σf_θ(x_i)
(plotted) and the hard fraction (1/n)Σ1[x_i > t].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, NullLocator

from smoothdp.data import DATASETS, load_ca_incomes
from smoothdp.data.synthetic import CA_INCOME_PROVENANCE, california_household_incomes
from smoothdp.experiments._framework import Outcome, Table, numerics_note, progress, save_figures
from smoothdp.experiments.style import legend_outside, mechanism_style, styled, subplots, suptitle
from smoothdp.geo import (
    GeoMechanism,
    GlobalLipschitz,
    LocalDP,
    NoiseAPriori,
    SmoothSensitivityMechanism,
    SoftThreshold,
)

TITLE = "one-way threshold under geo-privacy: MSE against n, ε and the threshold"
SOURCE = "Liang & Yi, Smooth Sensitivity for Geo-Privacy, CCS 2024, Figures 3 and 8"
REQUIRES = (
    "smoothdp.geo:SoftThreshold",
    "smoothdp.geo:SmoothSensitivityMechanism",
    "smoothdp.geo:NoiseAPriori",
)

MECHANISMS = (
    "smooth sensitivity, T(3)",
    "smooth sensitivity, PolyPlace",
    "global Lipschitz",
    "noise a priori",
    "local DP",
)
DATASET_LABELS = {
    "pums2000": "California 2000 PUMS person incomes (real)",
    "synthetic2022": "SYNTHETIC California 2022 household incomes",
}


@dataclass(frozen=True)
class Config:
    """The authors' code: thresholds 10k, 100k, 500k, 1M USD, each with three ε (per USD) and
    ε_L = ε·D; n ∈ {0.4, 0.8, 1.6, 3.2, 6.4} million users drawn with replacement; θ = min(0.2t, 2/ε)."""

    thresholds: tuple[float, ...] = (10_000.0, 100_000.0, 500_000.0, 1_000_000.0)
    epsilons: tuple[tuple[float, ...], ...] = (
        (1 / 800, 1 / 1200, 1 / 2000),
        (1 / 8000, 1 / 12000, 1 / 20000),
        (1 / 16000, 1 / 24000, 1 / 40000),
        (1 / 32000, 1 / 48000, 1 / 80000),
    )
    ldp_units: tuple[float, ...] = (1200.0, 12000.0, 24000.0, 48000.0)
    n_values: tuple[int, ...] = (400_000, 800_000, 1_600_000, 3_200_000, 6_400_000)
    datasets: tuple[str, ...] = ("synthetic2022", "pums2000")
    mc_reps: int = 50
    mc_n: int = 400_000
    #: How the simulated releases are computed: ``"float"`` (the papers' floating-point arithmetic) or
    #: ``"exact"`` (the library's hardened default, each report rounded onto a public grid of spacing
    #: ≤ 2⁻³⁶ of its scale). Same distributions up to that rounding, so the same MSE/ASE to ~1e−10
    #: relative; "exact" costs several times the run time here. The exact path has its own tests and
    #: benchmark (benchmarks/bench_exact_sampling.py).
    numerics: str = "float"


CONFIGS = {
    "full": Config(),
    "quick": Config(n_values=(100_000, 400_000, 1_600_000), mc_reps=20, mc_n=100_000),
    "tiny": Config(
        thresholds=(10_000.0, 1_000_000.0),
        epsilons=((1 / 1200,), (1 / 48000,)),
        ldp_units=(1200.0, 48000.0),
        n_values=(20_000, 80_000),
        mc_reps=40,
        mc_n=20_000,
    ),
}


def _mechanisms(
    query: SoftThreshold, eps: float, ldp_unit: float, numerics: str = "float"
) -> dict[str, GeoMechanism]:
    return {
        MECHANISMS[0]: SmoothSensitivityMechanism(
            query, epsilon=eps, noise="student_t", df=3, numerics=numerics
        ),
        MECHANISMS[1]: SmoothSensitivityMechanism(query, epsilon=eps, noise="polyplace", numerics=numerics),
        MECHANISMS[2]: GlobalLipschitz(query, epsilon=eps, numerics=numerics),
        MECHANISMS[3]: NoiseAPriori(query, epsilon=eps, numerics=numerics),
        MECHANISMS[4]: LocalDP(query, epsilon=eps * ldp_unit, numerics=numerics),
    }


def _draw(dataset: str, n: int, rng: np.random.Generator, pums: np.ndarray) -> np.ndarray:
    if dataset == "pums2000":
        return rng.choice(pums, size=n, replace=True)
    return california_household_incomes(n, rng)


def _exact_mse(mechanism: GeoMechanism, x: np.ndarray, soft: float, hard: float) -> tuple[float, float]:
    """(MSE against the soft mean, against the hard fraction) of the estimated mean, exactly."""
    n = x.size
    if isinstance(mechanism, NoiseAPriori):
        err = mechanism.mse(x, truth="soft")
        var, bias = float(err.variance_total) / n**2, float(err.bias_total) / n
        return var + bias**2, var + (bias + soft - hard) ** 2
    var = float(mechanism.variance(x, per_user=False).of_mean)
    return var, var + (soft - hard) ** 2


def compute(config: Config, rng: np.random.Generator) -> tuple[Table, Table]:
    pums = load_ca_incomes()
    rows: dict[str, list] = {
        k: []
        for k in (
            "dataset",
            "threshold",
            "epsilon",
            "theta",
            "epsilon_ldp",
            "n",
            "mechanism",
            "mse_soft",
            "mse_hard",
            "soft_mean",
            "hard_mean",
        )
    }
    samples = {(d, n): _draw(d, n, rng, pums) for d in config.datasets for n in config.n_values}
    jobs = [
        (d, t, eps, unit, n)
        for d in config.datasets
        for t, eps_list, unit in zip(config.thresholds, config.epsilons, config.ldp_units, strict=True)
        for eps in eps_list
        for n in config.n_values
    ]
    for dataset, t, eps, unit, n in progress(jobs, desc="geo-threshold"):
        x = samples[dataset, n]
        theta = min(0.2 * t, 2.0 / eps)
        query = SoftThreshold(t, theta)
        soft, hard = float(np.mean(query.value(x))), float(np.mean(x > t))
        for name, mechanism in _mechanisms(query, eps, unit).items():
            mse_soft, mse_hard = _exact_mse(mechanism, x, soft, hard)
            for key, value in (
                ("dataset", dataset),
                ("threshold", t),
                ("epsilon", eps),
                ("theta", theta),
                ("epsilon_ldp", eps * unit),
                ("n", n),
                ("mechanism", name),
                ("mse_soft", mse_soft),
                ("mse_hard", mse_hard),
                ("soft_mean", soft),
                ("hard_mean", hard),
            ):
                rows[key].append(value)
    return (
        Table(
            rows,
            "exact MSE of the estimated mean (expectation over the noise) for the drawn data; "
            "mse_soft against (1/n)Σf_θ(x_i), mse_hard against (1/n)Σ1[x_i > t]",
        ),
        monte_carlo_check(config, rng, pums),
    )


def monte_carlo_check(config: Config, rng: np.random.Generator, pums: np.ndarray) -> Table:
    """Run the actual mechanisms ``mc_reps`` times at n = mc_n and compare the empirical MSE (soft truth)
    with the exact one. The repetitions are a grid of identical queries, so one call draws them all."""
    rows: dict[str, list] = {
        k: []
        for k in ("dataset", "threshold", "epsilon", "n", "mechanism", "reps", "mc_mse", "exact_mse", "ratio")
    }
    reps = config.mc_reps
    for dataset in config.datasets:
        x = _draw(dataset, config.mc_n, rng, pums)
        for t, eps_list, unit in zip(config.thresholds, config.epsilons, config.ldp_units, strict=True):
            eps = eps_list[len(eps_list) // 2]
            theta = min(0.2 * t, 2.0 / eps)
            single, grid = SoftThreshold(t, theta), SoftThreshold(np.full(reps, t), theta)
            soft = float(np.mean(single.value(x)))
            exact = _mechanisms(single, eps, unit)
            for name, mechanism in _mechanisms(grid, eps, unit, config.numerics).items():
                if isinstance(mechanism, NoiseAPriori):  # one noisy location per user and repetition
                    noisy = mechanism.privatize(np.broadcast_to(x, (reps, x.size)), rng=rng)
                    estimates = single.value(noisy).mean(axis=1)
                else:
                    estimates = mechanism.estimate(mechanism.privatize(x, rng=rng)).mean
                mc = float(np.mean((estimates - soft) ** 2))
                ex = _exact_mse(exact[name], x, soft, soft)[0]
                for key, value in (
                    ("dataset", dataset),
                    ("threshold", t),
                    ("epsilon", eps),
                    ("n", x.size),
                    ("mechanism", name),
                    ("reps", reps),
                    ("mc_mse", mc),
                    ("exact_mse", ex),
                    ("ratio", mc / ex),
                ):
                    rows[key].append(value)
    return Table(
        rows,
        "Monte Carlo MSE of the actual mechanisms (soft truth) against the exact MSE; the "
        "ratio has relative standard error about √(2/reps) for the unbiased mechanisms",
    )


def _n_label(n: float) -> str:
    return f"{n / 1e6:g}M" if n >= 1e6 or n % 100_000 == 0 else f"{n / 1e3:g}k"


@styled
def figures(tables: Mapping[str, Table], config: Config) -> dict[str, Figure]:
    """Per data set, the 4 × 3 panels of the paper (one row per threshold t, one column per ε): the
    plotted MSE of every mechanism against n. Panels of one row differ only in ε and share the y-scale;
    one legend below all panels."""
    table = tables["mse"]
    cols = {k: table.column(k) for k in ("dataset", "threshold", "epsilon", "n", "mechanism", "mse_soft")}
    width = max(len(e) for e in config.epsilons)
    n_ticks = sorted(config.n_values)
    out = {}
    for dataset in config.datasets:
        fig, axes = subplots(len(config.thresholds), width, panel_size=(3.9, 2.9), sharex=True, sharey="row")
        for row, (t, eps_list) in enumerate(zip(config.thresholds, config.epsilons, strict=True)):
            for col in range(width):
                ax = axes[row, col]
                if col >= len(eps_list):
                    ax.set_visible(False)
                    continue
                eps = eps_list[col]
                for name in MECHANISMS:
                    mask = (
                        (cols["dataset"] == dataset)
                        & (cols["threshold"] == t)
                        & np.isclose(cols["epsilon"], eps)
                        & (cols["mechanism"] == name)
                    )
                    ax.plot(
                        cols["n"][mask], cols["mse_soft"][mask], "o-", label=name, **mechanism_style(name)
                    )
                ax.set(xscale="log", yscale="log", title=f"t = ${t:,.0f}, ε = 1/{1 / eps:,.0f} per USD")
                ax.set_xticks(n_ticks, [_n_label(n) for n in n_ticks])
                ax.xaxis.set_minor_locator(NullLocator())  # the n values are the ticks
                ax.yaxis.set_minor_locator(
                    LogLocator(subs=(2.0, 5.0))
                )  # 24 log panels: fewer ticks to lay out
                if row == len(config.thresholds) - 1:
                    ax.set_xlabel("n (users)")
                if col == 0:
                    ax.set_ylabel("MSE of the fraction above t")
        legend_outside(fig, where="below", ncols=len(MECHANISMS))
        suptitle(
            fig,
            f"One-way threshold: MSE of five geo-private estimates of the fraction above t against n "
            f"({DATASET_LABELS[dataset]}; rows share a y-scale)",
        )
        out[f"mse_{dataset}"] = fig
    return out


def _mse(table: Table, dataset: str, t: float, eps: float, n: int, mechanism: str) -> float:
    mask = (
        (table.column("dataset") == dataset)
        & (table.column("threshold") == t)
        & np.isclose(table.column("epsilon"), eps)
        & (table.column("n") == n)
        & (table.column("mechanism") == mechanism)
    )
    return float(table.column("mse_soft")[mask][0])


def headline(table: Table, check: Table, config: Config) -> str:
    dataset = config.datasets[0]
    n_max, n_min = max(config.n_values), min(config.n_values)
    parts = []
    for t, eps_list in zip(config.thresholds, config.epsilons, strict=True):
        eps = eps_list[len(eps_list) // 2]
        ratio = _mse(table, dataset, t, eps, n_max, MECHANISMS[2]) / _mse(
            table, dataset, t, eps, n_max, MECHANISMS[0]
        )
        parts.append(f"{ratio:.3g}× (t = {t:,.0f})")
    t0, eps0 = config.thresholds[-1], config.epsilons[-1][len(config.epsilons[-1]) // 2]
    nap_min = _mse(table, dataset, t0, eps0, n_min, MECHANISMS[3])
    nap_max = _mse(table, dataset, t0, eps0, n_max, MECHANISMS[3])
    gain = _mse(table, dataset, t0, eps0, n_max, MECHANISMS[0]) / _mse(
        table, dataset, t0, eps0, n_max, MECHANISMS[1]
    )
    return (
        f"On the {DATASET_LABELS[dataset]} with n = {n_max:,}, global Lipschitz has "
        f"{', '.join(parts)} the MSE of the smooth-sensitivity T(3) mechanism (middle ε), PolyPlace "
        f"noise lowers the smooth-sensitivity MSE by a further {gain:.2f}× (t = {t0:,.0f}), "
        f"and noise a priori does not improve with n (t = {t0:,.0f}: {nap_min:.2g} at n = {n_min:,}, "
        f"{nap_max:.2g} at n = {n_max:,}); Monte Carlo runs of the mechanisms agree with the exact MSE "
        f"(median ratio {np.median(check.column('ratio')):.2f})."
    )


def run(config: Config, rng: np.random.Generator, out_dir: Path) -> Outcome:
    table, check = compute(config, rng)
    tables = {"mse": table, "monte_carlo_check": check}
    return Outcome(
        tables=tables,
        figures=save_figures(figures(tables, config), out_dir),
        headline=headline(table, check, config),
        data=[
            CA_INCOME_PROVENANCE,
            f"ca_pums_2000_persons: {DATASETS['ca_pums_2000_persons']}; person incomes (negatives kept), "
            "resampled with replacement to n (the paper resamples its IPUMS households the same way); "
            "person income of 2000, not household income of 2022: compare shapes, not levels",
        ],
        notes=[
            numerics_note(config.numerics, "the Monte Carlo check"),
            "MSE is the exact expectation over the mechanisms' noise for the drawn data (the paper "
            "averages 100 noise repetitions); monte_carlo_check.csv runs the mechanisms themselves.",
            "The plotted MSE is against the soft query; mse_hard in mse.csv adds the smoothing bias "
            "against the hard fraction (the paper does not say which it plots).",
            "Noise a priori applies the soft f_θ to x̃, as the authors' one-way code does.",
            "PolyPlace under geo-privacy is this library's extension "
            "(docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy), not in the paper.",
        ],
    )
