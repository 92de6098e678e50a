"""Private ratios a/b (seed 002; notes/smoothed_dp.md, "Private ratios").

Setting: each person adds 1 to the count b and 0 or 1 to a, so 0 ≤ a ≤ b; neighbours add or remove one
person: (a, b) ~ (a+1, b+1), (a, b+1), (a−1, b−1), (a, b−1). The ratio of an empty data set is 0 by
convention.
For b ≥ 2 the local sensitivity is LS(a, b) = max(b − a, a)/(b² − b) (the removals dominate).

Methods
-------
``"naive"``
    â = a + Lap(2/ε), b̂ = b + Lap(2/ε), release â/b̂. Pure ε-DP: two counts of sensitivity 1, ε/2 each
    (also under substitution, where each count moves by at most 1).
``"bounded_local_sensitivity"``
    ε₁ = fraction·ε bounds the local sensitivity, ε₂ = ε − ε₁ releases a/b + Lap(g/ε₂); (ε, δ)-DP by
    :mod:`smoothdp.central.bounded_ls` (seed 002, Thm 1 corrected). â, b̂ get discrete Laplace noise with
    ε₁/2 each and the intervals [â ∓ T], [b̂ ∓ T] of :func:`private_count_interval` hold (a, b) with
    probability ≥ 1 − δ (failure δ/2 each, union bound). With a_l = max(0, â − T), a_u = â + T,
    b_l = b̂ − T, b_u = b̂ + T and b_l ≥ 2,

        g = max( a_u/(b_l² − b_l),  max_{b ∈ [b_l, b_u] ∩ ℤ} (b − a_l)/(b² − b) ),

    **as in the proof** (a_u in the a-term, a_l in the (b − a)-term; the seed's code swaps them and then does
    not bound LS). h(b) = (b − a_l)/(b² − b) is unimodal on b > 1 with its peak at b_x = a_l + √(a_l² − a_l),
    so its integer maximum is at ⌊b_x⌋ or ⌈b_x⌉ clipped to [b_l, b_u]. If b_l ≤ 1 the method falls back to
    ``"naive"`` with ε₂ (total still (ε, δ)).
``"ksw"``
    Kulesza–Suresh–Wang 2024, Algorithm 3: ã = a + Lap(s), z̃ = (b − a) + Lap(s), release ã/(ã + z̃).
    Under add/remove the pair (a, b − a) moves by one unit in one coordinate, so s = 1/ε is pure ε-DP;
    under substitution it moves by (1, −1), so s = 2/ε.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.bounded_ls import SOURCE as BOUNDED_LS_SOURCE
from smoothdp.central.bounded_ls import count_interval_halfwidth
from smoothdp.noise import DiscreteLaplace, Laplace
from smoothdp.privacy import ApproxDP, PureDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_delta, check_epsilon, check_in_range, check_int

__all__ = ["METHODS", "PrivateRatio", "private_ratio", "ratio_local_sensitivity", "ratio_sensitivity_bound"]

METHODS = ("naive", "bounded_local_sensitivity", "ksw")
ADJACENCIES = ("add_remove", "substitute")

SOURCES = {
    "naive": "Laplace on a and b with ε/2 each, basic composition (seed 002)",
    "bounded_local_sensitivity": BOUNDED_LS_SOURCE + "; ratio bound g as in seed 002's proof of Thm 2",
    "ksw": "Kulesza, Suresh & Wang, ICML 2024, Algorithm 3 (seed 002)",
}


def ratio_local_sensitivity(a: NDArray[np.int64] | int, b: NDArray[np.int64] | int) -> NDArray[np.float64]:
    """LS(a, b) = max(b − a, a)/(b² − b) under add/remove, for b ≥ 2 (exact maximum over the 4 neighbours
    bounded by the two removals)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.maximum(b - a, a) / (b * b - b)


