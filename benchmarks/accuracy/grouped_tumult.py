"""Tumult Analytics cells of the grouped accuracy benchmark (benchmarks/accuracy/grouped.py).

Tumult Analytics (``tmlt.analytics``, on pyspark) pins its own numpy and pandas, so it runs in a virtual
environment of its own; this script needs numpy and pandas only (no smoothdp). ``grouped.py --export DIR``
writes each cell's data (one CSV per grouped column: key, value) and a ``cells.json`` (bounds, public keys,
statistics, ε, trials); this script runs Tumult's group-by queries on them and writes
``tumult_errors.json``, which ``grouped.py --tumult FILE`` merges into the table.

Settings (add/remove of one row, as for every library of the table): ``Session.from_dataframe(privacy_budget
=PureDPBudget(ε·T), source_id="data", dataframe=..., protected_change=AddOneRow())``, one ``evaluate`` per
trial at ``PureDPBudget(ε)`` of ``QueryBuilder("data").groupby(KeySet.from_dict({key: keys}))`` followed by
``count()``, ``sum(col, low, high)``, ``average(col, low, high)``, ``median(col, low, high)`` or, for the
quartiles, two ``quantile(col, q, low, high)`` queries at ε/2 each.

Run: ``/path/to/tumult-venv/bin/python benchmarks/accuracy/grouped_tumult.py DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _truth(values: np.ndarray, statistic: str, bounds: tuple[float, float]) -> list[float]:
    c = np.clip(values, *bounds)
    if statistic == "count":
        return [float(values.size)]
    if statistic == "sum":
        return [float(c.sum())]
    if statistic == "mean":
        return [float(c.mean())]
    qs = [0.5] if statistic == "median" else [0.25, 0.75]
    return [float(v) for v in np.quantile(c, qs, method="inverted_cdf")]


def main(directory: str) -> None:
    import os

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's workers: this environment's Python
    from pyspark.sql import SparkSession
    from tmlt.analytics import AddOneRow, KeySet, PureDPBudget, QueryBuilder, Session

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # a few thousand rows per query: Spark's default of 200 shuffle partitions costs seconds per query
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(directory)
    cells = json.loads((root / "cells.json").read_text())
    out = []
    for cell in cells:
        frame = pd.read_csv(root / cell["file"], dtype={"key": str})
        keys = [str(k) for k in cell["keys"]]
        lo, hi = cell["bounds"]
        trials, eps, statistic = cell["trials"], cell["epsilon"], cell["statistic"]
        session = Session.from_dataframe(
            privacy_budget=PureDPBudget(eps * trials),
            source_id="data",
            dataframe=spark.createDataFrame(frame),
            protected_change=AddOneRow(),
        )
        group_by = QueryBuilder("data").groupby(KeySet.from_dict({"key": keys}))
        if statistic == "count":
            queries = [(group_by.count(name="v0"), eps)]
        elif statistic == "sum":
            queries = [(group_by.sum("value", lo, hi, name="v0"), eps)]
        elif statistic == "mean":
            queries = [(group_by.average("value", lo, hi, name="v0"), eps)]
        elif statistic == "median":
            queries = [(group_by.median("value", lo, hi, name="v0"), eps)]
        else:
            queries = [
                (group_by.quantile("value", q, lo, hi, name=f"v{i}"), eps / 2)
                for i, q in enumerate((0.25, 0.75))
            ]
        truth = np.array(
            [_truth(frame.loc[frame["key"] == k, "value"].to_numpy(float), statistic, (lo, hi)) for k in keys]
        )
        errors = []
        for _ in range(trials):
            columns = []
            for query, budget in queries:
                result = session.evaluate(query, PureDPBudget(budget)).toPandas().set_index("key")
                columns.append(result.loc[keys].iloc[:, 0].to_numpy(float))
            errors.append(np.mean(np.abs(np.column_stack(columns) - truth), axis=1))
        per_group = np.median(np.array(errors), axis=0)
        entry: dict[str, Any] = {"id": cell["id"], "median_abs_error": float(np.median(per_group))}
        entry["trials"] = trials
        # every trial's per-group error, so that runs of one cell can be pooled later
        entry["errors"] = np.round(np.array(errors), 12).tolist()
        out.append(entry)
        print(cell["id"], entry["median_abs_error"], flush=True)
    (root / "tumult_errors.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
