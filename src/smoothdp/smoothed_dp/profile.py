r"""The database-dependent privacy profile $\delta_{\varepsilon,M}(x)$ (LWX Definition 2) of anonymous
mechanisms.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#privacy-profile``.

$$
d_{\varepsilon,M}(x, x') = \max_S \Pr[M(x) \in S] - e^\varepsilon \Pr[M(x') \in S]
= \sum_o (P_x(o) - e^\varepsilon P_{x'}(o))_+ \quad \text{(discrete outputs)},
$$

$$
\delta_{\varepsilon,M}(x) = \max(0, \max_{x' \simeq x} d(x, x'), \max_{x' \simeq x} d(x', x))
\quad (x' \text{ replaces one record}).
$$

LWX Theorem 1: M is $(\varepsilon, \delta)$-DP iff $\max_x \delta_{\varepsilon,M}(x) \le \delta$. For an
anonymous mechanism (output law a function of the histogram h) the neighbours of h are $h - e_a + e_b$ (a
record of category a becomes b).

:func:`privacy_profile` is a thin dispatcher. A smoothed-DP mechanism of this package computes its profile in
its ``_privacy_profile`` method:

* ``SamplingHistogram``: exact fast paths in log space (:mod:`smoothdp.smoothed_dp.histogram_profile`): the
  binary closed form, the general-m one-dimensional conditioning sum, and sampling with replacement through
  binomials; ``method="generic"`` enumerates the outputs instead (a cross-check).
* ``QuantizedSamplingAverage``: the exact sampled-sum recursion (:mod:`smoothdp.smoothed_dp.quantized`).
* ``SamplingAverage``: refused (continuous outputs; its $\delta$ is $T/n$, LWX Theorem 4).

Any other object with ``output_log_pmf(histogram) -> {output: ln P}`` (small cases) takes the generic path,
which enumerates the outputs of h and of every neighbour.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.smoothed_dp.base import (
    AnonymousMechanism,
    ProfileValue,
    SmoothedDPMechanism,
    check_histogram,
    generic_privacy_profile,
    log_divergence,
)
from smoothdp.validation import check_epsilon, check_int

__all__ = [
    "AnonymousMechanism",
    "ProfileValue",
    "binary_privacy_profile",
    "log_divergence",
    "privacy_profile",
]


def privacy_profile(
    mechanism: SmoothedDPMechanism | AnonymousMechanism,
    histogram: ArrayLike,
    epsilon: float,
    *,
    method: str = "auto",
) -> ProfileValue:
    r"""$\delta_{\varepsilon,M}(h)$: the database-dependent privacy profile of an anonymous mechanism (LWX
    Definition 2).

    Parameters
    ----------
    mechanism
        A :class:`SamplingHistogram`, a :class:`QuantizedSamplingAverage` (histogram over its codes
        low..high), or any object with ``output_log_pmf(histogram) -> {output: ln probability}``.
    histogram
        Counts per category ($m \ge 2$ non-negative integers, total $n \ge 1$).
    epsilon
        $\varepsilon > 0$.
    method
        ``"auto"`` (the exact fast path when there is one) or ``"generic"`` (enumerate the outputs).

    Returns
    -------
    ProfileValue
        $\delta$, $\ln \delta$, $\log_{10} \delta$ and the worst neighbour. All computations are in log space
        ($\delta$ may be $10^{-500}$).
    """
    eps = check_epsilon(epsilon)
    if method not in ("auto", "generic"):
        raise ValueError(f"method must be 'auto' or 'generic'; got {method!r}")
    if isinstance(mechanism, SmoothedDPMechanism):
        return mechanism._privacy_profile(histogram, eps, method)
    h = check_histogram(histogram)
    if not isinstance(mechanism, AnonymousMechanism):
        raise TypeError(
            "mechanism must be a SamplingHistogram, a QuantizedSamplingAverage, or have "
            f"output_log_pmf(histogram); got {type(mechanism).__name__}"
        )
    return generic_privacy_profile(mechanism, h, eps)


def binary_privacy_profile(
    mechanism: SmoothedDPMechanism, n: int, epsilon: float, counts: ArrayLike | None = None
) -> NDArray[np.float64]:
    r"""$\ln \delta(k)$ (natural log) of $M_H$ on binary databases with k records of category 1, for all
    $k = 0, \ldots, n$.

    The vectorized form of :func:`privacy_profile` for $m = 2$ (LWX Figure 1 and the inner step of Algorithm
    1): $\delta(k) = \max\{A(k), A(n-k+1) [k \ge 1]; A(n-k), A(k+1) [k \le n-1]\}$ with A the closed-form
    kernel of :mod:`smoothdp.smoothed_dp.histogram_profile`. Divide by ln 10 for log10.

    Parameters
    ----------
    mechanism
        A :class:`SamplingHistogram` (the only mechanism with this closed form).
    counts
        Only these k (default: every k in 0..n).
    """
    if not isinstance(mechanism, SmoothedDPMechanism):
        raise TypeError(f"mechanism must be a SamplingHistogram; got {type(mechanism).__name__}")
    n = check_int("n", n, minimum=1)
    eps = check_epsilon(epsilon)
    return mechanism._binary_log_profile(n, eps, counts)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
