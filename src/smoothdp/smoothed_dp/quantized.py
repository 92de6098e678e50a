"""The 8-bit sampling-average of the SGD experiment (LWX Fig. 2 right): mechanism, data model, exact profile.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; theory:
``docs/theory/smoothed-dp.md#quantized-average``.

**Mechanism**: :class:`QuantizedSamplingAverage` (sample T integer codes without replacement, output the
rounded mean code).

**Data model** (N_8bit, reconstructed from the authors' published experiment code): draw X ∼ N(μ, σ²), keep it
only when X ∈ (−½, ½], and quantise q = ⌈256·X⌉ ∈ {−127, …, 128}:

    P(q) = [Φ((q/256 − μ)/σ) − Φ(((q−1)/256 − μ)/σ)] / [Φ((½ − μ)/σ) − Φ((−½ − μ)/σ)].

The Laplace variant uses the standard-deviation parametrisation b = σ/√2 (as the authors' code does).

**Exact profile** of :class:`QuantizedSamplingAverage` (ours). Changing record i
(value a) into b changes the output only when i is sampled (probability η = T/n). Let Q and R be the laws of
the sum of a uniform T-subset and a uniform (T−1)-subset of the other n−1 records. Then

    P_x  = (1 − η)·Out(Q) + η·Out(R + a),    P_x' = (1 − η)·Out(Q) + η·Out(R + b),

with Out the rounding S ↦ round(S/T), and d(x, x') = Σ_o (P_x(o) − e^ε P_x'(o))_+ in both directions. Q and R
depend only on the value a removed, and come from one pass of the exact recursion over the records

    law_i[t] = ((i − t)/i)·law_{i−1}[t] + (t/i)·(law_{i−1}[t−1] shifted by v_i)

(law_i[t] = law of the sum of a uniform t-subset of the first i records). One pass per distinct value a; all
256 replacements b at once. Probabilities stay ≥ 1/C(n, T) (~1e-25 at the paper's sizes), so the linear domain
is exact enough: the absolute error of δ is ~1e-16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.smoothed_dp.base import (
    ProfileValue,
    SmoothedDelta,
    SmoothedDPMechanism,
    check_histogram,
    make_profile_value,
    sample_subsets,
)
from smoothdp.validation import check_data, check_epsilon, check_int, check_positive

__all__ = [
    "QuantizedSamplingAverage",
    "quantized_average_deltas",
    "quantized_average_profile",
    "quantized_laplace_pmf",
    "quantized_normal_pmf",
    "subset_sum_laws",
]


@dataclass(frozen=True, init=False)
class QuantizedSamplingAverage(SmoothedDPMechanism):
    """8-bit quantized sampling-average (the one-step SGD of LWX Fig. 2 right).

    The data are integer codes in [low, high] (default −127..128: 8-bit values q/256 of gradients in (−½, ½]).
    Draw T records without replacement (T = ``size``, ⌈ηn⌉, or round(√n) with ``size='sqrt'``, the paper's
    batch) and output round(mean code), rounding half away from zero (MATLAB's ``round``). By post-processing
    (LWX Prop. 4) and pre-processing (LWX Prop. 6), its smoothed DP bounds that of one quantized SGD step.

    Guarantee: analysed, not asserted; neighbours: one record substituted (n fixed); proof:
    ``docs/theory/smoothed-dp.md#quantized-average``. Exact δ(x): :func:`quantized_average_profile`
    (also through :func:`smoothdp.smoothed_dp.privacy_profile`); sampled estimate of δ_SDP:
    :func:`smoothdp.smoothed_dp.montecarlo.sampled_smoothed_delta`.

    Why it is not a :class:`smoothdp.mechanism.Mechanism`: it adds no noise, and its δ depends on the
    database (δ(x)) and on the data distributions (δ_SDP); there is no (ε, δ) fixed before the data are seen
    to charge to an accountant. It is an object of analysis, like the other sampling mechanisms here.
    """

    name: ClassVar[str] = "quantized_sampling_average"
    proof: ClassVar[str] = "docs/theory/smoothed-dp.md#quantized-average"

    eta: Fraction | None
    size: int | str | None
    low: int
    high: int

    def __init__(self, size: Any = "sqrt", eta: Any = None, low: int = -127, high: int = 128) -> None:
        if eta is not None and size == "sqrt":
            size = None
        rate, fixed = self._init_size(eta, size)
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

    def sample(self, codes: ArrayLike, size: int | None = None, rng: SeedLike = None) -> NDArray[np.int64]:
        """Draw outputs (rounded mean codes) of the mechanism on the database ``codes``."""
        x = self.check_codes(codes)
        t = self.sample_size(x.size)
        idx = sample_subsets(x.size, t, 1 if size is None else size, resolve_rng(rng))
        out = self.output_of_sum(x[idx].sum(axis=1), t)
        return out[0] if size is None else out

    # -- analysis hooks (see SmoothedDPMechanism) ----------------------------------------------------------
    def _privacy_profile(self, histogram: ArrayLike, epsilon: float, method: str) -> ProfileValue:
        h = check_histogram(histogram, categories=self.high - self.low + 1)
        return quantized_average_profile(self, np.repeat(self.levels, h), epsilon)

    def _smoothed_delta(
        self, epsilon: float, n: int, distributions: ArrayLike, mixtures: str | int
    ) -> SmoothedDelta:
        raise TypeError(
            "QuantizedSamplingAverage has 256 categories: estimate δ_SDP with "
            "smoothdp.smoothed_dp.montecarlo.sampled_smoothed_delta"
        )


def _check_grid(mu: float, sigma: float, low: int, high: int, scale: int) -> NDArray[np.float64]:
    if not math.isfinite(float(mu)):
        raise ValueError(f"mu must be finite; got {mu!r}")
    check_positive("sigma", sigma)
    if not low < high:
        raise ValueError(f"low must be < high; got low={low}, high={high}")
    check_positive("scale", scale)
    return np.arange(low, high + 1, dtype=np.float64)


def quantized_normal_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """N_8bit(μ, σ²): pmf over the codes low..high of ⌈scale·X⌉, X ∼ N(μ, σ²) truncated to
    ((low−1)/scale, high/scale].

    Returns an array of length high − low + 1 summing to 1 (a row of Π for the histogram view).
    """
    q = _check_grid(mu, sigma, low, high, scale)
    upper = (q / scale - mu) / sigma
    lower = ((q - 1) / scale - mu) / sigma
    # Φ(b) − Φ(a) without cancellation in the upper tail: use Φ(−a) − Φ(−b) there
    mass = np.where(lower > 0, ndtr(-lower) - ndtr(-upper), ndtr(upper) - ndtr(lower))
    return mass / mass.sum()


def quantized_laplace_pmf(
    mu: float, sigma: float, *, low: int = -127, high: int = 128, scale: int = 256
) -> NDArray[np.float64]:
    """The Laplace analogue of :func:`quantized_normal_pmf`, with scale b = σ/√2 (standard deviation σ)."""
    q = _check_grid(mu, sigma, low, high, scale)
    b = sigma / math.sqrt(2.0)

    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        z = (x - mu) / b
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def sf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return cdf(2 * mu - x)

    upper, lower = q / scale, (q - 1) / scale
    mass = np.where(lower > mu, sf(lower) - sf(upper), cdf(upper) - cdf(lower))
    return mass / mass.sum()


def subset_sum_laws(values: ArrayLike, sizes: int) -> NDArray[np.float64]:
    """law[t, s] = P(sum of a uniform t-subset of ``values`` = s), t = 0..sizes (non-negative integer values).

    Exact recursion over the records (module docstring); cost O(len(values)·sizes·sizes·max(values)).
    """
    v = np.asarray(values, dtype=np.int64)
    if v.ndim != 1 or np.any(v < 0):
        raise ValueError("values must be a 1-D array of non-negative integers")
    t_max = int(sizes)
    if t_max > v.size:
        raise ValueError(f"sizes must be ≤ the number of values ({v.size}); got {t_max}")
    width = t_max * int(v.max(initial=0)) + 1
    law = np.zeros((t_max + 1, width))
    law[0, 0] = 1.0
    t = np.arange(t_max + 1, dtype=np.float64)
    for i, value in enumerate(v, start=1):
        keep = np.clip((i - t) / i, 0.0, 1.0)[:, None]
        take = (np.minimum(t, i) / i)[1:, None]
        new = law * keep
        if value == 0:
            new[1:] += take * law[:-1]
        else:
            new[1:, value:] += take * law[:-1, :-value]
        law = new
    return law


def _output_matrix(
    sum_law: NDArray[np.float64],
    shifts: NDArray[np.int64],
    t: int,
    base: int,
    mechanism: QuantizedSamplingAverage,
) -> NDArray[np.float64]:
    """Rows: the law of round((S + shift + base)/T) over the codes low..high, for each shift (S ∼ sum_law)."""
    s = np.arange(sum_law.size)
    outputs = mechanism.output_of_sum(s[None, :] + shifts[:, None] + base, t) - mechanism.low
    levels = mechanism.high - mechanism.low + 1
    weights = np.broadcast_to(sum_law, outputs.shape)
    # entries past the largest attainable sum carry zero weight and may round outside low..high: drop them
    used = weights > 0
    flat = (np.arange(shifts.size)[:, None] * levels + outputs)[used]
    weights = weights[used]
    counts = np.bincount(flat, weights=weights, minlength=shifts.size * levels)  # weighted: float64
    return np.asarray(counts, dtype=np.float64).reshape(shifts.size, levels)


def quantized_average_deltas(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilons: ArrayLike, *, neighbours: str = "all"
) -> tuple[NDArray[np.float64], list[tuple[int, int, str]]]:
    """δ_{ε,M}(x) for several ε at once (one recursion per removed value serves every ε).

    Returns (δ per ε, worst neighbour (a, b, direction) per ε). See :func:`quantized_average_profile`.
    """
    if not isinstance(mechanism, QuantizedSamplingAverage):
        raise TypeError(f"mechanism must be a QuantizedSamplingAverage; got {type(mechanism).__name__}")
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=object))])
    if neighbours not in ("all", "heuristic"):
        raise ValueError(f"neighbours must be 'all' or 'heuristic'; got {neighbours!r}")
    x = mechanism.check_codes(codes)
    n = x.size
    if n < 2:
        raise ValueError(f"codes must hold at least 2 records; got {n}")
    t = mechanism.sample_size(n)
    eta = t / n
    c = np.exp(eps)[:, None]
    levels = mechanism.levels
    if neighbours == "all":
        plan = [(int(a), levels[levels != a]) for a in np.unique(x)]
    else:
        plan = [(int(x.min()), np.array([mechanism.high])), (int(x.max()), np.array([mechanism.low]))]
    best = np.full(eps.size, -1.0)
    where: list[tuple[int, int, str]] = [(-1, -1, "")] * eps.size
    for a, targets in plan:
        rest = np.delete(x, np.flatnonzero(x == a)[0]) - mechanism.low
        law = subset_sum_laws(rest, t)
        common = _output_matrix(law[t], np.array([0]), t, t * mechanism.low, mechanism)[0]
        # R + value: the changed record contributes (value − low) above the T·low baseline
        sampled = _output_matrix(
            law[t - 1], np.append(targets, a) - mechanism.low, t, t * mechanism.low, mechanism
        )
        p_x = (1.0 - eta) * common + eta * sampled[-1]
        p_nb = (1.0 - eta) * common[None, :] + eta * sampled[:-1]
        # shape (ε, neighbour): Σ_o (P − c·P')_+
        forward = np.maximum(p_x[None, None, :] - c[:, :, None] * p_nb[None, :, :], 0.0).sum(axis=-1)
        backward = np.maximum(p_nb[None, :, :] - c[:, :, None] * p_x[None, None, :], 0.0).sum(axis=-1)
        for values, direction in ((forward, "forward"), (backward, "backward")):
            i = np.argmax(values, axis=1)
            top = values[np.arange(eps.size), i]
            for e in np.flatnonzero(top > best):
                best[e] = top[e]
                where[e] = (a, int(targets[i[e]]), direction)
    return np.clip(best, 0.0, 1.0), where


def quantized_average_profile(
    mechanism: QuantizedSamplingAverage, codes: ArrayLike, epsilon: float, *, neighbours: str = "all"
) -> ProfileValue:
    """δ_{ε,M}(x) of the 8-bit sampling-average on the database ``codes`` (exact; module docstring).

    Parameters
    ----------
    neighbours
        ``"all"``: every neighbour (each distinct value a present → each code b); the exact δ(x).
        ``"heuristic"``: the two neighbours of the authors' code (the minimum → ``high``, the maximum →
        ``low``); a lower bound on δ(x), what Fig. 2 right plots.
    """
    eps = check_epsilon(epsilon)
    deltas, where = quantized_average_deltas(mechanism, codes, [eps], neighbours=neighbours)
    x = mechanism.check_codes(codes)
    value = float(deltas[0])
    log_delta = math.log(value) if value > 0 else -np.inf
    return make_profile_value(
        log_delta,
        eps,
        np.bincount(x - mechanism.low, minlength=mechanism.levels.size),
        where[0],
        f"exact subset-sum recursion ({neighbours} neighbours)",
    )
