"""geo-kde (Liang & Yi, CCS 2024, Figs. 5, 6, 9-11): Gaussian KDE of NYC collisions."""

import math

import numpy as np
from _exp_helpers import read_table

from smoothdp.experiments.geo_kde import product_grid_kde


def _ase(table, eps, k, n, mechanism):
    mask = (
        np.isclose(table["epsilon"], eps)
        & np.isclose(table["bandwidth_factor"], k)
        & (table["n"] == n)
        & (table["mechanism"] == mechanism)
    )
    assert mask.sum() == 1
    return table["ase"][mask][0]


def test_smooth_sensitivity_beats_global_lipschitz_and_noise_a_priori(tiny_run):
    _, folder = tiny_run("geo-kde")
    table = read_table(folder / "ase.csv")
    for k in (1.0,):
        ss = _ase(table, 1 / 1000, k, 20_000, "smooth sensitivity, T(3)")
        assert ss < _ase(table, 1 / 1000, k, 20_000, "global Lipschitz")
        assert _ase(table, 1 / 1000, k, 20_000, "smooth sensitivity, PolyPlace") < ss
    # unbiased mechanisms scale as 1/n (4× users: ≈ 4× smaller ASE); noise a priori (location) does not
    name = "smooth sensitivity, T(3)"
    assert 3 < _ase(table, 1 / 1000, 1.0, 20_000, name) / _ase(table, 1 / 1000, 1.0, 80_000, name) < 5
    nap = "noise a priori (location)"
    assert _ase(table, 1 / 1000, 1.0, 20_000, nap) / _ase(table, 1 / 1000, 1.0, 80_000, nap) < 2


def test_closed_forms_of_global_lipschitz_and_ldp(tiny_run):
    # |G| centres × 2(e^{-1/2}/(hε))²/n for global Lipschitz; |G| × 2/(ε_L² n) with ε_L = 1000ε for LDP.
    _, folder = tiny_run("geo-kde")
    table = read_table(folder / "ase.csv")
    gl = table["mechanism"] == "global Lipschitz"
    scale = math.exp(-0.5) / (table["bandwidth_m"][gl] * table["epsilon"][gl])
    expected = table["queries"][gl] * 2 * scale**2
    np.testing.assert_allclose(table["ase"][gl], expected / table["n"][gl], rtol=1e-9)
    ldp = table["mechanism"] == "local DP"
    expected = table["queries"][ldp] * 2 / (1000 * table["epsilon"][ldp]) ** 2 / table["n"][ldp]
    np.testing.assert_allclose(table["ase"][ldp], expected, rtol=1e-9)


def test_product_grid_kde_matches_the_direct_sum():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(50, 2)) * 1000
    weights = rng.integers(0, 4, size=50).astype(float)
    gx, gy, h = np.linspace(-2000, 2000, 7), np.linspace(-1500, 1500, 5), 700.0

    def kernel(a, b):
        return np.exp(-((points[:, 0] - a) ** 2 + (points[:, 1] - b) ** 2) / (2 * h * h))

    direct = np.array([[np.sum(weights * kernel(a, b)) for b in gy] for a in gx]) / weights.sum()
    np.testing.assert_allclose(product_grid_kde(points, weights, gx, gy, h), direct, rtol=1e-12)
    np.testing.assert_allclose(
        product_grid_kde(points, None, gx, gy, h),
        product_grid_kde(points, np.ones(50), gx, gy, h),
        rtol=1e-12,
    )


def test_uniform_grid_interpolation_matches_np_interp():
    from smoothdp.experiments.geo_kde import interp_uniform

    rng = np.random.default_rng(1)
    stop = 51_234.5
    grid = np.linspace(0.0, stop, 4001)
    tables = (np.exp(-grid / 5000.0), np.sin(grid / 700.0))
    x = np.concatenate([rng.uniform(0.0, stop, 5000), grid[[0, 1, 2000, -2, -1]], [-3.0, stop * 1.5]])
    for table, got in zip(tables, interp_uniform(x, stop, tables), strict=True):
        np.testing.assert_allclose(got, np.interp(x, grid, table), rtol=0, atol=1e-13)


def test_the_report_says_how_the_releases_were_simulated(tiny_run):
    _, folder = tiny_run("geo-kde")
    report = (folder / "report.md").read_text()
    assert "| `numerics` | float |" in report
    assert "numerics='float'" in report and "exact path" in report
