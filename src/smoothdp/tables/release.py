"""The result of a grouped release: the data frame, and what it cost and how.

:class:`TableRelease` holds the frame (``.frame``), the one guarantee charged for the whole table
(``.guarantee``, with its neighbour relation and privacy unit), how ε was split across the statistics
(``.statistics``: each one's share, what each group's call spent, the mechanism), and how the keys were
chosen (``.keys``). Everything in it is public: the per-group releases' data-dependent side values are not
kept. ``aggregate(..., return_release=True)`` returns it; a pandas result also carries
:meth:`TableRelease.to_dict` in ``out.attrs["smoothdp"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smoothdp.keywords import check_keywords_of
from smoothdp.privacy import Guarantee
from smoothdp.release import SIMULATION_NOTE, jsonable

__all__ = ["StatisticShare", "TableRelease"]

PROOF = "docs/theory/tables.md#the-whole-table"
SOURCE = (
    "parallel composition over disjoint groups (McSherry, Privacy integrated queries, SIGMOD 2009); group "
    "privacy over a person's rows; contribution bounding as in Wilson et al., Differentially private SQL "
    "with bounded user contribution, PoPETs 2020"
)


@dataclass(frozen=True)
class StatisticShare:
    """One statistic of the table and its share of the budget.

    ``epsilon``: its share of the person budget; ``epsilon_per_group``: what each group's single-column call
    spent (ε/k with k rows per person), under ``neighbours``; ``mechanism``, ``method``, ``proof``,
    ``source`` and ``details``: the public fields of the per-group releases (the same for every group).
    """

    column: str | None
    statistic: str
    outputs: tuple[str, ...]
    epsilon: float
    epsilon_per_group: float
    neighbours: str
    mechanism: str = ""
    method: str | None = None
    proof: str = ""
    source: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class TableRelease:
    """A private grouped release (module docstring). ``frame`` is the result; the rest is its metadata."""

    frame: Any
    guarantee: Guarantee
    statistics: tuple[StatisticShare, ...]
    keys: dict[str, Any]
    unit: dict[str, Any]
    by: tuple[str, ...] | None
    is_simulation: bool = False
    proof: str = PROOF
    source: str = SOURCE

    @property
    def neighbours(self) -> str:
        """The neighbour relation of the table's guarantee (of persons, or of rows without a privacy unit)."""
        return self.guarantee.neighbours

    @property
    def guarantee_text(self) -> str:
        unit = self.unit.get("privacy_unit")
        if unit is None:
            who = "per row (each row one person)"
        else:
            who = f"per person ({unit!r}, at most {self.unit['rows_per_person']} row(s)"
            if self.unit.get("groups_per_person") is not None:
                who += f" in at most {self.unit['groups_per_person']} group(s)"
            who += ")"
        text = f"{self.guarantee} {who}"
        return text + (f" — {SIMULATION_NOTE}" if self.is_simulation else "")

    def to_dict(self) -> dict[str, Any]:
        """The metadata as JSON-ready values (the frame is left out)."""
        out: dict[str, Any] = jsonable(
            {
                "guarantee": self.guarantee,
                "guarantee_text": self.guarantee_text,
                "neighbours": self.neighbours,
                "is_simulation": self.is_simulation,
                "by": list(self.by) if self.by is not None else None,
                "unit": self.unit,
                "keys": self.keys,
                "statistics": [s.__dict__ for s in self.statistics],
                "proof": self.proof,
                "source": self.source,
            }
        )
        return out

    def __str__(self) -> str:
        lines = [f"grouped release: {self.guarantee_text}"]
        lines.append(f"keys: {self.keys.get('kind')}")
        for s in self.statistics:
            where = s.statistic if s.column is None else f"{s.column}: {s.statistic}"
            lines.append(
                f"  {where}: ε = {s.epsilon:.6g} (each group's call {s.epsilon_per_group:.6g}, "
                f"{s.neighbours.replace('_', '/')}; {s.mechanism})"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        kind = self.keys.get("kind")
        return f"TableRelease({self.guarantee}, {len(self.statistics)} statistic(s), keys={kind!r})"


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
