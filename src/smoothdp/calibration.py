r"""Calibration: privacy budget → smoothness $\beta$ and standardized noise Z.

A calibration makes $f(x) + S_\beta(x) \cdot Z$ private, where $S_\beta$ is any $\beta$-smooth upper bound on
the local sensitivity (central DP, Hamming metric) or on the pointwise Lipschitz constant (geo-privacy,
$\varepsilon$ per unit distance, $\Lambda = \infty$). The growth of the smooth bound is ``growth`` (see
:mod:`smoothdp.sensitivity.growth`).

Every rule is proved in ``docs/theory/calibration.md`` (overview:
``docs/theory/calibration.md#overview-of-the-rules``), and every rule is checked numerically by
:func:`smoothdp.audit.worst_case_privacy_loss` (``docs/theory/calibration.md#how-the-rules-are-checked``). The
rules ($Z_0$ the standard law, $Z = Z_0/\eta$):

* polyplace: $Z = \mathrm{PolyPlace}(1/\beta, \varepsilon/\beta)$, $0 < \beta < \varepsilon$ (HT Theorem 8;
  geo: this project);
* student_t: $\varepsilon = \max(1, \nu) \cdot \beta + (\nu+1)/(2\sqrt{\nu}) \cdot \eta$ (LY Lemma 3.5; BS19:
  $(\nu+1) \cdot \beta$);
* cauchy: $\varepsilon = k \cdot \max(1, \gamma-1) \cdot \beta + (\gamma-1)^{(\gamma-1)/\gamma} \cdot \eta$
  (LY Lemma 3.3, Corollary 3.2; NRS07: $\gamma+1$);
* laplace, dp:
  $\eta = \min(\varepsilon - \beta \ln(2/\delta), \varepsilon + \beta - (e^\beta - 1) \ln(1/\delta),
  \varepsilon - \beta)$ (NRS07 Lemma 2.9 / HT Claim 18, capped by the last two terms: :func:`laplace_dp_eta`);
* laplace, geo: $\varepsilon = \eta + \beta \cdot \max\{1, \ln(1/\delta)\}$, growth $1 + \beta t$ (LY Lemma
  3.6).

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
from smoothdp.keywords import check_keywords_of
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
    "noise_options_given",
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
    r"""The result of :func:`calibrate`.

    Attributes
    ----------
    family
        ``"polyplace"``, ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    model
        ``"dp"`` (Hamming metric) or ``"geo"`` ($\varepsilon$ per unit of distance).
    epsilon, delta
        The budget this calibration spends ($\delta = 0$ for the pure rules, whatever $\delta$ was passed).
    beta
        The smoothness the sensitivity must have: S must be a $G_\beta$-smooth upper bound.
    growth
        The growth function $G_\beta$ the bound must respect (``"exponential"`` or ``"linear"``).
    noise
        The standardized noise Z: release $f(x) + S_\beta(x) \cdot Z$ (one i.i.d. draw per output coordinate).
    guarantee
        The :class:`~smoothdp.privacy.Guarantee` it gives.
    source
        Paper and lemma the rule rests on.
    dimension
        Number of output coordinates k (the output metric is $\ell_1$ when $k > 1$; only the Cauchy rule).
    constants
        Which constants the rule used (``"liang_yi"``, ``"bun_steinke"``, ``"nrs"``, ``"hladik_tetek"``).
    eta
        The sliding budget $\eta$: $Z = Z_0/\eta$ with $Z_0$ the standard law (``None`` for PolyPlace, which
        has no split).
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
        r"""True for the pure rules (PolyPlace, T, Cauchy); False for the $(\varepsilon, \delta)$ Laplace
        rule."""
        return self.delta == 0.0


