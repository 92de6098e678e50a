"""polyplace-std (Hladík & Tětek, FORC 2025, Fig. 1): PolyPlace has the lowest std at every β."""

import math

import numpy as np
from _exp_helpers import read_table


def test_polyplace_is_lowest_at_every_beta(tiny_run):
    record, folder = tiny_run("polyplace-std")
    table = read_table(folder / "std_per_sensitivity.csv")
    poly = table["polyplace"]
    assert np.all(np.isfinite(poly))
    for competitor in ("student_t", "cauchy", "laplace", "student_t_ly", "cauchy_ly"):
        assert np.all(poly < table[competitor]), competitor
    assert table["polyplace_is_lowest"].all()
    assert f"at {poly.size} of {poly.size} values" in record.outcome.headline
    assert (folder / "std_per_sensitivity.png").exists() and (folder / "report.md").exists()


def test_values_match_independent_formulas(tiny_run):
    _, folder = tiny_run("polyplace-std")
    table = read_table(folder / "std_per_sensitivity.csv")
    beta = table["beta"]
    # As β → 0, PolyPlace(1/β, ε/β) → Laplace(1/ε) (HT Lemma 15): std → √2/ε.
    assert abs(table["polyplace"][0] - math.sqrt(2)) < 0.02
    assert np.allclose(table["global_laplace"], math.sqrt(2))
    # Laplace (ε, δ) of HT Claim 18: √2/(ε − β ln(2/δ)) where positive.
    finite = np.isfinite(table["laplace"])
    expected = math.sqrt(2) / (1 - beta[finite] * math.log(2 / 1e-5))
    np.testing.assert_allclose(table["laplace"][finite], expected, rtol=1e-12)
    # BS19 Student's T: the optimised std is at most the value at d = 3 (no optimiser needed to check).
    ok = beta < 0.2
    at_d3 = 4 / (2 * 1.0 * (1 - 4 * beta[ok]))
    assert np.all(table["student_t"][ok] <= at_d3 * (1 + 1e-9))


def test_polyplace_matches_the_simplified_variance_formula(tiny_run):
    # docs/theory/noise.md#polyplace (HT Lemma 13), simplified form:
    # σ² = 2s²[(19α²+5)r + (α−2)(α−1)²] / [(2r+α−1)(α²−1)(α²−4)], r = (1−1/α)^α,
    # with s = 1/β, α = ε/β (ε = 1).
    _, folder = tiny_run("polyplace-std")
    table = read_table(folder / "std_per_sensitivity.csv")
    s = 1 / table["beta"]
    a = s.copy()
    r = (1 - 1 / a) ** a
    numerator = (19 * a**2 + 5) * r + (a - 2) * (a - 1) ** 2
    var = 2 * s**2 * numerator / ((2 * r + a - 1) * (a**2 - 1) * (a**2 - 4))
    np.testing.assert_allclose(table["polyplace"], np.sqrt(var), rtol=1e-9)
