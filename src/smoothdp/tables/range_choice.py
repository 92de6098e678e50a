"""One range decision for every group of a grouped mean
(docs/theory/tables.md#one-range-decision-for-every-group).

Under add/remove a group's mean (:class:`~smoothdp.central.moments.ratio_mean.RatioMean`) spends 10% of its ε
on a private clipping range [c − G, c + G] ∩ [l, u] from a high quantile of the magnitudes |x − c|
(c = 0 clamped into the bounds, G = 2^(⌈y⌉ + 2) for the quantile's log2 y). The range can narrow the bounds
only if that quantile lies below R/4, R = max(u − c, c − l): on data that fill their bounds (ages in
(0, 125), hours in (0, 100)) it never does, and the 10% is lost in every group.

The quantile's coverage level is at least 1/2, so when most records have a magnitude of at least R/4 the
typical group cannot narrow its bounds. A grouped release asks that question **once, of the pooled records
of every group**, with one noisy count:

    D = #{i : |x_i − c| ≥ R/4} − #{i : |x_i − c| < R/4},   D̃ = D + K,

K exact discrete Laplace of scale 1/ε_test, at ε_test = ``TEST_SHARE``·ε_g. D̃ > 0: every group runs the mean
without a range (``range_fraction=0``, the sum gets the range's share); otherwise every group runs the default
mean. Each group's call gets ε_main = ε_g − ε_test. Adding or removing one record moves D by 1; a person's k
rows move it by at most k, so the test costs k·ε_test per person by group privacy, as each group's call costs
(its rows)·ε_main: with ε_g = ε_stat/k, ε_stat in all (the argument of the pooled lattice choice). The
decision is a private output covered by the guarantee and is not reported: the table's public description
names the rule.

**A pooled centre** (docs/theory/tables.md#a-pooled-centre). A group's sum without a range is centred on the
bounds' midpoint, and the count's noise enters its mean through |x̄_g − midpoint|: ages in (0, 125) average
38, 24 years off. Before the decision, the pooled records' ratio mean without a range
(:meth:`~smoothdp.central.moments.ratio_mean.RatioMean.release_totals`, at ε_centre = ``CENTRE_SHARE``·ε_g,
from the pooled n and exact clipped sum) gives ĉ. When its noisy count is large enough for ĉ to be reliable
(ε_S·Ñ ≥ ``CENTRE_MIN_RANKS``, ε_S its sum's share: the sum's noise below 1/64 of the width), every group
without a range centres its sum on m = midpoint + ``SHRINK``·(ĉ − midpoint), a function of released values
only. ε_main = ε_g − ε_test − ε_centre in both branches (the centre is drawn in both, used in one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.moments.ratio_mean import RatioMean, magnitude_scale
from smoothdp.composition import split_epsilon
from smoothdp.keywords import check_keywords_of
from smoothdp.noise import DiscreteLaplace
from smoothdp.sums import exact_sum
from smoothdp.validation import prepare_records

__all__ = [
    "CENTRE_MIN_RANKS",
    "CENTRE_PROOF",
    "CENTRE_SHARE",
    "RANGE_CHOICE_PROOF",
    "SHRINK",
    "TEST_SHARE",
    "RangeChoice",
    "choose_range",
    "column_range_counts",
    "prepared_range_counts",
    "runs_range_choice",
]

#: The proofs of the pooled range decision and of the pooled centre.
RANGE_CHOICE_PROOF = "docs/theory/tables.md#one-range-decision-for-every-group"
CENTRE_PROOF = "docs/theory/tables.md#a-pooled-centre"
#: The test's share of a group's ε (the pooled D has the sensitivity of one record, so a small share
#: decides tables of a few thousand rows and more).
TEST_SHARE = 0.01
#: The pooled centre's share of a group's ε, the reliability it needs (its sum's ε times its noisy count), and
#: how far from the midpoint towards it the groups centre their sums (the groups' means spread around the
#: pooled one, and every step away from the midpoint widens the sum's sensitivity: docs/theory/tables.md).
CENTRE_SHARE = 0.02
CENTRE_MIN_RANKS = 32.0
SHRINK = 0.75
#: The details of a group's mean that depend on the decision (scrubbed from the public description).
_CHOICE_DETAILS = ("range_fraction", "epsilon_count_range_sum", "epsilon_count_sum_without_range", "centre")


@dataclass(frozen=True)
class RangeChoice:
    """What every group's mean receives: whether it may look for a range, and the ε left for its call."""

    private_range: bool
    epsilon_main: float
    epsilon_test: float
    epsilon_centre: float = 0.0
    centre: float | None = None  # the groups' sum centre without a range (None: the bounds' midpoint)

    def call_options(self) -> dict[str, Any]:
        if self.private_range:
            return {}
        return {"range_fraction": 0.0, **({} if self.centre is None else {"centre": self.centre})}

    def describe(self, meta: dict[str, Any]) -> dict[str, Any]:
        """A group's public description with the decision's traces replaced by the rule that made it."""
        if not meta:
            return meta
        details = {k: v for k, v in meta.get("details", {}).items() if k not in _CHOICE_DETAILS}
        details["range_choice"] = {
            "rule": "one pooled noisy count decides for every group whether its mean looks for a range; "
            "without one, a pooled ratio mean gives the centre of every group's sum",
            "epsilon": self.epsilon_test,
            "epsilon_centre": self.epsilon_centre,
            "epsilon_per_group": self.epsilon_main,
            "proof": RANGE_CHOICE_PROOF,
            "centre_proof": CENTRE_PROOF,
        }
        return {**meta, "details": details}


