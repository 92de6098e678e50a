"""An extension of Liu, Wang & Xia, Smoothed Differential Privacy, Figure 2 left, to three candidates: the
smoothed-DP δ of a sampling histogram over Biden / Trump / other (m = 3), per state and nationally.

The sampling-histogram mechanism M_H counts a random T = ⌈ηn⌉ of n ballots. Π = {π} is one unit's vote
shares (its 2020 Biden / Trump / other shares, or the two-party shares for the comparison), so that
δ_SDP(ε) = E_{x ∼ π^n}[δ_{ε,M_H}(x)] (LWX Definition 3 with a single distribution): the δ of an election in
that unit, with n ballots drawn from its shares. Every value comes from the public
:func:`smoothdp.smoothed_dp.smoothed_delta` with a 3-column (or 2-column) Π.

* Table / figure ``delta_against_n``: log10 δ_SDP against n for the national vote and the units at the
  vertices of the convex hull of the 56 jurisdictions' three-way shares, for each ε, with three candidates
  and with the two-party vote.
* Table / figure ``delta_by_unit``: log10 δ_SDP of every unit at one n and one ε, against its share of
  "other" votes.
* Table ``delta_whole_map`` (only when ``Config.hull_n_values`` is not empty): δ_SDP with Π = all 56
  jurisdictions, the maximum over every mixture of their distributions (LWX Algorithm 1).

n is small (≤ 200) because the exact m = 3 computation enumerates the histograms; ``Config.n_values`` can
grow with it. With so few ballots η = 0.998 would lose none (L = n − ⌈ηn⌉ = 0 below n = 500), hence the
default η = 0.9.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from smoothdp.data.elections import Election2020, load_election_2020
from smoothdp.experiments._framework import Outcome, Table, plt, progress, save_figures
from smoothdp.experiments.style import legend_outside, styled, subplots, suptitle
from smoothdp.smoothed_dp import SamplingHistogram, SmoothedDelta, hull_vertices, smoothed_delta

TITLE = "smoothed-DP δ of three-candidate elections (Biden / Trump / other)"
SOURCE = (
    "extension of Liu, Wang & Xia, Smoothed Differential Privacy, TMLR 2023, Figure 2 left, to m = 3 "
    "categories"
)
REQUIRES = ("smoothdp.smoothed_dp:smoothed_delta", "smoothdp.data.elections:load_election_2020")

NATIONAL = "US"


@dataclass(frozen=True)
class Config:
    """η = 0.9 (10% of the ballots lost); δ against n for n ∈ {25, 50, 100, 200} at ε ∈ {1, 7} for the
    national vote and the 7 hull-vertex units; every unit at n = 100, ε = 1. ``units=()`` means the national
    vote and the hull vertices; ``hull_n_values`` (default none) adds δ_SDP with Π = all 56 jurisdictions."""

    eta: float = 0.9
    n_values: tuple[int, ...] = (25, 50, 100, 200)
    epsilons: tuple[float, ...] = (1.0, 7.0)
    units: tuple[str, ...] = ()
    by_unit_n: int = 100
    by_unit_epsilon: float = 1.0
    hull_n_values: tuple[int, ...] = ()
    large_eta: float = 0.998
    large_n_values: tuple[int, ...] = (1_000, 10_000, 100_000)


CONFIGS = {
    "full": Config(),
    "quick": Config(
        n_values=(25, 50, 100), units=(NATIONAL, "DC", "FL", "VT"), by_unit_n=50, large_n_values=(1_000,)
    ),
    "tiny": Config(n_values=(20, 40), units=(NATIONAL, "DC", "FL"), by_unit_n=20, large_n_values=()),
}


def _shares(election: Election2020, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """(Biden, Trump, other) and (Biden, Trump) two-party shares of one unit."""
    counts = np.array(election.unit(unit), dtype=np.float64)
    return counts / counts.sum(), counts[:2] / counts[:2].sum()


def hull_units(election: Election2020) -> list[str]:
    """The jurisdictions whose three-way shares are vertices of the convex hull of all 56."""
    places = election.jurisdictions()
    shares = places.three_way_distributions()
    vertices = hull_vertices(shares)
    return [str(places.units[int(np.argmin(np.abs(shares - v).sum(axis=1)))]) for v in vertices]


def _three_and_two(
    mechanism: SamplingHistogram, eps: float, n: int, three: np.ndarray, two: np.ndarray
) -> tuple[SmoothedDelta, float, float]:
    """δ_SDP with three candidates (the result), log10 δ_SDP of the two-party vote, and the seconds the
    m = 3 call took."""
    start = time.perf_counter()
    result = smoothed_delta(mechanism, eps, n, three)
    seconds = time.perf_counter() - start
    return result, smoothed_delta(mechanism, eps, n, two).log10_delta, seconds


def _units(config: Config, election: Election2020) -> list[str]:
    return list(config.units) if config.units else [NATIONAL, *hull_units(election)]


def delta_against_n(config: Config, election: Election2020) -> tuple[Table, float]:
    """log10 δ_SDP (three candidates and two-party) per unit, ε and n; and the seconds the m = 3 calls
    took."""
    mechanism = SamplingHistogram(eta=config.eta)
    columns: dict[str, list] = {
        name: []
        for name in (
            "unit",
            "other_share",
            "epsilon",
            "n",
            "lost_ballots",
            "log10_delta_three",
            "log10_delta_two_party",
            "dp_delta",
        )
    }
    seconds = 0.0
    jobs = [(u, e, n) for u in _units(config, election) for e in config.epsilons for n in config.n_values]
    for unit, eps, n in progress(jobs, desc="smoothed-three-candidates"):
        three, two = _shares(election, unit)
        result, log10_two, took = _three_and_two(mechanism, eps, n, three, two)
        seconds += took
        columns["unit"].append(unit)
        columns["other_share"].append(float(three[2]))
        columns["epsilon"].append(eps)
        columns["n"].append(n)
        columns["lost_ballots"].append(n - mechanism.sample_size(n))
        columns["log10_delta_three"].append(result.log10_delta)
        columns["log10_delta_two_party"].append(log10_two)
        columns["dp_delta"].append(result.dp_delta)
    table = Table(
        columns,
        f"log10 δ_SDP of M_H (η = {config.eta}) with Π = {{the unit's vote shares}}: three candidates "
        "(Biden, Trump, other) and the two-party vote; dp_delta: δ of plain DP for M_H (any ε)",
    )
    return table, seconds


def delta_large_n(config: Config, election: Election2020) -> tuple[Table, float]:
    """The national vote at realistic n with the paper's η = 0.998 (0.2% of the ballots lost): the m = 3
    value is the library's certified bracket (upper end reported, lower end beside it); and the seconds."""
    mechanism = SamplingHistogram(eta=config.large_eta)
    three, two = _shares(election, NATIONAL)
    columns: dict[str, list] = {
        name: []
        for name in ("epsilon", "n", "lost_ballots", "log10_delta_three", "log10_lower_three",
                     "log10_delta_two_party")
    }  # fmt: skip
    seconds = 0.0
    jobs = [(e, n) for e in config.epsilons for n in config.large_n_values]
    for eps, n in progress(jobs, desc="smoothed-three-candidates, large n"):
        result, log10_two, took = _three_and_two(mechanism, eps, n, three, two)
        seconds += took
        columns["epsilon"].append(eps)
        columns["n"].append(n)
        columns["lost_ballots"].append(n - mechanism.sample_size(n))
        columns["log10_delta_three"].append(result.log10_delta)
        lower = result.log10_lower  # None when the value is exact (small n): both ends are the value
        columns["log10_lower_three"].append(result.log10_delta if lower is None else lower)
        columns["log10_delta_two_party"].append(log10_two)
    table = Table(
        columns,
        f"log10 δ_SDP of M_H (η = {config.large_eta}) for the national vote at large n: three candidates "
        "(certified upper bound, and the certified lower bound within 1%) and the two-party vote",
    )
    return table, seconds


