"""``smoothdp.mean``, ``var`` and ``std``: the single-column moments
(docs/central.md#means-variances-and-standard-deviations).

Every entry point follows the statistic contract: keyword-only ``epsilon``, ``bounds``, ``neighbours``,
``delta``, ``rng``, ``accountant``; the release's guarantee is exactly the ε passed, under the relation named
(``release.guarantee.neighbours``), so an accountant of that relation is charged ε.

**Under substitution** (the default; n = len(x) public) ``method=`` is

* ``"clipped"``: the clipped mean (variance) on the declared bounds with staircase noise of its global
  sensitivity (:class:`~smoothdp.central.moments.clipped.ClippedMean`,
  :class:`~smoothdp.central.moments.clipped.ClippedVariance`);
* ``"private_range"``: the same on a range found privately inside the bounds with a small share of ε
  (:mod:`smoothdp.central.moments.on_private_range`);
* ``"auto"`` (default): ``"private_range"`` when ε·n ≥ 2000, else ``"clipped"``
  (:func:`~smoothdp.central.moments.on_private_range.choose_moment_method`, public values only);
* the mean only: ``"smooth_sensitivity"``, the add/remove smooth-sensitivity mean run at ε/2, which is ε-DP
  under substitution by group privacy
  (docs/theory/privacy-definitions.md#converting-between-neighbour-relations).

**Under add/remove** (n private; an empty x is valid) the choice depends on no function of n: the mean's
``"auto"`` is ``"ratio"`` (:class:`~smoothdp.central.moments.ratio_mean.RatioMean`: a noisy count, then a
centred noisy sum, on a private range when the noisy count is large), also ``"smooth_sensitivity"``
(:class:`~smoothdp.central.smooth_sensitivity.statistics.Mean`), ``"noisy_sum"``
(:class:`~smoothdp.central.baselines.GlobalSensitivityMean`); the variance's is ``"noisy_moments"``
(:class:`~smoothdp.central.moments.noisy_sums.NoisyMoments`).

``std`` is the square root of the variance release (post-processing) by the same mechanism.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from smoothdp.accounting import Accountant
from smoothdp.calibration import DEFAULT_NOISE, noise_options_given
from smoothdp.central.moments.clipped import MOMENT_NOISES, ClippedMean, ClippedVariance, check_ddof
from smoothdp.central.moments.noisy_sums import NoisyMoments
from smoothdp.central.moments.on_private_range import RangeMean, RangeVariance, choose_moment_method
from smoothdp.central.moments.range_sweep import neighbours_of
from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
from smoothdp.central.smooth_sensitivity.statistics import Mean
from smoothdp.exact import check_numerics
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.scale.engine import as_records, check_engine, public_size
from smoothdp.validation import check_bool, check_bounds, check_delta, check_epsilon

__all__ = ["MEAN_METHODS", "VARIANCE_METHODS", "mean", "std", "var"]

#: method= of ``mean`` under each relation.
MEAN_METHODS: dict[str, tuple[str, ...]] = {
    "substitution": ("auto", "clipped", "private_range", "smooth_sensitivity"),
    "add_remove": ("auto", "ratio", "smooth_sensitivity", "noisy_sum"),
}
#: method= of ``var`` and ``std`` under each relation.
VARIANCE_METHODS = {
    "substitution": ("auto", "clipped", "private_range"),
    "add_remove": ("auto", "noisy_moments"),
}


def _method(method: Any, neighbours: str, table: dict[str, tuple[str, ...]], what: str) -> str:
    allowed = table[neighbours]
    if not isinstance(method, str) or method not in allowed:
        others = [r for r, names in table.items() if r != neighbours and method in names]
        hint = f" ({method!r} is a method under neighbours={others[0]!r})" if others else ""
        raise ValueError(
            f"method must be one of {allowed} for the {what} under neighbours={neighbours!r}; "
            f"got {method!r}{hint}"
        )
    return method


#: The keywords, beyond the contract's, that each method takes.
_TAKES = {
    "clipped": "noise ('staircase' or 'laplace')",
    "private_range": "noise ('staircase' or 'laplace'), range_fraction",
    "smooth_sensitivity": "noise (a smooth-sensitivity family), beta, delta (noise='laplace'), noise options",
    "noisy_sum": "none",
    "ratio": "noise ('staircase' or 'laplace'), range_fraction, released_count, centre",
    "noisy_moments": "noise ('staircase' or 'laplace'), released_count",
}


def _only(method: str, **given: Any) -> None:
    """Refuse keywords that do not apply to ``method`` (given as name=(value, default)), naming the ones
    that do."""
    extra = [name for name, (value, default) in given.items() if value is not default and value != default]
    if extra:
        raise TypeError(
            f"method={method!r} does not take {', '.join(map(repr, extra))}; its own keywords: "
            f"{_TAKES[method]}"
        )


class _AtHalfUnderSubstitution(Mechanism):
    """An add/remove mechanism built at ε/2, declared ε-DP under substitution (group privacy, k = 2:
    docs/theory/privacy-definitions.md#converting-between-neighbour-relations)."""

    def __init__(self, inner: Mechanism, epsilon: float) -> None:
        self.inner = inner
        self.half = 0.5 * epsilon  # what the inner add/remove mechanism was built at
        self.guarantee = PureDP(epsilon, neighbours="substitution")
        self.calibration = inner.calibration
        self.name = f"{inner.name} at ε/2 under add/remove, ε under substitution"  # type: ignore[misc]
        self.proof = inner.proof  # type: ignore[misc]
        self.source = f"{inner.source}; group privacy (k = 2)"

    @property
    def statistic_name(self) -> str:
        return self.inner.statistic_name

    def _prepare(self, data: Any) -> Any:
        return self.inner._prepare(data)

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        inner = self.inner._release(prepared, rng)  # charged here, for the declared guarantee
        details = {**inner.details, "neighbours": "substitution"}
        details["epsilon_add_remove"] = self.half
        return dataclasses.replace(
            inner, guarantee=self.guarantee, mechanism=self.name, source=self.source, details=details
        )


class _Clamped(Mechanism):
    """A mechanism whose release is clamped into [lower, upper] (post-processing, same guarantee)."""

    def __init__(self, inner: Mechanism, lower: float, upper: float) -> None:
        self.inner, self.lower, self.upper = inner, lower, upper
        self.guarantee = inner.guarantee
        self.calibration = inner.calibration
        self.name = inner.name  # type: ignore[misc]
        self.proof = inner.proof  # type: ignore[misc]
        self.source = inner.source

    @property
    def statistic_name(self) -> str:
        return self.inner.statistic_name

    def _prepare(self, data: Any) -> Any:
        return self.inner._prepare(data)

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        out = self.inner._release(prepared, rng)
        value = float(np.clip(out.value, self.lower, self.upper)) if np.isfinite(out.value) else out.value
        if not np.isfinite(value):  # a noisy ratio with a noisy count near 0: the public midpoint
            value = 0.5 * self.lower + 0.5 * self.upper
        return dataclasses.replace(out, value=value, details={**out.details, "clamp": True})


def _run(mech: Mechanism, x: Any, bounds: tuple[float, float], clip: bool, engine: Any, **kw: Any) -> Release:
    check_engine(engine)
    data = x if engine is None else as_records(x, *bounds, clip=clip, engine=engine)
    return mech.release(data, **kw)


def _named(release: Release, method: str) -> Release:
    """The release with ``details["method"]`` set (public: the method follows from public values)."""
    return dataclasses.replace(release, details={**release.details, "method": method})


def mean(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float] | None,
    neighbours: str = "substitution",
    method: str = "auto",
    delta: float = 0.0,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    clip: bool = True,
    clamp: bool = True,
    noise: str | None = None,
    beta: float | None = None,
    range_fraction: float | None = None,
    numerics: str = "exact",
    engine: Any = None,
    df: float | None = None,
    gamma: float | None = None,
    constants: str | None = None,
    released_count: float | None = None,
    centre: float | None = None,
) -> Release:
    """Private mean of x in ``bounds``, pure ε-DP under ``neighbours`` at the ε passed.

    Parameters
    ----------
    x
        1-D data, one record per person (NaN: imputed with the bounds' midpoint; outside: clipped).
    epsilon
        ε > 0: what the release costs, under ``neighbours``.
    bounds
        Public ``(lower, upper)``; the release lies in them (``clamp=True``). ``None``: no bounds at all,
        the clipped mean on a private range found with 1/4 of ε
        (:func:`smoothdp.central.no_bounds.moment_without_bounds`; ``method="auto"`` only; NaN → 0).
    neighbours
        ``"substitution"`` (default: one record replaced, n public) or ``"add_remove"`` (n private; empty
        x allowed).
    method
        Under substitution: ``"auto"`` (default: ``"private_range"`` when ε·n ≥ 2000, else ``"clipped"``),
        ``"clipped"`` (clipped mean on the declared bounds + staircase noise of scale (u − l)/n),
        ``"private_range"`` (clipped on a private range:
        :class:`~smoothdp.central.moments.on_private_range.RangeMean`), ``"smooth_sensitivity"`` (the
        add/remove mean at ε/2). Under add/remove: ``"auto"`` = ``"ratio"`` (a centred noisy sum over a
        noisy count, on a private range when ε·Ñ is large:
        :class:`~smoothdp.central.moments.ratio_mean.RatioMean`; ``"smooth_sensitivity"`` when ``beta``,
        ``delta``, a noise family's options or a smooth-sensitivity noise family are given),
        ``"smooth_sensitivity"`` (S_β = max((u − l)/n, (u − l)e^{−β(n−1)}),
        docs/theory/smooth-sensitivity.md#mean-with-clipping), or ``"noisy_sum"`` (noisy sum / noisy count,
        uncentred).
    delta
        δ: only for ``method="smooth_sensitivity"`` with ``noise="laplace"`` under add/remove (else 0).
    noise
        ``"staircase"`` (default) or ``"laplace"`` for ``"clipped"``/``"private_range"``; a smooth-sensitivity
        noise family (default ``"polyplace"``) for ``"smooth_sensitivity"``.
    beta
        The smoothness β of the smooth sensitivity (``"smooth_sensitivity"`` only; ``None``: the
        calibration's data-independent default).
    df
        Degrees of freedom of Student's T (``"smooth_sensitivity"`` with ``noise="student_t"`` only).
    gamma
        Exponent γ > 1 of the generalized Cauchy (``"smooth_sensitivity"`` with ``noise="cauchy"`` only).
    constants
        ``"bun_steinke"`` (Student's T) or ``"nrs"`` (Cauchy): the papers' constants, for comparison.
    range_fraction
        Share of ε spent on the range (``"private_range"``, or ``"auto"`` when it uses the range); default:
        :func:`~smoothdp.central.moments.on_private_range.range_share`. Under add/remove (``"ratio"``): the
        range's share in [0, 1/2] (default 0.1; 0: no range, the sum gets the rest).
    released_count
        Under add/remove (``"ratio"``) only: a noisy count of these same records already released privately
        (a table's count column; never the true n). The mean then draws no count of its own and its sum gets
        the count's 30% of ε (docs/theory/tables.md#a-mean-beside-a-count).
    centre
        Under add/remove (``"ratio"``) only: a public point in the bounds, a guess of the mean made without
        these records, on which the sum is centred when it runs on the whole bounds (default: their
        midpoint; docs/theory/moments.md#a-public-centre).
    rng, accountant, clip, clamp, numerics, engine
        As :func:`smoothdp.median`.

    Returns
    -------
    Release
        ``details["method"]`` says which ran; ``details["clip_range"]`` the range used (private_range).
    """
    noise_options = noise_options_given(df=df, gamma=gamma, constants=constants)
    eps = check_epsilon(epsilon)
    if bounds is None and (released_count is not None or centre is not None):
        raise TypeError(
            "released_count and centre apply to method='ratio' with bounds, under neighbours='add_remove'"
        )
    if bounds is None:
        return _without_bounds(
            x, "mean", epsilon=eps, neighbours=neighbours, method=method, delta=delta, beta=beta,
            range_fraction=range_fraction, noise=noise, engine=engine, clip=clip, clamp=clamp,
            numerics=numerics, rng=rng, accountant=accountant, **noise_options,
        )  # fmt: skip
    lower, upper = check_bounds(bounds, name="bounds (lower, upper)")
    relation = neighbours_of(neighbours)
    chosen = _method(method, relation, MEAN_METHODS, "mean")
    delta = check_delta(delta)
    check_numerics(numerics)
    clip, clamp = check_bool("clip", clip), check_bool("clamp", clamp)
    run = {"accountant": accountant, "rng": rng}
    if chosen == "auto" and relation == "add_remove":
        # Smooth-sensitivity options given (β, δ, a noise family's options or a family the ratio does not
        # take): only that method uses them, as in quantile's "auto".
        ss_only = beta is not None or delta or noise_options or noise not in (None, *MOMENT_NOISES)
        chosen = "smooth_sensitivity" if ss_only else "ratio"
    if chosen == "auto":
        chosen = choose_moment_method(n=public_size(x), epsilon=eps)
    if chosen in ("clipped", "private_range"):
        options = {k: (v, None) for k, v in noise_options.items()}
        _only(
            chosen, delta=(delta, 0.0), beta=(beta, None), released_count=(released_count, None),
            centre=(centre, None), **options,
        )  # fmt: skip
        common: dict[str, Any] = {"epsilon": eps, "bounds": (lower, upper), "noise": noise or "staircase"}
        common["clip"] = clip
        common.update(clamp=clamp, numerics=numerics)
        if chosen == "clipped":
            _only(chosen, range_fraction=(range_fraction, None))
            mech: Mechanism = ClippedMean(**common)
        else:
            mech = RangeMean(range_fraction=range_fraction, **common)
        return _run(mech, x, (lower, upper), clip, engine, **run)
    if chosen == "ratio":
        from smoothdp.central.moments.ratio_mean import RatioMean

        _only(chosen, delta=(delta, 0.0), beta=(beta, None))
        _only(chosen, **{k: (v, None) for k, v in noise_options.items()})
        mech = RatioMean(
            epsilon=eps, bounds=(lower, upper), noise=noise or "staircase", clip=clip, clamp=clamp,
            numerics=numerics, range_fraction=range_fraction, released_count=released_count, centre=centre,
        )  # fmt: skip
        return _run(mech, x, (lower, upper), clip, engine, **run)
    _only(
        chosen, range_fraction=(range_fraction, None), released_count=(released_count, None),
        centre=(centre, None),
    )  # fmt: skip
    if chosen == "noisy_sum":
        from smoothdp.central.baselines import GlobalSensitivityMean  # it loads scipy (the ratio's bounds)

        _only(chosen, noise=(noise, None), delta=(delta, 0.0), beta=(beta, None))
        _only(chosen, **{k: (v, None) for k, v in noise_options.items()})
        mech = GlobalSensitivityMean(bounds=(lower, upper), epsilon=eps, clip=clip, numerics=numerics)
        mech = _Clamped(mech, lower, upper) if clamp else mech
        return _named(_run(mech, x, (lower, upper), clip, engine, **run), chosen)
    # smooth_sensitivity
    if relation == "substitution" and delta:
        raise ValueError("delta applies to method='smooth_sensitivity' under neighbours='add_remove' only")
    ss = SmoothSensitivityMechanism(
        Mean(bounds=(lower, upper), clip=clip),
        epsilon=eps if relation == "add_remove" else eps / 2,
        delta=delta,
        beta=beta,
        noise=noise or DEFAULT_NOISE,
        numerics=numerics,
        **noise_options,
    )
    mech = _Clamped(ss, lower, upper) if clamp else ss
    if relation == "substitution":
        mech = _AtHalfUnderSubstitution(mech, eps)
    return _named(_run(mech, x, (lower, upper), clip, engine, **run), chosen)


