"""central-adaptive (Near & Abuah, Programming Differential Privacy, "Local Sensitivity"): PTR, smooth
sensitivity, sample-and-aggregate on Adult ages."""

import math

import numpy as np
from _exp_helpers import read_table

N_ADULT = 32_561


def _summary(tiny_run):
    _, folder = tiny_run("central-adaptive")
    return read_table(folder / "summary.csv"), read_table(folder / "releases.csv")


def _row(summary, panel, method_prefix):
    mask = (summary["panel"] == panel) & np.char.startswith(summary["method"], method_prefix)
    assert mask.sum() == 1, (panel, method_prefix)
    return {k: v[mask][0] for k, v in summary.items()}


def test_smooth_sensitivity_median_beats_global_sensitivity(tiny_run):
    summary, _ = _summary(tiny_run)
    smooth, glob = _row(summary, "median", "smooth"), _row(summary, "median", "global")
    assert smooth["median_pct_error"] < 0.01 * glob["median_pct_error"]
    # Laplace with the median's global sensitivity 125 at ε = 1: std √2·125 (independent closed form).
    assert math.isclose(glob["noise_std"], math.sqrt(2) * 125, rel_tol=1e-12)


def test_noise_scales_follow_the_closed_forms(tiny_run):
    summary, _ = _summary(tiny_run)
    ptr = _row(summary, "ptr", "PTR")
    # PTR releases Lap(b/ε₂) with ε₂ = ε/2: std √2·0.005/0.5; b = 0.005 > LS = 100/n, so it never refuses.
    assert math.isclose(ptr["noise_std"], math.sqrt(2) * 0.005 / 0.5, rel_tol=1e-12)
    assert ptr["refused"] == 0
    # The mean's smooth sensitivity is (u − l)/n = 100/n; PolyPlace's std per unit is above √2/ε (Laplace
    # limit) and below 3 at the calibrated β.
    poly = _row(summary, "smooth", "smooth sensitivity, polyplace")
    assert math.sqrt(2) * 100 / N_ADULT < poly["noise_std"] < 3 * 100 / N_ADULT
    # Sample-and-aggregate: Laplace((u − l)/(kε)) with [l, u] = [20, 80].
    for k in (10, 1000, 6000):
        saa = _row(summary, f"saa_{k}", "sample")
        assert math.isclose(saa["noise_std"], math.sqrt(2) * 60 / k, rel_tol=1e-12)


def test_sample_and_aggregate_improves_with_more_blocks(tiny_run):
    summary, releases = _summary(tiny_run)
    errors = [_row(summary, f"saa_{k}", "sample")["median_pct_error"] for k in (10, 1000, 6000)]
    assert errors[0] > errors[1] > errors[2]
    assert set(releases["panel"]) >= {"ptr", "smooth", "saa_10", "median"}
    assert np.all(releases["pct_error"] >= 0)


def test_guarantees_state_their_neighbour_relation(tiny_run):
    # The mean mechanisms are private under add/remove (n is private), the median ones under substitution;
    # PTR and the Laplace smooth-sensitivity mechanism spend δ = 1/n².
    summary, _ = _summary(tiny_run)
    rows = zip(summary["panel"], summary["method"], summary["guarantee"], strict=True)
    for panel, method, guarantee in rows:
        if panel == "median":
            assert guarantee == "1-DP", (panel, method)
        elif method.startswith("sample-and-aggregate"):  # balanced partition: substitution only
            assert guarantee == "1-DP", (panel, method)
        else:
            assert guarantee.endswith("-DP (add/remove)"), (panel, method, guarantee)
    assert _row(summary, "ptr", "PTR")["guarantee"].startswith("(1, 9.43")
