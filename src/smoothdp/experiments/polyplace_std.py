"""Hladík & Tětek, Figure 1: noise std per unit of smooth sensitivity against the smoothness.

At fixed ε, each smooth-sensitivity noise family spends part of ε on the smoothness β (HT's γ) and the rest
on the noise scale; the figure plots the resulting noise standard deviation, in units of the β-smooth
sensitivity, for PolyPlace (HT Theorem 8), Student's T (BS19 constants, d optimised), the generalized
Cauchy (NRS constants, c optimised) and Laplace ((ε, δ), δ = 1e−5), with the global-sensitivity Laplace
std √2/ε as the dashed reference. The tighter Liang–Yi constants for T and Cauchy are added as extra
curves. All numbers come from :func:`smoothdp.noise_std.noise_std_per_sensitivity`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from smoothdp.experiments._framework import Outcome, Table, save_figures
from smoothdp.experiments.style import legend_outside, mechanism_style, styled, subplots, suptitle
from smoothdp.noise_std import noise_std_per_sensitivity

TITLE = "noise std per unit of smooth sensitivity against the smoothness β"
SOURCE = "Hladík & Tětek, Smooth Sensitivity Revisited, FORC 2025, Figure 1"
REQUIRES = ("smoothdp.noise_std:noise_std_per_sensitivity",)


@dataclass(frozen=True)
class Config:
    """HT's Figure 1 is at ε = 1 with δ = 1e−5 for the Laplace curve; β runs up to ε/2 (PolyPlace's
    variance is finite for β < ε/2)."""

    epsilon: float = 1.0
    delta: float = 1e-5
    beta_min: float = 0.002
    beta_max: float = 0.498
    n_betas: int = 400


CONFIGS = {"full": Config(), "quick": Config(n_betas=100), "tiny": Config(n_betas=25)}

#: (CSV column, label) of each plotted curve; colours and line styles come from
#: :func:`smoothdp.experiments.style.mechanism_style` (the same noise family, the same colour everywhere).
CURVES = (
    ("polyplace", "PolyPlace (HT Thm 8)"),
    ("student_t", "Student's T, BS19 constants"),
    ("cauchy", "generalized Cauchy, NRS constants"),
    ("laplace", "Laplace, (ε, δ = 1e-5)"),
    ("student_t_ly", "Student's T, Liang-Yi constants"),
    ("cauchy_ly", "generalized Cauchy, Liang-Yi constants"),
    ("global_laplace", "Laplace, global sensitivity (√2/ε)"),
)
COMPETITORS = ("student_t", "cauchy", "laplace", "student_t_ly", "cauchy_ly")


def compute(config: Config) -> Table:
    betas = np.linspace(config.beta_min, config.beta_max, config.n_betas)
    curves = noise_std_per_sensitivity(epsilon=config.epsilon, betas=betas, delta=config.delta).as_dict()
    columns = {"beta": betas}
    for name in (
        *[c[0] for c in CURVES],
        "laplace_calibrated",
        "student_t_df",
        "cauchy_gamma",
        "student_t_ly_df",
        "cauchy_ly_gamma",
    ):
        columns[name] = np.asarray(curves[name])
    best_other = np.min(np.vstack([columns[c] for c in COMPETITORS]), axis=0)
    columns["best_competitor"] = best_other
    columns["polyplace_is_lowest"] = (columns["polyplace"] < best_other).astype(int)
    return Table(
        columns,
        "std per unit of smooth sensitivity (inf: family not admissible at that β); "
        "*_df / *_gamma: the optimised shape",
    )


def _style(label: str) -> dict[str, Any]:
    style = mechanism_style(label)
    if "global" in label:
        style["linestyle"] = "--"  # a constant reference, not a smooth-sensitivity family
    return style


@styled
def figures(tables: Mapping[str, Table], config: Config) -> dict[str, Figure]:
    """Left: the std per unit of smooth sensitivity of every family against β; right: each family's std
    divided by PolyPlace's (above 1: PolyPlace is better). One legend below both panels."""
    table = tables["std_per_sensitivity"]
    beta = table.column("beta")
    fig, axes = subplots(1, 2, panel_size=(5.6, 4.2), sharex=True)
    ax, ratio_ax = axes[0]
    for name, label in CURVES:
        y = table.column(name)
        ax.plot(beta, np.where(np.isfinite(y), y, np.nan), label=label, **_style(label))
    ax.set(
        yscale="log",
        xlabel="smoothness β (HT's γ; ε = 1)",
        ylabel="noise std / smooth sensitivity (unitless)",
        title="noise std per unit of smooth sensitivity",
        ylim=(1.0, 100.0),
    )
    poly = table.column("polyplace")
    for name, label in CURVES[1:6]:
        y = table.column(name)
        ratio_ax.plot(beta, np.where(np.isfinite(y), y / poly, np.nan), label=label, **_style(label))
    ratio_ax.axhline(1.0, label=CURVES[0][1], **_style(CURVES[0][1]))
    ratio_ax.set(
        yscale="log",
        xlabel="smoothness β (HT's γ; ε = 1)",
        ylabel="std / PolyPlace std (unitless)",
        title="ratio to PolyPlace (above 1: PolyPlace is better)",
    )
    legend_outside(fig, where="below", ncols=4)
    suptitle(
        fig,
        "Noise std of each smooth-sensitivity noise family against the smoothness β at "
        f"ε = {config.epsilon:g} (curves end where a family stops being admissible)",
    )
    return {"std_per_sensitivity": fig}


def headline(table: Table, config: Config) -> str:
    beta, poly = table.column("beta"), table.column("polyplace")
    lowest = table.column("polyplace_is_lowest")
    i = int(np.argmin(np.abs(beta - 0.1 * config.epsilon)))
    t, c = table.column("student_t")[i], table.column("cauchy")[i]
    return (
        f"PolyPlace has the lowest noise std per unit of smooth sensitivity at {int(lowest.sum())} of "
        f"{beta.size} values of β in [{beta[0]:.3g}, {beta[-1]:.3g}] (ε = {config.epsilon:g}); at "
        f"β = {beta[i]:.3g} its std is {poly[i]:.3f} against {t:.3f} for Student's T (BS19), {c:.3f} for "
        f"the generalized Cauchy (NRS) and √2 = 1.414 for global-sensitivity Laplace, and the best "
        f"competitor is {table.column('best_competitor')[i] / poly[i]:.2f}× PolyPlace."
    )


def run(config: Config, rng: np.random.Generator, out_dir: Path) -> Outcome:
    """Analytic (no randomness): ``rng`` is unused."""
    table = compute(config)
    tables = {"std_per_sensitivity": table}
    return Outcome(
        tables=tables,
        figures=save_figures(figures(tables, config), out_dir),
        headline=headline(table, config),
        data=[
            "none: closed-form standard deviations "
            "(docs/theory/calibration.md#noise-std-per-unit-of-smooth-sensitivity)"
        ],
        notes=[
            "HT give no numbers for their Figure 1; this is a reproduction from the formulas.",
            "Curves end where a family stops being admissible (Laplace needs β < ε/ln(2/δ); BS19 T needs "
            "β < ε/3; NRS Cauchy β < ε/4) or its variance is infinite (PolyPlace at β ≥ ε/2).",
            "The randomness setting does not matter here: the experiment is analytic.",
        ],
    )
