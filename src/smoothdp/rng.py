"""Randomness for smoothdp: the only place generators are made.

Every function in the library that draws random numbers takes ``rng=None`` (keyword-only) and passes
it through :func:`resolve_rng`. ``None`` means a fresh **cryptographically secure** generator: numpy's
:class:`~numpy.random.Generator` over a stream cipher keyed from the operating system
(:func:`secrets.randbits`):

* AES-128 in counter mode (randomgen's ``AESCounter``, 128-bit key) when the CPU has AES-NI;
* otherwise ChaCha20 (randomgen's ``ChaCha`` with 20 rounds, 256-bit key).

Both are standard ciphers whose keystream cannot be predicted without the key. AES-NI counter mode
costs about 1.3× numpy's PCG64 per uniform double, ChaCha20 about 6.7× (``benchmarks/bench_rng.py``);
software AES is slower than ChaCha20 and table-based, hence the fallback. Reduced-round or statistical
generators (PCG64, Philox, ThreeFry, SFC64, ...) and lightly analysed ciphers (SPECK128, BlaBla) are never
treated as secure.

A seed (an integer, or a :class:`numpy.random.SeedSequence`) gives a *reproducible* generator over the
ChaCha20 stream (the same stream on every machine). Reproducible means predictable: a release drawn from
a seeded generator, or from any generator not made secure here (``numpy.random.default_rng(7)``, a
``Generator(PCG64())``, a copy or an unpickled copy of a secure one, ...) is a **simulation**:
:meth:`smoothdp.mechanism.Mechanism.release` marks it ``Release.is_simulation`` and its guarantee text says
it is not private (:data:`smoothdp.release.SIMULATION_NOTE`).
"""

from __future__ import annotations

import secrets
from functools import lru_cache

import numpy as np
from randomgen import AESCounter, ChaCha

__all__ = ["SeedLike", "default_rng", "is_secure", "resolve_rng", "secure_bit_generator_name"]

#: What callers may pass as ``rng``: nothing (secure), a seed, or a generator made by :func:`default_rng`.
SeedLike = int | np.random.SeedSequence | np.random.Generator | None

_CHACHA_ROUNDS = 20


@lru_cache(maxsize=1)
def _has_aesni() -> bool:
    """Whether randomgen's AESCounter runs on AES-NI on this CPU (checked once)."""
    try:
        return bool(AESCounter(key=0).use_aesni)
    except Exception:  # pragma: no cover - randomgen built without AES support
        return False


def secure_bit_generator_name() -> str:
    """The cipher behind the secure default on this machine (``"AES-128-CTR (AES-NI)"`` or ``"ChaCha20"``)."""
    return "AES-128-CTR (AES-NI)" if _has_aesni() else "ChaCha20"


def _secure_bit_generator() -> np.random.BitGenerator:
    if _has_aesni():
        return AESCounter(key=secrets.randbits(128), counter=0)
    return ChaCha(key=secrets.randbits(256), counter=0, rounds=_CHACHA_ROUNDS)


class _Generator(np.random.Generator):
    """A numpy Generator that remembers whether smoothdp keyed it from the OS (read-only ``secure``).

    A copy (``copy.deepcopy``, pickling) or a ``spawn`` of it is a plain numpy Generator, hence not
    secure: its stream is known to whoever holds the copy.
    """

    def __init__(self, bit_generator: np.random.BitGenerator, *, secure: bool) -> None:
        super().__init__(bit_generator)
        self._smoothdp_secure = bool(secure)

    @property
    def secure(self) -> bool:
        """True when keyed from the operating system by :func:`default_rng`."""
        return self._smoothdp_secure


def default_rng(seed: int | np.random.SeedSequence | None = None) -> np.random.Generator:
    """Make a generator: secure (no seed) or reproducible (a seed, simulations only).

    Parameters
    ----------
    seed
        ``None`` (default): a cryptographically secure generator, AES-128-CTR with AES-NI or ChaCha20,
        keyed from the operating system (:func:`secrets.randbits`). An int or
        :class:`numpy.random.SeedSequence`: a reproducible ChaCha20 generator, **for simulations and
        tests only** (a release drawn from it is marked as a simulation).

    Returns
    -------
    numpy.random.Generator
        A numpy generator, so every numpy sampling method is available on it.
    """
    if seed is None:
        return _Generator(_secure_bit_generator(), secure=True)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer | np.random.SeedSequence):
        raise TypeError(
            f"seed must be None (secure), a non-negative int or a numpy SeedSequence; got {seed!r}"
        )
    if isinstance(seed, int | np.integer) and seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed}")
    return _Generator(ChaCha(seed=seed, rounds=_CHACHA_ROUNDS), secure=False)


def resolve_rng(rng: SeedLike = None) -> np.random.Generator:
    """Turn the ``rng`` argument of a sampling function into a generator.

    ``None`` gives a new secure generator; an int or SeedSequence gives a reproducible one
    (:func:`default_rng`); a :class:`numpy.random.Generator` is used as it is, so a caller can draw
    several releases from one stream (it counts as secure only if :func:`default_rng` made it without a
    seed, see :func:`is_secure`).
    """
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        return default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(
        "rng must be None (secure), a seed, or a numpy Generator from smoothdp.rng.default_rng; "
        f"got {type(rng).__name__}"
    )


def is_secure(rng: np.random.Generator) -> bool:
    """True when ``rng`` was made by :func:`default_rng` without a seed (keyed from the OS).

    Any other generator (seeded, numpy's own, a copy of a secure one) is not: releases drawn from it
    are simulations.
    """
    return isinstance(rng, _Generator) and rng.secure
