"""Calibration: privacy budget → smoothness β and standardized noise Z.

A calibration makes ``f(x) + S_β(x)·Z`` private, where S_β is any β-smooth upper bound on the local
sensitivity (central DP, Hamming metric) or on the pointwise Lipschitz constant (geo-privacy, ε per unit
distance, Λ = ∞). The growth of the smooth bound is ``growth`` (see :mod:`smoothdp.sensitivity.growth`).

Every rule is proved in ``docs/theory/calibration.md`` (overview:
``docs/theory/calibration.md#overview-of-the-rules``), and every rule is checked numerically by
:func:`smoothdp.audit.worst_case_privacy_loss` (``docs/theory/calibration.md#how-the-rules-are-checked``).
The rules (Z₀ the standard law, Z = Z₀/η):

=============  =====================================================  ========================================
family         privacy equation                                       source
=============  =====================================================  ========================================
polyplace      Z = PolyPlace(1/β, ε/β), 0 < β < ε                     HT Theorem 8 (geo: this project)
student_t      ε = max(1, ν)·β + (ν+1)/(2√ν)·η                        LY Lemma 3.5 (BS19: (ν+1)·β)
cauchy         ε = k·max(1, γ−1)·β + (γ−1)^{(γ−1)/γ}·η                LY Lemma 3.3, Corollary 3.2 (NRS07: γ+1)
laplace, dp    η = min(ε − β ln(2/δ), ε + β − (e^β − 1) ln(1/δ))      NRS07 Lemma 2.9 / HT Claim 18, capped
laplace, geo   ε = η + β·max{1, ln(1/δ)}, growth 1 + βt               LY Lemma 3.6
=============  =====================================================  ========================================

HT = Hladík & Tětek, *Smooth Sensitivity Revisited: Towards Optimality*, FORC 2025; LY = Liang & Yi,
*Smooth Sensitivity for Geo-Privacy*, CCS 2024; NRS07 = Nissim, Raskhodnikova & Smith, STOC 2007;
BS19 = Bun & Steinke, NeurIPS 2019.

The noise-std curves of HT Figure 1 (an analysis of these rules, used by experiments and tests) are in
:mod:`smoothdp.noise_std`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import smoothdp.noise as noise_laws  # lazy (PEP 562): a family is imported when first used
from smoothdp.privacy import ApproxDP, GeoPrivacy, Guarantee, PureDP
from smoothdp.sensitivity.growth import Growth
from smoothdp.validation import (
    check_beta,
    check_delta,
    check_epsilon,
    check_in_range,
    check_int,
    check_positive,
)

if TYPE_CHECKING:
    from smoothdp.noise import NoiseDistribution

__all__ = [
    "CONSTANTS",
    "DEFAULT_BUDGET_SPLIT",
    "DEFAULT_NOISE",
    "FAMILIES",
    "MODELS",
    "NOISE_OPTIONS",
    "POLYPLACE_DEFAULT_BETA_FRACTION",
    "Calibration",
    "calibrate",
    "check_noise_options",
    "laplace_dp_eta",
    "privacy_constants",
]

FAMILIES = ("polyplace", "student_t", "cauchy", "laplace")
MODELS = ("dp", "geo")
#: The constant sets each family accepts; the first one is the default (the tightest proven one).
CONSTANTS: dict[str, tuple[str, ...]] = {
    "polyplace": ("hladik_tetek",),
    "student_t": ("liang_yi", "bun_steinke"),
    "cauchy": ("liang_yi", "nrs"),
    "laplace": ("nrs", "liang_yi"),  # nrs for model="dp", liang_yi for model="geo" (fixed by the model)
}
#: Fraction of ε given to the dilation (β) term when ``beta`` is not given (a data-independent split).
DEFAULT_BUDGET_SPLIT = {
    "student_t": 1.0 / 3.0,  # LY's code default pg = 1/3: β = ε/9 for ν = 3
    "cauchy": 0.2,  # LY's code default pg = 0.2: β = ε/15 for γ = 4
}
#: PolyPlace's default smoothness, as a fraction of ε (see :func:`calibrate`).
POLYPLACE_DEFAULT_BETA_FRACTION = 1.0 / 9.0


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes
    ----------
    family
        ``"polyplace"``, ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    model
        ``"dp"`` (Hamming metric) or ``"geo"`` (ε per unit of distance).
    epsilon, delta
        The budget this calibration spends (δ = 0 for the pure rules, whatever δ was passed).
    beta
        The smoothness the sensitivity must have: S must be a G_β-smooth upper bound.
    growth
        The growth function G_β the bound must respect (``"exponential"`` or ``"linear"``).
    noise
        The standardized noise Z: release ``f(x) + S_β(x)·Z`` (one i.i.d. draw per output coordinate).
    guarantee
        The :class:`~smoothdp.privacy.Guarantee` it gives.
    source
        Paper and lemma the rule rests on.
    dimension
        Number of output coordinates k (the output metric is ℓ1 when k > 1; only the Cauchy rule).
    constants
        Which constants the rule used (``"liang_yi"``, ``"bun_steinke"``, ``"nrs"``, ``"hladik_tetek"``).
    eta
        The sliding budget η: Z = Z₀/η with Z₀ the standard law (``None`` for PolyPlace, which has no
        split).
    """

    family: str
    model: str
    epsilon: float
    delta: float
    beta: float
    growth: Growth
    noise: NoiseDistribution
    guarantee: Guarantee
    source: str
    dimension: int = 1
    constants: str = ""
    eta: float | None = None

    @property
    def std_per_unit(self) -> float:
        """Std of the added noise per unit of smooth sensitivity, per coordinate (``inf`` if none)."""
        return self.noise.std()

    @property
    def is_pure(self) -> bool:
        """True for the pure rules (PolyPlace, T, Cauchy); False for the (ε, δ) Laplace rule."""
        return self.delta == 0.0


