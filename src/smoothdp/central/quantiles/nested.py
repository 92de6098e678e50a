"""JointExp over nested public bounds: the bounds are part of the output of the one exponential mechanism,
so that wide declared bounds cost no budget (docs/theory/quantiles.md#jointexp-over-nested-bounds;
JointExp: Gillenwater, Joseph & Kulesza, ICML 2021).

With wide bounds and a small ε·n, JointExp's outputs follow the volume of the bounds instead of the data.
Instead of spending part of ε on narrowing the bounds first, the mechanism draws a pair (k, o): k indexes
a public family of nested sub-bounds B_0 = [a, b] ⊃ B_1 ⊃ … ⊃ B_K (each half as wide as the one before,
anchored at a when a ≥ 0, at b when b ≤ 0, centred at 0 otherwise), and o is an output vector of JointExp
on B_k with the records clipped into B_k. The base measure gives B_0 the prior 1, B_k (k ≥ 1) the prior
π_k = e^{−λ}·2^{−k/2} (λ = 3: leaving the declared bounds must be earned by the data), and,
inside it, JointExp's base measure normalised to total mass one; the utility of (k, o) is JointExp's on
B_k, of sensitivity 2 for every (k, o). So the pair is drawn with probability

    P(k) ∝ π_k·Z_k(x)/μ(B_k)^m,   then o ~ JointExp on B_k,

Z_k the JointExp normaliser on B_k: a choice by evidence, which picks the narrowest bounds that still
hold the quantiles asked for, and the declared bounds when the data fill them. The whole release is one
exponential mechanism: ε-DP under substitution, nothing spent on the bounds. The chosen bounds are
reported in ``details["bounds_used"]`` (a private output, covered by the guarantee).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.quantiles.atoms import MULTISCALE, Atoms, LatticeSpec
from smoothdp.central.quantiles.em_samplers import prepare_data
from smoothdp.central.quantiles.exact_draws import exact_categorical
from smoothdp.central.quantiles.joint import JointQuantiles
from smoothdp.central.quantiles.multi import check_quantile_list
from smoothdp.exact import sampler_label
from smoothdp.mechanism import Mechanism
from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_int

__all__ = ["DEFAULT_HALVINGS", "LEAVE_PRIOR", "NestedJointQuantiles", "nested_bounds", "nested_margin"]

#: K: the number of halvings of the declared bounds (B_K is 2^-K as wide as [a, b]).
DEFAULT_HALVINGS = 16
#: λ: the prior's price, in nats, of an outcome other than the declared bounds with the stage-1 atoms.
LEAVE_PRIOR = 3.0
_U = 2.0**-53
_LIBM_ULPS = 64.0
_LN_TINY = 745.0


class Outcome(NamedTuple):
    """One outcome of the draw of the base measure: the candidate bounds, the atoms, the log prior, and the
    level made heavy by this draw (None: the atoms of stage 1)."""

    bounds_index: int
    atoms: Atoms | None
    log_prior: float
    heavy_level: int | None


def nested_bounds(lower: float, upper: float, halvings: int) -> list[tuple[float, float]]:
    """B_0 = (lower, upper) and its halvings B_k, k = 1..K (public; duplicates dropped): anchored at
    ``lower`` when lower ≥ 0, at ``upper`` when upper ≤ 0, else (max(lower, −M·2^-k), min(upper, M·2^-k))
    with M = max(−lower, upper)."""
    width = upper - lower
    out = [(lower, upper)]
    for k in range(1, halvings + 1):
        if lower >= 0.0:
            lo, hi = lower, min(upper, lower + math.ldexp(width, -k))
        elif upper <= 0.0:
            lo, hi = max(lower, upper - math.ldexp(width, -k)), upper
        else:
            reach = math.ldexp(max(-lower, upper), -k)
            lo, hi = max(lower, -reach), min(upper, reach)
        if lo < hi and (lo, hi) != out[-1]:
            out.append((lo, hi))
    return out


def nested_margin(*, programme_margin: float, m: int, n: int, widths: list[float], mass_ulps: float) -> float:
    """The public loss margin of the draw of k, added to the programmes' own margin (``programme_margin``,
    the largest over the bounds): 4·E_G, where E_G bounds the float error of every weight
    ln π_k − m·ln μ(B_k) + ln Z_k (docs/theory/quantiles.md#jointexp-over-nested-bounds):

    * ln Z_k = fsum(ν) + ln Σ exp(ŵ): the first backward draw's weights ŵ are within E* of their exact
      values (the programme's analysis; E* ≤ programme_margin/(8m)), the offsets sum with error ≤ u·mM,
      the log-sum over S ≤ 4n + 2 weights with error ≤ (S + 4K + 2)u + uM;
    * m·ln μ(B_k) errs by at most m(2KΛ + mass_ulps + 2)u and ln π_k = −k·ln 2 by (k + 1)u;
    * M = (m + 1)Λ + ln((m + 1)!) + 4n + 8 bounds every magnitude, Λ = 745 + max |ln width|.
    """
    lam = _LN_TINY + max(abs(math.log(w)) for w in widths)
    big_m = (m + 1.0) * lam + math.lgamma(m + 2.0) + 4.0 * n + 8.0
    states = 4.0 * n + 2.0
    e_star = programme_margin / (8.0 * m)
    e_g = e_star + _U * (
        (m + 2.0) * big_m
        + states
        + 4.0 * _LIBM_ULPS
        + 2.0
        + m * (2.0 * _LIBM_ULPS * lam + mass_ulps + 2.0)
        + len(widths)
        + 1.0
    )
    return 4.0 * e_g


class NestedJointQuantiles(Mechanism):
    """Several quantiles by JointExp over nested public bounds (module docstring): the bounds B_k and the
    outputs drawn together by one exponential mechanism.

    Guarantee: pure ε-DP under substitution: the exponential mechanism with a data-independent base
    measure (Σ_k π_k × JointExp's base measure on B_k, normalised) and a utility of sensitivity 2
    (docs/theory/quantiles.md#jointexp-over-nested-bounds), after the lattice's private selection of
    heavy atoms when it runs (5% of ε; docs/theory/quantiles.md#choosing-the-heavy-level). Sampled exactly
    from certified float weights: k by its weights ln π_k − m·ln μ(B_k) + ln Z_k, then JointExp on B_k;
    the float margin of both draws is charged to ε (:meth:`margin`).

    Parameters
    ----------
    qs, epsilon, bounds, lattice, clip, clamp, numerics
        As :class:`~smoothdp.central.quantiles.JointQuantiles`.
    atoms
        ``"auto"`` (default): stage 1 keeps the light atoms and spends nothing; the draw also offers the
        declared bounds with heavy atoms on each level, so that the data's evidence picks the heavy level
        (docs/theory/quantiles.md#jointexp-over-nested-bounds). ``"test"``, ``"heavy"``, ``"light"``: stage 1
        as :class:`~smoothdp.central.quantiles.JointQuantiles`, and no heavy outcomes.
    halvings
        K ≥ 0: the narrowest candidate bounds are 2^-K as wide as the declared ones (default 16).
    """

    name: ClassVar[str] = "joint exponential mechanism over nested bounds"
    proof: ClassVar[str] = "docs/theory/quantiles.md#jointexp-over-nested-bounds"
    source = "Gillenwater, Joseph & Kulesza, Differentially private quantiles, ICML 2021 (JointExp)"

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        lattice: LatticeSpec = MULTISCALE,
        atoms: str = "auto",
        halvings: int = DEFAULT_HALVINGS,
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
    ) -> None:
        self.halvings = check_int("halvings", halvings, minimum=0, maximum=60)
        if not isinstance(atoms, str) or atoms not in ("auto", "test", "heavy", "light"):
            raise ValueError(f"atoms must be 'auto', 'test', 'heavy' or 'light'; got {atoms!r}")
        self.atoms = atoms
        # "auto": light atoms in stage 1 (no private selection) and the heavy levels offered in the draw.
        stage1 = "light" if atoms == "auto" else atoms
        options: dict[str, Any] = {"lattice": lattice, "atoms": stage1, "clip": clip, "clamp": False}
        self.declared = JointQuantiles(qs, epsilon=epsilon, bounds=bounds, numerics=numerics, **options)
        self.qs = check_quantile_list(qs)
        self.epsilon = self.declared.epsilon
        self.lower, self.upper = self.declared.lower, self.declared.upper
        self.clip = check_bool("clip", clip)
        self.clamp = check_bool("clamp", clamp)
        self.numerics = self.declared.numerics
        self.lattice = self.declared.lattice
        self.candidates = [
            JointQuantiles(qs, epsilon=epsilon, bounds=b, numerics=numerics, **options)
            for b in nested_bounds(self.lower, self.upper, self.halvings)
        ]
        self.guarantee = PureDP(self.epsilon, neighbours="substitution")
        self.calibration = None
        self._margins: dict[int, float] = {}

    @property
    def statistic_name(self) -> str:
        return f"quantiles({', '.join(f'{q:g}' for q in self.qs)})"

    def heavy_outcomes(self, n: int) -> bool:
        """Whether the draw also offers the declared bounds with heavy atoms on one level (public: a lattice
        and ``atoms="auto"``, under which stage 1 keeps light atoms and spends nothing)."""
        del n
        return self.lattice is not None and self.atoms == "auto"

    def outcomes(self, n: int, atoms: Atoms | None) -> list[Outcome]:
        """The outcomes of the draw of the base measure: (candidate bounds index, atoms, ln prior), the
        prior 1 on B_0, e^{−λ}·2^{−k/2} on B_k (k ≥ 1) and, for heavy atoms on one of L levels, e^{−λ}/L
        (λ = :data:`LEAVE_PRIOR`)."""
        out = [
            Outcome(k, atoms, 0.0 if k == 0 else -0.5 * k * math.log(2.0) - LEAVE_PRIOR, None)
            for k in range(len(self.candidates))
        ]
        if atoms is not None and self.heavy_outcomes(n):
            levels = len(atoms.levels)
            heavy = self.declared.atom_mass(True)
            out += [
                Outcome(0, atoms.with_level_factor(i, heavy), -LEAVE_PRIOR - math.log(levels), i)
                for i in range(levels)
            ]
        return out

    def _atoms_options(self, n: int) -> list[Atoms | None]:
        if self.lattice is None:
            return [None]
        options: list[Atoms | None] = list(self.declared.stage_atom_options(n))
        if self.heavy_outcomes(n):
            light = self.declared.atoms_of(False)
            heavy = self.declared.atom_mass(True)
            options += [light.with_level_factor(i, heavy) for i in range(len(light.levels))]
        return options

    def margin(self, n: int) -> float:
        """The public loss margin on n records: the largest programme margin over the candidate bounds and
        atoms plus the margin of the draw of the outcome (:func:`nested_margin`)."""
        if n in self._margins:
            return self._margins[n]
        options = self._atoms_options(n)
        worst = max(c.margin_for(n, a) for c in self.candidates for a in options)
        masses = [a.mass_ulps for a in options if a is not None]
        self._margins[n] = worst + nested_margin(
            programme_margin=worst,
            m=int(self.declared.unique_qs.size),
            n=n,
            widths=[c.width for c in self.candidates],
            mass_ulps=max(masses, default=2.0) + 6.0,
        )
        return self._margins[n]

    def admissible(self, n: int) -> bool:
        """Whether the float margin stays within 10% of the stage's ε at n records (public)."""
        return self.margin(n) <= 0.1 * self.declared.epsilon_main(n)

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_data(data, self.lower, self.upper, clip=self.clip)

    def log_weights(
        self, sorted_x: NDArray[np.float64], outcomes: list[Outcome], coef: float
    ) -> tuple[NDArray[np.float64], list[Any]]:
        """The float log weights ln π − m·ln μ(B_k) + ln Z of the outcomes, and their programmes."""
        m = int(self.declared.unique_qs.size)
        weights, programmes = [], []
        for k, atoms, log_prior, _ in outcomes:
            cand = self.candidates[k]
            clipped = np.clip(sorted_x, cand.lower, cand.upper)
            prog = cand.programme(clipped, atoms, coef)
            mass = cand.upper - cand.lower
            if atoms is not None:
                _, gap_mass, end_mass = atoms.scan(np.array([cand.lower, cand.upper]))
                mass = mass + float(gap_mass[0]) + float(end_mass[0]) + float(end_mass[1])
            weights.append(log_prior - m * math.log(mass) + prog.log_normaliser())
            programmes.append(prog)
        return np.array(weights), programmes

    def sample_with_bounds(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], tuple[float, float], dict[str, Any]]:
        """One draw on prepared data: the sorted outputs, the bounds B_k used and the report of the atoms."""
        n = sorted_x.size
        if not self.admissible(n):
            raise ValueError(
                f"JointExp's certified float margin exceeds 10% of epsilon for n={n}, "
                f"m={self.declared.unique_qs.size} quantiles at epsilon={self.epsilon:g}; "
                "use method='recursive'"
            )
        atoms, info = self.declared.choose_atoms(sorted_x, rng)
        coef = (self.declared.epsilon_main(n) - self.margin(n)) / 4.0
        outcomes = self.outcomes(n, atoms)
        weights, programmes = self.log_weights(sorted_x, outcomes, coef)
        pick = exact_categorical(weights, rng)
        k, chosen, _, level = outcomes[pick]
        if level is not None and chosen is not None:  # heavy atoms on one level, chosen by this draw
            info = {
                "lattice_test": {
                    **info["lattice_test"],
                    "atoms": "heavy",
                    "level": chosen.levels[level].spacing,
                }
            }
        cand = self.candidates[k]
        return programmes[pick].draw(rng), (cand.lower, cand.upper), info

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        """One output (in the order of ``qs``) on prepared data, no accountant (simulations, tests)."""
        values = self.sample_with_bounds(sorted_x, rng)[0]
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        return values[self.declared.inverse]

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        values, used, info = self.sample_with_bounds(prepared, rng)
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        details = {
            "bounds": (self.lower, self.upper),
            "clip": self.clip,
            "clamp": self.clamp,
            "method": "joint_exp",
            "lattice": self.lattice,
            "atoms": self.atoms,
            "bounds_used": used,
            "halvings": self.halvings,
            **info,
            "epsilon_float_margin": self.margin(prepared.size),
        }
        return self._make_release(
            values[self.declared.inverse],
            sampler=sampler_label(self.numerics),
            details=details,
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return (
            f"NestedJointQuantiles({self.guarantee}, bounds=({self.lower:g}, {self.upper:g}), "
            f"halvings={self.halvings})"
        )
