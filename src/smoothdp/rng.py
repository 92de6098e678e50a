"""Randomness for smoothdp: the only place generators are made.

Every function in the library that draws random numbers takes ``rng=None`` (keyword-only) and passes
it through :func:`resolve_rng`. ``None`` means the process's **cryptographically secure** generator
(:func:`shared_secure_rng`, keyed once per process and again in a forked child): numpy's
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

Randomness drawn away from the caller (on the workers of a cluster, docs/scale.md#randomness-on-workers)
comes from :func:`stream_key`: a fresh 256-bit key drawn from the caller's generator, from which
:meth:`StreamKey.generator` makes disjoint ChaCha20 streams, one per partition. No generator is ever
shipped: a worker rebuilds its stream from the key, so a retried task draws the same numbers again.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from randomgen import AESCounter, ChaCha

__all__ = [
    "SeedLike",
    "StreamKey",
    "default_rng",
    "is_secure",
    "resolve_rng",
    "secure_bit_generator_name",
    "shared_secure_rng",
    "stream_key",
]

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

    ``None`` gives the process's secure generator (:func:`shared_secure_rng`: keyed from the operating
    system once per process, re-keyed in a forked child); an int or SeedSequence gives a reproducible one
    (:func:`default_rng`); a :class:`numpy.random.Generator` is used as it is, so a caller can draw
    several releases from one stream (it counts as secure only if :func:`default_rng` made it without a
    seed, see :func:`is_secure`).
    """
    if rng is None:
        return shared_secure_rng()
    if isinstance(rng, int | np.integer | np.random.SeedSequence):
        return default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(
        "rng must be None (secure), a seed, or a numpy Generator from smoothdp.rng.default_rng; "
        f"got {type(rng).__name__}"
    )


# -- the process's secure generator ------------------------------------------------------------------------
_shared: _Generator | None = None
_shared_pid = -1
_shared_lock = threading.Lock()


def shared_secure_rng() -> np.random.Generator:
    """The secure generator every ``rng=None`` release of this process draws from.

    One AES-128-CTR (or ChaCha20) stream keyed from the operating system on first use, instead of a new
    key per release (keying costs a system call and a key schedule; the stream is just as unpredictable:
    its key never leaves the process). **Fork-safe**: a child made by ``os.fork`` (multiprocessing's
    default on Linux, a forking server) never draws from its parent's stream, which would repeat the
    parent's noise: the child drops the stream in an ``os.register_at_fork`` hook and, should a fork
    escape that hook, on noticing that its process id changed; it then keys a fresh one from the operating
    system. Threads share the stream (numpy's generators serialize draws with a lock).
    """
    global _shared, _shared_pid
    gen = _shared
    if gen is None or _shared_pid != os.getpid():
        with _shared_lock:
            if _shared is None or _shared_pid != os.getpid():
                _shared, _shared_pid = _Generator(_secure_bit_generator(), secure=True), os.getpid()
            gen = _shared
    return gen


def _forget_shared_after_fork() -> None:
    """In a forked child: drop the parent's stream and lock (a fresh key is drawn on first use)."""
    global _shared, _shared_pid, _shared_lock
    _shared, _shared_pid, _shared_lock = None, -1, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere processes are spawned, not forked
    os.register_at_fork(after_in_child=lambda: _forget_shared_after_fork())


def is_secure(rng: np.random.Generator) -> bool:
    """True when ``rng`` was made by :func:`default_rng` without a seed (keyed from the OS).

    Any other generator (seeded, numpy's own, a copy of a secure one) is not: releases drawn from it
    are simulations.
    """
    return isinstance(rng, _Generator) and rng.secure


# -- disjoint streams keyed from a parent generator ---------------------------------------------------------
#: Streams per key: the high 64 bits of ChaCha20's 128-bit counter hold the stream index.
MAX_STREAMS = 1 << 64


@dataclass(frozen=True, repr=False)
class StreamKey:
    """A 256-bit key drawn from a parent generator, and the disjoint ChaCha20 streams it keys.

    Made by :func:`stream_key` only (``secure`` is the parent's :func:`is_secure`). Stream ``s`` is
    ChaCha20 (20 rounds) under ``key`` with randomgen's 128-bit counter started at s·2^64. That counter
    counts 32-bit keystream words, 16 per ChaCha20 block, and the block index it implies fills the four
    counter/nonce words (12–15) of the ChaCha20 state as one 128-bit integer (a test checks the words
    against an independent ChaCha20 block function and the RFC 8439 test vector). Stream s therefore
    reads blocks s·2^60 … (s+1)·2^60 − 1 of the keystream of ``key``: the streams are disjoint ranges of
    one keystream (2^63 doubles each), exactly as distinct nonces would give, and no two of them ever
    share a ChaCha20 input. The key is the secret: whoever holds it can replay every stream, so it
    travels with the work (a dask graph) and must be treated like the data itself. Its repr hides it,
    and dask tokenizes it through SHA-256 (:meth:`__dask_tokenize__`).
    """

    key: int
    secure: bool

    def generator(self, stream: int) -> np.random.Generator:
        """The generator of stream ``stream`` (0 ≤ stream < 2^64): the same numbers on every call.

        It counts as secure (:func:`is_secure`) exactly when the parent generator did.
        """
        if isinstance(stream, bool) or not isinstance(stream, int | np.integer):
            raise TypeError(f"stream must be an int in [0, 2**64); got {stream!r}")
        if not 0 <= int(stream) < MAX_STREAMS:
            raise ValueError(f"stream must be in [0, 2**64); got {stream}")
        bits = ChaCha(key=self.key, counter=int(stream) << 64, rounds=_CHACHA_ROUNDS)
        return _Generator(bits, secure=self.secure)

    def __repr__(self) -> str:
        return f"StreamKey(<256-bit key hidden>, secure={self.secure})"

    def __dask_tokenize__(self) -> str:
        """A name for dask's graph keys that does not reveal the key (SHA-256, domain-separated)."""
        digest = hashlib.sha256(b"smoothdp stream key\x00" + self.key.to_bytes(32, "little"))
        return f"{digest.hexdigest()}-{int(self.secure)}"


def stream_key(rng: np.random.Generator) -> StreamKey:
    """A fresh 256-bit :class:`StreamKey` drawn from ``rng`` (a resolved generator: :func:`resolve_rng`).

    The key is secure when ``rng`` is (:func:`is_secure`); from a seeded generator it is reproducible, and
    so is every stream made from it (a simulation).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (see resolve_rng); got {type(rng).__name__}")
    return StreamKey(key=int.from_bytes(rng.bytes(32), "little"), secure=is_secure(rng))