# -- constants of the sliding/dilation argument (docs/theory/calibration.md#lemma-1-two-point-lemma) -------
def privacy_constants(
    noise: str, *, df: float = 3, gamma: float = 4, constants: str | None = None
) -> tuple[float, float]:
    """The (dilation, sliding) coefficients (L_dil, L_slide) of a pure rule: ε = k·L_dil·β + L_slide·η.

    With ℓ = ln of the standard density, L_slide = sup|ℓ'(z)| and L_dil = sup|1 + zℓ'(z)|
    (``docs/theory/calibration.md#lemma-1-two-point-lemma``; the constants:
    ``docs/theory/calibration.md#lemma-4-students-t-and-generalized-cauchy-constants``):

    * Student's T(ν): L_slide = (ν+1)/(2√ν) (at z = √ν); L_dil = max(1, ν) (LY Lemma 3.5) or the
      looser ν + 1 (BS19 Theorem 31).
    * Generalized Cauchy, density ∝ 1/(1+|z|^γ): L_slide = (γ−1)^{(γ−1)/γ} (at |z|^γ = γ−1);
      L_dil = max(1, γ−1) (LY Lemma 3.3; LY write γ−1, which is only right for γ ≥ 2); NRS07: both γ + 1.
    """
    family = _check_choice("noise", noise, ("student_t", "cauchy"))
    kind = _check_constants(family, constants)
    if family == "student_t":
        nu = check_positive("df", df)
        slide = (nu + 1.0) / (2.0 * math.sqrt(nu))
        return (max(1.0, nu) if kind == "liang_yi" else nu + 1.0), slide
    g = check_in_range("gamma", gamma, 1.0, math.inf)
    if kind == "nrs":
        return g + 1.0, g + 1.0
    return max(1.0, g - 1.0), (g - 1.0) ** ((g - 1.0) / g)