# -- constants of the sliding/dilation argument (docs/theory/calibration.md#lemma-1-two-point-lemma) -------
def privacy_constants(
    noise: str, *, df: float = 3, gamma: float = 4, constants: str | None = None
) -> tuple[float, float]:
    r"""The (dilation, sliding) coefficients $(L_{\mathrm{dil}}, L_{\mathrm{slide}})$ of a pure rule:
    $\varepsilon = k \cdot L_{\mathrm{dil}} \cdot \beta + L_{\mathrm{slide}} \cdot \eta$.

    With $\ell$ = ln of the standard density, $L_{\mathrm{slide}} = \sup\vert\ell'(z)\vert$ and
    $L_{\mathrm{dil}} = \sup\vert 1 + z\ell'(z)\vert$ (``docs/theory/calibration.md#lemma-1-two-point-lemma``;
    the constants: ``docs/theory/calibration.md#lemma-4-students-t-and-generalized-cauchy-constants``):

    * Student's $T(\nu)$: $L_{\mathrm{slide}} = (\nu+1)/(2\sqrt{\nu})$ (at $z = \sqrt{\nu}$);
      $L_{\mathrm{dil}} = \max(1, \nu)$ (LY Lemma 3.5) or the looser $\nu + 1$ (BS19 Theorem 31).
    * Generalized Cauchy, density $\propto 1/(1+\vert z\vert^\gamma)$:
      $L_{\mathrm{slide}} = (\gamma-1)^{(\gamma-1)/\gamma}$ (at $\vert z\vert^\gamma = \gamma-1$);
      $L_{\mathrm{dil}} = \max(1, \gamma-1)$ (LY Lemma 3.3; LY write $\gamma-1$, which is only right for
      $\gamma \ge 2$); NRS07: both $\gamma + 1$.
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
    r"""The sliding budget $\eta$ of the Laplace $(\varepsilon, \delta)$-DP rule at smoothness $\beta$
    ($Z = \mathrm{Lap}(1/\eta)$).

    $$
    \eta(\beta) = \min( \varepsilon - \beta \cdot \ln(2/\delta),
    \ \varepsilon + \beta - (e^\beta - 1) \cdot \ln(1/\delta), \ \varepsilon - \beta ).
    $$

    The first term is NRS07 Lemma 2.9 in HT's general form (Claim 18). NRS's argument alone is *not*
    $(\varepsilon, \delta)$-DP for large $\varepsilon$ (e.g. $\varepsilon = 20$, $\delta = 10^{-5}$: worst
    hockey-stick divergence $5.5 \cdot 10^{-5} > \delta$, found by
    :func:`smoothdp.audit.worst_case_privacy_loss`), so it is capped by the other two terms, which are
    ``docs/theory/calibration.md#lemma-5-capped-laplace-rule``: the loss is at most
    $\eta + \max(\beta, (e^\beta - 1)\vert Z_0\vert - \beta)$ with $Z_0 \sim \mathrm{Lap}(1)$. The cap is
    inactive for $\beta \le 0.268$ at $\delta = 10^{-5}$ ($\approx 2(1 + \ln 2)/\ln(1/\delta)$ in general), so
    at the default $\beta$ for $\varepsilon \le 6.55$. A value $\le 0$ means $\beta$ is inadmissible.
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


def noise_options_given(
    *,
    df: float | None = None,
    gamma: float | None = None,
    dimension: int | None = None,
    constants: str | None = None,
) -> dict[str, Any]:
    """The noise family's own keywords that were given (``None``: not given, the family's default), for
    :func:`check_noise_options`: Student's T takes ``df`` and ``constants``, the generalized Cauchy
    ``gamma``, ``dimension`` and ``constants``, PolyPlace and Laplace none."""
    given = {"df": df, "gamma": gamma, "dimension": dimension, "constants": constants}
    return {name: value for name, value in given.items() if value is not None}


