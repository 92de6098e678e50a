"""Keywords that cannot be mistyped: an unknown keyword is a ``TypeError`` that names the function and the
keyword the caller most likely meant.

Python already refuses an unknown keyword, but says only ``got an unexpected keyword argument 'seed'``; a DP
library's users arrive with other libraries' spellings (``random_state``, ``eps``, ``neighbors``), and a
mistyped keyword must never be swallowed (it would silently run with a default, e.g. a different ε or noise).
:func:`checked_keywords` wraps a public function or a class's ``__init__`` so the error also says
"did you mean 'rng'?". The wrapper keeps the signature (``functools.wraps`` and a ``ParamSpec``), so
``inspect.signature``, the API reference and ``mypy --strict`` on a user's script all see the real keywords.

The check is one subset test of the call's keyword names against a precomputed set: a few hundred
nanoseconds, independent of the data.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

__all__ = ["ALIASES", "check_keywords_of", "checked_keywords", "unknown_keyword_error"]

P = ParamSpec("P")
R = TypeVar("R")

#: Other libraries' (and common) spellings, and the keyword of this library they mean.
ALIASES: dict[str, tuple[str, ...]] = {
    "random_state": ("rng",),
    "seed": ("rng",),
    "random_seed": ("rng",),
    "generator": ("rng",),
    "prng": ("rng",),
    "eps": ("epsilon",),
    "e": ("epsilon",),
    "privacy_budget": ("epsilon",),
    "budget": ("epsilon", "accountant"),
    "neighbors": ("neighbours",),
    "neighbor": ("neighbours",),
    "neighbour": ("neighbours",),
    "bound": ("bounds",),
    "range": ("bounds",),
    "data_range": ("bounds",),
    "lower": ("bounds",),
    "upper": ("bounds",),
    "lower_bound": ("bounds",),
    "upper_bound": ("bounds",),
    "quantile": ("q", "qs"),
    "quantiles": ("qs", "q"),
    "alpha": ("q", "qs"),
    "percentile": ("q",),
    "mechanism": ("method",),
    "algorithm": ("method",),
    "noise_type": ("noise",),
    "distribution": ("noise",),
    "groupby": ("by",),
    "group_by": ("by",),
    "groups": ("by", "keys"),
    "privacy_id": ("privacy_unit",),
    "user_id": ("privacy_unit",),
    "max_contributions": ("contributions",),
    "max_partitions": ("max_groups",),
}


def _suggestion(word: str, valid: Iterable[str]) -> str | None:
    """The keyword ``word`` most likely stands for: a known alias first, then the closest spelling."""
    valid = sorted(valid)
    for target in ALIASES.get(word.lower(), ()):
        if target in valid:
            return target
    close = difflib.get_close_matches(word, valid, n=1, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(word.lower(), [v.lower() for v in valid], n=1, cutoff=0.6)
        close = [v for v in valid if v.lower() in close]
    return close[0] if close else None


def unknown_keyword_error(function: str, unknown: Iterable[str], valid: Iterable[str]) -> TypeError:
    """The ``TypeError`` for keywords ``unknown`` passed to ``function`` (which accepts ``valid``)."""
    valid = sorted(valid)
    word = sorted(unknown)[0]
    hint = _suggestion(word, valid)
    did_you_mean = f"; did you mean {hint!r}?" if hint else ""
    return TypeError(
        f"{function}() got an unexpected keyword argument {word!r}{did_you_mean} "
        f"(its keywords: {', '.join(valid)})"
    )


def checked_keywords(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` whose unknown keywords raise :func:`unknown_keyword_error` (signature unchanged).

    Works on functions and on ``__init__`` methods (the error then names the class). A function that
    itself takes ``**kwargs`` is returned unchanged: it must check its keywords itself.
    """
    params = inspect.signature(func).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return func
    by_keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    valid = frozenset(p.name for p in params if p.kind in by_keyword) - {"self", "cls"}
    is_init = func.__name__ == "__init__"

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not valid.issuperset(kwargs):
            name = type(args[0]).__name__ if is_init and args else func.__qualname__
            raise unknown_keyword_error(name, set(kwargs) - valid, valid) from None
        return func(*args, **kwargs)

    wrapper.__dict__["keywords_checked"] = True
    return wrapper


def check_keywords_of(namespace: dict[str, object], names: Iterable[str]) -> None:
    """Wrap, in a module's ``namespace``, each function of ``names`` defined there with
    :func:`checked_keywords`, and each class's own ``__init__``.

    Called at the bottom of a public module as ``check_keywords_of(globals(), __all__)``: one line that
    keeps every entry point of the module from swallowing a mistyped keyword. Names imported from other
    modules are left to their own module.
    """
    module = namespace.get("__name__")
    for name in names:
        obj = namespace.get(name)
        if getattr(obj, "__module__", None) != module:
            continue
        if inspect.isfunction(obj) and not getattr(obj, "keywords_checked", False):
            namespace[name] = checked_keywords(obj)
        elif inspect.isclass(obj):
            init = obj.__dict__.get("__init__")
            if inspect.isfunction(init) and not getattr(init, "keywords_checked", False):
                setattr(obj, "__init__", checked_keywords(init))  # noqa: B010 - mypy: no direct assignment
