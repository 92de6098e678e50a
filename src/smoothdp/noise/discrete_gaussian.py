r"""The discrete Gaussian $N_\mathbb{Z}(0, \sigma^2)$ on the integers:
$P(K = k) \propto e^{-k^2/(2\sigma^2)}$, sampled exactly.

$\sigma^2$ is an exact rational (a :class:`fractions.Fraction`; a float is converted exactly). The sampler is
Canonne, Kamath & Steinke, *The discrete Gaussian for differential privacy*, NeurIPS 2020, Algorithm 3: a
discrete Laplace proposal Y with rate $1/t$, $t = \lfloor\sigma\rfloor + 1$
(:func:`smoothdp.noise.exact_integer.discrete_laplace`, integer arithmetic), accepted with probability
$e^{-\gamma(Y)}$, $\gamma(y) = (\vert y\vert - \sigma^2/t)^2/(2\sigma^2)$. Since
$-y^2/(2\sigma^2) = -\gamma(y) - \vert y\vert/t + \sigma^2/(2t^2)$, the accepted Y has exactly the discrete
Gaussian law (docs/theory/counting-queries.md#exact-integer-samplers).

The acceptance $\mathrm{Bernoulli}(e^{-\gamma})$ is CKS20 Algorithm 1 run on $\gamma/c$,
$c = \lceil\gamma\rceil$ ($e^{-\gamma} = (e^{-\gamma/c})^c$). Its comparisons "uniform $U < \theta$" are
decided from **certified float enclosures** of $\theta$ (every $+$, $-$, $\times$, $\div$ is correctly rounded
by IEEE 754, and each result is widened outward by more than its rounding), so no ``exp``/``log`` is
evaluated; a comparison the enclosure cannot decide (probability about $2^{-50}$) is decided exactly in
rationals, drawing more bits of U until it is. The law is therefore exactly $N_\mathbb{Z}(0, \sigma^2)$.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.noise.exact_integer import discrete_laplace

__all__ = [
    "MAX_SIGMA2",
    "MIN_SIGMA2",
    "acceptance_exponent_bounds",
    "check_sigma2",
    "discrete_gaussian",
    "discrete_gaussian_logpmf",
    "discrete_gaussian_variance",
]

#: Largest σ² accepted (σ ≤ 2⁴⁵): draws stay far below 2⁵³, where every integer is a float.
MAX_SIGMA2 = Fraction(1 << 90)
#: Smallest σ² accepted: the acceptance exponents γ stay far below 2⁵² (every count c = ⌈γ⌉ a float).
MIN_SIGMA2 = Fraction(1, 1 << 30)
_UNIFORM_BITS = 53
#: Relative widening of one correctly rounded result: 2⁻⁵³ for the result, 2⁻⁵³ for the widening step itself
#: (and |x|·2⁻⁵¹ leaves a factor 2 of room); _TINY covers results in the subnormal range.
_WIDEN = 2.0**-51
_TINY = 2.0**-1073

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


def check_sigma2(sigma2: Any, name: str = "sigma2") -> Fraction:
    r"""$\sigma^2$ as an exact Fraction in $[2^{-30}, 2^{90}]$."""
    try:
        fr = Fraction(sigma2)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be a finite positive rational or float; got {sigma2!r}") from err
    if not MIN_SIGMA2 <= fr <= MAX_SIGMA2:
        raise ValueError(f"{name} must be in [2^-30, 2^90]; got {sigma2!r}")
    return fr


def _bounds(x: Fraction) -> tuple[float, float]:
    """Floats lo ≤ x ≤ hi (equal when x is a float)."""
    f = float(x)
    lo = f if Fraction(f) <= x else math.nextafter(f, -math.inf)
    hi = f if Fraction(f) >= x else math.nextafter(f, math.inf)
    return lo, hi


def _down(x: F64) -> F64:
    """A float ≤ every real that rounds (to nearest) to x: x − |x|·2⁻⁵¹ − 2⁻¹⁰⁷⁴·2 (one ulp and a subnormal
    step, the subtraction's own rounding included)."""
    out: F64 = x - np.abs(x) * _WIDEN - _TINY
    return out


def _up(x: F64) -> F64:
    """A float ≥ every real that rounds (to nearest) to x (see :func:`_down`)."""
    out: F64 = x + np.abs(x) * _WIDEN + _TINY
    return out


def acceptance_exponent_bounds(y: I64, sigma2: Fraction, t: int) -> tuple[F64, F64]:
    r"""Floats $\gamma^- \le \gamma(y) \le \gamma^+$ for
    $\gamma(y) = (\vert y\vert - \sigma^2/t)^2/(2\sigma^2)$; each correctly rounded step widened outward."""
    a = np.abs(y).astype(np.float64)  # exact: |y| < 2⁵³ (checked by the caller)
    mu_lo, mu_hi = _bounds(sigma2 / t)
    v_lo, v_hi = _bounds(2 * sigma2)
    d_lo, d_hi = _down(a - mu_hi), _up(a - mu_lo)
    lo_sq, hi_sq = _down(d_lo * d_lo), _up(d_lo * d_lo)
    lo_sq2, hi_sq2 = _down(d_hi * d_hi), _up(d_hi * d_hi)
    straddles = (d_lo < 0) & (d_hi > 0)
    sq_lo = np.where(straddles, 0.0, np.maximum(np.minimum(lo_sq, lo_sq2), 0.0))
    sq_hi = np.maximum(hi_sq, hi_sq2)
    return np.maximum(_down(sq_lo / v_hi), 0.0), _up(sq_hi / v_lo)


def _exact_below(w: int, theta: Fraction, rng: np.random.Generator) -> bool:
    """U < θ for the uniform U whose first 53 bits are w: more bits until the comparison is decided."""
    bits = _UNIFORM_BITS
    while True:
        if Fraction(w + 1, 1 << bits) <= theta:
            return True
        if Fraction(w, 1 << bits) >= theta:
            return False
        w = (w << 64) | int(rng.integers(0, 1 << 64, dtype=np.uint64))
        bits += 64


def _alternating(
    theta_lo: F64, theta_hi: F64, exact_theta: Any, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """Bernoulli(e^{−θ_i}) for θ_i ∈ [theta_lo_i, theta_hi_i] ⊂ [0, 1] (CKS20 Algorithm 1, vectorized).

    Step k: continue iff U < θ and J = 0 (U uniform on [0, 1), J uniform on {0, …, k−1}); the result is
    whether the first failing step is odd. U < θ is decided by the enclosure, else exactly
    (``exact_theta(i)`` is θ_i as a Fraction).
    """
    n = theta_lo.size
    out = np.empty(n, dtype=np.bool_)
    idx = np.arange(n)
    k = 1
    scale = 2.0**-_UNIFORM_BITS
    while idx.size:
        w = rng.integers(0, 1 << _UNIFORM_BITS, size=idx.size, dtype=np.int64)
        u_lo = w * scale  # exact: w < 2⁵³
        below = u_lo + scale <= theta_lo[idx]
        undecided = np.flatnonzero(~below & (u_lo < theta_hi[idx]))
        for j in undecided:  # probability ~2⁻⁵⁰ each: not a loop over the draws
            below[j] = _exact_below(int(w[j]), exact_theta(int(idx[j])), rng)
        if k > 1:
            below &= rng.integers(0, k, size=idx.size, dtype=np.int64) == 0
        out[idx[~below]] = k % 2 == 1
        idx = idx[below]
        k += 1
    return out


def _accept(y: I64, sigma2: Fraction, t: int, rng: np.random.Generator) -> NDArray[np.bool_]:
    """Bernoulli(e^{−γ(y_i)}) for each proposal, exactly."""
    g_lo, g_hi = acceptance_exponent_bounds(y, sigma2, t)
    if np.any(g_hi >= 2.0**52):  # needs |y| ≥ 2^21 from a proposal of scale t ≤ σ + 1, σ² ≥ 2^-30: never
        raise OverflowError("discrete Gaussian acceptance exponent beyond 2^52")
    reps = np.maximum(np.ceil(g_hi), 1.0)  # c ≥ γ: θ = γ/c ≤ 1; c is an exact float (integer < 2⁵³)
    theta_lo, theta_hi = np.maximum(_down(g_lo / reps), 0.0), np.minimum(_up(g_hi / reps), 1.0)
    mu = sigma2 / t

    def exact_theta(i: int) -> Fraction:
        return (abs(int(y[i])) - mu) ** 2 / (2 * sigma2) / int(reps[i])

    accepted = np.ones(y.size, dtype=np.bool_)
    left = reps.astype(np.int64)
    idx = np.arange(y.size)
    while idx.size:  # c_i rounds of Bernoulli(e^{−θ_i}), stopping at a draw's first failure
        ok = _alternating(theta_lo[idx], theta_hi[idx], lambda j, sub=idx: exact_theta(int(sub[j])), rng)
        accepted[idx[~ok]] = False
        idx = idx[ok]
        left[idx] -= 1
        idx = idx[left[idx] > 0]
    return accepted


def discrete_gaussian(sigma2: Any, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> I64:
    r"""Exact draws of $N_\mathbb{Z}(0, \sigma^2)$ (int64), CKS20 Algorithm 3 (module docstring)."""
    s2 = check_sigma2(sigma2)
    shape = () if size is None else ((int(size),) if isinstance(size, int | np.integer) else tuple(size))
    n = math.prod(shape)
    t = math.isqrt(math.floor(s2)) + 1  # ⌊σ⌋ + 1 (⌊√⌊σ²⌋⌋ = ⌊σ⌋)
    accept_rate = _acceptance(float(s2), t)  # sizes the chunks only; the law does not depend on it
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        missing = n - filled
        m = int(missing / accept_rate + 4.0 * math.sqrt(missing) + 16)
        y = discrete_laplace(Fraction(1, t), m, rng)
        if np.any(np.abs(y) >= 1 << 53):  # P ≤ e^{−2^53/t}: never for σ ≤ 2^45
            raise OverflowError("discrete Gaussian proposal beyond 2^53")
        kept = y[_accept(y, s2, t, rng)][:missing]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out.reshape(shape)


def _acceptance(s2: float, t: int) -> float:
    """P(accept) = Σ_y tanh(1/2t)e^{−|y|/t}e^{−γ(y)} = tanh(1/2t)·e^{−σ²/2t²}·Σ_y e^{−y²/2σ²} (≥ 0.4)."""
    rate = math.tanh(0.5 / t) * math.exp(-s2 / (2.0 * t * t) + _log_normalizer(s2))
    return min(max(rate, 0.05), 1.0)


def discrete_gaussian_logpmf(k: Any, sigma2: Any) -> F64:
    r"""$\ln P(K = k)$ for $N_\mathbb{Z}(0, \sigma^2)$ (floats; the normalizer summed over
    $\vert k\vert \le 40\sigma + 40$)."""
    s2 = float(check_sigma2(sigma2))
    kk = np.asarray(k, dtype=np.float64)
    return -(kk * kk) / (2.0 * s2) - _log_normalizer(s2)


def _log_normalizer(s2: float) -> float:
    if s2 > 1e6:  # Poisson summation: Σ e^{−k²/2σ²} = √(2πσ²)(1 + 2Σ_j e^{−2π²σ²j²}), the rest < 1e−8000
        return 0.5 * math.log(2.0 * math.pi * s2)
    span = int(40.0 * math.sqrt(s2)) + 40
    ks = np.arange(-span, span + 1, dtype=np.float64)
    return float(np.log(np.sum(np.exp(-(ks * ks) / (2.0 * s2)))))


def discrete_gaussian_variance(sigma2: Any) -> float:
    r"""$\mathrm{Var}\, K$ for $N_\mathbb{Z}(0, \sigma^2)$ ($< \sigma^2$; equal to $\sigma^2$ up to
    $e^{-2\pi^2\sigma^2}$ for large $\sigma$)."""
    s2 = float(check_sigma2(sigma2))
    if s2 > 1e6:
        return s2
    span = int(40.0 * math.sqrt(s2)) + 40
    ks = np.arange(-span, span + 1, dtype=np.float64)
    w = np.exp(-(ks * ks) / (2.0 * s2))
    return float(np.sum(ks * ks * w) / np.sum(w))
