"""Several quantiles from one exponential mechanism over ordered output vectors (JointExp: Gillenwater,
Joseph & Kulesza, ICML 2021): :class:`JointQuantiles`, its certified float margin (:func:`joint_margin`) and
the continuum's forward programme (docs/theory/quantiles.md#jointexp); on a lattice the greedy programme of
:mod:`smoothdp.central.quantiles.greedy` (docs/theory/quantiles.md#jointexp-on-a-public-lattice).
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
    HEAVY_MASS,
    LIGHT_MASS,
    MULTISCALE,
    Atoms,
    LatticeSpec,
    build_atoms,
    check_lattice,
)
from smoothdp.central.quantiles.exact_draws import (
    LIBM_ULPS,
    UNIT_ROUNDOFF,
    exact_categorical,
)
from smoothdp.central.quantiles.greedy import GreedyProgramme, greedy_margin
from smoothdp.central.quantiles.joint_window import (
    JointWindows,
    plan_joint_windows,
    sample_joint_windowed,
    windowed_margin,
)
from smoothdp.central.quantiles.log_scans import LN_TINY, log_sum, log_toeplitz_abs, lse_rows, scan_depth
from smoothdp.central.quantiles.multi import MultiQuantile
from smoothdp.exact import OutputGrid, sampler_label, uniform_on_grid
from smoothdp.keywords import check_keywords_of
from smoothdp.privacy import check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.scale.engine import Records, SortedRecords, as_records

__all__ = [
    "JointQuantiles",
    "joint_margin",
]

_GJK = "Gillenwater, Joseph & Kulesza, Differentially private quantiles, ICML 2021"


def joint_margin(*, epsilon: float, n: int, m: int, width: float, mass_ulps: float = 2.0) -> float:
    """The public loss margin of JointExp's float dynamic programme (docs/theory/quantiles.md#jointexp):
    8m·E* + 2uε, where E* bounds |ln Ŵ − ln W| for every weight of every draw.

    With u = 2^-53, K the ulps budget of numpy's log/exp/log1p, Λ = 745 + |ln width|, c = ε/4:

    * R = (m+1)Λ + ln((m+1)!) + ln(m+1) + c(2n+2) + 2 bounds every normalised table entry;
    * M = R + c(2n+4) + ln(n+2) + 2 bounds every intermediate value;
    * δ = u(M + 4K) bounds the error of one operation, ℓ_err = (2KΛ + mass_ulps)u that of a log-length
      (``mass_ulps``: the relative error, in units of u, of the float length or mass before its logarithm);
    * D = :func:`scan_depth` (n+1) bounds the chain of a blocked scan;
    * E* = m·ℓ_err + ((m−1)(D+16) + m(m−1)/2 + m + 16)·δ.

    The lattice variant has its own margin (:func:`smoothdp.central.quantiles.greedy.greedy_margin`).
    """
    c = epsilon / 4.0
    lam = LN_TINY + abs(math.log(width))
    big_r = (m + 1.0) * lam + math.lgamma(m + 2.0) + math.log(m + 1.0) + c * (2.0 * n + 2.0) + 2.0
    big_m = big_r + c * (2.0 * n + 4.0) + math.log(n + 2.0) + 2.0
    delta = UNIT_ROUNDOFF * (big_m + 4.0 * LIBM_ULPS)
    ell_err = (2.0 * LIBM_ULPS * lam + mass_ulps) * UNIT_ROUNDOFF
    depth = scan_depth(n + 1)
    ops = (m - 1.0) * (depth + 16.0) + m * (m - 1.0) / 2.0 + m + 16.0
    e_star = m * ell_err + ops * delta
    return 8.0 * m * e_star + 2.0 * UNIT_ROUNDOFF * epsilon


class _JointTables:
    """JointExp's forward tables and the float weights of the backward draws (each draw exact for them)."""

    def __init__(
        self,
        edges: NDArray[np.float64],
        log_len: NDArray[np.float64],
        gaps: NDArray[np.float64],
        log_fact: list[float],
        first: NDArray[np.float64],
        tot: NDArray[np.float64],
        nus: list[float],
        coef: float,
    ) -> None:
        self.edges, self.log_len, self.gaps, self.log_fact = edges, log_len, gaps, log_fact
        self.first, self.tot, self.nus, self.coef = first, tot, nus, coef

    def interval_weights(self, j: int, last: int) -> NDArray[np.float64]:
        """Log weights of the interval i < last of output j given the next output in interval ``last``
        (last = n + 1: the upper bound): Σ_r table_j(r, i) times the gap kernel."""
        n_int = self.log_len.size
        idx = np.arange(last, dtype=np.float64)
        count = (n_int - 1) - idx if last == n_int else last - idx
        out: NDArray[np.float64] = self.tot[j, :last] - self.coef * np.abs(count - self.gaps[j + 1])
        return out

    def repeat_weights(self, j: int, i: int) -> NDArray[np.float64]:
        """table_j(r, i), r = 0..j, recomputed from row 0 of level j − r by the forward operations."""
        row = np.empty(j + 1)
        ell = float(self.log_len[i])
        for r in range(j + 1):
            v = float(self.first[j - r, i])
            for k in range(j - r + 1, j + 1):
                v = ((ell - self.coef * float(self.gaps[k])) + v) - self.log_fact[k - j + r]
                v = v - self.nus[k]
            row[r] = v
        return row


