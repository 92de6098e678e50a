"""Liang & Yi, Smooth Sensitivity for Geo-Privacy, Figure 4: the two-way threshold.

Each user holds (income, debt) in USD; the analyst estimates, for every pair (T₁, T₂) of a 34 × 34 grid
(10k to 1M by 30k), the fraction with income > T₁ and debt > T₂, through the rounded-corner soft query f_τ
(τ = min(0.2‖T‖, 2/ε)) under ε-geo-privacy per USD. Mechanisms (from :mod:`smoothdp.geo`): smooth
sensitivity with T(3) (the paper's) and with PolyPlace (ours), global Lipschitz, noise a priori (planar
Laplace location, then the hard indicator, as in the authors' code) and local DP (ε_L = 12000·ε).

**ASE** = Σ over the grid of the squared error of each estimated fraction, in expectation over the noise.
The unbiased mechanisms' ASE is exact (the library's per-user variances); noise a priori's is the mean over
``reps`` runs of the actual mechanism (privatize the locations, count the quadrants), as in the paper.

**Users**: the n users are drawn with replacement from a synthetic population of ``population`` draws of
the correlated log-normal model (the design the paper uses for its one-way data), so per-user quantities
are computed once per distinct user and weighted by multiplicity: exact for the drawn data set, and what
makes 1156 queries × millions of users take seconds instead of the reference code's tens of CPU-hours.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from smoothdp.data.synthetic import INCOME_DEBT_PROVENANCE, income_debt
from smoothdp.experiments._framework import Outcome, Table, numerics_note, progress, save_figures
from smoothdp.experiments.style import bar_style, colour_bar, legend_outside, styled, subplots, suptitle
from smoothdp.geo import (
    GlobalLipschitz,
    LocalDP,
    NoiseAPriori,
    SmoothSensitivityMechanism,
    TwoWayThreshold,
    quadrant_fractions,
)

TITLE = "two-way threshold under geo-privacy: ASE over a grid of threshold pairs"
SOURCE = "Liang & Yi, Smooth Sensitivity for Geo-Privacy, CCS 2024, Figure 4"
REQUIRES = ("smoothdp.geo:TwoWayThreshold", "smoothdp.geo:quadrant_fractions", "smoothdp.geo:NoiseAPriori")

UNBIASED = ("smooth sensitivity, T(3)", "smooth sensitivity, PolyPlace", "global Lipschitz", "local DP")
MECHANISMS = (*UNBIASED[:3], "noise a priori", UNBIASED[3])
USER_BLOCK = 4096


@dataclass(frozen=True)
class Config:
    """The authors' code: T₁, T₂ ∈ {10k + 30k·j : j = 0..33} (all 1156 pairs; the code's batching drops the
    last 56), ε = 1/12000 per USD and n = 1.6M by default, ε ∈ {1/8000, 1/12000, 1/20000},
    n ∈ {0.4M, 1.6M, 6.4M}, ε_L = 12000·ε, 50 repetitions."""

    grid_start: float = 10_000.0
    grid_step: float = 30_000.0
    grid_size: int = 34
    epsilons: tuple[float, ...] = (1 / 8000, 1 / 12000, 1 / 20000)
    default_epsilon: float = 1 / 12000
    n_values: tuple[int, ...] = (400_000, 1_600_000, 6_400_000)
    default_n: int = 1_600_000
    ldp_unit: float = 12_000.0
    reps: int = 50
    population: int = 100_000
    #: How the simulated releases are computed: ``"float"`` (the papers' floating-point arithmetic) or
    #: ``"exact"`` (the library's hardened default, each report rounded onto a public grid of spacing
    #: ≤ 2⁻³⁶ of its scale). Same distributions up to that rounding, so the same MSE/ASE to ~1e−10
    #: relative; "exact" costs several times the run time here. The exact path has its own tests and
    #: benchmark (benchmarks/bench_exact_sampling.py).
    numerics: str = "float"


CONFIGS = {
    "full": Config(),
    "quick": Config(
        grid_step=90_000.0,
        grid_size=12,
        reps=10,
        population=20_000,
        n_values=(100_000, 400_000, 1_600_000),
        default_n=400_000,
    ),
    "tiny": Config(
        grid_step=140_000.0,
        grid_size=8,
        reps=5,
        population=4_000,
        epsilons=(1 / 8000, 1 / 12000),
        n_values=(50_000, 200_000),
        default_n=50_000,
    ),
}


def _grid(config: Config) -> np.ndarray:
    return config.grid_start + config.grid_step * np.arange(config.grid_size)


def _query(config: Config, eps: float) -> TwoWayThreshold:
    t = _grid(config)
    t1, t2 = np.meshgrid(t, t, indexing="ij")
    return TwoWayThreshold(np.stack([t1, t2], axis=-1), np.minimum(0.2 * np.hypot(t1, t2), 2.0 / eps))


def _weighted_sums(
    query: TwoWayThreshold, mechanisms: dict, population: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Σ_j c_j f(x_j) and, per mechanism, Σ_j c_j Var_j, for every grid pair and every column of counts
    (shape P + (k,)), processing the distinct users in blocks."""
    k = counts.shape[1]
    soft = np.zeros((*query.param_shape, k))
    variance = {name: np.zeros((*query.param_shape, k)) for name in mechanisms}
    for start in range(0, population.shape[0], USER_BLOCK):  # blocks of distinct users, not single users
        block, weights = population[start : start + USER_BLOCK], counts[start : start + USER_BLOCK]
        soft += query.value(block) @ weights
        for name, mechanism in mechanisms.items():
            variance[name] += mechanism.variance(block).per_user @ weights
    return soft, variance


