"""``smoothdp.quantile(x, q, epsilon=1.0, bounds=(0, 100))`` and ``smoothdp.quantiles``: one quantile, or
several under one budget.

``method=`` (default ``"auto"``: chosen from public parameters only by
:func:`smoothdp.central.choose.choose_method`; the Release's ``details["method"]`` says which ran):
``"smooth_sensitivity"`` (the smooth-sensitivity quantile,
docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism), ``"exponential"`` (the
exponential-mechanism quantile, docs/theory/quantiles.md#the-exponential-mechanism-quantile), and for several
quantiles ``"recursive"``, ``"joint"``, ``"separate"``. ``bounds`` is ``(lower, upper)``, ``"private"``
(:class:`~smoothdp.central.unbounded.private_bounds.PrivateRange` with part of the budget) or ``None`` (a
private range from ε alone, :func:`smoothdp.central.no_bounds.release_in_private_range`); both go through
:func:`~smoothdp.central.unbounded.two_stage.release_within_found_bounds`. Pure ε-DP under
``neighbours`` (``"substitution"``, or ``"add_remove"`` for the exponential mechanism); ``smoothdp.median``
(:mod:`smoothdp.central.api`) is ``quantile(x, 0.5)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from smoothdp.accounting import Accountant
from smoothdp.calibration import DEFAULT_NOISE, noise_options_given
from smoothdp.central.choose import (
    MULTI_METHODS,
    SINGLE_METHODS,
    UNBOUNDED_METHODS,
    choose_beta,
    choose_method,
    evidence_chooses_atoms,
    narrow_bounds_first,
    selects_heavy_level,
)
from smoothdp.central.quantiles import (
    ExponentialQuantile,
    HeavyLevelOrSmoothQuantile,
    JointQuantiles,
    RecursiveQuantiles,
    check_lattice,
)
from smoothdp.central.quantiles.atoms import MULTISCALE, LatticeSpec
from smoothdp.central.quantiles.em_samplers import check_atom_choice
from smoothdp.central.quantiles.level_or_smooth import METHOD as HEAVY_OR_SMOOTH  # one quantile at large ε
from smoothdp.central.quantiles.multi import check_quantile_list
from smoothdp.central.quantiles.nested import DEFAULT_HALVINGS, NestedJointQuantiles
from smoothdp.central.smooth_sensitivity.mechanism import SmoothSensitivityMechanism
from smoothdp.central.smooth_sensitivity.statistics import Median, Quantile, Statistic
from smoothdp.central.unbounded.private_bounds import DEFAULT_RANGE_FRACTION, PrivateRange
from smoothdp.central.unbounded.two_stage import release_within_found_bounds
from smoothdp.exact import check_numerics
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import Release
from smoothdp.rng import SeedLike
from smoothdp.scale.engine import as_records, check_engine, public_size
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range

__all__ = ["quantile", "quantiles"]

Bounds = tuple[float, float] | str | None


def quantile(
    x: ArrayLike,
    q: float,
    *,
    epsilon: float,
    bounds: Bounds,
    method: str = "auto",
    clamp: bool = True,
    clip: bool = True,
    candidates: ArrayLike | None = None,
    lattice: LatticeSpec = MULTISCALE,
    atoms: str = "auto",
    scale: float = 1.0,
    noise: str = DEFAULT_NOISE,
    delta: float = 0.0,
    beta: float | None = None,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    engine: Any = None,
    neighbours: str = "substitution",
    _median: bool = False,
    df: float | None = None,
    gamma: float | None = None,
    constants: str | None = None,
) -> Release:
    """Private q-quantile x_(max(1, ⌈q·n⌉)) (numpy's ``inverted_cdf``) under substitution (under
    ``neighbours="add_remove"`` the exponential mechanism's target is q·n); other arguments as
    :func:`median`."""
    noise_options = noise_options_given(df=df, gamma=gamma, constants=constants)
    qq = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
    eps = check_epsilon(epsilon)
    check_numerics(numerics)
    _check_method(method, SINGLE_METHODS)
    check_lattice(lattice)  # validated whichever method runs (public: the spacing alone)
    check_atom_choice(atoms, "add_remove")  # the value (one quantile: a test under either relation)
    smooth_options = bool(noise != DEFAULT_NOISE or delta or beta is not None or noise_options)
    if bounds is None:
        if candidates is not None:
            raise TypeError("candidates need bounds (lower, upper); with bounds=None leave them out")
        if method in UNBOUNDED_METHODS and not smooth_options:
            from smoothdp.central.no_bounds import unbounded_quantile

            return unbounded_quantile(
                x,
                qq,
                epsilon=eps,
                method=method,
                numerics=numerics,
                rng=rng,
                accountant=accountant,
                neighbours=neighbours,
            )
    elif method == "unbounded":
        raise ValueError("method='unbounded' needs bounds=None (it looks for the quantile without bounds)")
    add_remove = _add_remove(neighbours, method, bounds, supported=("auto", "exponential"))
    n = 0 if add_remove else public_size(x)  # under add/remove n is private: nothing below may read it
    if add_remove and method == "auto":
        method = "exponential"
    heavy_or_smooth = False  # "auto" at large ε: a heavy level's atoms when one is selected, else smooth
    if method == "auto":
        method = choose_method(n=n, epsilon=eps, discrete=candidates is not None)
        if smooth_options:
            method = "smooth_sensitivity"  # smooth-sensitivity options given: only that method uses them
        heavy_or_smooth = method == "smooth_sensitivity" and not smooth_options
    if method in ("exponential", "inverse_sensitivity", "piecewise_laplace"):
        _no_noise_options(noise, delta, beta, noise_options)
    elif candidates is not None:
        raise TypeError(
            "candidates applies to method='exponential' only (the smooth-sensitivity release is continuous)"
        )

    def build(eps_main: float, lo: float, hi: float) -> Mechanism:
        if heavy_or_smooth and selects_heavy_level(
            n=n, epsilon=eps_main, bounds=(lo, hi), lattice=lattice, atoms=atoms
        ):
            return HeavyLevelOrSmoothQuantile(
                qq, epsilon=eps_main, bounds=(lo, hi), lattice=lattice, clip=clip, clamp=clamp,
                numerics=numerics,
            )  # fmt: skip
        if method in ("inverse_sensitivity", "piecewise_laplace"):
            from smoothdp.central.frameworks.inverse_sensitivity import InverseSensitivity
            from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace

            cls = InverseSensitivity if method == "inverse_sensitivity" else PiecewiseLaplace
            return cls(qq, epsilon=eps_main, bounds=(lo, hi), clip=clip, clamp=clamp, numerics=numerics)
        if method == "exponential":
            return ExponentialQuantile(
                qq,
                epsilon=eps_main,
                bounds=(lo, hi),
                candidates=candidates,
                lattice=lattice,
                atoms=atoms,
                halvings=DEFAULT_HALVINGS if add_remove else 0,
                clip=clip,
                clamp=clamp,
                numerics=numerics,
                neighbours=neighbours,
            )
        stat = Median(bounds=(lo, hi), clip=True) if _median else Quantile(qq, bounds=(lo, hi), clip=True)
        b = beta
        if b is None and noise == DEFAULT_NOISE:
            b = choose_beta(n=max(n, 1), epsilon=eps_main, bounds=(lo, hi), q=qq)
        return _SmoothQuantile(
            stat,
            epsilon=eps_main,
            delta=delta,
            beta=b,
            noise=noise,
            clip=clip,
            clamp=clamp,
            numerics=numerics,
            noise_options=noise_options,
        )

    return _run(
        x,
        build,
        epsilon=eps,
        bounds=bounds,
        scale=scale,
        numerics=numerics,
        rng=rng,
        accountant=accountant,
        method=method,
        engine=engine,
        clip=clip,
        qs=qq,
    )


def quantiles(
    x: ArrayLike,
    qs: ArrayLike,
    *,
    epsilon: float,
    bounds: Bounds,
    method: str = "auto",
    lattice: LatticeSpec = MULTISCALE,
    atoms: str = "auto",
    clamp: bool = True,
    clip: bool = True,
    scale: float = 1.0,
    numerics: str = "exact",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    engine: Any = None,
    neighbours: str = "substitution",
) -> Release:
    """Several private quantiles under one budget ε: one Release whose value is an array in the order of
    ``qs`` (any order, duplicates allowed). Pure ε-DP under substitution.

    ``method``: ``"auto"`` (one distinct quantile: the default of :func:`quantile`, the same release at the
    whole ε; several: JointExp when its certified float margin is small, else the recursive algorithm;
    when ε·n < 72·m, with m the number of distinct quantiles, JointExp over nested bounds: the declared
    bounds or one of their halvings is drawn together with the outputs, by the same exponential mechanism
    and the same ε, :class:`~smoothdp.central.quantiles.nested.NestedJointQuantiles`;
    ``details["bounds_used"]`` reports them), ``"joint_exp"`` (Gillenwater, Joseph &
    Kulesza, ICML 2021; docs/theory/quantiles.md#jointexp), ``"recursive"`` (Kaplan, Schnapp & Stemmer,
    ICML 2022; docs/theory/quantiles.md#recursive-quantiles), ``"exponential"`` or
    ``"smooth_sensitivity"`` (one release per distinct quantile with ε/m each, basic composition).
    ``lattice`` (default ``"multiscale"``, as :func:`median`; ``None``: the continuum): the public atoms of
    JointExp and of ``"exponential"``, on which tied values can be released exactly
    (docs/theory/quantiles.md#jointexp-on-a-public-lattice). ``atoms`` (``"auto"``, ``"test"``, ``"light"``,
    ``"heavy"``): the atoms' masses, a public choice as in :func:`median` (JointExp: ``"auto"`` runs its
    private selection only where it is confident). Other arguments as :func:`median`.

    ``neighbours="add_remove"`` (n private): ``method="auto"`` runs, for three distinct quantiles or more,
    the recursive algorithm (an addition touches one node per level: ε/L per node) with the lattice's
    tie-aware nodes, and for one or two, one exponential-mechanism quantile each at ε/m (the same budget per
    quantile, without the recursion's split at a tied value); every parameter public; JointExp, the
    smooth-sensitivity quantiles and the narrowing stage
    support substitution only (docs/theory/quantiles.md#adding-or-removing-a-record).
    """
    qarr = check_quantile_list(qs)
    eps = check_epsilon(epsilon)
    check_numerics(numerics)
    _check_method(method, MULTI_METHODS)
    check_lattice(lattice)  # validated whichever method runs (public: the spacing alone)
    check_atom_choice(atoms, "add_remove")  # the value (JointExp runs its test under substitution too)
    add_remove = _add_remove(neighbours, method, bounds, supported=("auto", "recursive", "exponential"))
    n = 0 if add_remove else public_size(x)  # under add/remove n is private: nothing below may read it
    unique, inverse = np.unique(qarr, return_inverse=True)

    def build(eps_main: float, lo: float, hi: float) -> Mechanism:
        chosen = method
        if add_remove and method == "auto":  # public: the number of distinct quantiles
            chosen = "exponential" if unique.size <= 2 else "recursive"
        if chosen in ("auto", "joint_exp"):
            joint = JointQuantiles(
                qarr,
                epsilon=eps_main,
                bounds=(lo, hi),
                lattice=lattice,
                atoms=atoms,
                clip=clip,
                clamp=clamp,
                numerics=numerics,
            )
        if chosen == "auto":
            narrow = narrow_bounds_first(n=n, epsilon=eps_main, n_quantiles=unique.size)
            evidence = atoms == "auto" and evidence_chooses_atoms(n=n, epsilon=eps_main, lattice=lattice)
            if unique.size > 1 and (narrow or evidence):
                nested = NestedJointQuantiles(
                    qarr, epsilon=eps_main, bounds=(lo, hi), lattice=lattice, clip=clip, clamp=clamp,
                    numerics=numerics, halvings=DEFAULT_HALVINGS if narrow else 0,
                )  # fmt: skip
                if nested.admissible(n):
                    return nested
        if chosen == "auto":
            # One distinct quantile is the single-quantile default (exponential mechanism on the lattice or
            # smooth sensitivity, at the whole ε), as quantile(x, q) releases it.
            chosen = choose_method(
                n=n, epsilon=eps_main, n_quantiles=unique.size, joint_ok=joint.admissible(n)
            )
            if chosen == "smooth_sensitivity" and selects_heavy_level(
                n=n, epsilon=eps_main, bounds=(lo, hi), lattice=lattice, atoms=atoms
            ):
                chosen = HEAVY_OR_SMOOTH
        if chosen == "joint_exp":
            return joint
        if chosen == "recursive":
            return RecursiveQuantiles(
                qarr,
                epsilon=eps_main,
                bounds=(lo, hi),
                clip=clip,
                clamp=clamp,
                numerics=numerics,
                neighbours=neighbours,
                lattice=lattice if add_remove else None,
                atoms=atoms if add_remove else "auto",
            )
        return _Separate(
            qarr,
            unique,
            inverse,
            chosen,
            epsilon=eps_main,
            bounds=(lo, hi),
            clip=clip,
            clamp=clamp,
            numerics=numerics,
            n=n,
            neighbours=neighbours,
            lattice=lattice,
            atoms=atoms,
        )

    return _run(
        x,
        build,
        epsilon=eps,
        bounds=bounds,
        scale=scale,
        numerics=numerics,
        rng=rng,
        accountant=accountant,
        method=method,
        engine=engine,
        clip=clip,
        qs=qarr,
    )


# -- helpers ---------------------------------------------------------------------------------------------
def _check_method(method: Any, allowed: tuple[str, ...]) -> None:
    if not isinstance(method, str) or method not in allowed:
        raise ValueError(f"method must be one of {allowed}; got {method!r}")


def _add_remove(neighbours: Any, method: str, bounds: Any, *, supported: tuple[str, ...]) -> bool:
    """Whether the release is under add/remove; refuses what supports substitution only (naming
    ``neighbours`` and the relation it supports)."""
    relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
    if relation != "add_remove":
        return False
    if method not in supported:
        raise ValueError(
            f"method={method!r} supports neighbours='substitution' only; under neighbours='add_remove' "
            f"use method in {supported}"
        )
    if isinstance(bounds, str):
        raise ValueError(
            "bounds='private' supports neighbours='substitution' only; pass public (lower, upper) bounds "
            "with neighbours='add_remove'"
        )
    return True


def _no_noise_options(noise: str, delta: float, beta: float | None, options: dict[str, Any]) -> None:
    if noise != DEFAULT_NOISE or delta or beta is not None or options:
        raise TypeError(
            "method='exponential' takes no noise, delta, beta or noise keywords (they belong to "
            "method='smooth_sensitivity')"
        )


def _run(
    x: ArrayLike,
    build: Any,
    *,
    epsilon: float,
    bounds: Bounds,
    scale: float,
    numerics: str,
    rng: SeedLike,
    accountant: Accountant | None,
    method: str,
    engine: Any,
    clip: bool,
    qs: Any = 0.5,
) -> Release:
    """Build the mechanism on the bounds and release; ``bounds="private"`` goes through
    :func:`_run_with_range`, ``bounds=None`` through
    :func:`smoothdp.central.no_bounds.release_in_private_range` (``qs``: the quantiles it must cover)."""
    check_engine(engine)
    if bounds is None:  # no bounds: the bounded method runs inside a private range
        from smoothdp.central.no_bounds import release_in_private_range

        return release_in_private_range(
            x, build, epsilon=epsilon, qs=qs, method=method, numerics=numerics, rng=rng, accountant=accountant
        )
    if isinstance(bounds, str):
        if bounds != "private":
            raise ValueError(f"bounds must be (lower, upper) or 'private'; got {bounds!r}")
        check_bool(
            "clip", clip
        )  # checked on every path, though the records are clipped into the found bounds
        return _run_with_range(
            x,
            build,
            epsilon=epsilon,
            scale=scale,
            numerics=numerics,
            rng=rng,
            accountant=accountant,
            method=method,
        )
    lo, hi = check_bounds(bounds, name="bounds (lower, upper)")
    clip = check_bool("clip", clip)
    mech = build(epsilon, lo, hi)
    data = x if engine is None else as_records(x, lo, hi, clip=clip, engine=engine)
    return mech.release(data, accountant=accountant, rng=rng)


def _run_with_range(
    x: ArrayLike,
    build: Any,
    *,
    epsilon: float,
    scale: float,
    numerics: str,
    rng: SeedLike,
    accountant: Accountant | None,
    method: str,
) -> Release:
    """``bounds="private"``: two stages under one ε (basic composition): :class:`PrivateRange` with
    ``DEFAULT_RANGE_FRACTION``·ε finds (−G, G), then the statistic runs on those bounds with the rest
    (:func:`~smoothdp.central.unbounded.two_stage.release_within_found_bounds`)."""
    eps_range = DEFAULT_RANGE_FRACTION * epsilon
    ranger = PrivateRange(epsilon=eps_range, scale=scale, numerics=numerics)
    return release_within_found_bounds(
        x,
        build,
        ranger,
        prepare=lambda data: (ranger._prepare(data), data),  # the statistic prepares the raw data itself
        guarantee=PureDP(epsilon, neighbours="substitution"),
        epsilon_bounds=eps_range,
        epsilon_statistic=epsilon - eps_range,
        method=method,
        phrase="with private bounds",
        source_label="bounds",
        details={"scale_hint": scale},
        rng=rng,
        accountant=accountant,
    )


class _SmoothQuantile(SmoothSensitivityMechanism):
    """The smooth-sensitivity quantile with the NaN/clip policy and clamping (post-processing).

    Same guarantee and proof as :class:`SmoothSensitivityMechanism`
    (docs/theory/smooth-sensitivity.md#the-smooth-sensitivity-mechanism); data prepared by
    :func:`smoothdp.scale.engine.as_records` (exact order statistics in rank windows, any engine).
    """

    def __init__(
        self,
        statistic: Statistic,
        *,
        epsilon: float,
        delta: float,
        beta: float | None,
        noise: str,
        clip: bool,
        clamp: bool,
        numerics: str,
        noise_options: dict[str, Any],
    ) -> None:
        super().__init__(
            statistic,
            epsilon=epsilon,
            delta=delta,
            beta=beta,
            noise=noise,
            numerics=numerics,
            **noise_options,
        )
        self._clip_data = check_bool("clip", clip)
        self._clamp = check_bool("clamp", clamp)

    def _prepare(self, data: Any) -> Any:
        lo, hi = self.statistic.bounds
        return self.statistic.prepare(as_records(data, lo, hi, clip=self._clip_data))

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        release = super()._release(prepared, rng)
        value = release.value
        if self._clamp:
            lo, hi = self.statistic.bounds
            value = float(np.clip(value, lo, hi))
        details = {
            **release.details,
            "method": "smooth_sensitivity",
            "clamp": self._clamp,
            "clip": self._clip_data,
        }
        return dataclasses.replace(release, value=value, details=details)


class _Separate(Mechanism):
    """Distinct quantiles released one by one with ε/m each (basic composition)."""

    name = "separate quantiles (basic composition)"
    proof = "docs/theory/quantiles.md#the-exponential-mechanism-quantile"
    source = "basic composition of single-quantile releases"

    def __init__(
        self,
        qs: Any,
        unique: Any,
        inverse: Any,
        method: str,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        clip: bool,
        clamp: bool,
        numerics: str,
        n: int,
        neighbours: str = "substitution",
        lattice: LatticeSpec = MULTISCALE,
        atoms: str = "auto",
    ) -> None:
        self.qs, self.unique, self.inverse, self.method = qs, unique, inverse, method
        self.epsilon, self.bounds, self.clip, self.clamp, self.numerics = (
            epsilon,
            bounds,
            clip,
            clamp,
            numerics,
        )
        self.guarantee = PureDP(epsilon, neighbours=neighbours)
        share = epsilon / unique.size
        self.parts: list[Mechanism] = []
        for q in unique:
            if method == "exponential":
                self.parts.append(
                    ExponentialQuantile(
                        float(q),
                        epsilon=share,
                        bounds=bounds,
                        clip=clip,
                        clamp=clamp,
                        numerics=numerics,
                        neighbours=neighbours,
                        lattice=lattice,
                        atoms=atoms,
                        halvings=DEFAULT_HALVINGS if neighbours == "add_remove" else 0,
                    )
                )
            elif method == HEAVY_OR_SMOOTH:
                heavy_or_smooth = HeavyLevelOrSmoothQuantile(
                    float(q), epsilon=share, bounds=bounds, lattice=lattice, clip=clip, clamp=clamp,
                    numerics=numerics,
                )  # fmt: skip
                self.parts.append(heavy_or_smooth)
            else:
                stat = Quantile(float(q), bounds=bounds, clip=True)
                b = choose_beta(n=max(n, 1), epsilon=share, bounds=bounds, q=float(q))
                self.parts.append(
                    _SmoothQuantile(
                        stat,
                        epsilon=share,
                        delta=0.0,
                        beta=b,
                        noise=DEFAULT_NOISE,
                        clip=clip,
                        clamp=clamp,
                        numerics=numerics,
                        noise_options={},
                    )
                )

    @property
    def statistic_name(self) -> str:
        return f"quantiles({', '.join(f'{q:g}' for q in self.qs)})"

    def _prepare(self, data: Any) -> Any:
        return data

    def _release(self, prepared: Any, rng: np.random.Generator) -> Release:
        values = np.array([float(part._release(part._prepare(prepared), rng).value) for part in self.parts])
        return self._make_release(
            values[self.inverse],
            details={
                "method": self.method,
                "bounds": self.bounds,
                "epsilon_each": self.epsilon / self.unique.size,
            },
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
