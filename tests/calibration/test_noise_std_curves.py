"""noise_std_per_sensitivity: HT Figure 1 (noise std per unit of smooth sensitivity against β)."""

import math

import numpy as np
import pytest
from scipy import optimize

from smoothdp.calibration import calibrate
from smoothdp.noise_std import noise_std_per_sensitivity

COMPETITORS = ("student_t", "cauchy", "laplace", "laplace_calibrated", "student_t_ly", "cauchy_ly")


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_polyplace_is_lowest_at_every_beta(epsilon):
    betas = epsilon * np.concatenate([np.geomspace(1e-5, 0.01, 20), np.linspace(0.01, 0.499, 120)])
    curves = noise_std_per_sensitivity(epsilon, betas)
    assert np.all(np.isfinite(curves.polyplace))
    for name in COMPETITORS:
        other = getattr(curves, name)
        assert np.all(curves.polyplace < other), name
    # ... and never below the Laplace mechanism with global sensitivity (HT's dashed line).
    assert np.all(curves.polyplace > curves.global_laplace)


def test_admissible_ranges():
    eps = 1.0
    curves = noise_std_per_sensitivity(eps, np.array([0.2, 0.3, 0.34, 0.49, 0.5, 0.7]))
    np.testing.assert_array_equal(np.isfinite(curves.polyplace), [True, True, True, True, False, False])
    # BS19 T needs β < ε/(d+1) with d > 2: β < ε/3. NRS Cauchy needs β < ε/(c+1) with c > 3: β < ε/4.
    np.testing.assert_array_equal(np.isfinite(curves.student_t), [True, True, False, False, False, False])
    np.testing.assert_array_equal(np.isfinite(curves.cauchy), [True, False, False, False, False, False])
    # Laplace (ε, δ=1e-5): β < ε/ln(2/δ) = 0.0819.
    assert not np.any(np.isfinite(curves.laplace))
    assert np.all(np.isnan(curves.student_t_df[~np.isfinite(curves.student_t)]))


def test_values_against_closed_forms():
    eps, delta = 1.0, 1e-5
    betas = np.array([1e-4, 0.01, 0.05, 0.1, 0.2])
    curves = noise_std_per_sensitivity(eps, betas, delta=delta)
    # PolyPlace: HT Lemma 13 at α = 5 and 10 (notes §1.5 table: σ² = 0.174987 and 0.0284761 at s = 1).
    assert curves.polyplace[4] == pytest.approx(5 * math.sqrt(0.174987), rel=1e-5)
    assert curves.polyplace[3] == pytest.approx(10 * math.sqrt(0.0284761), rel=1e-5)
    # Small β: Corollary 14, Var ≈ 2/ε² + 2(17 − 3e)/e · β/ε³.
    var = 2 / eps**2 + 2 * (17 - 3 * math.e) / math.e * 1e-4 / eps**3
    assert curves.polyplace[0] == pytest.approx(math.sqrt(var), rel=1e-6)
    # Laplace (HT Claim 18): √2/(ε − β ln(2/δ)).
    np.testing.assert_allclose(
        curves.laplace[:3], math.sqrt(2) / (eps - betas[:3] * math.log(2 / delta)), rtol=1e-14
    )
    assert np.all(curves.global_laplace == math.sqrt(2) / eps)


@pytest.mark.parametrize("beta", [1e-3, 0.05, 0.2])
def test_optimised_shapes_against_scipy(beta):
    eps = 1.0
    curves = noise_std_per_sensitivity(eps, np.array([beta]))

    def best(f, lo, hi):
        res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        return res.fun

    bs = best(
        lambda d: (d + 1) / (2 * math.sqrt(d - 2) * (eps - beta * (d + 1))), 2 + 1e-9, eps / beta - 1 - 1e-9
    )
    ly = best(lambda d: (d + 1) / (2 * math.sqrt(d - 2) * (eps - beta * d)), 2 + 1e-9, eps / beta - 1e-9)
    assert curves.student_t[0] == pytest.approx(bs, rel=1e-7)
    assert curves.student_t_ly[0] == pytest.approx(ly, rel=1e-7)
    if beta < 0.25:
        nrs = best(
            lambda c: (c + 1) / ((eps - beta * (c + 1)) * math.sqrt(2 * math.cos(2 * math.pi / c) + 1)),
            3 + 1e-9,
            eps / beta - 1 - 1e-9,
        )
        assert curves.cauchy[0] == pytest.approx(nrs, rel=1e-7)


def test_student_t_optimum_tends_to_five_degrees_of_freedom():
    # As β → 0, (d+1)/√(d−2) is minimised at d = 5.
    assert noise_std_per_sensitivity(1.0, [1e-7]).student_t_df[0] == pytest.approx(5.0, abs=1e-3)


def test_curves_agree_with_calibrate_at_a_fixed_shape():
    # At a fixed β the optimised T curve is no worse than the LY default T(3) calibration.
    eps = 1.0
    cal = calibrate("student_t", epsilon=eps)
    curves = noise_std_per_sensitivity(eps, [cal.beta])
    assert curves.student_t_ly[0] <= cal.std_per_unit
    assert curves.polyplace[0] == pytest.approx(
        calibrate("polyplace", epsilon=eps, beta=cal.beta).std_per_unit, rel=1e-12
    )


def test_shape_is_kept_and_bad_input_refused():
    grid = np.full((2, 3), 0.1)
    assert noise_std_per_sensitivity(1.0, grid).cauchy_ly.shape == (2, 3)
    with pytest.raises(ValueError, match="betas"):
        noise_std_per_sensitivity(1.0, [0.1, -0.1])
    with pytest.raises(ValueError, match="betas"):
        noise_std_per_sensitivity(1.0, [])
    with pytest.raises(ValueError, match="epsilon"):
        noise_std_per_sensitivity(0.0, [0.1])
    with pytest.raises(ValueError, match="delta"):
        noise_std_per_sensitivity(1.0, [0.1], delta=0.0)