def runs_range_choice(name: str, call_neighbours: str) -> bool:
    """Whether a statistic of the table runs the pooled decision (public: its name and the relation of the
    single-column calls, whose default mean is then the ratio mean)."""
    return name == "mean" and call_neighbours == "add_remove"


def _centre_and_reach(bounds: tuple[float, float]) -> tuple[float, float]:
    """c, the ratio mean's centre of magnitudes, and R/4 (R its largest magnitude in the bounds)."""
    c, largest = magnitude_scale(*bounds)
    return c, largest / 4.0


def prepared_range_counts(prepared: NDArray[np.float64], bounds: tuple[float, float]) -> NDArray[Any]:
    """[#far, #near, the exact sum] of records already under the data policy of the single-column functions
    (clipped into the bounds; any order), Python integers and a Fraction: totals of disjoint parts add up."""
    c, reach = _centre_and_reach(bounds)
    far = int(np.count_nonzero(np.abs(prepared - c) >= reach))
    return np.array([far, prepared.size - far, exact_sum(prepared)], dtype=object)


def column_range_counts(
    values: NDArray[np.float64], bounds: tuple[float, float], *, name: str
) -> NDArray[Any]:
    """:func:`prepared_range_counts` of one raw part of a column (NaN → the bounds' midpoint, clipped into
    the bounds, as the single-column functions prepare it)."""
    prepared = prepare_records(values, bounds[0], bounds[1], clip=True, name=f"column {name!r}", min_size=0)
    return prepared_range_counts(prepared, bounds)


def choose_range(
    counts: NDArray[Any], *, bounds: tuple[float, float], epsilon_group: float, rng: np.random.Generator
) -> RangeChoice:
    """The pooled centre, then the pooled decision (module docstring), from [#far, #near, exact sum] of every
    kept record of the column, with the exact samplers."""
    eps_test, eps_centre, eps_main = split_epsilon(epsilon_group, TEST_SHARE, CENTRE_SHARE)
    far, near = int(counts[0]), int(counts[1])
    centre = pooled_centre(far + near, Fraction(counts[2]), bounds, eps_centre, rng)
    scale = math.nextafter(1.0 / eps_test, math.inf)  # 1/scale ≤ ε_test
    noisy = far - near + int(DiscreteLaplace(scale).sample(rng=rng, numerics="exact"))
    return RangeChoice(
        private_range=noisy <= 0,
        epsilon_main=eps_main,
        epsilon_test=eps_test,
        epsilon_centre=eps_centre,
        centre=centre,
    )


def pooled_centre(
    n: int, clipped_sum: Fraction, bounds: tuple[float, float], epsilon: float, rng: np.random.Generator
) -> float | None:
    """The groups' sum centre m = midpoint + SHRINK·(ĉ − midpoint) from the pooled ratio mean ĉ at
    ``epsilon``, or ``None`` (the midpoint) when ĉ's noisy count is too small for it to be reliable: a
    function of the pooled mean's outputs (Ñ, ĉ) and public values."""
    mech = RatioMean(epsilon=epsilon, bounds=bounds, range_fraction=0.0)
    release = mech.release_totals(n, clipped_sum, rng=rng)
    if mech.eps_sum_alone * release.not_private.extra["noisy_count"] < CENTRE_MIN_RANKS:
        return None
    lower, upper = bounds
    mid = lower / 2 + upper / 2  # no overflow; any public function of ĉ serves
    return min(max(mid + SHRINK * (float(release.value) - mid), lower), upper)


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
