"""Exact output laws of a table's grouped means (written out here, not from the code's samplers), shared by
the tests of the pooled range decision (test_range_choice.py) and of a mean beside a count
(test_count_reuse.py): the pooled centre's ratio mean (docs/theory/tables.md#a-pooled-centre), the
decision's discrete Laplace tail (docs/theory/tables.md#one-range-decision-for-every-group), each group's
ratio mean on the branch it selects (tests/mechanisms/ratio_mean_cases.py), and a group's noisy count."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from smoothdp.central.moments.ratio_mean import RatioMean

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
from ratio_mean_cases import ratio_mean_loss


def decision_log_law(frame: pd.DataFrame, bounds: tuple[float, float], scale: float) -> tuple[float, float]:
    """ln P(range), ln P(no range) of the pooled decision on the column ``v``: no range iff D + K > 0, D =
    #{|x − c| ≥ R/4} − #{|x − c| < R/4} (c = 0 clamped into the bounds, R the bounds' reach from c), K
    discrete Laplace of scale t (P(K ≥ m) = α^m/(1 + α) for m ≥ 1, α = e^{−1/t})."""
    lo, hi = bounds
    c = min(max(0.0, lo), hi)
    far = np.abs(np.clip(frame["v"].to_numpy(float), lo, hi) - c) >= max(hi - c, c - lo) / 4
    d = int(np.sum(far)) - int(np.sum(~far))
    alpha, m = math.exp(-1.0 / scale), 1 - d  # P(D + K ≥ 1) = P(K ≥ 1 − d)
    p_no = alpha**m / (1 + alpha) if m >= 1 else 1.0 - alpha ** (1 - m) / (1 + alpha)
    return math.log1p(-p_no), math.log(p_no)


def count_log_law(n: int, scale: float, released: np.ndarray) -> np.ndarray:
    """ln P(Ñ = released) for Ñ = n + discrete Laplace of scale t (pmf (1 − α)/(1 + α)·α^|k|)."""
    alpha = math.exp(-1.0 / scale)
    return math.log((1 - alpha) / (1 + alpha)) - np.abs(released - n) / scale


def _loss(mech: RatioMean, xa: np.ndarray, xb: np.ndarray) -> float:
    return max(ratio_mean_loss(mech, xa, xb, 1.0), ratio_mean_loss(mech, xb, xa, 1.0))


def means_loss(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    keys: list[str],
    bounds: tuple[float, float],
    epsilon_main: float,
    epsilon_centre: float,
    test_scale: float,
    released_count: float | None = None,
) -> float:
    """sup over the pooled centre, the decision and every group's mean of |ln P_a/P_b|: the centre's loss
    (the pooled records' ratio mean without a range) plus the decision's, plus, for the branch it selects,
    the groups' ratio-mean losses (a product over groups given the decision and the centre), the worst over
    the centres the groups may receive (the bounds' midpoint, its ends and points between). With
    ``released_count`` the means draw no count (their count term is 0; ratio_mean_loss covers every coverage
    level a count can give)."""
    da, db = decision_log_law(a, bounds, test_scale), decision_log_law(b, bounds, test_scale)
    pooled = RatioMean(epsilon=epsilon_centre, bounds=bounds, range_fraction=0.0)
    centre = _loss(pooled, a["v"].to_numpy(float), b["v"].to_numpy(float))
    lo, hi = bounds
    centres = (None, lo, hi, lo + (hi - lo) / 3, hi - (hi - lo) / 8)
    worst = 0.0
    for branch, fraction in enumerate((None, 0.0)):  # 0: every group looks for a range; 1: none does
        for m in centres if fraction == 0.0 else (None,):
            mech = RatioMean(
                epsilon=epsilon_main,
                bounds=bounds,
                range_fraction=fraction,
                released_count=released_count,
                centre=m,
            )
            groups = 0.0
            for key in keys:
                xa = a.loc[a["g"] == key, "v"].to_numpy(float)
                xb = b.loc[b["g"] == key, "v"].to_numpy(float)
                groups += _loss(mech, xa, xb)
            worst = max(worst, abs(da[branch] - db[branch]) + centre + groups)
    return worst


def counts_loss(a: pd.DataFrame, b: pd.DataFrame, *, keys: list[str], scale: float) -> float:
    """sup over the released counts of |ln P_a/P_b|: the sum over groups of each noisy count's worst loss."""
    grid = np.arange(-30, 40, dtype=float)
    loss = 0.0
    for key in keys:
        na, nb = int(np.sum(a["g"] == key)), int(np.sum(b["g"] == key))
        loss += float(np.max(np.abs(count_log_law(na, scale, grid) - count_log_law(nb, scale, grid))))
    return loss
