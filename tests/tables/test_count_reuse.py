"""A mean beside a count (docs/theory/tables.md#a-mean-beside-a-count): every group's add/remove mean takes
its group's count as the table released it (the noisy one, never n: the failure that would break the
guarantee), on both engines and for empty groups; the table's worst-case privacy loss over adversarial
neighbours from exact laws written out here; the public description; and what it buys."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from grouped_mean_laws import counts_loss, means_loss

import smoothdp
from smoothdp.central.moments.noisy_sums import NoisyMoments
from smoothdp.central.moments.ratio_mean import RatioMean
from smoothdp.composition import split_epsilon
from smoothdp.tables import range_choice

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
from moment_cases import noisy_moments_loss

BOUNDS = (0.0, 10.0)
KEYS = ["A", "B", "C", "D"]  # D: listed, no row


def _record_counts(monkeypatch: pytest.MonkeyPatch, mechanism: type = RatioMean) -> list[float | None]:
    """The released_count every instance of ``mechanism`` is built with, from now on (in construction
    order), except the pooled centre's ratio mean (drawn before the groups, with a count of its own)."""
    seen: list[float | None] = []
    real_init = mechanism.__init__

    def init(self, **kwargs):
        if sys._getframe(1).f_code.co_name != "pooled_centre":
            seen.append(kwargs.get("released_count"))
        real_init(self, **kwargs)

    monkeypatch.setattr(mechanism, "__init__", init)
    return seen


def _frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame({"g": gen.choice(["A", "B", "C"], n, p=[0.6, 0.3, 0.1]), "v": gen.uniform(0, 10, n)})


def _table(df, stats, **kw):
    return smoothdp.aggregate(
        df, "g", {"v": stats}, bounds={"v": BOUNDS}, epsilon=1.0, keys=KEYS, neighbours="add_remove", **kw
    )


def test_each_group_mean_takes_the_released_noisy_count(monkeypatch):
    seen = _record_counts(monkeypatch)
    out = _table(_frame(), ["count", "mean"], rng=5)
    released = out["v"]["count"].to_numpy(float)
    exact = np.array([np.sum(_frame()["g"] == k) for k in KEYS], float)
    assert seen[: len(KEYS)] == released.tolist()  # the groups' calls, in group order
    assert not np.array_equal(released, exact)  # noisy: the exact n never reaches the mean
    details = out.attrs["smoothdp"]["statistics"][1]["details"]
    assert details["count"] == "released before (a public input)"


@pytest.mark.parametrize("stat", ["var", "std"])
def test_each_group_variance_takes_the_released_noisy_count(monkeypatch, stat):
    seen = _record_counts(monkeypatch, NoisyMoments)
    out = _table(_frame(), ["count", stat], rng=5)
    assert seen[: len(KEYS)] == out["v"]["count"].to_numpy(float).tolist()
    assert out.attrs["smoothdp"]["statistics"][1]["details"]["count"] == "released before (a public input)"


def test_a_count_weighted_below_the_means_own_share_is_not_reused(monkeypatch):
    """The mean's own count would get 30% of its ε: a table count at less than that would be noisier, so the
    mean draws its own (public: the weights)."""
    seen = _record_counts(monkeypatch)
    low = {("v", "count"): 0.25, ("v", "mean"): 1.0}  # the count at 25% of the mean's share
    out = _table(_frame(), ["count", "mean"], weights=low, rng=5)
    assert set(seen) == {None}
    assert out.attrs["smoothdp"]["statistics"][1]["details"]["count"] == "drawn"
    seen.clear()
    _table(_frame(), ["count", "mean"], weights={("v", "count"): 0.35, ("v", "mean"): 1.0}, rng=5)
    assert None not in seen


def test_without_a_count_in_the_table_each_mean_draws_its_own(monkeypatch):
    seen = _record_counts(monkeypatch)
    out = _table(_frame(), ["mean"], rng=5)
    assert set(seen) == {None}
    assert out.attrs["smoothdp"]["statistics"][0]["details"]["count"] == "drawn"


