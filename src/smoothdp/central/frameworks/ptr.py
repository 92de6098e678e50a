"""Propose-test-release (Dwork & Lei, STOC 2009), with the budget and the threshold corrected.

Given a proposed bound b on the local sensitivity of f:

1. D(x) = min { k : A^(k)(x) > b }, the distance to instability (global sensitivity 1, because
   A^(k)(y) ≤ A^(k+1)(x) for neighbours x, y);
2. if D(x) + Lap(1/ε₁) < T with T = ln(1/(2δ))/ε₁, refuse (⊥);
3. otherwise release f(x) + Lap(b/ε₂).

Guarantee: (ε₁ + ε₂, δ)-DP under the statistic's neighbour relation
(docs/theory/central-frameworks.md#propose-test-release):

* the test is the Laplace mechanism on D, ε₁-DP; the release step is ε₂-DP whenever D(x) ≥ 1 (then
  LS(x) ≤ b, so |f(x) − f(x')| ≤ b for every neighbour, in both directions);
* if D(x) = 0 the release happens only when Lap(1/ε₁) ≥ T, with probability ½·e^{−ε₁T} = δ exactly.

Corrections to the textbook version in Near & Abuah, *Programming Differential Privacy*
(docs/theory/central-frameworks.md#corrections-to-the-published-ptr): both steps spend budget, so the total
is ε₁ + ε₂ (the book says ε for ε + ε), and the book's threshold ln(2/δ)/(2ε) gives δ' = ½√(δ/2) instead of
δ (1.1e−5 for δ = 1e−9).

What is public: the value (or the refusal), and the noisy distance D̃ (the ε₁-DP output of the test).
The true distance D(x) is not private; it stays in ``Release.not_private.extra``.

Exact release (docs/theory/floating-point.md#the-exact-release-path): both outputs go through
:func:`smoothdp.exact.add_noise`. The noisy distance is D̃ = R₁(min(D, C) + Lap(1/ε₁)) with the public cap
C = ⌈T⌉ + ⌈64/ε₁⌉ (min with a constant keeps sensitivity 1, and C ≥ 1 keeps min(D, C) = 0 exactly when
D = 0, so the proof is unchanged; D = ∞ becomes C, which passes with probability 1 − e^{−64}/2) on the
public grid R₁ of magnitude C; the value is R₂(f(x) + Lap(b/ε₂)) for the exact statistic on the grid of the
statistic's bounds. Both roundings are post-processing. ``numerics="float"`` keeps the float fast path.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.accounting import Accountant
from smoothdp.central.smooth_sensitivity.statistics import PreparedData, Statistic
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Laplace
from smoothdp.privacy import ApproxDP
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.validation import check_delta, check_epsilon, check_in_range, check_int, check_positive

__all__ = ["ProposeTestRelease", "distance_to_instability", "propose_test_release"]

SOURCE = (
    "Propose-test-release, Dwork & Lei, STOC 2009, with the budget ε₁ + ε₂ and the threshold "
    "ln(1/(2δ))/ε₁ of docs/theory/central-frameworks.md#corrections-to-the-published-ptr"
)


def distance_to_instability(
    statistic: Statistic, x: ArrayLike | PreparedData, bound: float, *, cap: float = math.inf
) -> float:
    """min(D(x), cap) with D(x) = min { k ≥ 0 : A^(k)(x) > bound }, or ``inf`` if no data set of the same
    kind has LS > bound.

    A^(k) is non-decreasing in k and constant (the global sensitivity) from k = n + 1 on, so a binary
    search over k ∈ [0, min(n + 1, ⌈cap⌉)] finds it with O(log n) evaluations of A^(k), each reading a
    window of O(k) order statistics (PTR passes its public cap C: it only uses min(D, C), so at scale
    only ranks within C of the target are read). The rounded-up A^(k) is used, so D is never
    overestimated. D is a function of the data (not private).
    """
    b = check_positive("proposed_bound", bound)
    d = statistic.prepare(x)
    a_at = lambda k: statistic.local_sensitivity(d, k)  # noqa: E731
    hi = d.n + 1
    if cap < hi:
        hi = max(0, math.ceil(cap))
        if a_at(hi) <= b:  # D > ⌈cap⌉ ≥ cap
            return float(cap)
    elif a_at(hi) <= b:
        return math.inf
    if a_at(0) > b:
        return 0.0
    lo = 0  # invariant: A(lo) ≤ b < A(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a_at(mid) > b:
            hi = mid
        else:
            lo = mid
    return float(min(hi, cap))


class ProposeTestRelease(Mechanism):
    """Propose-test-release for a statistic: (ε, δ)-DP under the statistic's neighbour relation.

    Guarantee: ``ApproxDP(epsilon, delta, neighbours=statistic.neighbours)`` for test and release together
    (the refusal spends the budget too). Lemma: the Laplace test on the distance to instability (global
    sensitivity 1) and the Laplace release with the proposed bound
    (docs/theory/central-frameworks.md#propose-test-release; Dwork & Lei, STOC 2009).

    Parameters
    ----------
    statistic
        A :class:`~smoothdp.central.smooth_sensitivity.statistics.Statistic` (its ``local_sensitivity(x, k)``
        gives A^(k)).
    proposed_bound
        b > 0, the proposed bound on the local sensitivity; it must not depend on the data.
    epsilon
        Total ε; ε₁ = ``test_fraction``·ε goes to the test, ε₂ = ε − ε₁ to the release.
    delta
        δ ∈ (0, ½): the probability of releasing with too little noise.
    test_fraction
        The share of ε spent on the test (default ½).
    numerics
        ``"exact"`` (default): both outputs rounded exactly onto public grids (module docstring);
        ``"float"``: the float fast path (not hardened).
    """

    name = "propose-test-release"
    source = SOURCE
    proof = "docs/theory/central-frameworks.md#propose-test-release"

    def __init__(
        self,
        statistic: Statistic,
        *,
        proposed_bound: float,
        epsilon: float,
        delta: float,
        test_fraction: float = 0.5,
        numerics: str = "exact",
    ) -> None:
        self.numerics = check_numerics(numerics)
        if not isinstance(statistic, Statistic):
            raise TypeError(f"statistic must be a smoothdp.central Statistic; got {type(statistic).__name__}")
        self.statistic = statistic
        self.bound = check_positive("proposed_bound", proposed_bound)
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_in_range("delta", check_delta(delta), 0.0, 0.5)
        frac = check_in_range("test_fraction", test_fraction, 0.0, 1.0)
        self.epsilon_test = frac * self.epsilon
        self.epsilon_release = self.epsilon - self.epsilon_test
        self.threshold = math.log(1.0 / (2.0 * self.delta)) / self.epsilon_test
        #: Public cap C on the distance (module docstring) and the public grids of the two outputs.
        self.distance_cap = float(max(1, math.ceil(self.threshold)) + math.ceil(64.0 / self.epsilon_test))
        self.distance_grid = OutputGrid.for_magnitude(self.distance_cap)
        self.grid = OutputGrid.for_bounds(statistic.lower, statistic.upper)
        self.guarantee = ApproxDP(self.epsilon, self.delta, neighbours=statistic.neighbours)
        self.source = f"{SOURCE}; sensitivity: {statistic.source}"

    @property
    def statistic_name(self) -> str:
        return self.statistic.name

    def _noisy_distance(
        self, distance: float, size: int | None, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """R₁(min(D, C) + Lap(1/ε₁)) (a test's broken twin overrides this)."""
        return np.asarray(
            add_noise(
                min(distance, self.distance_cap),
                Laplace(1.0 / self.epsilon_test),
                grid=self.distance_grid,
                rng=rng,
                size=size,
                numerics=self.numerics,
            ),
            dtype=np.float64,
        )

    def sample(self, x: ArrayLike | PreparedData, size: int, *, rng: SeedLike = None) -> NDArray[np.float64]:
        """``size`` independent outputs of the mechanism on x, each with the law of :meth:`release`;
        refusals (⊥) are NaN (no accountant).

        Both steps take the release path vectorized over the draws (:func:`smoothdp.exact.add_noise` with
        the mechanism's ``numerics``): the noisy distances, then one value for each draw that passed the
        test. With the same generator state, ``sample(x, 1, rng=g)[0]`` is the value ``release(x, rng=g)``
        gives (NaN for a refusal).
        """
        n = check_int("size", size, minimum=1)
        d = self.statistic.prepare(x)
        gen = resolve_rng(rng)
        distance = distance_to_instability(self.statistic, d, self.bound, cap=self.distance_cap)
        passed = np.asarray(self._noisy_distance(distance, n, gen)) >= self.threshold
        out = np.full(n, np.nan)
        out[passed] = add_noise(
            self.statistic.exact_value(d),
            Laplace(self.bound / self.epsilon_release),
            grid=self.grid,
            rng=gen,
            size=int(np.count_nonzero(passed)),
            numerics=self.numerics,
        )
        return out

    def _prepare(self, data: Any) -> PreparedData:
        return self.statistic.prepare(data)

    def _release(self, prepared: PreparedData, rng: np.random.Generator) -> Release:
        distance = distance_to_instability(self.statistic, prepared, self.bound, cap=self.distance_cap)
        noisy = float(self._noisy_distance(distance, None, rng))
        sampler = sampler_label(self.numerics)
        details = {
            "epsilon_test": self.epsilon_test,
            "epsilon_release": self.epsilon_release,
            "threshold": self.threshold,
            "noisy_distance": noisy,  # the ε₁-DP output of the test: covered by the guarantee
            "proposed_bound": self.bound,
            "bounds": self.statistic.bounds,
        }
        if not noisy >= self.threshold:
            reason = (
                f"noisy distance to instability {noisy:.4g} is below the threshold {self.threshold:.4g}: "
                f"the data may be too close to a data set whose local sensitivity exceeds {self.bound:g}"
            )
            return self._make_release(
                None,
                refused=True,
                reason=reason,
                sampler=sampler,
                details=details,
                not_private=NotPrivate(extra={"distance_to_instability_capped": distance}),
            )
        noise = Laplace(self.bound / self.epsilon_release)
        value = add_noise(
            self.statistic.exact_value(prepared), noise, grid=self.grid, rng=rng, numerics=self.numerics
        )
        return self._make_release(
            float(value),
            sampler=sampler,
            details=details,
            not_private=NotPrivate(
                noise_scale=noise.scale,
                noise_std=noise.std(),
                extra={"distance_to_instability_capped": distance},
            ),
        )


def propose_test_release(
    statistic: Statistic,
    x: ArrayLike,
    *,
    proposed_bound: float,
    epsilon: float,
    delta: float,
    test_fraction: float = 0.5,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Release:
    """Propose-test-release of ``statistic`` on x: (ε, δ)-DP in total under the statistic's neighbour
    relation, test and release together (see :class:`ProposeTestRelease`).

    A refusal is a :class:`~smoothdp.release.Release` with ``refused=True`` and the reason; the budget is
    spent (and ``accountant`` charged) either way.
    """
    mech = ProposeTestRelease(
        statistic,
        proposed_bound=proposed_bound,
        epsilon=epsilon,
        delta=delta,
        test_fraction=test_fraction,
        numerics=numerics,
    )
    return mech.release(x, accountant=accountant, rng=rng)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
