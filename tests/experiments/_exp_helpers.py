"""Helpers for the experiment tests: read a CSV table back; the tiny_run fixture lives in conftest."""

import csv

import numpy as np
import pytest

from smoothdp.experiments import EXPERIMENTS, reproduce


def read_table(path):
    """A CSV written by the report writer as a dict of columns (floats where numeric)."""
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    columns = {}
    for name in rows[0]:
        values = [row[name] for row in rows]
        try:
            columns[name] = np.array([float(v) for v in values])
        except ValueError:
            columns[name] = np.array(values)
    return columns


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """``tiny_run(name)`` runs experiment ``name`` in tiny mode (seeded), once; returns (record, folder)."""
    cache = {}

    def run(name):
        if name not in cache:
            missing = EXPERIMENTS[name].missing()
            if missing:
                pytest.skip(f"{name} waits for {missing}")
            out = tmp_path_factory.mktemp(name)
            [record] = reproduce(
                [name], mode="tiny", out_dir=out, seed=20240501, show_progress=False, raise_errors=True
            )
            cache[name] = (record, out / name)
        return cache[name]

    return run
