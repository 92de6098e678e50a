"""Several quantiles by recursive splitting (Kaplan, Schnapp & Stemmer, ICML 2022):
:class:`RecursiveQuantiles` (docs/theory/quantiles.md#recursive-quantiles).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.central.quantiles.atoms import Atoms, LatticeSpec, check_lattice
from smoothdp.central.quantiles.em_samplers import (
    atoms_of_choice,
    capped_calibration,
    check_atom_choice,
    heavy_atoms,
    rank_sensitivity,
    sample_em_lattice,
    sample_em_quantile,
    split_target,
)
from smoothdp.central.quantiles.exact_draws import log_weight_margin
from smoothdp.central.quantiles.heavy_level import (
    ADD_REMOVE_ATOMS_PROOF,
    add_remove_atoms,
    pre_stage_epsilon,
)
from smoothdp.central.quantiles.multi import MultiQuantile, recursive_levels
from smoothdp.exact import sampler_label
from smoothdp.keywords import check_keywords_of
from smoothdp.release import NotPrivate, Release

__all__ = [
    "RecursiveQuantiles",
]

_SMITH = "Smith, Privacy-preserving statistical estimation with optimal convergence rates, STOC 2011"
_KSS = "Kaplan, Schnapp & Stemmer, Differentially private approximate quantiles, ICML 2022"


class RecursiveQuantiles(MultiQuantile):
    """Several quantiles by recursive splitting (Kaplan, Schnapp & Stemmer, ICML 2022).

    Estimate the middle quantile with the exponential mechanism, split the records at the released value
    (x < v left, x ≥ v right), rescale the other quantiles to each side and recurse. Each level of the
    recursion spends ε_ℓ = ε/(2L) per node, L = ⌊log2 m⌋ + 1 levels, with the add/remove sensitivity
    max(q′, 1 − q′) of each node's utility.

    Guarantee: pure ε-DP under substitution: one substitution changes at most two nodes of a level, each
    by adding or removing one record (or one node by a substitution), so a level costs at most 2ε_ℓ;
    the L levels compose (docs/theory/quantiles.md#recursive-quantiles). Each node samples exactly as
    :class:`ExponentialQuantile`.

    ``neighbours="add_remove"`` (n private; empty data release from the base measure): an addition
    touches one node per level, so ε_ℓ = ε/L; every node's cap, float margin and coefficient come from
    public parameters (docs/theory/quantiles.md#adding-or-removing-a-record). ``lattice`` (default ``None``,
    the continuum; ``"multiscale"``, a spacing or several, as :class:`ExponentialQuantile`) gives the nodes
    the tie-aware utility and the atoms of :class:`ExponentialQuantile` (same sensitivities); under
    add/remove a private lattice test (5% of ε) first picks heavy or light atoms for every node
    (docs/theory/quantiles.md#the-lattice-test-without-n) and, if heavy, a private choice (2.5% of ε)
    makes one level heavy (docs/theory/quantiles.md#the-heavy-level-without-n); then ε_ℓ = 0.925ε/L.
    ``atoms="light"`` or ``"heavy"`` makes that choice public instead (no test, ε_ℓ = ε/L; ``"heavy"``:
    64·σ on every level of ``lattice``), as a grouped release does after choosing the level once for the
    whole column (docs/theory/tables.md#one-lattice-choice-for-every-group).
    """

    name: ClassVar[str] = "recursive exponential mechanism (KSS)"
    proof: ClassVar[str] = "docs/theory/quantiles.md#recursive-quantiles"
    source = f"{_KSS}; nodes: {_SMITH}"

    def __init__(
        self,
        qs: ArrayLike,
        *,
        epsilon: float,
        bounds: tuple[float, float],
        clip: bool = True,
        clamp: bool = True,
        numerics: str = "exact",
        neighbours: str = "substitution",
        lattice: LatticeSpec = None,
        atoms: str = "auto",
    ) -> None:
        super().__init__(
            qs,
            epsilon=epsilon,
            bounds=bounds,
            clip=clip,
            clamp=clamp,
            numerics=numerics,
            neighbours=neighbours,
        )
        self.lattice = check_lattice(lattice)
        #: The public choice of the atoms' masses (``atoms=``, as :class:`ExponentialQuantile`).
        self.atom_choice = check_atom_choice(atoms, self.neighbours)
        #: The nodes' atoms (None: the continuum): light, or heavy when ``atoms="heavy"``.
        self.atoms = atoms_of_choice(self.lattice, self.atom_choice)
        if self.runs_test:  # the test, the level, Lemma 10
            self.proof = ADD_REMOVE_ATOMS_PROOF  # type: ignore[misc]

    @property
    def levels(self) -> int:
        return recursive_levels(self.unique_qs.size)

    @property
    def runs_test(self) -> bool:
        """Whether the add/remove lattice test and level choice run (public: relation, lattice, ``atoms``)."""
        return (
            self.neighbours == "add_remove"
            and self.atoms is not None
            and self.atom_choice in ("auto", "test")
        )

    @property
    def epsilon_test(self) -> float:
        """The ε of the lattice test and level choice (when they run; else 0)."""
        return pre_stage_epsilon(self.epsilon) if self.runs_test else 0.0

    @property
    def epsilon_per_node(self) -> float:
        """ε/(2L) under substitution, (ε − ε_test)/L under add/remove."""
        per_level = 1.0 if self.neighbours == "add_remove" else 2.0
        return (self.epsilon - self.epsilon_test) / (per_level * self.levels)

    def _node(
        self,
        data: NDArray[np.float64],
        lo: float,
        hi: float,
        q_rel: float,
        rng: np.random.Generator,
        atoms: Atoms | None,
    ) -> float:
        """One node's draw on [lo, hi] (lo < hi) with rescaled quantile ``q_rel`` (weights exp(−ε′·d/(2Δ)),
        Δ = max(q′, 1 − q′); capped distance and public margin under add/remove)."""
        # Substitution keeps its float max(q′, 1 − q′) (covered by the margin); add/remove rounds it up.
        sens = rank_sensitivity(q_rel) if self.neighbours == "add_remove" else max(q_rel, 1.0 - q_rel)
        eps_node = self.epsilon_per_node
        n = data.size
        width = hi - lo if self.atoms is None else self._width_atoms().log_width(hi - lo)
        if self.neighbours == "add_remove":
            coef, cap, _ = capped_calibration(epsilon=eps_node, sensitivity=sens, width=width)
            target, offset = split_target(q_rel, n)
        else:
            eps_eff = eps_node / sens
            eta = log_weight_margin(epsilon=eps_eff, n=n, width=width)
            coef, cap, target, offset = 0.5 * (eps_eff - 4.0 * eta), math.inf, q_rel * n, 0.0
        if atoms is None:
            return sample_em_quantile(
                data, lower=lo, upper=hi, target=target, coef=coef, grid=self.grid, rng=rng,
                numerics=self.numerics, offset=offset, cap=cap,
            )  # fmt: skip
        return sample_em_lattice(
            data, lower=lo, upper=hi, target=target, coef=coef, lattice=atoms, grid=self.grid,
            rng=rng, numerics=self.numerics, offset=offset, cap=cap,
        )  # fmt: skip

    def _width_atoms(self) -> Atoms:
        """The atoms whose W bounds the logarithms: the heavy atoms under add/remove (public, whatever the
        test says), else the light atoms themselves."""
        assert self.atoms is not None
        if not self.runs_test:
            return self.atoms
        return heavy_atoms(self.lattice)

    def _sorted_sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
        return self._draw(sorted_x, rng)[0]

    def _draw(
        self, sorted_x: NDArray[np.float64], rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        """The sorted outputs and the add/remove lattice test's report (empty when no test runs)."""
        info: dict[str, Any] = {}
        atoms = self.atoms
        if atoms is not None and self.runs_test:
            atoms, info = add_remove_atoms(
                sorted_x, self.lattice, atoms, self.epsilon_test, rng, numerics=self.numerics
            )
        qs = self.unique_qs
        out = np.empty(qs.size)
        # Stack of (data slice, quantiles (global indices), lower, upper, q-scale offset/span).
        stack: list[tuple[NDArray[np.float64], int, int, float, float, float, float]] = [
            (sorted_x, 0, qs.size, self.lower, self.upper, 0.0, 1.0)
        ]
        while stack:
            data, i0, i1, lo, hi, q_lo, q_hi = stack.pop()
            mid = (i0 + i1 - 1) // 2 if (i1 - i0) % 2 == 0 else (i0 + i1) // 2
            span = q_hi - q_lo
            q_rel = 0.0 if span <= 0.0 else min(1.0, max(0.0, float((qs[mid] - q_lo) / span)))
            if hi > lo:
                v = self._node(data, lo, hi, q_rel, rng, atoms)
                v = min(max(v, lo), hi)  # the grid point may round just outside a non-grid end
            else:
                v = lo
            out[mid] = v
            cut = int(np.searchsorted(data, v, side="left"))
            if mid > i0:
                stack.append((data[:cut], i0, mid, lo, v, q_lo, float(qs[mid])))
            if i1 > mid + 1:
                stack.append((data[cut:], mid + 1, i1, v, hi, float(qs[mid]), q_hi))
        return out, info

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        values, info = self._draw(prepared, rng)
        if self.clamp:
            values = np.clip(values, self.lower, self.upper)
        return self._make_release(
            values[self.inverse],
            sampler=sampler_label(self.numerics),
            details={**self._details(), **({"lattice_test": info} if info else {})},
            not_private=NotPrivate(),
        )

    def _details(self) -> dict[str, Any]:
        return {
            **super()._details(),
            "method": "recursive",
            "levels": self.levels,
            "epsilon_per_node": self.epsilon_per_node,
            "lattice": self.lattice,
            **({} if self.atoms is None else {"atoms": self.atom_choice}),
        }


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
