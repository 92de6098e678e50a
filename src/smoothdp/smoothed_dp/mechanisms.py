"""The sampling mechanisms analysed under smoothed DP (Liu, Wang & Xia, *Smoothed DP*, TMLR 2023).

* :class:`SamplingHistogram` (Algorithm 2, M_H): sample T records (without replacement by default) and output
  their histogram. Under DP it is no better than (ε, T/n) for every ε (Theorem 3(iii)); under smoothed DP its
  δ is exponentially small in n (Theorem 3(i)). Exact δ: :func:`smoothdp.smoothed_dp.privacy_profile`,
  :func:`smoothdp.smoothed_dp.smoothed_delta`.
* :class:`SamplingAverage` (Algorithm 3, M_A): sample T real values in [0, 1] and output their mean. With
  continuous inputs it is *not* private even under smoothed DP: no δ < η works (Theorem 4); exactly, δ(x) =
  T/n for almost every database.
* :class:`QuantizedSamplingAverage`: the 8-bit "discrete sampling-average" of the SGD experiment
  (Fig. 2 right): sample T integer codes without replacement and output the rounded mean code. Its exact
  privacy profile is in :mod:`smoothdp.smoothed_dp.quantized`.

These mechanisms add no noise: all their randomness is the sampling. They are *analysed* here; a release of
real data should still go through a mechanism with a stated DP guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from itertools import product
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_data, check_int

__all__ = [
    "QuantizedSamplingAverage",
    "SamplingAverage",
    "SamplingHistogram",
    "check_histogram",
    "exact_rate",
]

SOURCE = "Liu, Wang & Xia, Smoothed Differential Privacy (TMLR 2023; arXiv:2107.01559)"


def exact_rate(eta: Any, name: str = "eta") -> Fraction:
    """η as an exact fraction in (0, 1). A float is read as the decimal it prints as (0.998 → 499/500).

    Why: ⌈ηn⌉ in floating point can be off by one when ηn is an integer (0.07·100 = 7.000000000000001).
    """
    if isinstance(eta, bool) or not isinstance(
        eta, int | float | Fraction | Decimal | np.integer | np.floating
    ):
        raise TypeError(f"{name} must be a real number in (0, 1); got {eta!r} of type {type(eta).__name__}")
    if isinstance(eta, float | np.floating):
        if not math.isfinite(float(eta)):
            raise ValueError(f"{name} must be in (0, 1); got {eta!r}")
        value = Fraction(repr(float(eta)))
    else:
        value = Fraction(eta)
    if not 0 < value < 1:
        raise ValueError(f"{name} must be in (0, 1); got {eta!r}")
    return value


def check_histogram(
    histogram: ArrayLike, name: str = "histogram", *, categories: int | None = None
) -> NDArray:
    """A histogram: a 1-D array of m ≥ 2 non-negative integer counts with a positive total."""
    arr = check_data(histogram, name, ndim=1, min_size=2)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold non-negative integer counts; got {np.asarray(histogram)!r}")
    if categories is not None and arr.size != categories:
        raise ValueError(f"{name} must have {categories} categories; got {arr.size}")
    counts = arr.astype(np.int64)
    if counts.sum() < 1:
        raise ValueError(f"{name} must hold at least one record (n ≥ 1); got total {counts.sum()}")
    return counts


class _SampleSize:
    """T from an exact rate (T = ⌈ηn⌉) or a fixed size."""

    def _init_size(self, eta: Any, size: Any) -> tuple[Fraction | None, int | None]:
        if (eta is None) == (size is None):
            raise ValueError(
                f"give exactly one of eta (the sampling rate) and size; got eta={eta!r}, size={size!r}"
            )
        if eta is not None:
            return exact_rate(eta), None
        if isinstance(size, str):
            if size != "sqrt":
                raise ValueError(f"size must be a positive integer or 'sqrt'; got {size!r}")
            return None, None
        return None, check_int("size", size, minimum=1)

    def sample_size(self, n: int) -> int:
        """T for a database of n records: ⌈ηn⌉ (exact), the fixed size, or round(√n) (``size='sqrt'``)."""
        n = check_int("n", n, minimum=1)
        if self.eta is not None:
            t = math.ceil(self.eta * n)
        elif self.size == "sqrt":
            t = max(1, math.floor(math.sqrt(n) + 0.5))
        else:
            t = int(self.size)
        if t > n:
            raise ValueError(f"size T = {t} exceeds the number of records n = {n}")
        return t


@dataclass(frozen=True, init=False)
class SamplingHistogram(_SampleSize):
    """Sampling-histogram mechanism M_H (seed 003, Algorithm 2).

    Draw T records of the database uniformly **without replacement** (``replace=False``, the paper's
    mechanism; T = ⌈ηn⌉ computed exactly, or T = ``size``) and output the histogram of the sample. With
    ``replace=True`` the T draws are i.i.d. uniform records (Appendix variant): the output is Multinomial(T,
    h/n).

    Guarantee. Under DP: (ε, δ_DP) for every ε with δ_DP = T/n without replacement (Theorem 3(iii): no δ < η
    works; the changed record is sampled with probability T/n, which bounds the total variation) and δ_DP = 1
    − (1 − 1/n)^T with replacement. Under smoothed DP: the exact δ for a set of distributions Π is
    :func:`smoothdp.smoothed_dp.smoothed_delta` (Algorithm 1); it is exponentially small in n for f-strictly
    positive Π and ε ≥ ln(1/(1−η)) + c (Theorem 3(i)).

    Parameters
    ----------
    eta
        Sampling rate in (0, 1). Floats are read as the decimal they print as (0.998 = 499/500). size Fixed
        number of records T ≥ 1 (instead of ``eta``).
    replace
        Sample with replacement (default False: without replacement, as in the paper).
    """

    eta: Fraction | None
    size: int | str | None
    replace: bool

    def __init__(self, eta: Any = None, size: Any = None, replace: bool = False) -> None:
        rate, fixed = self._init_size(eta, size)
        if size == "sqrt":
            fixed = "sqrt"
        if not isinstance(replace, bool | np.bool_):
            raise TypeError(f"replace must be a bool; got {replace!r}")
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)
        object.__setattr__(self, "replace", bool(replace))

    def removed(self, n: int) -> int:
        """L = n − T: the number of records left out (without replacement)."""
        return int(n) - self.sample_size(n)

    def dp_delta(self, n: int) -> float:
        """The smallest δ for which M_H is (ε, δ)-DP, any ε > 0: T/n, or 1 − (1−1/n)^T with replacement."""
        t = self.sample_size(n)
        if self.replace:
            return float(-np.expm1(t * np.log1p(-1.0 / n))) if n > 1 else 1.0
        return t / n

    def sample(
        self, histogram: ArrayLike, size: int | None = None, rng: SeedLike = None
    ) -> NDArray[np.int64]:
        """Draw outputs (sampled histograms) of M_H on ``histogram``; shape (m,) or (size, m)."""
        h = check_histogram(histogram)
        t = self.sample_size(int(h.sum()))
        gen = resolve_rng(rng)
        if self.replace:
            return gen.multinomial(t, h / h.sum(), size=size)
        return gen.multivariate_hypergeometric(h, t, size=size)

    def output_log_pmf(self, histogram: ArrayLike) -> dict[tuple[int, ...], float]:
        """The whole output law {sampled histogram: ln probability}, by enumeration (small cases only).

        Without replacement: P(s) = Π_i C(h_i, s_i) / C(n, T) (multivariate hypergeometric); with replacement:
        Multinomial(T, h/n). Used by the generic path of :func:`privacy_profile` and as a cross-check.
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