def compute(config: Config, rng: np.random.Generator) -> tuple[Table, Table, dict]:
    population = income_debt(config.population, rng)
    t = _grid(config)
    settings = sorted(
        {(config.default_epsilon, n) for n in config.n_values}
        | {(eps, config.default_n) for eps in config.epsilons},
        key=lambda s: (s[0], s[1]),
    )
    counts = {
        n: rng.multinomial(n, np.full(config.population, 1.0 / config.population))
        for n in {n for _, n in settings}
    }
    rows: dict[str, list] = {k: [] for k in ("epsilon", "n", "mechanism", "ase_soft", "ase_hard", "pairs")}
    per_pair: dict[str, list] = {k: [] for k in ("epsilon", "n", "T1", "T2", "mechanism", "mse_soft")}
    timings = {}
    for eps in progress(sorted({s[0] for s in settings}), desc="geo-two-way"):
        ns = [n for e, n in settings if e == eps]
        query = _query(config, eps)
        mechanisms = {
            UNBIASED[0]: SmoothSensitivityMechanism(query, epsilon=eps, noise="student_t", df=3),
            UNBIASED[1]: SmoothSensitivityMechanism(query, epsilon=eps, noise="polyplace"),
            UNBIASED[2]: GlobalLipschitz(query, epsilon=eps),
            UNBIASED[3]: LocalDP(query, epsilon=eps * config.ldp_unit),
        }
        start = time.perf_counter()
        soft_sum, var_sum = _weighted_sums(
            query, mechanisms, population, np.column_stack([counts[n] for n in ns])
        )
        unbiased_seconds = time.perf_counter() - start
        nap = NoiseAPriori(query, epsilon=eps, hard=True, numerics=config.numerics)
        for i, n in enumerate(ns):
            start = time.perf_counter()
            users = np.repeat(population, counts[n], axis=0)
            soft, hard = soft_sum[..., i] / n, quadrant_fractions(users, t, t)
            nap_soft, nap_hard = np.zeros(query.param_shape), np.zeros(query.param_shape)
            for _ in range(config.reps):  # the paper's repetitions; each one privatizes all n users at once
                estimate = quadrant_fractions(nap.privatize(users, rng=rng), t, t)
                nap_soft += (estimate - soft) ** 2 / config.reps
                nap_hard += (estimate - hard) ** 2 / config.reps
            timings[(eps, n)] = unbiased_seconds / len(ns) + time.perf_counter() - start
            # Unbiased for the soft query: MSE = Var, and against the hard truth add (soft − hard)².
            mse = {
                name: (var_sum[name][..., i] / n**2, var_sum[name][..., i] / n**2 + (soft - hard) ** 2)
                for name in UNBIASED
            }
            mse["noise a priori"] = (nap_soft, nap_hard)
            for name in MECHANISMS:
                for key, value in (
                    ("epsilon", eps),
                    ("n", n),
                    ("mechanism", name),
                    ("ase_soft", float(mse[name][0].sum())),
                    ("ase_hard", float(mse[name][1].sum())),
                    ("pairs", int(soft.size)),
                ):
                    rows[key].append(value)
                if eps == config.default_epsilon and n == config.default_n:
                    t1, t2 = np.meshgrid(t, t, indexing="ij")
                    per_pair["epsilon"] += [eps] * soft.size
                    per_pair["n"] += [n] * soft.size
                    per_pair["T1"] += t1.ravel().tolist()
                    per_pair["T2"] += t2.ravel().tolist()
                    per_pair["mechanism"] += [name] * soft.size
                    per_pair["mse_soft"] += mse[name][0].ravel().tolist()
    return (
        Table(
            rows,
            "ASE = Σ over the grid of pairs of the squared error of the estimated fraction; "
            "ase_soft against the soft query f_τ, ase_hard against the hard indicator",
        ),
        Table(per_pair, "MSE of each pair at the default (ε, n)"),
        timings,
    )


