"""smoothed-elections (Liu, Wang & Xia, TMLR 2023, Figs. 1 and 2 left): δ_SDP of lost ballots falls with n;
exact large-ε oracle."""

import csv
import math

import numpy as np
from _exp_helpers import read_table


def _dc_biden_share():
    # Independent of the library's loader: the DC row of the shipped CSV (or the published totals).
    from importlib import resources

    text = resources.files("smoothdp.data").joinpath("election_2020_president.csv").read_text()
    row = next(r for r in csv.DictReader(text.splitlines()) if r["unit"] == "DC")
    return int(row["biden"]) / (int(row["biden"]) + int(row["trump"]))


def test_smoothed_delta_falls_with_n_and_beats_dp(tiny_run):
    _, folder = tiny_run("smoothed-elections")
    table = read_table(folder / "figure2_delta_sdp.csv")
    for eps in set(table["epsilon"]):
        mask = table["epsilon"] == eps
        order = np.argsort(table["n"][mask])
        logd = table["log10_delta_sdp"][mask][order]
        assert np.all(np.diff(logd) < 0), eps
        assert np.all(logd < np.log10(table["dp_delta"][mask]))


def test_large_epsilon_matches_the_exact_oracle(tiny_run):
    # For large ε, δ_SDP = (1 − π_min)^L with L = n − ⌈ηn⌉ lost ballots
    # (docs/theory/smoothed-dp.md#binary-hypergeometric-closed-form): here the DC vertex, whose Trump share
    # 0.0553 is the smallest category probability of the hull.
    _, folder = tiny_run("smoothed-elections")
    table = read_table(folder / "figure2_delta_sdp.csv")
    p = _dc_biden_share()
    assert abs(p - 0.944670) < 1e-6
    mask = table["epsilon"] == 7.0
    for n, logd in zip(table["n"][mask], table["log10_delta_sdp"][mask], strict=True):
        lost = int(n) - math.ceil(0.998 * int(n))
        assert math.isclose(logd, lost * math.log10(p), rel_tol=1e-9)


def test_figure1_recent_elections_are_more_private(tiny_run):
    _, folder = tiny_run("smoothed-elections")
    table = read_table(folder / "figure1_delta_by_year.csv")
    assert table["year"].max() == 2020  # the tiny setting starts in 1992; full and quick in 1920
    # The paper: "of order 1e-32 to 1e-8", 1e-32 for 2020; larger electorates give smaller δ.
    assert -34 < table["log10_delta"].min() < -30
    earliest = table["year"].min()
    assert table["log10_delta"][table["year"] == 2020][0] < table["log10_delta"][table["year"] == earliest][0]
