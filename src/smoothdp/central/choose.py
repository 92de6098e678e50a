"""Choices made from public parameters only: the method of ``method="auto"`` and the smoothness β of the
smooth-sensitivity median / quantile (docs/theory/quantiles.md#choosing-the-method-and-beta).

Nothing here sees the data: every input is public (n, ε, the bounds, q, the number of quantiles, whether
the caller declared the data discrete). The choice is therefore part of the mechanism's definition and
costs no budget.
"""

from __future__ import annotations

from smoothdp.central.quantiles.atom_selection import TEST_SHARE, selection_confident
from smoothdp.central.quantiles.atoms import LatticeSpec, build_atoms, check_lattice
from smoothdp.central.smooth_sensitivity.quantile_beta import choose_beta, median_error_bound
from smoothdp.validation import check_epsilon, check_int

__all__ = [
    "MULTI_METHODS",
    "NARROW_BELOW",
    "SCALE_FREE_MIN_EPSILON_N",
    "SINGLE_METHODS",
    "SMOOTH_SENSITIVITY_MIN_EPSILON",
    "UNBOUNDED_METHODS",
    "choose_beta",
    "choose_method",
    "choose_unbounded_method",
    "evidence_chooses_atoms",
    "median_error_bound",
    "selects_heavy_level",
]

#: Methods of ``median`` / ``quantile``.
SINGLE_METHODS = (
    "auto",
    "exponential",
    "smooth_sensitivity",
    "inverse_sensitivity",
    "piecewise_laplace",
    "unbounded",
)
#: Methods of ``quantiles`` (several at once).
MULTI_METHODS = ("auto", "joint_exp", "recursive", "exponential", "smooth_sensitivity")
#: Methods of ``median`` / ``quantile`` that need no bounds (``bounds=None``): the scale-free exponential
#: mechanism and AboveThreshold on a ladder; every other method runs inside a private range.
UNBOUNDED_METHODS = ("auto", "exponential", "unbounded")
#: With ``bounds=None``, ``method="auto"`` runs the scale-free exponential mechanism from ε·n ≥ 64 on
#: (substitution: n public), AboveThreshold below it (docs/quantiles.md#no-bounds).
SCALE_FREE_MIN_EPSILON_N = 64.0
#: From this ε on, the smooth-sensitivity median (β from :func:`choose_beta`) beat the exponential
#: mechanism in our measurements (docs/quantiles.md#which-method); below it the exponential mechanism won.
SMOOTH_SENSITIVITY_MIN_EPSILON = 1.5

#: Several quantiles under ``method="auto"`` narrow the declared bounds privately first when
#: ε·n < NARROW_BELOW·m (:func:`narrow_bounds_first`; docs/theory/quantiles.md#choosing-the-method-and-beta).
NARROW_BELOW = 72.0


def choose_method(
    *, n: int, epsilon: float, n_quantiles: int = 1, discrete: bool = False, joint_ok: bool = True
) -> str:
    """The method ``method="auto"`` runs, from public parameters (docs/quantiles.md#which-method):

    * several quantiles: ``"joint_exp"`` (JointExp) when its certified float margin is within 10% of ε
      (``joint_ok``, a function of n, m, ε and the bounds), else ``"recursive"``;
    * one quantile: ``"exponential"`` when ``discrete`` (public candidates) or ε < 1.5, else
      ``"smooth_sensitivity"`` with β from :func:`choose_beta`.
    """
    check_int("n", n, minimum=0)
    eps = check_epsilon(epsilon)
    m = check_int("n_quantiles", n_quantiles, minimum=1)
    if m > 1:
        return "joint_exp" if joint_ok else "recursive"
    if discrete or eps < SMOOTH_SENSITIVITY_MIN_EPSILON or n < 1:
        return "exponential"
    return "smooth_sensitivity"


def narrow_bounds_first(*, n: int, epsilon: float, n_quantiles: int) -> bool:
    """Whether ``quantiles(method="auto")`` draws the bounds with the outputs (JointExp over nested bounds,
    no share of ε spent on them; public inputs only; docs/theory/quantiles.md#choosing-the-method-and-beta).

    JointExp's utility spans at most 2n, so its outputs can prefer the width of the bounds to the data only
    when ε·n/2 ≤ m·ln(W/w), W the width of the bounds and w that of the data around the quantiles. With
    w ≥ 2^-52·W (the float resolution of the bounds) the right side is at most 36·m nats: from
    ε·n ≥ 72·m on, the bounds' width cannot dominate and the halvings would only cost time. Below it, for
    m ≥ 2 quantiles and n ≥ 1, the nested bounds are drawn.
    """
    nn = check_int("n", n, minimum=0)
    eps = check_epsilon(epsilon)
    m = check_int("n_quantiles", n_quantiles, minimum=1)
    return m >= 2 and nn >= 1 and eps * nn < NARROW_BELOW * m


def evidence_chooses_atoms(*, n: int, epsilon: float, lattice: LatticeSpec) -> bool:
    """Whether ``quantiles(method="auto")`` lets the data's evidence choose heavy atoms inside the one
    exponential mechanism (JointExp over nested bounds, no ε spent) instead of the private selection
    (public: a lattice, and the selection not confident at n, ε and the number of levels;
    :func:`~smoothdp.central.quantiles.atom_selection.selection_confident`)."""
    atoms = build_atoms(check_lattice(lattice))
    return atoms is not None and n > 0 and not selection_confident(n, TEST_SHARE * epsilon, len(atoms.levels))


def selects_heavy_level(
    *, n: int, epsilon: float, bounds: tuple[float, float], lattice: LatticeSpec, atoms: str = "auto"
) -> bool:
    """Whether one quantile under substitution with ``atoms="auto"`` selects a heavy level privately first
    (public: n, ε, the bounds, the lattice and the atoms choice): the rule of
    :meth:`~smoothdp.central.quantiles.ExponentialQuantile.selects_level`. From ε = 1.5 on, ``method="auto"``
    then runs :class:`~smoothdp.central.quantiles.HeavyLevelOrSmoothQuantile` instead of the
    smooth-sensitivity quantile alone (docs/theory/quantiles.md#a-heavy-level-or-smooth-sensitivity), in
    ``quantile`` and in ``quantiles`` with one distinct level. Under add/remove n is not read (``n=0``):
    False."""
    from smoothdp.central.quantiles import ExponentialQuantile

    if atoms != "auto" or lattice is None or n < 1:
        return False
    return ExponentialQuantile(0.5, epsilon=epsilon, bounds=bounds, lattice=lattice).selects_level(n)


def choose_unbounded_method(*, n: int | None, epsilon: float) -> str:
    """The method of ``median``/``quantile`` with ``bounds=None`` and ``method="auto"`` (public inputs only):
    ``"exponential"`` (the scale-free exponential mechanism,
    :class:`~smoothdp.central.unbounded.scale_free.ScaleFreeQuantile`) when n is public (``n`` given) and
    ε·n ≥ 64, else ``"unbounded"`` (:class:`~smoothdp.central.unbounded.ladder.UnboundedQuantile`). Below ε·n
    ≈ 60 the scale-free measure's octaves outside the data outweigh the data and its release can land anywhere
    up to 2^1021, while AboveThreshold stops near 0 (docs/quantiles.md#no-bounds). Under add/remove
    (``n=None``: n private) the rule cannot look at n: AboveThreshold."""
    eps = check_epsilon(epsilon)
    if n is None:
        return "unbounded"
    nn = check_int("n", n, minimum=0)
    return "exponential" if eps * nn >= SCALE_FREE_MIN_EPSILON_N else "unbounded"
