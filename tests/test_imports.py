"""Import cost: `import smoothdp` and `smoothdp --help` load no heavy module; public names still resolve.

The packages resolve their public names lazily (``smoothdp._lazy``); these tests check, in a fresh
interpreter, which modules a light import pulls in, and, in this one, that every name of every ``__all__``
is the object of the module the package says defines it.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types

import pytest

#: Heavy modules that ``import smoothdp`` must not load (seconds of import time between them).
HEAVY = ("scipy.stats", "scipy.optimize", "scipy.signal", "flint", "matplotlib", "tqdm")
#: The subpackages in ``smoothdp.__all__``.
SUBPACKAGES = ("audit", "central", "geo", "noise", "sensitivity", "smoothed_dp", "tables")
#: The packages whose public names are lazy.
LAZY_PACKAGES = (
    "smoothdp",
    "smoothdp.audit",
    "smoothdp.central",
    "smoothdp.exact",
    "smoothdp.experiments",
    "smoothdp.geo",
    "smoothdp.ledger",
    "smoothdp.noise",
    "smoothdp.sensitivity",
    "smoothdp.smoothed_dp",
    "smoothdp.tables",
)


def _loaded_after(code: str) -> list[str]:
    """The names in sys.modules of a fresh interpreter after running ``code``."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
    return loaded


def _heavy(loaded: list[str], heavy: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == h or m.startswith(h + ".") for h in heavy)]


def test_import_smoothdp_loads_no_heavy_module() -> None:
    loaded = _loaded_after("import smoothdp")
    assert "smoothdp" in loaded
    assert _heavy(loaded, HEAVY) == []


def test_cli_help_loads_no_numpy() -> None:
    code = (
        "import contextlib, io\n"
        "from smoothdp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit as stop:\n"
        "        assert stop.code == 0, stop.code\n"
        "assert 'reproduce' in out.getvalue()\n"
    )
    loaded = _loaded_after(code)
    assert _heavy(loaded, ("numpy", "scipy", *HEAVY)) == []


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_public_names_resolve_to_their_defining_module(package: str) -> None:
    module = importlib.import_module(package)
    exports: dict[str, str] = vars(module)["_EXPORTS"]
    # Import every submodule first: importing ``smoothdp.central.quantiles`` binds that name on the package,
    # which must not hide the function ``quantiles`` exported under the same name.
    for name in vars(module)["_SUBMODULES"]:
        if not (package == "smoothdp" and name in ("experiments", "cli")):
            importlib.import_module(f"{package}.{name}")
    public = [name for name in module.__all__ if name != "__version__"]
    assert public, package
    for name in public:
        value = getattr(module, name)
        if name in exports:
            assert value is getattr(importlib.import_module(exports[name]), name), (package, name)
        elif package == "smoothdp" and name in SUBPACKAGES:
            assert isinstance(value, types.ModuleType) and value.__name__ == f"{package}.{name}"
        else:  # imported eagerly by the package (a name it shares with one of its modules)
            assert not isinstance(value, types.ModuleType), (package, name)
    assert set(public) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = module.not_a_name


def test_from_imports_and_submodule_attributes() -> None:
    import smoothdp
    from smoothdp import median
    from smoothdp.audit import audit_mechanism
    from smoothdp.central import quantiles

    assert median is smoothdp.central.api.median
    assert callable(quantiles) and quantiles is smoothdp.quantiles
    assert audit_mechanism.__module__ == "smoothdp.audit.statistical"
    assert isinstance(smoothdp.exact, types.ModuleType) and isinstance(smoothdp.rng, types.ModuleType)
    assert isinstance(smoothdp.central.quantiles, types.FunctionType)


def test_reproduce_without_experiments_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from smoothdp.cli import main

    for name in ("matplotlib", "tqdm"):
        monkeypatch.setitem(sys.modules, name, None)  # a None entry makes `import name` raise ImportError
    assert main(["reproduce", "--tiny", "--quiet", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "smoothdp[experiments]" in err and "matplotlib" in err and "tqdm" in err


#: What the first default release may not load: scipy (~0.2 s) always; python-flint (~0.05 s) unless an
#: element reaches the exact path's slow path or a law needs ball-arithmetic constants.
FIRST_RELEASE = "x = __import__('numpy').random.default_rng(0).uniform(0, 100, 1000)\nimport smoothdp\n"


def test_first_default_median_loads_neither_scipy_nor_flint() -> None:
    loaded = _loaded_after(FIRST_RELEASE + "smoothdp.median(x, epsilon=1.0, bounds=(0, 100))")
    assert "smoothdp.exact.engine" in loaded  # it did release through the exact path
    assert _heavy(loaded, ("scipy", "flint", "numpy.ma")) == []


def test_first_default_mean_loads_no_scipy() -> None:
    loaded = _loaded_after(FIRST_RELEASE + "smoothdp.mean(x, epsilon=1.0, bounds=(0, 100))")
    assert "smoothdp.noise.staircase" in loaded  # ε·n = 1000: the clipped mean with staircase noise
    assert _heavy(loaded, ("scipy",)) == []
