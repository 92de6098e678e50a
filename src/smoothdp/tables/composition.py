"""What a grouped release charges, and what each group's single-column call may spend
(docs/theory/tables.md#the-whole-table).

The table charges **one** guarantee (ε, δ) under its neighbour relation: the relation named by
``neighbours=``, else the accountant's, else ``"substitution"`` (the library's default).

* **add/remove** (one person and all their rows added or removed): the person budget is (ε, δ) itself.
* **substitution** (one person's rows replaced by another's): a removal then an addition, so the person
  budget under add/remove is (ε/2, δ/(1 + e^{ε/2})) (group privacy over two steps).
* **direct**: with one group (``by=None``), substitution and at most one row per person, n is public and
  each statistic is the single-column call itself under substitution, at its full share of ε.

The person budget is split across the statistics (and the private key selection) by the plan's weights;
with at most k rows per person (``contributions=k``), each group's call gets ε_stat/k under add/remove
(parallel composition over the groups, group privacy over a person's k rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from smoothdp.accounting import Accountant
from smoothdp.privacy import ApproxDP, Guarantee, PureDP, check_neighbours
from smoothdp.validation import check_delta, check_epsilon

__all__ = ["TableBudget", "divide_down", "resolve_neighbours", "table_budget"]

#: The relations a table is released under.
TABLE_RELATIONS = ("substitution", "add_remove")


def resolve_neighbours(neighbours: Any, accountant: Accountant | None) -> str:
    """The table's relation: ``neighbours`` if given, else the accountant's, else ``"substitution"``."""
    if neighbours is not None:
        return check_neighbours(neighbours, allowed=TABLE_RELATIONS)
    if accountant is not None:
        if not isinstance(accountant, Accountant):
            raise TypeError(
                f"accountant must be a smoothdp.Accountant or None; got {type(accountant).__name__}"
            )
        if accountant.neighbours not in TABLE_RELATIONS:
            raise ValueError(
                f"a grouped release is central DP under {TABLE_RELATIONS}; the accountant counts "
                f"neighbours={accountant.neighbours!r}"
            )
        return str(accountant.neighbours)
    return "substitution"


def divide_down(total: float, k: int) -> float:
    """fl(total/k), rounded down if needed so that k times it never exceeds ``total`` exactly."""
    part = total / k
    while Fraction(part) * k > Fraction(total):
        part = math.nextafter(part, 0.0)
    return part


@dataclass(frozen=True)
class TableBudget:
    """The charged guarantee and what the statistics may spend.

    ``call_neighbours``: the relation of every single-column call (``"add_remove"``, or
    ``"substitution"`` on the direct path); ``person_epsilon`` and ``person_delta``: the budget the plan
    splits (per person under add/remove, or the table's ε on the direct path); ``rows``: k, the divisor
    of each group's call.
    """

    guarantee: Guarantee
    call_neighbours: str
    person_epsilon: float
    person_delta: float
    rows: int

    @property
    def direct(self) -> bool:
        return self.call_neighbours == "substitution"

    def per_group(self, epsilon_statistic: float) -> float:
        """What one group's call of a statistic with share ``epsilon_statistic`` spends."""
        return epsilon_statistic if self.direct else divide_down(epsilon_statistic, self.rows)


def table_budget(
    *, epsilon: Any, delta: Any, neighbours: str, one_group: bool, rows: int, private_keys: bool
) -> TableBudget:
    """The guarantee charged for (ε, δ) under ``neighbours`` and the budget of the statistics (module
    docstring). δ > 0 is for the private key selection only, and that needs δ > 0."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if private_keys and dlt == 0.0:
        raise ValueError(
            "delta must be in (0, 1) with keys='private': selecting keys privately is (ε, δ)-DP "
            "(a key held by one person alone is released with probability at most δ)"
        )
    if dlt > 0.0 and not private_keys:
        raise ValueError(
            "delta applies to keys='private' only (every statistic of a table is pure ε-DP); "
            f"got delta={dlt!r}"
        )
    guarantee: Guarantee = (
        ApproxDP(eps, dlt, neighbours=neighbours) if dlt else PureDP(eps, neighbours=neighbours)
    )
    if neighbours == "substitution" and one_group and rows == 1 and not private_keys:
        return TableBudget(guarantee, "substitution", eps, 0.0, 1)
    if neighbours == "add_remove":
        return TableBudget(guarantee, "add_remove", eps, dlt, rows)
    half = divide_down(eps, 2)
    person_delta = dlt / (1.0 + math.exp(half)) * (1.0 - 1e-12) if dlt else 0.0
    return TableBudget(guarantee, "add_remove", half, person_delta, rows)
