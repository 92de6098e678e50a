"""Exponential-mechanism quantiles: one quantile (Smith 2011), several under one budget (Kaplan, Schnapp &
Stemmer 2022, recursive; Gillenwater, Joseph & Kulesza 2021, JointExp), sampled exactly.

**One quantile** (:class:`ExponentialQuantile`; docs/theory/quantiles.md#the-exponential-mechanism-quantile).
Sort the clipped data x_(1) ≤ … ≤ x_(n) in the public bounds [a, b] and pad with x_(0) = a, x_(n+1) = b. The
intervals I_j = [x_(j), x_(j+1)], j = 0..n, cover [a, b]; a point y inside I_j has exactly j records below it.
The output density is

    p_x(y) ∝ exp(−ε′·|j − t|/2)   for y in I_j,    t = max(1, ⌈q·n⌉) − 1/2,

the exponential mechanism over the continuum with utility u(y) = −|#{i : x_i < y} − t| (Smith, STOC 2011;
diffprivlib's ``quantile`` has the same factor with t = q·n; our t centres the top weight on x_(r), the
rank of :class:`~smoothdp.central.statistics.Quantile`). Under substitution #{x_i < y} moves by at most
1 at every y, so u has sensitivity 1 and the mechanism is ε′-DP. Sampling: the interval with probability ∝
|I_j|·exp(−ε′|j − t|/2), then a uniform point inside it, rounded onto the public grid of the bounds by
:func:`smoothdp.exact.uniform_on_grid`. O(n log n) for the sort, O(n) after.

**A public lattice for tied data** (``lattice=``, default 1.0: the integers;
docs/theory/quantiles.md#a-public-lattice-for-tied-data). The base measure is μ = Lebesgue + c·(counting
measure on the public lattice sℤ within the bounds), c = 2^-14·s, and the utility is tie-aware,
u(y) = −dist(t, [#{x_i < y}, #{x_i ≤ y}]) (sensitivity 1; equal to the rank utility off the data). The
exponential mechanism w.r.t. any data-independent μ is ε-DP, and on tied lattice data (ages, counts, round
incomes) it outputs the tied value itself. Sampling stays O(n) after the sort: the atoms inside each open gap
between order statistics are grouped with the gap (same utility; their number by exact floor/ceil), one atom
per distinct data value on the lattice; inside a chosen gap, an exact Bernoulli chooses the continuum or a
uniform lattice point.

**Exact sampling with float weights** (docs/theory/quantiles.md#sampling-exactly-from-float-weights). The log
weights are computed in floats with a certified absolute error η (a public bound from n, ε and the bounds);
the interval is then drawn *exactly* in proportion to the float weights (dyadic rationals f·2^k), by a float
cumulative sum with a certified error bound and a uniform whose bits are drawn lazily, with an exact
integer fallback where the float comparison is undecided. The mechanism actually run is therefore the
exponential mechanism with weights within a factor e^{±η} of the ideal ones, which is (ε′ + 4η)-DP; we use
ε′ = ε − 4η.

**Discrete data** (``candidates=``): the output is one of a public sorted list of candidates g with weight
exp(−ε·d(g)/2), d(g) = max(0, #{x < g} − t, t − #{x ≤ g}) (0 for any candidate that is a valid
t-quantile, ties included); d has sensitivity 1 under substitution.

**Several quantiles**: :class:`RecursiveQuantiles` (KSS, ICML 2022) estimates the middle quantile, splits the
data at the released value and recurses on both halves (docs/theory/quantiles.md#recursive-quantiles);
:class:`JointQuantiles` (JointExp, ICML 2021) samples all quantiles at once from one exponential mechanism
(docs/theory/quantiles.md#jointexp).

Neighbours: ``"substitution"`` (one record replaced; n public) for every mechanism here; ``"add_remove"``
(n private) for :class:`ExponentialQuantile` and :class:`RecursiveQuantiles`: target q·n, a rank distance
capped at a public C and a public float margin, and with atoms a private lattice test first
(docs/theory/quantiles.md#adding-or-removing-a-record).

**Modules** (each public within the package; what they share is public, none imports another's private name):
:mod:`.exact_draws` (exact draws from float weights), :mod:`.atoms` (the multi-scale public lattice),
:mod:`.atom_selection` (the private choice of the heavy level), :mod:`.em_samplers` (the whole-data samplers
of one quantile and their add/remove calibration), :mod:`.window` (one quantile from a window of ranks),
:mod:`.exponential` (:class:`ExponentialQuantile`), :mod:`.level_or_smooth` (one quantile at large ε: a heavy
level, else smooth sensitivity), :mod:`.multi` (what the several-quantile mechanisms
share), :mod:`.recursive` (:class:`RecursiveQuantiles`), :mod:`.log_scans` (JointExp's log-space scans),
:mod:`.joint` (:class:`JointQuantiles`), :mod:`.greedy` (JointExp's programme on a lattice) and
:mod:`.nested` (JointExp over nested bounds).
"""

from __future__ import annotations

from smoothdp.central.quantiles.atoms import check_lattice
from smoothdp.central.quantiles.em_samplers import prepare_data, target_rank
from smoothdp.central.quantiles.exact_draws import exact_categorical, log_weight_margin
from smoothdp.central.quantiles.exponential import ExponentialQuantile
from smoothdp.central.quantiles.joint import JointQuantiles, joint_margin
from smoothdp.central.quantiles.level_or_smooth import HeavyLevelOrSmoothQuantile
from smoothdp.central.quantiles.log_scans import log_sum
from smoothdp.central.quantiles.multi import recursive_levels
from smoothdp.central.quantiles.recursive import RecursiveQuantiles
from smoothdp.exact.bits import rational_choice

__all__ = [
    "ExponentialQuantile",
    "HeavyLevelOrSmoothQuantile",
    "JointQuantiles",
    "RecursiveQuantiles",
    "check_lattice",
    "exact_categorical",
    "joint_margin",
    "log_sum",
    "log_weight_margin",
    "prepare_data",
    "rational_choice",
    "recursive_levels",
    "target_rank",
]