@dataclass(frozen=True, init=False)
class SamplingAverage(_SampleSize):
    """Continuous sampling-average mechanism M_A (seed 003, Algorithm 3).

    Data in [0, 1]; draw T = ⌈ηn⌉ (or ``size``) values without replacement and output their mean.

    Guarantee: none better than the trivial one. Theorem 4: for any strictly positive Π over [0, 1] and any
    ε ≥ 0 there is no δ < η with M_A (ε, δ, Π)-smoothed DP. Exactly (our statement, proved the same way): when
    no two subset sums of the database coincide (probability one for continuous Π), replacing record i by a
    new value changes the output exactly when i is sampled, and the two output laws on that event have
    disjoint supports, so δ_{ε,M_A}(x) = T/n for every ε — the DP value. :meth:`smoothed_delta` returns it.
    """

    eta: Fraction | None
    size: int | str | None

    def __init__(self, eta: Any = None, size: Any = None) -> None:
        rate, fixed = self._init_size(eta, size)
        if size == "sqrt":
            fixed = "sqrt"
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)

    def smoothed_delta(self, n: int) -> float:
        """T/n: the exact δ under smoothed DP for any continuous Π and any ε (Theorem 4; = the DP value)."""
        return self.sample_size(n) / n

    dp_delta = smoothed_delta

    def sample(self, data: ArrayLike, size: int | None = None, rng: SeedLike = None) -> NDArray[np.float64]:
        """Draw outputs (means of T values sampled without replacement) of M_A on ``data`` ⊂ [0, 1]."""
        x = check_data(data, "data", ndim=1)
        if np.any((x < 0) | (x > 1)):
            raise ValueError("data must lie in [0, 1] (Algorithm 3's domain)")
        t = self.sample_size(x.size)
        idx = sample_subsets(x.size, t, 1 if size is None else size, resolve_rng(rng))
        means = x[idx].mean(axis=1)
        return means[0] if size is None else means