def delta_by_unit(config: Config, election: Election2020) -> tuple[Table, float]:
    """log10 δ_SDP of every unit (the 56 jurisdictions and the national vote) at one n and one ε."""
    mechanism = SamplingHistogram(eta=config.eta)
    n, eps = config.by_unit_n, config.by_unit_epsilon
    columns: dict[str, list] = {
        name: []
        for name in (
            "unit",
            "biden_share",
            "trump_share",
            "other_share",
            "log10_delta_three",
            "log10_delta_two_party",
        )
    }
    seconds = 0.0
    for unit in progress([str(u) for u in election.units], desc="smoothed-three-candidates by unit"):
        three, two = _shares(election, unit)
        result, log10_two, took = _three_and_two(mechanism, eps, n, three, two)
        seconds += took
        columns["unit"].append(unit)
        for i, name in enumerate(("biden_share", "trump_share", "other_share")):
            columns[name].append(float(three[i]))
        columns["log10_delta_three"].append(result.log10_delta)
        columns["log10_delta_two_party"].append(log10_two)
    table = Table(
        columns,
        f"log10 δ_SDP of M_H (η = {config.eta}, n = {n}, ε = {eps:g}) per unit: three candidates and "
        "two-party",
    )
    return table, seconds


def delta_whole_map(config: Config, election: Election2020) -> Table:
    """δ_SDP with Π = the three-way shares of all 56 jurisdictions (maximum over every mixture)."""
    mechanism = SamplingHistogram(eta=config.eta)
    shares = election.jurisdictions().three_way_distributions()
    columns: dict[str, list] = {"epsilon": [], "n": [], "log10_delta_three": [], "maximising_mixture": []}
    for eps in config.epsilons:
        for n in config.hull_n_values:
            result = smoothed_delta(mechanism, eps, n, shares)
            columns["epsilon"].append(eps)
            columns["n"].append(n)
            columns["log10_delta_three"].append(result.log10_delta)
            columns["maximising_mixture"].append("/".join(str(c) for c in result.mixture))
    return Table(columns, "log10 δ_SDP with Π = the 56 jurisdictions' (Biden, Trump, other) shares")


