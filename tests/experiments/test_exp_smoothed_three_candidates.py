"""smoothed-three-candidates (an extension of Liu, Wang & Xia, TMLR 2023, Fig. 2 left, to Biden / Trump /
other): the ε = 7 values against an independent enumeration of the ε → ∞ limit; the hull-vertex units."""

import csv
import math
from importlib import resources

import numpy as np
from _exp_helpers import read_table
from scipy.spatial import ConvexHull

from smoothdp.experiments import smoothed_three_candidates as module


def _votes():
    # Independent of the library's loader: the shipped CSV read with the csv module.
    text = resources.files("smoothdp.data").joinpath("election_2020_president.csv").read_text()
    return {
        r["unit"]: (int(r["biden"]), int(r["trump"]), int(r["other"]))
        for r in csv.DictReader(text.splitlines())
    }


def _histograms(n, m):
    if m == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _histograms(n - first, m - 1):
            yield (first, *rest)


def _log10_delta_infinity(n, lost, shares):
    """log10 E_{x ~ Mult(n, π)}[δ_∞(x)] for the sampling histogram that loses ``lost`` of n ballots.

    For x' = x − e_a + e_b, an output is impossible under x' iff it keeps all x_a ballots of category a
    (probability C(n − x_a, L)/C(n, L)), and impossible under x iff it keeps all x_b + 1 of category b of x'
    (C(n − x_b − 1, L)/C(n, L)); every other output has likelihood ratio at most n < e^ε, so it adds nothing.
    δ(x) is the largest of these over a ≠ b with x_a ≥ 1, both directions (the profile's definition).
    """
    logs = np.log(shares)
    terms = []
    for x in _histograms(n, len(shares)):
        best = 0
        for a, xa in enumerate(x):
            if xa == 0:
                continue
            for b, xb in enumerate(x):
                if b != a:
                    best = max(best, math.comb(n - xa, lost), math.comb(n - xb - 1, lost))
        if best:
            log_p = math.lgamma(n + 1) + sum(
                k * lp - math.lgamma(k + 1) for k, lp in zip(x, logs, strict=True)
            )
            terms.append(log_p + math.log(best) - math.log(math.comb(n, lost)))
    peak = max(terms)
    return (peak + math.log(math.fsum(math.exp(t - peak) for t in terms))) / math.log(10)


def test_large_epsilon_matches_an_independent_enumeration(tiny_run):
    _, folder = tiny_run("smoothed-three-candidates")
    table = read_table(folder / "delta_against_n.csv")
    votes = _votes()
    config = module.CONFIGS["tiny"]
    mask = table["epsilon"] == 7.0
    assert mask.sum() == len(config.units) * len(config.n_values)
    for unit, n, lost, three, two in zip(
        table["unit"][mask],
        table["n"][mask].astype(int),
        table["lost_ballots"][mask].astype(int),
        table["log10_delta_three"][mask],
        table["log10_delta_two_party"][mask],
        strict=True,
    ):
        assert n < math.exp(7.0) and lost == n - math.ceil(config.eta * n)
        counts = np.array(votes[unit], dtype=float)
        assert math.isclose(three, _log10_delta_infinity(n, lost, counts / counts.sum()), abs_tol=1e-9), unit
        assert math.isclose(two, _log10_delta_infinity(n, lost, counts[:2] / counts[:2].sum()), abs_tol=1e-9)


def test_every_unit_is_in_the_by_unit_table_and_agrees_with_the_curves(tiny_run):
    _, folder = tiny_run("smoothed-three-candidates")
    by_unit = read_table(folder / "delta_by_unit.csv")
    curves = read_table(folder / "delta_against_n.csv")
    assert set(by_unit["unit"]) == set(_votes())  # 56 jurisdictions and the national vote
    config = module.CONFIGS["tiny"]
    same = (
        (curves["unit"] == "US")
        & (curves["n"] == config.by_unit_n)
        & (curves["epsilon"] == config.by_unit_epsilon)
    )
    national = by_unit["unit"] == "US"
    assert same.sum() == 1
    assert by_unit["log10_delta_three"][national][0] == curves["log10_delta_three"][same][0]
    # the headline: a third category leaves the national election less private than its two-party vote
    assert by_unit["log10_delta_three"][national][0] > by_unit["log10_delta_two_party"][national][0]


def test_the_hull_units_are_the_vertices_of_the_three_way_shares():
    votes = {u: v for u, v in _votes().items() if u != "US"}
    units = sorted(votes)
    shares = np.array([np.array(votes[u], dtype=float) / sum(votes[u]) for u in units])
    hull = ConvexHull(shares[:, :2])  # the shares sum to 1: the (Biden, Trump) plane holds the simplex
    expected = {units[i] for i in hull.vertices}
    from smoothdp.data.elections import load_election_2020

    assert set(module.hull_units(load_election_2020())) == expected


def _log10_delta_infinity_vectorized(n, lost, shares):
    """The same ε → ∞ limit as above, every histogram at once (numpy), for n in the thousands."""
    from scipy.special import gammaln

    x0, x1 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = x0 + x1 <= n
    x = np.stack([x0[keep], x1[keep], n - x0[keep] - x1[keep]], axis=1)

    def log_comb(a, k):
        with np.errstate(invalid="ignore"):
            return np.where(a >= k, gammaln(a + 1) - gammaln(k + 1) - gammaln(a - k + 1), -np.inf)

    best = np.full(x.shape[0], -np.inf)
    for a in range(3):
        for b in range(3):
            if a != b:
                both = np.maximum(log_comb(n - x[:, a], lost), log_comb(n - x[:, b] - 1, lost))
                best = np.maximum(best, np.where(x[:, a] >= 1, both, -np.inf))
    log_p = gammaln(n + 1) - gammaln(x + 1).sum(axis=1) + (x * np.log(shares)).sum(axis=1)
    terms = log_p + best - log_comb(np.array(n), lost)
    peak = terms[np.isfinite(terms)].max()
    return (peak + np.log(np.exp(terms[np.isfinite(terms)] - peak).sum())) / math.log(10)


def test_large_n_bracket_contains_an_independent_enumeration():
    """n = 1000, η = 0.998 (2 lost ballots), ε = 7 > ln n: the bracket of the fast m = 3 path against the
    enumerated ε → ∞ limit; the bracket is ordered and within the stated 1%."""
    config = module.Config(epsilons=(7.0,), large_n_values=(1000,))
    table, _ = module.delta_large_n(config, module.load_election_2020())
    counts = np.array(_votes()[module.NATIONAL], dtype=float)
    truth = _log10_delta_infinity_vectorized(1000, 2, counts / counts.sum())
    upper, lower = float(table.columns["log10_delta_three"][0]), float(table.columns["log10_lower_three"][0])
    assert lower - 1e-9 <= truth <= upper + 1e-9
    assert upper - lower <= math.log10(1.01) + 1e-12
    assert int(table.columns["lost_ballots"][0]) == 2
