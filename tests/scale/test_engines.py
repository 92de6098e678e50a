"""One release, every engine: seeded releases are identical in memory and on Dask (sync, threads, a
2-worker cluster), and the windowed exponential-mechanism sampler has exactly the whole-data law."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats

import smoothdp
from smoothdp.central.atoms import Atoms
from smoothdp.central.quantile_window import sample_em_windowed, window_half_width
from smoothdp.central.quantiles import ExponentialQuantile, target_rank
from smoothdp.central.smooth_sensitivity.statistics import Median, TrimmedMean, kept_sum
from smoothdp.exact import OutputGrid
from smoothdp.rng import default_rng
from smoothdp.scale.engine import InMemoryRecords, SortedRecords, as_records, check_engine

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _data(n: int = 20000, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    x = np.concatenate([gen.normal(50.0, 10.0, n - n // 4), np.round(gen.normal(30.0, 3.0, n // 4))])
    x[:5] = [np.nan, np.inf, -np.inf, -0.0, 1e300]  # the data policy: imputed, clipped, folded
    gen.shuffle(x)
    return x


RELEASES = {
    "median auto": lambda x, **k: smoothdp.median(x, epsilon=1.0, bounds=(0.0, 100.0), **k),
    "median ss": lambda x, **k: smoothdp.median(
        x, epsilon=2.0, bounds=(0.0, 100.0), method="smooth_sensitivity", **k
    ),
    "quantile 0.9 em": lambda x, **k: smoothdp.quantile(x, 0.9, epsilon=0.3, bounds=(0.0, 100.0), **k),
    "trimmed mean": lambda x, **k: smoothdp.trimmed_mean(x, 0.1, epsilon=1.0, bounds=(0.0, 100.0), **k),
    "mean": lambda x, **k: smoothdp.mean(x, epsilon=1.0, bounds=(0.0, 100.0), **k),
    "deciles separate": lambda x, **k: smoothdp.quantiles(
        x, [0.1, 0.5, 0.9], epsilon=1.0, bounds=(0.0, 100.0), method="exponential", **k
    ),
}


def _in_memory(name: str, x: np.ndarray, seed: int) -> Any:
    return RELEASES[name](x, rng=seed).value


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_seeded_releases_are_identical_in_memory_and_on_dask(name: str, scheduler: str) -> None:
    x = _data()
    expected = _in_memory(name, x, 7)
    dx = da.from_array(x, chunks=3001)  # uneven chunks
    with dask.config.set(scheduler=scheduler):
        got = RELEASES[name](dx, rng=7).value
        again = RELEASES[name](x, rng=7, engine="dask").value
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(again, expected)
    assert not np.array_equal(_in_memory(name, x, 8), expected)  # the seed matters: a test that can fail


def test_seeded_releases_are_identical_on_a_cluster(client: Any) -> None:  # client: conftest.py
    x = _data(seed=3)
    dx = da.from_array(x, chunks=2500)
    for name in ("median auto", "median ss", "trimmed mean"):
        assert RELEASES[name](dx, rng=11, engine=client).value == _in_memory(name, x, 11), name


def test_dask_dataframe_column_and_parquet(tmp_path: Any) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    x = _data(4000, seed=5)
    frame = pd.DataFrame({"income": x, "other": np.arange(x.size)})
    frame.to_parquet(tmp_path / "d.parquet")
    column = dd.read_parquet(tmp_path / "d.parquet", columns=["income"])["income"]
    with dask.config.set(scheduler="sync"):
        got = smoothdp.median(column, epsilon=1.0, bounds=(0.0, 100.0), rng=2).value
    assert got == smoothdp.median(x, epsilon=1.0, bounds=(0.0, 100.0), rng=2).value


def test_engine_parameter_is_checked() -> None:
    with pytest.raises(ValueError, match="engine must be"):
        smoothdp.median([1.0, 2.0], epsilon=1.0, bounds=(0, 3), engine="spark")
    with pytest.raises(ValueError, match="engine must be"):
        check_engine(3)
    with pytest.raises(TypeError, match="numbers"):
        as_records(da.from_array(np.array(["a", "b"])), 0.0, 1.0, clip=True)


# -- windows of the statistics -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_window_records_give_the_sorted_answers(seed: int) -> None:
    gen = np.random.default_rng(seed)
    x = np.round(gen.normal(0.0, 2.0, 3000), int(gen.integers(0, 3)))  # heavy ties
    for stat in (Median(bounds=(-5.0, 5.0)), TrimmedMean(0.2, bounds=(-5.0, 5.0))):
        clipped = np.clip(x, -5.0, 5.0) + 0.0
        windowed = stat.prepare(InMemoryRecords(clipped))
        full = stat.prepare(SortedRecords(np.sort(clipped)))
        for beta in (0.001, 0.05, 1.0):
            assert stat.smooth_sensitivity(windowed, beta) == stat.smooth_sensitivity(full, beta)
        assert stat.exact_value(windowed) == stat.exact_value(full)
    srt = np.sort(np.clip(x, -5.0, 5.0))
    first, last = 100, 2900
    assert kept_sum(InMemoryRecords(np.clip(x, -5.0, 5.0)), first, last) == sum(
        (Fraction(v) for v in srt[first - 1 : last]), Fraction(0)
    )


# -- the windowed exponential mechanism has exactly the whole-data law --------------------------------------
def _atom_masses(
    levels: list[tuple[int, int]], factor: float, lower: float, upper: float
) -> dict[float, float]:
    """Independent closed form of the atoms: fl(k·P/Q) by Python's correctly rounded Fraction → float, mass
    factor·fl(P/Q) summed over the levels holding the point."""
    out: dict[float, float] = {}
    for p, q in levels:
        sigma = Fraction(p, q)
        for k in range(math.floor(Fraction(lower) / sigma) - 1, math.ceil(Fraction(upper) / sigma) + 2):
            v = float(Fraction(k * p, q))
            if lower <= v <= upper:
                out[v] = out.get(v, 0.0) + factor * float(sigma)
    return out


def _exact_law(x: np.ndarray, lower: float, upper: float, t: float, coef: float, atoms: dict[float, float]):
    """Independent closed form: pieces between data values and atoms, and the atoms."""
    pts = np.array(sorted(atoms))
    masses = np.array([atoms[v] for v in pts])
    cuts = np.unique(np.concatenate(([lower, upper], x, pts)))

    def dist(y: np.ndarray) -> np.ndarray:
        below = np.searchsorted(np.sort(x), y, side="left")
        at_most = np.searchsorted(np.sort(x), y, side="right")
        return np.maximum(0.0, np.maximum(below - t, t - at_most))

    mids = 0.5 * (cuts[:-1] + cuts[1:])
    w_pieces = np.diff(cuts) * np.exp(-coef * dist(mids))
    w_atoms = masses * np.exp(-coef * dist(pts)) if pts.size else np.zeros(0)
    z = w_pieces.sum() + w_atoms.sum()
    return cuts, pts, w_pieces / z, w_atoms / z


@pytest.mark.parametrize(
    ("lattice", "levels"),
    [(None, []), (1.0, [(1, 1)]), ((1.0, 0.5, 0.1), [(1, 1), (1, 2), (1, 10)])],
)
def test_windowed_sampler_matches_the_whole_data_law(lattice: Any, levels: list[tuple[int, int]]) -> None:
    """Half width 1 on 12 records: the outside regions carry most of the mass, so the rejection branch
    runs on most draws (drawing atoms of every level inside it); the law must still be exactly the
    whole-data one (chi-square)."""
    x = np.array([0.5, 1.0, 1.0, 2.0, 2.0, 2.0, 2.7, 4.0, 4.0, 5.5, 7.25, 8.0])
    lower, upper, coef = -1.0, 10.0, 0.35
    lat = None if lattice is None else Atoms(lattice, factor=0.25)
    t = target_rank(0.5, x.size)
    cuts, pts, p_pieces, p_atoms = _exact_law(
        x, lower, upper, t, coef, _atom_masses(levels, 0.25, lower, upper)
    )
    rng = default_rng(5)
    grid = OutputGrid.for_bounds(lower, upper)
    records = InMemoryRecords(x.copy())
    total = 6000
    options = dict(lower=lower, upper=upper, target=t, coef=coef, eta=1e-9, lattice=lat, grid=grid)
    out = np.array(
        [
            sample_em_windowed(records, **options, rng=rng, numerics="float", half_width=1)
            for _ in range(total)
        ]
    )
    on_atom = np.isin(out, pts)
    counts = np.concatenate(
        (
            np.bincount(np.searchsorted(cuts, out[~on_atom]) - 1, minlength=p_pieces.size),
            [np.sum(out == v) for v in pts],
        )
    )
    probs = np.concatenate((p_pieces, p_atoms))
    keep = probs > 0
    assert counts[~keep].sum() == 0
    assert stats.chisquare(counts[keep], probs[keep] * total).pvalue > 1e-4


def test_windowed_sampler_catches_a_wrong_region_bound(monkeypatch: Any) -> None:
    """Break the bound on purpose (the region distance one rank too large): the exact acceptance check
    refuses, so a wrong bound can never silently bias the law."""
    from smoothdp.central import quantile_window

    real = quantile_window._log_region_bound
    monkeypatch.setattr(
        quantile_window, "_log_region_bound", lambda mass, d, coef, eta: real(mass, d + 3.0, coef, eta)
    )
    x = np.arange(20.0)
    rng = default_rng(1)
    with pytest.raises(RuntimeError, match="outside-region bound"):
        for _ in range(400):
            sample_em_windowed(
                InMemoryRecords(x.copy()), lower=-1.0, upper=25.0, target=target_rank(0.5, 20), coef=0.2,
                eta=1e-9, lattice=None, grid=OutputGrid.for_bounds(-1.0, 25.0), rng=rng, numerics="float",
                half_width=1,
            )  # fmt: skip


def test_window_is_small_and_public() -> None:
    assert window_half_width(10**8, 0.5) < 200
    assert window_half_width(10**8, 0.5) == window_half_width(10**8, 0.5)
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 100.0))
    records = as_records(_data(50000), 0.0, 100.0, clip=True)
    mech.sample(records, default_rng(0))
    (window,) = records._cache
    assert window.values.size <= 2 * window_half_width(50000, 0.5 * mech.epsilon_used(50000)) + 1


# -- the command line ---------------------------------------------------------------------------------------
def test_cli_engine_dask_reads_parquet_and_matches_numpy(tmp_path: Any, capsys: Any) -> None:
    import json

    pd = pytest.importorskip("pandas")
    from smoothdp.cli import main

    x = _data(3000, seed=9)
    pd.DataFrame({"income": x}).to_parquet(tmp_path / "d.parquet")
    pd.DataFrame({"income": x}).to_csv(tmp_path / "d.csv", index=False)
    outputs = []
    for path, engine in (
        ("d.parquet", "dask"),
        ("d.parquet", "numpy"),
        ("d.csv", "dask"),
        ("d.csv", "numpy"),
    ):
        argv = ["release", "median", str(tmp_path / path), "--column", "income", "--epsilon", "1"]
        with dask.config.set(scheduler="sync"):
            code = main([*argv, "--bounds", "0", "100", "--engine", engine, "--seed", "4", "--json"])
        assert code == 0
        outputs.append(json.loads(capsys.readouterr().out)["value"])
    assert len(set(outputs)) == 1
    code = main(["release", "median", str(tmp_path / "d.parquet"), "--column", "nope", "--epsilon", "1",
                 "--bounds", "0", "100", "--engine", "dask"])  # fmt: skip
    assert code == 2