def _joint_forward(
    log_mass: NDArray[np.float64], gaps: NDArray[np.float64], coef: float, m: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[float], list[float]]:
    """JointExp's forward dynamic programme over cells with log masses ``log_mass``, where the utility of
    two consecutive outputs in cells i′ ≤ i is −coef·|i − i′ − gaps[j]| (cell index differences are the
    counts between them, in the cells' unit). Returns the row r = 0 and the log-sum over r of every level,
    the levels' float offsets and ln(r + 1)."""
    n_cells = log_mass.size
    log_fact = [math.log(r + 1.0) for r in range(m)]
    idx = np.arange(n_cells, dtype=np.float64)
    # buf[r, i] (level j, rows 0..j): log weight of outputs 0..j placed with the last r + 1 of them in
    # cell i, volume factor mass_i^(r+1)/(r+1)! included, minus the level's float offset nus[j]
    # (its maximum: a constant factor per level, which no draw sees).
    buf = np.empty((m, n_cells))
    first = np.empty((m, n_cells))  # row r = 0 of every level
    tot = np.empty((m, n_cells))  # log Σ_r of every level
    nus: list[float] = []
    buf[0] = log_mass - coef * np.abs(idx - gaps[0])
    for j in range(m):
        if j > 0:
            moved = log_toeplitz_abs(tot[j - 1], coef, float(gaps[j]))
            base = log_mass - coef * gaps[j]
            for r in range(j, 0, -1):  # in place, from the top row down
                buf[r] = (base + buf[r - 1]) - log_fact[r]
            buf[0] = log_mass + moved
        nu = float(np.max(buf[: j + 1]))
        buf[: j + 1] -= nu
        nus.append(nu)
        first[j] = buf[0]
        tot[j] = lse_rows(buf[: j + 1])
    return first, tot, nus, log_fact


