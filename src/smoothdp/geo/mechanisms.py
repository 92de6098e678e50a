"""The smooth-sensitivity mechanism for geo-privacy in the local model.

Each user with private point x sends y = f(x) + S_β(x)·Z, where S_β is the query's smooth sensitivity (a
G_β-smooth upper bound on the pointwise Lipschitz constant; Liang & Yi, CCS 2024, Definitions 7–9 and
Section 3.2) and Z the standardized noise of :func:`smoothdp.calibration.calibrate` with ``model="geo"``.
The analyst averages the reports: E[y] = f(x), so the mean of the reports is unbiased for the mean of f,
with variance Σ_i S_β(x_i)²·Var Z/n².
Proof: docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity.

Released floats: exactly R(f(x) + S_β(x)·Z) with R the public grid of the query's value range
(:func:`smoothdp.exact.add_noise`, f(x) given as the query's certified enclosure, S_β(x) the float smooth
sensitivity, exact as given and rounded up); ``numerics="float"`` keeps f + S·Z in floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.calibration import DEFAULT_NOISE, Calibration, calibrate
from smoothdp.exact import OutputGrid, add_noise
from smoothdp.geo._common import USER_BLOCK, GeoMechanism, user_blocks
from smoothdp.geo._query import GeoQuery
from smoothdp.keywords import check_keywords_of
from smoothdp.sensitivity.growth import Growth
from smoothdp.validation import check_delta, check_epsilon

__all__ = ["SmoothSensitivityMechanism"]


class SmoothSensitivityMechanism(GeoMechanism):
    r"""$f(x) + S_\beta(x) \cdot Z$ per user and query: $(\varepsilon, \delta)$-geo-privacy per unit of
    Euclidean distance per query.

    **Guarantee.** Each report is $(\varepsilon, \delta)$-geo-private (neighbour relation ``"metric"``: any
    two points of one user, charged $\varepsilon$ per unit of distance); ``guarantee`` is what one user spends
    on one call, the Q reports of a grid of Q queries composed:
    $(Q \cdot \varepsilon, Q \cdot \delta)$-geo-privacy
    (docs/theory/privacy-definitions.md#geo-privacy-composition).

    **Lemma.** The query's smooth sensitivity is a $G_\beta$-smooth upper bound on its pointwise Lipschitz
    constant (Liang & Yi, CCS 2024, Lemma 3.1; rounded up), and the calibration rule makes $f(x) + S \cdot Z$
    private for any such bound (docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity):

    * ``"polyplace"`` (default): Hladík & Tětek, FORC 2025, Theorem 8, extended to geo-privacy by this
      project (docs/theory/calibration.md#polyplace-theorem-for-dp-and-geo-privacy):
      $Z = \mathrm{PolyPlace}(1/\beta, \varepsilon/\beta)$, $0 < \beta < \varepsilon$, growth $e^{\beta t}$.
    * ``"student_t"``: Liang & Yi, Lemma 3.5, with the dilation term $\max(1, \nu)\beta$ (the published
      $\nu\beta$ is too small for $\nu < 1$: docs/theory/calibration.md):
      $\varepsilon = \max(1, \nu)\beta + (\nu+1)/(2\sqrt{\nu}) \cdot \eta$,
      $Z = T(\nu)/\eta$, growth $e^{\beta t}$. Default $\nu = 3$ with $\beta = \varepsilon/9$,
      $\eta = \varepsilon/\sqrt{3}$ (the paper's experiments: noise std $3 \cdot S/\varepsilon$).
    * ``"cauchy"``: Liang & Yi, Lemma 3.3:
      $\varepsilon = \max(1, \gamma-1)\beta + (\gamma-1)^{(\gamma-1)/\gamma} \cdot \eta$ (the published
      $(\gamma-1)\beta$ is too small for $1 < \gamma < 2$: docs/theory/calibration.md),
      $Z = \mathrm{GC}(\gamma)/\eta$, growth $e^{\beta t}$.
    * ``"laplace"``: Liang & Yi, Lemma 3.6 (docs/theory/calibration.md#lemma-6-laplace-geo-privacy-rule),
      $(\varepsilon, \delta)$-geo-privacy with growth $1 + \beta t$:
      $\varepsilon = \eta + \beta \cdot \max\{1, \ln(1/\delta)\}$, $Z = \mathrm{Lap}(1/\eta)$; needs
      $\delta > 0$.

    Parameters
    ----------
    query
        A :class:`~smoothdp.geo.GeoQuery` (a grid of queries releases one report per query and user).
    epsilon
        $\varepsilon > 0$ per unit of distance (per USD, per metre, ...), per query.
    noise
        ``"polyplace"`` (default), ``"student_t"``, ``"cauchy"`` or ``"laplace"``.
    delta
        $\delta \in (0, 1)$ for ``noise="laplace"`` only (per query).
    beta
        The smoothness $\beta$ (default: the rule's data-independent default).
    numerics
        ``"exact"`` (default): each report is exactly $R(f(x) + S \cdot Z)$, R the public grid
        ``OutputGrid.for_bounds(*query.value_range)``; ``"float"``: $f + S \cdot Z$ in floats (not hardened;
        the guarantee assumes idealized arithmetic). Keyword-only; recorded in ``Release.sampler``.
    df
        Degrees of freedom of Student's T (``noise="student_t"`` only; default 3).
    gamma
        Exponent $\gamma > 1$ of the generalized Cauchy (``noise="cauchy"`` only; default 4).
    constants
        ``None`` (the tightest proven constants) or ``"bun_steinke"`` (Student's T) / ``"nrs"`` (Cauchy).
        A keyword the family does not take is refused, naming the valid ones.

    Attributes
    ----------
    calibration
        The :class:`~smoothdp.calibration.Calibration` used ($\beta$, growth, Z, source).
    per_query, guarantee
        ``GeoPrivacy(ε, δ)`` per report; ``GeoPrivacy(Q·ε, Q·δ)`` per user and call.
    """

    name = "smooth sensitivity"
    proof = "docs/theory/geo-privacy.md#smooth-upper-bounds-and-smooth-sensitivity"
    source = "Liang & Yi, CCS 2024, Lemma 3.1 and Section 3.2 (smooth sensitivity for geo-privacy)"

    def __init__(
        self,
        query: GeoQuery,
        *,
        epsilon: float,
        noise: str = DEFAULT_NOISE,
        delta: float = 0.0,
        beta: float | None = None,
        numerics: str = "exact",
        df: float | None = None,
        gamma: float | None = None,
        constants: str | None = None,
    ) -> None:
        if not isinstance(query, GeoQuery):
            raise TypeError(f"query must be a smoothdp.geo query; got {type(query).__name__}")
        self.query = query
        eps, dlt = check_epsilon(epsilon), check_delta(delta)
        self.calibration: Calibration = calibrate(
            noise, epsilon=eps, delta=dlt, beta=beta, model="geo", df=df, gamma=gamma, constants=constants
        )
        self.source = f"{type(self).source}; noise: {self.calibration.source}"
        self._set_guarantee(self.calibration.guarantee)
        self._set_numerics(numerics, OutputGrid.for_bounds(*query.value_range))

    @property
    def beta(self) -> float:
        return self.calibration.beta

    @property
    def growth(self) -> Growth:
        return self.calibration.growth

    def smooth_sensitivity(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""$S_\beta(x)$ with the calibration's $\beta$ and growth (shape P + U). Not private: do not
        publish."""
        return self.query.smooth_sensitivity(x, self.beta, self.growth)

    def _privatize(self, pts: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """One report per user and query (shape P + U): R(f(x) + S_β(x)·Z), or f + S·Z in floats."""
        query = self.query
        if query.param_shape:
            return self._report_block(pts, rng)
        users = query.user_shape(pts)
        flat = pts.reshape((-1, 2) if query.dimension == 2 else (-1,))
        out = np.empty(flat.shape[0])
        for sl, block in user_blocks(flat, query.dimension, USER_BLOCK):
            self._report_block(block, rng, out=out[sl])
        return out.reshape(users)

    def _report_block(
        self, pts: NDArray[np.float64], rng: np.random.Generator, out: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        noise = self.calibration.noise
        if self.numerics == "float":
            f, s = self.query.value_and_smooth_sensitivity(pts, self.beta, self.growth)
            draws = noise.sample(f.shape, rng, numerics="float")
            report = np.multiply(draws, s, out=out)  # f + s·Z, in place
            report += f
            return report
        centre, s = self.query.enclosure_and_smooth_sensitivity(pts, self.beta, self.growth)
        released = add_noise(centre, noise, grid=self.grid, rng=rng, sensitivity=s, numerics="exact")
        report = np.asarray(released, dtype=np.float64)
        if out is None:
            return report
        out[...] = report
        return out

    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.query._smooth_sensitivity(x, self.beta, self.growth)
        return s * s * self.calibration.noise.var()

    def _public_details(self) -> dict[str, Any]:
        return {**super()._public_details(), "noise": self.calibration.family}

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        r"""$\ln p_x(y)$: log density of the report of a user at the single point x (one query only)."""
        if self.query.param_shape:
            raise ValueError("log_density needs a single query (param_shape == ())")
        pts = self.query.check_points(x)
        if self.query.user_shape(pts) != ():
            raise ValueError(f"x must be one point; got shape {np.shape(x)}")
        f, s = self.query.value_and_smooth_sensitivity(pts, self.beta, self.growth)
        y = np.asarray(y, dtype=np.float64)
        return self.calibration.noise.logpdf((y - f) / s) - np.log(s)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
