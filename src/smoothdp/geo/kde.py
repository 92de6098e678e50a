"""Gaussian kernel density query f_t(x) = exp(−‖x − t‖²/(2h²)) in 1-D or 2-D.

From Liang & Yi, CCS 2024 ("LY"), Section 4.3. The kernel is unnormalized (no 1/(2πh²)); the analyst
averages it over users. Global Lipschitz constant e^{−1/2}/h (LY Claim 4.4).

Exact smooth sensitivity by the Λ-profile (docs/theory/geo-privacy.md#gaussian-kde; the authors' reference
code's four-case solver underestimates S* by up to 13% and is not used). With g(s) = e^{−s²/2} in units
of h::

    Λ(s)  = sup_{u ≥ 0} |g(s) − g(u)| / |s − u|            (u = s: |g'(s)|)
    L(x)  = Λ(‖x − t‖/h) / h                                 (LY Lemma 4.5: reduce to the ray from t)
    S*(x) = (1/h) · sup_{s ≥ 0} Λ(s) / G(b·|c − s|),        c = ‖x − t‖/h,  b = β·h,

exact in any dimension. Facts used (each checked numerically in the tests): for s < 1 the best u is the
unique u > 1 where the secant from s touches g (|g'(u)| = secant), for s > 1 the unique u ∈ (0, 1);
at that u, Λ(s) = |g'(u)| = u·e^{−u²/2}. Λ increases on [0, 1], decreases on [1, ∞), ln Λ is convex on
[3, ∞), and Λ(s) ≤ u₋(s) = 2/(s + √(s² − 4)) for s ≥ 2 (from u(s − u) ≤ 1 at the tangent point).

Computation, rounded upward throughout:

1. Λ at nodes s_k = kΔ (Δ = 2⁻¹⁰, s ≤ 512) by bisection on the tangency condition (64 steps), valued at the
   bracket end where |g'| is larger.
2. For G = e^{βt}: ln E(c) = sup_s (ln Λ(s) − b|c − s|) at the nodes by one forward and one backward
   running max, where each interval between nodes contributes the max of its ends plus the pad
   K_kΔ²/8 (K_k ≥ −(ln Λ)'' on the interval; the sup of a function with f'' ≥ −K over an interval exceeds
   the larger end by at most KΔ²/8).
3. Between nodes, ln E is semiconvex with the same K (pieces of ln Λ, or lines of slope ±b meeting C¹ or
   in convex kinks), so ln E(c) ≤ lerp + K_kΔ²/8; the table is stored in the linear domain (exp of a
   lerp of logs ≤ the lerp of the exps) with the pad folded in. Beyond the table the tail bound u₋ is used.
4. For G = 1 + βt (LY Lemma 3.6): sup over s ∈ [0, 3] at coarser nodes (Δ = 2⁻⁸) per user, with the same
   interval pads, plus s = c; s ∈ [3, c] is covered by its endpoints (the objective is log-convex there).

The smooth sensitivity is floored at the smallest normal float 2^-1022 (a constant is G-smooth and the max
of two G-smooth upper bounds is one), so that it never underflows to 0 for a far user.

Exact release path (docs/geo.md, "Exact release path"): the float value f = exp(−a), a = c²/2, has
|f − f*| ≤ f·(|a| + 1)·2^-47 + 2^-1073 (a within 2^-49 relative of a*, numpy's ``exp`` within 16 ulps);
an undecided user is refined in python-flint ``arb`` from the exact rational ‖x − t‖²/(2h²).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.exact import Enclosure
from smoothdp.geo._exact import TINY, arb_of, working_precision
from smoothdp.geo._query import GeoQuery, as_parameter
from smoothdp.keywords import check_keywords_of
from smoothdp.sensitivity.growth import Growth, check_growth
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_data, check_positive

__all__ = ["GaussianKDE", "kde_lipschitz_profile", "kde_smooth_profile"]

_STEP = 2.0**-10  # node spacing of the Λ and E tables (in bandwidths)
_S_MAX = 512.0  # table end; beyond it the tail bound u₋(s) is used
_S_CONVEX = 3.0  # ln Λ is convex on [3, ∞)
_LINEAR_STRIDE = 4  # linear growth: every 4th node on [0, 3]
_SAFETY = 1e-10  # relative margin on table values (float error of lerp/exp at c up to 512)
_S_FLOOR = 2.0**-1022  # smallest normal float: floor of the smooth sensitivity (module docstring)
_EXP_REL = 2.0**-47  # relative error budget of the float kernel value (module docstring)


def _tangent_root(s: NDArray[np.float64], iterations: int = 64) -> tuple[NDArray, NDArray]:
    """Bracket [lo, hi] of the tangency point u*(s) where |g'(u)| equals the secant from s to u.

    s < 1: u* ∈ (1, s + 40), sign of u(u − s) + 1 − e^{(u² − s²)/2} goes + → −.
    s ≥ 1: u* ∈ (0, 1],      sign of u(s − u) − 1 + e^{−(s² − u²)/2} goes − → +.
    (Both are the tangency condition divided by e^{−u²/2}, which keeps them accurate for large s.)
    """
    lo = np.empty_like(s)
    hi = np.empty_like(s)
    below = s < 1.0
    for part, is_below in ((below, True), (~below, False)):
        sp = s[part]
        a = np.full_like(sp, 1.0 if is_below else 0.0)
        z = sp + 40.0 if is_below else np.ones_like(sp)
        for _ in range(iterations):
            mid = 0.5 * (a + z)
            if is_below:
                left_side = mid * (mid - sp) + 1.0 - np.exp((mid * mid - sp * sp) / 2.0) > 0
            else:
                left_side = mid * (sp - mid) - 1.0 + np.exp(-(sp * sp - mid * mid) / 2.0) < 0
            a = np.where(left_side, mid, a)
            z = np.where(left_side, z, mid)
        lo[part], hi[part] = a, z
    return lo, hi


def _lambda_upper(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """Λ(s) rounded up: |g'| at the end of the tangency bracket where |g'| is larger."""
    lo, hi = _tangent_root(s)
    u = np.where(s < 1.0, lo, hi)  # |g'| decreases on (1, ∞) and increases on (0, 1)
    lam = u * np.exp(-u * u / 2.0)
    lam = np.where(s == 1.0, np.exp(-0.5), lam)
    return lam * (1.0 + 1e-12)


def _tail_bound(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """τ(s) = u₋·e^{−u₋²/2} ≥ Λ(s) for s ≥ 2, with u₋ = 2/(s + √(s² − 4)).

    At the tangent point u*(s − u*) = 1 − e^{−(s² − u*²)/2} < 1, so u* < u₋ (the smaller root of
    u(s − u) = 1), and Λ(s) = u*·e^{−u*²/2} ≤ τ(s) because u·e^{−u²/2} increases on (0, 1). The gap is of
    order e^{−s²/2}; ln τ is convex and decreasing for s ≥ 2.
    """
    u = 2.0 / (s + np.sqrt(s * s - 4.0))
    return u * np.exp(-0.5 * u * u)


@cache
def _lambda_table() -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Nodes s_k, ln Λ(s_k) (upper) and the per-interval pads K_kΔ²/8 (in ln units)."""
    nodes: NDArray[np.float64] = np.arange(int(_S_MAX / _STEP) + 1, dtype=np.float64) * _STEP
    log_lam: NDArray[np.float64] = np.log(_lambda_upper(nodes))
    second = np.diff(log_lam, 2) / _STEP**2  # at nodes 1..N-1
    curv = np.concatenate(([second[0]], second, [second[-1]]))
    neg = np.pad(np.maximum(-curv, 0.0), 1, mode="edge")  # neg[i] belongs to node i - 1
    n_int = nodes.size - 1
    # K_k for interval [s_k, s_{k+1}]: twice the worst second difference at nodes k-1 .. k+2.
    k = 2.0 * np.maximum.reduce([neg[j : j + n_int] for j in range(4)])
    pads: NDArray[np.float64] = k * _STEP**2 / 8.0 + 1e-15
    return nodes, log_lam, pads


