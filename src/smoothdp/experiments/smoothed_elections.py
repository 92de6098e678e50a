"""Liu, Wang & Xia, Smoothed Differential Privacy, Figure 1 and Figure 2 left: how private is
an election that loses a few ballots?

The sampling-histogram mechanism M_H counts a random ⌈ηn⌉ of n ballots (η = 0.998: 0.2% lost).

* Figure 1: δ_{ε,M_H}(x) of the *actual* national two-candidate vote of each presidential election
  1920-2020 (ε = ln(0.51/0.49), the paper's setting recovered from the authors' code), from
  :func:`smoothdp.smoothed_dp.binary_privacy_profile`.
* Figure 2 left: δ_SDP(ε) against n by Algorithm 1 (:func:`smoothdp.smoothed_dp.smoothed_delta`) with Π the
  two-party distributions of the 56 jurisdictions of 2020 (the seed's setting; hull vertices NE-3 and DC),
  for ε ∈ {0.5, 1, 2, 7}, against plain DP (δ = η for any ε) and 1/n. A second panel uses the authors'
  code's Π: the national shares 1920-2020 with both candidate orders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from smoothdp.data.elections import load_election_2020, load_election_history
from smoothdp.experiments._framework import Outcome, Table, progress, save_figures
from smoothdp.experiments.style import legend_outside, sequence_colours, styled, subplots, suptitle
from smoothdp.smoothed_dp import SamplingHistogram, binary_privacy_profile, smoothed_delta

TITLE = "smoothed-DP δ of elections that lose 0.2% of the ballots"
SOURCE = "Liu, Wang & Xia, Smoothed Differential Privacy, TMLR 2023, Figure 1 and Figure 2 left"
REQUIRES = (
    "smoothdp.smoothed_dp:smoothed_delta",
    "smoothdp.smoothed_dp:binary_privacy_profile",
    "smoothdp.data.elections:load_election_2020",
)

LN10 = math.log(10.0)


@dataclass(frozen=True)
class Config:
    """η = 0.998; Figure 2 left: n = 100,000 to 500,000 by 50,000 (authors' code), ε ∈ {0.5, 1, 2, 7};
    Figure 1: 1920-2020 at ε = ln(0.51/0.49)."""

    eta: float = 0.998
    n_values: tuple[int, ...] = tuple(range(100_000, 500_001, 50_000))
    epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 7.0)
    figure1_epsilon: float = math.log(0.51 / 0.49)
    first_year: int = 1920
    national_panel: bool = True


CONFIGS = {
    "full": Config(),
    "quick": Config(n_values=(100_000, 300_000, 500_000), epsilons=(1.0, 7.0)),
    "tiny": Config(n_values=(20_000, 60_000), epsilons=(1.0, 7.0), first_year=1992, national_panel=False),
}


def figure1(config: Config) -> Table:
    """log10 δ(x) of each year's actual national vote (n = both candidates' votes, k = the minority)."""
    history = load_election_history().since(config.first_year)
    mechanism = SamplingHistogram(eta=config.eta)
    log10_delta = [
        float(binary_privacy_profile(mechanism, int(n), config.figure1_epsilon, counts=[int(k)])[0]) / LN10
        for n, k in zip(history.totals, history.minority, strict=True)
    ]
    return Table(
        {
            "year": history.years,
            "votes": history.totals,
            "minority_votes": history.minority,
            "minority_share": history.minority / history.totals,
            "log10_delta": log10_delta,
        },
        f"δ of the actual database at ε = ln(0.51/0.49) = {config.figure1_epsilon:.6f}, η = {config.eta}",
    )


def _national_distributions(config: Config) -> np.ndarray:
    history = load_election_history().since(config.first_year)
    share = history.candidate_a / history.totals
    # The columns do not consistently mean one party: take both orders.
    return np.vstack([np.column_stack([share, 1 - share]), np.column_stack([1 - share, share])])


def figure2(config: Config) -> Table:
    """log10 δ_SDP against n for each ε and each Π."""
    mechanism = SamplingHistogram(eta=config.eta)
    settings = [("2020 jurisdictions", load_election_2020().jurisdictions().two_party_distributions())]
    if config.national_panel:
        settings.append(("national 1920-2020", _national_distributions(config)))
    columns: dict[str, list] = {
        "pi": [],
        "epsilon": [],
        "n": [],
        "log10_delta_sdp": [],
        "dp_delta": [],
        "one_over_n": [],
        "maximising_mixture": [],
    }
    jobs = [(label, pi, eps, n) for label, pi in settings for eps in config.epsilons for n in config.n_values]
    for label, pi, eps, n in progress(jobs, desc="smoothed-elections"):
        result = smoothed_delta(mechanism, eps, n, pi)
        columns["pi"].append(label)
        columns["epsilon"].append(eps)
        columns["n"].append(n)
        columns["log10_delta_sdp"].append(result.log10_delta)
        columns["dp_delta"].append(result.dp_delta)
        columns["one_over_n"].append(1.0 / n)
        columns["maximising_mixture"].append("/".join(str(c) for c in result.mixture))
    return Table(columns, "δ_SDP by Algorithm 1 (log10); dp_delta: δ of plain DP for M_H (any ε)")


#: The plain-DP and 1/n references of Figure 2 (black, like every non-private reference).
DP_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.0}
ONE_OVER_N_STYLE = {"color": "black", "linestyle": ":", "linewidth": 1.0}


@styled
def figures(tables: Mapping[str, Table], config: Config) -> dict[str, Figure]:
    """Figure 1: log10 δ(x) of each year's actual vote. Figure 2: log10 δ_SDP against n, one panel per Π,
    one colour per ε (small to large), against plain DP and 1/n; the legend below the panels."""
    fig1, fig2 = tables["figure1_delta_by_year"], tables["figure2_delta_sdp"]
    first, axes = subplots(1, 1, panel_size=(7.0, 4.0))
    ax = axes[0, 0]
    ax.plot(fig1.column("year"), fig1.column("log10_delta"), "o-", color="black")
    ax.set(xlabel="election year", ylabel="log10 δ(x) (δ: a probability)")
    suptitle(
        first,
        f"δ of each year's actual national two-candidate vote when {100 * (1 - config.eta):.1f}% of the "
        f"ballots are lost (η = {config.eta}, ε = ln(0.51/0.49))",
    )
    labels = list(dict.fromkeys(fig2.column("pi").tolist()))
    # Each panel its own y-scale: the national Π reaches 10^-190, the jurisdictions' only 10^-25, and the
    # comparison the figure makes is within a panel (each ε against plain DP and 1/n).
    second, axes = subplots(1, len(labels), panel_size=(5.2, 4.0))
    pi_col, eps_col, n_col = fig2.column("pi"), fig2.column("epsilon"), fig2.column("n")
    colours = sequence_colours(len(config.epsilons))
    for ax, label in zip(axes[0], labels, strict=True):
        for eps, colour in zip(config.epsilons, colours, strict=True):
            mask = (pi_col == label) & np.isclose(eps_col, eps)
            ax.plot(
                n_col[mask],
                fig2.column("log10_delta_sdp")[mask],
                "o-",
                color=colour,
                label=f"smoothed DP, ε = {eps:g}",
            )
        mask = pi_col == label
        ax.plot(n_col[mask], np.log10(fig2.column("dp_delta")[mask]), label="DP, any ε (δ = T/n)", **DP_STYLE)
        ax.plot(n_col[mask], np.log10(fig2.column("one_over_n")[mask]), label="1/n", **ONE_OVER_N_STYLE)
        ax.set(xlabel="number of ballots n", ylabel="log10 δ (δ: a probability)", title=f"Π = {label}")
    legend_outside(second, where="below", ncols=min(len(config.epsilons) + 2, 6))
    suptitle(
        second,
        f"Smoothed-DP δ of the sampling histogram against the number of ballots n, η = {config.eta} "
        f"({100 * (1 - config.eta):.1f}% lost), against plain DP and 1/n",
    )
    return {"figure1_delta_by_year": first, "figure2_delta_sdp_against_n": second}


def headline(fig1: Table, fig2: Table, config: Config) -> str:
    mask = fig2.column("pi") == fig2.column("pi")[0]
    n, eps, logd = fig2.column("n")[mask], fig2.column("epsilon")[mask], fig2.column("log10_delta_sdp")[mask]
    big = eps == max(config.epsilons)
    small = eps == min(config.epsilons)
    years, d1 = fig1.column("year"), fig1.column("log10_delta")
    return (
        f"With 0.2% of ballots lost, δ_SDP falls exponentially in n (ε = {max(config.epsilons):g}: "
        f"10^{logd[big][0]:.1f} at n = {n[big][0]:,} to 10^{logd[big][-1]:.1f} at n = {n[big][-1]:,}; "
        f"ε = {min(config.epsilons):g}: 10^{logd[small][0]:.1f} to 10^{logd[small][-1]:.1f}) while "
        f"plain DP cannot go below δ = {config.eta}; the actual national votes have δ between "
        f"10^{d1.min():.1f} "
        f"({years[np.argmin(d1)]}) and 10^{d1.max():.1f} ({years[np.argmax(d1)]})."
    )


def run(config: Config, rng: np.random.Generator, out_dir: Path) -> Outcome:
    """Exact computation (no randomness): ``rng`` is unused."""
    fig1, fig2 = figure1(config), figure2(config)
    tables = {"figure1_delta_by_year": fig1, "figure2_delta_sdp": fig2}
    return Outcome(
        tables=tables,
        figures=save_figures(figures(tables, config), out_dir),
        headline=headline(fig1, fig2, config),
        data=[
            "election_2020_president: 2020 presidential votes of the 50 states, DC, ME-1/2, NE-1/2/3 "
            "(FiveThirtyEight, from the official canvasses); the national row is left out of Π",
            "election_history_national: national votes of the two leading candidates 1920-2020 (the "
            "smoothed-DP authors' own data file)",
        ],
        notes=[
            "The seed names NE-2 as a hull vertex; the two-party hull of the 2020 jurisdictions is "
            "[NE-3, DC] (NE-2 is interior). The maximum sits at the DC vertex either way.",
            "Figure 1's ε = ln(0.51/0.49) comes from the authors' code (its commented line); the "
            "active line (ε = 0) gives only ~1e-3.",
            "δ_SDP values below 1e-308 are computed and reported in log space.",
            "The maximum over mixtures uses a 33-point grid plus golden-section refinement for n > 400 "
            "(see smoothdp.smoothed_dp.algorithm1): a value attained by a real mixture.",
        ],
    )