@styled
def figures(tables: Mapping[str, Table], config: Config) -> dict[str, Figure]:
    """``ase_bars``: the ASE of every mechanism against ε (left) and n (right), one y-scale, one legend
    below; ``mse_ratio_per_pair``: per threshold pair, how many times smaller the MSE of smooth
    sensitivity is than global Lipschitz's, with T(3) and with PolyPlace noise, one colour bar."""
    ase, pairs = tables["ase"], tables["per_pair_mse"]
    fig, axes = subplots(1, 2, panel_size=(6.0, 4.0), sharey=True)
    rows = (
        (
            "ε (per USD)",
            [(e, config.default_n) for e in config.epsilons],
            lambda e, n: f"1/{1 / e:,.0f}",
            f"against ε at n = {config.default_n:,} users",
        ),
        (
            "n (users)",
            [(config.default_epsilon, n) for n in config.n_values],
            lambda e, n: f"{n:,}",
            f"against n at ε = 1/{1 / config.default_epsilon:,.0f} per USD",
        ),
    )
    width = 0.8 / len(MECHANISMS)
    pairs_count = int(ase.column("pairs")[0])
    for ax, (xlabel, settings, label, fixed) in zip(axes[0], rows, strict=True):
        for k, name in enumerate(MECHANISMS):
            values = [_ase(ase, e, n, name) for e, n in settings]
            offset = (k - len(MECHANISMS) / 2 + 0.5) * width
            ax.bar(np.arange(len(settings)) + offset, values, width, label=name, **bar_style(name))
        ax.set_xticks(np.arange(len(settings)), [label(e, n) for e, n in settings])
        ax.set(yscale="log", xlabel=xlabel, title=fixed)
        ax.grid(axis="x", visible=False)
    axes[0, 0].set_ylabel(f"ASE over {pairs_count:,} pairs (fraction²)")
    legend_outside(fig, where="below", ncols=len(MECHANISMS))
    suptitle(
        fig,
        "Two-way threshold: ASE of five geo-private mechanisms (SYNTHETIC correlated log-normal income "
        "and debt)",
    )
    out = {"ase_bars": fig}
    fig, axes = subplots(1, 2, panel_size=(4.6, 4.0), sharex=True, sharey=True)
    t = _grid(config) / 1000
    half = config.grid_step / 2000  # pixels centred on the thresholds
    mech, mse = pairs.column("mechanism"), pairs.column("mse_soft")
    gl = mse[mech == "global Lipschitz"].reshape(t.size, t.size)
    image = None
    for ax, name in zip(axes[0], (UNBIASED[1], UNBIASED[0]), strict=True):
        ss = mse[mech == name].reshape(t.size, t.size)
        image = ax.imshow(
            np.log10(gl / ss).T,
            origin="lower",
            extent=(t[0] - half, t[-1] + half, t[0] - half, t[-1] + half),
            cmap="RdBu",
            vmin=-2,
            vmax=2,
            aspect="auto",
        )
        ax.set(xlabel="income threshold T₁ (thousand USD)", title=name)
        ax.grid(visible=False)
    axes[0, 0].set_ylabel("debt threshold T₂ (thousand USD)")
    colour_bar(fig, image, axes[0], label="log₁₀ MSE ratio:\nglobal Lipschitz / smooth sensitivity")
    suptitle(
        fig,
        f"Per threshold pair: smooth sensitivity against global Lipschitz (blue: smooth sensitivity better), "
        f"ε = 1/{1 / config.default_epsilon:,.0f} per USD, n = {config.default_n:,}",
    )
    out["mse_ratio_per_pair"] = fig
    return out