@lru_cache(maxsize=32)
def _exp_envelope_table(b: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ln W at the nodes (base, slope per step): a b-Lipschitz piecewise-linear upper bound on ln E_b.

    E_b(c) = sup_s e^{−b|c−s|}Λ(s). Steps: (1) ln E at the nodes by forward/backward running maxima over
    the intervals (max of the ends + pad); (2) V_k = E_k·e^{max(pad_{k−1}, pad_k)}, so that the lerp of
    ln V bounds ln E on both neighbouring intervals (semiconvexity, module docstring), and V_N ≥ τ(S_MAX)
    for continuity with the tail; (3) ln W = the b-Lipschitz upper envelope of ln V (two running maxima),
    which only raises values. The lerp of ln W is then ≥ ln E and exactly b-Lipschitz in c, so
    S = e^{lerp}/h is a β-smooth upper bound (LY Definition 8), not only an upper bound.
    """
    nodes, log_lam, pads = _lambda_table()
    fwd_vals = log_lam + b * nodes
    bwd_vals = log_lam - b * nodes
    fwd_int = np.maximum(fwd_vals[:-1], fwd_vals[1:]) + pads
    bwd_int = np.maximum(bwd_vals[:-1], bwd_vals[1:]) + pads
    tail_log = float(np.log(_tail_bound(np.array(_S_MAX))))
    forward = np.maximum(fwd_vals, np.concatenate(([-np.inf], np.maximum.accumulate(fwd_int))))
    backward = np.maximum(bwd_vals, np.concatenate((np.maximum.accumulate(bwd_int[::-1])[::-1], [-np.inf])))
    backward = np.maximum(backward, tail_log - b * _S_MAX)  # s beyond the table: Λ ≤ τ, decreasing
    log_e = np.maximum(forward - b * nodes, backward + b * nodes)
    node_pad = np.maximum(np.concatenate(([pads[0]], pads)), np.concatenate((pads, [pads[-1]])))
    log_v = log_e + node_pad
    log_v[-1] = max(log_v[-1], tail_log)
    ramp = b * nodes
    up = np.maximum.accumulate(log_v + ramp) - ramp
    down = (np.maximum.accumulate((log_v - ramp)[::-1])[::-1]) + ramp
    log_w = np.maximum(up, down) + _SAFETY
    return log_w[:-1], np.diff(log_w)


def _node_position(c: NDArray[np.float64], step: float, last: int) -> tuple[NDArray[np.intp], NDArray]:
    pos = np.minimum(c * (1.0 / step), float(last))
    idx = np.minimum(pos.astype(np.intp), last - 1)
    return idx, pos - idx


def _exp_profile(c: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    """exp(lerp ln W) on the table; beyond it max(W_N e^{−b(c − S_MAX)}, τ(c)) (continuous at S_MAX)."""
    base, slope = _exp_envelope_table(float(b))
    idx, frac = _node_position(c, _STEP, base.size)
    out = np.exp(base[idx] + slope[idx] * frac)
    far = c > _S_MAX
    if np.any(far):
        cf = np.maximum(c, _S_MAX)
        log_end = base[-1] + slope[-1]
        tail = np.maximum(np.exp(log_end - b * (cf - _S_MAX)), _tail_bound(cf) * (1.0 + _SAFETY))
        out = np.where(far, tail, out)
    return out


@cache
def _lambda_lerp_table() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ln of a continuous upper bound of Λ: node values + adjacent pads, lerp between nodes.

    Beyond s = 3 (where ln Λ is convex) the pad is one constant, so the bound stays log-convex there, and
    it is raised to meet τ at S_MAX (continuity with the tail).
    """
    nodes, log_lam, pads = _lambda_table()
    node_pad = np.maximum(np.concatenate(([pads[0]], pads)), np.concatenate((pads, [pads[-1]])))
    convex = nodes >= _S_CONVEX
    tail_gap = float(np.log(_tail_bound(np.array(_S_MAX)))) - log_lam[-1]
    node_pad[convex] = max(float(node_pad[convex].max()), tail_gap, 0.0)
    log_up = log_lam + node_pad + _SAFETY
    return log_up[:-1], np.diff(log_up)


def kde_lipschitz_profile(c: ArrayLike) -> NDArray[np.float64]:
    """Λ(c), rounded up: h·L(x) for a user at c = ‖x − t‖/h bandwidths from the centre."""
    c = np.asarray(c, dtype=np.float64)
    base, slope = _lambda_lerp_table()
    idx, frac = _node_position(c, _STEP, base.size)
    out = np.exp(base[idx] + slope[idx] * frac)
    far = c > _S_MAX
    if np.any(far):
        out = np.where(far, _tail_bound(np.maximum(c, _S_MAX)) * (1.0 + _SAFETY), out)
    return out


def _linear_profile(c: NDArray[np.float64], b: float, chunk: int = 2048) -> NDArray[np.float64]:
    """sup_s φ(s)/(1 + b|c − s|) for a fixed upper bound φ ≥ Λ, exactly, so the result is G-smooth.

    φ on [0, 3]: on each coarse interval I_j (every 4th node), exp(lerp of ln Λ + pad_j); the sup of
    φ_j(s)/(1 + b|c − s|) over I_j is at an end or at s = c (log-convex on each side of c). φ on [3, ∞):
    :func:`kde_lipschitz_profile` (log-convex and decreasing), whose sup is at s = 3 or s = max(c, 3).
    A sup over a fixed family of functions of the form φ(s)/G(b|c − s|) is G-smooth in c.
    """
    nodes, log_lam, pads = _lambda_table()
    stop = round(_S_CONVEX / _STEP)
    sel = np.arange(0, stop + 1, _LINEAR_STRIDE)
    s, ll = nodes[sel], log_lam[sel]
    k_fine = (pads[:stop] - 1e-15) * 8.0 / _STEP**2  # back to curvature bounds K
    coarse_pad = k_fine.reshape(-1, _LINEAR_STRIDE).max(axis=1) * (_STEP * _LINEAR_STRIDE) ** 2 / 8 + 1e-15
    node_val = ll + np.maximum(
        np.concatenate(([coarse_pad[0]], coarse_pad)), np.concatenate((coarse_pad, [coarse_pad[-1]]))
    )
    flat = c.ravel()
    ends = np.empty_like(flat)
    for start in range(0, flat.size, chunk):
        cc = flat[start : start + chunk, None]
        ends[start : start + chunk] = np.max(
            node_val[None, :] - np.log1p(b * np.abs(cc - s[None, :])), axis=1
        )
    idx, frac = _node_position(np.minimum(flat, _S_CONVEX), s[1] - s[0], s.size - 1)
    inside = np.where(flat <= _S_CONVEX, ll[idx] + (ll[idx + 1] - ll[idx]) * frac + coarse_pad[idx], -np.inf)
    phi_3 = float(kde_lipschitz_profile(np.array(_S_CONVEX)))
    beyond = np.maximum(
        phi_3 / (1.0 + b * np.abs(flat - _S_CONVEX)),
        np.where(flat > _S_CONVEX, kde_lipschitz_profile(flat), 0.0),
    )
    out = np.maximum(np.exp(np.maximum(ends, inside)), beyond)
    return (out * (1.0 + _SAFETY)).reshape(c.shape)


def kde_smooth_profile(c: ArrayLike, b: float, growth: Growth = "exponential") -> NDArray[np.float64]:
    """h·S*(x) = sup_{s ≥ 0} Λ(s)/G(b|c − s|) at c = ‖x − t‖/h, b = βh, rounded up (never below)."""
    check_growth(growth)
    b = check_positive("b", b)
    c = check_data(c, "c", min_size=0)
    if np.any(c < 0):
        raise ValueError("c (a distance in bandwidths) must be >= 0")
    if growth == "exponential":
        return _exp_profile(c, float(b))
    return _linear_profile(c, float(b))


class GaussianKDE(GeoQuery):
    r"""Gaussian kernel query $f_t(x) = \exp(-\Vert x - t\Vert^2/(2h^2))$ for a user at x (LY Section 4.3).

    docs/theory/geo-privacy.md#gaussian-kde. Global Lipschitz constant $e^{-1/2}/h$ (LY Claim 4.4). Pointwise
    Lipschitz constant $\Lambda(\Vert x - t\Vert/h)/h$ and exact smooth sensitivity
    $(1/h) \cdot \sup_s \Lambda(s)/G_\beta(h\vert c - s\vert)$ (docs/theory/geo-privacy.md#gaussian-kde),
    rounded up by at most $\sim 10^{-6}$ relative (measured against brute force in the tests).

    Parameters
    ----------
    center
        The centre t: a number (1-D), a point $(t_1, t_2)$ (2-D), or an array of centres: shape P (1-D) or P +
        (2,) (2-D) for a grid of queries.
    bandwidth
        $h > 0$, a scalar or an array broadcasting with the grid.
    dimension
        1 or 2; by default 1 for a scalar centre or a 1-D array whose length is not 2, else 2. Pass it
        for a 1-D grid of two centres.
    """

    name = "Gaussian KDE"
    radial = True
    value_note = (
        "certified float enclosure (relative error ≤ (a + 1)·2^-47, docs/geo.md), arb refinement when "
        "undecided"
    )
    sensitivity_note = "Λ-profile tables, rounded up"

    def __init__(self, center: ArrayLike, bandwidth: ArrayLike, *, dimension: int | None = None) -> None:
        raw = np.asarray(center, dtype=np.float64)
        if dimension is None:
            dimension = 2 if raw.ndim >= 1 and raw.shape[-1] == 2 else 1
        if dimension not in (1, 2):
            raise ValueError(f"dimension must be 1 or 2; got {dimension!r}")
        self.dimension = dimension
        t = as_parameter("center", center, point_dim=2 if dimension == 2 else 0)
        h = as_parameter("bandwidth", bandwidth, positive=True)
        t_shape = t.shape[:-1] if dimension == 2 else t.shape
        self.param_shape = np.broadcast_shapes(t_shape, h.shape)
        self.center = np.broadcast_to(t, self.param_shape + ((2,) if dimension == 2 else ()))
        self.bandwidth = np.broadcast_to(h, self.param_shape)

    @property
    def lipschitz(self) -> NDArray[np.float64]:
        return np.exp(-0.5) / self.bandwidth * (1.0 + 1e-12)

    @property
    def default_point(self) -> NDArray[np.float64]:
        """The middle of the centres (the centre t for a single query), per coordinate."""
        return self._middle_of(self.center)

    @property
    def value_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def scaled_distance(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""$c = \Vert x - t\Vert/h$, shape ``param_shape + U``."""
        return self._scaled_distance(self.check_points(x))

    def _scaled_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        user_ndim = len(self.user_shape(x))
        inv_h = self.expand(1.0 / self.bandwidth, user_ndim)
        if self.dimension == 1:
            return np.abs(x - self.expand(self.center, user_ndim)) * inv_h
        return self._raw_distance(x) * inv_h

    def _raw_distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """‖x − t‖ in floats: within 2^-50 relative of the exact distance (one subtraction per
        coordinate and a ``hypot``, each within an ulp; no underflow)."""
        user_ndim = len(self.user_shape(x))
        if self.dimension == 1:
            return np.abs(x - self.expand(self.center, user_ndim))
        shape = self.param_shape + (1,) * user_ndim
        d1 = x[..., 0] - self.center[..., 0].reshape(shape)
        d2 = x[..., 1] - self.center[..., 1].reshape(shape)
        out: NDArray[np.float64] = np.hypot(d1, d2)
        return out

    def _value(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        c = self._scaled_distance(x)
        return np.exp(-0.5 * c * c)

    def _distance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """‖x − t‖ (not scaled), shape P + U."""
        return self._raw_distance(x)

    def _distance_enclosure(self, x: NDArray[np.float64]) -> Enclosure:
        """‖x − t‖ within ℓ(1 ± 2^-49) ± 2^-1073 (float ℓ within 2^-50 and an ulp), ``arb`` refinement."""
        ell = self._raw_distance(x)
        lower = ell * (1.0 - 2.0**-49)
        lower -= TINY
        np.maximum(lower, 0.0, out=lower)
        upper = np.multiply(ell, 1.0 + 2.0**-49, out=ell)
        upper += TINY
        return Enclosure(lower, upper, self._refiner_of(x, upper.shape, self._exact_distance))

    def _squared_distance_exact(self, p_index: tuple[int, ...], point: NDArray[np.float64]) -> Fraction:
        centre = self.center[p_index]
        if self.dimension == 1:
            return (Fraction(float(point)) - Fraction(float(centre))) ** 2
        return sum(
            ((Fraction(float(point[k])) - Fraction(float(centre[k]))) ** 2 for k in (0, 1)), Fraction(0)
        )

    def _exact_distance(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Any:
        with working_precision(bits):
            return arb_of(self._squared_distance_exact(p_index, point)).sqrt()

    def _exact_value(self, p_index: tuple[int, ...], point: NDArray[np.float64], bits: int) -> Any:
        """exp(−‖x − t‖²/(2h²)) as an ``arb`` ball (the exponent is an exact rational)."""
        h = Fraction(float(self.bandwidth[p_index]))
        exponent = self._squared_distance_exact(p_index, point) / (2 * h * h)
        with working_precision(bits):
            return (-arb_of(exponent)).exp()

    def _refiner_of(self, x: NDArray[np.float64], shape: tuple[int, ...], exact: Any) -> Any:
        p_ndim = len(self.param_shape)

        def refine(i: int, bits: int) -> Any:
            idx = np.unravel_index(int(i), shape)
            return exact(tuple(int(k) for k in idx[:p_ndim]), np.asarray(x[idx[p_ndim:]]), bits)

        return refine

    def _enclosure_of_c(self, x: NDArray[np.float64], c: NDArray[np.float64]) -> Enclosure:
        """[f − f·(a + 1)·2^-47 − 2^-1073, f + f·(a + 1)·2^-47 + 2^-1073] ∩ [0, 1], a = c²/2 (c consumed)."""
        a = np.multiply(c, c, out=c)
        a *= 0.5
        f = np.exp(-a)
        margin = np.add(a, 1.0, out=a)
        margin *= _EXP_REL
        margin *= f
        margin += TINY
        lower = np.subtract(f, margin)
        np.maximum(lower, 0.0, out=lower)
        upper = np.add(f, margin, out=f)
        np.minimum(upper, 1.0, out=upper)
        return Enclosure(lower, upper, self._refiner(x, upper.shape))

    def _enclosure(self, x: NDArray[np.float64]) -> Enclosure:
        return self._enclosure_of_c(x, self._scaled_distance(x))

    def enclosure_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[Enclosure, NDArray[np.float64]]:
        c = self._scaled_distance(x)
        s = self._sensitivity_at(c, len(self.user_shape(x)), beta, growth)
        return self._enclosure_of_c(x, c), s

    def _of_distance(self, distance: NDArray[np.float64], user_ndim: int) -> NDArray[np.float64]:
        """exp(−ℓ²/(2h²)) of a distance ℓ of shape P + U (U with ``user_ndim`` axes)."""
        h = self.expand(self.bandwidth, user_ndim)
        return np.exp(-0.5 * (distance / h) ** 2)

    def _lipschitz_at(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        c = self._scaled_distance(x)
        return kde_lipschitz_profile(c) * self.expand(1.0 / self.bandwidth, len(self.user_shape(x)))

    def _smooth_sensitivity(self, x: NDArray[np.float64], beta: float, growth: Growth) -> NDArray[np.float64]:
        return self._sensitivity_at(self._scaled_distance(x), len(self.user_shape(x)), beta, growth)

    def value_and_smooth_sensitivity(
        self, x: NDArray[np.float64], beta: float, growth: Growth
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """f(x) and S*(x) from one distance computation (checked input; the mechanisms' fast path)."""
        c = self._scaled_distance(x)
        return np.exp(-0.5 * c * c), self._sensitivity_at(c, len(self.user_shape(x)), beta, growth)

    def _sensitivity_at(self, c: NDArray[np.float64], user_ndim: int, beta: float, growth: Growth) -> NDArray:
        h_values = np.unique(self.bandwidth)
        if h_values.size == 1:  # one table for the whole grid
            h = float(h_values[0])
            return np.maximum(round_up(kde_smooth_profile(c, beta * h, growth) / h), _S_FLOOR)
        # one table per distinct bandwidth (a loop over bandwidths, not users)
        h_full = np.broadcast_to(self.expand(self.bandwidth, user_ndim), c.shape)
        sens = np.empty_like(c)
        for h in h_values:
            sel = h_full == h
            sens[sel] = kde_smooth_profile(c[sel], beta * float(h), growth) / float(h)
        return np.maximum(round_up(sens), _S_FLOOR)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