#: The reference line of plain DP (black, like every non-private reference).
DP_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.0}


def _unit_colours(units: list[str]) -> dict[str, tuple[float, float, float, float]]:
    cmap = plt.get_cmap("tab10")
    return {unit: cmap(i % 10) for i, unit in enumerate(units)}


@styled
def figures(tables: Mapping[str, Table], config: Config) -> dict[str, Figure]:
    """Left to right, one panel per ε on one y-scale: log10 δ_SDP against n per unit (colour), three
    candidates solid and two-party dashed, against plain DP. Then every unit's log10 δ_SDP against its
    share of other votes. Legends below the panels."""
    table = tables["delta_against_n"]
    unit_col, eps_col, n_col = table.column("unit"), table.column("epsilon"), table.column("n")
    units = list(dict.fromkeys(unit_col.tolist()))
    colours = _unit_colours(units)
    first, axes = subplots(1, len(config.epsilons), panel_size=(4.6, 3.8), sharey=True)
    for ax, eps in zip(axes[0], config.epsilons, strict=True):
        for unit in units:
            mask = (unit_col == unit) & np.isclose(eps_col, eps)
            ax.plot(n_col[mask], table.column("log10_delta_three")[mask], "o-", color=colours[unit])
            ax.plot(
                n_col[mask], table.column("log10_delta_two_party")[mask], "s--", color=colours[unit], ms=3
            )
        mask = np.isclose(eps_col, eps) & (unit_col == units[0])
        ax.plot(
            n_col[mask], np.log10(table.column("dp_delta")[mask]), label="DP, any ε (δ = T/n)", **DP_STYLE
        )
        ax.set(xlabel="number of ballots n", title=f"ε = {eps:g}")
    axes[0, 0].set_ylabel("log10 δ_SDP (δ: a probability)")
    key = axes[0, 0]  # legend entries: one per unit (colour) and one per vote model (line style)
    for unit in units:
        share = float(table.column("other_share")[unit_col == unit][0])
        key.plot([], [], "-", color=colours[unit], label=f"{unit} (other {100 * share:.1f}%)")
    key.plot([], [], "o-", color="0.35", label="Biden / Trump / other (m = 3)")
    key.plot([], [], "s--", color="0.35", ms=3, label="two-party (m = 2)")
    legend_outside(first, where="below", ncols=4)
    suptitle(
        first,
        f"Smoothed-DP δ of the sampling histogram with three candidates and with two, against the number "
        f"of ballots n (η = {config.eta}: {100 * (1 - config.eta):.0f}% of the ballots lost)",
    )

    by_unit = tables["delta_by_unit"]
    other = 100 * by_unit.column("other_share")
    second, axes = subplots(1, 1, panel_size=(7.0, 4.2))
    ax = axes[0, 0]
    ax.plot(
        other,
        by_unit.column("log10_delta_three"),
        "o",
        color="#1f77b4",
        label="Biden / Trump / other (m = 3)",
    )
    ax.plot(
        other,
        by_unit.column("log10_delta_two_party"),
        "s",
        color="#ff7f0e",
        mfc="none",
        label="two-party (m = 2)",
    )
    names = by_unit.column("unit")
    named = {NATIONAL, "DC", str(names[np.argmin(other)]), str(names[np.argmax(other)])}
    for i, unit in enumerate(names):
        if unit in named:
            for column in ("log10_delta_three", "log10_delta_two_party"):
                ax.annotate(
                    str(unit),
                    (other[i], by_unit.column(column)[i]),
                    fontsize=8,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
    ax.set(xlabel="share of votes for other candidates (%)", ylabel="log10 δ_SDP (δ: a probability)")
    legend_outside(second, where="below", ncols=2)
    suptitle(
        second,
        f"Smoothed-DP δ of every state, district and the national vote at n = {config.by_unit_n}, "
        f"ε = {config.by_unit_epsilon:g}, η = {config.eta}: the rarest category sets δ",
    )
    return {"delta_against_n": first, "delta_by_unit": second}


def headline(table: Table, by_unit: Table, config: Config, large: Table | None = None) -> str:
    unit_col, eps_col, n_col = table.column("unit"), table.column("epsilon"), table.column("n")
    eps = min(config.epsilons)
    n = int(n_col.max())
    pick = (unit_col == unit_col[0]) & np.isclose(eps_col, eps) & (n_col == n)
    three, two = table.column("log10_delta_three")[pick][0], table.column("log10_delta_two_party")[pick][0]
    other = 100 * table.column("other_share")[pick][0]
    gap = by_unit.column("log10_delta_two_party") - by_unit.column("log10_delta_three")
    return (
        f"A third category makes the election far less private: with {other:.1f}% of the {unit_col[0]} vote "
        f"for other candidates, δ_SDP at n = {n}, ε = {eps:g}, η = {config.eta} is 10^{three:.2f} with "
        f"three candidates against 10^{two:.2f} for the two-party vote; over the {by_unit.n_rows} units at "
        f"n = {config.by_unit_n} three candidates raise log10 δ by {np.min(-gap):.2f} to {np.max(-gap):.2f} "
        "(the rarest category, not the margin, sets δ)."
    ) + _large_n_sentence(large, config)


def _large_n_sentence(large: Table | None, config: Config) -> str:
    if large is None or large.n_rows == 0:
        return ""
    eps_col, n_col = large.column("epsilon"), large.column("n")
    eps = min(config.epsilons)
    n = int(n_col.max())
    pick = np.isclose(eps_col, eps) & (n_col == n)
    three, two = large.column("log10_delta_three")[pick][0], large.column("log10_delta_two_party")[pick][0]
    return (
        f" At n = {n} national ballots with η = {config.large_eta}, ε = {eps:g}: at most 10^{three:.2f} "
        f"(certified bound) with three candidates against 10^{two:.2f} for two."
    )


def run(config: Config, rng: np.random.Generator, out_dir: Path) -> Outcome:
    """Exact computation (no randomness): ``rng`` is unused."""
    election = load_election_2020()
    table, seconds_n = delta_against_n(config, election)
    by_unit, seconds_unit = delta_by_unit(config, election)
    tables = {"delta_against_n": table, "delta_by_unit": by_unit}
    if config.hull_n_values:
        tables["delta_whole_map"] = delta_whole_map(config, election)
    seconds_large = 0.0
    if config.large_n_values:
        tables["delta_large_n"], seconds_large = delta_large_n(config, election)
    largest = int(max(config.n_values))
    return Outcome(
        tables=tables,
        figures=save_figures(figures(tables, config), out_dir),
        headline=headline(table, by_unit, config, tables.get("delta_large_n")),
        data=[
            "election_2020_president: 2020 presidential votes (Biden, Trump, other) of the 50 states, DC, "
            "ME-1/2, NE-1/2/3 and the national total (FiveThirtyEight, from the official canvasses)"
        ],
        notes=[
            "Not a figure of the paper: its Figure 2 left has two candidates. Each unit's Π is its own "
            "vote shares (one distribution), so δ_SDP is the expected δ(x) of an election of n ballots "
            "drawn from them; the two-party column drops the other votes.",
            f"n ≤ {largest}: the exact m = 3 computation enumerates the C(n + 2, 2) histograms; η = "
            f"{config.eta} because η = 0.998 loses no ballot below n = 500. Both are parameters (n_values, "
            "eta) and grow with the library's m = 3 method.",
            f"delta_large_n: the national vote at n up to {max(config.large_n_values, default=0)} with "
            f"η = {config.large_eta} (the paper's 0.2% of lost ballots). Enumeration is out of reach there; "
            "the library returns a certified bracket on δ_SDP (one distribution: an upper bound on δ_SDP "
            "itself), within 1%, and the table reports both ends.",
            "Π = all 56 jurisdictions (the maximum over mixtures of the 7 hull vertices) is computed only "
            "when hull_n_values is set; the largest per-vertex value in delta_against_n is a lower bound on "
            "it.",
            "e^7 ≈ 1097 exceeds every n here, so the ε = 7 values equal the ε → ∞ limit: the expected "
            "probability that the lost ballots miss a category entirely (tests/experiments check it against "
            "an independent enumeration).",
        ],
        extra={
            "seconds in smoothed_delta with m = 3 (δ against n)": round(seconds_n, 2),
            "seconds in smoothed_delta with m = 3 (by unit)": round(seconds_unit, 2),
            "seconds in smoothed_delta with m = 3 (large n)": round(seconds_large, 2),
            "largest n with m = 3": largest,
        },
    )
