"""The smooth-sensitivity mechanism for geo-privacy in the local model (seed 000, Section 3.2).

Each user with private point x sends y = f(x) + S_β(x)·Z, where S_β is the query's smooth sensitivity
(a G_β-smooth upper bound on the pointwise Lipschitz constant, Definitions 7–9) and Z the standardized
noise of :func:`smoothdp.calibration.calibrate` with ``model="geo"``. The analyst averages the reports:
E[y] = f(x), so the mean of the reports is unbiased for the mean of f, with variance Σ_i S_β(x_i)²·Var Z/n².
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.calibration import Calibration, calibrate
from smoothdp.geo._common import USER_BLOCK, GeoMechanism, user_blocks
from smoothdp.geo._query import GeoQuery
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.growth import Growth

__all__ = ["SmoothSensitivityMechanism", "value_and_sensitivity"]


def value_and_sensitivity(
    query: GeoQuery, x: NDArray[np.float64], beta: float, growth: Growth
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """f(x) and S_β(x) for checked points, sharing work when the query offers a joint fast path."""
    joint = getattr(query, "value_and_smooth_sensitivity", None)
    if joint is not None:
        return joint(x, beta, growth)
    return query._value(x), query._smooth_sensitivity(x, beta, growth)


class SmoothSensitivityMechanism(GeoMechanism):
    """f(x) + S_β(x)·Z: (ε, δ)-geo-privacy per unit of Euclidean distance, for each query.

    The guarantee rests on the calibration rule (``self.calibration.source``), applied with the query's
    smooth sensitivity, which is a G_β-smooth upper bound on L_f (Lemma 3.1; rounded up):

    * ``"student_t"``: seed 000, Lemma 3.5: ε = νβ + (ν+1)/(2√ν)·η, Z = T(ν)/η, growth e^{βt}. Default
      ν = 3 with β = ε/9, η = ε/√3 (the paper's experiments: noise std 3·S/ε).
    * ``"cauchy"``: seed 000, Lemma 3.3: ε = (γ−1)β + (γ−1)^{(γ−1)/γ}·η, Z = GC(γ)/η, growth e^{βt}.
    * ``"polyplace"``: seed 004, Theorem 8, extended to geo-privacy by this project (proof in
      docs/calibration.md §3; notes/polyplace_gp.md): Z = PolyPlace(1/β, ε/β), 0 < β < ε, growth e^{βt}.
    * ``"laplace"``: seed 000, Lemma 3.6, (ε, δ)-geo-privacy with growth 1 + βt:
      ε = η + β·max{1, ln(1/δ)}, Z = Lap(1/η); needs δ > 0.

    Parameters
    ----------
    query
        A :class:`~smoothdp.geo.GeoQuery` (a grid of queries releases one report per query and user:
        ``total_guarantee()`` is what a user spends on all of them).
    epsilon
        ε > 0 per unit of distance (per USD, per metre, ...).
    noise, delta, beta, **shape
        Passed to :func:`~smoothdp.calibration.calibrate` (``df`` for Student's T, ``gamma`` for Cauchy).

    Attributes
    ----------
    calibration
        The :class:`~smoothdp.calibration.Calibration` used (β, growth, Z, source).
    guarantee
        ``GeoPrivacy(ε, δ)`` per query.
    """

    name = "smooth sensitivity"

    def __init__(
        self,
        query: GeoQuery,
        epsilon: float,
        noise: str = "student_t",
        delta: float = 0.0,
        beta: float | None = None,
        **shape: float,
    ) -> None:
        if not isinstance(query, GeoQuery):
            raise TypeError(f"query must be a smoothdp.geo query; got {type(query).__name__}")
        self.query = query
        self.calibration: Calibration = calibrate(noise, epsilon, delta, beta, model="geo", **shape)
        self.guarantee = self.calibration.guarantee
        self.source = self.calibration.source

    @property
    def beta(self) -> float:
        return self.calibration.beta

    @property
    def growth(self) -> Growth:
        return self.calibration.growth

    def smooth_sensitivity(self, x: ArrayLike) -> NDArray[np.float64]:
        """S_β(x) with the calibration's β and growth (shape P + U)."""
        return self.query.smooth_sensitivity(x, self.beta, self.growth)

    def privatize(self, x: ArrayLike, rng: SeedLike = None) -> NDArray[np.float64]:
        """One report f(x) + S_β(x)·Z per user and query (shape P + U). ``rng=None``: secure generator."""
        pts = self.query.check_points(x)
        gen = resolve_rng(rng)
        noise = self.calibration.noise
        if self.query.param_shape:
            f, s = value_and_sensitivity(self.query, pts, self.beta, self.growth)
            report = noise.sample(f.shape, gen)  # a fresh float array of f's (non-empty) shape
            report *= s
            report += f
            return report
        users = self.query.user_shape(pts)
        flat = pts.reshape((-1, 2) if self.query.dimension == 2 else (-1,))
        out = np.empty(flat.shape[0])
        for sl, block in user_blocks(flat, self.query.dimension, USER_BLOCK):
            f, s = value_and_sensitivity(self.query, block, self.beta, self.growth)
            report = np.multiply(noise.sample(f.shape, gen), s, out=out[sl])  # f + s·Z, written in place
            report += f
        return out.reshape(users)

    def _user_variance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.query._smooth_sensitivity(x, self.beta, self.growth)
        return s * s * self.calibration.noise.var()

    def log_density(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """ln p_x(y): log density of the report of a user at the single point x (one query only)."""
        if self.query.param_shape:
            raise ValueError("log_density needs a single query (param_shape == ())")
        pts = self.query.check_points(x)
        if self.query.user_shape(pts) != ():
            raise ValueError(f"x must be one point; got shape {np.shape(x)}")
        f, s = value_and_sensitivity(self.query, pts, self.beta, self.growth)
        y = np.asarray(y, dtype=np.float64)
        return self.calibration.noise.logpdf((y - f) / s) - np.log(s)