def calibrate(
    noise: str = DEFAULT_NOISE,
    *,
    epsilon: float,
    delta: float = 0.0,
    beta: float | None = None,
    model: str = "dp",
    df: float | None = None,
    gamma: float | None = None,
    dimension: int | None = None,
    constants: str | None = None,
) -> Calibration:
    r"""Calibrate a smooth-sensitivity mechanism $f(x) + S_\beta(x) \cdot Z$.

    Parameters
    ----------
    noise
        ``"polyplace"`` (default, for every guarantee), ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    epsilon
        $\varepsilon > 0$ (per unit of distance for ``model="geo"``).
    delta
        $\delta \in (0, 1)$ for the Laplace rule, which needs it; the pure rules take no $\delta$ (an error if
        $> 0$).
    beta
        The smoothness $\beta$ of the sensitivity bound. ``None``: a fixed, data-independent default (below).
        An explicit $\beta$ outside the rule's range is refused, naming the range.
    model
        ``"dp"``: central DP, Hamming metric (neighbours at distance 1). ``"geo"``:
        $(\varepsilon, \delta, \infty)$-geo-privacy, $\varepsilon$ per unit of distance, S a smooth bound on
        the pointwise Lipschitz constant.
    df
        Degrees of freedom $\nu > 0$ of Student's T.
    gamma
        Exponent $\gamma > 1$ of the generalized Cauchy density $\propto 1/(1+\vert z\vert^\gamma)$.
    dimension
        Output coordinates k (i.i.d. noise per coordinate, $\ell_1$ output metric); Cauchy rule only.
    constants
        ``None`` (the tightest proven constants), or ``"bun_steinke"`` (Student's T, BS19 Thm 31:
        $\varepsilon = (\nu+1)\beta + (\nu+1)/(2\sqrt{\nu}) \cdot \eta$) or ``"nrs"`` (Cauchy, NRS07:
        $\varepsilon = k(\gamma+1)\beta + (\gamma+1)\eta$) for comparison.

    Returns
    -------
    Calibration
        $\beta$, the growth $G_\beta$, the standardized noise Z, the guarantee and the source.

    Notes
    -----
    The rules, with the default $\beta$ (proofs in ``docs/theory/calibration.md``):

    * ``"polyplace"`` (HT Theorem 8; geo-privacy: this project's extension,
      ``docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy``):
      $Z = \mathrm{PolyPlace}(1/\beta, \varepsilon/\beta)$ for $0 < \beta < \varepsilon$. Default
      $\beta = \varepsilon/9$: it is the smoothness LY use with T(3), so the same S serves both, and
      $\mathrm{std}(Z) = 1.72/\varepsilon$ is within 22% of the $\beta \to 0$ limit $\sqrt{2}/\varepsilon$ (HT
      Lemma 15, $\mathrm{Laplace}(1/\varepsilon)$) while $S_\beta$ can already fall off like
      $e^{-\varepsilon t/9}$. Variance is finite iff $\beta < \varepsilon/2$.
    * ``"student_t"`` (LY Lemma 3.5; at the Hamming metric for "dp"):
      $\varepsilon = \max(1,\nu)\beta + (\nu+1)/(2\sqrt{\nu}) \cdot \eta$, $Z = T(\nu)/\eta$,
      $\beta < \varepsilon/\max(1,\nu)$. Default: LY's split $p_g = 1/3$ of $\varepsilon$ to dilation
      ($\beta = \varepsilon/9$, $\eta = \varepsilon/\sqrt{3}$ for $\nu = 3$: std $3/\varepsilon$).
    * ``"cauchy"`` (LY Lemma 3.3, Corollary 3.2 for $k > 1$):
      $\varepsilon = k \cdot \max(1,\gamma-1)\beta + (\gamma-1)^{(\gamma-1)/\gamma}\eta$,
      $Z = \mathrm{GC}(\gamma)/\eta$. Default $p_g = 0.2$ ($\beta = \varepsilon/15$, $\eta = 0.351\varepsilon$
      for $\gamma = 4$). NRS default: $\beta = \eta/k = \varepsilon/(2(\gamma+1)k)$.
    * ``"laplace"``, model "dp": $Z = \mathrm{Lap}(1/\eta)$ with $\eta$ = :func:`laplace_dp_eta` (NRS07 Lemma
      2.9 / HT Claim 18, capped by ``docs/theory/calibration.md#lemma-5-capped-laplace-rule``), growth
      $e^{\beta t}$. Default $\beta = \varepsilon/(2 \ln(2/\delta))$ (NRS), lowered at large $\varepsilon$ so
      that $Z = \mathrm{Lap}(2/\varepsilon)$ stays proven.
    * ``"laplace"``, model "geo" (LY Lemma 3.6, growth $1 + \beta t$):
      $\varepsilon = \eta + \beta \cdot \max\{1, \ln(1/\delta)\}$, $Z = \mathrm{Lap}(1/\eta)$. Default: half
      each, $\beta = \varepsilon/(2 \max\{1, \ln(1/\delta)\})$, $Z = \mathrm{Lap}(2/\varepsilon)$.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    options = noise_options_given(df=df, gamma=gamma, dimension=dimension, constants=constants)
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


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
