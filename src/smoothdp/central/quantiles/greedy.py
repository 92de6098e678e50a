"""JointExp on a public lattice with greedy splits, and the private test that sets the atom mass
(docs/theory/quantiles.md#jointexp-on-a-public-lattice; Gillenwater, Joseph & Kulesza, ICML 2021).

Output space: m pairs (o_j, ρ_j), o_j ∈ [a, b], ρ_j ∈ [0, 1), ordered lexicographically, with base measure
(μ_c ⊗ Lebesgue[0, 1))^m, μ_c = Lebesgue + c·(counting measure on the public lattice Λ within [a, b]). Only
the o_j are released; ρ only orders outputs at one atom. The count of output j is

    C_0 = 0,   C_j = clamp(C_{j−1} + ĝ_j, L(o_j), U(o_j)),   C_{m+1} = |x|,

with L(o) = #{x < o}, U(o) = #{x ≤ o} and ĝ_j ≥ 0 the public target gap g_j = (q_j − q_{j−1})·n rounded to a
half-integer; the utility is u = −Σ_{j=1}^{m+1} |C_j − C_{j−1} − g_j| (sensitivity 2 under substitution), and
the density is exp(ε′u/4). Off the data (L = U) the count is JointExp's #{x < o}.

Sampling: a dynamic programme over *states*, in the order of the outputs: one per open gap between order
statistics of positive mass (count i), and 2M + 1 per distinct record value v on the lattice (M = #{x = v}),
one per half-integer count in [L(v), U(v)]. Forward levels keep only the row r = 0 (first output of its
cell) and the log-sum over r of every level (O(m·S) memory); rows r ≥ 1 are recomputed where a backward draw
needs them. Every sum of the kernel is a blocked prefix scan or a range sum on a binary tree (depth
O(log S)), so the float error has the certified bound :func:`greedy_margin`, charged to ε.

The atom masses are chosen before, by a private selection of the level that holds nearly all the records
(:mod:`smoothdp.central.quantiles.atom_selection`): heavy atoms c_ℓ = 64·σ_ℓ on that level, light
c_ℓ = 2^-14·σ_ℓ on every other one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from smoothdp.central.quantiles.atoms import HEAVY_MASS, LIGHT_MASS, Atoms
from smoothdp.central.quantiles.exact_draws import exact_categorical
from smoothdp.central.quantiles.log_scans import lae_scan, log_sum, lse_rows, scan_depth
from smoothdp.exact import OutputGrid, uniform_on_grid

__all__ = [
    "HEAVY_MASS",
    "LIGHT_MASS",
    "GreedyChain",
    "GreedyProgramme",
    "GreedyTables",
    "greedy_error_bound",
    "greedy_margin",
    "greedy_sample",
    "greedy_targets",
]


_U = 2.0**-53
_LIBM_ULPS = 64.0
_LN_TINY = 745.0


# ------------------------------------------------------------------------------------------------------------
# Certified float margin
# ------------------------------------------------------------------------------------------------------------
def range_depth(length: int) -> int:
    """A bound on the chain of log-add-exp operations behind a range sum of :class:`_RangeTree` over
    ``length`` entries: tree nodes of height ≤ h plus at most 2h accumulations, h = ⌈log2 length⌉ + 1."""
    h = max(1, (max(length, 1) - 1).bit_length()) + 1
    return 3 * h + 1


def greedy_error_bound(*, epsilon: float, n: int, m: int, width: float, mass_ulps: float = 8.0) -> float:
    """E*, the bound on the error of every log weight of every draw of the greedy lattice programme
    (docs/theory/quantiles.md#float-error-of-the-greedy-programme), with S = 4n + 2 states at most,
    c = ε/4, Λ = 745 + |ln W| (``width`` = W, the largest cell mass):

    * R = (m+1)Λ + ln((m+1)!) + ln(m+1) + c(2n+2) + 2 bounds every normalised table entry;
    * M = R + c(2n+4) + ln(S+1) + 2 every intermediate value; δ = u(M + 4K) one operation;
    * D = max(D_scan(S), D_range(S)) the chain of a prefix scan or a range sum;
    * E* = m·ℓ_err + ((m−1)(D+16) + m(m−1)/2 + m + 16)·δ, ℓ_err = (2KΛ + mass_ulps)u.
    """
    c = epsilon / 4.0
    states = 4 * n + 2
    lam = _LN_TINY + abs(math.log(width))
    big_r = (m + 1.0) * lam + math.lgamma(m + 2.0) + math.log(m + 1.0) + c * (2.0 * n + 2.0) + 2.0
    big_m = big_r + c * (2.0 * n + 4.0) + math.log(states + 1.0) + 2.0
    delta = _U * (big_m + 4.0 * _LIBM_ULPS)
    ell_err = (2.0 * _LIBM_ULPS * lam + mass_ulps) * _U
    depth = max(scan_depth(states), range_depth(states))
    ops = (m - 1.0) * (depth + 16.0) + m * (m - 1.0) / 2.0 + m + 16.0
    return m * ell_err + ops * delta


def greedy_margin(*, epsilon: float, n: int, m: int, width: float, mass_ulps: float = 8.0) -> float:
    """The public loss margin 8m·E* + 2uε of the greedy lattice programme (E*: :func:`greedy_error_bound`,
    docs/theory/quantiles.md#float-error-of-the-greedy-programme)."""
    e_star = greedy_error_bound(epsilon=epsilon, n=n, m=m, width=width, mass_ulps=mass_ulps)
    return 8.0 * m * e_star + 2.0 * _U * epsilon


# ------------------------------------------------------------------------------------------------------------
# Range sums in log space
# ------------------------------------------------------------------------------------------------------------
class _RangeTree:
    """log Σ_{p ∈ [lo, hi)} exp(v[p]) for many ranges at once: a complete binary tree of log-add-exps,
    queried bottom-up (each range is at most 2h tree nodes, h the height); no subtraction."""

    def __init__(self, v: NDArray[np.float64]) -> None:
        size = 1
        while size < max(v.size, 1):
            size *= 2
        tree = np.full(2 * size, -np.inf)
        tree[size : size + v.size] = v
        k = size
        while k > 1:
            half = k // 2
            tree[half:k] = np.logaddexp(tree[k : 2 * k : 2], tree[k + 1 : 2 * k : 2])
            k = half
        self.size, self.tree = size, tree

    def query(self, lo: NDArray[np.int64], hi: NDArray[np.int64]) -> NDArray[np.float64]:
        lo = np.asarray(lo, dtype=np.int64) + self.size
        hi = np.asarray(hi, dtype=np.int64) + self.size
        acc = np.full(lo.shape, -np.inf)
        lo = np.where(lo < hi, lo, hi)  # empty ranges stay empty
        while np.any(lo < hi):
            live = lo < hi
            take = live & ((lo & 1) == 1)
            acc[take] = np.logaddexp(acc[take], self.tree[lo[take]])
            lo = np.where(take, lo + 1, lo)
            take = live & ((hi & 1) == 1)
            hi = np.where(take, hi - 1, hi)
            acc[take] = np.logaddexp(acc[take], self.tree[hi[take]])
            lo, hi = lo >> 1, hi >> 1
        return acc


def _prefix(v: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = lae_scan(v[None, :])[0]
    return out


# ------------------------------------------------------------------------------------------------------------
# States
# ------------------------------------------------------------------------------------------------------------
class GreedyChain:
    """The states of the greedy programme, in output order (docs/theory/quantiles.md#greedy-states).

    ``c2``: twice the count of the state (nondecreasing); ``knot``: whether it is a count of a record value
    on the lattice (else an open gap with its lattice points and bound atoms); ``log_mass``; ``first``: the
    first position of the state's cell (a gap is its own cell; a knot's 2M + 1 states form one cell);
    ``l2``/``u2``: 2L, 2U of a knot.
    """

    def __init__(self, sorted_x: NDArray[np.float64], lower: float, upper: float, atoms: Atoms) -> None:
        n = sorted_x.size
        self.n, self.atoms = n, atoms
        edges = np.concatenate(([lower], sorted_x, [upper]))
        self.edges = edges
        counts, gap_mass, edge_mass = atoms.scan(edges)  # atoms inside each open gap (exact counts)
        self.counts = counts
        # Atoms at a (gap 0) and b (gap n) that hold no record, with their (float) masses.
        self.atom_left = bool(edge_mass[0] > 0 and (n == 0 or sorted_x[0] != lower))
        self.atom_right = bool(edge_mass[-1] > 0 and (n == 0 or sorted_x[-1] != upper))
        extra = np.zeros(n + 1)
        extra[0] += edge_mass[0] if self.atom_left else 0.0
        extra[n] += edge_mass[-1] if self.atom_right else 0.0
        with np.errstate(divide="ignore"):
            gap_log = np.log(np.diff(edges) + gap_mass + extra)
        gap_idx = np.flatnonzero(np.isfinite(gap_log))
        # Knots: distinct record values that are atoms, L = #{x < v}, U = #{x ≤ v}, mass μ({v}).
        if n:
            vals, lo_rank = np.unique(sorted_x, return_index=True)
            val_mass = atoms.scan(vals)[2]
            on = val_mass > 0.0
            vals, lo_rank, val_mass = vals[on], lo_rank[on], val_mass[on]
            hi_rank = np.searchsorted(sorted_x, vals, side="right")
        else:
            vals = val_mass = np.zeros(0)
            lo_rank = hi_rank = np.zeros(0, dtype=np.int64)
        sizes = 2 * (hi_rank - lo_rank) + 1
        n_knot = int(sizes.sum())
        block = np.repeat(np.arange(vals.size), sizes)
        offset = np.arange(n_knot) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        # Order: gap i (key 2i), then the knot with L = i (key 2i + 1), its counts ascending.
        key = np.concatenate((2 * gap_idx, 2 * np.repeat(lo_rank, sizes) + 1))
        order = np.argsort(key, kind="stable")
        c2 = np.concatenate((2 * gap_idx, 2 * np.repeat(lo_rank, sizes) + offset)).astype(np.int64)
        knot = np.concatenate((np.zeros(gap_idx.size, bool), np.ones(n_knot, bool)))
        log_mass = np.concatenate((gap_log[gap_idx], np.repeat(np.log(val_mass), sizes)))
        bid = np.concatenate((np.full(gap_idx.size, -1), block))
        gap_of = np.concatenate((gap_idx, np.full(n_knot, -1)))
        l2 = np.concatenate((np.zeros(gap_idx.size, np.int64), 2 * np.repeat(lo_rank, sizes)))
        u2 = np.concatenate((np.zeros(gap_idx.size, np.int64), 2 * np.repeat(hi_rank, sizes)))
        self.c2, self.knot, self.log_mass = c2[order], knot[order], log_mass[order]
        self.bid, self.gap, self.l2, self.u2 = bid[order], gap_of[order], l2[order], u2[order]
        self.knot_value = vals
        size = self.c2.size
        pos = np.arange(size)
        start = np.ones(size, bool)
        start[1:] = (self.bid[1:] != self.bid[:-1]) | (self.bid[1:] == -1)
        self.first = np.maximum.accumulate(np.where(start, pos, 0))
        self.size = size
        # Knot-local arrays (all knot states, in order): local first/last of each block.
        self.kpos = np.flatnonzero(self.knot)
        kfirst = np.searchsorted(self.kpos, self.first[self.kpos])
        self.klocal_first = kfirst
        self.klocal_last = kfirst + (self.u2[self.kpos] - self.l2[self.kpos])

    def draw(self, state: int, grid: OutputGrid, rng: np.random.Generator, numerics: str) -> float:
        """One point of the state's cell measure, exactly (rational masses, lazy uniform bits); an atom is
        released as itself, a continuum point rounded onto ``grid``."""
        if self.knot[state]:
            return float(self.knot_value[self.bid[state]])
        i = int(self.gap[state])
        lo, hi = float(self.edges[i]), float(self.edges[i + 1])
        zero = Fraction(0)
        low_end = self.atoms.point_mass(lo) if i == 0 and self.atom_left else zero
        high_end = self.atoms.point_mass(hi) if i == self.n and self.atom_right else zero
        atom = self.atoms.draw_in_cell(lo, hi, self.counts[:, i], rng, low_end=low_end, high_end=high_end)
        if atom is not None:
            return atom
        return float(uniform_on_grid(lo, hi, grid=grid, rng=rng, numerics=numerics))


# ------------------------------------------------------------------------------------------------------------
# The programme
# ------------------------------------------------------------------------------------------------------------
def greedy_targets(qs: NDArray[np.float64], n: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """t_j = 2g_j (half units) and Ĝ_j = ⌊t_j + 1/2⌋ = 2ĝ_j ≥ 0, j = 1..m+1."""
    g = np.concatenate(([qs[0]], np.diff(qs), [1.0 - qs[-1]])) * n
    t = 2.0 * g
    return t, np.floor(t + 0.5).astype(np.int64)


def _knot_step(
    prev: NDArray[np.float64],
    c2: NDArray[np.int64],
    first: NDArray[np.int64],
    last: NDArray[np.int64],
    big_g: int,
    t: float,
    k: float,
) -> NDArray[np.float64]:
    """One more output in the same knot: from weights ``prev`` of the previous output at the states of
    whole knot blocks (local first/last index of each state's block), the log weight of each state, before
    its mass and factorial. Interior: the single predecessor at count C − Ĝ; at U also every predecessor
    above U − Ĝ (clamped)."""
    idx = np.arange(c2.size)
    out = np.full(c2.size, -np.inf)
    src = idx - big_g
    ok = src >= first
    out[ok] = prev[src[ok]] - k * abs(big_g - t)
    at_u = idx == last
    if big_g >= 1 and np.any(at_u):
        tree = _RangeTree(prev - k * c2.astype(np.float64))
        lo = np.maximum(first[at_u], last[at_u] - big_g + 1)
        extra = tree.query(lo, last[at_u] + 1) + k * (c2[at_u].astype(np.float64) - t)
        out[at_u] = np.logaddexp(out[at_u], extra)
    return out


class GreedyTables:
    """Forward tables of the greedy programme: row r = 0 and the log-sum over r of every level, and the
    levels' float offsets; rows r ≥ 1 are recomputed by :meth:`rows_at` and :meth:`block_rows`.

    ``allowed`` (m × states, optional): output j may sit only in the states allowed at level j, each in a
    cell of its own (the windowed programme, :mod:`smoothdp.central.quantiles.joint_window`: its windows are
    disjoint, so no cell holds two outputs); the masked entries are −inf, every other operation is the
    same. ``chain``: a :class:`GreedyChain` or any object with its attributes (the windows' chain)."""

    def __init__(
        self, chain: Any, qs: NDArray[np.float64], coef: float, allowed: NDArray[np.bool_] | None = None
    ) -> None:
        n, m = chain.n, qs.size
        self.chain, self.m, self.allowed = chain, m, allowed
        self.t, self.big_g = greedy_targets(qs, n)
        self.k = 0.5 * coef  # per half unit of count
        self.log_fact = [math.log(r + 1.0) for r in range(m)]
        size = chain.size
        self.first_row = np.empty((m, size))
        self.tot = np.empty((m, size))
        self.nus: list[float] = []
        rows = np.full((m, size), -np.inf)
        rows[0] = self._level0()
        for j in range(m):
            if j > 0:
                for r in range(j, 0, -1) if allowed is None else ():  # in place, from the top row down
                    rows[r] = self._repeat(rows[r - 1], j, r)
                rows[0] = self._kernel(self.tot[j - 1], j, None if allowed is None else allowed[j])
            if allowed is not None:  # output j only in its own states; no repeats (rows r ≥ 1 stay −inf)
                rows[0] = np.where(allowed[j], rows[0], -np.inf)
            nu = float(np.max(rows[: j + 1]))
            nu = nu if math.isfinite(nu) else 0.0
            rows[: j + 1] -= nu
            self.nus.append(nu)
            self.first_row[j] = rows[0]
            self.tot[j] = lse_rows(rows[: j + 1])

    # -- forward operations -------------------------------------------------------------------------------
    def _level0(self) -> NDArray[np.float64]:
        ch, k, t0 = self.chain, self.k, float(self.t[0])
        c2f = ch.c2.astype(np.float64)
        row = ch.log_mass - k * np.abs(c2f - t0)
        hit = ~ch.knot | (ch.c2 == np.clip(self.big_g[0], ch.l2, ch.u2))
        out: NDArray[np.float64] = np.where(hit, row, -np.inf)
        return out

    def _repeat(self, prev: NDArray[np.float64], j: int, r: int) -> NDArray[np.float64]:
        ch, k, t = self.chain, self.k, float(self.t[j])
        out = ((ch.log_mass - k * t) + prev) - self.log_fact[r]  # a gap: the same state again
        kp = ch.kpos
        if kp.size:
            step = _knot_step(prev[kp], ch.c2[kp], ch.klocal_first, ch.klocal_last, int(self.big_g[j]), t, k)
            out[kp] = (step + ch.log_mass[kp]) - self.log_fact[r]
        return out

    def _kernel(
        self, tot: NDArray[np.float64], j: int, only: NDArray[np.bool_] | None = None
    ) -> NDArray[np.float64]:
        """Row r = 0 of level j: the output is the first of its cell, the previous one in an earlier cell
        (computed at the states of ``only`` when given, −inf elsewhere)."""
        ch, k, t, big_g = self.chain, self.k, float(self.t[j]), int(self.big_g[j])
        c2, c2f = ch.c2, ch.c2.astype(np.float64)
        pre = _prefix(tot + k * c2f)  # Σ_{p' ≤ p} exp(tot + k·C2)
        minus = _RangeTree(tot - k * c2f)
        plain = _RangeTree(tot)
        out = np.full(ch.size, -np.inf)
        d = np.flatnonzero(~ch.knot if only is None else ~ch.knot & only)
        # Gaps: predecessors at positions < s, cost k·|C2_s − C2′ − t| split at C2′ = C2_s − t.
        split = np.minimum(np.searchsorted(c2f, c2f[d] - t, side="right"), d)
        part1 = np.where(split > 0, pre[np.maximum(split - 1, 0)], -np.inf) - k * (c2f[d] - t)
        part2 = minus.query(split, d) + k * (c2f[d] - t)
        out[d] = ch.log_mass[d] + np.logaddexp(part1, part2)
        kp = ch.kpos if only is None else ch.kpos[only[ch.kpos]]
        if kp.size:
            f = ch.first[kp]
            src = c2[kp] - big_g
            lo = np.minimum(np.searchsorted(c2, src, side="left"), f)
            hi = np.minimum(np.searchsorted(c2, src, side="right"), f)
            acc = plain.query(lo, hi) - k * abs(big_g - t)
            l2, u2 = ch.l2[kp], ch.u2[kp]
            at_l = c2[kp] == l2  # also every predecessor with C2′ < 2L − Ĝ (clamped up to L)
            p0 = np.minimum(np.searchsorted(c2, l2 - big_g, side="left"), f)
            ext_l = np.where(p0 > 0, pre[np.maximum(p0 - 1, 0)], -np.inf) - k * (l2.astype(np.float64) - t)
            acc = np.where(at_l, np.logaddexp(acc, ext_l), acc)
            at_u = c2[kp] == u2  # also every predecessor with C2′ > 2U − Ĝ (clamped down to U)
            p1 = np.minimum(np.searchsorted(c2, u2 - big_g, side="right"), f)
            ext_u = minus.query(p1, f) + k * (u2.astype(np.float64) - t)
            acc = np.where(at_u, np.logaddexp(acc, ext_u), acc)
            out[kp] = ch.log_mass[kp] + acc
        return out

    # -- recomputed rows ----------------------------------------------------------------------------------
    def rows_at(self, j: int, s: int) -> NDArray[np.float64]:
        """Level j's rows r = 0..j at state s."""
        ch = self.chain
        if self.allowed is not None:  # no repeats: rows r ≥ 1 are −inf
            return np.concatenate(([self.first_row[j, s]], np.full(j, -np.inf)))
        if ch.knot[s]:
            block = np.arange(ch.first[s], ch.first[s] + (ch.u2[s] - ch.l2[s]) + 1)
            out: NDArray[np.float64] = self.block_rows(j, block)[:, s - ch.first[s]]
            return out
        row = np.empty(j + 1)
        lm = float(ch.log_mass[s])
        for r in range(j + 1):
            v = float(self.first_row[j - r, s])
            for lev in range(j - r + 1, j + 1):
                v = ((lm - self.k * float(self.t[lev])) + v) - self.log_fact[lev - j + r]
                v = v - self.nus[lev]
            row[r] = v
        return row

    def block_rows(self, j: int, block: NDArray[np.int64]) -> NDArray[np.float64]:
        """Level j's rows r = 0..j on the states of one knot block (the forward operations, restricted)."""
        ch = self.chain
        size = block.size
        c2 = ch.c2[block]
        lm = ch.log_mass[block]
        first = np.zeros(size, dtype=np.int64)
        last = np.full(size, size - 1, dtype=np.int64)
        buf = np.full((j + 1, size), -np.inf)
        for lev in range(j + 1):
            for r in range(lev, 0, -1):
                big_g, t = int(self.big_g[lev]), float(self.t[lev])
                step = _knot_step(buf[r - 1], c2, first, last, big_g, t, self.k)
                buf[r] = ((step + lm) - self.log_fact[r]) - self.nus[lev]
            buf[0] = self.first_row[lev, block]
        return buf


def greedy_sample(
    tables: GreedyTables, rng: np.random.Generator, outside: float | None = None
) -> list[int] | None:
    """The m states of one draw, backwards (at most 2m draws, each exact for its float weights).

    ``outside``: the (shifted) log weight of one more outcome in the first draw, the windowed sampler's
    *outside* pseudo-outcome; None is returned when it is drawn."""
    ch, k, t, big_g, m = tables.chain, tables.k, tables.t, tables.big_g, tables.m
    c2, c2f = ch.c2, ch.c2.astype(np.float64)
    states = [0] * m
    nxt: tuple[int, int] | None = None
    for j in range(m - 1, -1, -1):
        if nxt is None or nxt[1] == 0:
            if nxt is None:
                lim = ch.size
                trans = -k * np.abs(2.0 * ch.n - c2f - float(t[m]))
            else:
                s1 = nxt[0]
                lim = int(ch.first[s1])
                trans = -k * np.abs(c2f[s1] - c2f[:lim] - float(t[j + 1]))
                if ch.knot[s1]:
                    ok = np.clip(c2[:lim] + big_g[j + 1], ch.l2[s1], ch.u2[s1]) == c2[s1]
                    trans = np.where(ok, trans, -np.inf)
            logw = tables.tot[j, :lim] + trans
            if nxt is None and outside is not None:
                logw = np.append(logw, outside)
            s = exact_categorical(logw, rng)
            if s == lim:
                return None
            r = exact_categorical(tables.rows_at(j, s), rng)
        else:
            s1, r1 = nxt
            r = r1 - 1
            if not ch.knot[s1]:
                s = s1
            else:
                block = np.arange(ch.first[s1], ch.first[s1] + (ch.u2[s1] - ch.l2[s1]) + 1)
                rows = tables.block_rows(j, block)[r]
                ok = np.clip(c2[block] + big_g[j + 1], ch.l2[s1], ch.u2[s1]) == c2[s1]
                w = np.where(ok, rows - k * np.abs(c2f[s1] - c2f[block] - float(t[j + 1])), -np.inf)
                s = int(block[exact_categorical(w, rng)])
        states[j] = int(s)
        nxt = (int(s), int(r))
    return states


class GreedyProgramme:
    """The greedy lattice programme on sorted data clipped into [lower, upper]: its chain of states, its
    forward tables, the backward draw of the sorted outputs and the total weight ln Z."""

    def __init__(
        self,
        sorted_x: NDArray[np.float64],
        lower: float,
        upper: float,
        atoms: Atoms,
        qs: NDArray[np.float64],
        coef: float,
        grid: OutputGrid,
        numerics: str,
    ) -> None:
        self.chain = GreedyChain(sorted_x, lower, upper, atoms)
        self.tables = GreedyTables(self.chain, qs, coef)
        self.grid, self.numerics = grid, numerics

    @property
    def size(self) -> int:
        """The number of states (the weights of the first backward draw)."""
        return int(self.chain.size)

    def log_normaliser(self) -> float:
        """ln Z: the levels' float offsets plus the log-sum of the first backward draw's weights (the last
        output's state and the final gap's kernel)."""
        t, ch = self.tables, self.chain
        final = t.tot[t.m - 1] - t.k * np.abs(2.0 * ch.n - ch.c2.astype(np.float64) - float(t.t[t.m]))
        return math.fsum(t.nus) + log_sum(final)

    def draw(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """The sorted outputs: the states backwards, then one point of each state's cell."""
        states = greedy_sample(self.tables, rng)
        assert states is not None
        return np.sort(np.array([self.chain.draw(s, self.grid, rng, self.numerics) for s in states]))
