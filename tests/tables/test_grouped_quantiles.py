"""A group's several quantiles in a grouped release are monotone in q (sorted: post-processing), in the order
the levels were asked for."""

from __future__ import annotations

import numpy as np
import pandas as pd

import smoothdp


def test_each_groups_quantiles_are_monotone_in_q_in_the_order_asked():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"g": rng.integers(0, 12, 240), "v": rng.exponential(10.0, 240)})
    gen = smoothdp.default_rng(1)
    for _ in range(
        5
    ):  # small groups at a small ε: two quantiles are two separate releases, often out of order
        out = smoothdp.aggregate(
            df, "g", {"v": ["quantiles:0.6,0.4"]}, bounds={"v": (0, 1000)}, epsilon=0.2,
            keys=list(range(12)), neighbours="add_remove", rng=gen,
        )  # fmt: skip
        q40, q60 = (out[("v", f"quantile_{q}")].to_numpy() for q in ("0.4", "0.6"))
        assert np.all(q40 <= q60)
