"""The reproduction framework: registry, runner, CSV and report writing, seeding."""

import csv
import sys
import types
from dataclasses import dataclass

import numpy as np
import pytest

from smoothdp.experiments import EXPERIMENTS, Experiment, Outcome, Table, UnknownExperimentError, reproduce
from smoothdp.experiments import registry as registry_module
from smoothdp.experiments._framework import plt, save_figure
from smoothdp.experiments.runner import experiment_rng


@dataclass(frozen=True)
class _Config:
    n: int = 1000


def _fake_module(fail: bool = False) -> types.ModuleType:
    module = types.ModuleType("smoothdp_fake_experiment")
    module.TITLE = "a fake experiment"
    module.SOURCE = "tests"
    module.REQUIRES = ("numpy:mean",)
    module.CONFIGS = {"full": _Config(), "quick": _Config(100), "tiny": _Config(10)}

    def run(config, rng, out_dir):
        if fail:
            raise RuntimeError("boom")
        draws = rng.random(config.n)
        fig, ax = plt.subplots()
        ax.plot(draws)
        figure = save_figure(fig, out_dir, "draws")
        table = Table({"i": np.arange(config.n), "draw": draws}, description="uniform draws")
        return Outcome(
            {"draws": table},
            [figure],
            headline=f"mean {draws.mean():.3f}",
            data=["none: uniform draws"],
            notes=["a note"],
            extra={"one configuration": "0 s"},
        )

    module.run = run
    return module


@pytest.fixture
def fake(monkeypatch):
    def install(name="fake", fail=False, requires=None):
        module = _fake_module(fail)
        if requires is not None:
            module.REQUIRES = requires
        monkeypatch.setitem(sys.modules, f"smoothdp_{name}", module)
        monkeypatch.setitem(registry_module.EXPERIMENTS, name, Experiment(name, f"smoothdp_{name}", "fake"))
        return name

    return install


def _read_csv(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_registry_names_every_experiment_of_the_issue():
    assert list(EXPERIMENTS)[:1] == ["polyplace-std"]
    assert set(EXPERIMENTS) == {
        "polyplace-std",
        "geo-threshold",
        "geo-two-way",
        "geo-kde",
        "central-adaptive",
        "private-ratio",
        "smoothed-elections",
        "smoothed-three-candidates",
        "smoothed-sgd",
    }


def test_unknown_experiment_is_a_clear_error(tmp_path):
    with pytest.raises(UnknownExperimentError, match=r"unknown experiment 'nope'.*polyplace-std"):
        reproduce(["nope"], out_dir=tmp_path)


def test_run_writes_csv_figure_report_and_index(fake, tmp_path):
    name = fake()
    [record] = reproduce([name], mode="tiny", out_dir=tmp_path, seed=3, show_progress=False)
    assert record.status == "done" and record.seconds > 0
    rows = _read_csv(tmp_path / name / "draws.csv")
    assert len(rows) == 10 and 0 <= float(rows[0]["draw"]) < 1
    assert (tmp_path / name / "draws.png").stat().st_size > 1000
    report = (tmp_path / name / "report.md").read_text()
    for expected in (
        "mean 0.",
        "Mode: **tiny**",
        "Wall time",
        "--seed 3",
        "| `n` | 10 |",
        "none: uniform draws",
        "![draws](draws.png)",
        "draws.csv",
        "a note",
        "one configuration",
    ):
        assert expected in report
    index = (tmp_path / "index.md").read_text()
    assert f"[{name}]({name}/report.md)" in index and "done" in index


def test_seed_makes_runs_reproducible_and_no_seed_is_secure(fake, tmp_path):
    name = fake()
    reproduce([name], mode="tiny", out_dir=tmp_path / "a", seed=5, show_progress=False)
    reproduce([name], mode="tiny", out_dir=tmp_path / "b", seed=5, show_progress=False)
    reproduce([name], mode="tiny", out_dir=tmp_path / "c", show_progress=False)
    a, b, c = ((tmp_path / d / name / "draws.csv").read_text() for d in "abc")
    assert a == b and a != c
    assert "secure" in (tmp_path / "c" / name / "report.md").read_text()
    # different experiments get different streams from one seed
    assert experiment_rng("x", 1).random() != experiment_rng("y", 1).random()


def test_missing_library_module_skips_with_reason(fake, tmp_path):
    name = fake(requires=("smoothdp.geo:not_there_yet",))
    [record] = reproduce([name], mode="tiny", out_dir=tmp_path, show_progress=False)
    assert record.status == "skipped" and "smoothdp.geo:not_there_yet" in record.reason
    assert "smoothdp.geo:not_there_yet" in (tmp_path / "index.md").read_text()


def test_failure_is_recorded_or_raised(fake, tmp_path):
    name = fake(fail=True)
    [record] = reproduce([name], mode="tiny", out_dir=tmp_path, show_progress=False)
    assert record.status == "failed" and "boom" in record.reason
    with pytest.raises(RuntimeError, match="boom"):
        reproduce([name], mode="tiny", out_dir=tmp_path, show_progress=False, raise_errors=True)


def test_table_rejects_ragged_columns():
    with pytest.raises(ValueError, match="equal lengths"):
        Table({"a": [1, 2], "b": [1]})


def test_every_available_experiment_has_three_configs_and_metadata():
    for experiment in EXPERIMENTS.values():
        if experiment.missing():
            continue
        module = experiment.load()
        assert set(module.CONFIGS) == {"full", "quick", "tiny"}
        assert module.TITLE and module.SOURCE and callable(module.run)


def _png_width(path):
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_figure_dpi_sets_the_resolution_of_one_run_only(fake, tmp_path):
    """The gallery's low-resolution run (benchmarks/gallery_figures.py) leaves later runs at 150 dpi."""
    name = fake()
    reproduce([name], mode="tiny", out_dir=tmp_path / "low", figure_dpi=50, show_progress=False)
    reproduce([name], mode="tiny", out_dir=tmp_path / "default", show_progress=False)
    low, default = (_png_width(tmp_path / run / name / "draws.png") for run in ("low", "default"))
    assert default == pytest.approx(3 * low, rel=0.05)
    for bad in (0, 19, 601, 72.0, True, "90"):
        with pytest.raises(ValueError, match=r"figure_dpi must be an integer in \[20, 600\]"):
            reproduce([name], mode="tiny", out_dir=tmp_path / "bad", figure_dpi=bad, show_progress=False)
