"""The calibration rules: each rule's privacy equation, re-derived here; its defaults against the papers."""

import math

import numpy as np
import pytest

from smoothdp.calibration import (
    DEFAULT_NOISE,
    NOISE_OPTIONS,
    Calibration,
    calibrate,
    check_noise_options,
    laplace_dp_eta,
    privacy_constants,
)
from smoothdp.noise import GeneralizedCauchy, Laplace, PolyPlace, StudentT
from smoothdp.privacy import ApproxDP, GeoPrivacy, PureDP

MODELS = ["dp", "geo"]


# -- each rule's equation, plugged back in -------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(("epsilon", "beta"), [(1.0, None), (1.0, 0.9), (0.3, 0.01), (5.0, 2.0)])
def test_polyplace_is_scale_one_over_beta_and_shape_eps_over_beta(epsilon, beta, model):
    cal = calibrate("polyplace", epsilon=epsilon, beta=beta, model=model)
    b = epsilon / 9 if beta is None else beta
    assert isinstance(cal.noise, PolyPlace)
    assert cal.beta == pytest.approx(b, rel=1e-15)
    assert cal.noise.scale == pytest.approx(1 / b, rel=1e-15)
    assert cal.noise.shape == pytest.approx(epsilon / b, rel=1e-15)
    assert cal.growth == "exponential"
    assert "Theorem 8" in cal.source
    assert cal.guarantee == (PureDP(epsilon) if model == "dp" else GeoPrivacy(epsilon))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    ("epsilon", "beta", "df"),
    [(1.0, None, 3), (1.0, 0.3, 3), (2.0, None, 0.5), (0.5, 0.05, 5), (1.0, None, 10)],
)
def test_student_t_satisfies_liang_yi_lemma_3_5(epsilon, beta, df, model):
    cal = calibrate("student_t", epsilon=epsilon, beta=beta, model=model, df=df)
    eta = 1.0 / cal.noise.scale
    # LY Lemma 3.5: ε = νβ + (ν+1)/(2√ν)·η (for ν ≥ 1; the dilation coefficient is 1 for ν < 1).
    assert max(df, 1) * cal.beta + (df + 1) / (2 * math.sqrt(df)) * eta == pytest.approx(epsilon, rel=1e-12)
    assert isinstance(cal.noise, StudentT) and cal.noise.df == df
    assert cal.eta == pytest.approx(eta, rel=1e-15)
    assert "Lemma 3.5" in cal.source


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(("epsilon", "beta", "df"), [(1.0, None, 3), (1.0, 0.2, 3), (0.7, 0.01, 7.5)])
def test_student_t_bun_steinke_constants(epsilon, beta, df, model):
    cal = calibrate("student_t", epsilon=epsilon, beta=beta, model=model, df=df, constants="bun_steinke")
    eta = 1.0 / cal.noise.scale
    assert (df + 1) * cal.beta + (df + 1) / (2 * math.sqrt(df)) * eta == pytest.approx(epsilon, rel=1e-12)
    assert "Bun & Steinke" in cal.source
    # Same β: the LY constant leaves more budget to sliding, so less noise.
    tight = calibrate("student_t", epsilon=epsilon, beta=cal.beta, model=model, df=df)
    assert tight.noise.scale < cal.noise.scale


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    ("epsilon", "beta", "gamma", "k"),
    [
        (1.0, None, 4, 1),
        (2.0, None, 4, 1),
        (1.0, 0.1, 1.5, 1),
        (1.0, 0.05, 6, 1),
        (1.0, 0.1, 4, 2),
        (0.5, None, 3, 3),
    ],
)
def test_cauchy_satisfies_liang_yi_lemma_3_3_and_corollary_3_2(epsilon, beta, gamma, k, model):
    cal = calibrate("cauchy", epsilon=epsilon, beta=beta, model=model, gamma=gamma, dimension=k)
    eta = 1.0 / cal.noise.scale
    # LY Lemma 3.3 / Corollary 3.2: ε = k·(γ−1)β + (γ−1)^{(γ−1)/γ}·η, with max(1, γ−1) for γ < 2.
    dilation = max(1.0, gamma - 1.0)
    assert k * dilation * cal.beta + (gamma - 1) ** ((gamma - 1) / gamma) * eta == pytest.approx(
        epsilon, rel=1e-12
    )
    assert isinstance(cal.noise, GeneralizedCauchy) and cal.noise.gamma == gamma
    assert cal.dimension == k


