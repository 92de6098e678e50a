"""A mistyped keyword is a TypeError that names the function and suggests the right keyword (issue 25)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from smoothdp.keywords import checked_keywords, unknown_keyword_error


def _median(x: object, *, epsilon: float, bounds: object = None, rng: object = None) -> int:
    return 1


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("random_state", "rng"),
        ("seed", "rng"),
        ("eps", "epsilon"),
        ("epsilom", "epsilon"),
        ("bonds", "bounds"),
    ],
)
def test_the_error_names_the_function_and_suggests_the_keyword(typo: str, meant: str) -> None:
    checked = checked_keywords(_median)
    expected = rf"_median\(\) got an unexpected keyword argument '{typo}'; did you mean '{meant}'"
    with pytest.raises(TypeError, match=expected):
        checked([1.0], epsilon=1.0, **{typo: 1})
    assert checked([1.0], epsilon=1.0, rng=3) == 1  # valid keywords pass through


def test_no_suggestion_when_nothing_is_close() -> None:
    err = unknown_keyword_error("median", ["zzzzzz"], ["epsilon", "bounds"])
    assert "did you mean" not in str(err) and "bounds, epsilon" in str(err)


def test_the_signature_is_kept() -> None:
    assert inspect.signature(checked_keywords(_median)) == inspect.signature(_median)


PACKAGES = (
    "smoothdp",
    "smoothdp.central",
    "smoothdp.geo",
    "smoothdp.noise",
    "smoothdp.smoothed_dp",
    "smoothdp.tables",
    "smoothdp.audit",
)


def _keyword_parameters(obj: object) -> list[inspect.Parameter] | None:
    """The parameters of a public callable, or None when it is not one a user calls with keywords."""
    if inspect.isclass(obj):
        abstract = inspect.isabstract(obj) or getattr(obj, "_is_protocol", False)
        if abstract or issubclass(obj, BaseException) or obj.__init__ is object.__init__:
            return None
    elif not inspect.isfunction(obj):
        return None
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None
    return params or None


def _public_callables() -> list[tuple[str, object]]:
    found: dict[int, tuple[str, object]] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if _keyword_parameters(obj) is not None:
                found.setdefault(id(obj), (f"{package}.{name}", obj))
    return sorted(found.values(), key=lambda item: item[0])


CALLABLES = _public_callables()


def test_the_public_api_is_covered() -> None:
    assert len(CALLABLES) >= 120, len(CALLABLES)


@pytest.mark.parametrize(("name", "obj"), CALLABLES, ids=[n for n, _ in CALLABLES])
def test_every_public_entry_point_refuses_and_suggests(name: str, obj: object) -> None:
    """``eps=`` is refused before any work (no argument is even checked), naming the function or class,
    and ``epsilon`` is suggested where it is a keyword."""
    params = _keyword_parameters(obj)
    assert params is not None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        pytest.fail(f"{name} takes **kwargs: a mistyped keyword would be swallowed or blamed elsewhere")
    with pytest.raises(TypeError) as info:
        obj(eps=1.0)  # type: ignore[operator]
    message = str(info.value)
    assert f"{obj.__name__}() got an unexpected keyword argument 'eps'" in message, message  # type: ignore[attr-defined]
    if any(p.name == "epsilon" for p in params):
        assert "did you mean 'epsilon'?" in message, message


def test_a_broken_twin_is_caught() -> None:
    """A public function defined without the check: Python's own message has no suggestion."""

    def unchecked(x: object, *, epsilon: float) -> None:
        return None

    with pytest.raises(TypeError) as info:
        unchecked(1, eps=1.0)  # type: ignore[call-arg]
    assert "did you mean" not in str(info.value)
