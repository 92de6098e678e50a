"""Hardened geo ``privatize`` (the exact release path) against the float path, every noise family.

Target (issue 24): hardened/float ≤ 1.5 for every noise family at 10⁶ users (soft threshold; PolyPlace,
Student's t, generalized Cauchy, and Laplace under its (ε, δ) rule). The float and exact mechanisms are
timed interleaved on the same users, best of ``--rounds`` (≥ 5), CPU and wall time, the load averages
printed beside each row (benchmarks/timing.py). Seeded ChaCha20 generators (a simulation; the secure
generator costs the same per word for both paths).

With ``SMOOTHDP_SMOOTHGP_PATH`` set to a local checkout of the geo-privacy paper's reference code
(hkustDB/SmoothGP; nothing is fetched, nothing of it is copied here), one more row times its
smooth-sensitivity threshold mechanism with T(3) noise (``smooth.algo.thres_smooth_vec``, one Python call
per user; with ``smooth_mechanism_tvec`` (numpy's ``standard_t``) and ``..._secure`` (``SystemRandom`` and
scipy's ``t.ppf``)) on ``--smoothgp-users`` users against smoothdp's hardened privatize of the same users.

Run: ``.venv/bin/python benchmarks/bench_geo_hardened.py [--users 1000000] [--rounds 5] [--out FILE]``
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from smoothdp.geo import SmoothSensitivityMechanism, SoftThreshold, TwoWayThreshold
from smoothdp.rng import default_rng
from timing import header, interleaved

TARGET = 1.5
EPSILON = 1 / 800
THRESHOLD, WIDTH = 10_000.0, 1_600.0
NOISES = {"polyplace": {}, "student_t": {}, "cauchy": {}, "laplace": {"delta": 1e-6}}


def _soft(noise: str, numerics: str) -> SmoothSensitivityMechanism:
    query = SoftThreshold(THRESHOLD, WIDTH)
    return SmoothSensitivityMechanism(query, epsilon=EPSILON, noise=noise, numerics=numerics, **NOISES[noise])


def _two_way(numerics: str) -> SmoothSensitivityMechanism:
    query = TwoWayThreshold([THRESHOLD, THRESHOLD], WIDTH)
    return SmoothSensitivityMechanism(query, epsilon=EPSILON, numerics=numerics)


def row(label: str, build: Callable[[str], SmoothSensitivityMechanism], x: np.ndarray, rounds: int) -> str:
    mechs = {numerics: build(numerics) for numerics in ("float", "exact")}
    for mech in mechs.values():  # warm-up: tables, constants, imports
        mech.privatize(x[:2000], rng=default_rng(0))
    calls = {k: partial(m.privatize, x, rng=default_rng(100)) for k, m in mechs.items()}
    best = interleaved(calls, rounds)
    n = x.shape[0]
    cpu = best["exact"].cpu / best["float"].cpu
    wall = best["exact"].wall / best["float"].wall
    verdict = "met" if cpu <= TARGET else "MISSED"
    return (
        f"| {label} | {n:,} | {n / best['float'].cpu / 1e6:.2f} | {n / best['exact'].cpu / 1e6:.2f} | "
        f"**{cpu:.2f}** ({verdict}) | {wall:.2f} | {best['exact'].load} |"
    )


def smoothgp_row(path: str, x: np.ndarray, rounds: int) -> list[str]:
    """The reference code's T(3) threshold mechanism against smoothdp's, per user (see the docstring)."""
    sys.path.insert(0, str(Path(path).resolve()))
    from smooth.algo import (  # type: ignore[import-not-found]
        smooth_mechanism_tvec,
        smooth_mechanism_tvec_secure,
        thres_smooth_vec,
    )

    ours = _soft("student_t", "exact")
    calls = {
        "SmoothGP reference, numpy's t": partial(
            thres_smooth_vec, x, EPSILON, THRESHOLD, WIDTH, 1, smooth_mech_vec=smooth_mechanism_tvec
        ),
        "SmoothGP reference, secure (SystemRandom, t.ppf)": partial(
            thres_smooth_vec, x, EPSILON, THRESHOLD, WIDTH, 1, smooth_mech_vec=smooth_mechanism_tvec_secure
        ),
        "smoothdp hardened, secure": partial(ours.privatize, x),
    }
    best = interleaved(calls, rounds)
    base = best["smoothdp hardened, secure"].cpu
    return [
        f"| {name}, T(3) | {x.size:,} | {x.size / b.cpu / 1e6:.3g} M/s | "
        f"{b.cpu / base:.1f}× smoothdp | {b.load} |"
        for name, b in best.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--noises", nargs="+", default=list(NOISES))
    parser.add_argument("--two-way", action="store_true", help="also the 2-D two-way threshold (PolyPlace)")
    parser.add_argument("--smoothgp-users", type=int, default=20_000)
    parser.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    args = parser.parse_args()
    data = np.random.default_rng(686987)
    incomes = data.lognormal(11.49399503122476, 0.8290709468895202, args.users)
    lines = [
        header("hardened geo privatize vs the float path", args.rounds),
        "",
        "| mechanism | users | float M/s (CPU) | hardened M/s (CPU) | hardened/float CPU | wall "
        "| load 1m/5m/15m |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for noise in args.noises:
        lines.append(row(f"soft threshold, {noise}", partial(_soft, noise), incomes, args.rounds))
        print(lines[-1], flush=True)
    if args.two_way:
        points = data.normal(10_000.0, 8_000.0, (args.users, 2))
        lines.append(row("two-way threshold, polyplace", _two_way, points, args.rounds))
        print(lines[-1], flush=True)
    path = os.environ.get("SMOOTHDP_SMOOTHGP_PATH")
    if path:
        extra = [
            "",
            "| reference code | users | rate | CPU per user vs smoothdp | load 1m/5m/15m |",
            "|---|---|---|---|---|",
            *smoothgp_row(path, incomes[: args.smoothgp_users], max(1, min(args.rounds, 3))),
        ]
        print("\n".join(extra), flush=True)
        lines += extra
    else:
        lines.append("\n(SmoothGP rows skipped: set SMOOTHDP_SMOOTHGP_PATH to a local hkustDB/SmoothGP)")
        print(lines[-1])
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
