"""smoothed-sgd (Liu, Wang & Xia, TMLR 2023, Fig. 2 right): the smoothed δ falls with n and stays below
DP's δ = T/n."""

import math

import numpy as np
from _exp_helpers import read_table


def test_smoothed_delta_falls_with_n_and_beats_dp(tiny_run):
    _, folder = tiny_run("smoothed-sgd")
    table = read_table(folder / "delta_sdp.csv")
    for eps in np.unique(table["epsilon"]):
        mask = table["epsilon"] == eps
        order = np.argsort(table["n"][mask])
        assert np.all(np.diff(table["delta_sdp"][mask][order]) < 0), eps
    assert np.all(table["delta_sdp"] < table["dp_delta"])
    # DP's δ for sampling T = round(√n) of n records is T/n (a record is sampled with probability T/n).
    np.testing.assert_allclose(table["dp_delta"], np.round(np.sqrt(table["n"])) / table["n"], rtol=1e-12)
    # larger ε, smaller δ at every n
    for n in np.unique(table["n"]):
        mask = table["n"] == n
        order = np.argsort(table["epsilon"][mask])
        assert np.all(np.diff(table["delta_sdp"][mask][order]) < 0)


def test_exact_delta_agrees_with_monte_carlo(tiny_run):
    _, folder = tiny_run("smoothed-sgd")
    check = read_table(folder / "monte_carlo_check.csv")
    for exact, mc, draws in zip(check["exact"], check["monte_carlo"], check["draws"], strict=True):
        slack = 5 * math.sqrt(exact / draws) + 0.15 * exact
        assert abs(mc - exact) < slack
