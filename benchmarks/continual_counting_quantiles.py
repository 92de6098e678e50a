"""Does the continual-counting multi-quantile mechanism win anywhere? A float prototype, measured against
smoothdp's several-quantile methods (issue 22, item 5.4). Not part of the library.

    nice -n 10 .venv/bin/python -m benchmarks.continual_counting_quantiles [--trials 30]

The prototype follows the description of Imola, Boninsegna, Keller, Aamand, Roy Chowdhury & Pagh,
"Differentially private quantiles with smaller error" (NeurIPS 2025): target ranks ⌊q_i n⌋ perturbed by the
prefix sums of a binary-tree mechanism (discrete Laplace per node, ε₂ = ε/2, scale 2(H + 1)/ε₂ for a range
update of the ranks), slices of 2ℓ + 2 sorted records around the noisy ranks with
ℓ = ⌈(2/ε₁′)·ln(m·W/(g·β))⌉ (ε₁′ = ε/4 per slice, W the bounds' width, g a public resolution of the data,
β = 0.05), one exponential-mechanism median per slice between the previous output and the upper bound,
and a uniform release over the bounds whenever two noisy ranks are closer than 2ℓ + 1 or one falls
outside [ℓ, n − ℓ − 1]. Numerics: floats (the prototype is for accuracy only).

Writes ``benchmarks/results/continual_counting.md``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def tree_prefix_noise(m: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Prefix sums Z_1..Z_m of a binary-tree mechanism: each dyadic node carries DLap(scale); prefix i sums
    the ≤ H + 1 nodes of the dyadic decomposition of [1, i]. A +1 on a contiguous range of ranks changes two
    increments, hence at most two nodes per level: L1 sensitivity 2(H + 1)."""
    height = max(1, math.ceil(math.log2(m + 1)))
    scale = 2.0 * (height + 1) / epsilon
    p = 1.0 - math.exp(-1.0 / scale)
    nodes: dict[tuple[int, int], int] = {}

    def node(level: int, index: int) -> int:
        if (level, index) not in nodes:
            nodes[(level, index)] = int(rng.geometric(p) - rng.geometric(p))
        return nodes[(level, index)]

    out = np.zeros(m)
    for i in range(1, m + 1):
        total, start = 0, 0
        for level in range(height, -1, -1):  # greedy dyadic decomposition of [0, i)
            size = 1 << level
            if start + size <= i:
                total += node(level, start // size)
                start += size
        out[i - 1] = total
    return out


def em_median(
    sorted_slice: np.ndarray, lower: float, upper: float, epsilon: float, rng: np.random.Generator
) -> float:
    """Smith's exponential-mechanism median of a slice over [lower, upper] (float sampling)."""
    data = np.clip(sorted_slice, lower, upper)
    edges = np.concatenate(([lower], data, [upper]))
    lengths = np.diff(edges)
    j = np.arange(lengths.size)
    target = data.size / 2.0
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) - 0.5 * epsilon * np.abs(j - target)
    w = np.exp(logw - logw.max())
    k = rng.choice(lengths.size, p=w / w.sum())
    return float(rng.uniform(edges[k], edges[k + 1]))


def slice_quantiles(
    x: np.ndarray, qs: list[float], epsilon: float, bounds: tuple[float, float], resolution: float,
    rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    xs = np.sort(x)
    n, m = xs.size, len(qs)
    lo, hi = bounds
    eps_tree, eps_slice = epsilon / 2.0, epsilon / 4.0  # two slices change per substitution
    ell = math.ceil((2.0 / eps_slice) * math.log(m * (hi - lo) / (resolution * 0.05)))
    ranks = np.floor(np.asarray(qs) * n) + tree_prefix_noise(m, eps_tree, rng)
    if np.any(np.diff(ranks) < 2 * ell + 1) or ranks[0] < ell or ranks[-1] > n - ell - 1:
        return rng.uniform(lo, hi, size=m)
    out = np.empty(m)
    left = lo
    for i, r in enumerate(ranks.astype(int)):
        out[i] = em_median(xs[r - ell : r + ell + 2], left, hi, eps_slice, rng)
        left = out[i]
    return out


def main(argv: list[str] | None = None) -> int:
    import smoothdp
    from smoothdp.rng import default_rng

    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args(argv)
    data_rng = np.random.default_rng(20250722)
    sets = [
        ("N(1.2, 1), n = 1000", data_rng.normal(1.2, 1.0, 1000), (-1e4, 1e4), 1e-4),
        ("N(1.2, 1), n = 10^5", data_rng.normal(1.2, 1.0, 100_000), (-1e4, 1e4), 1e-6),
        ("U(0, 1), n = 10^5", data_rng.uniform(0.0, 1.0, 100_000), (0.0, 1.0), 1e-8),
    ]
    rows = [
        "| data | m | ε | continual counting | smoothdp auto | smoothdp recursive |",
        "|---|---|---|---|---|---|",
    ]
    for name, x, bounds, resolution in sets:
        for m in (9, 49, 99):
            qs = [(k + 1) / (m + 1) for k in range(m)]
            truth = np.quantile(x, qs, method="inverted_cdf")
            for eps in (0.5, 1.0, 2.0):
                rng = np.random.default_rng(1)
                gen = default_rng(1)
                cc = [
                    np.mean(np.abs(slice_quantiles(x, qs, eps, bounds, resolution, rng) - truth))
                    for _ in range(args.trials)
                ]
                cols = [np.median(cc)]
                for method in ("auto", "recursive"):
                    if m > 20 and method == "auto" and x.size > 10_000:
                        cols.append(float("nan"))  # JointExp O(m²n) per release: too slow to measure here
                        continue
                    errs = [
                        np.mean(
                            np.abs(
                                smoothdp.quantiles(
                                    x, qs, epsilon=eps, bounds=bounds, method=method, rng=gen
                                ).value
                                - truth
                            )
                        )
                        for _ in range(args.trials)
                    ]
                    cols.append(np.median(errs))
                line = f"| {name} | {m} | {eps:g} | " + " | ".join(f"{c:.3g}" for c in cols) + " |"
                print(line, flush=True)
                rows.append(line)
    out = ROOT / "benchmarks" / "results" / "continual_counting.md"
    out.write_text(
        "# Continual-counting quantiles (float prototype) against smoothdp: median over "
        f"{args.trials} trials of the mean |error| over the m quantiles\n\n" + "\n".join(rows) + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