class _ContinuumProgramme:
    """JointExp's forward tables over the continuum with their backward draw and total weight."""

    def __init__(self, tables: _JointTables, grid: OutputGrid, numerics: str) -> None:
        self.tables, self.grid, self.numerics = tables, grid, numerics

    @property
    def size(self) -> int:
        """The number of weights of the first backward draw (the n + 1 intervals)."""
        return int(self.tables.log_len.size)

    def log_normaliser(self) -> float:
        """ln Z: the levels' float offsets plus the log-sum of the first backward draw's weights (the last
        output's interval, the final gap's kernel included)."""
        t = self.tables
        return math.fsum(t.nus) + log_sum(t.interval_weights(len(t.nus) - 1, self.size))

    def draw(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """The sorted outputs: backwards, the interval then the repeats of each output, then uniform points
        of the intervals rounded onto the grid."""
        tables, m = self.tables, len(self.tables.nus)
        edges = tables.edges
        out = np.empty(m)
        j, last = m - 1, self.size  # last: interval of the next output (n_cells stands for the bound b)
        while j >= 0:
            i = exact_categorical(tables.interval_weights(j, last), rng)
            r = exact_categorical(tables.repeat_weights(j, i), rng)
            pts = uniform_on_grid(
                np.full(r + 1, edges[i]),
                np.full(r + 1, edges[i + 1]),
                grid=self.grid,
                rng=rng,
                numerics=self.numerics,
            )
            out[j - r : j + 1] = np.sort(np.atleast_1d(pts))
            j -= r + 1
            last = i
        return np.sort(out)


class JointQuantiles(MultiQuantile):
    """Several quantiles from one exponential mechanism over ordered output vectors (JointExp: Gillenwater,
    Joseph & Kulesza, ICML 2021), by default on a public lattice that lets tied values be released exactly.

    ``lattice=None``: utility u(o) = −Σ_{j=1}^{m+1} |#{x ∈ [o_{j−1}, o_j)} − (q_j − q_{j−1})·n|
    (o_0 = a, o_{m+1} = b), of sensitivity 2 under substitution; density ∝ exp(εu/4) on a ≤ o_1 ≤ … ≤ o_m ≤ b
    (docs/theory/quantiles.md#jointexp). Sampled by dynamic programming in log space over (quantile,
    interval, repeats), each level normalised to maximum 0, O(m²n) vectorized over n with O(m·n) memory,
    then backwards (interval, then repeats).

    ``lattice`` (default ``"multiscale"``, as :class:`ExponentialQuantile`; a spacing s, a sequence of
    spacings; docs/theory/quantiles.md#jointexp-on-a-public-lattice): two stages.
    (1) the lattice test: 5% of ε on the number N of records that are atoms, N + Z with Z exact discrete
    Laplace of scale 1/ε_t (the geometric mechanism); heavy atoms c_ℓ = 64·σ_ℓ if the noisy count is at
    least 0.9n + 3/ε_t, else c_ℓ = 2^-14·σ_ℓ. ``atoms="auto"`` (default) runs it only when that threshold
    is at most n (a public condition: then data entirely on the lattice pass with probability ≥ 1/2; above
    it a pass could only come from the noise), and otherwise takes light atoms and spends all of ε on stage 2;
    ``atoms="test"`` always runs it; ``"heavy"`` / ``"light"``: a public choice, no test.
    (2) JointExp with the rest of ε over outputs (o_j, ρ_j), base measure (Lebesgue +
    the atoms' measure) ⊗ Lebesgue on ρ, ordered lexicographically, where an output at a record value v that
    is an atom takes the greedy count C_j = clamp(C_{j−1} + ĝ_j, #{x < v}, #{x ≤ v}) (ĝ_j the target gap
    rounded to a half-integer): still sensitivity 2, and a tied value costs the atom mass c, not a split.
    Sampled by a dynamic programme over the gaps and the counts of each tied value (at most 4n + 2 states),
    O(m²·S) time, O(m·S) memory.

    Guarantee: pure ε-DP under substitution (the stages compose). The float dynamic programme has a
    certified error bound (public: from n, m, ε, the bounds and the lattice; :meth:`margin`), charged to the
    budget: the weights use ε′ = ε_main − margin. Each step samples exactly from its float weights, the
    points inside a cell exactly. The margin is below 10⁻⁴·ε for m ≤ 20 quantiles up to n = 10⁶; JointExp is
    refused (naming n and m) when the margin would exceed 10% of ε; :class:`RecursiveQuantiles` has none.
    The release reports the test (its ε, the noisy count, heavy or light atoms) in ``details``: it is a
    private output, covered by the guarantee.
    """

    name: ClassVar[str] = "joint exponential mechanism (JointExp)"
    proof: ClassVar[str] = "docs/theory/quantiles.md#jointexp"
    source = _GJK

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        lattice: LatticeSpec = MULTISCALE,
        atoms: str = "auto",
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
    ) -> None:
        if neighbours == "add_remove":  # its float margin and lattice test are functions of the public n
            raise ValueError(
                "neighbours='add_remove' is not supported by JointExp (it supports 'substitution' only: its "
                "float margin and lattice test read n); use RecursiveQuantiles (method='recursive')"
            )
        check_neighbours(neighbours, allowed=("substitution",))
        super().__init__(qs, epsilon=epsilon, bounds=bounds, clip=clip, clamp=clamp, numerics=numerics)
        self.lattice = check_lattice(lattice)
        if not isinstance(atoms, str) or atoms not in ("auto", "test", "heavy", "light"):
            raise ValueError(f"atoms must be 'auto', 'test', 'heavy' or 'light'; got {atoms!r}")
        self.atoms = atoms

    def stage_atoms(self, n: int) -> str:
        """How stage 1 sets the atom masses on n records (public): ``"test"`` (the private selection of a
        heavy level runs), ``"heavy"`` or ``"light"``. ``atoms="auto"`` runs the selection only where
        records that are all points of one level would select it with probability above 1/2
        (:func:`~smoothdp.central.quantiles.atom_selection.selection_runs`)."""
        if self.atoms == "auto" and self.lattice is not None:
            levels = len(self.atoms_of(False).levels)
            return "test" if selection_runs(n, TEST_SHARE * self.epsilon, levels) else "light"
        return "light" if self.atoms == "auto" else self.atoms

    def epsilon_test(self, n: int) -> float:
        """ε_t of the selection on n records (0 without a lattice or when it does not run)."""
        if self.lattice is None or self.stage_atoms(n) != "test":
            return 0.0
        return TEST_SHARE * self.epsilon

    def epsilon_main(self, n: int) -> float:
        """ε of the JointExp stage on n records: ε − ε_t."""
        return self.epsilon - self.epsilon_test(n)

    def stage_atom_options(self, n: int) -> list[Atoms]:
        """Every atom measure stage 2 may use on n records (public before stage 1 runs)."""
        light = self.atoms_of(False)
        stage = self.stage_atoms(n)
        if stage == "light":
            return [light]
        if stage == "heavy":
            return [self.atoms_of(True)]
        return selection_outcomes(light, self.atom_mass(True))

    def margin(self, n: int) -> float:
        """The public loss margin of the float dynamic programme on n records, charged to the JointExp
        stage (:func:`joint_margin`, docs/theory/quantiles.md#jointexp; on a lattice the larger
        :func:`~smoothdp.central.quantiles.greedy.greedy_margin` of both atom masses,
        docs/theory/quantiles.md#float-error-of-the-greedy-programme; from windows of ranks
        :func:`~smoothdp.central.quantiles.joint_window.windowed_margin`)."""
        if self.lattice is None:
            return self.margin_for(n, None)
        return max(self.margin_for(n, a) for a in self.stage_atom_options(n))

    def margin_for(self, n: int, atoms: Atoms | None) -> float:
        """The margin of stage 2 on n records with the given atoms (None: the continuum's)."""
        m = int(self.unique_qs.size)
        if self.window_plan(n) is not None:  # from windows of ranks: twice the windowed sampler's κ
            width = self.width if atoms is None else atoms.log_width(self.width)
            ulps = 8.0 if atoms is None else atoms.mass_ulps + 6.0
            return windowed_margin(epsilon=self.epsilon_main(n), n=n, m=m, width=width, mass_ulps=ulps)
        if atoms is None:
            return joint_margin(epsilon=self.epsilon, n=n, m=m, width=self.width)
        width, ulps = atoms.log_width(self.width), atoms.mass_ulps + 6.0
        return greedy_margin(epsilon=self.epsilon_main(n), n=n, m=m, width=width, mass_ulps=ulps)

    def admissible(self, n: int) -> bool:
        """Whether the float margin stays within 10% of the stage's ε at n records (a public condition)."""
        return self.margin(n) <= 0.1 * self.epsilon_main(n)

    def _check_admissible(self, n: int) -> None:
        if not self.admissible(n):
            raise ValueError(
                f"JointExp's certified float margin exceeds 10% of epsilon for n={n}, "
                f"m={self.unique_qs.size} quantiles at epsilon={self.epsilon:g}; use method='recursive'"
            )

    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        return self._draw(sorted_x, rng)[0]

    def stage_coef(self, n: int) -> float:
        """The kernel coefficient of stage 2 on n records: (ε_main − margin)/4 (public)."""
        return (self.epsilon_main(n) - self.margin(n)) / 4.0

    def programme(self, sorted_x: NDArray[np.float64], atoms: Atoms | None, coef: float) -> Any:
        """Stage 2's forward programme on sorted data clipped into this mechanism's bounds, at kernel
        coefficient ``coef``: the continuum's (atoms None) or the greedy lattice programme. Its
        ``draw(rng)`` samples the sorted outputs, its ``log_normaliser()`` is ln Z, the total weight."""
        if atoms is None:
            return _ContinuumProgramme(self._tables(sorted_x, coef), self.grid, self.numerics)
        return GreedyProgramme(
            sorted_x, self.lower, self.upper, atoms, self.unique_qs, coef, self.grid, self.numerics
        )

    def window_plan(self, n: int) -> JointWindows | None:
        """The windows of ranks the release reads on n records, or None when it reads every record (public:
        n, the quantiles and ε; docs/theory/quantiles.md#jointexp-from-windows-of-ranks)."""
        plans: dict[int, JointWindows | None] = self.__dict__.setdefault("_plans", {})
        if n not in plans:  # a public function of n, the quantiles and ε: computed once per n
            plans[n] = plan_joint_windows(self.unique_qs, n, self.epsilon_main(n) / 4.0)
        return plans[n]

    def choose_atoms(
        self, data: Records | NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[Atoms | None, dict[str, Any]]:
        """Stage 1 on the clipped records (:class:`~smoothdp.scale.engine.Records`, or sorted values): the
        atoms of stage 2 (None without a lattice) and the report of the selection
        (docs/theory/quantiles.md#choosing-the-heavy-level). Its counts are one pass over the records."""
        if self.lattice is None:
            return None, {}
        n = data.n if isinstance(data, Records) else data.size
        stage = self.stage_atoms(n)
        if stage != "test":
            report = {"epsilon": 0.0, "atoms": stage, "level": None}
            return self.atoms_of(stage == "heavy"), {"lattice_test": report}
        atoms, info = select_heavy_level(
            data, self.atoms_of(False), n=n, epsilon_test=self.epsilon_test(n),
            heavy_mass=self.atom_mass(True), bounds=(self.lower, self.upper), rng=rng,
        )  # fmt: skip
        return atoms, {"lattice_test": info}

    def _draw(
        self, data: Records | NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        """Stage 1 (unless there is no lattice or the atoms are public) and stage 2 (the programme's
        backward draws and the points inside the cells, from windows of ranks when :meth:`window_plan`
        gives them): the sorted values and stage 1's report."""
        records = data if isinstance(data, Records) else SortedRecords(np.asarray(data, dtype=np.float64))
        n = records.n
        self._check_admissible(n)
        plan = self.window_plan(n)
        if plan is None:
            sorted_x = records.sorted_values()
            atoms, info = self.choose_atoms(sorted_x, rng)
            return self.programme(sorted_x, atoms, self.stage_coef(n)).draw(rng), info
        atoms, info = self.choose_atoms(records, rng)
        coef = self.stage_coef(n)

        def whole_data(sorted_x: NDArray[np.float64]) -> NDArray[np.float64]:
            out: NDArray[np.float64] = self.programme(sorted_x, atoms, coef).draw(rng)
            return out

        values = sample_joint_windowed(
            records, plan, qs=self.unique_qs, lower=self.lower, upper=self.upper, coef=coef, atoms=atoms,
            grid=self.grid, rng=rng, numerics=self.numerics, whole_data=whole_data,
        )  # fmt: skip
        return values, info

    def _prepare(self, data: Any) -> Records:  # type: ignore[override]
        return as_records(data, self.lower, self.upper, clip=self.clip)

    def sample(self, data: Any, rng: np.random.Generator) -> NDArray[np.float64]:
        """One output (in the order of ``qs``) on prepared data (:class:`~smoothdp.scale.engine.Records` or a
        clipped sorted array), no accountant (simulations, tests)."""
        out = self._draw(data, rng)[0]
        if self.clamp:
            out = np.clip(out, self.lower, self.upper)
        return out[self.inverse]

    def atom_mass(self, heavy: bool) -> float:
        """The atom mass per unit of spacing, c_ℓ/σ_ℓ, of stage 2: 64 (heavy) or 2^-14 (light)."""
        return HEAVY_MASS if heavy else LIGHT_MASS

    def atoms_of(self, heavy: bool) -> Atoms:
        """The atoms of stage 2: c_ℓ = :meth:`atom_mass`·σ_ℓ on the levels of ``lattice``."""
        atoms = build_atoms(self.lattice, factor=self.atom_mass(heavy))
        if atoms is None:
            raise ValueError("JointQuantiles(lattice=None) has no atoms")
        return atoms

    def _tables(self, sorted_x: NDArray[np.float64], coef: float) -> _JointTables:
        """The continuum's forward dynamic programme on sorted, clipped data at kernel coefficient ``coef``
        (= ε′/4) over the n + 1 intervals."""
        qs = self.unique_qs
        m, n = qs.size, sorted_x.size
        gaps = np.concatenate(([qs[0]], np.diff(qs), [1.0 - qs[-1]])) * n  # target count per gap
        edges = np.concatenate(([self.lower], sorted_x, [self.upper]))
        with np.errstate(divide="ignore"):
            log_mass = np.log(np.diff(edges))  # n + 1 intervals
        first, tot, nus, log_fact = _joint_forward(log_mass, gaps, coef, m)
        return _JointTables(edges, log_mass, gaps, log_fact, first, tot, nus, coef)

    def _details(self) -> dict[str, Any]:
        out = {
            **super()._details(),
            "method": "joint_exp",
            "lattice": self.lattice,
        }
        if self.lattice is not None:
            out["atoms"] = self.atoms
        return out

    def _release(self, prepared: Records, rng: np.random.Generator) -> Release:  # type: ignore[override]
        values, info = self._draw(prepared, rng)
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        n = prepared.n
        return self._make_release(
            values[self.inverse],
            sampler=sampler_label(self.numerics),
            details={
                **self._details(),
                **info,
                "windows": self.window_plan(n) is not None,
                "engine": prepared.engine,
                "epsilon_float_margin": self.margin(n),
            },
            not_private=NotPrivate(),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
