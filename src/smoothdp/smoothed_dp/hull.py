"""Distribution reduction (LWX Proposition 7): only the vertices of CH(Π) matter.

LWX = Liu, Wang & Xia, *Smoothed Differential Privacy*, TMLR 2023; proof:
``docs/theory/smoothed-dp.md#convex-hull-reduction``.

E_{x∼π⃗}[δ(x)] is multilinear in (π_1, …, π_n) (the records are independent), so its maximum over a product of
polytopes is reached at vertices: (ε, δ, Π)-smoothed DP holds iff it holds for Π* = vertices of CH(Π).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from smoothdp.keywords import check_keywords_of
from smoothdp.validation import check_data

__all__ = ["check_distributions", "hull_vertices"]

_SUM_TOL = 1e-9


def check_distributions(distributions: ArrayLike, name: str = "distributions") -> NDArray[np.float64]:
    """Π as an array (ℓ, m): ℓ ≥ 1 distributions over m ≥ 2 categories, each non-negative and summing to 1.

    A 1-D input is read as a single distribution. Rows are renormalised after the check (|Σ − 1| ≤ 1e-9).
    """
    arr = check_data(distributions, name, ndim=(1, 2))
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (count, m) with m ≥ 2 categories; got shape {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative probabilities; got a minimum of {arr.min():g}")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _SUM_TOL)
    if bad.size:
        raise ValueError(
            f"{name}: every distribution must sum to 1 (within {_SUM_TOL:g}); "
            f"row {bad[0]} sums to {sums[bad[0]]!r}"
        )
    return arr / sums[:, None]


def hull_vertices(distributions: ArrayLike) -> NDArray[np.float64]:
    """The vertices Π* of the convex hull of Π (rows of an (ℓ, m) array), duplicates removed.

    m = 2: the distributions with the smallest and largest probability of category 0. m ≥ 3: a row is dropped
    when a linear program writes it as a convex combination of the other rows (HiGHS, tolerance 1e-9); works
    for degenerate (coplanar, collinear) sets where Qhull would fail.
    """
    pi = check_distributions(distributions)
    pi = np.unique(pi, axis=0)
    if pi.shape[0] <= 2:
        return pi
    if pi.shape[1] == 2:
        return pi[[np.argmin(pi[:, 0]), np.argmax(pi[:, 0])]]
    from scipy.optimize import linprog  # imported on first use: slow to import

    keep = np.ones(pi.shape[0], dtype=bool)
    for i in range(pi.shape[0]):
        others = pi[keep & (np.arange(pi.shape[0]) != i)]
        # feasibility: λ ≥ 0, Σλ = 1, λ·others = π_i
        a_eq = np.vstack([others.T, np.ones(others.shape[0])])
        b_eq = np.append(pi[i], 1.0)
        res = linprog(np.zeros(others.shape[0]), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
        if res.status == 0:
            keep[i] = False
    return pi[keep]


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