@pytest.mark.parametrize(("gamma", "k"), [(4, 1), (2, 1), (6, 2)])
def test_cauchy_nrs_constants(gamma, k):
    epsilon = 1.3
    cal = calibrate("cauchy", epsilon=epsilon, gamma=gamma, dimension=k, constants="nrs")
    # NRS07: β = α = ε/(2(γ+1)) for k = 1, noise 2(γ+1)/ε; k dilations for k coordinates.
    assert cal.noise.scale == pytest.approx(2 * (gamma + 1) / epsilon, rel=1e-12)
    assert cal.beta == pytest.approx(epsilon / (2 * (gamma + 1) * k), rel=1e-12)
    explicit = calibrate("cauchy", epsilon=epsilon, beta=0.01, gamma=gamma, dimension=k, constants="nrs")
    assert k * (gamma + 1) * 0.01 + (gamma + 1) / explicit.noise.scale == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.1, 1e-6), (3.0, 1e-8), (0.5, 0.3)])
def test_laplace_dp_default_is_nrs(epsilon, delta):
    cal = calibrate("laplace", epsilon=epsilon, delta=delta)
    # NRS07 Lemma 2.9: β = ε/(2 ln(2/δ)), noise (2/ε)·Lap(1).
    assert cal.beta == pytest.approx(epsilon / (2 * math.log(2 / delta)), rel=1e-15)
    assert isinstance(cal.noise, Laplace) and cal.noise.scale == pytest.approx(2 / epsilon, rel=1e-15)
    assert cal.growth == "exponential"
    assert cal.guarantee == ApproxDP(epsilon, delta)


def test_laplace_dp_default_lowers_beta_where_nrs_is_not_proven():
    # At ε = 20, δ = 1e-5 NRS's β = ε/(2 ln(2/δ)) = 0.819 is not (ε, δ)-DP (tests/calibration/
    # test_rule_privacy.py); the default keeps Lap(2/ε) and lowers β until docs Lemma 5 covers it.
    epsilon, delta = 20.0, 1e-5
    cal = calibrate("laplace", epsilon=epsilon, delta=delta)
    assert cal.noise.scale == pytest.approx(2 / epsilon, rel=1e-15)
    assert cal.beta < epsilon / (2 * math.log(2 / delta))
    # Lemma 5: η ≤ ε + β − (e^β − 1) ln(1/δ) and η ≤ ε − β.
    assert epsilon / 2 <= epsilon + cal.beta - math.expm1(cal.beta) * math.log(1 / delta)
    assert epsilon / 2 <= epsilon - cal.beta


@pytest.mark.parametrize(
    ("epsilon", "delta", "beta"), [(1.0, 1e-5, 0.01), (1.0, 1e-5, 0.08), (8.0, 1e-5, 0.5)]
)
def test_laplace_dp_explicit_beta(epsilon, delta, beta):
    cal = calibrate("laplace", epsilon=epsilon, delta=delta, beta=beta)
    eta = 1 / cal.noise.scale
    nrs = epsilon - beta * math.log(2 / delta)  # HT Claim 18
    lemma5 = min(epsilon + beta - math.expm1(beta) * math.log(1 / delta), epsilon - beta)
    assert eta == pytest.approx(min(nrs, lemma5), rel=1e-12)


@pytest.mark.parametrize(
    ("epsilon", "delta", "beta"), [(1.0, 1e-5, None), (1.0, 1e-5, 0.05), (2.0, 0.5, None)]
)
def test_laplace_geo_satisfies_liang_yi_lemma_3_6(epsilon, delta, beta):
    cal = calibrate("laplace", epsilon=epsilon, delta=delta, beta=beta, model="geo")
    eta = 1 / cal.noise.scale
    # LY Lemma 3.6 (re-derived in docs/calibration.md Lemma 6): ε = α + β·max{1, ln(1/δ)}.
    assert eta + cal.beta * max(1.0, math.log(1 / delta)) == pytest.approx(epsilon, rel=1e-12)
    assert cal.growth == "linear"
    assert cal.guarantee == GeoPrivacy(epsilon, delta)
    if beta is None:
        assert eta == pytest.approx(epsilon / 2, rel=1e-12)