def ratio_sensitivity_bound(
    a_lower: NDArray[np.int64],
    a_upper: NDArray[np.int64],
    b_lower: NDArray[np.int64],
    b_upper: NDArray[np.int64],
) -> NDArray[np.float64]:
    """g ≥ LS(a, b) for every integer a ∈ [a_lower, a_upper], b ∈ [b_lower, b_upper] with a ≤ b, b_lower ≥ 2.

    g = max( a_u/(b_l² − b_l), max_{b ∈ [b_l, b_u]} (b − a_l)/(b² − b) ) (seed 002, proof of Thm 2),
    rounded up.
    """
    al = np.maximum(np.asarray(a_lower, dtype=np.float64), 0.0)
    au = np.asarray(a_upper, dtype=np.float64)
    bl = np.asarray(b_lower, dtype=np.float64)
    bu = np.asarray(b_upper, dtype=np.float64)
    au = np.minimum(au, bu)  # a ≤ b ≤ b_u
    first = au / (bl * bl - bl)
    peak = al + np.sqrt(np.maximum(al * al - al, 0.0))
    h = lambda bb: (bb - al) / (bb * bb - bb)  # noqa: E731
    second = np.maximum(h(np.clip(np.floor(peak), bl, bu)), h(np.clip(np.ceil(peak), bl, bu)))
    return round_up(np.maximum(first, second))


def _check_counts(a: int, b: int) -> tuple[int, int]:
    a = check_int("a", a, minimum=0)
    b = check_int("b", b, minimum=0)
    if a > b:
        raise ValueError(f"a must satisfy 0 ≤ a ≤ b (a counts a subset of the b people); got a={a}, b={b}")
    return a, b


