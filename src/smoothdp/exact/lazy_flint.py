"""python-flint, imported on first use (PEP 562): ``from smoothdp.exact import lazy_flint as flint``.

Only the slow path of the exact release path (an element the float enclosures cannot decide) and the laws'
constants need ball arithmetic; a release that never reaches them should not pay python-flint's import.
``flint.arb`` etc. resolve on first access and are then cached in this module's namespace.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(importlib.import_module("flint"), name)
    globals()[name] = value
    return value
