"""Registry cases of the mechanisms without bounds (AboveThreshold on a ladder, the private range, the
scale-free exponential mechanism) and of the reach mechanisms (inverse sensitivity, piecewise Laplace).

Every privacy loss here comes from an exact output law written out from the definitions (docs/theory/
unbounded.md, docs/theory/instance-optimal.md), not from the code's samplers:

* AboveThreshold: P(k) = Σ_ρ P(ρ) Π_{j<k} P(ν < θ + ρ − h_j) P(ν ≥ θ + ρ − h_k), discrete Laplace in closed
  form, on a ladder of exact powers of two (ratio 2^16, floor 2^-16), over both walk directions;
* the exponential mechanisms: piecewise densities with respect to their base measures, compared at every
  piece of both data sets (and at the atom at 0).
"""

from __future__ import annotations

import copy
import itertools
import math
from fractions import Fraction
from typing import Any

import mpmath as mp
import numpy as np

CAP_EXP = 1021  # the ladder's cap 2^1021 and the clip of every record
RATIO_EXP, FLOOR_EXP = 16, -16  # the test ladder: M_j = 2^(16(j − 1) − 16), exact, 67 steps
RATIO, FLOOR = 2.0**RATIO_EXP, 2.0**FLOOR_EXP


# -- discrete Laplace in closed form ------------------------------------------------------------------------
def _log_cdf(m: np.ndarray, scale: float) -> np.ndarray:
    """ln P(K ≤ m) for K discrete Laplace with P(K = k) ∝ e^{−|k|/scale} (m integer-valued)."""
    p = math.exp(-1.0 / scale)
    m = np.asarray(m, dtype=np.float64)
    neg = np.abs(np.minimum(m, 0.0)) * math.log(p) - math.log1p(p)
    with np.errstate(over="ignore", divide="ignore"):
        tail = np.exp(np.maximum(m + 1.0, 0.0) * math.log(p)) / (1.0 + p)
        pos = np.log1p(-tail)
    return np.where(m < 0, neg, pos)


def _log_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    p = math.exp(-1.0 / scale)
    return math.log((1.0 - p) / (1.0 + p)) + np.abs(k) * math.log(p)


def _ladder(origin: float, ratio_exp: int = RATIO_EXP) -> np.ndarray:
    """o + M_j: M_0 = 0, M_j = floor·ratio^(j−1) (exact powers of two, ratio = 2^ratio_exp) up to the first
    one at or above the cap 2^1021, which is the cap itself."""
    mags = [0.0]
    j = 1
    while True:
        e = FLOOR_EXP + ratio_exp * (j - 1)
        if e >= CAP_EXP:
            mags.append(math.ldexp(1.0, CAP_EXP))
            break
        mags.append(math.ldexp(1.0, e))
        j += 1
    return np.minimum(origin + np.array(mags), math.ldexp(1.0, CAP_EXP))


def _ratio_exp(mech: Any) -> int:
    """The exponent of a walk's ladder ratio (the test ladders are exact powers of two)."""
    exp = round(math.log2(mech.ladder.ratio))
    assert mech.ladder.ratio == 2.0**exp and mech.ladder.floor == FLOOR
    return exp


def _walk_log_law(
    z: np.ndarray,
    origin: float,
    w: int,
    c: int,
    theta: int,
    s_thr: float,
    s_q: float,
    ratio_exp: int = RATIO_EXP,
) -> np.ndarray:
    """ln P(stop at step k), k = 0..K, then ln P(no stop), for the walk on sorted z."""
    counts = np.searchsorted(np.sort(z), _ladder(origin, ratio_exp), side="right").astype(np.float64)
    h = w * counts - c
    big_r = math.ceil(70 * s_thr) + 5
    rho = np.arange(-big_r, big_r + 1, dtype=np.float64)
    lp_rho = _log_pmf(rho, s_thr)
    levels, which = np.unique(h, return_inverse=True)  # h takes at most n + 1 values: evaluate those only
    m = theta + rho[:, None] - levels[None, :]  # fire at j ⟺ ν_j ≥ m_j
    log_below = _log_cdf(m - 1.0, s_q)[:, which]  # ln P(ν < m)
    log_fire = _log_cdf(-m, s_q)[:, which]  # ln P(ν ≥ m) = ln P(ν ≤ −m)
    before = np.concatenate([np.zeros((rho.size, 1)), np.cumsum(log_below, axis=1)], axis=1)
    per_k = before[:, :-1] + log_fire
    never = before[:, -1:]
    table = np.concatenate([per_k, never], axis=1) + lp_rho[:, None]
    top = table.max(axis=0)
    return top + np.log(np.sum(np.exp(table - top), axis=0))