class PrivateRatio:
    """A private estimate of a/b (see the module docstring for the methods and their guarantees).

    Parameters
    ----------
    epsilon
        Total ε.
    method
        ``"naive"``, ``"bounded_local_sensitivity"`` or ``"ksw"``.
    delta
        δ ∈ (0, 1) for ``"bounded_local_sensitivity"``; must be 0 (default) for the pure methods.
    epsilon_1_fraction
        The share of ε spent bounding the local sensitivity (``"bounded_local_sensitivity"``; seed: 0.1).
    adjacency
        ``"add_remove"`` (default, the seed's) or ``"substitute"`` (``"ksw"`` then uses scale 2/ε;
        ``"bounded_local_sensitivity"`` is for add/remove only).
    """

    def __init__(
        self,
        epsilon: float,
        method: str = "naive",
        delta: float = 0.0,
        *,
        epsilon_1_fraction: float = 0.1,
        adjacency: str = "add_remove",
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        if adjacency not in ADJACENCIES:
            raise ValueError(f"adjacency must be one of {ADJACENCIES}; got {adjacency!r}")
        self.epsilon = check_epsilon(epsilon)
        self.method = method
        self.adjacency = adjacency
        self.delta = check_delta(delta)
        if method == "bounded_local_sensitivity":
            if self.delta == 0.0:
                raise ValueError("delta must be in (0, 1) for method='bounded_local_sensitivity'; got 0")
            if adjacency != "add_remove":
                raise ValueError(
                    "method='bounded_local_sensitivity' is derived for adjacency='add_remove' only"
                )
            frac = check_in_range("epsilon_1_fraction", epsilon_1_fraction, 0.0, 1.0)
            self.epsilon_1 = frac * self.epsilon
            self.epsilon_2 = self.epsilon - self.epsilon_1
            # Each count gets ε₁/2; each interval fails with probability ≤ δ/2.
            self.halfwidth = count_interval_halfwidth(self.epsilon_1 / 2.0, self.delta / 2.0)
            self.guarantee = ApproxDP(self.epsilon, self.delta)
        else:
            if self.delta != 0.0:
                raise ValueError(f"delta must be 0 for the pure-DP method {method!r}; got {delta!r}")
            self.guarantee = PureDP(self.epsilon)

    # -- vectorized draws ----------------------------------------------------------------------------
    def _naive(self, a: int, b: int, eps: float, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        lap = Laplace(2.0 / eps)
        return (a + lap.sample(n, rng)) / (b + lap.sample(n, rng))

    def _ksw(self, a: int, b: int, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        lap = Laplace((1.0 if self.adjacency == "add_remove" else 2.0) / self.epsilon)
        ones = a + lap.sample(n, rng)
        zeros = (b - a) + lap.sample(n, rng)
        return ones / (ones + zeros)

    def _bounded(
        self, a: int, b: int, n: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray]:
        """Draws, and the bound g for each (NaN where the method fell back to naive)."""
        dlap = DiscreteLaplace(2.0 / self.epsilon_1)  # pmf ∝ e^{−(ε₁/2)|k|}
        noisy_a = a + dlap.sample(n, rng)
        noisy_b = b + dlap.sample(n, rng)
        t = self.halfwidth
        b_low = noisy_b - t
        usable = b_low >= 2
        g = np.full(n, np.nan)
        g[usable] = ratio_sensitivity_bound(
            noisy_a[usable] - t, noisy_a[usable] + t, b_low[usable], noisy_b[usable] + t
        )
        ratio = a / b if b > 0 else 0.0
        out = ratio + np.where(usable, g, 0.0) / self.epsilon_2 * Laplace(1.0).sample(n, rng)
        fallback = ~usable
        if np.any(fallback):
            out[fallback] = self._naive(a, b, self.epsilon_2, int(fallback.sum()), rng)
        return out, g

    def sample(self, a: int, b: int, size: int, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases for counts (a, b)."""
        a, b = _check_counts(a, b)
        n = check_int("size", size, minimum=1)
        gen = resolve_rng(rng)
        if self.method == "naive":
            return self._naive(a, b, self.epsilon, n, gen)
        if self.method == "ksw":
            return self._ksw(a, b, n, gen)
        return self._bounded(a, b, n, gen)[0]

    def release(self, a: int, b: int, rng: SeedLike = None) -> Release:
        """One private release of a/b."""
        a, b = _check_counts(a, b)
        gen = resolve_rng(rng)
        details: dict = {"adjacency": self.adjacency}
        if self.method == "bounded_local_sensitivity":
            draw, g = self._bounded(a, b, 1, gen)
            value = float(draw[0])
            fell_back = bool(np.isnan(g[0]))
            details.update(
                epsilon_1=self.epsilon_1,
                epsilon_2=self.epsilon_2,
                interval_halfwidth=self.halfwidth,
                fell_back_to_naive=fell_back,
                sensitivity_bound=None if fell_back else float(g[0]),  # ε₁-DP: may be published
            )
            mech = "bounded local sensitivity" + (" (fell back to naive with ε₂)" if fell_back else "")
            scale = None if fell_back else float(g[0]) / self.epsilon_2
        elif self.method == "naive":
            value = float(self._naive(a, b, self.epsilon, 1, gen)[0])
            mech, scale = (
                "naive: Laplace(2/ε) on a and on b",
                2.0 / self.epsilon,
            )  # scale of each count's noise
        else:
            value = float(self._ksw(a, b, 1, gen)[0])
            scale = (1.0 if self.adjacency == "add_remove" else 2.0) / self.epsilon
            mech = "KSW: Laplace on (a, b − a)"
        return Release(
            value=value,
            guarantee=self.guarantee,
            statistic="ratio a/b",
            mechanism=mech,
            source=SOURCES[self.method],
            noise_scale=scale,
            noise_std=math.sqrt(2.0) * scale
            if self.method == "bounded_local_sensitivity" and scale
            else None,
            sampler=Laplace.sampler,
            details=details,
        )


def private_ratio(
    a: int,
    b: int,
    epsilon: float,
    method: str = "naive",
    delta: float = 0.0,
    rng: SeedLike = None,
    **kwargs: object,
) -> Release:
    """Private a/b for counts 0 ≤ a ≤ b under add/remove neighbours (see :class:`PrivateRatio`)."""
    return PrivateRatio(epsilon, method, delta, **kwargs).release(a, b, rng)
