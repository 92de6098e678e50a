"""What the ``smoothdp`` command prints: a release's public fields, the data holder's not-private values
(each marked as such), the budget a release was charged, and the one JSON object of ``--json``.

Rules every command follows:

* a private value is printed at full precision (``repr`` of the float: the exact released number);
* a value computed from the data without protection (noise scale, smooth sensitivity, a variance, a
  privacy profile) is printed only in the text output, each on a line ending with :data:`NOT_PRIVATE`,
  and never in the JSON (``Release.to_dict`` leaves ``not_private`` out);
* a simulation (seeded generator) starts and ends with :data:`SIMULATION_BANNER` (in JSON: stderr).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "NOT_PRIVATE",
    "SIMULATION_BANNER",
    "budget_lines",
    "emit_json",
    "field",
    "json_safe",
    "not_private",
    "num",
    "print_release",
    "values_text",
]

#: The first line of a release drawn from a seeded (or otherwise non-secure) generator.
SIMULATION_BANNER = "NOT PRIVATE (simulation: seeded generator): the noise can be regenerated; do not publish"
#: How every data-dependent (not private) number is marked when printed for the data holder.
NOT_PRIVATE = "   (computed from the data, NOT private: do not publish)"


def num(value: float) -> str:
    """A budget amount or public parameter, short (12 significant digits)."""
    return f"{value:.12g}"


def field(label: str, text: str) -> str:
    """``label:`` padded to the common column, then ``text``."""
    return f"{label + ':':<12} {text}"


def not_private(label: str, value: Any, spec: str = ".6g") -> str:
    """A line for a data-dependent number (or several): ``label: value`` marked NOT private."""
    if getattr(value, "ndim", 0):
        text = "[" + ", ".join(f"{float(v):{spec}}" for v in value) + "]"
    else:
        text = f"{float(value):{spec}}"
    return f"{label + ':':<12} {text}{NOT_PRIVATE}"


def values_text(values: Any) -> str:
    """A released value (a float, or several in the order asked) at full precision."""
    if getattr(values, "ndim", 0) or isinstance(values, Sequence):
        return "[" + ", ".join(repr(float(v)) for v in values) + "]"
    return repr(float(values))


def json_safe(value: Any) -> Any:
    """Plain JSON values: a float that is not finite (ln δ = −inf) as a string, as ``Release.to_dict``."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def emit_json(payload: dict[str, Any], *, simulation: bool, budget: Mapping[str, Any] | None = None) -> None:
    """One JSON object on stdout, with ``"simulation"`` (and ``"budget"``: the ledger, what this release
    was charged, what is left, the chain head); a simulation's banner goes to stderr."""
    payload = {**payload, "simulation": simulation}
    if budget is not None:
        payload["budget"] = dict(budget)
    if simulation:
        print(SIMULATION_BANNER, file=sys.stderr)
    print(json.dumps(payload, ensure_ascii=False))


def budget_lines(budget: Mapping[str, Any]) -> list[str]:
    """What a release charged to its ``--budget`` ledger, what is left, and the chain head of the charge."""
    charged = " + ".join(f"ε = {num(c['epsilon'])}, δ = {num(c['delta'])}" for c in budget["charged"])
    left = budget["remaining"]
    lines = [
        field(
            "budget",
            f"charged {charged} to {budget['file']}; remaining ε = {num(left['epsilon'])}, "
            f"δ = {num(left['delta'])}",
        )
    ]
    if budget.get("head"):
        lines.append(
            field("chain head", f"{budget['head']}   (keep it to anchor the ledger: smoothdp budget verify)")
        )
    return lines


def print_release(
    release: Any,
    statistic: str,
    *,
    simulation: bool = False,
    budget: Mapping[str, Any] | None = None,
    json_output: bool = False,
) -> None:
    """A central release: its public fields, then the data holder's not-private values, each marked as such.

    ``--json``: :meth:`~smoothdp.Release.to_dict` (public fields only, values at full precision). The
    record count is private under add/remove (``release mean --neighbours add_remove``): it is never
    printed, nor how many cells were imputed or clipped.
    """
    if json_output:
        emit_json(release.to_dict(), simulation=simulation, budget=budget)
        return
    if simulation:
        print(SIMULATION_BANNER)
    print(field("statistic", statistic))
    print(field("guarantee", f"{release.guarantee_text}   (neighbours: {release.guarantee.relation})"))
    print(field("mechanism", release.mechanism))
    if release.proof:
        print(field("proof", release.proof))
    hidden = release.not_private
    for label, number in (("noise scale", hidden.noise_scale), ("noise std", hidden.noise_std)):
        if number is not None:
            print(not_private(label, number))
    if hidden.smooth_sensitivity is not None:
        beta = f" (β = {release.beta:.4g})" if release.beta is not None else ""
        print(f"smooth sensitivity: {hidden.smooth_sensitivity:.6g}{beta}{NOT_PRIVATE}")
    if release.refused:
        print(field("value", f"refused ({release.reason})"))
    else:
        print(field("value", values_text(release.value)))  # full precision: the exact released float(s)
    for line in budget_lines(budget) if budget is not None else ():
        print(line)
    if simulation:
        print(SIMULATION_BANNER)
