"""Adapters: every method as ``prepare(dataset, epsilon, seed) -> release()``, one release per call.

``release()`` returns the released quantiles as a float array in the order of ``dataset.qs``. Everything a
user does once per query (building an OpenDP measurement, choosing its noise scale by binary search,
converting the data to a list) happens in ``prepare`` and is timed apart from the releases.

Neighbours: substitution (one record changed, n public) for everyone.

* smoothdp: its median / quantile / quantiles are ε-DP under substitution natively.
* diffprivlib 0.6.x: ``tools.quantile`` is the exponential mechanism of Smith (STOC 2011) over the
  intervals between order statistics with utility −|i − qn| (sensitivity 1 under substitution AND under
  add/remove) and weights exp(ε·u/2): ε-DP under substitution as called, no conversion. Several quantiles:
  ε split evenly (diffprivlib's own behaviour).
* OpenDP 0.16: substitution with n public = symmetric distance 2 on a sized vector domain; every
  measurement's noise scale is found by ``binary_search_chain`` so that ``map(2) ≤ ε``.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from benchmarks.accuracy.datasets import Dataset, candidate_grid
from numpy.typing import NDArray

__all__ = [
    "COMMON_GRID_SIZE",
    "COMPETITORS",
    "KNOWN_SMOOTHDP_METHODS",
    "Method",
    "all_methods",
    "grid_1000_methods",
    "smoothdp_methods",
]

Release = Callable[[], NDArray[np.float64]]
Prepare = Callable[[Dataset, float, int], Release]

#: smoothdp method names probed when ``median``/``quantiles`` take ``method=`` (plus any the signature lists).
KNOWN_SMOOTHDP_METHODS: tuple[str, ...] = (
    "auto",
    "smooth_sensitivity",
    "exponential",
    "joint_exp",
    "recursive",
)
#: The competitors' method names, in table order.
COMPETITORS: tuple[str, ...] = (
    "diffprivlib",
    "opendp-em",
    "opendp-tree",
    "opendp-em-1000",
    "opendp-tree-1000",
)
OPENDP_GRID_SIZE = 10_001


@dataclass(frozen=True)
class Method:
    """A method of the table: ``role`` is ``"default"`` (smoothdp's default call), ``"smoothdp"`` (a named
    smoothdp method) or ``"competitor"``."""

    name: str
    library: str
    role: str
    prepare: Prepare
    setting: str


def _as_array(value: Any) -> NDArray[np.float64]:
    return np.atleast_1d(np.asarray(value, dtype=np.float64))


def _release_value(release: Any) -> NDArray[np.float64]:
    return _as_array(getattr(release, "value", release))


# --------------------------------------------------------------------------------------------- smoothdp


def _smoothdp_prepare(method: str | None) -> Prepare:
    def prepare(ds: Dataset, epsilon: float, seed: int) -> Release:
        import smoothdp
        from smoothdp.rng import default_rng

        gen = default_rng(seed)  # seeded: a simulation, as a benchmark must be
        kw: dict[str, Any] = {} if method is None else {"method": method}
        x, bounds, qs = ds.x, ds.bounds, list(ds.qs)
        if qs == [0.5]:
            return lambda: _release_value(smoothdp.median(x, epsilon=epsilon, bounds=bounds, rng=gen, **kw))
        multi = getattr(smoothdp, "quantiles", None)
        if multi is not None:
            return lambda: _release_value(multi(x, qs, epsilon=epsilon, bounds=bounds, rng=gen, **kw))
        each = epsilon / len(qs)  # no multi-quantile call yet: the user splits ε evenly (basic composition)
        return lambda: np.array(
            [float(smoothdp.quantile(x, q, epsilon=each, bounds=bounds, rng=gen, **kw)) for q in qs]
        )

    return prepare


def _method_parameter(fn: Callable[..., Any]) -> inspect.Parameter | None:
    try:
        return inspect.signature(fn).parameters.get("method")
    except (TypeError, ValueError):
        return None


def _names_in_annotation(param: inspect.Parameter) -> list[str]:
    return re.findall(r"['\"]([A-Za-z_][\w-]*)['\"]", str(param.annotation))


def _probe(prepare: Prepare, qs: tuple[float, ...]) -> bool:
    """Whether a smoothdp method runs at all on a tiny public data set (availability, not accuracy)."""
    tiny = Dataset("probe", np.linspace(0.0, 1.0, 41), (0.0, 1.0), qs, "linear", "probe")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = prepare(tiny, 1.0, 0)()
        return out.shape == (len(qs),) and bool(np.all(np.isfinite(out)))
    except Exception:
        return False


def smoothdp_methods() -> list[Method]:
    """smoothdp's default, plus every method name its API accepts (detected at run time)."""
    import smoothdp

    setting_default = "smoothdp.median(x, epsilon=, bounds=, rng=seeded) with every other argument default"
    if getattr(smoothdp, "quantiles", None) is not None:
        setting_default += "; deciles: smoothdp.quantiles(x, qs, epsilon=, bounds=)"
    else:
        setting_default += "; deciles: smoothdp.quantile per q at ε/9 (no multi-quantile call yet)"
    methods = [Method("smoothdp", "smoothdp", "default", _smoothdp_prepare(None), setting_default)]
    names: list[str] = []
    defaults: set[str] = set()
    for fn_name in ("median", "quantiles", "quantile"):
        param = _method_parameter(getattr(smoothdp, fn_name, None) or (lambda: None))
        if param is None:
            continue
        if isinstance(param.default, str):
            defaults.add(param.default)
        names += _names_in_annotation(param)
    if not defaults and not names:
        return methods
    for name in dict.fromkeys([*names, *KNOWN_SMOOTHDP_METHODS]):
        if name in defaults:
            continue  # the same call as the default row
        prep = _smoothdp_prepare(name)
        if _probe(prep, (0.5,)) or _probe(prep, (0.25, 0.75)):
            methods.append(Method(f"smoothdp:{name}", "smoothdp", "smoothdp", prep, f"method={name!r}"))
    return methods


