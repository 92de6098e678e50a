"""Quantiles and ranges without bounds: AboveThreshold over a geometric ladder of thresholds.

**The walk** (Durfee, NeurIPS 2023; docs/theory/unbounded.md#unbounded-quantile-estimation). A public ladder
of magnitudes M_0 = 0, M_j = s·β^(j−1) (j = 1..K; s = ``floor``, β = ``ratio``; M_K = 2^1021, the cap) is
walked upward from an origin o. At step j the query is the count C_j = #{x_i ≤ o + M_j}, as an integer
h_j = w·C_j − c, and the walk stops at the first j with h_j + ν_j ≥ θ + ρ, where ρ (once) and ν_j (per step)
are exact discrete Laplace draws. The stopping step k is the output: the ladder point o + M_k is the
first one at or above the q-quantile x_(r), r = max(1, ⌈qn⌉), up to the noise. This is AboveThreshold
(Dwork & Roth 2014; Lyu, Su & Li 2017) with integer queries and thresholds, so every comparison is exact.

* ``neighbours="substitution"`` (n public): h_j = C_j, θ = r. One substitution moves every C_j by 0 or by
  the same ±1 (the queries are *monotone*), so ρ ~ DLap(1/ε₁), ν ~ DLap(1/ε₂) give (ε₁ + ε₂)-DP.
* ``neighbours="add_remove"`` (n private): q = a/b in lowest terms (denominator at most 10⁶), h_j =
  b·C_j − a·n, θ = 0 (h_j ≥ 0 ⟺ C_j ≥ qn). One added record moves h_j by b − a or by −a, so
  ρ ~ DLap(max(a, b − a)/ε₁), ν ~ DLap(b/ε₂) give (ε₁ + ε₂)-DP.

**Two-sided** (no bound known, the default; docs/theory/unbounded.md#the-two-sided-walk): a noisy sign
test with ε_s = ``sign_share``·ε first asks whether x_(r) ≤ 0; the walk then goes up from 0 on x, or up from
0 on −x (down on x, the rank mirrored). A wrong turn happens only when x_(r) is within a few noisy ranks of
0, and then the walk stops at its first steps, next to 0. ``lower=`` (``upper=``) declares a public bound
on one side: one walk from it, no sign test.

**Private range** (:class:`UnboundedRange`, :func:`~smoothdp.central.no_bounds.private_range`):
two such walks with ε/2 each on an octave ladder by default (β = 2: few steps, so few chances of an early
stop): the upper end u at or above x_(r_hi) by the two-sided walk, then the lower end by a walk down from u,
at or below x_(r_lo) (``mirror=True``: a sign test of the median first, and a column below 0 walked on −x,
mirrored back): bounds for a bounded mechanism, or the clipping range of a mean.

**Work** (what the run time can show): the data are sorted once (O(n log n)); the ladder is walked in public
chunks of ``chunk`` steps, each one vectorised count and ``chunk`` noise draws, so the work is a function
of n and of the *output* (the chunk holding the stopping step) only: at most ``chunk`` − 1 steps are
evaluated past the stopping one, and the walk is capped at the K public steps of the ladder (a walk that
never stops releases the cap, a post-processing of "no step fired").

Data policy: NaN is imputed with 0 and every record clipped into [−2^1021, 2^1021] (±inf included); with a
declared bound, into its side as well. Guarantee: pure ε-DP under the relation chosen (basic composition
of the sign test and AboveThreshold).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from smoothdp.exact import check_numerics
from smoothdp.keywords import check_keywords_of
from smoothdp.mechanism import Mechanism
from smoothdp.noise import DiscreteLaplace
from smoothdp.privacy import PureDP, check_neighbours
from smoothdp.release import NotPrivate, Release
from smoothdp.validation import check_bool, check_epsilon, check_in_range, check_int

__all__ = [
    "CAP",
    "DEFAULT_FLOOR",
    "DEFAULT_RATIO",
    "DEFAULT_SIGN_SHARE",
    "Ladder",
    "UnboundedQuantile",
    "UnboundedRange",
    "above_threshold_walk",
    "prepare_unbounded",
    "rational_q",
]

#: Default ratio β of the quantile's ladder: consecutive thresholds 1% apart.
DEFAULT_RATIO = 1.01
#: Default ratio of the range's ladder: octaves.
RANGE_RATIO = 2.0
#: Default smallest non-zero magnitude s of the ladder (2^-30 ≈ 9.3e-10).
DEFAULT_FLOOR = 2.0**-30
#: Default share of ε spent on the sign test of a two-sided walk.
DEFAULT_SIGN_SHARE = 0.1
#: Default number of ladder steps evaluated at once (the only work past the stopping step).
DEFAULT_CHUNK = 4096
#: The ladder's last magnitude, and the clip of every record: 2^1021 (so that any two ladder points are
#: a finite distance apart, and bounds made of them have a finite width).
CAP = 2.0**1021
#: Largest denominator of q under add/remove (q is rounded to the nearest fraction a/b with b ≤ this).
MAX_DENOMINATOR = 10**6
_AT = "Dwork & Roth, The algorithmic foundations of differential privacy, 2014 (AboveThreshold)"
_LSL = "Lyu, Su & Li, Understanding the sparse vector technique for differential privacy, VLDB 2017"
_DURFEE = "Durfee, Unbounded differentially private quantile and maximum estimation, NeurIPS 2023"
PROOF = "docs/theory/unbounded.md#unbounded-quantile-estimation"
PROOF_RANGE = "docs/theory/unbounded.md#a-private-range"
_EXACT_LABEL = "exact: integer AboveThreshold with exact discrete Laplace noise"
_FLOAT_LABEL = "floating-point geometric draws (numerics='float'): NOT hardened"


# ------------------------------------------------------------------------------------------------------------
# The public ladder and the data policy
# ------------------------------------------------------------------------------------------------------------
class Ladder:
    """The public magnitudes M_0 = 0, M_j = s·β^(j−1) (j = 1..K − 1), and M_K = 2^1021 (the cap).

    Parameters
    ----------
    ratio
        β in [1.0001, 2^64]: consecutive non-zero magnitudes differ by the factor β (the output's resolution).
    floor
        s in [2^-1000, 1]: the smallest non-zero magnitude (values within s of the origin are released as
        the origin or s).
    """

    def __init__(self, *, ratio: float = DEFAULT_RATIO, floor: float = DEFAULT_FLOOR) -> None:
        self.ratio = check_in_range("ratio", ratio, 1.0001, 2.0**64, low_open=False, high_open=False)
        self.floor = check_in_range("floor", floor, 2.0**-1000, 1.0, low_open=False, high_open=False)
        self._log_ratio = math.log(self.ratio)
        self._log_floor = math.log(self.floor)
        # K: the first j whose computed s·β^(j−1) reaches the cap; M_K is the cap itself. Every M_j below it
        # is then below the cap, so the ladder is strictly increasing.
        self.last = 1 + math.ceil((math.log(CAP) - math.log(self.floor)) / self._log_ratio)
        while self.last > 1 and self._raw(self.last - 1) >= CAP:
            self.last -= 1

    @property
    def size(self) -> int:
        """K + 1: the number of steps, j = 0..K."""
        return self.last + 1

    def _raw(self, j: Any) -> Any:
        """s·β^(j−1) as computed in floats: s·exp((j − 1)·ln β) (exp((j − 1)·ln β + ln s) once the exp alone
        would overflow), a deterministic function of j; M_1 = s exactly."""
        t = (np.asarray(j, dtype=np.float64) - 1.0) * self._log_ratio
        with np.errstate(over="ignore"):
            return np.where(
                t <= 700.0, self.floor * np.exp(np.minimum(t, 700.0)), np.exp(t + self._log_floor)
            )

    def magnitudes(self, start: int, stop: int) -> NDArray[np.float64]:
        """M_j for j in [start, stop) ⊆ [0, K] (public, a deterministic function of j)."""
        j = np.arange(start, stop, dtype=np.float64)
        out: NDArray[np.float64] = np.where(j == 0.0, 0.0, np.minimum(self._raw(j), CAP))
        out[j >= self.last] = CAP
        return out

    def point(self, origin: float, j: int) -> float:
        """The threshold o + M_j, clipped into [−2^1021, 2^1021] (j = −1 reads as o − M_1)."""
        if j < 0:
            return float(max(origin - self.magnitudes(1, 2)[0], -CAP))
        return float(min(origin + self.magnitudes(j, j + 1)[0], CAP))

    def thresholds(self, origin: float, start: int, stop: int) -> NDArray[np.float64]:
        """o + M_j for j in [start, stop), clipped at 2^1021."""
        out: NDArray[np.float64] = np.minimum(origin + self.magnitudes(start, stop), CAP)
        return out

    def steps_to(self, magnitude: float) -> int:
        """The step at which the magnitudes reach ``magnitude`` (public; for the docs and tests)."""
        if magnitude <= 0.0:
            return 0
        if magnitude <= self.floor:
            return 1
        return min(self.last, 1 + math.ceil(math.log(magnitude / self.floor) / self._log_ratio))


def rational_q(q: float) -> tuple[int, int]:
    """q as a/b in lowest terms: its shortest decimal form, rounded to the nearest fraction with b ≤ 10⁶."""
    frac = Fraction(repr(float(q))).limit_denominator(MAX_DENOMINATOR)
    return frac.numerator, frac.denominator


def prepare_unbounded(
    x: Any, *, lower: float | None = None, upper: float | None = None
) -> NDArray[np.float64]:
    """The data policy without bounds, sorted: NaN → 0, every record clipped into [−2^1021, 2^1021] (±inf
    included), then into the declared side (at or above ``lower``, at or below ``upper``)."""
    from smoothdp.central.quantiles import prepare_data

    arr = prepare_data(x, -CAP, CAP, clip=True)  # NaN → the midpoint 0 of (−2^1021, 2^1021)
    if lower is not None or upper is not None:
        arr = np.clip(arr, -CAP if lower is None else lower, CAP if upper is None else upper)
    return arr


# ------------------------------------------------------------------------------------------------------------
# AboveThreshold on integer queries
# ------------------------------------------------------------------------------------------------------------
def _draw(scale: float, size: int | None, rng: np.random.Generator, numerics: str) -> Any:
    return DiscreteLaplace(scale).sample(size, rng, numerics=numerics)


def above_threshold_walk(
    sorted_z: NDArray[np.float64],
    ladder: Ladder,
    *,
    origin: float,
    weight: int,
    offset: int,
    theta: int,
    scale_threshold: float,
    scale_query: float,
    rng: np.random.Generator,
    numerics: str = "exact",
    chunk: int = DEFAULT_CHUNK,
) -> int:
    """The stopping step k of AboveThreshold on h_j = weight·#{z ≤ origin + M_j} − offset against θ + ρ,
    ρ ~ DLap(scale_threshold), ν_j ~ DLap(scale_query); K + 1 if no step fires.

    Exact: every h_j, θ and draw is an integer (Python ints: no overflow). Work: ``chunk`` steps at a
    time, at most ``chunk`` − 1 of them past the stopping step.
    """
    rho = int(_draw(scale_threshold, None, rng, numerics))
    bar = theta + rho
    start = 0
    while start < ladder.size:
        stop = min(ladder.size, start + chunk)
        counts = np.searchsorted(sorted_z, ladder.thresholds(origin, start, stop), side="right")
        nu = np.asarray(_draw(scale_query, stop - start, rng, numerics), dtype=np.int64)
        # h_j + ν_j ≥ bar ⟺ weight·C_j + ν_j ≥ bar + offset: exact in int64 while |values| < 2^62.
        lhs = weight * counts.astype(np.int64) + nu
        fired = np.flatnonzero(lhs >= bar + offset)
        if fired.size:
            return start + int(fired[0])
        start = stop
    return ladder.size


# ------------------------------------------------------------------------------------------------------------
# One quantile
# ------------------------------------------------------------------------------------------------------------
class UnboundedQuantile(Mechanism):
    """The q-quantile without bounds: a sign test and AboveThreshold on a geometric ladder (module docstring).

    Guarantee: pure ε-DP under ``neighbours`` (``"substitution"``, default, or ``"add_remove"``):
    ε_s (sign test, the geometric mechanism on one count) + ε₁ (threshold noise) + ε₂ (query noise), by
    AboveThreshold (Dwork & Roth 2014, Theorem 3.23; Lyu, Su & Li 2017 for monotone queries) and basic
    composition (docs/theory/unbounded.md#unbounded-quantile-estimation,
    docs/theory/unbounded.md#the-two-sided-walk).

    Parameters
    ----------
    q
        The quantile in [0, 1] (target rank r = max(1, ⌈qn⌉); under add/remove the target count qn).
    epsilon
        ε > 0, split as ε_s = ``sign_share``·ε (two-sided only), then ε₁ = ε₂ = (ε − ε_s)/2.
    neighbours
        ``"substitution"`` (n public) or ``"add_remove"`` (n private: no public choice depends on n).
    lower, upper
        At most one public bound: the walk starts there and goes inward (no sign test: all of ε to the walk).
    side
        Which ladder point is released: ``"crossing"`` (default: the stopping point, at or beyond x_(r) in
        the walk's direction), ``"above"`` (at or above x_(r)) or ``"below"`` (at or below x_(r)); the last
        two read one step back when the walk went the other way (post-processing).
    ratio, floor
        The ladder (:class:`Ladder`): resolution β (default 1.01) and smallest magnitude s (default 2^-30).
    sign_share
        Share of ε on the sign test of the two-sided walk, in (0, 1) (default 0.1).
    chunk
        Ladder steps evaluated at once (default 4096; public).
    numerics
        ``"exact"`` (default: exact discrete Laplace draws) or ``"float"`` (numpy's geometric sampler).
    """

    name: ClassVar[str] = "unbounded quantile (AboveThreshold on a geometric ladder)"
    proof: ClassVar[str] = PROOF
    source = f"{_DURFEE}; {_AT}; {_LSL}"

    def __init__(
        self,
        q: float,
        *,
        epsilon: float,
        neighbours: str = "substitution",
        lower: float | None = None,
        upper: float | None = None,
        side: str = "crossing",
        ratio: float = DEFAULT_RATIO,
        floor: float = DEFAULT_FLOOR,
        sign_share: float = DEFAULT_SIGN_SHARE,
        chunk: int = DEFAULT_CHUNK,
        numerics: str = "exact",
    ) -> None:
        self.q = check_in_range("q", q, 0.0, 1.0, low_open=False, high_open=False)
        self.epsilon = check_epsilon(epsilon)
        self.relation = check_neighbours(neighbours, allowed=("substitution", "add_remove"))
        if lower is not None and upper is not None:
            raise ValueError("give at most one of lower, upper (with both, use a bounded mechanism)")
        self.lower = None if lower is None else check_in_range("lower", lower, -CAP, CAP, low_open=False)
        self.upper = None if upper is None else check_in_range("upper", upper, -CAP, CAP, high_open=False)
        if side not in ("crossing", "above", "below"):
            raise ValueError(f"side must be 'crossing', 'above' or 'below'; got {side!r}")
        self.side = side
        self.ladder = Ladder(ratio=ratio, floor=floor)
        self.sign_share = check_in_range("sign_share", sign_share, 0.0, 1.0)
        self.chunk = check_int("chunk", chunk, minimum=1, maximum=1 << 20)
        self.numerics = check_numerics(numerics)
        self.two_sided = self.lower is None and self.upper is None
        self.epsilon_sign = self.sign_share * self.epsilon if self.two_sided else 0.0
        walk = self.epsilon - self.epsilon_sign
        self.epsilon_threshold = 0.5 * walk
        self.epsilon_queries = walk - self.epsilon_threshold
        while Fraction(self.epsilon_sign) + Fraction(self.epsilon_threshold) + Fraction(
            self.epsilon_queries
        ) > Fraction(self.epsilon):  # never over ε in exact arithmetic
            self.epsilon_queries = math.nextafter(self.epsilon_queries, 0.0)
        self.a, self.b = rational_q(self.q)
        self.scales()  # validated now: a scale beyond the sampler's range is a parameter error
        self.guarantee = PureDP(self.epsilon, neighbours=self.relation)
        self.calibration = None

    # -- public calibration -------------------------------------------------------------------------------
    def scales(self) -> tuple[float, float, float]:
        """Discrete Laplace scales (sign test, threshold, queries), in the units of the integer queries:
        1/ε_s, 1/ε₁, 1/ε₂ under substitution; max(a, b − a)/ε_s, max(a, b − a)/ε₁, b/ε₂ under add/remove."""
        from smoothdp.noise.discrete_laplace import MAX_SCALE

        if self.relation == "substitution":
            spread_threshold, spread_query = 1.0, 1.0
        else:
            spread_threshold, spread_query = float(max(self.a, self.b - self.a)), float(self.b)
        scales = (
            spread_threshold / self.epsilon_sign if self.epsilon_sign else 1.0,
            spread_threshold / self.epsilon_threshold,
            spread_query / self.epsilon_queries,
        )
        if max(scales) > MAX_SCALE:
            raise ValueError(
                f"epsilon={self.epsilon:g} is too small for q={self.q:g} under {self.relation} "
                f"(a discrete Laplace scale would exceed {MAX_SCALE:g})"
            )
        return scales

    def target(self, n: int) -> int:
        """r = max(1, ⌈qn⌉) (q as the fraction a/b)."""
        return max(1, math.ceil(Fraction(self.a, self.b) * n))

    def _queries(self, n: int, direction: str) -> tuple[int, int, int]:
        """(weight, offset, θ) of the walk. Up on x: #{x ≤ t} ≥ r, or b·C − a·n ≥ 0 (add/remove). Down
        (up on −x): #{−x ≤ m} ≥ n + 1 − r, so that −m ≤ x_(r); or b·#{−x ≤ m} − (b − a)·n ≥ 1."""
        if self.relation == "substitution":
            r = self.target(n)
            return (1, 0, r) if direction == "up" else (1, 0, n + 1 - r)
        return (self.b, self.a * n, 0) if direction == "up" else (self.b, (self.b - self.a) * n, 1)

    @property
    def statistic_name(self) -> str:
        return "median" if self.q == 0.5 else f"quantile({self.q:g})"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_unbounded(data, lower=self.lower, upper=self.upper)

    # -- the walk -----------------------------------------------------------------------------------------
    def sign_test(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> str:
        """The two-sided walk's first step, ε_s-DP: ``"down"`` when the noisy count says x_(r) ≤ 0
        (w·#{x ≤ 0} − c + Z ≥ θ, Z discrete Laplace of scale S/ε_s), else ``"up"``."""
        w, c, theta = self._queries(int(sorted_x.size), "up")
        at_zero = int(np.searchsorted(sorted_x, 0.0, side="right"))
        noisy = w * at_zero - c + int(_draw(self.scales()[0], None, rng, self.numerics))
        return "down" if noisy >= theta else "up"

    def walk(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> tuple[str, int]:
        """(direction, stopping step k) on prepared data: the mechanism's whole private output."""
        n = int(sorted_x.size)
        _, s_thr, s_query = self.scales()
        if self.two_sided:
            direction, origin = self.sign_test(sorted_x, rng), 0.0
        elif self.lower is not None:
            direction, origin = "up", self.lower
        else:
            assert self.upper is not None
            direction, origin = "down", self.upper
        w, c, theta = self._queries(n, direction)
        z = sorted_x if direction == "up" else -sorted_x[::-1]
        k = above_threshold_walk(
            z, self.ladder, origin=origin if direction == "up" else -origin, weight=w, offset=c,
            theta=theta, scale_threshold=s_thr, scale_query=s_query, rng=rng, numerics=self.numerics,
            chunk=self.chunk,
        )  # fmt: skip
        return direction, k

    def value(self, direction: str, k: int) -> float:
        """The released ladder point for (direction, k) and ``side`` (post-processing of the walk)."""
        origin = 0.0 if self.two_sided else (self.lower if self.lower is not None else self.upper)
        assert origin is not None
        j = min(k, self.ladder.last)
        back = (self.side == "below" and direction == "up") or (self.side == "above" and direction == "down")
        if back and k <= self.ladder.last:
            j = k - 1  # one step back towards the origin (j = −1: the origin's other side)
        if direction == "up":
            return self.ladder.point(origin, j)
        return -self.ladder.point(-origin, j)

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, dict[str, Any]]:
        """One output on prepared data (sorted, policy applied), no accountant; and its public report."""
        direction, k = self.walk(sorted_x, rng)
        report = {"direction": direction, "steps": k, "stopped": k <= self.ladder.last}
        return self.value(direction, k), report

    def details(self) -> dict[str, Any]:
        """The public parameters a release reports (the ε split included)."""
        return {
            "method": "unbounded",
            "bounds": None if self.two_sided else (self.lower, self.upper),
            "epsilon_sign_test": self.epsilon_sign,
            "epsilon_threshold": self.epsilon_threshold,
            "epsilon_queries": self.epsilon_queries,
            "ladder": {"ratio": self.ladder.ratio, "floor": self.ladder.floor, "steps": self.ladder.size},
            "side": self.side,
            "chunk": self.chunk,
        }

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        value, report = self.sample(prepared, rng)
        return self._make_release(
            value,
            sampler=_EXACT_LABEL if self.numerics == "exact" else _FLOAT_LABEL,
            details={**self.details(), **report},
            not_private=NotPrivate(),
        )

    def __repr__(self) -> str:
        return f"UnboundedQuantile(q={self.q:g}, {self.guarantee})"


# ------------------------------------------------------------------------------------------------------------
# A private range
# ------------------------------------------------------------------------------------------------------------
class UnboundedRange(Mechanism):
    """Private bounds [ℓ, u] around the data with no bound known, from two AboveThreshold walks with ε/2 each
    (docs/theory/unbounded.md#a-private-range):

    1. u: the two-sided walk (:class:`UnboundedQuantile`) for q_hi, read at or above x_(r_hi);
    2. ℓ: a walk *down from u* (``upper=u``) for q_lo, read at or below x_(r_lo). Its ladder is measured from
       u, so its steps are relative to the data's spread below u, not to their magnitude, and its target
       count n + 1 − r_lo is large, so it does not stop on its first, empty steps.

    On a column below 0 the first walk goes from 0 towards the end nearer 0, with the target count
    n + 1 − r_hi of the mirrored records: for q_hi near 1 that count is small and the walk stops on its
    first, empty steps (an upper end near 0 for longitudes near −74). ``mirror=True`` (the moments' clipping
    range, whose q_hi is near 1) avoids it: the sign test of the median (its ε_s out of the first ε/2)
    chooses a branch, and a column below 0 runs both walks on −x for (1 − q_hi, 1 − q_lo), mirrored back,
    so that it gets exactly the range its positive twin gets (the far end first, then the near one).
    On an octave ladder by default. ℓ < u always (a release with ℓ ≥ u is widened to (ℓ − s, u + s),
    post-processing).

    Guarantee: pure ε-DP under ``neighbours`` (adaptive basic composition of the two walks).

    Parameters
    ----------
    quantiles
        (q_lo, q_hi) with 0 ≤ q_lo ≤ q_hi ≤ 1: the ranks the ends aim at (default (0.25, 0.75)).
    epsilon, neighbours, ratio, floor, sign_share, chunk, numerics
        As :class:`UnboundedQuantile` (``ratio`` default 2: octaves).
    top_ratio
        The ladder ratio of the first walk, the one from 0 (default: ``ratio``). Its steps are relative to
        the data's magnitude, the second walk's to their spread: a finer first ladder resolves data far
        from 0 (coordinates, years) at the price of more steps, each a chance to stop early.
    """

    name: ClassVar[str] = "unbounded range (two AboveThreshold walks)"
    proof: ClassVar[str] = PROOF_RANGE
    source = f"{_DURFEE}; {_AT}"

    def __init__(
        self,
        *,
        epsilon: float,
        quantiles: tuple[float, float] = (0.25, 0.75),
        neighbours: str = "substitution",
        ratio: float = RANGE_RATIO,
        floor: float = DEFAULT_FLOOR,
        sign_share: float = DEFAULT_SIGN_SHARE,
        chunk: int = DEFAULT_CHUNK,
        numerics: str = "exact",
        mirror: bool = False,
        top_ratio: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.mirror = check_bool("mirror", mirror)
        try:
            q_lo, q_hi = quantiles
        except (TypeError, ValueError) as err:
            raise TypeError(f"quantiles must be a pair (q_lo, q_hi); got {quantiles!r}") from err
        q_lo = check_in_range("quantiles[0]", q_lo, 0.0, 1.0, low_open=False, high_open=False)
        q_hi = check_in_range("quantiles[1]", q_hi, 0.0, 1.0, low_open=False, high_open=False)
        if q_lo > q_hi:
            raise ValueError(f"quantiles must satisfy q_lo ≤ q_hi; got {quantiles!r}")
        self.quantiles = (q_lo, q_hi)
        self.epsilon_top = 0.5 * self.epsilon
        self.epsilon_bottom = self.epsilon - self.epsilon_top
        self._common: dict[str, Any] = {
            "neighbours": neighbours, "ratio": ratio, "floor": floor, "chunk": chunk, "numerics": numerics,
        }  # fmt: skip
        #: The first walk's ladder: ``top_ratio`` (validated by :class:`Ladder`), else ``ratio``.
        self._first = {**self._common, "ratio": ratio if top_ratio is None else top_ratio}
        self.top = UnboundedQuantile(
            q_hi, epsilon=self.epsilon_top, side="above", sign_share=sign_share, **self._first
        )
        #: ``mirror``: the two-sided median walk whose sign test starts the range (its ε_s: is the median
        #: ≤ 0?), and the budget left for the first walk.
        self.sign = UnboundedQuantile(
            0.5, epsilon=self.epsilon_top, side="above", sign_share=sign_share, **self._common
        )
        self.epsilon_walk = self.epsilon_top - self.sign.epsilon_sign
        while Fraction(self.sign.epsilon_sign) + Fraction(self.epsilon_walk) > Fraction(self.epsilon_top):
            self.epsilon_walk = math.nextafter(self.epsilon_walk, 0.0)
        self.top_walk("up"), self.top_walk("down"), self.bottom(0.0, "down")  # validated now
        self.guarantee = PureDP(self.epsilon, neighbours=self.sign.relation)
        self.calibration = None

    def _branch_quantiles(self, direction: str) -> tuple[float, float]:
        """(q of the far end, q of the near end) for the branch: (q_hi, q_lo) on x, (1 − q_lo, 1 − q_hi) on
        −x."""
        q_lo, q_hi = self.quantiles
        return (q_hi, q_lo) if direction == "up" else (1.0 - q_lo, 1.0 - q_hi)

    def top_walk(self, direction: str) -> UnboundedQuantile:
        """The first walk of the branch the sign test chose: up from 0 (on −x for ``"down"``)."""
        q = self._branch_quantiles(direction)[0]
        return UnboundedQuantile(q, epsilon=self.epsilon_walk, lower=0.0, side="above", **self._first)

    def bottom(self, top: float, direction: str = "up") -> UnboundedQuantile:
        """The second walk: down from the first one's output ``top`` (a private output, public from now)."""
        q = self._branch_quantiles(direction)[1]
        return UnboundedQuantile(q, epsilon=self.epsilon_bottom, upper=top, side="below", **self._common)

    def _ends(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]:
        """u by the two-sided walk, then ℓ by the walk down from it."""
        hi, _ = self.top.sample(sorted_x, rng)
        low = self.bottom(hi)
        lo, _ = low.sample(low._prepare(sorted_x), rng)
        return lo, hi

    def _mirrored_ends(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]:
        """The median's sign test, then in its branch (on x, or on −x mirrored back) the far end by the walk
        up from 0 and the near end by the walk down from it."""
        direction = self.sign.sign_test(sorted_x, rng)
        z = sorted_x if direction == "up" else -sorted_x[::-1]
        first = self.top_walk(direction)
        far, _ = first.sample(first._prepare(z), rng)
        second = self.bottom(far, direction)
        near, _ = second.sample(second._prepare(z), rng)
        return (near, far) if direction == "up" else (-far, -near)

    @property
    def statistic_name(self) -> str:
        return "range"

    def _prepare(self, data: Any) -> NDArray[np.float64]:
        return prepare_unbounded(data)

    def sample(self, sorted_x: NDArray[np.float64], rng: np.random.Generator) -> tuple[float, float]:
        """(ℓ, u) on prepared data, ℓ < u, no accountant."""
        lo, hi = self._mirrored_ends(sorted_x, rng) if self.mirror else self._ends(sorted_x, rng)
        if lo >= hi:  # the second walk stopped at u itself: widen around u (post-processing of u)
            # by at least the ladder's floor and 2^-20·|u|: a width of the floor alone vanishes in the
            # rounding of a large u (u ± floor == u), which left ℓ = u and a bounded stage refusing them
            width = max(self.sign.ladder.floor, abs(hi) * 2.0**-20)
            lo, hi = max(hi - width, -CAP), min(hi + width, CAP)
        return lo, hi

    def details(self) -> dict[str, Any]:
        return {
            "method": "unbounded range",
            "quantiles": self.quantiles,
            "epsilon_upper_end": self.epsilon_top,
            "epsilon_lower_end": self.epsilon_bottom,
            "ladder": {
                "ratio": self.sign.ladder.ratio,
                "floor": self.sign.ladder.floor,
                "top_ratio": self._first["ratio"],
            },
            "sign_share": self.sign.sign_share,
            "mirror": self.mirror,
        }

    def _release(self, prepared: NDArray[np.float64], rng: np.random.Generator) -> Release:
        return self._make_release(
            self.sample(prepared, rng),
            sampler=_EXACT_LABEL if self.sign.numerics == "exact" else _FLOAT_LABEL,
            details=self.details(),
            not_private=NotPrivate(),
        )


check_keywords_of(globals(), __all__)  # a mistyped keyword names the function and the right word
