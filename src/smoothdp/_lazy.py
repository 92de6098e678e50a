"""Lazy attributes of smoothdp's packages: a name is imported on first access (PEP 562).

``import smoothdp`` then costs almost nothing; ``smoothdp.median`` imports :mod:`smoothdp.central` when it
is first used. Each package ``__init__`` lists its public names and the module defining each one, and
imports them again under ``typing.TYPE_CHECKING`` so that type checkers and IDEs see them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps each public name to the absolute name of the module that defines it; ``submodules``
    are the package's modules reachable as attributes (``smoothdp.audit``). A resolved name is cached in
    the package's namespace, so ``__getattr__`` runs once per name.
    """
    exports = dict(exports)
    submodules = frozenset(submodules)
    clash = sorted(set(exports) & submodules)
    if clash:  # importing the module would bind its name on the package and hide the lazy export
        raise ValueError(
            f"{package}: lazy exports {clash} share their names with modules; import them eagerly"
        )

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        # The public names and the module's dunders (``__version__``, ``__doc__``), not the helpers its
        # ``__init__`` imports (``TYPE_CHECKING``, ``annotations``, ``attach``) nor private names.
        namespace = vars(sys.modules[package])
        public = set(namespace.get("__all__", ())) | set(exports) | {m for m in submodules if m[0] != "_"}
        dunders = {name for name in namespace if name.startswith("__") and name.endswith("__")}
        return sorted(public | dunders)

    return __getattr__, __dir__