# ------------------------------------------------------------------------------------------ diffprivlib


def _diffprivlib_prepare(ds: Dataset, epsilon: float, seed: int) -> Release:
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.tools import median, quantile

    state = np.random.RandomState(seed)
    accountant = BudgetAccountant()  # infinite budget, private to this cell
    x, bounds, qs = ds.x, ds.bounds, list(ds.qs)
    if qs == [0.5]:
        return lambda: _as_array(
            median(x, epsilon=epsilon, bounds=bounds, random_state=state, accountant=accountant)
        )
    return lambda: _as_array(
        quantile(x, qs, epsilon=epsilon, bounds=bounds, random_state=state, accountant=accountant)
    )


# ----------------------------------------------------------------------------------------------- OpenDP


def _opendp() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _sized_space(dp: Any, n: int) -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()


#: Substitution with n public is symmetric distance 2.
SUBSTITUTION_D_IN = 2


def _opendp_em_prepare(ds: Dataset, epsilon: float, seed: int) -> Release:
    return _opendp_em_on(ds, epsilon, candidate_grid(ds, OPENDP_GRID_SIZE))


def _opendp_em_on(ds: Dataset, epsilon: float, grid: NDArray[np.float64]) -> Release:
    dp = _opendp()
    space = _sized_space(dp, ds.n)
    candidates = grid.tolist()
    each = epsilon / len(ds.qs)  # several quantiles: ε split evenly (basic composition)

    def build(alpha: float) -> Any:
        return dp.binary_search_chain(
            lambda s: dp.m.make_private_quantile(
                *space, dp.max_divergence(), candidates=candidates, alpha=alpha, scale=s
            ),
            d_in=SUBSTITUTION_D_IN,
            d_out=each,
        )

    measurements = [build(a) for a in ds.qs]
    data = ds.x.tolist()
    return lambda: np.array([float(m(data)) for m in measurements])


