"""One quantile by the exponential mechanism (Smith, STOC 2011), sampled exactly: :class:`ExponentialQuantile`
(docs/theory/quantiles.md#the-exponential-mechanism-quantile).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.quantiles.atom_selection import (
    TEST_SHARE,
    select_heavy_level,
    selection_outcomes,
    selection_runs,
)
from smoothdp.central.quantiles.atoms import (
    ATOM_MASS,
    HEAVY_MASS,
    MULTISCALE,
    Atoms,
    LatticeSpec,
    check_lattice,
)
from smoothdp.central.quantiles.em_samplers import (
    atoms_of_choice,
    capped_calibration,
    check_atom_choice,
    check_candidates,
    check_width,
    em_lattice_weights,
    em_quantile_index_weights,
    heavy_atoms,
    rank_sensitivity,
    sample_em_candidates,
    sample_em_lattice,
    sample_em_quantile,
    split_target,
    target_rank,
    tie_distance,
)
from smoothdp.central.quantiles.exact_draws import log_weight_margin
from smoothdp.central.quantiles.heavy_level import (
    ADD_REMOVE_ATOMS_PROOF,
    add_remove_atoms,
    pre_stage_epsilon,
)
from smoothdp.central.quantiles.nested import nested_bounds
from smoothdp.central.quantiles.nested_em import (
    nested_capped_calibration,
    nested_weight_margin,
    nested_width,
    sample_em_nested,
)
from smoothdp.central.quantiles.window import sample_em_windowed
from smoothdp.exact import OutputGrid, check_numerics, sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.scale.engine import Records, SortedRecords, as_records
from smoothdp.validation import check_bool, check_bounds, check_epsilon, check_in_range, check_int

__all__ = [
    "ExponentialQuantile",
]

#: Above this n, ``atoms="auto"`` runs no selection: its pass of per-level counts would cost more than the
#: rest of the release (one window of a few thousand ranks), and runs of ties at the median are then usually
#: long enough for the light atoms (about 40/ε records); ``atoms="test"`` runs it at any n.
SELECTION_MAX_N = 1 << 20
#: The proof of the substitution quantile whose atoms a private selection may set first.
SELECTION_PROOF = "docs/theory/quantiles.md#the-heavy-level-of-one-quantile"
#: The proof of the single quantile over nested bounds (add/remove).
NESTED_PROOF = "docs/theory/quantiles.md#one-quantile-over-nested-bounds"
_SMITH = "Smith, Privacy-preserving statistical estimation with optimal convergence rates, STOC 2011"


class ExponentialQuantile(Mechanism):
    """The q-quantile by the exponential mechanism over the continuum between order statistics (or over
    public candidates).

    Guarantee: pure ε-DP under substitution (one record replaced), by the exponential mechanism with the
    tie-aware rank utility −dist(t, [#{x_i < y}, #{x_i ≤ y}]) of sensitivity 1 (Smith, STOC 2011),
    t = ⌈q·n⌉ − 1/2 (the rank of :class:`~smoothdp.central.statistics.Quantile`, centred), w.r.t. the public
    base measure Lebesgue + c·(counting measure on the lattice), sampled exactly from certified float
    weights (docs/theory/quantiles.md#the-exponential-mechanism-quantile,
    docs/theory/quantiles.md#a-public-lattice-for-tied-data). With ``atoms="auto"`` on enough records (a
    public rule of n, ε and the lattice) or ``atoms="test"``, the private selection of a heavy level (5% of
    ε, the one JointExp runs) first sets the atoms' masses, and the mechanism runs at the rest of ε
    (docs/theory/quantiles.md#the-heavy-level-of-one-quantile, Lemma 7a).

    With ``neighbours="add_remove"`` (n private; an empty x draws from the base measure): pure ε-DP under
    add/remove, with target t = q·n, sensitivity Δ = max(q, 1 − q) (weights exp(−ε′·d/(2Δ))) and the
    distance capped at a public C; every parameter comes from ε, q and the bounds, none from n, and the
    whole-data sampler runs (docs/theory/quantiles.md#adding-or-removing-a-record); with ``halvings`` the
    bounds are drawn with the output (docs/theory/quantiles.md#one-quantile-over-nested-bounds). With a
    lattice, a private test (5% of ε) first picks heavy or light atoms
    (docs/theory/quantiles.md#the-lattice-test-without-n) and, if heavy, a private choice (2.5% of ε)
    makes one level heavy (docs/theory/quantiles.md#the-heavy-level-without-n).

    Parameters
    ----------
    q
        The quantile in [0, 1] (target rank t = max(1, ⌈q·n⌉) − 1/2).
    epsilon
        ε > 0.
    bounds
        Public ``(lower, upper)``; the output lies in them.
    candidates
        Optional public sorted values (discrete data): the output is one of them
        (docs/theory/quantiles.md#discrete-candidates); ``lattice`` is then not used.
    lattice
        The public atoms of the base measure, so that a tied value on them is released exactly
        (:mod:`smoothdp.central.quantiles.atoms`): ``"multiscale"`` (default: every dyadic number with at
        most five binary places and every decimal number with at most four decimal places, a point of
        spacing σ carrying the mass 2^-14·σ; docs/theory/quantiles.md#a-multi-scale-lattice), a spacing s (one
        lattice, mass 2^-14·s: s = m·2^e with an odd m < 2^21, or a short decimal such as 0.1), a sequence
        of spacings, or ``None``: the pure continuum. An atom is released as itself (an exact float).
    clip
        Clip records into the bounds (default; ±inf too) or refuse records outside them (trusted data).
    clamp
        Clamp the released value into the bounds after rounding onto the output grid (post-processing).
    numerics
        ``"exact"`` (default): output rounded exactly onto the public grid of the bounds; ``"float"``:
        the float fast path.
    neighbours
        ``"substitution"`` (default; n public) or ``"add_remove"`` (n private).
    atoms
        The atoms' masses, a public choice: ``"auto"`` (default: under substitution the selection of a heavy
        level above where the rule says it can succeed, light atoms elsewhere; under add/remove the private
        test and level choice above), ``"test"`` (the same, run whatever n),
        ``"light"`` (2^-14·σ on every level, nothing spent on a test) or ``"heavy"`` (64·σ on every level of
        ``lattice``, nothing spent on a test: for data known to lie on the lattice, e.g. ``lattice=0.5``).
    halvings
        K ≥ 0 (default 0): draw the bounds with the output among the declared bounds and K halvings of them
        (docs/theory/quantiles.md#one-quantile-over-nested-bounds), so that wide bounds cost little on
        few records; ``details["bounds_used"]`` reports the bounds drawn (a private output).
    """

    name: ClassVar[str] = "exponential mechanism"
    proof: ClassVar[str] = "docs/theory/quantiles.md#the-exponential-mechanism-quantile"
    source = f"{_SMITH}; exact sampling: docs/theory/quantiles.md#sampling-exactly-from-float-weights"

    def __init__(
        self,
        q: float,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        candidates: ArrayLike | None = None,
        lattice: LatticeSpec = MULTISCALE,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
        atoms: str = "auto",
        halvings: int = 0,
    ) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_bounds(bounds, name="bounds (lower, upper)")
        self.width = check_width(self.lower, self.upper)
        self.candidates = None if candidates is None else check_candidates(candidates, self.lower, self.upper)
        self.lattice = check_lattice(lattice)
        relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        #: The public choice of the atoms' masses (``atoms=``).
        self.atom_choice = check_atom_choice(atoms, "add_remove")  # "test": either relation's test
        self.atoms = atoms_of_choice(self.lattice, self.atom_choice, candidates=self.candidates is not None)
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = check_numerics(numerics)
        self.grid = OutputGrid.for_bounds(self.lower, self.upper)
        self.halvings = check_int("halvings", halvings, minimum=0, maximum=60)
        #: The candidate bounds B_0 … B_K of the nested draw (None: the declared bounds only).
        self.nested: list[tuple[float, float]] | None = None
        if self.halvings and self.candidates is None:
            self.nested = nested_bounds(self.lower, self.upper, self.halvings)
        self.guarantee = PureDP(self.epsilon, neighbours=relation)
        if relation == "substitution" and self.atoms is not None and self.atom_choice in ("auto", "test"):
            self.proof = SELECTION_PROOF  # type: ignore[misc]  # Lemma 7a (the selection, if it runs)
        self.calibration = None
        #: Under add/remove: (coef, cap, η) from public parameters (:func:`capped_calibration`), and the
        #: share of ε of the lattice test (0 without a lattice).
        self.capped: tuple[float, float, float] | None = None
        self.epsilon_test = 0.0
        if relation == "add_remove":
            width: float | None = None if self.candidates is not None else self.width
            if self.atoms is not None and self.runs_test:
                self.epsilon_test = pre_stage_epsilon(self.epsilon)
                width = heavy_atoms(self.lattice).log_width(self.width)  # the larger W of the two masses
                self.proof = ADD_REMOVE_ATOMS_PROOF  # type: ignore[misc]  # the test, the level, Lemma 9
            if self.nested is not None:  # Lemma 12 (after the test and the level, if they run)
                self.proof = NESTED_PROOF  # type: ignore[misc]
            if self.nested is not None:
                self.capped = nested_capped_calibration(
                    epsilon=self.epsilon - self.epsilon_test,
                    sensitivity=rank_sensitivity(self.q),
                    candidates=self.nested,
                    atoms=None if self.atoms is None else self._width_atoms(),
                )
            else:
                self.capped = capped_calibration(
                    epsilon=self.epsilon - self.epsilon_test,
                    sensitivity=rank_sensitivity(self.q),
                    width=width,
                )

    @property
    def statistic_name(self) -> str:
        return "median" if self.q == 0.5 else f"quantile({self.q:g})"

    @property
    def runs_test(self) -> bool:
        """Whether the add/remove lattice test and level choice run (public: the relation and ``atoms``)."""
        return self.guarantee.neighbours == "add_remove" and self.atom_choice in ("auto", "test")

    def selects_level(self, n: int) -> bool:
        """Whether, under substitution, the private selection of a heavy level runs first on n records
        (public: n, ε, the lattice and ``atoms``; docs/theory/quantiles.md#the-heavy-level-of-one-quantile):
        with ``atoms="test"`` always, with ``"auto"`` where records that all lie on one level would select it
        with probability above 1/2 (:func:`~smoothdp.central.quantiles.atom_selection.selection_runs`) and
        n ≤ :data:`SELECTION_MAX_N`."""
        if self.guarantee.neighbours != "substitution" or self.atoms is None or self.nested is not None:
            return False  # (the nested draw, a direct construction with halvings, keeps its light atoms)
        if self.atom_choice == "test":
            return True
        levels = len(self.atoms.levels)
        return (
            self.atom_choice == "auto"
            and n <= SELECTION_MAX_N
            and selection_runs(n, TEST_SHARE * self.epsilon, levels)
        )

    def epsilon_selection(self, n: int) -> float:
        """ε_t of the substitution selection on n records (0 when it does not run)."""
        return TEST_SHARE * self.epsilon if self.selects_level(n) else 0.0

    def atom_options(self, n: int) -> list[Atoms]:
        """Every atom measure the substitution draw may use on n records (public before the selection):
        the light atoms, and each level made heavy when the selection runs."""
        assert self.atoms is not None
        return selection_outcomes(self.atoms, HEAVY_MASS) if self.selects_level(n) else [self.atoms]

    @property
    def atom_mass(self) -> float:
        """c_ℓ/σ_ℓ: the mass of an atom per unit of its level's spacing (0 without atoms)."""
        if self.atoms is None:
            return 0.0
        return HEAVY_MASS if self.atom_choice == "heavy" else ATOM_MASS

    def weight_margin(self, n: int) -> float:
        """η: the certified error of the float log weights for n records (under add/remove: public, for
        every n)."""
        if self.capped is not None:
            return self.capped[2]
        width: float | None = None if self.candidates is not None else self.width
        if self.atoms is not None and self.nested is None and self.capped is None:
            # under substitution: the largest margin over the atoms the selection may set (public: computed
            # once per n)
            margins: dict[int, float] = self.__dict__.setdefault("_margins", {})
            if n not in margins:
                margins[n] = max(
                    log_weight_margin(epsilon=self.epsilon, n=n, width=atoms.log_width(self.width))
                    for atoms in self.atom_options(n)
                )
            return margins[n]
        if self.atoms is not None:
            width = self.atoms.log_width(self.width)
        if self.nested is not None:
            width = nested_width(self.nested, self.atoms)
            eta = log_weight_margin(epsilon=self.epsilon, n=n, width=width)
            magnitude = 750.0 + self.epsilon * (n + 1.0) + abs(math.log(width))
            return nested_weight_margin(
                eta=eta, magnitude=magnitude, candidates=self.nested, atoms=self.atoms
            )
        return log_weight_margin(epsilon=self.epsilon, n=n, width=width)

    def epsilon_used(self, n: int) -> float:
        """ε′ = ε − 4η: the budget in the float weights, η the certified error of the log weights (minus
        the lattice test's share under add/remove, the selection's under substitution)."""
        return self.epsilon - self.epsilon_test - self.epsilon_selection(n) - 4.0 * self.weight_margin(n)

    def _prepare(self, data: Any) -> Records:
        return as_records(data, self.lower, self.upper, clip=self.clip)

    def sample(self, data: Records | NDArray[np.float64], rng: np.random.Generator) -> float:
        """One output on prepared data (:class:`~smoothdp.scale.engine.Records`, or a clipped sorted array),
        no accountant (simulations, tests). Reads a window of ranks around the target, on any engine
        (docs/theory/quantiles.md#sampling-from-a-window-of-ranks)."""
        records = data if isinstance(data, Records) else SortedRecords(np.asarray(data, dtype=np.float64))
        return self._draw(records, rng)[0]

    def _draw(self, records: Records, rng: np.random.Generator) -> tuple[float, dict[str, Any], Any]:
        """The output (clamped if asked), the report of the lattice test or selection (empty when none
        ran) and the bounds a nested draw used (None without halvings)."""
        if self.capped is not None:
            return self._sample_add_remove(records.sorted_values(), rng)
        used = None
        info: dict[str, Any] = {}
        if self.candidates is not None or self.nested is not None:  # (the window reads its own)
            coef, target = 0.5 * self.epsilon_used(records.n), target_rank(self.q, records.n)
        if self.candidates is not None:
            value = sample_em_candidates(
                records.sorted_values(), self.candidates, target=target, coef=coef, rng=rng
            )
        elif self.nested is not None:
            value, used = sample_em_nested(
                records.sorted_values(), candidates=self.nested, target=target, coef=coef,
                atoms=self.atoms, grid=self.grid, rng=rng, numerics=self.numerics,
            )  # fmt: skip
        else:
            atoms, info = self.select_atoms(records, rng)
            value = self.draw_on_atoms(records, atoms, rng)
        return (float(np.clip(value, self.lower, self.upper)) if self.clamp else value), info, used

    def select_atoms(self, records: Records, rng: np.random.Generator) -> tuple[Atoms | None, dict[str, Any]]:
        """Stage 1 under substitution: the private selection of a heavy level when it runs
        (:meth:`selects_level`; its ε_t is out of :meth:`epsilon_used`), else the public atoms; and the
        selection's report (empty when it did not run)."""
        if self.atoms is None or not self.selects_level(records.n):
            return self.atoms, {}
        return select_heavy_level(
            records, self.atoms, n=records.n, epsilon_test=self.epsilon_selection(records.n),
            heavy_mass=HEAVY_MASS, bounds=(self.lower, self.upper), rng=rng,
        )  # fmt: skip

    def draw_on_atoms(self, records: Records, atoms: Atoms | None, rng: np.random.Generator) -> float:
        """Stage 2 under substitution (no halvings, no candidates): the exponential mechanism at
        ε′ = :meth:`epsilon_used` on the base measure Lebesgue + ``atoms`` (one of :meth:`atom_options`),
        read in a window of ranks; not clamped."""
        n = records.n
        return sample_em_windowed(
            records,
            lower=self.lower,
            upper=self.upper,
            target=target_rank(self.q, n),
            coef=0.5 * self.epsilon_used(n),
            eta=self.weight_margin(n),
            lattice=atoms,
            grid=self.grid,
            rng=rng,
            numerics=self.numerics,
        )

    def _sample_add_remove(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[float, dict[str, Any], Any]:
        """The add/remove draw (clamped if asked), the lattice test's report and the nested bounds used:
        the test first (with atoms), then target q·n, capped distance, the whole-data sampler (every record
        read)."""
        assert self.capped is not None
        coef, cap, _ = self.capped
        t, offset = split_target(self.q, sorted_x.size)
        info: dict[str, Any] = {}
        used = None
        if self.candidates is not None:
            value = sample_em_candidates(
                sorted_x, self.candidates, target=t, coef=coef, rng=rng, offset=offset, cap=cap
            )
        elif self.nested is not None:
            atoms = self.atoms
            if atoms is not None and self.runs_test:
                atoms, info = add_remove_atoms(
                    sorted_x, self.lattice, atoms, self.epsilon_test, rng, numerics=self.numerics
                )
            value, used = sample_em_nested(
                sorted_x, candidates=self.nested, target=t, coef=coef, atoms=atoms, grid=self.grid,
                rng=rng, numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        elif self.atoms is None:
            value = sample_em_quantile(
                sorted_x, lower=self.lower, upper=self.upper, target=t, coef=coef, grid=self.grid, rng=rng,
                numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        else:
            atoms = self.atoms
            if self.runs_test:
                atoms, info = add_remove_atoms(
                    sorted_x, self.lattice, self.atoms, self.epsilon_test, rng, numerics=self.numerics
                )
            value = sample_em_lattice(
                sorted_x, lower=self.lower, upper=self.upper, target=t, coef=coef, lattice=atoms,
                grid=self.grid, rng=rng, numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        value = float(np.clip(value, self.lower, self.upper)) if self.clamp else value
        return value, info, used

    def _width_atoms(self) -> Atoms:
        """The atoms whose masses bound the logarithms under add/remove: the heavy ones when the test may
        pick them, else the public choice itself."""
        assert self.atoms is not None
        return heavy_atoms(self.lattice) if self.runs_test else self.atoms

    def test_atoms(self, heavy: bool) -> Atoms:
        """The atoms after the add/remove lattice test: every level heavy (64·σ_ℓ) or light (2^-14·σ_ℓ,
        :attr:`atoms`)."""
        assert self.atoms is not None
        return heavy_atoms(self.lattice) if heavy else self.atoms

    def log_density(
        self, sorted_x: NDArray[np.float64], y: ArrayLike, *, heavy: bool = False
    ) -> NDArray[np.float64]:
        """ln p_x(y) of the ideal (real-arithmetic, unrounded) output at ε′ w.r.t. the base measure
        (Lebesgue + the atoms' measure; ``heavy``: the heavy atoms of the add/remove test), continuous case;
        for tests."""
        n = sorted_x.size
        atoms = self.atoms
        if atoms is not None and self.capped is not None and self.runs_test:
            atoms = self.test_atoms(heavy)
        if self.capped is not None:
            coef, cap, _ = self.capped
            t, offset = split_target(self.q, n)
        else:
            coef, cap, offset = 0.5 * self.epsilon_used(n), math.inf, 0.0
            t = target_rank(self.q, n)
        if atoms is None:
            _, logw = em_quantile_index_weights(sorted_x, self.lower, self.upper, t, coef, offset, cap)
        else:
            *_, logw = em_lattice_weights(sorted_x, self.lower, self.upper, t, coef, atoms, offset, cap)
        top = float(np.max(logw))
        log_z = top + math.log(float(np.sum(np.exp(logw - top))))
        yy = np.asarray(y, dtype=np.float64)
        below = np.searchsorted(sorted_x, yy, side="left").astype(np.float64)
        at_most = np.searchsorted(sorted_x, yy, side="right").astype(np.float64)
        dist = tie_distance(below, at_most, t, offset, cap)
        out: NDArray[np.float64] = -coef * dist - log_z
        return out

    def _release(self, prepared: Records, rng: np.random.Generator) -> Release:
        value, info, used = self._draw(prepared, rng)
        return self._make_release(
            value,
            sampler=sampler_label(self.numerics),
            details={
                "method": "exponential",
                "bounds": (self.lower, self.upper),
                "clip": self.clip,
                "clamp": self.clamp,
                "candidates": None if self.candidates is None else int(self.candidates.size),
                "lattice": None if self.atoms is None else self.atoms.label,
                **({} if self.atoms is None else {"atoms": self.atom_choice}),
                "epsilon_in_weights": self.epsilon_used(prepared.n),
                "engine": prepared.engine,
                **({} if self.capped is None else {"rank_cap": self.capped[1]}),
                **({} if self.nested is None else {"halvings": self.halvings, "bounds_used": used}),
                **({"lattice_test": info} if info else {}),
            },
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"ExponentialQuantile(q={self.q:g}, {self.guarantee}, bounds=({self.lower:g}, {self.upper:g}))"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