def _ase(ase: Table, eps: float, n: int, name: str) -> float:
    mask = np.isclose(ase.column("epsilon"), eps) & (ase.column("n") == n) & (ase.column("mechanism") == name)
    return float(ase.column("ase_soft")[mask][0])


def headline(ase: Table, config: Config) -> str:
    e, n = config.default_epsilon, config.default_n
    best = min(MECHANISMS, key=lambda name: _ase(ase, e, n, name))
    small, large = min(config.n_values), max(config.n_values)
    value = {name: _ase(ase, e, n, name) for name in MECHANISMS}
    return (
        f"At ε = 1/{1 / e:,.0f} and n = {n:,}, the ASE over {ase.column('pairs')[0]} threshold pairs is "
        f"{value[UNBIASED[0]]:.3g} for smooth sensitivity with T(3) ({value[UNBIASED[1]]:.3g} "
        f"with PolyPlace) against {value['global Lipschitz']:.3g} for global Lipschitz, "
        f"{value['noise a priori']:.3g} for noise a priori and {value['local DP']:.3g} for "
        f"local DP (best: {best}); from n = {small:,} to {large:,} smooth sensitivity improves "
        f"{_ase(ase, e, small, UNBIASED[0]) / _ase(ase, e, large, UNBIASED[0]):.1f}× and noise a priori "
        f"{_ase(ase, e, small, 'noise a priori') / _ase(ase, e, large, 'noise a priori'):.1f}×."
    )


def run(config: Config, rng: np.random.Generator, out_dir: Path) -> Outcome:
    ase, pairs, timings = compute(config, rng)
    default = timings[(config.default_epsilon, config.default_n)]
    tables = {"ase": ase, "per_pair_mse": pairs}
    return Outcome(
        tables=tables,
        figures=save_figures(figures(tables, config), out_dir),
        headline=headline(ase, config),
        data=[
            INCOME_DEBT_PROVENANCE,
            f"n users drawn with replacement from a population of {config.population:,} draws of that model",
        ],
        notes=[
            numerics_note(config.numerics, "the repetitions of noise a priori"),
            "The reference implementation needs about 34 CPU-hours for one (ε, n) configuration "
            "(docs/geo.md); see 'one configuration' above for ours.",
            "ASE is the sum over the grid (the paper does not say whether it also divides by the number "
            "of pairs); plotted against the soft query f_τ, ase_hard in ase.csv against the hard one.",
            "All 1156 pairs are evaluated (the authors' batching evaluates only the first 1100).",
            "Noise a priori uses the hard indicator on the privatized location (as the authors' two-way "
            "code); its ASE is the mean over the repetitions; the other mechanisms' ASE is exact.",
            "Local DP is applied to the soft query here (same variance 2/ε_L² as on the hard one).",
        ],
        extra={
            "one configuration (default ε and n, all mechanisms)": f"{default:.1f} s",
            "configurations (ε, n): seconds": ", ".join(
                f"(1/{1 / e:,.0f}, {n:,}): {s:.1f}" for (e, n), s in sorted(timings.items())
            ),
        },
    )