# -- defaults against the papers' own numbers ----------------------------------------------------------------
def test_student_t_default_is_liang_yi_experiment_setting():
    # gp_paper.md §1.6: ν = 3, pg = 1/3 → β = ε/9, η = ε/√3, noise std 3·S/ε.
    for epsilon in (0.5, 1.0, 4.0):
        cal = calibrate("student_t", epsilon=epsilon)
        assert cal.beta == pytest.approx(epsilon / 9, rel=1e-12)
        assert 1 / cal.noise.scale == pytest.approx(epsilon / math.sqrt(3), rel=1e-12)
        assert cal.std_per_unit == pytest.approx(3 / epsilon, rel=1e-12)


def test_cauchy_default_is_liang_yi_code_setting():
    # gp_paper.md §1.6: GC(4), pg = 0.2 → β = ε/15, η = 0.350953ε, std 2.849·S/ε (Var GC(4,1) = 1).
    cal = calibrate("cauchy", epsilon=2.0)
    assert cal.beta == pytest.approx(2.0 / 15, rel=1e-12)
    assert 1 / cal.noise.scale == pytest.approx(0.350953 * 2.0, rel=1e-6)
    assert cal.std_per_unit == pytest.approx(2.849 / 2.0, rel=1e-3)


def test_polyplace_default_std():
    # polyplace_gp.md: β = ε/9 gives PolyPlace(9S/ε, 9) with std 1.72·S/ε.
    assert calibrate("polyplace", epsilon=1.0).std_per_unit == pytest.approx(1.72, abs=0.005)
    assert calibrate("polyplace", epsilon=0.25).std_per_unit == pytest.approx(1.72 / 0.25, abs=0.02)


def test_liang_yi_remark_numbers():
    # gp_paper.md §1.6 remark: T(3) with β = η = 0.1 costs ε = 0.4155 (LY) and 0.5155 (BS19);
    # GC(4) with NRS's η = 1/16, β = 1/4 costs ε = 3/4 + 3^{3/4}/16 ≈ 0.8925 by Lemma 3.3.
    t = calibrate("student_t", epsilon=0.3 + 0.2 / math.sqrt(3), beta=0.1)
    assert 1 / t.noise.scale == pytest.approx(0.1, rel=1e-12)
    assert 0.3 + 0.2 / math.sqrt(3) == pytest.approx(0.4155, abs=5e-5)
    bs = calibrate("student_t", epsilon=0.4 + 0.2 / math.sqrt(3), beta=0.1, constants="bun_steinke")
    assert 1 / bs.noise.scale == pytest.approx(0.1, rel=1e-12)
    gc = calibrate("cauchy", epsilon=0.75 + 3**0.75 / 16, beta=0.25)
    assert 1 / gc.noise.scale == pytest.approx(1 / 16, rel=1e-12)
    assert 0.75 + 3**0.75 / 16 == pytest.approx(0.8925, abs=5e-5)


def test_pure_rules_spend_no_delta():
    for family in ("polyplace", "student_t", "cauchy"):
        cal = calibrate(family, epsilon=1.0)
        assert cal.delta == 0.0 and cal.is_pure and cal.guarantee == PureDP(1.0)


@pytest.mark.parametrize("family", ["polyplace", "student_t", "cauchy"])
@pytest.mark.parametrize("model", ["dp", "geo"])
def test_pure_rules_refuse_a_positive_delta(family, model):
    # A δ > 0 would be silently wasted (the rule is pure): the error names delta and the (ε, δ) rule.
    with pytest.raises(ValueError, match=r"delta applies only to noise='laplace'.*delta=1e-06"):
        calibrate(family, epsilon=1.0, delta=1e-6, model=model)


def test_calibrate_takes_the_budget_by_keyword_only():
    with pytest.raises(TypeError):
        calibrate("polyplace", 1.0)
    with pytest.raises(TypeError):
        calibrate("laplace", 1.0, 1e-5)
    assert calibrate(epsilon=1.0).family == DEFAULT_NOISE == "polyplace"


