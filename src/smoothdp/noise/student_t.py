"""Student's t with real degrees of freedom d > 0 and a scale σ: density ∝ (1 + (x/σ)²/d)^{−(d+1)/2}."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import special

from smoothdp.exact.laws import StudentTLaw
from smoothdp.keywords import check_keywords_of
from smoothdp.noise._base import NoiseDistribution, Size
from smoothdp.noise._beta_tail import abs_sf, abs_sf_inverse, log_y_of
from smoothdp.validation import check_positive

__all__ = ["StudentT"]


class StudentT(NoiseDistribution):
    r"""Student's t law $T(d, 0, \sigma)$ (``docs/theory/noise.md#students-t``; the T(3) sampler:
    ``docs/theory/noise.md#exact-t3-sampler``).

    $$
    \mathrm{pdf}(x) = \Gamma((d+1)/2) / (\Gamma(d/2) \sqrt{d\pi} \sigma) \cdot (1 +
    (x/\sigma)^2/d)^{-(d+1)/2},
    $$

    for any real $d > 0$.

    Moments: mean 0 for $d > 1$ (``nan`` for $d \le 1$); variance $\sigma^2 d/(d-2)$ for $d > 2$ and ``inf``
    for $d \le 2$.

    Notes
    -----
    Tails through the incomplete beta function: $P(\vert T\vert > t) = I_{d/(d+t^2)}(d/2, 1/2)$, evaluated and
    inverted in log space (:mod:`smoothdp.noise._beta_tail`), so ``cdf``, ``sf`` and ``ppf`` stay accurate
    however far out (``scipy.special.stdtrit`` returns wrong values below about 1e-300). ``logpdf`` never
    squares x, so it is finite up to the largest double. Sampling: for $d = 3$ exactly (the paper's default),
    an exact two-uniform polar form (:func:`_standard_t3`: $T^2 = 3U/(1 - U + \tan^2 \varphi)$, about 60% of
    the cost of numpy's sampler); otherwise numpy's ``standard_t`` (a normal over the root of an independent
    chi-square), which accepts real d.
    """

    name = "student_t"

    def __init__(self, df: float, scale: float = 1.0) -> None:
        super().__init__(scale)
        self.df = check_positive("df", df)
        d = self.df
        self._log_norm = special.gammaln((d + 1) / 2) - special.gammaln(d / 2) - 0.5 * math.log(d * math.pi)

    def _log_v(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return 2.0 * np.log(np.abs(z)) - math.log(self.df)  # ln(z²/d), z² never formed

    def _logpdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        log_y, _ = log_y_of(self._log_v(z))  # ln 1/(1 + z²/d)
        return self._log_norm + 0.5 * (self.df + 1.0) * log_y

    def _cdf_std(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        half_tail = 0.5 * abs_sf(self._log_v(z), 0.5 * self.df, 0.5)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def _ppf_std(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        log_v = abs_sf_inverse(2.0 * np.minimum(q, 1.0 - q), 0.5 * self.df, 0.5)
        with np.errstate(over="ignore"):
            magnitude = np.exp(0.5 * (log_v + math.log(self.df)))
        return np.sign(q - 0.5) * magnitude + 0.0  # + 0.0 turns −0.0 into 0.0

    def _exact_law(self) -> StudentTLaw:
        return StudentTLaw(self.scale, self.df)

    def _sample_std(self, size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
        if self.df == 3.0:
            return _standard_t3(size, rng)
        return rng.standard_t(self.df, size)

    def _var_std(self) -> float:
        return self.df / (self.df - 2.0) if self.df > 2.0 else math.inf

    def mean(self) -> float:
        return 0.0 if self.df > 1.0 else math.nan

    def breakpoints(self) -> tuple[float, ...]:
        r"""$\sigma\sqrt{\nu}$, where $\vert d/dx \ln\, \mathrm{pdf}\vert = (\nu+1)\vert z\vert/(\nu + z^2)$
        ($z = x/\sigma$) is largest."""
        return (self.scale * math.sqrt(self.df),)

    def _params(self) -> str:
        return f"df={self.df:g}, scale={self.scale:g}"


#: Half a step of numpy's uniform grid {k·2⁻⁵³}: shifts V − 1/2 onto a grid symmetric about 0.
_HALF_ULP_STEP = 2.0**-54


def _standard_t3(size: Size, rng: np.random.Generator) -> NDArray[np.float64]:
    """Exact T(3) draws from two uniforms and one ``tan`` on [0, π/4] (~60% of numpy's ``standard_t`` cost).

    Identity. T² ~ F(1, ν), i.e. Y = T²/(ν + T²) ~ Beta(1/2, ν/2), and the sign of T is a fair coin
    independent of |T| (equivalently Cacoullos's symmetric-beta form T = √ν·(2B − 1)/(2√(B(1 − B))),
    B ~ Beta(ν/2, ν/2), Y = (2B − 1)²: T. Cacoullos, "A relation between t and F-distributions",
    JASA 60 (1965) 528–531). For ν = 3, S = 2B − 1 has the semicircle density (2/π)√(1 − s²) on [−1, 1],
    the law of the x-coordinate of a uniform point of the unit disk, X = √U·cos φ with U uniform on
    [0, 1) and φ a uniform angle; so Y =ᵈ X² = U cos² φ (density (2/π) y^{−1/2}(1 − y)^{1/2}: Beta(1/2, 3/2))
    and, dividing through by cos² φ (1/cos² φ = 1 + tan² φ),

        |T| = √(3Y/(1 − Y)) = √(3U cos² φ/(1 − U cos² φ)) = √(3U/(1 − U + C²)),   C = tan φ.

    cos² φ has the same law for φ uniform on any interval of length π; on (−π/2, π/2), C is a standard
    Cauchy variable and sign(C) = sign(φ) is a fair coin independent of C² and U, which gives the sign.

    Evaluation. φ = πW with W = V − 1/2 + 2⁻⁵⁴ (exact in binary64: a grid of 2⁵³ points symmetric about 0
    that excludes 0 and ±1/2, so the sign is exactly fair and every tan is finite and non-zero). With
    m = min(|W|, 1/2 − |W|) ∈ (0, 1/4] (exact) and t = tan(πm) (libm's fast range), |C| = t for |W| < 1/4
    and |C| = cot(π(1/2 − |W|)) = 1/t otherwise; multiplying through by t² in the second case,

        T² = 3U·a/((1 − U)·a + b),   (a, b) = (1, t²) if |W| < 1/4, (t², 1) otherwise,

    computed without a branch as a = max(t², [|W| < 1/4]) and b = t²/a (exact). Nothing cancels: 1 − U
    is exact for numpy's uniforms (multiples of 2⁻⁵³), t² is accurate to an ulp or two and every sum adds
    non-negative terms, so even the far tail (1 − U + C² ≈ 2⁻⁵³, |T| ≈ 1.6·10⁸, probability ≈ 5·10⁻²⁵)
    comes out to a few ulps, where √3·S/√((1 − S)(1 + S)) with S rounded to a double would lose the tail
    digits. Checked against the CDF (KS with ×0.9/×1.1 scale rejection, χ² on equal-probability bins into
    the tails, far-tail counts against mpmath) and against numpy's ``standard_t`` in tests/noise/.
    """
    if size is None:
        return _standard_t3(1, rng)[0]
    shape = tuple(size) if isinstance(size, tuple) else (int(size),)
    n = math.prod(shape)  # computed flat (same stream as drawing in shape), reshaped at the end
    u = rng.random(n)  # U
    w = rng.random(n)
    w -= 0.5
    w += _HALF_ULP_STEP  # W: sign(T) = sign(W)
    t = np.abs(w)
    near = t < 0.25  # |W| < 1/4: |C| = t, else |C| = 1/t
    m = np.subtract(0.5, t)
    np.minimum(t, m, out=t)
    t *= math.pi
    np.tan(t, out=t)
    np.multiply(t, t, out=t)  # t²
    a = np.maximum(t, near, out=m)  # 1 where near, t² elsewhere
    b = np.divide(t, a, out=t)  # t² where near, 1 elsewhere
    den = np.subtract(1.0, u)
    den *= a
    den += b  # (1 − U)·a + b
    u *= 3.0
    u *= a
    u /= den
    np.sqrt(u, out=u)
    return np.copysign(u, w, out=u).reshape(shape)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