def _without_bounds(
    x: ArrayLike,
    statistic: str,
    *,
    epsilon: float,
    neighbours: str,
    method: str,
    delta: float,
    engine: Any,
    clip: bool,
    clamp: bool,
    noise: str | None,
    numerics: str,
    rng: SeedLike,
    accountant: Accountant | None,
    ddof: int = 1,
    **unused: Any,
) -> Release:
    """``bounds=None``: checks the options that apply, then
    :func:`~smoothdp.central.no_bounds.moment_without_bounds`."""
    from smoothdp.central.no_bounds import moment_without_bounds

    relation = neighbours_of(neighbours)
    if method != "auto":
        raise ValueError(f"bounds=None supports method='auto' only (a clipped {statistic} on a private "
                         f"range); got method={method!r}")  # fmt: skip
    given = [name for name, value in unused.items() if value is not None]
    if check_delta(delta) or given:
        raise ValueError(
            f"bounds=None takes no {', '.join(given) or 'delta'}: the release is a pure ε-DP clipped "
            f"{statistic} on a private range"
        )
    if engine is not None:
        raise ValueError("engine= needs bounds (lower, upper); with bounds=None pass the data in memory")
    if noise not in (None, *MOMENT_NOISES):
        raise ValueError(f"noise must be one of {MOMENT_NOISES} with bounds=None; got {noise!r}")
    check_bool("clip", clip)  # records are always clipped into the range found
    check_numerics(numerics)
    n = None if relation == "add_remove" else public_size(x)
    return moment_without_bounds(
        x, statistic=statistic, epsilon=epsilon, neighbours=relation, n=n, ddof=ddof,
        noise=noise or "staircase", clamp=check_bool("clamp", clamp), numerics=numerics, rng=rng,
        accountant=accountant,
    )  # fmt: skip


