"""JointExp from windows of ranks (docs/theory/quantiles.md#jointexp-from-windows-of-ranks): its law against
the definition's exact law where the windows bite (chi-square; the continuum, one level of atoms, two
levels), a broken twin without the outside bound, the fallbacks, the engines, the public windows and
margin."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from atoms_law import atom_masses
from greedy_law import _location_law, definition_locations

from smoothdp.central.quantiles import JointQuantiles
from smoothdp.central.quantiles import joint_window as jw
from smoothdp.central.quantiles.atoms import build_atoms, check_lattice
from smoothdp.exact import OutputGrid
from smoothdp.scale.engine import SortedRecords
from smoothdp.work import count_work

X = np.array([0.5, 1.0, 1.0, 2.0, 2.0, 2.0, 2.7, 4.0, 4.0, 5.5, 7.25, 8.0])
QS = np.array([0.3, 0.7])
LOWER, UPPER, COEF = -1.0, 10.0, 0.35
#: (lattice spec, atom factor, the levels (P, Q) as documented) of each case; None: the continuum.
CASES = {
    "continuum": (None, 0.0, []),
    "one level": (1.0, 0.25, [(1, 1)]),
    "two levels": ((1.0, 0.25), 0.25, [(1, 1), (1, 4)]),
}


def _atoms(case: str) -> tuple[Any, dict[float, float]]:
    spec, factor, levels = CASES[case]
    if spec is None:
        return None, {}
    return build_atoms(check_lattice(spec), factor=factor), atom_masses(levels, factor, LOWER, UPPER)


def _draws(x: np.ndarray, case: str, total: int, seed: int) -> dict[tuple[int, ...], int]:
    """Location tuples (definition_locations' indices) of ``total`` windowed draws with half width 1."""
    plan = jw.plan_joint_windows(QS, x.size, COEF, half_width=1)
    assert plan is not None and plan.bounds == [(2, 4), (7, 9)]  # the windows bite: most mass outside
    atoms, masses = _atoms(case)
    locs = definition_locations(x, LOWER, UPPER, masses)
    index = {d["value"]: i for i, d in enumerate(locs) if d["atom"]}
    mids = np.array([d["value"] for d in locs if not d["atom"]])
    pieces = [i for i, d in enumerate(locs) if not d["atom"]]
    half = np.array([d["measure"] / 2 for d in locs if not d["atom"]])
    grid = OutputGrid.for_bounds(LOWER, UPPER)
    rng = np.random.default_rng(seed)

    def whole_data(sorted_x: np.ndarray) -> np.ndarray:
        mech = JointQuantiles(QS, epsilon=1.0, bounds=(LOWER, UPPER), lattice=None, numerics="float")
        out: np.ndarray = mech.programme(sorted_x, atoms, COEF).draw(rng)
        return out

    counts: dict[tuple[int, ...], int] = {}
    for _ in range(total):
        out = jw.sample_joint_windowed(
            SortedRecords(x), plan, qs=QS, lower=LOWER, upper=UPPER, coef=COEF, atoms=atoms, grid=grid,
            rng=rng, numerics="float", whole_data=whole_data,
        )  # fmt: skip
        key = []
        for v in out:
            if v in index:
                key.append(index[v])
            else:
                inside = np.flatnonzero(np.abs(v - mids) < half)
                assert inside.size == 1
                key.append(pieces[int(inside[0])])
        counts[tuple(key)] = counts.get(tuple(key), 0) + 1
    return counts


def _chi2(x: np.ndarray, counts: dict[tuple[int, ...], int], case: str) -> tuple[float, int]:
    law = _location_law(x, definition_locations(x, LOWER, UPPER, _atoms(case)[1]), QS, COEF, "greedy")
    total = sum(counts.values())
    assert set(counts) <= {k for k, p in law.items() if p > 0}
    big = [k for k, p in law.items() if p * total >= 5]
    obs = [counts.get(k, 0) for k in big] + [total - sum(counts.get(k, 0) for k in big)]
    exp = [law[k] * total for k in big] + [(1.0 - sum(law[k] for k in big)) * total]
    return sum((o - e) ** 2 / e for o, e in zip(obs, exp, strict=True) if e > 0), len(big)


@pytest.mark.parametrize("case", sorted(CASES))
def test_windowed_law_is_the_definition_where_the_windows_bite(case: str) -> None:
    """Half width 1 on 12 records with ties: outside rounds on a large share of the draws (acceptance and
    whole-data fallback both run), and the law of the released locations is the definition's."""
    with count_work() as work:
        counts = _draws(X, case, 900, seed=5)
    assert work["region_rounds"] > 100 and work["whole_data_draws"] > 10
    chi2, df = _chi2(X, counts, case)
    assert chi2 < df + 5.0 * math.sqrt(2.0 * df)


def test_broken_twin_without_the_outside_bound_fails(monkeypatch: Any) -> None:
    """Broken twin: no outside pseudo-outcome (Û = 0), the windows alone: the chi-square must fail."""
    monkeypatch.setattr(jw, "_outside_parts", lambda *a, **k: [])
    counts = _draws(X, "one level", 600, seed=6)
    chi2, df = _chi2(X, counts, "one level")
    assert chi2 > df + 20.0 * math.sqrt(2.0 * df)


def test_a_tied_run_reaching_two_windows_runs_the_whole_data_programme() -> None:
    x = np.array([0.5, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 7.25, 8.0])
    plan = jw.plan_joint_windows(QS, x.size, COEF, half_width=1)
    assert plan is not None
    windows = SortedRecords(x).windows(plan.spans)
    atoms, _ = _atoms("one level")
    assert jw.WindowChain(windows, plan, x.size, atoms).spanning
    assert not jw.WindowChain(windows, plan, x.size, None).spanning  # no atoms: not a knot
    calls = []

    def whole_data(sorted_x: np.ndarray) -> np.ndarray:
        calls.append(sorted_x.size)
        return np.array([1.0, 3.0])

    with count_work() as work:
        out = jw.sample_joint_windowed(
            SortedRecords(x), plan, qs=QS, lower=LOWER, upper=UPPER, coef=COEF, atoms=atoms,
            grid=OutputGrid.for_bounds(LOWER, UPPER), rng=np.random.default_rng(1), numerics="float",
            whole_data=whole_data,
        )  # fmt: skip
    assert work["whole_data_draws"] == 1 and calls == [12] and out.shape == (2,)


def test_windows_are_public_and_disjoint() -> None:
    qs = np.arange(1, 10) / 10
    assert jw.plan_joint_windows(qs, 1000, 0.2375) is None  # too close together: every record is read
    plan = jw.plan_joint_windows(qs, 10**6, 0.2375)
    assert plan is not None
    w = jw.joint_window_half_width(10**6, 9, 0.2375)
    assert [b - a for a, b in plan.bounds] == [2 * w] * 9
    assert all(plan.bounds[j][1] + 1 < plan.bounds[j + 1][0] for j in range(8))
    assert min(plan.d_left + plan.d_right) >= 2 * w - 2  # an output outside its window costs ≥ 2w − 2


@pytest.mark.parametrize("kind", ["continuous", "integers"])
def test_default_deciles_read_windows_and_agree_across_engines(kind: str) -> None:
    """n above the public threshold: the default deciles read the windows only (no sort), the heavy level
    is chosen from one pass of counts, and the same seed gives the same release in memory and on Dask."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    gen = np.random.default_rng(3)
    x = gen.normal(50.0, 10.0, 40_000) if kind == "continuous" else gen.integers(20, 80, 40_000) * 1.0
    mech = JointQuantiles(np.arange(1, 10) / 10, epsilon=1.0, bounds=(0.0, 100.0))
    assert mech.window_plan(x.size) is not None
    with count_work() as work:
        mem = mech.release(x, rng=7)
    assert mem.details["windows"] and work.as_dict().get("sorted_records", 0) == 0
    coef = mech.epsilon_main(x.size) / 4.0
    assert work["window_records"] < 9 * (2 * jw.joint_window_half_width(x.size, 9, coef) + 3)
    with dask.config.set(scheduler="sync"):
        dsk = mech.release(da.from_array(x, chunks=10_000), rng=7)
    assert dsk.details["engine"] == "dask"
    np.testing.assert_array_equal(mem.value, dsk.value)
    assert mem.details["lattice_test"] == dsk.details["lattice_test"]
    assert np.all(np.abs(mem.value - np.quantile(x, mech.qs, method="inverted_cdf")) < 1.0)
    if kind == "integers":  # the selection chose the integers: tied values released exactly
        assert mem.details["lattice_test"]["level"] == 1.0 and np.all(mem.value == np.round(mem.value))


def test_windowed_margin_is_public_and_small() -> None:
    mech = JointQuantiles(np.arange(1, 10) / 10, epsilon=1.0, bounds=(0.0, 125.0))
    for n in (10**5, 10**6, 10**7):
        assert mech.window_plan(n) is not None
        assert 0.0 < mech.margin(n) < 1e-3 * mech.epsilon


def test_closed_masses_are_the_atoms_exact_masses() -> None:
    """The vectorized μ([lo, hi]) of the outside parts against Atoms.open_mass + point_mass, one by one."""
    from fractions import Fraction

    g = np.random.default_rng(0)
    for spec in ("multiscale", 1.0, (1.0, 0.25)):
        atoms = build_atoms(check_lattice(spec), factor=0.25)
        pairs = [(-8.0, 8.0), (0.5, 0.5), (1.0, 1.0), (0.3, 0.3), (-1.0, 2.5), (0.1, 0.2)]
        pairs += [tuple(sorted(np.round(g.normal(0, 3, 2), int(g.integers(0, 5))))) for _ in range(100)]
        for (lo, hi), (mu, part) in zip(pairs, jw._closed_masses(pairs, atoms), strict=True):
            ref = atoms.open_mass(lo, hi) + atoms.point_mass(lo) + (atoms.point_mass(hi) if hi > lo else 0)
            assert part == ref and mu == Fraction(hi) - Fraction(lo) + ref
