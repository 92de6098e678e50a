"""Private ratios a/b (docs/theory/central-frameworks.md#private-ratios; Harrison 2024,
docs/references.md#har24).

Setting: each person adds 1 to the count b and 0 or 1 to a, so 0 ≤ a ≤ b. Under ``"add_remove"`` neighbours
(the paper's) one person is added or removed: (a, b) ~ (a+1, b+1), (a, b+1), (a−1, b−1), (a, b−1); under
``"substitution"`` one person's bit changes: (a, b) ~ (a ± 1, b). The ratio of an empty data set is 0 by
convention. For b ≥ 2 the add/remove local sensitivity is LS(a, b) = max(b − a, a)/(b² − b) (the removals
dominate).

Methods (each a :class:`PrivateRatio` configuration, with its guarantee and neighbour relation)
----------------------------------------------------------------------------------------------------
``"naive"`` (docs/theory/central-frameworks.md#naive-ratio)
    â = a + Lap(2/ε), b̂ = b + Lap(2/ε), release â/b̂. Pure ε-DP under add/remove (two counts of
    sensitivity 1, ε/2 each, basic composition) and under substitution (only a moves, by at most 1).
``"bounded_local_sensitivity"`` (docs/theory/central-frameworks.md#ratio-with-bounded-local-sensitivity)
    ε₁ = fraction·ε bounds the local sensitivity, ε₂ = ε − ε₁ releases a/b + Lap(g/ε₂); (ε, δ)-DP under
    add/remove by :mod:`smoothdp.central.frameworks.bounded_ls` (har24 Theorem 1, corrected). â, b̂ get
    discrete Laplace noise with ε₁/2 each and the intervals [â ∓ T], [b̂ ∓ T] of
    :func:`private_count_interval` hold (a, b) with probability ≥ 1 − δ (failure δ/2 each, union bound). With
    a_l = max(0, â − T), a_u = â + T, b_l = b̂ − T, b_u = b̂ + T and b_l ≥ 2,

        g = max( a_u/(b_l² − b_l),  max_{b ∈ [b_l, b_u] ∩ ℤ} (b − a_l)/(b² − b) ),

    **as in the proof** of har24 Theorem 2 (a_u in the a-term, a_l in the (b − a)-term; the paper's code swaps
    them and then does not bound LS). h(b) = (b − a_l)/(b² − b) is unimodal on b > 1 with its peak at
    b_x = a_l + √(a_l² − a_l), so its integer maximum is at ⌊b_x⌋ or ⌈b_x⌉ clipped to [b_l, b_u]. If b_l ≤ 1
    the method falls back to ``"naive"`` with ε₂ (total still (ε, δ)).
``"ksw"`` (docs/theory/central-frameworks.md#ksw-ratio)
    Kulesza, Suresh & Wang, ICML 2024, Algorithm 3: ã = a + Lap(s), z̃ = (b − a) + Lap(s), release
    ã/(ã + z̃). Under add/remove the pair (a, b − a) moves by one unit in one coordinate, so s = 1/ε is pure
    ε-DP; under substitution it moves by (1, −1), so s = 2/ε.

Exact release (docs/theory/floating-point.md#the-exact-release-path): every noisy count is the exact
rounding, onto a public grid, of the integer count plus its noise (:func:`smoothdp.exact.add_noise`), and
the ratio of two noisy counts is post-processing; the bounded-local-sensitivity value is the exact
rounding of a/b (an exact rational) + (g/ε₂)·Z on the public grid of [0, 1]. ``numerics="float"`` keeps the
float fast path.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.frameworks.bounded_ls import SOURCE as BOUNDED_LS_SOURCE
from smoothdp.central.frameworks.bounded_ls import count_interval_halfwidth
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Laplace
from smoothdp.noise.exact_integer import discrete_laplace, rate_at_most
from smoothdp.privacy import ApproxDP, PrivacyGuarantee, PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_delta, check_epsilon, check_in_range, check_int

__all__ = ["METHODS", "PrivateRatio", "private_ratio", "ratio_local_sensitivity", "ratio_sensitivity_bound"]

METHODS = ("naive", "bounded_local_sensitivity", "ksw")
#: Public grids: noisy counts (fixed-point below 2, 36 significant bits above) and ratios in [0, 1].
_COUNT_GRID = OutputGrid.for_magnitude(1.0)
_RATIO_GRID = OutputGrid.for_bounds(0.0, 1.0)
#: The neighbour relations each method is proved for.
METHOD_NEIGHBOURS = {
    "naive": ("add_remove", "substitution"),
    "bounded_local_sensitivity": ("add_remove",),
    "ksw": ("add_remove", "substitution"),
}
#: The section of docs/theory/central-frameworks.md that proves each method.
PROOFS = {
    "naive": "docs/theory/central-frameworks.md#naive-ratio",
    "bounded_local_sensitivity": "docs/theory/central-frameworks.md#ratio-with-bounded-local-sensitivity",
    "ksw": "docs/theory/central-frameworks.md#ksw-ratio",
}

SOURCES = {
    "naive": "Laplace mechanism on a and b with ε/2 each, basic composition (docs/references.md#har24)",
    "bounded_local_sensitivity": BOUNDED_LS_SOURCE
    + "; ratio bound g as in the proof of Theorem 2 of Harrison 2024 (docs/references.md#har24)",
    "ksw": "Kulesza, Suresh & Wang, ICML 2024, Algorithm 3 (docs/references.md#ksw24)",
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

    g = max( a_u/(b_l² − b_l), max_{b ∈ [b_l, b_u]} (b − a_l)/(b² − b) ) (Harrison 2024, proof of
    Theorem 2, with the terms the right way round), rounded up.
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
        # No values in the message: the counts are the data.
        raise ValueError("a must satisfy 0 ≤ a ≤ b (a counts a subset of the b people)")
    return a, b


class PrivateRatio(Mechanism):
    """A private estimate of a/b from counts 0 ≤ a ≤ b (see the module docstring for the methods).

    Guarantee: pure ε-DP (``"naive"``, ``"ksw"``) or (ε, δ)-DP (``"bounded_local_sensitivity"``) under
    ``neighbours``: ``"add_remove"`` (default, every method) or ``"substitution"`` (``"naive"`` and
    ``"ksw"``, which then uses scale 2/ε). Lemmas: docs/theory/central-frameworks.md#naive-ratio,
    #ratio-with-bounded-local-sensitivity (Harrison 2024, Theorem 1 corrected), #ksw-ratio
    (Kulesza, Suresh & Wang, ICML 2024). ``release((a, b))`` or ``release(a, b)``.

    Parameters
    ----------
    epsilon
        Total ε.
    method
        ``"naive"`` (default), ``"bounded_local_sensitivity"`` or ``"ksw"``.
    delta
        δ ∈ (0, 1) for ``"bounded_local_sensitivity"``; must be 0 (default) for the pure methods.
    epsilon_1_fraction
        ``"bounded_local_sensitivity"`` only: the share of ε spent bounding the local sensitivity
        (default 0.1, the paper's). Any other method refuses it (``TypeError``).
    neighbours
        ``"add_remove"`` (default) or ``"substitution"``.
    numerics
        ``"exact"`` (default): noisy counts and values rounded exactly onto public grids; ``"float"``:
        the float fast path (not hardened).
    """

    name = "private ratio"
    source = (
        "Harrison 2024 (docs/references.md#har24); "
        "Kulesza, Suresh & Wang, ICML 2024 (docs/references.md#ksw24)"
    )
    proof = "docs/theory/central-frameworks.md#private-ratios"

    def __init__(
        self,
        *,
        epsilon: float,
        method: str = "naive",
        delta: float = 0.0,
        epsilon_1_fraction: float | None = None,
        neighbours: str = "add_remove",
        numerics: str = "exact",
    ) -> None:
        self.numerics = check_numerics(numerics)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        relation = check_neighbours(neighbours, allowed=("add_remove", "substitution"))
        if relation not in METHOD_NEIGHBOURS[method]:
            raise ValueError(
                f"method={method!r} is derived for neighbours in {METHOD_NEIGHBOURS[method]} only; "
                f"got neighbours={neighbours!r}"
            )
        self.epsilon = check_epsilon(epsilon)
        self.method = method
        self.neighbours_relation = relation
        self.delta = check_delta(delta)
        self.source = f"{SOURCES[method]}; proof: {PROOFS[method]}"
        guarantee: PrivacyGuarantee
        if method == "bounded_local_sensitivity":
            if self.delta == 0.0:
                raise ValueError("delta must be in (0, 1) for method='bounded_local_sensitivity'; got 0")
            frac = check_in_range(
                "epsilon_1_fraction", 0.1 if epsilon_1_fraction is None else epsilon_1_fraction, 0.0, 1.0
            )
            self.epsilon_1 = frac * self.epsilon
            self.epsilon_2 = self.epsilon - self.epsilon_1
            # Each count gets ε₁/2; each interval fails with probability ≤ δ/2.
            self.halfwidth = count_interval_halfwidth(
                epsilon=self.epsilon_1 / 2.0, failure_probability=self.delta / 2.0
            )
            guarantee = ApproxDP(self.epsilon, self.delta, neighbours=relation)
        else:
            if epsilon_1_fraction is not None:
                raise TypeError(
                    f"method={method!r} does not take 'epsilon_1_fraction' (only "
                    "method='bounded_local_sensitivity' does); valid keywords: epsilon, method, delta, "
                    "neighbours, numerics"
                )
            if self.delta != 0.0:
                raise ValueError(f"delta must be 0 for the pure-DP method {method!r}; got {delta!r}")
            guarantee = PureDP(self.epsilon, neighbours=relation)
        self.guarantee = guarantee

    @property
    def statistic_name(self) -> str:
        return "ratio a/b"

    # -- vectorized draws ----------------------------------------------------------------------------
    def _count(self, count: int, noise: Laplace, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """n noisy copies of an integer count, exactly rounded onto the public count grid."""
        draws = add_noise(float(count), noise, grid=_COUNT_GRID, rng=rng, size=n, numerics=self.numerics)
        return np.asarray(draws, dtype=np.float64)

    def _naive(self, a: int, b: int, eps: float, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        lap = Laplace(2.0 / eps)
        with np.errstate(divide="ignore", invalid="ignore"):  # post-processing of two noisy counts
            return np.asarray(self._count(a, lap, n, rng) / self._count(b, lap, n, rng), dtype=np.float64)

    def _ksw(self, a: int, b: int, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        lap = Laplace(self._ksw_scale())
        ones = self._count(a, lap, n, rng)
        zeros = self._count(b - a, lap, n, rng)
        with np.errstate(divide="ignore", invalid="ignore"):  # post-processing of two noisy counts
            return np.asarray(ones / (ones + zeros), dtype=np.float64)

    def _bounded(
        self, a: int, b: int, n: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray]:
        """Draws, and the bound g for each (NaN where the method fell back to naive)."""
        rate = rate_at_most(Fraction(self.epsilon_1) / 2)  # pmf ∝ e^{−(ε₁/2)|k|}, the exact rational rate
        noisy_a = a + discrete_laplace(rate, n, rng)
        noisy_b = b + discrete_laplace(rate, n, rng)
        t = self.halfwidth
        b_low = noisy_b - t
        usable = b_low >= 2
        g = np.full(n, np.nan)
        g[usable] = ratio_sensitivity_bound(
            noisy_a[usable] - t, noisy_a[usable] + t, b_low[usable], noisy_b[usable] + t
        )
        ratio = Fraction(a, b) if b > 0 else Fraction(0)  # exact
        scale = np.where(usable, g, 0.0) / self.epsilon_2
        out = np.array(
            add_noise(
                ratio,
                Laplace(1.0),
                grid=_RATIO_GRID,
                rng=rng,
                sensitivity=scale,
                numerics=self.numerics,
            ),
            dtype=np.float64,
            ndmin=1,
        )
        fallback = ~usable
        if np.any(fallback):
            out[fallback] = self._naive(a, b, self.epsilon_2, int(fallback.sum()), rng)
        return out, g

    def _ksw_scale(self) -> float:
        return (1.0 if self.neighbours_relation == "add_remove" else 2.0) / self.epsilon

    def sample(self, a: int, b: int, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent releases for counts (a, b) (for simulations; no accountant)."""
        a, b = _check_counts(a, b)
        n = check_int("size", size, minimum=1)
        gen = resolve_rng(rng)
        if self.method == "naive":
            return self._naive(a, b, self.epsilon, n, gen)
        if self.method == "ksw":
            return self._ksw(a, b, n, gen)
        return self._bounded(a, b, n, gen)[0]

    def release(
        self,
        data: Any,
        b: int | None = None,
        *,
        accountant: Accountant | None = None,
        rng: SeedLike = None,
    ) -> Release:
        """One private release of a/b: ``release((a, b))`` or ``release(a, b)``; ``accountant`` is
        charged before any noise is drawn."""
        return super().release(data if b is None else (data, b), accountant=accountant, rng=rng)

    def _prepare(self, data: Any) -> tuple[int, int]:
        try:
            a, b = data
        except (TypeError, ValueError) as err:
            raise TypeError(f"a ratio release takes the counts (a, b); got {type(data).__name__}") from err
        return _check_counts(a, b)

    def _release(self, prepared: tuple[int, int], rng: np.random.Generator) -> Release:
        a, b = prepared
        details: dict[str, Any] = {"method": self.method}
        std: float | None = None
        if self.method == "bounded_local_sensitivity":
            draw, g = self._bounded(a, b, 1, rng)
            value = float(draw[0])
            fell_back = bool(np.isnan(g[0]))
            details.update(
                epsilon_1=self.epsilon_1,
                epsilon_2=self.epsilon_2,
                interval_halfwidth=self.halfwidth,
                fell_back_to_naive=fell_back,  # a function of the ε₁-DP noisy count b̂: public
                sensitivity_bound=None if fell_back else float(g[0]),  # ε₁-DP: covered by the guarantee
            )
            mech = "bounded local sensitivity" + (" (fell back to naive with ε₂)" if fell_back else "")
            scale = None if fell_back else float(g[0]) / self.epsilon_2
            std = None if scale is None else math.sqrt(2.0) * scale
        elif self.method == "naive":
            value = float(self._naive(a, b, self.epsilon, 1, rng)[0])
            mech, scale = "naive: Laplace(2/ε) on a and on b", 2.0 / self.epsilon  # each count's noise
        else:
            value = float(self._ksw(a, b, 1, rng)[0])
            scale = self._ksw_scale()
            mech = "KSW: Laplace on (a, b − a)"
        return self._make_release(
            value,
            mechanism=mech,
            sampler=sampler_label(self.numerics),
            details=details,
            not_private=NotPrivate(noise_scale=scale, noise_std=std),
        )


def private_ratio(
    a: int,
    b: int,
    *,
    epsilon: float,
    method: str = "naive",
    delta: float = 0.0,
    epsilon_1_fraction: float | None = None,
    neighbours: str = "add_remove",
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Private a/b for counts 0 ≤ a ≤ b (see :class:`PrivateRatio` for the guarantee and its neighbour
    relation); ``accountant`` is charged before any noise is drawn."""
    mech = PrivateRatio(
        epsilon=epsilon,
        method=method,
        delta=delta,
        epsilon_1_fraction=epsilon_1_fraction,
        neighbours=neighbours,
        numerics=numerics,
    )
    return mech.release((a, b), accountant=accountant, rng=rng)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
