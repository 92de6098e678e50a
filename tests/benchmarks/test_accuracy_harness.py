"""The accuracy benchmark's own logic (benchmarks/accuracy): error summaries, the comparison against the
best competitor, the table writer, the data sets' truths and grids. No competitor library runs here."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.accuracy.datasets import (  # noqa: E402
    DECILES,
    Dataset,
    build_datasets,
    candidate_grid,
    true_quantiles,
)
from benchmarks.accuracy.harness import cell_seed, run_cell, summarise_errors, trial_error  # noqa: E402
from benchmarks.accuracy.methods import Method, _names_in_annotation, tree_edges  # noqa: E402
from benchmarks.accuracy.report import (  # noqa: E402
    TOLERANCE,
    compare_default,
    merge_cells,
    method_columns,
    render_docs,
    render_markdown,
)


def test_true_quantile_is_the_order_statistic_ceil_qn() -> None:
    x = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])  # sorted: 1 2 3 4 5 6, n = 6
    # x_(max(1, ⌈qn⌉)): q = 0.5 -> x_(3) = 3 (the LOWER median); 0.1 -> x_(1); 0.9 -> x_(6); 0.34 -> x_(3)
    assert true_quantiles(x, [0.5, 0.1, 0.9, 0.34]).tolist() == [3.0, 1.0, 6.0, 3.0]


def test_trial_error_is_mean_absolute_error_and_infinite_on_bad_output() -> None:
    truth = np.array([1.0, 2.0, 3.0])
    assert trial_error(np.array([2.0, 2.0, 0.0]), truth) == pytest.approx((1 + 0 + 3) / 3)
    assert math.isinf(trial_error(np.array([1.0, np.nan, 3.0]), truth))
    assert math.isinf(trial_error(np.array([1.0, 2.0]), truth))


def test_summaries_tolerate_infinite_errors() -> None:
    errors = [float(k) for k in range(1, 11)]  # 1..10
    assert summarise_errors(errors) == (5.5, 9.0)  # p90: the 9th of 10, no interpolation
    med, p90 = summarise_errors([*errors[:8], math.inf, math.inf])
    assert med == 5.5 and math.isinf(p90)


def test_cell_seed_is_stable_and_distinguishes_cells() -> None:
    a = cell_seed(0, "adult_age", 0.5, "smoothdp")
    assert a == cell_seed(0, "adult_age", 0.5, "smoothdp")
    assert (
        len(
            {
                a,
                cell_seed(0, "adult_age", 1.0, "smoothdp"),
                cell_seed(1, "adult_age", 0.5, "smoothdp"),
                cell_seed(0, "adult_age", 0.5, "diffprivlib"),
            }
        )
        == 4
    )


def _fake_method(outputs: list[float], name: str = "fake") -> Method:
    def prepare(ds: Dataset, epsilon: float, seed: int):
        it = iter(outputs)
        return lambda: np.array([next(it)])

    return Method(name, "fake", "competitor", prepare, "a fixed sequence")


def test_run_cell_counts_errors_bounds_and_failures() -> None:
    ds = Dataset("toy", np.array([0.0, 1.0, 2.0, 3.0, 4.0]), (0.0, 10.0), (0.5,), "linear", "toy")
    assert ds.truth.tolist() == [2.0]
    r = run_cell(ds, 1.0, _fake_method([2.0, 3.0, 12.0, -1.0]), trials=4)
    assert r.trials == 4
    assert r.median_abs_error == pytest.approx(np.median([0.0, 1.0, 10.0, 3.0]))
    assert r.out_of_bounds == pytest.approx(0.5)
    assert r.failure == ""
    # the fifth release raises StopIteration: an infinite error, recorded as a failure, never fatal
    broken = run_cell(ds, 1.0, _fake_method([2.0, 2.0]), trials=3)
    assert broken.trials == 3 and "StopIteration" in broken.failure
    assert broken.nonfinite == pytest.approx(1 / 3)


def test_dataset_rejects_data_outside_its_bounds() -> None:
    with pytest.raises(ValueError, match="outside"):
        Dataset("bad", np.array([0.0, 11.0]), (0.0, 10.0), (0.5,), "linear", "bad")


def _cell(ds: str, eps: float, method: str, role: str, err: float, oob: float = 0.0) -> dict[str, object]:
    library = "smoothdp" if role in ("default", "smoothdp") else method.split("-")[0]
    return {
        "dataset": ds,
        "kind": "median",
        "n": 10,
        "epsilon": eps,
        "method": method,
        "library": library,
        "role": role,
        "trials": 5,
        "median_abs_error": err,
        "p90_abs_error": 2 * err,
        "out_of_bounds": oob,
        "nonfinite": 0.0,
        "ms_per_release": 1.0,
        "setup_seconds": 0.0,
        "failure": "",
    }


CELLS = [
    _cell("a", 1.0, "smoothdp", "default", 1.05),  # within 10% of 1.0: not a loss, not strictly better
    _cell("a", 1.0, "diffprivlib", "competitor", 1.0),
    _cell("a", 1.0, "opendp-em", "competitor", 3.0),
    _cell("b", 1.0, "smoothdp", "default", 5.0, oob=0.25),  # a loss (5x), out of bounds
    _cell("b", 1.0, "smoothdp:exponential", "smoothdp", 0.5),
    _cell("b", 1.0, "diffprivlib", "competitor", 2.0),
    _cell("b", 1.0, "opendp-em", "competitor", 1.0),
    _cell("c", 1.0, "smoothdp", "default", 0.1),  # strictly better
    _cell("c", 1.0, "opendp-tree", "competitor", 0.2),
]


def test_compare_default_picks_the_best_competitor_and_applies_the_tolerance() -> None:
    comps = {c.dataset: c for c in compare_default(CELLS)}
    assert TOLERANCE == pytest.approx(1.1)
    assert comps["a"].within and not comps["a"].strictly_better
    assert comps["b"].best_competitor == "opendp-em" and comps["b"].ratio == pytest.approx(5.0)
    assert not comps["b"].within and comps["b"].best_smoothdp == "smoothdp:exponential"
    assert comps["b"].default_out_of_bounds == pytest.approx(0.25)
    assert comps["c"].within and comps["c"].strictly_better


def test_numerically_exact_errors_count_as_within() -> None:
    cells = [_cell("t", 1.0, "smoothdp", "default", 4e-9), _cell("t", 1.0, "opendp-em", "competitor", 0.0)]
    assert not compare_default(cells)[0].within  # no bounds known: 4e-9 is infinitely worse than 0
    assert compare_default(cells, {"t": 10.0})[0].within  # 4e-9 < 1e-9 x width 10
    assert not compare_default(cells, {"t": 1.0})[0].within


def test_merge_replaces_matching_cells_and_appends_new_ones() -> None:
    new = [_cell("b", 1.0, "smoothdp", "default", 0.1), _cell("b", 1.0, "smoothdp:kss", "smoothdp", 0.2)]
    merged = merge_cells(CELLS, new)
    assert len(merged) == len(CELLS) + 1
    b_default = [c for c in merged if c["dataset"] == "b" and c["method"] == "smoothdp"]
    assert [c["median_abs_error"] for c in b_default] == [0.1]
    assert method_columns(merged) == [
        "smoothdp",
        "smoothdp:exponential",
        "smoothdp:kss",
        "diffprivlib",
        "opendp-em",
        "opendp-tree",
    ]


def test_markdown_lists_exactly_the_lost_cells_and_the_docs_page_has_no_private_citations() -> None:
    meta = {"trials": 5, "datasets": {"a": "toy a", "b": "toy b", "c": "toy c"}, "settings": {}}
    md = render_markdown(CELLS, meta)
    lost = md.split("not within 10% of the best competitor", 1)[1]
    assert "| b | 1 | 5 | opendp-em | 1 | 5× |" in lost
    assert "| a | 1 |" not in lost and "| c | 1 |" not in lost
    assert "strictly better: 1 (33%)" in md and "outside the bounds: 1" in md
    docs = render_docs(CELLS, meta)
    assert docs.startswith("# Which mechanism should I use?")
    assert "`smoothdp:exponential` 0.5" in docs
    assert "notes/" not in docs and "seed" not in docs.lower()


def test_candidate_grids_are_public_sorted_and_inside_the_bounds() -> None:
    rows = {d.name: d for d in build_datasets()}
    for ds in rows.values():
        grid = candidate_grid(ds)
        lo, hi = ds.bounds
        assert np.all(np.diff(grid) > 0) and grid[0] >= lo and grid[-1] <= hi
    assert candidate_grid(rows["adult_age"]).tolist() == [float(k) for k in range(126)]
    income = candidate_grid(rows["ca_income"])
    assert 0.0 in income and income[0] == -1e5 and income[-1] == 1e7
    edges = tree_edges(rows["ties_0_5"])  # one bin per integer, outer edges at the bounds
    assert edges.tolist() == [0.0, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.0]
    assert rows["adult_age_deciles"].qs == DECILES and len(DECILES) == 9
    assert rows["bimodal_gap"].n % 2 == 1  # every quantile definition agrees on its median


def test_method_names_are_read_from_a_literal_annotation() -> None:
    import inspect
    from typing import Literal

    def f(x: object, *, method: Literal["auto", "exponential", "kss"] = "auto") -> None:
        return None

    param = inspect.signature(f).parameters["method"]
    assert _names_in_annotation(param) == ["auto", "exponential", "kss"]