@dataclass(frozen=True, init=False)
class QuantizedSamplingAverage(_SampleSize):
    """8-bit quantized sampling-average (the one-step SGD of seed 003, Fig. 2 right).

    The data are integer codes in [low, high] (default −127..128: 8-bit values q/256 of gradients in (−½, ½]).
    Draw T records without replacement (T = ``size``, ⌈ηn⌉, or round(√n) with ``size='sqrt'``, the paper's
    batch) and output round(mean code), rounding half away from zero (MATLAB's ``round``). By post-processing
    (Prop. 4) and pre-processing (Prop. 6), its smoothed DP bounds that of one quantized SGD step.

    Guarantee: analysed, not asserted. Exact δ(x):
    :func:`smoothdp.smoothed_dp.quantized.quantized_average_profile`;
    sampled estimate of δ_SDP: :func:`smoothdp.smoothed_dp.montecarlo.sampled_smoothed_delta`.
    """

    eta: Fraction | None
    size: int | str | None
    low: int
    high: int

    def __init__(self, size: Any = "sqrt", eta: Any = None, low: int = -127, high: int = 128) -> None:
        if eta is not None and size == "sqrt":
            size = None
        rate, fixed = self._init_size(eta, size)
        if size == "sqrt":
            fixed = "sqrt"
        low = check_int("low", low)
        high = check_int("high", high)
        if not low < high:
            raise ValueError(f"low must be < high; got low={low}, high={high}")
        object.__setattr__(self, "eta", rate)
        object.__setattr__(self, "size", fixed)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def levels(self) -> NDArray[np.int64]:
        """The codes low..high (the categories of the histogram view)."""
        return np.arange(self.low, self.high + 1)

    def output_of_sum(self, sums: ArrayLike, t: int) -> NDArray[np.int64]:
        """round(S/T) half away from zero, exactly in integers."""
        s = np.asarray(sums, dtype=np.int64)
        mag = (2 * np.abs(s) + t) // (2 * t)
        return np.sign(s) * mag

    def check_codes(self, codes: ArrayLike, name: str = "codes") -> NDArray[np.int64]:
        """A 1-D array of integer codes within [low, high]."""
        x = check_data(codes, name, ndim=1)
        if np.any(x != np.round(x)) or np.any((x < self.low) | (x > self.high)):
            raise ValueError(f"{name} must be integers in [{self.low}, {self.high}]")
        return x.astype(np.int64)

    def dp_delta(self, n: int) -> float:
        """T/n: changing one record changes the output law only when it is sampled."""
        return self.sample_size(n) / n

    def sample(self, codes: ArrayLike, size: int | None = None, rng: SeedLike = None) -> NDArray[np.int64]:
        """Draw outputs (rounded mean codes) of the mechanism on the database ``codes``."""
        x = self.check_codes(codes)
        t = self.sample_size(x.size)
        idx = sample_subsets(x.size, t, 1 if size is None else size, resolve_rng(rng))
        out = self.output_of_sum(x[idx].sum(axis=1), t)
        return out[0] if size is None else out


def sample_subsets(n: int, t: int, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``size`` independent uniform t-subsets of range(n), shape (size, t) (vectorized).

    Small t(t-1)/2n: draw t indices with replacement and redraw the rows that repeat an index (rejection; each
    row is then uniform over ordered t-tuples without repetition). Otherwise rank random keys (argpartition).
    """
    if t * (t - 1) <= 2 * n:  # acceptance probability ≳ e^-1
        out = rng.integers(0, n, size=(size, t))
        while True:
            srt = np.sort(out, axis=1)
            bad = np.flatnonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))
            if bad.size == 0:
                return out
            out[bad] = rng.integers(0, n, size=(bad.size, t))
    chunk = max(1, 2_000_000 // n)
    parts = []
    for start in range(0, size, chunk):
        rows = min(chunk, size - start)
        keys = rng.random((rows, n))
        parts.append(np.argpartition(keys, t - 1, axis=1)[:, :t] if t < n else np.argsort(keys, axis=1))
    return np.concatenate(parts, axis=0)