# -- the Laplace (ε, δ)-DP rule ------------------------------------------------------------------------------
def laplace_dp_eta(epsilon: float, delta: float, beta: ArrayLike) -> NDArray[np.float64]:
    """The sliding budget η of the Laplace (ε, δ)-DP rule at smoothness β (Z = Lap(1/η)).

    η(β) = min( ε − β·ln(2/δ),  ε + β − (e^β − 1)·ln(1/δ),  ε − β ).

    The first term is NRS07 Lemma 2.9 in HT's general form (Claim 18). NRS's argument alone is *not*
    (ε, δ)-DP for large ε (e.g. ε = 20, δ = 1e−5: worst hockey-stick divergence 5.5e−5 > δ, found by
    :func:`smoothdp.audit.worst_case_privacy_loss`), so it is capped by the other two terms, which are
    ``docs/theory/calibration.md#lemma-5-capped-laplace-rule``: the loss is at most
    η + max(β, (e^β − 1)|Z₀| − β) with Z₀ ~ Lap(1).
    The cap is inactive for β ≤ 0.268 at δ = 1e−5 (≈ 2(1 + ln 2)/ln(1/δ) in general), so at the default
    β for ε ≤ 6.55. A value ≤ 0 means β is inadmissible.
    """
    b = np.asarray(beta, dtype=np.float64)
    nrs = epsilon - b * math.log(2.0 / delta)
    with np.errstate(over="ignore"):
        proven = epsilon + b - np.expm1(b) * math.log(1.0 / delta)
    return np.minimum(np.minimum(nrs, proven), epsilon - b)


def _laplace_dp_beta_max(epsilon: float, delta: float) -> float:
    """The supremum of the β with η(β) > 0 (η decreases in β)."""
    from scipy import optimize  # imported on first use: scipy.optimize is slow to import

    def eta(b: float) -> float:
        return float(laplace_dp_eta(epsilon, delta, b))

    hi = epsilon  # η(ε) ≤ 0 by the ε − β term
    return (
        float(optimize.brentq(eta, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)) if eta(hi) < 0 else hi
    )


def _laplace_dp_default_beta(epsilon: float, delta: float) -> float:
    """NRS07's β = ε/(2 ln(2/δ)), lowered where needed so that η = ε/2 exactly (Z = Lap(2/ε) always)."""
    from scipy import optimize  # imported on first use: scipy.optimize is slow to import

    nrs = epsilon / (2.0 * math.log(2.0 / delta))
    if float(laplace_dp_eta(epsilon, delta, nrs)) >= 0.5 * epsilon:
        return nrs
    # The largest β with ε + β − (e^β − 1) ln(1/δ) ≥ ε/2 (that expression decreases in β there).
    return float(
        optimize.brentq(
            lambda b: float(laplace_dp_eta(epsilon, delta, b)) - 0.5 * epsilon,
            0.0,
            nrs,
            xtol=1e-15,
            rtol=1e-15,
        )
    ) * (1.0 - 1e-12)


# -- calibrate ---------------------------------------------------------------------------------------------
#: The default noise of every guarantee (pure DP and pure geo-privacy alike): PolyPlace has the smallest
#: noise std per unit of smooth sensitivity of the proven rules at every β (docs/theory/calibration.md).
DEFAULT_NOISE = "polyplace"

#: The keywords each family takes besides the budget (anything else is an error naming these).
NOISE_OPTIONS: dict[str, tuple[str, ...]] = {
    "polyplace": (),
    "student_t": ("df", "constants"),
    "cauchy": ("gamma", "dimension", "constants"),
    "laplace": (),
}


def check_noise_options(noise: str, options: dict[str, Any], *, delta: float = 0.0) -> str:
    """Check the family name and that every keyword in ``options`` applies to it (else a named error)."""
    family = _check_choice("noise", noise, FAMILIES)
    unknown = sorted(set(options) - set(NOISE_OPTIONS[family]))
    if unknown:
        valid = ", ".join(NOISE_OPTIONS[family]) or "none"
        raise TypeError(
            f"noise={family!r} does not take {', '.join(map(repr, unknown))}; its keywords: {valid}"
        )
    if delta and family != "laplace":
        raise ValueError(
            f"delta applies only to noise='laplace' (the (ε, δ) rule); noise={family!r} is pure "
            f"(δ = 0): leave delta at 0 or choose noise='laplace'; got delta={delta!r}"
        )
    return family


