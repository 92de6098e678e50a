r"""The sampling mechanisms analysed under smoothed DP (LWX = Liu, Wang & Xia, *Smoothed DP*, TMLR 2023).

Theory: ``docs/theory/smoothed-dp.md``.

* :class:`SamplingHistogram` (LWX Algorithm 2, $M_H$): sample T records (without replacement by default) and
  output their histogram. Under DP it is no better than $(\varepsilon, T/n)$ for every $\varepsilon$ (LWX
  Theorem 3(iii)); under smoothed DP its $\delta$ is exponentially small in n (LWX Theorem 3(i)). Exact
  $\delta$: :func:`smoothdp.smoothed_dp.privacy_profile`, :func:`smoothdp.smoothed_dp.smoothed_delta`.
* :class:`SamplingAverage` (LWX Algorithm 3, $M_A$): sample T real values in $[0, 1]$ and output their mean.
  With continuous inputs it is *not* private even under smoothed DP: no $\delta < \eta$ works (LWX Theorem 4);
  exactly, $\delta(x) = T/n$ for almost every database.
* :class:`QuantizedSamplingAverage` (defined in :mod:`smoothdp.smoothed_dp.quantized`, with its exact
  profile): the 8-bit "discrete sampling-average" of the SGD experiment (LWX Fig. 2 right).

These mechanisms add no noise: all their randomness is the sampling. They are *analysed* here, and are not
:class:`smoothdp.mechanism.Mechanism` subclasses: their $\delta$ depends on the database and on the set $\Pi$
of data distributions, so there is no $(\varepsilon, \delta)$ fixed in advance to charge to an accountant (see
:class:`~smoothdp.smoothed_dp.base.SmoothedDPMechanism`). Each still declares ``name``, ``neighbours``
(``"substitution"``: one record replaced, n fixed, as in LWX), ``proof`` and ``source``. A release of real
data should go through a mechanism with a stated DP guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from smoothdp.keywords import check_keywords_of
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.smoothed_dp.algorithm1 import general_smoothed_delta
from smoothdp.smoothed_dp.base import (
    SOURCE,
    ProfileValue,
    SmoothedDelta,
    SmoothedDPMechanism,
    check_histogram,
    exact_rate,
    generic_privacy_profile,
    make_profile_value,
    sample_subsets,
)
from smoothdp.smoothed_dp.binary import binary_smoothed_delta, check_mixture, mixture_log_expected_delta
from smoothdp.smoothed_dp.bracket import BRACKET_RTOL, trinomial_smoothed_delta
from smoothdp.smoothed_dp.histogram_profile import binary_log_profile, histogram_log_profile
from smoothdp.smoothed_dp.hull import hull_vertices
from smoothdp.smoothed_dp.pairs import histograms_log_profile
from smoothdp.smoothed_dp.quantized import QuantizedSamplingAverage
from smoothdp.validation import check_data

__all__ = [
    "SOURCE",
    "QuantizedSamplingAverage",
    "SamplingAverage",
    "SamplingHistogram",
    "check_histogram",
    "exact_rate",
    "sample_subsets",
]


@dataclass(frozen=True, init=False)
class SamplingHistogram(SmoothedDPMechanism):
    r"""Sampling-histogram mechanism $M_H$ (LWX Algorithm 2).

    Draw T records of the database uniformly **without replacement** (``replace=False``, the paper's
    mechanism; $T = \lceil \eta n\rceil$ computed exactly, or T = ``size``) and output the histogram of the
    sample. With ``replace=True`` the T draws are i.i.d. uniform records (Appendix variant): the output is
    $\mathrm{Multinomial}(T, h/n)$.

    Guarantee (neighbours: one record substituted, n fixed, as in LWX). Under DP:
    $(\varepsilon, \delta_{\mathrm{DP}})$ for every $\varepsilon$ with $\delta_{\mathrm{DP}} = T/n$ without
    replacement (LWX Theorem 3(iii): no $\delta < \eta$ works; the changed record is sampled with probability
    $T/n$, which bounds the total variation) and $\delta_{\mathrm{DP}} = 1 - (1 - 1/n)^T$ with replacement.
    Under smoothed DP: the exact $\delta$ for a set of distributions $\Pi$ is
    :func:`smoothdp.smoothed_dp.smoothed_delta` (LWX Algorithm 1); it is exponentially small in n for
    f-strictly positive $\Pi$ and $\varepsilon \ge \ln(1/(1-\eta)) + c$ (LWX Theorem 3(i)). Proof of the exact
    formulas: ``docs/theory/smoothed-dp.md#sampling-histogram-mechanism``.

    Why it is not a :class:`smoothdp.mechanism.Mechanism`: its only fixed guarantee, $(\varepsilon, T/n)$, is
    useless, and its useful one depends on the database and on $\Pi$, which is not a budget fixed before the
    data are seen. It is an object of analysis: nothing is charged to an accountant.

    Parameters
    ----------
    eta
        Sampling rate in (0, 1). Floats are read as the decimal they print as (0.998 = 499/500).
    size
        Fixed number of records $T \ge 1$ (instead of ``eta``).
    replace
        Sample with replacement (default False: without replacement, as in the paper).
    """

    name: ClassVar[str] = "sampling_histogram"
    proof: ClassVar[str] = "docs/theory/smoothed-dp.md#sampling-histogram-mechanism"

    eta: Fraction | None
    size: int | str | None
    replace: bool

    def __init__(self, eta: Any = None, size: Any = None, replace: bool = False) -> None:
        rate, fixed = self._init_size(eta, size)
        if not isinstance(replace, bool | np.bool_):
            raise TypeError(f"replace must be a bool; got {replace!r}")
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)
        object.__setattr__(self, "replace", bool(replace))

    def removed(self, n: int) -> int:
        r"""$L = n - T$: the number of records left out (without replacement)."""
        return int(n) - self.sample_size(n)

    def dp_delta(self, n: int) -> float:
        r"""The smallest $\delta$ for which $M_H$ is $(\varepsilon, \delta)$-DP, any $\varepsilon > 0$: $T/n$,
        or $1 - (1-1/n)^T$ with replacement."""
        t = self.sample_size(n)
        if self.replace:
            return float(-np.expm1(t * np.log1p(-1.0 / n))) if n > 1 else 1.0
        return t / n

    def sample(
        self, histogram: ArrayLike, size: int | None = None, rng: SeedLike = None
    ) -> NDArray[np.int64]:
        r"""Draw outputs (sampled histograms) of $M_H$ on ``histogram``; shape (m,) or (size, m)."""
        h = check_histogram(histogram)
        t = self.sample_size(int(h.sum()))
        gen = resolve_rng(rng)
        if self.replace:
            return gen.multinomial(t, h / h.sum(), size=size)
        return gen.multivariate_hypergeometric(h, t, size=size)

    def output_log_pmf(self, histogram: ArrayLike) -> dict[tuple[int, ...], float]:
        r"""The whole output law {sampled histogram: ln probability}, by enumeration (small cases only).

        Without replacement: $P(s) = \prod_i C(h_i, s_i) / C(n, T)$ (multivariate hypergeometric); with
        replacement: $\mathrm{Multinomial}(T, h/n)$. Used by the generic path of :func:`privacy_profile` and
        as a cross-check.
        """
        h = check_histogram(histogram)
        n = int(h.sum())
        t = self.sample_size(n)
        limit = t if self.replace else None
        ranges = [range((limit if limit is not None else int(c)) + 1) for c in h]
        if math.prod(len(r) for r in ranges) > 2_000_000:
            raise ValueError(
                "output_log_pmf enumerates every output: too many for this histogram (small cases only)"
            )
        law: dict[tuple[int, ...], float] = {}
        for s in product(*ranges):
            if sum(s) != t:
                continue
            s_arr = np.asarray(s, dtype=np.float64)
            if self.replace:
                if any(si > 0 and hi == 0 for si, hi in zip(s, h, strict=True)):
                    continue  # a category absent from the database is never drawn
                used = s_arr > 0
                logp = float(
                    gammaln(t + 1) - gammaln(s_arr + 1).sum() + np.sum(s_arr[used] * np.log(h[used] / n))
                )
            else:
                logp = float(
                    np.sum(gammaln(h + 1) - gammaln(s_arr + 1) - gammaln(h - s_arr + 1))
                    - (gammaln(n + 1) - gammaln(t + 1) - gammaln(n - t + 1))
                )
            law[tuple(int(v) for v in s)] = logp
        return law

    def __str__(self) -> str:
        how = "with" if self.replace else "without"
        t = f"T = ⌈{self.eta}·n⌉" if self.eta is not None else f"T = {self.size}"
        return f"SamplingHistogram({t}, {how} replacement)"

    # -- analysis hooks (see SmoothedDPMechanism) ----------------------------------------------------------
    def _kernel_param(self, n: int) -> int:
        """The integer the closed forms take: T with replacement, L = n − T without."""
        t = self.sample_size(n)
        return t if self.replace else n - t

    def _privacy_profile(self, histogram: ArrayLike, epsilon: float, method: str) -> ProfileValue:
        h = check_histogram(histogram)
        if method == "generic":
            return generic_privacy_profile(self, h, epsilon)
        param = self._kernel_param(int(h.sum()))
        log_delta, neighbour = histogram_log_profile(h, param, epsilon, replace=self.replace)
        label = "binary closed form" if h.size == 2 else "general-m conditioning sum"
        label += " (with replacement)" if self.replace else ""
        return make_profile_value(log_delta, epsilon, h, neighbour, label)

    def _binary_log_profile(self, n: int, epsilon: float, counts: ArrayLike | None) -> NDArray[np.float64]:
        return binary_log_profile(n, self._kernel_param(n), epsilon, counts, replace=self.replace)

    def _smoothed_delta(
        self, epsilon: float, n: int, distributions: ArrayLike, mixtures: str | int
    ) -> SmoothedDelta:
        vertices = hull_vertices(distributions)
        param = self._kernel_param(n)  # also checks T ≤ n
        exact = True
        log_lower: float | None = None
        m, ell = vertices.shape[1], vertices.shape[0]
        enumerated = math.comb(n + m - 1, m - 1) ** 2 * math.comb(n + ell - 1, ell - 1)
        if m == 3 and not self.replace and enumerated > 5e8:
            log_value, log_lower, mixture, evaluated = trinomial_smoothed_delta(
                n, param, epsilon, vertices, mixtures, rtol=BRACKET_RTOL
            )
            exact = ell == 1
            method = (
                f"certified upper bound on E[δ] (monotone bracket, within {BRACKET_RTOL:g} of the exact "
                "value; docs/theory/smoothed-dp.md#monotone-bracket); mixtures searched: the vertices and "
                "their centres"
            )
        elif vertices.shape[1] == 2:
            log_value, mixture, evaluated, exact = binary_smoothed_delta(
                n, param, self.replace, epsilon, vertices, mixtures
            )
            method = "binary fast path (tilted direct convolution)"
        else:

            def log_profiles(hists: NDArray[np.int64]) -> NDArray[np.float64]:
                return histograms_log_profile(hists, param, epsilon, replace=self.replace)

            log_value, mixture, evaluated = general_smoothed_delta(
                None, n, vertices, log_profiles=log_profiles
            )
            method = "enumeration of histograms and mixtures, pair-reduced profile table"
        return SmoothedDelta.from_log(
            log_value,
            mixture=mixture,
            vertices=vertices,
            epsilon=epsilon,
            n=n,
            dp_delta=self.dp_delta(n),
            mechanism=str(self),
            method=method,
            exact_max=exact,
            evaluated=evaluated,
            upper_bound=log_lower is not None,
            log_lower=log_lower,
        )

    def _mixture_log_expected_delta(
        self, epsilon: float, counts: ArrayLike, distributions: ArrayLike
    ) -> float:
        n, groups = check_mixture(counts, distributions)
        return mixture_log_expected_delta(n, self._kernel_param(n), self.replace, epsilon, groups)


@dataclass(frozen=True, init=False)
class SamplingAverage(SmoothedDPMechanism):
    r"""Continuous sampling-average mechanism $M_A$ (LWX Algorithm 3).

    Data in $[0, 1]$; draw $T = \lceil \eta n\rceil$ (or ``size``) values without replacement and output their
    mean.

    Guarantee: none better than the trivial one (neighbours: one record substituted, n fixed). LWX Theorem 4:
    for any strictly positive $\Pi$ over $[0, 1]$ and any $\varepsilon \ge 0$ there is no $\delta < \eta$ with
    $M_A$ $(\varepsilon, \delta, \Pi)$-smoothed DP. Exactly (our statement, proved the same way): when no two
    subset sums of the database coincide (probability one for continuous $\Pi$), replacing record i by a new
    value changes the output exactly when i is sampled, and the two output laws on that event have disjoint
    supports, so $\delta_{\varepsilon,M_A}(x) = T/n$ for every $\varepsilon$ — the DP value.
    :meth:`smoothed_delta` returns it. Proof: ``docs/theory/smoothed-dp.md#sampling-average``.

    Why it is not a :class:`smoothdp.mechanism.Mechanism`: it is a counterexample kept for analysis (its only
    guarantee, $\delta = T/n$, is the trivial one); nothing is charged to an accountant.
    """

    name: ClassVar[str] = "sampling_average"
    proof: ClassVar[str] = "docs/theory/smoothed-dp.md#sampling-average"

    eta: Fraction | None
    size: int | str | None

    def __init__(self, eta: Any = None, size: Any = None) -> None:
        rate, fixed = self._init_size(eta, size)
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)

    def smoothed_delta(self, n: int) -> float:
        r"""$T/n$: the exact $\delta$ under smoothed DP for any continuous $\Pi$ and any $\varepsilon$ (LWX
        Theorem 4; the DP value)."""
        return self.dp_delta(n)

    def sample(self, data: ArrayLike, size: int | None = None, rng: SeedLike = None) -> NDArray[np.float64]:
        r"""Draw outputs (means of T values sampled without replacement) of $M_A$ on ``data``
        $\subset [0, 1]$."""
        x = check_data(data, "data", ndim=1)
        if np.any((x < 0) | (x > 1)):
            raise ValueError("data must lie in [0, 1] (Algorithm 3's domain)")
        t = self.sample_size(x.size)
        idx = sample_subsets(x.size, t, 1 if size is None else size, resolve_rng(rng))
        means = x[idx].mean(axis=1)
        return means[0] if size is None else means

    # -- analysis hooks (see SmoothedDPMechanism) ----------------------------------------------------------
    def _privacy_profile(self, histogram: ArrayLike, epsilon: float, method: str) -> ProfileValue:
        raise TypeError(
            "SamplingAverage has continuous outputs: its profile is T/n for almost every database "
            "(Theorem 4); use SamplingAverage.smoothed_delta(n)"
        )

    def _smoothed_delta(
        self, epsilon: float, n: int, distributions: ArrayLike, mixtures: str | int
    ) -> SmoothedDelta:
        raise TypeError("SamplingAverage is continuous: δ_SDP = T/n for any continuous Π (Theorem 4)")


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
