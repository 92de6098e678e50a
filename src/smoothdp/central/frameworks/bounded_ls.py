"""Privately bounded local sensitivity (Harrison 2024, docs/references.md#har24: Theorem 1, with its
inequality the right way round).

**Theorem** (Theorem 1 of har24, corrected;
docs/theory/central-frameworks.md#privately-bounded-local-sensitivity). Let g be an ε₁-DP randomized function
of the data such that, for *every* data set x, Pr[g(x) ≥ LS_f(x)] ≥ 1 − δ. Then releasing (g(x), f(x) +
Lap(g(x)/ε₂)) is (ε₁ + ε₂, δ)-DP, under the neighbour relation for which g is ε₁-DP and LS_f is the local
sensitivity.

Proof sketch. Fix neighbours x, x' and an output set S. Let E = {g(x) ≥ LS_f(x)}; Pr[¬E] ≤ δ. On E,
|f(x) − f(x')| ≤ LS_f(x) ≤ g, so for each value of g the Laplace density ratio is at most e^{ε₂}; the law of g
changes by at most e^{ε₁}. Hence Pr[M(x) ∈ S] ≤ δ + e^{ε₁+ε₂} Pr[M(x') ∈ S]. (The paper states
Pr[g ≤ LS] ≥ 1 − δ, the reverse, and its proof of Theorem 2 joins the two tail events with ∧ where a union
bound is needed.)

The bound g is usually built from noisy counts; :func:`private_count_interval` gives the interval
[ĉ − T, ĉ + T] that holds the true count with probability ≥ 1 − failure, from discrete-Laplace noise, with the
exact two-sided tail Pr[|K| ≥ t] = 2e^{−αt}/(1 + e^{−α}) (not the paper's e^{−αt}).

Exact release (docs/theory/floating-point.md#the-exact-release-path): the value is exactly
R(f(x) + (g/ε₂)·Z), Z ~ Lap(1), computed by :func:`smoothdp.exact.add_noise` on the public grid
``OutputGrid.for_magnitude(magnitude)`` (``magnitude`` a public scale of f, default 1); f(x) is taken exactly
as returned (a float, or a :class:`fractions.Fraction` for an exact rational). A non-finite f(x) is replaced
by the public ``default`` (0 unless given) before the noise: the caller's bound g must then bound the local
sensitivity of f completed that way. ``numerics="float"`` keeps the float fast path.

g is covered by the guarantee (it is part of the output): ``Release.details["sensitivity_bound"]``. The
noise scale g/ε₂ is then public too; like every mechanism's noise scale it is reported in
``Release.not_private`` (one place to read it), not repeated in ``details``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.accounting import Accountant
from smoothdp.exact import OutputGrid, add_noise, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import Laplace
from smoothdp.noise.exact_integer import discrete_laplace, rate_at_most
from smoothdp.privacy import ApproxDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.rng import SeedLike, resolve_rng
from smoothdp.sensitivity.rounding import round_up
from smoothdp.validation import check_delta, check_epsilon, check_positive, check_probability

__all__ = [
    "SOURCE",
    "BoundedLocalSensitivity",
    "bounded_local_sensitivity",
    "count_interval_halfwidth",
    "private_count_interval",
]

SOURCE = (
    "Privately bounded local sensitivity: Harrison 2024 (docs/references.md#har24), Theorem 1, corrected "
    "(docs/theory/central-frameworks.md#privately-bounded-local-sensitivity)"
)


def count_interval_halfwidth(*, epsilon: float, failure_probability: float) -> int:
    """The smallest integer T with Pr[|K| > T] ≤ failure for K ~ discrete Laplace, pmf ∝ e^{−ε|k|}.

    Pr[|K| > T] = Pr[|K| ≥ T+1] = 2e^{−ε(T+1)}/(1 + e^{−ε}).
    """
    eps = check_epsilon(epsilon)
    p = check_probability("failure_probability", failure_probability)
    log_tail = lambda t: math.log(2.0) - eps * (t + 1) - math.log1p(math.exp(-eps))  # noqa: E731
    t = max(0, math.ceil((math.log(2.0 / p) - math.log1p(math.exp(-eps))) / eps - 1.0))
    while t > 0 and log_tail(t - 1) <= math.log(p):  # never larger than needed
        t -= 1
    while log_tail(t) > math.log(p):  # never smaller (guards the float rounding above)
        t += 1
    return t


def private_count_interval(
    count: int | NDArray[np.int64],
    *,
    epsilon: float,
    failure_probability: float,
    rng: SeedLike = None,
    size: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """An ε-DP interval for a count of sensitivity 1: (noisy, noisy − T, noisy + T).

    The noisy count is count + K with K discrete Laplace (pmf ∝ e^{−ε|k|}, ε-DP for sensitivity 1), and
    T = :func:`count_interval_halfwidth` (ε, failure), so the true count lies in [noisy − T, noisy + T] with
    probability ≥ 1 − failure for every count. A building block (it charges no accountant): spend its ε
    inside a mechanism such as :class:`BoundedLocalSensitivity`.
    """
    eps = check_epsilon(epsilon)
    t = count_interval_halfwidth(epsilon=eps, failure_probability=failure_probability)
    # the exact rate ε itself (a float scale 1/ε could round down, i.e. a slightly larger rate: weaker)
    noise = discrete_laplace(rate_at_most(Fraction(eps)), size, resolve_rng(rng))
    noisy = np.asarray(count, dtype=np.int64) + noise
    return noisy, noisy - t, noisy + t


class BoundedLocalSensitivity(Mechanism):
    """Release f(x) + Lap(g/ε₂) with a privately drawn bound g ≥ LS_f(x): (ε₁ + ε₂, δ)-DP.

    Guarantee: ``ApproxDP(epsilon_1 + epsilon_2, delta, neighbours=neighbours)``, provided
    ``sensitivity_bound`` is ε₁-DP under ``neighbours`` and Pr[g ≥ LS_f(x)] ≥ 1 − δ for every data set x (the
    caller's part of the proof). Lemma: Theorem 1 of Harrison 2024, corrected
    (docs/theory/central-frameworks.md#privately-bounded-local-sensitivity).

    Parameters
    ----------
    statistic
        f: data ↦ a real number.
    sensitivity_bound
        (data, rng) ↦ g ≥ 0, an ε₁-DP randomized bound on LS_f (build it from :func:`private_count_interval`).
    epsilon_1, epsilon_2, delta
        The budget of the bound, of the release, and the bound's failure probability.
    neighbours
        The neighbour relation under which ``sensitivity_bound`` is ε₁-DP and LS_f is defined
        (``"substitution"`` or ``"add_remove"``).
    label
        What the release is called (``Release.statistic``).
    bound_source
        Where the bound g comes from (added to ``Release.source``).
    magnitude
        A public scale of f (> 0, default 1): the output grid is fixed-point with spacing about
        magnitude·2⁻³⁶ below it, relative 2⁻³⁶ above (module docstring).
    default
        The public value released around when f(x) is not finite (default 0).
    numerics
        ``"exact"`` (default) or ``"float"`` (the float fast path, not hardened).
    """

    name = "privately bounded local sensitivity + Laplace"
    source = SOURCE
    proof = "docs/theory/central-frameworks.md#privately-bounded-local-sensitivity"

    def __init__(
        self,
        statistic: Callable[[Any], float],
        sensitivity_bound: Callable[[Any, np.random.Generator], float],
        *,
        epsilon_1: float,
        epsilon_2: float,
        delta: float,
        neighbours: str = "substitution",
        label: str = "statistic",
        bound_source: str = "",
        magnitude: float = 1.0,
        default: float = 0.0,
        numerics: str = "exact",
    ) -> None:
        self.numerics = check_numerics(numerics)
        self.grid = OutputGrid.for_magnitude(check_positive("magnitude", magnitude))
        self.default = float(default)
        if not math.isfinite(self.default):
            raise ValueError(f"default must be a finite real number; got {default!r}")
        if not callable(statistic) or not callable(sensitivity_bound):
            raise TypeError("statistic and sensitivity_bound must be callables")
        self.statistic = statistic
        self.sensitivity_bound = sensitivity_bound
        self.epsilon_1 = check_epsilon(epsilon_1, "epsilon_1")
        self.epsilon_2 = check_epsilon(epsilon_2, "epsilon_2")
        self.delta = check_delta(delta)
        relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        self.guarantee = ApproxDP(self.epsilon_1 + self.epsilon_2, self.delta, neighbours=relation)
        self.label = label
        self.source = SOURCE + (f"; bound: {bound_source}" if bound_source else "")

    @property
    def statistic_name(self) -> str:
        return self.label

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        raw = self.statistic(prepared)
        value: float | Fraction = raw if isinstance(raw, Fraction) else float(raw)
        if isinstance(value, float) and not math.isfinite(value):
            value = self.default  # public default: no exception, no output that reveals it
        g = float(self.sensitivity_bound(prepared, rng))
        if not (math.isfinite(g) and g >= 0):  # g is ε₁-DP (public): this error reveals nothing more
            raise ValueError(f"sensitivity_bound must return a finite bound ≥ 0; got {g!r}")
        scale = float(round_up(g / self.epsilon_2))
        released = add_noise(
            value, Laplace(1.0), grid=self.grid, rng=rng, sensitivity=scale, numerics=self.numerics
        )
        return self._make_release(
            float(released),
            sampler=sampler_label(self.numerics),
            details={
                "sensitivity_bound": g,  # ε₁-DP: part of the output the theorem covers
                "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2,
            },
            not_private=NotPrivate(noise_scale=scale, noise_std=math.sqrt(2.0) * scale),
        )


def bounded_local_sensitivity(
    value: float | Fraction,
    sensitivity_bound: Callable[[np.random.Generator], float],
    *,
    epsilon_1: float,
    epsilon_2: float,
    delta: float,
    neighbours: str = "substitution",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    label: str = "statistic",
    bound_source: str = "",
    magnitude: float = 1.0,
    default: float = 0.0,
    numerics: str = "exact",
) -> Release:
    """Release ``value`` + Lap(g/ε₂) with g = ``sensitivity_bound(rng)``: (ε₁ + ε₂, δ)-DP under
    ``neighbours`` (a thin wrapper over :class:`BoundedLocalSensitivity`).

    Parameters
    ----------
    value
        f(x), the exact statistic (a float, or a ``Fraction`` for an exact rational).
    sensitivity_bound
        Draws g ≥ 0 from a randomized function of the data that **must** be ε₁-DP and satisfy
        Pr[g ≥ LS_f(x)] ≥ 1 − δ for every data set x (build it from :func:`private_count_interval`).
    epsilon_1, epsilon_2, delta, neighbours, label, bound_source, magnitude, default, numerics
        As for :class:`BoundedLocalSensitivity`.
    rng, accountant
        The generator, and an accountant charged before g and the noise are drawn.

    Returns
    -------
    Release
        ``details["sensitivity_bound"]`` is g (ε₁-DP, covered by the guarantee with the value).
    """
    if not callable(sensitivity_bound):
        raise TypeError("sensitivity_bound must be a callable of the generator")
    mech = BoundedLocalSensitivity(
        lambda v: v,
        lambda _v, gen: sensitivity_bound(gen),
        epsilon_1=epsilon_1,
        epsilon_2=epsilon_2,
        delta=delta,
        neighbours=neighbours,
        label=label,
        bound_source=bound_source,
        magnitude=magnitude,
        default=default,
        numerics=numerics,
    )
    exact = value if isinstance(value, Fraction) else float(value)
    return mech.release(exact, accountant=accountant, rng=rng)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