def test_the_dask_path_passes_the_same_released_counts_empty_groups_included(monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    seen = _record_counts(monkeypatch)
    df = _frame()
    out = _table(dd.from_pandas(df, npartitions=3), ["count", "mean"], rng=5)
    released = out["v"]["count"].to_numpy(float).tolist()
    # workers (groups A, B, C, in some order), then the empty group D and the description on the driver
    assert sorted(v for v in seen[:3] if v is not None) == sorted(released[:3])
    assert released[3] in seen[3:]
    local = _table(df, ["count", "mean"], rng=5)
    assert out.attrs["smoothdp"]["statistics"] == local.attrs["smoothdp"]["statistics"]
    seen.clear()  # by=None on Dask: the single-column mean on the Dask column gets the released count too
    whole = smoothdp.aggregate(dd.from_pandas(df, npartitions=3), None, {"v": ["count", "mean"]},
                               bounds={"v": BOUNDS}, epsilon=1.0, neighbours="add_remove", rng=2)  # fmt: skip
    assert seen[0] == float(whole["v"]["count"].iloc[0])


def test_a_table_of_one_group_reuses_it_too_but_not_under_substitution(monkeypatch):
    seen = _record_counts(monkeypatch)
    df = _frame()
    smoothdp.aggregate(df, None, {"v": ["count", "mean"]}, bounds={"v": BOUNDS}, epsilon=1.0,
                       neighbours="add_remove", rng=1)  # fmt: skip
    assert seen and seen[-1] is not None
    seen.clear()
    smoothdp.aggregate(df, None, {"v": ["count", "mean"]}, bounds={"v": BOUNDS}, epsilon=1.0, rng=1)
    assert seen == []  # one group under substitution: n is public and the mean is not the ratio mean


# -- the whole table's worst-case loss ---------------------------------------------------------------------
BASE = [("A", 1.0), ("A", 1.0), ("A", 10.0), ("A", 10.0), ("B", 0.0), ("B", 9.0), ("B", 9.0), ("C", 1.0)]
PAIRS = [
    ("add_remove", BASE, [*BASE, ("A", 10.0)]),
    ("add_remove", [*BASE, ("C", 0.0)], BASE),
    ("substitution", BASE, [*BASE[:2], ("B", 0.0), *BASE[3:]]),
]


def _table_loss(a: pd.DataFrame, b: pd.DataFrame, eps_count: float, eps_mean: float) -> float:
    """sup |ln P_a/P_b| over (the counts, the centre, the decision, the means): the noisy counts' loss plus
    the pooled centre's, the decision's and the groups' ratio means given the released counts
    (tests/tables/grouped_mean_laws.py)."""
    shares = (range_choice.TEST_SHARE, range_choice.CENTRE_SHARE)
    eps_test, eps_centre, eps_main = split_epsilon(eps_mean, *shares)
    test_scale = math.nextafter(1.0 / eps_test, math.inf)
    counts = counts_loss(a, b, keys=KEYS, scale=math.nextafter(1.0 / eps_count, math.inf))
    means = means_loss(
        a, b, keys=KEYS, bounds=BOUNDS, epsilon_main=eps_main, epsilon_centre=eps_centre,
        test_scale=test_scale, released_count=1000.0,
    )  # fmt: skip
    return counts + means


def _shares(a: pd.DataFrame, relation: str, statistic: str) -> tuple[Any, Any]:
    """The count's and the statistic's shares of a table of both under ε = 1, as the table ran them."""
    release = smoothdp.aggregate(
        a, "g", {"v": ["count", statistic]}, bounds={"v": BOUNDS}, epsilon=1.0, keys=KEYS,
        neighbours=relation, rng=0, return_release=True,
    )  # fmt: skip
    count_share, share = release.statistics
    return count_share, share


@pytest.mark.parametrize(("relation", "rows_a", "rows_b"), PAIRS)
def test_a_table_of_counts_and_means_stays_within_its_guarantee(relation, rows_a, rows_b):
    a, b = (pd.DataFrame(r, columns=["g", "v"]) for r in (rows_a, rows_b))
    count_share, mean_share = _shares(a, relation, "mean")
    loss = _table_loss(a, b, count_share.epsilon_per_group, mean_share.epsilon_per_group)
    assert 0.99 < loss <= 1.0 + 1e-9  # adversarial frames: the bound is reached, not passed


@pytest.mark.parametrize(("relation", "rows_a", "rows_b"), PAIRS)
def test_a_table_of_counts_and_variances_stays_within_its_guarantee(relation, rows_a, rows_b):
    a, b = (pd.DataFrame(r, columns=["g", "v"]) for r in (rows_a, rows_b))
    count_share, var_share = _shares(a, relation, "var")
    count_scale = math.nextafter(1.0 / count_share.epsilon_per_group, math.inf)
    mech = NoisyMoments(epsilon=var_share.epsilon_per_group, bounds=BOUNDS, released_count=5.0)
    loss = counts_loss(a, b, keys=KEYS, scale=count_scale)
    for key in KEYS:
        xa = a.loc[a["g"] == key, "v"].to_numpy(float)
        xb = b.loc[b["g"] == key, "v"].to_numpy(float)
        loss += max(noisy_moments_loss(mech, xa, xb, 1.0), noisy_moments_loss(mech, xb, xa, 1.0))
    assert 0.9 < loss <= 1.0 + 1e-9


def test_means_beside_a_count_are_more_accurate():
    """Eight groups of 2,500 values in (0, 100), count and mean under ε = 1 (add/remove, each ε/2): the mean
    reusing the table's count (its sum gets the count's 15%, the share beside the pooled centre) against each
    mean drawing its own, median |error| over groups and 200 seeded releases (measured 0.80 on these seeds;
    0.55 before the pooled centre, which makes the count's noise matter less to both)."""
    gen = np.random.default_rng(2)
    df = pd.DataFrame({"g": np.arange(20_000) % 8, "v": gen.normal(40, 15, 20_000).clip(0, 100)})
    truth = df.groupby("g")["v"].mean().to_numpy()
    kw = dict(bounds={"v": (0.0, 100.0)}, epsilon=1.0, keys=list(range(8)), neighbours="add_remove")
    reused, own = [], []
    for seed in range(200):
        out = smoothdp.aggregate(df, "g", {"v": ["count", "mean"]}, rng=seed, **kw)
        reused.append(np.abs(out["v"]["mean"].to_numpy() - truth))
        alone = smoothdp.aggregate(df, "g", {"v": ["mean"]}, weights={("v", "mean"): 1.0}, rng=seed,
                                   **{**kw, "epsilon": 0.5})  # fmt: skip
        own.append(np.abs(alone["v"]["mean"].to_numpy() - truth))
    ratio = np.median(np.median(reused, axis=0)) / np.median(np.median(own, axis=0))
    assert ratio < 0.9