def _variance(
    x: ArrayLike,
    *,
    root: bool,
    epsilon: float,
    bounds: tuple[float, float] | None,
    neighbours: str,
    method: str,
    ddof: int,
    delta: float,
    rng: SeedLike,
    accountant: Accountant | None,
    clip: bool,
    clamp: bool,
    noise: str | None,
    range_fraction: float | None,
    numerics: str,
    engine: Any,
    released_count: float | None = None,
) -> Release:
    eps = check_epsilon(epsilon)
    if bounds is None and released_count is not None:
        raise TypeError("released_count applies to method='noisy_moments' with bounds, under add/remove")
    if bounds is None:
        return _without_bounds(
            x, "std" if root else "var", epsilon=eps, neighbours=neighbours, method=method, delta=delta,
            range_fraction=range_fraction, noise=noise, engine=engine, clip=clip, clamp=clamp,
            numerics=numerics, rng=rng, accountant=accountant, ddof=ddof,
        )  # fmt: skip
    lower, upper = check_bounds(bounds, name="bounds (lower, upper)")
    relation = neighbours_of(neighbours)
    chosen = _method(method, relation, VARIANCE_METHODS, "std" if root else "variance")
    if check_delta(delta):
        raise ValueError("delta must be 0: the variance's mechanisms are pure ε-DP")
    check_ddof(ddof)
    clip, clamp = check_bool("clip", clip), check_bool("clamp", clamp)
    common: dict[str, Any] = {"epsilon": eps, "bounds": (lower, upper), "ddof": ddof, "root": root}
    common.update(noise=noise or "staircase", clip=clip, clamp=clamp, numerics=numerics)
    if chosen == "auto":
        by_size = relation == "substitution"
        chosen = choose_moment_method(n=public_size(x), epsilon=eps) if by_size else "noisy_moments"
    if chosen != "noisy_moments":
        _only(chosen, released_count=(released_count, None))
    if chosen == "private_range":
        mech: Mechanism = RangeVariance(range_fraction=range_fraction, **common)
    else:
        _only(chosen, range_fraction=(range_fraction, None))
        noisy = NoisyMoments(released_count=released_count, **common) if chosen == "noisy_moments" else None
        mech = ClippedVariance(**common) if noisy is None else noisy
    return _run(mech, x, (lower, upper), clip, engine, accountant=accountant, rng=rng)


