"""geo-two-way (Liang & Yi, CCS 2024, Fig. 4): ASE over a grid of threshold pairs."""

import numpy as np
from _exp_helpers import read_table


def _ase(table, eps, n, mechanism, column="ase_soft"):
    mask = np.isclose(table["epsilon"], eps) & (table["n"] == n) & (table["mechanism"] == mechanism)
    assert mask.sum() == 1
    return table[column][mask][0]


def test_smooth_sensitivity_beats_global_lipschitz_and_improves_with_n(tiny_run):
    _, folder = tiny_run("geo-two-way")
    table = read_table(folder / "ase.csv")
    eps = 1 / 12000
    for n in (50_000, 200_000):
        ss = _ase(table, eps, n, "smooth sensitivity, T(3)")
        assert ss < _ase(table, eps, n, "global Lipschitz")
        assert _ase(table, eps, n, "smooth sensitivity, PolyPlace") < ss
    # unbiased: ASE ∝ 1/n exactly up to the resampled multiplicities
    name = "smooth sensitivity, T(3)"
    ratio = _ase(table, eps, 50_000, name) / _ase(table, eps, 200_000, name)
    assert 3.0 < ratio < 5.0
    # noise a priori is bias-dominated: it does not improve 4× with 4× the users
    nap = _ase(table, eps, 50_000, "noise a priori") / _ase(table, eps, 200_000, "noise a priori")
    assert nap < 2.0
    assert "one configuration" in (folder / "report.md").read_text()


def test_closed_forms_of_global_lipschitz_and_ldp(tiny_run):
    # Σ over pairs of 2(1/(τε))²/n with τ = min(0.2‖T‖, 2/ε); LDP: pairs·2/(ε_L² n), ε_L = 12000ε.
    _, folder = tiny_run("geo-two-way")
    table = read_table(folder / "ase.csv")
    t = 10_000 + 140_000 * np.arange(8)
    t1, t2 = np.meshgrid(t, t, indexing="ij")
    for eps in (1 / 8000, 1 / 12000):
        n = 50_000
        tau = np.minimum(0.2 * np.hypot(t1, t2), 2 / eps)
        expected = np.sum(2 / (tau * eps) ** 2) / n
        assert np.isclose(_ase(table, eps, n, "global Lipschitz"), expected, rtol=1e-9)
        assert np.isclose(_ase(table, eps, n, "local DP"), 64 * 2 / (12000 * eps) ** 2 / n, rtol=1e-9)
