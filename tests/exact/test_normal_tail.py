"""The Gaussian's long-double tail table: Horner's value at any x in [0, 9.5] within its node's bound.

Q(x) = erfc(x/√2)/2 is evaluated here in mpmath at 40 digits from its definition, never from the code
under test, at random points, at the nodes' interval ends (|h| = 1/64) and in the deep tail; the long-double
Horner evaluation of the node's polynomial must lie within the node's error bound. A broken twin with the
bounds left out (zero) must fail the same check.
"""

from __future__ import annotations

from typing import Any

import mpmath as mp
import numpy as np
import pytest

from smoothdp.exact.arithmetic import LONG_DOUBLE
from smoothdp.exact.normal import DEGREE, NODES_PER_UNIT, X_MAX, TailTable, tail_table

pytestmark = pytest.mark.skipif(LONG_DOUBLE is None, reason="long double is not the x87 format here")


def _points() -> np.ndarray:
    rng = np.random.default_rng(20261129)
    nodes = np.arange(int(X_MAX * NODES_PER_UNIT)) / NODES_PER_UNIT
    edges = np.concatenate([nodes + 1 / 64, nodes + 1 / 64 - 2.0**-50, nodes[1:] - 1 / 64])
    return np.concatenate([rng.uniform(0, 9.3, 1500), edges, [0.0, 2.0**-40, 9.27, 9.3]])


def _mp(v: Any) -> Any:
    m, e = np.frexp(np.longdouble(v))
    return mp.ldexp(mp.mpf(int(np.ldexp(m, 64))), int(e) - 64)


def _check(table: TailTable, xs: np.ndarray) -> None:
    node = np.rint(xs * NODES_PER_UNIT).astype(np.intp)
    h = xs.astype(np.longdouble) - node.astype(np.longdouble) / NODES_PER_UNIT
    assert np.all(np.abs(h) <= np.longdouble(1) / 64)
    c = table.coeffs[node]
    q = c[:, DEGREE].copy()
    for j in range(DEGREE - 1, -1, -1):
        q = q * h + c[:, j]
    with mp.workdps(40):
        for x, value, bound in zip(xs.tolist(), q, table.errors[node], strict=True):
            exact = mp.erfc(mp.mpf(x) / mp.sqrt(2)) / 2
            assert abs(_mp(value) - exact) <= _mp(bound), (x, value, bound)
            assert _mp(bound) <= exact * mp.mpf(2) ** -56  # and tight: 2⁻⁵⁶ relative at most


def test_horner_value_within_the_node_bound() -> None:
    _check(tail_table(), _points())


def test_table_without_error_bounds_is_caught() -> None:
    table = tail_table()
    twin = TailTable(table.coeffs, np.zeros_like(table.errors))
    with pytest.raises(AssertionError):
        _check(twin, _points())