def var(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float] | None,
    neighbours: str = "substitution",
    method: str = "auto",
    ddof: int = 1,
    delta: float = 0.0,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    clip: bool = True,
    clamp: bool = True,
    noise: str | None = None,
    range_fraction: float | None = None,
    numerics: str = "exact",
    engine: Any = None,
    released_count: float | None = None,
) -> Release:
    """Private variance (1/(n − ddof))·Σ(x_i − x̄)² of x in ``bounds``: pure ε-DP under ``neighbours``.

    ``ddof=1`` (default): the sample variance (pandas, R and OpenDP's convention; numpy's ``var`` uses
    ``ddof=0``, the population variance, also accepted). Under substitution n > ddof is required.

    ``method``: under substitution ``"auto"`` (default: ``"private_range"`` when ε·n ≥ 2000, else
    ``"clipped"``), ``"clipped"`` (variance of the records clipped into the bounds + staircase noise of its
    sensitivity (u − l)²(n − 1)/(n(n − ddof)), docs/theory/moments.md#clipped-variance) or
    ``"private_range"`` (the same on a private range,
    :class:`~smoothdp.central.moments.on_private_range.RangeVariance`); under add/remove ``"auto"`` =
    ``"noisy_moments"`` (noisy count, sum and sum of squares,
    :class:`~smoothdp.central.moments.noisy_sums.NoisyMoments`). The release is clamped into
    [0, (b − a)²n/(4(n − ddof))] for the range [a, b] used (``clamp=True``). ``bounds=None``: the clipped
    variance on a private range found with 1/4 of ε
    (:func:`smoothdp.central.no_bounds.moment_without_bounds`). Other arguments as :func:`mean`; ``delta``
    must be 0; ``released_count`` (``"noisy_moments"`` only) as :func:`mean`'s: the count's 30% of ε then
    goes to the two sums.
    """
    return _variance(
        x, root=False, epsilon=epsilon, bounds=bounds, neighbours=neighbours, method=method, ddof=ddof,
        delta=delta, rng=rng, accountant=accountant, clip=clip, clamp=clamp, noise=noise,
        range_fraction=range_fraction, numerics=numerics, engine=engine, released_count=released_count,
    )  # fmt: skip


def std(
    x: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float] | None,
    neighbours: str = "substitution",
    method: str = "auto",
    ddof: int = 1,
    delta: float = 0.0,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    clip: bool = True,
    clamp: bool = True,
    noise: str | None = None,
    range_fraction: float | None = None,
    numerics: str = "exact",
    engine: Any = None,
    released_count: float | None = None,
) -> Release:
    """Private standard deviation: √ of the :func:`var` release (post-processing, same guarantee and
    arguments; ``ddof=1`` by default)."""
    return _variance(
        x, root=True, epsilon=epsilon, bounds=bounds, neighbours=neighbours, method=method, ddof=ddof,
        delta=delta, rng=rng, accountant=accountant, clip=clip, clamp=clamp, noise=noise,
        range_fraction=range_fraction, numerics=numerics, engine=engine, released_count=released_count,
    )  # fmt: skip


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
