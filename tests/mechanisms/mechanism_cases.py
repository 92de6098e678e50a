"""One test case per registered mechanism: how to build it, its adversarial neighbours, its exact loss.

The template is in CONTRIBUTING.md. ``privacy_loss(mechanism, x, x_prime, d)`` returns, for a pure
guarantee, the supremum over outputs of ln p_x(y)/p_x'(y) (compared with ε·d), and for an (ε, δ)
guarantee the hockey-stick divergence ∫ max(0, p_x − e^{εd} p_x') (compared with δ). The losses are
computed from the mechanisms' exact output laws, not from samples.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from smoothdp.audit.privacy_loss import hockey_stick_divergence, max_log_density_ratio
from smoothdp.privacy import ZCDP, Guarantee

Pair = tuple[Any, Any, float]


@dataclass(frozen=True)
class Case:
    """How the generic tests exercise one mechanism class."""

    mechanism: type
    build: Callable[..., Any]  # build(epsilon, **bad_kwargs) -> mechanism
    data: Any  # a typical input of release()
    neighbours: Callable[[], Iterable[Pair]]  # adversarial (x, x', d)
    privacy_loss: Callable[[Any, Any, Any, float], float]
    broken: Callable[[Any], Any]  # the same mechanism with its calibration broken on purpose
    bad_parameters: list[tuple[dict[str, Any], type[Exception], str]] = field(default_factory=list)
    epsilon: float = 1.0
    label: str = ""


def loss_bound(guarantee: Any, d: float) -> float:
    """What the loss of a pair at distance d may reach: ε·d (pure), δ (approximate), ρ (zCDP)."""
    if isinstance(guarantee, ZCDP):  # the case's loss is sup_α D_α/α, at most ρ (ρd² at distance d)
        return guarantee.rho * d * d
    assert isinstance(guarantee, Guarantee)
    return guarantee.epsilon * d if guarantee.is_pure else guarantee.delta


# -- exact losses of location-scale laws: M(x) = f(x) + S(x)·Z --------------------------------------------
def _output_grid(noise: Any) -> np.ndarray:
    s = float(getattr(noise, "scale", 1.0))
    core = np.linspace(-60.0, 60.0, 12001) * s
    tails = np.geomspace(60.0, 1e10, 800) * s
    return np.unique(np.concatenate([-tails, core, tails]))


def location_scale_loss(
    noise: Any, f: float, s: float, f2: float, s2: float, pure: bool, eps_d: float
) -> float:
    """Loss of f + s·Z against f2 + s2·Z (sup log ratio if ``pure``, else hockey stick at ε·d)."""
    shift, ratio = (f2 - f) / s, s2 / s
    if pure:
        y = _output_grid(noise)

        def lp_xp(t: np.ndarray) -> np.ndarray:
            return noise.logpdf((t - shift) / ratio) - np.log(ratio)

        return max_log_density_ratio(noise.logpdf, lp_xp, y)
    return float(hockey_stick_divergence(noise, ratio, shift, eps_d))


CASES: list[Case] = []


# -- geo-privacy (local model): one user's report, exact log densities ------------------------------------
def _geo_grid(centres: list[float]) -> np.ndarray:
    """Outputs around each centre: a fine core and geometric tails out to 1e9 (any noise scale)."""
    offsets = np.geomspace(1e-9, 1e9, 4000)
    parts = [np.linspace(c - 50.0, c + 50.0, 20001) for c in centres]
    parts += [c + offsets for c in centres] + [c - offsets for c in centres]
    return np.concatenate(parts)


def geo_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """sup_y ln p_x(y) − ln p_x'(y) for one user's report (single query)."""
    q = mechanism.query
    xa, xb = np.asarray(x, float), np.asarray(x_prime, float)
    centres = [float(q.value(xa)), float(q.value(xb))]
    if xa.ndim == 0:
        centres += [float(xa), float(xb)]
    grid = _geo_grid(centres)
    if xa.ndim == 1:  # planar outputs (noise a priori in 2-D): rays through both points
        direction = (xb - xa) / max(np.linalg.norm(xb - xa), 1e-300)
        grid = xa + np.outer(np.concatenate([grid, -grid]), direction)
    return max(
        max_log_density_ratio(
            lambda y: mechanism.log_density(y, xa), lambda y: mechanism.log_density(y, xb), grid
        ),
        max_log_density_ratio(
            lambda y: mechanism.log_density(y, xb), lambda y: mechanism.log_density(y, xa), grid
        ),
    )


def _geo_pairs(pairs: list[tuple[Any, Any]]) -> Callable[[], list[Pair]]:
    def pairs_with_distance() -> list[Pair]:
        return [(a, b, float(np.linalg.norm(np.subtract(a, b, dtype=float)))) for a, b in pairs]

    return pairs_with_distance


def _any_two_inputs(pairs: list[tuple[Any, Any]]) -> Callable[[], list[Pair]]:
    return lambda: [(a, b, 1.0) for a, b in pairs]  # local DP: every pair is a neighbour, bound ε


def _smaller_noise(mechanism: Any, factor: float = 0.5) -> Any:
    import copy
    import dataclasses

    twin = copy.copy(mechanism)
    cal = mechanism.calibration
    twin.calibration = dataclasses.replace(cal, noise=cal.noise.with_scale(cal.noise.scale * factor))
    return twin


def _geo_cases() -> list[Case]:
    from smoothdp.geo import (
        GaussianKDE,
        GlobalLipschitz,
        LocalDP,
        NoiseAPriori,
        SmoothSensitivityMechanism,
        SoftThreshold,
        TwoWayThreshold,
    )

    threshold = SoftThreshold(0.0, 1.0)
    pairs_1d = [(0.0, 0.01), (0.45, 0.55), (-0.55, -0.45), (2.0, 2.5), (5.0, 7.0), (0.3, -0.9), (-3.0, -2.0)]
    pairs_2d = [((0.0, 0.0), (0.01, 0.0)), ((0.4, 0.4), (0.6, 0.7)), ((1.0, 1.0), (2.0, 2.0))]
    users = np.linspace(-3.0, 3.0, 50)
    bad_eps = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"numerics": "fast"}, ValueError, "numerics"),
    ]
    return [
        Case(
            mechanism=SmoothSensitivityMechanism,
            label="geo",
            build=lambda epsilon, **kw: SmoothSensitivityMechanism(threshold, epsilon=epsilon, **kw),
            data=users,
            neighbours=_geo_pairs(pairs_1d),
            privacy_loss=geo_loss,
            broken=_smaller_noise,
            bad_parameters=[
                *bad_eps,
                ({"df": 3}, TypeError, "df"),
                ({"noise": "gauss"}, ValueError, "noise"),
                ({"beta": 2.0}, ValueError, "beta"),
            ],
            epsilon=0.8,
        ),
        Case(
            mechanism=SmoothSensitivityMechanism,
            label="geo, 2-D KDE, Student's T",
            build=lambda epsilon, **kw: SmoothSensitivityMechanism(
                GaussianKDE([0.5, 0.5], 1.0), epsilon=epsilon, **{"noise": "student_t", **kw}
            ),
            data=np.column_stack([users, users[::-1]]),
            neighbours=_geo_pairs(pairs_2d),
            privacy_loss=geo_loss,
            broken=_smaller_noise,
            bad_parameters=[*bad_eps, ({"gamma": 2.0}, TypeError, "gamma")],
            epsilon=0.8,
        ),
        Case(
            mechanism=GlobalLipschitz,
            build=lambda epsilon, **kw: GlobalLipschitz(
                TwoWayThreshold([0.0, 0.0], 1.0), epsilon=epsilon, **kw
            ),
            data=np.column_stack([users, users]),
            neighbours=_geo_pairs(pairs_2d),
            privacy_loss=geo_loss,
            broken=_attr_times("scale", 0.5),
            bad_parameters=[*bad_eps, ({"noise": "laplace"}, TypeError, "noise")],
        ),
        Case(
            mechanism=NoiseAPriori,
            build=lambda epsilon, **kw: NoiseAPriori(threshold, epsilon=epsilon, **kw),
            data=users,
            neighbours=_geo_pairs(pairs_1d),
            privacy_loss=geo_loss,
            broken=_scaled_attr("noise"),
            bad_parameters=[*bad_eps, ({"variant": "nearest"}, ValueError, "variant")],
        ),
        Case(
            mechanism=NoiseAPriori,
            label="planar",
            build=lambda epsilon, **kw: NoiseAPriori(GaussianKDE([0.5, 0.5], 1.0), epsilon=epsilon, **kw),
            data=np.column_stack([users, users[::-1]]),
            neighbours=_geo_pairs(pairs_2d),
            privacy_loss=geo_loss,
            broken=_scaled_attr("noise"),
            bad_parameters=[*bad_eps, ({"hard": True}, ValueError, "hard")],
        ),
        Case(
            mechanism=LocalDP,
            build=lambda epsilon, **kw: LocalDP(threshold, epsilon=epsilon, **kw),
            data=users,
            neighbours=_any_two_inputs([(-50.0, 50.0), (0.0, 0.3), (-1.0, 1.0)]),
            privacy_loss=geo_loss,
            broken=_attr_times("scale", 0.5),
            bad_parameters=bad_eps,
        ),
    ]


# -- central DP ---------------------------------------------------------------------------------------------
def _substitution_pairs(n: int, grid: tuple[float, ...]) -> list[Pair]:
    """Every data set of n grid values and every substitution neighbour of it (both orders)."""
    import itertools

    pairs = []
    for row in itertools.combinations_with_replacement(grid, n):
        for pos in range(n):
            for v in grid:
                if v != row[pos]:
                    other = list(row)
                    other[pos] = v
                    pairs.append((np.array(row), np.array(sorted(other)), 1.0))
    return pairs


def _add_remove_pairs(n: int, grid: tuple[float, ...]) -> list[Pair]:
    """Every data set of n grid values and every data set with one more record (both orders)."""
    import itertools

    pairs = []
    for row in itertools.combinations_with_replacement(grid, n):
        for v in grid:
            bigger = np.array(sorted((*row, v)))
            pairs += [(np.array(row), bigger, 1.0), (bigger, np.array(row), 1.0)]
    return pairs


def smooth_sensitivity_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """f + S_β·Z on both sides, exactly (statistic value and smooth sensitivity of the mechanism)."""
    stat, cal = mechanism.statistic, mechanism.calibration
    f, f2 = stat.value(x), stat.value(x_prime)
    s, s2 = mechanism.smooth_sensitivity(x), mechanism.smooth_sensitivity(x_prime)
    guarantee = mechanism.guarantee
    return location_scale_loss(cal.noise, f, s, f2, s2, guarantee.is_pure, guarantee.epsilon * d)


def _laplace_loss(shift: float, scale: float) -> float:
    """sup log ratio of Lap(0, b) against Lap(shift, b): |shift|/b (checked on a grid by the audit tool)."""
    from smoothdp.noise import Laplace

    return location_scale_loss(Laplace(scale), 0.0, 1.0, shift, 1.0, True, 0.0)


def gs_median_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    stat = mechanism.statistic
    return _laplace_loss(stat.value(x_prime) - stat.value(x), mechanism._noise.scale)


def gs_mean_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """(noisy sum, noisy count): the two independent Laplace losses add (the ratio is post-processing)."""
    return _laplace_loss(float(np.sum(x_prime) - np.sum(x)), mechanism._sum_noise.scale) + _laplace_loss(
        float(len(x_prime) - len(x)), mechanism._count_noise.scale
    )


def gaussian_mean_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """sup_α D_α(N(f, σ²) ‖ N(f', σ²))/α by numerical integration (exactly Δ²/(2σ²) for a true Gaussian)."""
    from scipy import integrate

    sigma = mechanism.sigma(len(x))
    shift = float(np.mean(x_prime) - np.mean(x))
    worst = 0.0
    for alpha in (1.5, 2.0, 4.0, 16.0):

        def integrand(t: float, alpha: float = alpha) -> float:
            z0, z1 = t / sigma, (t - shift) / sigma
            return float(
                np.exp(-(alpha * z0 * z0 + (1 - alpha) * z1 * z1) / 2) / (sigma * np.sqrt(2 * np.pi))
            )

        value, _ = integrate.quad(integrand, -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=200)
        worst = max(worst, np.log(value) / (alpha - 1) / alpha)
    return worst


def _laplace_hockey(epsilon: float, a: float) -> float:
    """∫ max(0, p − e^ε q) for Laplace laws whose centres differ by a noise scales."""
    a = abs(a)
    if epsilon >= a:
        return 0.0
    if epsilon <= -a:
        return float(-np.expm1(epsilon))
    return float(-np.expm1((epsilon - a) / 2.0))


def ptr_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """Exact hockey-stick δ of (D̃, value or ⊥), D̃ = min(D, C) + Lap(1/ε₁), value = f + Lap(b/ε₂) if D̃ ≥ T.

    δ = ∫_{D̃<T} (p − e^ε q)_+ + ∫_{D̃≥T} p(D̃)·HS_value(ε − ln p(D̃)/q(D̃)) dD̃, by quadrature on the pieces
    between the kinks D, D', T.
    """
    from scipy import integrate

    from smoothdp.central.frameworks.ptr import distance_to_instability

    stat = mechanism.statistic
    e1, threshold, eps = mechanism.epsilon_test, mechanism.threshold, mechanism.guarantee.epsilon * d
    dist = distance_to_instability(stat, x, mechanism.bound)
    dist2 = distance_to_instability(stat, x_prime, mechanism.bound)
    value_shift = (stat.value(x_prime) - stat.value(x)) / (mechanism.bound / mechanism.epsilon_release)
    cap = mechanism.distance_cap  # the released noisy distance is min(D, C) + Lap(1/ε₁), C public
    dist, dist2 = min(dist, cap), min(dist2, cap)

    def p(t: float, centre: float) -> float:
        return 0.5 * e1 * np.exp(-e1 * abs(t - centre))

    def below(t: float) -> float:
        return max(0.0, p(t, dist) - np.exp(eps) * p(t, dist2))

    def above(t: float) -> float:
        log_ratio = e1 * (abs(t - dist2) - abs(t - dist))
        return p(t, dist) * _laplace_hockey(eps - log_ratio, value_shift)

    kinks = sorted({dist, dist2, threshold})
    pieces = [-np.inf, *kinks, np.inf]
    total = 0.0
    for lo, hi in itertools.pairwise(pieces):
        part = below if hi <= threshold else above
        total += integrate.quad(part, lo, hi, epsabs=1e-15, epsrel=1e-10, limit=200)[0]
    return total


def sample_aggregate_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """Exact: every labelling of the records enumerated, the Laplace mixture densities compared."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "central"))
    from test_sample_aggregate_neighbours import _exact_law, _max_privacy_loss

    return _max_privacy_loss(
        _exact_law(mechanism, list(x)), _exact_law(mechanism, list(x_prime)), mechanism._noise.scale
    )


def ratio_naive_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """Naive ratio: Lap(2/ε) on a and on b (the ratio is post-processing): the two losses add."""
    (a, b), (a2, b2) = x, x_prime
    scale = 2.0 / mechanism.epsilon
    return _laplace_loss(a2 - a, scale) + _laplace_loss(b2 - b, scale)


def bounded_ls_loss(mechanism: Any, x: Any, x_prime: Any, d: float) -> float:
    """With the public bound g = 1 (0-DP, always ≥ LS = 1 for a count): (g, f + Lap(1/ε₂)), δ at ε."""
    shift = (mechanism.statistic(x_prime) - mechanism.statistic(x)) * mechanism.epsilon_2
    return _laplace_hockey(mechanism.guarantee.epsilon * d, shift)


def _scaled_attr(name: str, factor: float = 0.5) -> Callable[[Any], Any]:
    def twin(mechanism: Any) -> Any:
        import copy

        broken = copy.copy(mechanism)
        noise = getattr(mechanism, name)
        setattr(broken, name, noise.with_scale(noise.scale * factor))
        return broken

    return twin


def _attr_times(name: str, factor: float) -> Callable[[Any], Any]:
    def twin(mechanism: Any) -> Any:
        import copy

        broken = copy.copy(mechanism)
        setattr(broken, name, getattr(mechanism, name) * factor)
        return broken

    return twin


def _broken_ptr(mechanism: Any) -> Any:
    """PTR that tests with the published threshold ln(2/δ)/(2ε₁) (too low: it releases unstable data)."""
    import copy

    twin = copy.copy(mechanism)
    twin.threshold = np.log(2.0 / mechanism.delta) / (2.0 * mechanism.epsilon_test)
    return twin


def _broken_gaussian(mechanism: Any) -> Any:
    import copy

    twin = copy.copy(mechanism)
    sigma = mechanism.sigma
    twin.sigma = lambda n: 0.7 * sigma(n)
    return twin


def _size_sensitive(block: np.ndarray) -> float:
    """1 on the blocks [0, 0] and [1], else 0: an f that sees block sizes."""
    return 1.0 if sorted(block.tolist()) in ([0.0, 0.0], [1.0]) else 0.0


def _central_cases() -> list[Case]:
    from smoothdp.central import (
        BoundedLocalSensitivity,
        GaussianMean,
        GlobalSensitivityMean,
        GlobalSensitivityMedian,
        Mean,
        Median,
        PrivateRatio,
        ProposeTestRelease,
        SampleAndAggregate,
        SmoothSensitivityMechanism,
        TrimmedMean,
    )

    grid = (0.0, 0.1, 0.5, 0.55, 1.0)
    data = np.array([0.2, 0.4, 0.45, 0.5, 0.9, 0.95, 0.3])
    bad_numerics = ({"numerics": "fast"}, ValueError, "numerics")
    bad_eps = [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        bad_numerics,
    ]
    median = Median(bounds=(0.0, 1.0))
    return [
        Case(
            mechanism=SmoothSensitivityMechanism,
            label="median, PolyPlace",
            build=lambda epsilon, **kw: SmoothSensitivityMechanism(median, epsilon=epsilon, **kw),
            data=data,
            neighbours=lambda: _substitution_pairs(5, grid),
            privacy_loss=smooth_sensitivity_loss,
            broken=_smaller_noise,
            bad_parameters=[
                *bad_eps,
                ({"df": 5}, TypeError, "df"),
                ({"delta": 1e-6}, ValueError, "delta"),
                ({"beta": 1.5}, ValueError, "beta"),
                ({"noise": "gauss"}, ValueError, "noise"),
            ],
        ),
        Case(
            mechanism=SmoothSensitivityMechanism,
            label="trimmed mean, Laplace (ε, δ)",
            build=lambda epsilon, **kw: SmoothSensitivityMechanism(
                TrimmedMean(1, bounds=(0.0, 1.0)),
                epsilon=epsilon,
                **{"noise": "laplace", "delta": 1e-4, **kw},
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(4, grid),
            privacy_loss=smooth_sensitivity_loss,
            broken=_smaller_noise,
            bad_parameters=[
                *bad_eps,
                ({"delta": 0.0}, ValueError, "delta"),
                ({"gamma": 3}, TypeError, "gamma"),
            ],
        ),
        Case(
            mechanism=SmoothSensitivityMechanism,
            label="mean, add/remove, Student's T",
            build=lambda epsilon, **kw: SmoothSensitivityMechanism(
                Mean(bounds=(0.0, 1.0)), epsilon=epsilon, **{"noise": "student_t", **kw}
            ),
            data=data,
            # n = 0 included: the empty data set releases around the midpoint with S_β(∅) = u − l.
            neighbours=lambda: _add_remove_pairs(3, grid) + _add_remove_pairs(0, grid),
            privacy_loss=smooth_sensitivity_loss,
            broken=lambda m: _smaller_noise(m, 0.1),  # T(3) with these constants reaches only ~0.6ε here
            bad_parameters=[*bad_eps, ({"gamma": 3}, TypeError, "gamma")],
        ),
        Case(
            mechanism=GlobalSensitivityMedian,
            build=lambda epsilon, **kw: GlobalSensitivityMedian(
                **{"bounds": (0.0, 1.0), "epsilon": epsilon, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(5, grid),
            privacy_loss=gs_median_loss,
            broken=_scaled_attr("_noise"),
            bad_parameters=[*bad_eps, ({"bounds": (1.0, 0.0)}, ValueError, "bounds")],
        ),
        Case(
            mechanism=GlobalSensitivityMean,
            build=lambda epsilon, **kw: GlobalSensitivityMean(
                **{"bounds": (-1.0, 3.0), "epsilon": epsilon, **kw}
            ),
            data=data,
            neighbours=lambda: _add_remove_pairs(3, (-1.0, 0.0, 3.0)) + _add_remove_pairs(0, (-1.0, 3.0)),
            privacy_loss=gs_mean_loss,
            broken=_scaled_attr("_sum_noise"),
            bad_parameters=[*bad_eps, ({"bounds": (0.0, np.inf)}, ValueError, "bounds")],
        ),
        Case(
            mechanism=GaussianMean,
            build=lambda epsilon, **kw: GaussianMean(**{"bounds": (0.0, 1.0), "rho": epsilon, **kw}),
            data=data,
            neighbours=lambda: _substitution_pairs(3, (0.0, 1.0)),
            privacy_loss=gaussian_mean_loss,
            broken=_broken_gaussian,
            bad_parameters=[
                ({"rho": 0.0}, ValueError, "rho"),
                ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
                bad_numerics,
            ],
            epsilon=0.5,
        ),
        Case(
            mechanism=ProposeTestRelease,
            build=lambda epsilon, **kw: ProposeTestRelease(
                median, **{"proposed_bound": 0.1, "epsilon": epsilon, "delta": 1e-3, **kw}
            ),
            data=data,
            neighbours=lambda: _substitution_pairs(5, grid),
            privacy_loss=ptr_loss,
            broken=_broken_ptr,
            bad_parameters=[
                *bad_eps,
                ({"delta": 0.0}, ValueError, "delta"),
                ({"proposed_bound": 0.0}, ValueError, "proposed_bound"),
                ({"test_fraction": 1.0}, ValueError, "test_fraction"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=SampleAndAggregate,
            build=lambda epsilon, **kw: SampleAndAggregate(
                _size_sensitive, **{"n_blocks": 2, "bounds": (0.0, 1.0), "epsilon": epsilon, **kw}
            ),
            data=np.array([0.0, 1.0, 0.0]),
            neighbours=lambda: [
                (np.array(a), np.array(b), 1.0)
                for a, b in [([0.0, 0.0], [0.0, 0.0, 1.0]), ([1.0], [0.0, 1.0]), ([0.0, 1.0], [1.0])]
            ],
            privacy_loss=sample_aggregate_loss,
            broken=_scaled_attr("_noise", 0.8),
            bad_parameters=[
                *bad_eps,
                ({"n_blocks": 0}, ValueError, "n_blocks"),
                ({"beta": 0.1}, TypeError, "beta"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=PrivateRatio,
            build=lambda epsilon, **kw: PrivateRatio(**{"epsilon": epsilon, "method": "naive", **kw}),
            data=(30, 100),
            neighbours=lambda: [
                ((a, b), (a + da, b + 1), 1.0) for a, b in [(0, 1), (5, 9), (40, 40)] for da in (0, 1)
            ],
            privacy_loss=ratio_naive_loss,
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"method": "exact"}, ValueError, "method")],
        ),
        Case(
            mechanism=BoundedLocalSensitivity,
            build=lambda epsilon, **kw: BoundedLocalSensitivity(
                lambda x: float(np.sum(x)),
                lambda x, rng: 1.0,
                **{"epsilon_1": 0.25 * epsilon, "epsilon_2": 0.75 * epsilon, "delta": 1e-6, **kw},
            ),
            data=np.array([0.0, 1.0, 1.0]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 1.0)),
            privacy_loss=bounded_ls_loss,
            broken=_attr_times("epsilon_2", 1.0 / 0.3),
            bad_parameters=[
                ({"epsilon_1": 0.0}, ValueError, "epsilon_1"),
                ({"delta": 1.0}, ValueError, "delta"),
                ({"magnitude": 0.0}, ValueError, "magnitude"),
                bad_numerics,
            ],
        ),
    ]


CASES += _geo_cases() + _central_cases()

from quantile_cases import quantile_cases  # noqa: E402 (registry cases of smoothdp.central.quantiles)

CASES += quantile_cases()

from mean_cases import mean_cases  # noqa: E402 (registry cases of smoothdp.central.moments.private_clip)

CASES += mean_cases()

from counting_cases import counting_cases  # noqa: E402 (registry cases of smoothdp.central.counting.queries)

CASES += counting_cases()

from moment_cases import moment_cases  # noqa: E402 (registry cases of the means and variances)

CASES += moment_cases()

from ratio_mean_cases import ratio_mean_cases  # noqa: E402 (registry case of the add/remove mean)

CASES += ratio_mean_cases()


# -- JointExp's default on a lattice: greedy splits and the private lattice test ----------------------------
def _greedy_joint_cases() -> list[Case]:
    """The lattice default of JointQuantiles (docs/theory/quantiles.md#jointexp-on-a-public-lattice): the
    exact law of everything released (noisy count and values) from the definition, in
    tests/central/greedy_law.py."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "central"))
    from greedy_law import greedy_privacy_loss, nested_privacy_loss

    from smoothdp.central import JointQuantiles
    from smoothdp.central.quantiles.nested import NestedJointQuantiles

    def broken_nested(mech: Any) -> Any:
        """The twin that samples at 2ε (its kernel forgets the utility's sensitivity 2) and claims ε."""
        import copy

        twin = copy.copy(mech)
        twin.declared = copy.copy(mech.declared)
        twin.declared.epsilon = 2.0 * mech.declared.epsilon
        twin._margins = {}
        return twin

    return [
        Case(
            mechanism=JointQuantiles,
            label="lattice 0.25, greedy splits + lattice test",
            build=lambda epsilon, **kw: JointQuantiles(
                **{"qs": [0.25, 0.75], "epsilon": epsilon, "bounds": (0.0, 1.0), "lattice": 0.25, **kw}
            ),
            data=np.array([0.25, 0.5, 0.5, 0.75]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.25, 0.3, 0.5, 1.0)),
            privacy_loss=lambda mech, x, x2, d: greedy_privacy_loss(mech, x, x2),
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                ({"epsilon": 0.0}, ValueError, "epsilon"),
                ({"atoms": "medium"}, ValueError, "atoms"),
                ({"lattice": 1 / 3}, ValueError, "lattice"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=NestedJointQuantiles,
            label="lattice 0.25, two halvings, heavy outcomes",
            build=lambda epsilon, **kw: NestedJointQuantiles(
                **{
                    "qs": [0.25, 0.75],
                    "epsilon": epsilon,
                    "bounds": (0.0, 1.0),
                    "lattice": 0.25,
                    "halvings": 2,
                    **kw,
                }
            ),
            data=np.array([0.25, 0.25, 0.3, 0.75]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.2, 0.25, 0.3, 1.0)),
            privacy_loss=lambda mech, x, x2, d: nested_privacy_loss(mech, x, x2),
            broken=broken_nested,
            bad_parameters=[
                ({"epsilon": 0.0}, ValueError, "epsilon"),
                ({"halvings": -1}, ValueError, "halvings"),
                ({"halvings": 1.5}, TypeError, "halvings"),
                ({"lattice": 1 / 3}, ValueError, "lattice"),
            ],
            epsilon=2.0,
        ),
    ]


CASES += _greedy_joint_cases()

from new_mechanism_cases import new_mechanism_cases  # noqa: E402 (no bounds, inverse sensitivity, PLM)

CASES += new_mechanism_cases()