def calibrate(
    noise: str = DEFAULT_NOISE,
    *,
    epsilon: float,
    delta: float = 0.0,
    beta: float | None = None,
    model: str = "dp",
    **options: Any,
) -> Calibration:
    """Calibrate a smooth-sensitivity mechanism ``f(x) + S_β(x)·Z``.

    Parameters
    ----------
    noise
        ``"polyplace"`` (default, for every guarantee), ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    epsilon
        ε > 0 (per unit of distance for ``model="geo"``).
    delta
        δ ∈ (0, 1) for the Laplace rule, which needs it; the pure rules take no δ (an error if > 0).
    beta
        The smoothness β of the sensitivity bound. ``None``: a fixed, data-independent default (below).
        An explicit β outside the rule's range is refused, naming the range.
    model
        ``"dp"``: central DP, Hamming metric (neighbours at distance 1). ``"geo"``: (ε, δ, ∞)-geo-privacy,
        ε per unit of distance, S a smooth bound on the pointwise Lipschitz constant.
    df
        Degrees of freedom ν > 0 of Student's T.
    gamma
        Exponent γ > 1 of the generalized Cauchy density ∝ 1/(1+|z|^γ).
    dimension
        Output coordinates k (i.i.d. noise per coordinate, ℓ1 output metric); Cauchy rule only.
    constants
        ``None`` (the tightest proven constants), or ``"bun_steinke"`` (Student's T, BS19 Thm 31:
        ε = (ν+1)β + (ν+1)/(2√ν)·η) or ``"nrs"`` (Cauchy, NRS07: ε = k(γ+1)β + (γ+1)η) for comparison.

    Returns
    -------
    Calibration
        β, the growth G_β, the standardized noise Z, the guarantee and the source.

    Notes
    -----
    The rules, with the default β (proofs in ``docs/theory/calibration.md``):

    * ``"polyplace"`` (HT Theorem 8; geo-privacy: this project's extension,
      ``docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy``):
      Z = PolyPlace(1/β, ε/β) for 0 < β < ε. Default β = ε/9: it is the smoothness LY use with T(3), so
      the same S serves both, and std(Z) = 1.72/ε is within 22% of the β → 0 limit √2/ε (HT Lemma 15,
      Laplace(1/ε)) while S_β can already fall off like e^{−εt/9}. Variance is finite iff β < ε/2.
    * ``"student_t"`` (LY Lemma 3.5; at the Hamming metric for "dp"): ε = max(1,ν)β + (ν+1)/(2√ν)·η,
      Z = T(ν)/η, β < ε/max(1,ν). Default: LY's split pg = 1/3 of ε to dilation (β = ε/9, η = ε/√3 for
      ν = 3: std 3/ε).
    * ``"cauchy"`` (LY Lemma 3.3, Corollary 3.2 for k > 1): ε = k·max(1,γ−1)β + (γ−1)^{(γ−1)/γ}η,
      Z = GC(γ)/η. Default pg = 0.2 (β = ε/15, η = 0.351ε for γ = 4). NRS default: β = η/k = ε/(2(γ+1)k).
    * ``"laplace"``, model "dp": Z = Lap(1/η) with η = :func:`laplace_dp_eta` (NRS07 Lemma 2.9 / HT Claim
      18, capped by ``docs/theory/calibration.md#lemma-5-capped-laplace-rule``), growth e^{βt}.
      Default β = ε/(2 ln(2/δ)) (NRS), lowered at large ε so that Z = Lap(2/ε) stays proven.
    * ``"laplace"``, model "geo" (LY Lemma 3.6, growth 1 + βt): ε = η + β·max{1, ln(1/δ)}, Z = Lap(1/η).
      Default: half each, β = ε/(2 max{1, ln(1/δ)}), Z = Lap(2/ε).
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    family = check_noise_options(noise, options, delta=dlt)
    mdl = _check_choice("model", model, MODELS)
    df = options.get("df", 3)
    gamma = options.get("gamma", 4)
    constants = options.get("constants")
    dimension = options.get("dimension", 1)
    k = check_int("dimension", dimension, minimum=1)
    if family == "polyplace":
        _check_constants(family, constants)
        return _polyplace_rule(eps, beta, mdl)
    if family == "laplace":
        if constants is not None:
            raise ValueError(
                f"constants is fixed by the model for the laplace rule; got constants={constants!r}"
            )
        if dlt == 0.0:
            raise ValueError("delta must be in (0, 1) for the laplace rule (it is (ε, δ), not pure); got 0.0")
        return _laplace_dp_rule(eps, dlt, beta) if mdl == "dp" else _laplace_geo_rule(eps, dlt, beta)
    return _sliding_dilation_rule(family, eps, beta, mdl, df=df, gamma=gamma, k=k, constants=constants)


def _pure_guarantee(epsilon: float, model: str) -> Guarantee:
    return PureDP(epsilon) if model == "dp" else GeoPrivacy(epsilon)


def _polyplace_rule(epsilon: float, beta: float | None, model: str) -> Calibration:
    rule = "PolyPlace (HT Theorem 8: 0 < β < ε)"
    b = epsilon * POLYPLACE_DEFAULT_BETA_FRACTION if beta is None else check_beta(beta, epsilon, rule=rule)
    if model == "dp":
        source = (
            "Hladík & Tětek, FORC 2025, Theorem 8 (proof: Lemmas 9, 12); "
            "docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy"
        )
    else:
        source = (
            "Hladík & Tětek, FORC 2025, Theorem 8, extended to geo-privacy by this project: "
            "docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy"
        )
    return Calibration(
        family="polyplace",
        model=model,
        epsilon=epsilon,
        delta=0.0,
        beta=b,
        growth="exponential",
        noise=noise_laws.PolyPlace(1.0 / b, epsilon / b),
        guarantee=_pure_guarantee(epsilon, model),
        source=source,
        constants="hladik_tetek",
    )


_SLIDING_DILATION_PROOF = "docs/theory/calibration.md#students-t-and-generalized-cauchy-rules"
_SOURCES = {
    ("student_t", "liang_yi"): "Liang & Yi, CCS 2024, Lemma 3.5: ε = max(1,ν)β + (ν+1)/(2√ν)·η",
    ("student_t", "bun_steinke"): (
        "Bun & Steinke, NeurIPS 2019, Theorem 31 (as in Hladík & Tětek Claim 17): ε = (ν+1)β + (ν+1)/(2√ν)·η"
    ),
    ("cauchy", "liang_yi"): (
        "Liang & Yi, CCS 2024, Lemma 3.3 and Corollary 3.2: ε = k·max(1,γ−1)β + (γ−1)^{(γ−1)/γ}·η"
    ),
    ("cauchy", "nrs"): (
        "Nissim, Raskhodnikova & Smith, STOC 2007, Cauchy admissibility (as read by Hladík & Tětek "
        "Claim 16): ε = k(γ+1)β + (γ+1)η"
    ),
}


def _sliding_dilation_rule(
    family: str,
    epsilon: float,
    beta: float | None,
    model: str,
    *,
    df: float,
    gamma: float,
    k: int,
    constants: str | None,
) -> Calibration:
    kind = _check_constants(family, constants)
    dil, slide = privacy_constants(family, df=df, gamma=gamma, constants=kind)
    beta_max = epsilon / (k * dil)
    if beta is None:
        split = DEFAULT_BUDGET_SPLIT[family] if kind == "liang_yi" else 0.5
        b = split * beta_max
    else:
        shape = f"ν = {df:g}" if family == "student_t" else f"γ = {gamma:g}, k = {k}"
        rule = f"the {family} rule with {kind} constants ({shape}: β < ε/(k·L_dil) = ε/{k * dil:g})"
        b = check_beta(beta, beta_max, rule=rule)
    eta = (epsilon - k * dil * b) / slide
    noise: NoiseDistribution
    if family == "student_t":
        noise = noise_laws.StudentT(float(df), scale=1.0 / eta)
    else:
        noise = noise_laws.GeneralizedCauchy(float(gamma), scale=1.0 / eta)
    where = " at the Hamming metric (Λ = 1)" if model == "dp" else ""
    return Calibration(
        family=family,
        model=model,
        epsilon=epsilon,
        delta=0.0,
        beta=b,
        growth="exponential",
        noise=noise,
        guarantee=_pure_guarantee(epsilon, model),
        source=f"{_SOURCES[family, kind]}{where}; {_SLIDING_DILATION_PROOF}",
        dimension=k,
        constants=kind,
        eta=eta,
    )


def _laplace_dp_rule(epsilon: float, delta: float, beta: float | None) -> Calibration:
    if beta is None:
        # η(b) ≥ ε/2 at the default β, and less η (more noise) is always safe: Z = Lap(2/ε) as in NRS.
        b = _laplace_dp_default_beta(epsilon, delta)
        eta = 0.5 * epsilon
    else:
        beta_max = _laplace_dp_beta_max(epsilon, delta)
        rule = (
            f"the laplace (ε, δ)-DP rule (η(β) = min(ε − β ln(2/δ), ε + β − (e^β−1) ln(1/δ)) > 0 "
            f"needs β < {beta_max:.6g})"
        )
        b = check_beta(beta, beta_max, rule=rule)
        eta = float(laplace_dp_eta(epsilon, delta, b))
    return Calibration(
        family="laplace",
        model="dp",
        epsilon=epsilon,
        delta=delta,
        beta=b,
        growth="exponential",
        noise=noise_laws.Laplace(1.0 / eta),
        guarantee=ApproxDP(epsilon, delta),
        source=(
            "Nissim, Raskhodnikova & Smith, STOC 2007, Lemma 2.9 (β = ε/(2 ln(2/δ)), Lap(2/ε)), general "
            "split of Hladík & Tětek, FORC 2025, Claim 18, capped by "
            "docs/theory/calibration.md#lemma-5-capped-laplace-rule (NRS's constant fails at large ε)"
        ),
        constants="nrs",
        eta=eta,
    )


def _laplace_geo_rule(epsilon: float, delta: float, beta: float | None) -> Calibration:
    tail = max(1.0, math.log(1.0 / delta))
    if beta is None:
        b = epsilon / (2.0 * tail)
    else:
        rule = f"the laplace geo-privacy rule (LY Lemma 3.6: β < ε/max(1, ln(1/δ)) = {epsilon / tail:.6g})"
        b = check_beta(beta, epsilon / tail, rule=rule)
    eta = epsilon - b * tail
    return Calibration(
        family="laplace",
        model="geo",
        epsilon=epsilon,
        delta=delta,
        beta=b,
        growth="linear",
        noise=noise_laws.Laplace(1.0 / eta),
        guarantee=GeoPrivacy(epsilon, delta),
        source=(
            "Liang & Yi, CCS 2024, Lemma 3.6 (growth 1 + βt): ε = η + β·max{1, ln(1/δ)}; "
            "derivation in docs/theory/calibration.md#lemma-6-laplace-geo-privacy-rule"
        ),
        constants="liang_yi",
        eta=eta,
    )


def _check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _check_constants(family: str, constants: str | None) -> str:
    allowed = CONSTANTS[family]
    if constants is None:
        return allowed[0]
    return _check_choice(f"constants (for {family})", constants, allowed)