def _rank(q: float, n: int) -> int:
    return max(1, math.ceil(Fraction(repr(q)) * n))


def _sign_log_law(mech: Any, x: Any) -> tuple[float, float]:
    """(ln P(up), ln P(down)) of the two-sided walk's sign test on x."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    s_sign = mech.scales()[0]
    if mech.relation == "substitution":
        w, c, theta = 1, 0, _rank(mech.q, n)
    else:
        frac = Fraction(repr(mech.q)).limit_denominator(10**6)
        w, c, theta = frac.denominator, frac.numerator * n, 0
    at_zero = float(np.sum(x <= 0.0))
    # direction "down" ⟺ w·C(0) − c + Z ≥ θ ⟺ Z ≥ θ − w·C(0) + c
    lp_down = float(_log_cdf(np.array([-(theta - w * at_zero + c)]), s_sign)[0])
    return math.log1p(-math.exp(lp_down)), lp_down


def uqe_log_law(mech: Any, x: Any) -> np.ndarray:
    """ln P of every output (direction, k) of :class:`UnboundedQuantile` on x (prepared by its policy)."""
    x = np.sort(np.clip(np.asarray(x, dtype=np.float64), -math.ldexp(1.0, CAP_EXP), math.ldexp(1.0, CAP_EXP)))
    if mech.lower is not None:
        x = np.maximum(x, mech.lower)
    if mech.upper is not None:
        x = np.minimum(x, mech.upper)
    n = x.size
    _, s_thr, s_q = mech.scales()
    frac = Fraction(repr(mech.q)).limit_denominator(10**6)
    a, b = frac.numerator, frac.denominator
    if mech.relation == "substitution":
        up = (1, 0, _rank(mech.q, n))
        down = (1, 0, n + 1 - _rank(mech.q, n))
    else:
        up, down = (b, a * n, 0), (b, (b - a) * n, 1)
    rexp = _ratio_exp(mech)
    if mech.lower is not None:
        return _walk_log_law(x, mech.lower, *up, s_thr, s_q, rexp)
    if mech.upper is not None:
        return _walk_log_law(-x, -mech.upper, *down, s_thr, s_q, rexp)
    lp_up, lp_down = _sign_log_law(mech, x)
    return np.concatenate(
        [
            lp_up + _walk_log_law(x, 0.0, *up, s_thr, s_q, rexp),
            lp_down + _walk_log_law(-x, 0.0, *down, s_thr, s_q, rexp),
        ]
    )


def uqe_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    return float(np.max(np.abs(uqe_log_law(mech, x) - uqe_log_law(mech, x2))))


def _top_values(n_out: int) -> list[float]:
    """The upper end released for each output (direction, k) of the two-sided walk read "above": up k → M_k
    (no stop: the cap); down k → −M_{k−1} one step back (k = 0: +M_1; no stop: −cap)."""
    mags = _ladder(0.0)
    size = mags.size
    up = [float(mags[k]) if k < size else float(mags[-1]) for k in range(size + 1)]
    down = [float(mags[1]) if k == 0 else -float(mags[k - 1]) for k in range(size)] + [-float(mags[-1])]
    assert len(up) + len(down) == n_out
    return up + down


def range_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """Adaptive composition: the upper end u (two-sided walk), then the walk down from u. The joint log ratio
    is Δ_top(u) + Δ_bottom(ℓ | u); its extremes over ℓ are taken for every u up to 2^40 in magnitude (from
    there on every data point lies in the walk's first step: the same law shifted)."""
    d_top = uqe_log_law(mech.top, x) - uqe_log_law(mech.top, x2)
    worst = 0.0
    for value, delta in zip(_top_values(d_top.size), d_top, strict=True):
        if abs(value) > 2.0**40:
            continue
        low = mech.bottom(value)
        d_low = uqe_log_law(low, x) - uqe_log_law(low, x2)
        worst = max(worst, abs(delta + d_low.max()), abs(delta + d_low.min()))
    return worst


def mirrored_range_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """``mirror=True``. Adaptive composition: the sign test of the median, then in its branch (on x, or on
    −x mirrored back) the far end u (a walk up from 0), then the walk down from u. The joint log ratio is
    Δ_sign + Δ_top(u) + Δ_bottom(ℓ | u); its extremes over ℓ are taken for every u up to 2^40 in magnitude
    (from there on every data point lies in the walk's first step: the same law shifted). Outputs of the
    two branches that coincide in value have a ratio between the branches' ratios."""
    signs = [a - b for a, b in zip(_sign_log_law(mech.sign, x), _sign_log_law(mech.sign, x2), strict=True)]
    worst = 0.0
    for d_sign, direction in zip(signs, ("up", "down"), strict=True):
        z, z2 = (x, x2) if direction == "up" else (-np.asarray(x), -np.asarray(x2))
        first = mech.top_walk(direction)
        d_top = uqe_log_law(first, z) - uqe_log_law(first, z2)
        mags = _ladder(0.0, _ratio_exp(first))  # the first walk's own ladder (``top_ratio``)
        tops = [float(mags[k]) if k < mags.size else float(mags[-1]) for k in range(mags.size + 1)]
        for value, delta in zip(tops, d_top, strict=True):
            if abs(value) > 2.0**40:
                continue
            low = mech.bottom(value, direction)
            d_low = uqe_log_law(low, z) - uqe_log_law(low, z2)
            worst = max(worst, abs(d_sign + delta + d_low.max()), abs(d_sign + delta + d_low.min()))
    return worst


# -- the scale-free exponential mechanism -------------------------------------------------------------------
def _mu(u: float, v: float, s: float) -> mp.mpf:
    """μ([u, v]) for the density 1/s on [−s, s] and 1/|y| beyond (mpmath, from the definition)."""

    def big_g(y: float) -> mp.mpf:
        yy = mp.mpf(y)
        if abs(yy) <= s:
            return yy / s
        return mp.sign(yy) * (1 + mp.log(abs(yy) / s))

    with mp.workdps(60):
        return big_g(v) - big_g(u)


# The documented atoms: multiples of 1/32 and decimals with ≤ 8 places (levels σ = P/Q),
# with points fl(k·P/Q), mass 2^-14·fl(σ) each, at the points with 0 < |p| ≤ 2^20 (0 has its own atom).
LATTICE_LEVELS = (
    *((1, 2**k) for k in range(6)),
    *((1, 10**k) for k in range(1, 9)),
)
LATTICE_REACH = 2**20


def _level_mass(p: int, q: int) -> Fraction:
    return Fraction(2.0**-14 * (p / q))


def level_points_between(p: int, q: int, u: float, v: float) -> int:
    """#{k : u < fl(k·p/q) < v, 1 ≤ |k| ≤ K}, K = ⌊2^20·q/p⌋: exact arithmetic for the k far from both ends
    (k·σ at least 2σ inside), float points fl(k·p/q) (Python's correctly rounded int division) near them."""
    big_k = (LATTICE_REACH * q) // p
    lo = max(math.floor(Fraction(u) * q / p) - 2, -big_k)
    hi = min(math.ceil(Fraction(v) * q / p) + 2, big_k)
    if lo > hi:
        return 0

    def inside(k: int) -> bool:
        return k != 0 and u < (k * p) / q < v

    if hi - lo < 20:
        return sum(inside(k) for k in range(lo, hi + 1))
    ends = [*range(lo, lo + 5), *range(hi - 4, hi + 1)]
    middle = (hi - 5) - (lo + 5) + 1 - (1 if lo + 5 <= 0 <= hi - 5 else 0)
    return sum(inside(k) for k in ends) + middle


def lattice_mass_between(u: float, v: float) -> Fraction:
    """The lattice atoms' mass in the open interval (u, v), exactly."""
    return sum((_level_mass(p, q) * level_points_between(p, q, u, v) for p, q in LATTICE_LEVELS), Fraction(0))


def lattice_point_mass(v: float) -> Fraction:
    """The lattice atoms' mass at v (0 for v = 0, off every level or beyond 2^20)."""
    if v == 0.0 or abs(v) > LATTICE_REACH:
        return Fraction(0)
    total = Fraction(0)
    for p, q in LATTICE_LEVELS:
        k0 = round(Fraction(v) * q / p)
        if any((k * p) / q == v for k in (k0 - 1, k0, k0 + 1)):
            total += _level_mass(p, q)
    return total


def scale_free_loss(mech: Any, x: Any, x2: Any, d: float) -> float:
    """Density with respect to μ = g + δ_0 + the lattice atoms (:func:`lattice_mass_between`), at every piece
    and every atom at a data value (atoms inside a gap share the gap's utility, so the pieces' midpoints
    cover them)."""
    cap = math.ldexp(1.0, CAP_EXP)

    def log_density(data: np.ndarray, ys: list[float]) -> list[mp.mpf]:
        data = np.sort(np.asarray(data, dtype=np.float64))
        n = data.size
        coef = mp.mpf(0.5 * mech.epsilon_used(n))
        t = (_rank(mech.q, n) - 0.5) if mech.relation == "substitution" else mech.q * n
        edges = [-cap, *data.tolist(), cap]
        z = mp.mpf(0)
        for j in range(n + 1):
            if edges[j + 1] > edges[j]:
                mass = _mu(edges[j], edges[j + 1], mech.floor)
                mass += mp.mpf(lattice_mass_between(edges[j], edges[j + 1]))
                z += mass * mp.exp(-coef * abs(j - t))
        for v in sorted(set(data.tolist()) | {0.0}):
            point = mp.mpf(1) if v == 0.0 else mp.mpf(lattice_point_mass(v))
            if point > 0:
                below, at_most = float(np.sum(data < v)), float(np.sum(data <= v))
                z += point * mp.exp(-coef * max(0.0, below - t, t - at_most))
        out = []
        for y in ys:
            lo, hi = float(np.sum(data < y)), float(np.sum(data <= y))
            util = max(0.0, lo - t, t - hi) if y in atoms else abs(lo - t)
            out.append(-coef * util - mp.log(z))
        return out

    values = {*map(float, x), *map(float, x2), 0.0}
    atoms = {v for v in values if v == 0.0 or lattice_point_mass(v) > 0}
    cuts = sorted({-cap, cap, *values, -mech.floor, mech.floor})
    ys = [0.5 * (a + b) for a, b in itertools.pairwise(cuts) if b > a] + sorted(atoms)
    la, lb = log_density(x, ys), log_density(x2, ys)
    return float(max(abs(a - b) for a, b in zip(la, lb, strict=True)))


# -- inverse sensitivity and piecewise Laplace --------------------------------------------------------------
def _reach(data: np.ndarray, q: float, a: float, b: float, rho: float) -> tuple[list[float], list[float]]:
    """(L^ρ_k), (U^ρ_k) of the q-quantile, from the definition: x_(r∓k), the bounds past the ends."""
    xs = sorted(np.clip(np.asarray(data, dtype=np.float64), a, b).tolist())
    n = len(xs)
    r = _rank(q, n)
    big_k = max(r - 1, n - r) + 1
    up = [xs[r - 1 + k] if r - 1 + k < n else b for k in range(big_k + 1)]
    down = [xs[r - 1 - k] if r - 1 - k >= 0 else a for k in range(big_k + 1)]
    return [max(v - rho, a) for v in down], [min(v + rho, b) for v in up]


def _length(y: float, down: list[float], up: list[float], continuous: bool) -> float:
    """The path length of y (integer) or its linear interpolation between reach points (continuous)."""
    if down[0] <= y <= up[0]:
        return 0.0
    pts = up if y > up[0] else [-v for v in down]
    yy = y if y > up[0] else -y
    k = next(i for i in range(1, len(pts)) if yy <= pts[i])
    if not continuous:
        return float(k)
    return (k - 1) + (yy - pts[k - 1]) / (pts[k] - pts[k - 1])


def reach_loss(mech: Any, x: Any, x2: Any, d: float, *, continuous: bool) -> float:
    a, b, rho = mech.lower, mech.upper, mech.rho

    def law(data: np.ndarray) -> tuple[Any, float, list[float], list[float]]:
        n = len(data)
        coef = 0.5 * mech.epsilon_used(n)
        down, up = _reach(data, mech.q, a, b, rho)
        z = up[0] - down[0]
        for side in (up, [-v for v in down]):
            for k in range(1, len(side)):
                width = side[k] - side[k - 1]
                if width > 0:
                    if continuous:
                        z += width * math.exp(-coef * (k - 1)) * (-math.expm1(-coef)) / coef
                    else:
                        z += width * math.exp(-coef * k)
        return coef, math.log(z), down, up

    la, lb = law(x), law(x2)
    pts = sorted({a, b, *la[2], *la[3], *lb[2], *lb[3]})
    eps_y = 1e-9 * (b - a)
    ys = [p + s for p in pts for s in (-eps_y, eps_y) if a < p + s < b]
    ys += [0.5 * (p + q) for p, q in itertools.pairwise(pts)]
    worst = 0.0
    for y in ys:
        va = -la[0] * _length(y, la[2], la[3], continuous) - la[1]
        vb = -lb[0] * _length(y, lb[2], lb[3], continuous) - lb[1]
        worst = max(worst, abs(va - vb))
    return worst


def _broken_range(mech: Any) -> Any:
    """Both walks with their query noise cut by 3."""
    twin = copy.copy(mech)
    twin.top = copy.copy(mech.top)
    twin.top.epsilon_queries = 3.0 * mech.top.epsilon_queries

    def bottom(top: float) -> Any:
        walk = mech.bottom(top)
        walk.epsilon_queries = 3.0 * walk.epsilon_queries
        return walk

    twin.bottom = bottom
    return twin


def _broken_mirrored_range(mech: Any) -> Any:
    """``mirror=True``: both walks with their query noise cut by 3."""
    twin = copy.copy(mech)

    def top_walk(direction: str) -> Any:
        walk = mech.top_walk(direction)
        walk.epsilon_queries = 3.0 * walk.epsilon_queries
        return walk

    def bottom(top: float, direction: str = "up") -> Any:
        walk = mech.bottom(top, direction)
        walk.epsilon_queries = 3.0 * walk.epsilon_queries
        return walk

    twin.top_walk, twin.bottom = top_walk, bottom
    return twin


def new_mechanism_cases() -> list[Any]:
    """The cases (built on call: mechanism_cases imports this module at its end)."""
    from mechanism_cases import Case, _add_remove_pairs, _attr_times, _substitution_pairs

    from smoothdp.central.frameworks.inverse_sensitivity import InverseSensitivity
    from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace
    from smoothdp.central.unbounded.ladder import UnboundedQuantile, UnboundedRange
    from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile

    bad_eps = [({"epsilon": 0.0}, ValueError, "epsilon"), ({"epsilon": -1.0}, ValueError, "epsilon")]
    ladder = {"ratio": RATIO, "floor": FLOOR}
    grid_two_sided = (-3.0, -1e-6, 0.0, 0.3, 5.0)  # on both sides of the ladder points 0, 2^-16, 1

    def mirrored_range_case(label: str, extra: dict[str, Any], bad: tuple[Any, ...]) -> Any:
        """:class:`UnboundedRange` with ``mirror=True`` (and ``extra`` parameters) on a column below 0."""
        return Case(
            mechanism=UnboundedRange,
            label=label,
            build=lambda epsilon, **kw: UnboundedRange(
                **{"epsilon": epsilon, "quantiles": (0.25, 0.75), "mirror": True, **ladder, **extra, **kw}
            ),
            data=np.array([-7.5, -2.0, -0.3, 1.0]),
            neighbours=lambda: _substitution_pairs(2, grid_two_sided),
            privacy_loss=mirrored_range_loss,
            broken=_broken_mirrored_range,
            bad_parameters=[*bad_eps, bad],
            epsilon=4.0,
        )

    grid_reach = (0.0, 0.1, 0.5, 0.55, 1.0)

    def uqe(q: float, **extra: Any) -> Any:
        return lambda epsilon, **kw: UnboundedQuantile(
            **{"q": q, "epsilon": epsilon, **ladder, **extra, **kw}
        )

    return [
        Case(
            mechanism=UnboundedQuantile,
            label="median, two-sided, substitution",
            build=uqe(0.5),
            data=np.array([-1.0, 0.3, 2.0, 7.5]),
            neighbours=lambda: _substitution_pairs(3, grid_two_sided),
            privacy_loss=uqe_loss,
            broken=_attr_times("epsilon_queries", 3.0),
            bad_parameters=[
                *bad_eps,
                ({"ratio": 1.0}, ValueError, "ratio"),
                ({"floor": 0.0}, ValueError, "floor"),
                ({"sign_share": 1.0}, ValueError, "sign_share"),
                ({"neighbours": "local"}, ValueError, "neighbours"),
                ({"side": "left"}, ValueError, "side"),
                ({"chunk": 0}, ValueError, "chunk"),
            ],
            epsilon=2.0,
        ),
        Case(
            mechanism=UnboundedQuantile,
            label="q=0.3, two-sided, add/remove",
            build=uqe(0.3, neighbours="add_remove"),
            data=np.array([-1.0, 0.3, 2.0, 7.5]),
            neighbours=lambda: _add_remove_pairs(2, grid_two_sided),
            privacy_loss=uqe_loss,
            broken=_attr_times("epsilon_threshold", 3.0),
            bad_parameters=[*bad_eps, ({"q": 1.5}, ValueError, "q")],
            epsilon=4.0,
        ),
        Case(
            mechanism=UnboundedQuantile,
            label="q=0.9, lower bound 0",
            build=uqe(0.9, lower=0.0),
            data=np.array([0.3, 2.0, 7.5]),
            neighbours=lambda: _substitution_pairs(3, (0.0, 0.3, 1.0, 5.0)),
            privacy_loss=uqe_loss,
            broken=_attr_times("epsilon_queries", 3.0),
            bad_parameters=[*bad_eps, ({"upper": 1.0}, ValueError, "lower, upper")],
            epsilon=2.0,
        ),
        Case(
            mechanism=UnboundedRange,
            build=lambda epsilon, **kw: UnboundedRange(
                **{"epsilon": epsilon, "quantiles": (0.25, 0.75), **ladder, **kw}
            ),
            data=np.array([-1.0, 0.3, 2.0, 7.5]),
            neighbours=lambda: _substitution_pairs(2, grid_two_sided),
            privacy_loss=range_loss,
            broken=_broken_range,
            bad_parameters=[
                *bad_eps,
                ({"quantiles": (0.9, 0.1)}, ValueError, "quantiles"),
                ({"quantiles": 0.5}, TypeError, "quantiles"),
            ],
            epsilon=4.0,
        ),
        mirrored_range_case("mirror", {}, ({"mirror": 1}, TypeError, "mirror")),
        # the first walk on a ladder of its own, as the moments without bounds at large ε·n
        mirrored_range_case(
            "mirror, a finer first ladder",
            {"top_ratio": 2.0 ** (RATIO_EXP // 2)},
            ({"top_ratio": 1.0}, ValueError, "ratio"),
        ),
        Case(
            mechanism=ScaleFreeQuantile,
            label="median, substitution",
            build=lambda epsilon, **kw: ScaleFreeQuantile(0.5, **{"epsilon": epsilon, **kw}),
            data=np.array([-1.0, 0.0, 2.0, 7.5]),
            neighbours=lambda: _substitution_pairs(3, (-2.0, 0.0, 1e-10, 1.0, 1e6)),
            privacy_loss=scale_free_loss,
            broken=_attr_times("epsilon", 3.0),  # the loss reaches ε/2 on these pairs: × 3 exceeds ε
            bad_parameters=[*bad_eps, ({"floor": 2.0}, ValueError, "floor")],
        ),
        Case(
            mechanism=ScaleFreeQuantile,
            label="q=0.25, add/remove",
            build=lambda epsilon, **kw: ScaleFreeQuantile(
                0.25, **{"epsilon": epsilon, "neighbours": "add_remove", **kw}
            ),
            data=np.array([-1.0, 0.0, 2.0, 7.5]),
            neighbours=lambda: _add_remove_pairs(2, (-2.0, 0.0, 1.0, 1e6)),
            privacy_loss=scale_free_loss,
            broken=_attr_times("epsilon", 3.0),
            bad_parameters=[*bad_eps, ({"neighbours": "metric"}, ValueError, "neighbours")],
        ),
        Case(
            mechanism=InverseSensitivity,
            label="median, smoothed ρ = 0.05",
            build=lambda epsilon, **kw: InverseSensitivity(
                0.5, **{"epsilon": epsilon, "bounds": (0.0, 1.0), "rho": 0.05, **kw}
            ),
            data=np.array([0.2, 0.4, 0.45, 0.5, 0.9]),
            neighbours=lambda: _substitution_pairs(3, grid_reach),
            privacy_loss=lambda m, x, x2, d: reach_loss(m, x, x2, d, continuous=False),
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[
                *bad_eps,
                ({"bounds": (1.0, 0.0)}, ValueError, "bounds"),
                ({"rho": -1.0}, ValueError, "rho"),
                ({"numerics": "fast"}, ValueError, "numerics"),
            ],
        ),
        Case(
            mechanism=InverseSensitivity,
            label="q=0.3, default ρ",
            build=lambda epsilon, **kw: InverseSensitivity(
                **{"q": 0.3, "epsilon": epsilon, "bounds": (0.0, 1.0), **kw}
            ),
            data=np.array([0.2, 0.4, 0.45, 0.5, 0.9]),
            neighbours=lambda: _substitution_pairs(3, grid_reach),
            privacy_loss=lambda m, x, x2, d: reach_loss(m, x, x2, d, continuous=False),
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"q": 2.0}, ValueError, "q")],
        ),
        Case(
            mechanism=PiecewiseLaplace,
            label="median, smoothed ρ = 0.05",
            build=lambda epsilon, **kw: PiecewiseLaplace(
                0.5, **{"epsilon": epsilon, "bounds": (0.0, 1.0), "rho": 0.05, **kw}
            ),
            data=np.array([0.2, 0.4, 0.45, 0.5, 0.9]),
            neighbours=lambda: _substitution_pairs(3, grid_reach),
            privacy_loss=lambda m, x, x2, d: reach_loss(m, x, x2, d, continuous=True),
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"bounds": (0.0, math.inf)}, ValueError, "bounds")],
        ),
        Case(
            mechanism=PiecewiseLaplace,
            label="q=0.75, ρ = 0",
            build=lambda epsilon, **kw: PiecewiseLaplace(
                0.75, **{"epsilon": epsilon, "bounds": (0.0, 1.0), "rho": 0.0, **kw}
            ),
            data=np.array([0.2, 0.4, 0.45, 0.5, 0.9]),
            neighbours=lambda: _substitution_pairs(4, grid_reach),
            privacy_loss=lambda m, x, x2, d: reach_loss(m, x, x2, d, continuous=True),
            broken=_attr_times("epsilon", 2.0),
            bad_parameters=[*bad_eps, ({"clip": "yes"}, TypeError, "clip")],
        ),
    ]
