"""Cost of the candidate bit generators for smoothdp's secure default (run as a script, not a test).

    .venv/bin/python benchmarks/bench_rng.py [--n 1048576] [--repeats 7]

For each generator it times, interleaved (one generator after the other inside each repeat, so that a
slow moment of a shared machine hits all of them alike) and keeping the best of ``--repeats``:

* ``raw``: ``bit_generator.random_raw(n)``, the cost of one 64-bit word;
* ``double``: ``numpy.random.Generator(bit_generator).random(n)``, the cost of one uniform double.

Cryptographic status (what smoothdp may use as a *secure* default):

* ChaCha (20 rounds, 256-bit key): the ChaCha20 stream cipher (Bernstein 2008; RFC 8439). Secure.
* AESCounter (128-bit key): AES-128 in counter mode, AES-NI when the CPU has it. Secure (a standard
  block cipher in CTR mode; 2^128 period, we draw far fewer than the 2^64 blocks where CTR's birthday
  distinguisher would matter).
* HC128: an eSTREAM portfolio stream cipher. Designed to be secure, but far less analysed and deployed
  than AES or ChaCha20; measured for reference only.
* PCG64 (numpy's default): a statistical generator; its state is recoverable from outputs. NOT secure.
* Philox / ThreeFry (Random123): reduced-round counter-based generators designed for statistical
  quality, with no cryptographic claim. NOT secure.
* SPECK128 (34 rounds): a lightweight block cipher with little public confidence (rejected by ISO), and
  randomgen's implementation is not reviewed as a cipher. Not used as secure.
* BlaBla: an experimental ChaCha variant without a security analysis. Not used as secure.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import numpy as np
import randomgen

CANDIDATES: dict[str, tuple[Callable[[], np.random.BitGenerator], str]] = {
    "PCG64 (numpy)": (lambda: np.random.PCG64(1), "not secure"),
    "ChaCha20 (randomgen)": (lambda: randomgen.ChaCha(key=2**255 + 12345, rounds=20), "secure"),
    "AESCounter (randomgen)": (lambda: randomgen.AESCounter(key=2**127 + 12345), "secure"),
    "HC128 (randomgen)": (lambda: randomgen.HC128(key=2**255 + 12345), "stream cipher, less analysed"),
    "SPECK128 (randomgen)": (lambda: randomgen.SPECK128(key=2**255 + 12345), "not used as secure"),
    "Philox (numpy)": (lambda: np.random.Philox(1), "not secure"),
}


def _time(fn: Callable[[], object], times: list[float]) -> None:
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)


def measure(n: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Best ns per 64-bit word and per uniform double for every candidate."""
    gens = {name: make() for name, (make, _) in CANDIDATES.items()}
    numpy_gens = {name: np.random.Generator(bg) for name, bg in gens.items()}
    raw: dict[str, list[float]] = {name: [] for name in gens}
    dbl: dict[str, list[float]] = {name: [] for name in gens}
    for name in gens:  # warm-up
        gens[name].random_raw(n)
        numpy_gens[name].random(n)
    for _ in range(repeats):
        for name in gens:
            _time(lambda bg=gens[name]: bg.random_raw(n), raw[name])
            _time(lambda g=numpy_gens[name]: g.random(n), dbl[name])
    return {name: (min(raw[name]) / n * 1e9, min(dbl[name]) / n * 1e9) for name in gens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    aes = randomgen.AESCounter(key=1)
    chacha = randomgen.ChaCha(key=1, rounds=20)
    cpu = platform.processor() or platform.machine()
    print(f"numpy {np.__version__}, randomgen {randomgen.__version__}, {cpu}; AES-NI used: {aes.use_aesni}; ")
    print(f"ChaCha SIMD used: {chacha.use_simd}; n = {args.n}, best of {args.repeats}, interleaved")
    results = measure(args.n, args.repeats)
    base_dbl = results["PCG64 (numpy)"][1]
    print(f"{'generator':26s} {'ns/word':>8s} {'ns/double':>10s} {'× PCG64':>8s}  status")
    for name, (r, d) in results.items():
        print(f"{name:26s} {r:8.2f} {d:10.2f} {d / base_dbl:8.1f}  {CANDIDATES[name][1]}")


if __name__ == "__main__":
    main()
