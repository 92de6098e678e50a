"""Every default quantile of tied data lies inside the declared bounds (issue 22, item 1).

The multi-scale lattice releases an atom as itself, the float fl(k·P/Q), not rounded onto the bounds'
grid; so the bounds' own floats matter. These cases put decimal bounds whose floats sit just above or
below an atom (fl(0.1), fl(0.3), fl(9.99), negative bounds, bounds one ulp apart, tiny and huge widths),
records tied on the atoms and on the upper bound itself, and check every value released by every
quantile entry point and method that uses the lattice, at small and large ε.
"""

from __future__ import annotations

import numpy as np
import pytest

import smoothdp

CASES = [
    ((0.1, 0.3), 0.1),
    ((-9.99, 9.99), 0.01),
    ((-0.3, -0.1), 0.1),
    ((0.3, 0.7), 0.05),
    ((0.0, 1e-3), 1e-4),
    ((2.5, 2.5000000000000004), 0.5),
    ((-1e6, 1e6), 0.5),
]


def _tied(lo: float, hi: float, step: float, n: int) -> np.ndarray:
    """n records on the multiples of ``step`` inside [lo, hi], the last one at hi itself."""
    k = np.arange(np.ceil(lo / step), np.floor(hi / step) + 1.0)
    if k.size == 0:
        k = np.array([lo / step])
    x = np.random.default_rng(n).choice(k, n) * step
    x[-1] = hi
    return x


@pytest.mark.parametrize(("bounds", "step"), CASES)
@pytest.mark.parametrize("epsilon", [0.1, 4.0])
def test_every_default_quantile_of_tied_data_is_inside_the_bounds(bounds, step, epsilon):
    lo, hi = bounds
    released: list[float] = []
    for n in (1, 7, 300):
        x = _tied(lo, hi, step, n)
        kw = {"epsilon": epsilon, "bounds": bounds, "rng": n}
        released.append(float(smoothdp.median(x, **kw)))
        released.append(float(smoothdp.quantile(x, 0.05, **kw)))
        released += list(np.asarray(smoothdp.quantiles(x, [0.0, 0.1, 0.5, 0.9, 1.0], **kw).value))
        for method in ("joint_exp", "recursive"):
            released += list(np.asarray(smoothdp.quantiles(x, [0.1, 0.9], method=method, **kw).value))
    out = [v for v in released if not lo <= v <= hi]
    assert not out, f"{len(out)} of {len(released)} releases outside {bounds}: {out[:5]}"