@pytest.mark.parametrize(
    ("family", "options", "valid"),
    [
        ("polyplace", {"df": 5}, "none"),
        ("polyplace", {"gamma": 4}, "none"),
        ("student_t", {"gamma": 2}, "df, constants"),
        ("student_t", {"dimension": 2}, "df, constants"),
        ("cauchy", {"df": 3}, "gamma, dimension, constants"),
        ("laplace", {"df": 3}, "none"),
        ("laplace", {"constants": "nrs"}, "none"),
    ],
)
def test_options_of_another_family_are_refused_naming_the_valid_ones(family, options, valid):
    delta = {"delta": 1e-5} if family == "laplace" else {}
    with pytest.raises(TypeError, match=rf"noise='{family}' does not take .*; its keywords: {valid}$"):
        calibrate(family, epsilon=1.0, **delta, **options)


def test_a_keyword_no_family_takes_is_a_typeerror_that_suggests():
    with pytest.raises(TypeError, match=r"calibrate\(\) got an unexpected keyword argument 'shape'"):
        calibrate("student_t", epsilon=1.0, shape=2.0)
    with pytest.raises(TypeError, match=r"'degrees_of_freedom'.*its keywords: .*\bdf\b"):
        calibrate("student_t", epsilon=1.0, degrees_of_freedom=2.0)
    with pytest.raises(TypeError, match=r"'gama'; did you mean 'gamma'\?"):
        calibrate("cauchy", epsilon=1.0, gama=2.0)


def test_each_family_accepts_its_own_options():
    assert NOISE_OPTIONS == {
        "polyplace": (),
        "student_t": ("df", "constants"),
        "cauchy": ("gamma", "dimension", "constants"),
        "laplace": (),
    }
    assert calibrate("student_t", epsilon=1.0, df=5, constants="bun_steinke").noise.df == 5
    assert calibrate("cauchy", epsilon=1.0, gamma=6, dimension=2, constants="nrs").dimension == 2
    assert check_noise_options("student_t", {"df": 4}) == "student_t"
    with pytest.raises(ValueError, match="delta"):
        check_noise_options("cauchy", {}, delta=0.1)


def test_calibration_record_keeps_its_contract_fields():
    cal = calibrate("polyplace", epsilon=1.0)
    assert isinstance(cal, Calibration)
    for name in ("family", "model", "epsilon", "delta", "beta", "growth", "noise", "guarantee", "source"):
        assert getattr(cal, name) is not None
    assert cal.std_per_unit == cal.noise.std()


# -- the constants, recomputed numerically from the densities ------------------------------------------------
def _sup_constants(noise, z_max=1e7):
    """sup|ℓ'(z)| and sup|1 + zℓ'(z)| by central differences of logpdf on a wide grid (ℓ = ln density)."""
    z = np.concatenate([np.linspace(1e-4, 20, 400_001), np.geomspace(20, z_max, 20_001)])
    h = 1e-6 * np.maximum(1.0, z)
    slope = (noise.logpdf(z + h) - noise.logpdf(z - h)) / (2 * h)
    return np.max(np.abs(slope)), np.max(np.abs(1 + z * slope))


@pytest.mark.parametrize("df", [0.5, 1.0, 3.0, 10.0])
def test_student_t_constants_from_the_density(df):
    slide, dil = _sup_constants(StudentT(df))
    want_dil, want_slide = privacy_constants("student_t", df=df)
    assert slide == pytest.approx(want_slide, rel=1e-6)
    assert dil == pytest.approx(want_dil, rel=1e-5)
    assert want_slide == pytest.approx((df + 1) / (2 * math.sqrt(df)))


@pytest.mark.parametrize("gamma", [1.5, 2.0, 4.0, 6.0])
def test_cauchy_constants_from_the_density(gamma):
    slide, dil = _sup_constants(GeneralizedCauchy(gamma))
    want_dil, want_slide = privacy_constants("cauchy", gamma=gamma)
    assert slide == pytest.approx(want_slide, rel=1e-6)
    assert dil == pytest.approx(want_dil, rel=1e-5)


def test_cauchy_constant_values_from_the_note():
    # gp_paper.md Claim 3.4: γ=3 → 1.5874, γ=4 → 3^{3/4} = 2.279507, γ=6 → 3.82362.
    for gamma, want in [(3, 1.5874), (4, 2.279507), (6, 3.82362)]:
        assert privacy_constants("cauchy", gamma=gamma)[1] == pytest.approx(want, abs=1e-4)


