"""The ``smoothdp`` command as a package: ``--version``, bare usage, ``list`` without the extra, ``--bounds
private``, module sizes, and a tidy ``dir(smoothdp)`` (issue 25, item 7)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import smoothdp
from smoothdp.cli import main
from smoothdp.experiments import EXPERIMENTS

CLI = Path(smoothdp.__file__).parent / "cli"


def _one_line_error(capsys, argv, *fragments):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smoothdp: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert out == ""


@pytest.fixture
def ages_csv(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("age\n" + "".join(f"{20 + (7 * i) % 50}\n" for i in range(301)))
    return path


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"smoothdp {smoothdp.__version__}"


def test_bare_command_prints_the_usage_and_runs_nothing():
    # In a fresh interpreter: the usage only, and no numpy loaded (the old bare command ran a 3.7 s demo).
    code = (
        "import contextlib, io, json, sys\n"
        "from smoothdp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    status = main([])\n"
        "print(json.dumps([status, out.getvalue(), 'numpy' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    status, out, numpy_loaded = json.loads(done.stdout.splitlines()[-1])
    assert status == 0 and out.startswith("usage: smoothdp") and not numpy_loaded
    for command in ("release", "budget", "smoothed-delta", "privacy-profile", "list", "reproduce", "demo"):
        assert f"\n    {command}" in out, command
    assert "true median" not in out


def test_list_without_the_extra_names_the_install_command(capsys, monkeypatch):
    for name in ("matplotlib", "tqdm"):
        monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(EXPERIMENTS)
    for line in lines:
        assert line.endswith("[needs matplotlib and tqdm: pip install 'smoothdp[experiments]']"), line
        assert "waiting for" not in line


def test_list_with_the_extra_has_no_install_hint(capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    assert main(["list"]) == 0
    assert "pip install" not in capsys.readouterr().out


@pytest.mark.parametrize("package", ["smoothdp", "smoothdp.geo", "smoothdp.smoothed_dp", "smoothdp.central"])
def test_dir_lists_public_names_not_the_init_helpers(package):
    module = importlib.import_module(package)
    names = dir(module)
    assert not {"TYPE_CHECKING", "annotations", "attach"} & set(names)
    assert not [n for n in names if n.startswith("_") and not n.startswith("__")]  # no private names
    assert set(module.__all__) <= set(names)
    if package == "smoothdp":
        assert {"median", "geo", "cli", "__version__"} <= set(names)


def test_every_cli_module_is_under_600_lines():
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in CLI.glob("*.py")}
    assert {"app.py", "parsing.py", "release.py", "budget.py", "output.py", "geo.py"} <= set(sizes)
    assert max(sizes.values()) < 600, sizes


# -- --bounds private: the library's bounds="private" ----------------------------------------------------
def _json(capsys, argv):
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    return json.loads(out)


@pytest.mark.parametrize(
    ("statistic", "extra", "scale"),
    [("median", [], None), ("quantile", ["--q", "0.25"], 64.0), ("quantiles", ["--q", "0.9", "0.1"], None)],
)
def test_private_bounds_are_the_library_bounds_private(capsys, ages_csv, statistic, extra, scale):
    from smoothdp.rng import default_rng

    argv = ["release", statistic, str(ages_csv), "--column", "age", "--epsilon", "1", *extra]
    argv += ["--bounds", "private", "--seed", "9", "--json"]
    if scale is not None:
        argv += ["--scale", str(scale)]
    payload = _json(capsys, argv)
    ages = np.array([20 + (7 * i) % 50 for i in range(301)], dtype=float)
    options = {"epsilon": 1.0, "bounds": "private", "rng": default_rng(9)}
    if scale is not None:
        options["scale"] = scale
    if statistic == "median":
        expected = smoothdp.median(ages, **options)
    elif statistic == "quantile":
        expected = smoothdp.quantile(ages, 0.25, **options)
    else:
        expected = smoothdp.quantiles(ages, [0.9, 0.1], **options)
    assert payload["value"] == (expected.value.tolist() if statistic == "quantiles" else expected.value)
    assert payload["details"]["bounds_private"] is True
    assert payload["details"]["scale_hint"] == (scale or 1.0)  # --scale is the library's scale=
    assert payload["guarantee"] == {
        "type": "PureDP",
        "epsilon": 1.0,
        "delta": 0.0,
        "neighbours": "substitution",
    }


def test_private_bounds_errors_name_the_option(capsys, ages_csv):
    base = ["release", "median", str(ages_csv), "--column", "age", "--epsilon", "1"]
    _one_line_error(capsys, [*base, "--bounds", "privat"], "--bounds", "'private'")
    _one_line_error(capsys, [*base, "--bounds", "0", "1", "2"], "--bounds")
    _one_line_error(capsys, [*base, "--bounds", "0", "100", "--scale", "10"], "--scale", "private")
    _one_line_error(capsys, [*base, "--bounds", "100", "0"], "LOW < HIGH")
    _one_line_error(capsys, base, "--bounds", "private")  # the missing-bounds error offers both forms
    mean = ["release", "mean", str(ages_csv), "--column", "age", "--epsilon", "1"]
    _one_line_error(capsys, [*mean, "--bounds", "private"], "--bounds")  # the mean needs public bounds


def test_each_statistic_takes_only_its_own_options(capsys, ages_csv):
    base = [str(ages_csv), "--column", "age", "--epsilon", "1", "--bounds", "0", "100"]
    _one_line_error(capsys, ["release", "mean", *base, "--method", "exponential"], "--method")
    _one_line_error(capsys, ["release", "median", *base, "--trim", "0.1"], "--trim")
    _one_line_error(capsys, ["release", "median", *base, "--threshold", "3"], "--threshold")
    _one_line_error(capsys, ["release", "trimmed-mean", *base], "--trim")
    _one_line_error(capsys, ["release"], "STATISTIC")