def tree_edges(ds: Dataset) -> NDArray[np.float64]:
    """Bin edges of the OpenDP quantile tree: data at a public precision (integers, ``step:<s>``) get one bin
    per value (edges halfway between values, the outer ones clipped to the bounds); otherwise the candidate
    grid of the exponential mechanism."""
    if ds.grid == "integer" or ds.grid.startswith("step:"):
        lo, hi = ds.bounds
        values = candidate_grid(ds, OPENDP_GRID_SIZE)
        inner = 0.5 * (values[:-1] + values[1:])
        return np.concatenate([[lo], inner[(inner > lo) & (inner < hi)], [hi]])
    return candidate_grid(ds, OPENDP_GRID_SIZE)


def _opendp_tree_prepare(ds: Dataset, epsilon: float, seed: int) -> Release:
    return _opendp_tree_on(ds, epsilon, tree_edges(ds))


def _opendp_tree_on(ds: Dataset, epsilon: float, bin_edges: NDArray[np.float64]) -> Release:
    dp = _opendp()
    space = _sized_space(dp, ds.n)
    edges = bin_edges.tolist()
    bins = len(edges) - 1
    branching = int(dp.t.choose_branching_factor(size_guess=bins))

    def chain(scale: float) -> Any:
        return (
            space
            >> dp.t.then_find_bin(edges=edges[1:-1])
            >> dp.t.then_count_by_categories(categories=list(range(bins)), null_category=False)
            >> dp.t.then_b_ary_tree(leaf_count=bins, branching_factor=branching)
            >> dp.m.then_laplace(scale)
        )

    noisy = dp.binary_search_chain(chain, d_in=SUBSTITUTION_D_IN, d_out=epsilon)
    measurement = (
        noisy
        >> dp.t.make_consistent_b_ary_tree(branching_factor=branching)
        >> dp.t.make_quantiles_from_counts(edges, alphas=list(ds.qs), interpolation="linear")
    )
    data = ds.x.tolist()
    return lambda: _as_array(measurement(data))


def competitor_methods() -> list[Method]:
    return [
        Method(
            "diffprivlib",
            "diffprivlib",
            "competitor",
            _diffprivlib_prepare,
            "diffprivlib.tools.median / quantile(x, qs, epsilon=, bounds=) (ε split evenly over qs)",
        ),
        Method(
            "opendp-em",
            "opendp",
            "competitor",
            _opendp_em_prepare,
            "make_private_quantile (quantile score + noisy max, max_divergence) over a public candidate "
            f"grid ({OPENDP_GRID_SIZE} points, or every integer for integer data); ε split evenly over qs",
        ),
        Method(
            "opendp-tree",
            "opendp",
            "competitor",
            _opendp_tree_prepare,
            "find_bin → count_by_categories → b_ary_tree (choose_branching_factor) → laplace → "
            "consistent_b_ary_tree → quantiles_from_counts(linear); all qs from one tree under ε",
        ),
    ]


#: The grid most OpenDP users pass: 1,000 evenly spaced points over the bounds (issue 22).
COMMON_GRID_SIZE = 1000


def _common_grid(ds: Dataset) -> NDArray[np.float64]:
    return np.linspace(ds.bounds[0], ds.bounds[1], COMMON_GRID_SIZE)


def grid_1000_methods() -> list[Method]:
    """OpenDP called with the candidate grid its users commonly choose: 1,000 evenly spaced points over the
    bounds (the exponential mechanism's candidates, and the tree's bin edges)."""
    return [
        Method(
            "opendp-em-1000",
            "opendp",
            "competitor",
            lambda ds, eps, seed: _opendp_em_on(ds, eps, _common_grid(ds)),
            f"as opendp-em, candidates np.linspace(lower, upper, {COMMON_GRID_SIZE})",
        ),
        Method(
            "opendp-tree-1000",
            "opendp",
            "competitor",
            lambda ds, eps, seed: _opendp_tree_on(ds, eps, _common_grid(ds)),
            f"as opendp-tree, bin edges np.linspace(lower, upper, {COMMON_GRID_SIZE})",
        ),
    ]


def all_methods() -> list[Method]:
    return [*smoothdp_methods(), *competitor_methods(), *grid_1000_methods()]