def test_polyplace_lemma_12_identity():
    # HT Lemma 12: with s = 1/β, α = ε/β: |ℓ'(z)| + β|1 + zℓ'(z)| = ε at every z ≠ 0 (docs §3).
    eps, beta = 1.3, 0.2
    noise = calibrate("polyplace", epsilon=eps, beta=beta).noise
    z = np.concatenate([np.linspace(1e-3, 20, 20_001), np.geomspace(20, 1e5, 2001)])
    z = z[np.abs(z - noise.scale / noise.shape) > 1e-4]  # away from the core/tail breakpoint
    h = 1e-7 * np.maximum(1.0, z)
    slope = (noise.logpdf(z + h) - noise.logpdf(z - h)) / (2 * h)
    np.testing.assert_allclose(np.abs(slope) + beta * np.abs(1 + z * slope), eps, rtol=1e-5)


def test_laplace_dp_eta_is_vectorized_and_decreasing():
    b = np.linspace(1e-4, 0.08, 50)
    eta = laplace_dp_eta(1.0, 1e-5, b)
    assert eta.shape == b.shape and np.all(np.diff(eta) < 0)


# -- bad input -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, math.inf])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        calibrate("polyplace", epsilon=epsilon)


@pytest.mark.parametrize("delta", [-0.1, 1.0, 1.5, math.nan])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        calibrate("laplace", epsilon=1.0, delta=delta)


def test_laplace_needs_positive_delta():
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\) for the laplace rule"):
        calibrate("laplace", epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="delta"):
        calibrate("laplace", epsilon=1.0, delta=0.0, model="geo")


@pytest.mark.parametrize("beta", [1.0, 1.5, 0.0, -0.1, math.nan])
def test_polyplace_beta_must_be_below_epsilon(beta):
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\) for PolyPlace"):
        calibrate("polyplace", epsilon=1.0, beta=beta)


def test_beta_too_large_for_t_and_cauchy():
    with pytest.raises(ValueError, match=r"beta must be in \(0, 0.333333\) for the student_t rule"):
        calibrate("student_t", epsilon=1.0, beta=0.34)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 0.25\) for the student_t rule"):
        calibrate("student_t", epsilon=1.0, beta=0.3, constants="bun_steinke")
    with pytest.raises(ValueError, match=r"beta must be in \(0, 0.166667\) for the cauchy rule"):
        calibrate("cauchy", epsilon=1.0, beta=0.2, dimension=2)
    with pytest.raises(ValueError, match="beta must be in"):
        calibrate("laplace", epsilon=1.0, delta=1e-5, beta=0.1)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 0.0868589\) for the laplace geo"):
        calibrate("laplace", epsilon=1.0, delta=1e-5, beta=0.1, model="geo")


def test_beta_must_be_a_number():
    with pytest.raises(TypeError, match="beta"):
        calibrate("polyplace", epsilon=1.0, beta="0.1")


def test_unknown_family_model_constants():
    with pytest.raises(ValueError, match="noise must be one of"):
        calibrate("gaussian", epsilon=1.0)
    with pytest.raises(ValueError, match="model must be one of"):
        calibrate("polyplace", epsilon=1.0, model="ldp")
    with pytest.raises(ValueError, match="constants"):
        calibrate("student_t", epsilon=1.0, constants="nrs")
    with pytest.raises(TypeError, match="constants"):  # fixed by the model: not an option of laplace
        calibrate("laplace", epsilon=1.0, delta=1e-5, constants="nrs")


def test_bad_shape_parameters():
    with pytest.raises(ValueError, match="df"):
        calibrate("student_t", epsilon=1.0, df=0)
    with pytest.raises(ValueError, match="gamma"):
        calibrate("cauchy", epsilon=1.0, gamma=1.0)
    with pytest.raises(TypeError, match="noise='student_t' does not take 'dimension'"):
        calibrate("student_t", epsilon=1.0, dimension=2)
    with pytest.raises(ValueError, match="dimension"):
        calibrate("cauchy", epsilon=1.0, dimension=0)
    with pytest.raises(TypeError, match="dimension"):
        calibrate("cauchy", epsilon=1.0, dimension=1.5)
