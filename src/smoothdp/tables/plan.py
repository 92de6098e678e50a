"""The plan of a grouped release: which statistics, under which output columns, with which share of ε.

``aggs`` maps a value column to one statistic or a list of them, spelled as strings:

=================================  ===========================================  ======================
spec                               single-column function called per group      output column(s)
=================================  ===========================================  ======================
``"count"``                        :func:`smoothdp.count` (all groups at once)  ``count``
``"sum"``                          :func:`smoothdp.sum`                         ``sum``
``"mean"``, ``"var"``, ``"std"``   :func:`smoothdp.mean`, ``var``, ``std``       ``mean``, ``var``, ``std``
``"median"``                       :func:`smoothdp.median`                      ``median``
``"quantile:0.9"``                 :func:`smoothdp.quantile` (q = 0.9)          ``quantile_0.9``
``"quantiles:0.25,0.5,0.75"``      :func:`smoothdp.quantiles` (one ε for all)   ``quantile_0.25``, ...
``"trimmed_mean:0.1"``             :func:`smoothdp.trimmed_mean` (by=None)      ``trimmed_mean_0.1``
=================================  ===========================================  ======================

``count`` is the number of rows of a group (NaN values count: they are imputed like every record); it is
the same for every column, so it is released **once** per table and shown under every column that asks
for it (post-processing). Every other entry is one statistic with its own share of ε.

The split (docs/theory/tables.md#the-whole-table): each statistic, and the private selection of keys
(``keys="private"``), has a weight (default 1; ``weights={("hours", "median"): 2, "keys": 0.5}``) and gets
weight/Σ weights of the budget. The plan only parses and validates: it sees no data.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from smoothdp.validation import check_positive

__all__ = ["CATALOGUE", "OutputColumn", "Plan", "PlannedStatistic", "make_plan", "split_down"]


@dataclass(frozen=True)
class _Entry:
    """A statistic name: its arguments (how many), whether it needs bounds, and its output names."""

    n_args: tuple[int, int]  # (fewest, most); most = -1: any number ≥ fewest
    needs_bounds: bool
    outputs: Callable[[tuple[float, ...]], tuple[str, ...]]
    #: The library function, looked up by this name on the top-level package when the plan is made.
    function: str


def _fmt(v: float) -> str:
    return f"{v:g}"


#: Every statistic ``aggs`` can name.
CATALOGUE: dict[str, _Entry] = {
    "count": _Entry((0, 0), False, lambda a: ("count",), "count"),
    "sum": _Entry((0, 0), True, lambda a: ("sum",), "sum"),
    "mean": _Entry((0, 0), True, lambda a: ("mean",), "mean"),
    "var": _Entry((0, 0), True, lambda a: ("var",), "var"),
    "std": _Entry((0, 0), True, lambda a: ("std",), "std"),
    "median": _Entry((0, 0), True, lambda a: ("median",), "median"),
    "quantile": _Entry((1, 1), True, lambda a: (f"quantile_{_fmt(a[0])}",), "quantile"),
    "quantiles": _Entry((1, -1), True, lambda a: tuple(f"quantile_{_fmt(q)}" for q in a), "quantiles"),
    "trimmed_mean": _Entry((1, 1), True, lambda a: (f"trimmed_mean_{_fmt(a[0])}",), "trimmed_mean"),
}


@dataclass(frozen=True)
class PlannedStatistic:
    """One statistic of the table.

    ``column`` is the value column (``None`` for ``count``: one count per table); ``outputs`` the names of
    its output columns at the statistic level (``quantile_0.25``, ...), in the order of its values;
    ``weight`` its share of the budget before normalisation.
    """

    name: str
    args: tuple[float, ...]
    column: str | None
    outputs: tuple[str, ...]
    weight: float

    @property
    def spec(self) -> str:
        """The spec as written in ``aggs`` (normalised)."""
        return self.name + (":" + ",".join(_fmt(a) for a in self.args) if self.args else "")

    @property
    def label(self) -> str:
        return self.spec if self.column is None else f"{self.column}: {self.spec}"

    def function(self) -> Callable[..., Any]:
        """The single-column entry point (``smoothdp.<name>``); a clear error if this smoothdp lacks it."""
        import smoothdp

        name = CATALOGUE[self.name].function
        try:
            return getattr(smoothdp, name)
        except AttributeError:
            raise ValueError(
                f"aggs: the statistic {self.name!r} needs smoothdp.{name}, which this version lacks"
            ) from None

    def supports(self, neighbours: str) -> bool:
        """Whether its function takes ``neighbours=`` (else it supports its default relation only:
        substitution for the entry points without the keyword)."""
        params = inspect.signature(self.function()).parameters
        return "neighbours" in params or neighbours == "substitution"


@dataclass(frozen=True)
class OutputColumn:
    """One output column: the value column it belongs to, its statistic-level name, and where its values
    come from (statistic index, position in that statistic's values)."""

    column: str
    name: str
    statistic: int
    position: int


@dataclass(frozen=True)
class Plan:
    """The statistics (``count`` at most once), the output columns in the order asked, and the weight of
    the private key selection (``None`` with public keys)."""

    statistics: tuple[PlannedStatistic, ...]
    columns: tuple[OutputColumn, ...]
    keys_weight: float | None

    @property
    def value_columns(self) -> tuple[str, ...]:
        """The value columns read, in order (count reads none)."""
        seen = dict.fromkeys(s.column for s in self.statistics if s.column is not None)
        return tuple(c for c in seen if c is not None)

    def shares(self, total: float, *, free: set[int] | None = None) -> tuple[tuple[float, ...], float]:
        """ε of each statistic and of the key selection (0 with public keys), weight/Σ weights of
        ``total``, rounded down so that their exact sum never exceeds it. The statistics in ``free`` cost
        nothing (a count whose n is public) and take no share."""
        free = free or set()
        weights = [0.0 if i in free else s.weight for i, s in enumerate(self.statistics)]
        if self.keys_weight is not None:
            weights.append(self.keys_weight)
        if not any(weights):
            return tuple(0.0 for _ in self.statistics), 0.0
        parts = split_down(total, weights)
        if self.keys_weight is None:
            return tuple(parts), 0.0
        return tuple(parts[:-1]), parts[-1]


def split_down(total: float, weights: Sequence[float]) -> list[float]:
    """total·w_i/Σw as floats whose exact sum is at most ``total`` (each rounded down if needed)."""
    whole = math.fsum(weights)
    parts = [total * (w / whole) for w in weights]
    exact = Fraction(total)
    while sum(map(Fraction, parts), Fraction(0)) > exact:
        i = max(range(len(parts)), key=lambda j: parts[j])
        parts[i] = math.nextafter(parts[i], 0.0)
    return parts


def _parse_spec(spec: Any, column: str) -> tuple[str, tuple[float, ...]]:
    if not isinstance(spec, str):
        raise TypeError(
            f"aggs[{column!r}]: each statistic is a string such as 'median' or 'quantiles:0.25,0.75'; "
            f"got {spec!r}"
        )
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in CATALOGUE:
        raise ValueError(f"aggs[{column!r}]: unknown statistic {spec!r}; known: {sorted(CATALOGUE)}")
    try:
        args = tuple(float(a) for a in rest.split(",")) if rest.strip() else ()
    except ValueError:
        raise ValueError(
            f"aggs[{column!r}]: the arguments of {spec!r} must be numbers separated by commas"
        ) from None
    fewest, most = CATALOGUE[name].n_args
    if len(args) < fewest or (most >= 0 and len(args) > most):
        want = f"{fewest}" if fewest == most else f"at least {fewest}"
        raise ValueError(f"aggs[{column!r}]: {name!r} takes {want} argument(s) after ':'; got {spec!r}")
    if name in ("quantile", "quantiles") and not all(0.0 <= a <= 1.0 for a in args):
        raise ValueError(f"aggs[{column!r}]: quantiles must lie in [0, 1]; got {spec!r}")
    if name == "trimmed_mean" and not (args[0] >= 0 and math.isfinite(args[0])):
        raise ValueError(f"aggs[{column!r}]: the trim must be a non-negative number; got {spec!r}")
    return name, args


def make_plan(
    aggs: Any,
    *,
    bounds: Mapping[str, Any],
    weights: Mapping[Any, Any] | None,
    private_keys: bool,
) -> Plan:
    """Parse ``aggs`` and ``weights`` (module docstring); every error names the parameter."""
    if not isinstance(aggs, Mapping) or not aggs:
        raise TypeError(
            "aggs must be a non-empty mapping {column: statistic or [statistics]}, e.g. "
            f"{{'hours': ['count', 'median']}}; got {aggs!r}"
        )
    weights = dict(weights or {})
    used: set[Any] = set()

    def weight_of(column: str, spec: str, name: str) -> float:
        for key in ((column, spec), name if name == "count" else None):
            if key is not None and key in weights:
                used.add(key)
                return check_positive(f"weights[{key!r}]", weights[key])
        if name == "count":
            for key in weights:
                if isinstance(key, tuple) and len(key) == 2 and key[1] == "count":
                    used.add(key)
                    return check_positive(f"weights[{key!r}]", weights[key])
        return 1.0

    statistics: list[PlannedStatistic] = []
    columns: list[OutputColumn] = []
    count_index: int | None = None
    for column, specs in aggs.items():
        if not isinstance(column, str):
            raise TypeError(f"aggs: column names must be strings; got {column!r}")
        listed = [specs] if isinstance(specs, str) else list(specs) if isinstance(specs, Sequence) else None
        if not listed:
            raise TypeError(
                f"aggs[{column!r}] must be a statistic or a non-empty list of them; got {specs!r}"
            )
        names_here: set[str] = set()
        for raw in listed:
            name, args = _parse_spec(raw, column)
            entry = CATALOGUE[name]
            if entry.needs_bounds and column not in bounds:
                raise ValueError(
                    f"bounds: {name!r} of column {column!r} needs public bounds, bounds[{column!r}] = "
                    "(lower, upper)"
                )
            outputs = entry.outputs(args)
            clash = names_here.intersection(outputs)
            if clash:
                raise ValueError(f"aggs[{column!r}]: the output column(s) {sorted(clash)} are asked twice")
            names_here.update(outputs)
            spec = name + (":" + ",".join(_fmt(a) for a in args) if args else "")
            if name == "count":
                if count_index is None:
                    count_index = len(statistics)
                    statistics.append(
                        PlannedStatistic("count", (), None, outputs, weight_of(column, spec, name))
                    )
                columns.append(OutputColumn(column, "count", count_index, 0))
                continue
            index = len(statistics)
            statistics.append(PlannedStatistic(name, args, column, outputs, weight_of(column, spec, name)))
            columns.extend(OutputColumn(column, out, index, i) for i, out in enumerate(outputs))
    keys_weight: float | None = None
    if private_keys:
        keys_weight = check_positive("weights['keys']", weights["keys"]) if "keys" in weights else 1.0
        used.add("keys")
    unknown = [k for k in weights if k not in used]
    if unknown:
        raise ValueError(
            f"weights: {unknown} name no statistic of aggs (keys are (column, spec) pairs as in aggs, "
            "or 'keys' with keys='private')"
        )
    return Plan(tuple(statistics), tuple(columns), keys_weight)
