"""A grouped release's parameters, validated from the frame's schema and the arguments alone (no data).

:func:`build_query` checks every argument of :func:`smoothdp.aggregate` (errors name the parameter and the
allowed values) and decides, before any data is read: the statistics and their output columns
(:mod:`~smoothdp.tables.plan`), the guarantee charged and what each group's call spends
(:mod:`~smoothdp.tables.composition`), and the key policy. Everything in a :class:`Query` is public.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from smoothdp.accounting import Accountant
from smoothdp.keywords import check_keywords_of
from smoothdp.tables.composition import TableBudget, resolve_neighbours, table_budget
from smoothdp.tables.groups import PublicKeys, check_by
from smoothdp.tables.plan import Plan, make_plan
from smoothdp.validation import check_bool, check_bounds, check_int

__all__ = ["Query", "build_query"]


@dataclass(frozen=True)
class Query:
    """The public decisions of one grouped release (module docstring).

    ``keys``: a :class:`PublicKeys` list, ``"private"``, or ``None`` (``by=None``: one group);
    ``max_groups``: l, the groups per person the selection and the bounding assume;
    ``epsilons``: each statistic's share of the person budget (0 for a count on the direct path: free);
    ``epsilon_keys``: the key selection's share.
    """

    by: tuple[str, ...] | None
    plan: Plan
    bounds: dict[str, tuple[float, float]]
    keys: PublicKeys | str | None
    privacy_unit: str | None
    contributions: int
    max_groups: int | None
    budget: TableBudget
    epsilons: tuple[float, ...]
    epsilon_keys: float

    @property
    def n_groups_public(self) -> int | None:
        if self.keys is None:
            return 1
        return len(self.keys) if isinstance(self.keys, PublicKeys) else None

    @property
    def selection_groups(self) -> int:
        """l for the selection's sensitivity: max_groups, else the k rows a person keeps (1 per row)."""
        if self.privacy_unit is None:
            return 1
        return self.max_groups if self.max_groups is not None else self.contributions

    def label(self) -> str:
        """A data-independent label for the accountant's ledger."""
        stats = ", ".join(s.label for s in self.plan.statistics)
        where = "the whole frame" if self.by is None else ", ".join(self.by)
        return f"grouped release by {where}: {stats}"


def _check_bounds_map(bounds: Any) -> dict[str, tuple[float, float]]:
    if bounds is None:
        return {}
    if not isinstance(bounds, Mapping):
        raise TypeError(f"bounds must be a mapping {{column: (lower, upper)}}; got {type(bounds).__name__}")
    return {str(c): check_bounds(b, name=f"bounds[{c!r}]") for c, b in bounds.items()}


def build_query(
    columns: Sequence[str],
    *,
    by: Any,
    aggs: Any,
    bounds: Any,
    epsilon: Any,
    delta: Any,
    keys: Any,
    privacy_unit: Any,
    contributions: Any,
    max_groups: Any,
    neighbours: Any,
    weights: Any,
    accountant: Accountant | None,
    return_release: Any = False,
) -> Query:
    """Validate the arguments of :func:`smoothdp.aggregate` against the frame's ``columns``."""
    check_bool("return_release", return_release)
    by_cols = check_by(by, columns)
    bounds_map = _check_bounds_map(bounds)
    relation = resolve_neighbours(neighbours, accountant)
    if by_cols is None:
        if keys is not None:
            raise ValueError(
                "keys applies to a grouped release (by=...); with by=None the frame is one group"
            )
        key_policy: PublicKeys | str | None = None
    elif keys is None:
        raise ValueError(
            f"by={list(by_cols)} needs keys=: either the public list of the group keys (every key listed "
            "gets a row, empty groups too, and rows of other keys are dropped) or keys='private' (keys "
            "chosen privately from the data, with delta > 0; see docs/tables.md#group-keys)"
        )
    elif isinstance(keys, str):
        if keys != "private":
            raise ValueError(f"keys must be a list of group keys, 'private', or None; got {keys!r}")
        key_policy = "private"
    else:
        key_policy = PublicKeys(keys, len(by_cols))
    if privacy_unit is None:
        if contributions != 1 or max_groups is not None:
            raise ValueError(
                "contributions and max_groups apply with privacy_unit= (the column naming the person who "
                "owns each row); without it each row is one person"
            )
        rows, groups_cap = 1, None
    else:
        if not isinstance(privacy_unit, str) or privacy_unit not in columns:
            raise ValueError(f"privacy_unit must name a column of the data frame; got {privacy_unit!r}")
        rows = check_int("contributions", contributions, minimum=1)
        groups_cap = None if max_groups is None else check_int("max_groups", max_groups, minimum=1)
    private = key_policy == "private"
    plan = make_plan(aggs, bounds=bounds_map, weights=weights, private_keys=private)
    missing = [c for c in plan.value_columns if c not in columns]
    if missing:
        raise ValueError(f"aggs: no column(s) {missing} in the data frame (columns: {list(columns)})")
    budget = table_budget(
        epsilon=epsilon,
        delta=delta,
        neighbours=relation,
        one_group=by_cols is None,
        rows=rows,
        private_keys=private,
    )
    for stat in plan.statistics:
        if stat.name == "count":
            continue
        if not stat.supports(budget.call_neighbours):
            raise ValueError(
                f"aggs: {stat.label} supports neighbours='substitution' only, and every group of a grouped "
                "release is released under 'add_remove' (group sizes are private); it runs with by=None, "
                "neighbours='substitution' and at most one row per person"
            )
    free = {i for i, s in enumerate(plan.statistics) if s.name == "count"} if budget.direct else set()
    epsilons, epsilon_keys = plan.shares(budget.person_epsilon, free=free)
    return Query(
        by=by_cols,
        plan=plan,
        bounds=bounds_map,
        keys=key_policy,
        privacy_unit=privacy_unit,
        contributions=rows,
        max_groups=groups_cap,
        budget=budget,
        epsilons=epsilons,
        epsilon_keys=epsilon_keys,
    )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
