"""Randomness for smoothdp: the only place generators are made.

Every function in the library that draws random numbers takes ``rng=None`` and passes it through
:func:`resolve_rng`. ``None`` means a fresh **cryptographically secure** generator: numpy's
:class:`~numpy.random.Generator` over randomgen's ChaCha (20 rounds), keyed with 256 bits from the
operating system. That is the right choice for any release of real data.

A seed (an integer, or a :class:`numpy.random.SeedSequence`) gives a *reproducible* generator over the
same ChaCha20 stream. Reproducible means predictable: use seeds only for simulations and tests, never
for releases an adversary may see.

Why ChaCha20 and not numpy's PCG64: PCG64 is a fast statistical generator whose state can be
recovered from its outputs; a DP release must not let an observer predict the noise.
"""

from __future__ import annotations

import secrets

import numpy as np
from randomgen import ChaCha

__all__ = ["SeedLike", "default_rng", "is_secure", "resolve_rng"]

#: What callers may pass as ``rng``: nothing (secure), a seed, or a generator made by :func:`default_rng`.
SeedLike = int | np.random.SeedSequence | np.random.Generator | None

_CHACHA_ROUNDS = 20


class _Generator(np.random.Generator):
    """A numpy Generator that remembers whether it was keyed from the OS (``secure``)."""

    secure: bool = False


def default_rng(seed: int | np.random.SeedSequence | None = None) -> np.random.Generator:
    """Make a generator over the ChaCha20 stream cipher.

    Parameters
    ----------
    seed
        ``None`` (default): a cryptographically secure generator keyed from the operating system
        (:func:`secrets.randbits`). An int or :class:`numpy.random.SeedSequence`: a reproducible generator,
        **for simulations and tests only**.

    Returns
    -------
    numpy.random.Generator
        A numpy generator, so every numpy sampling method is available on it.
    """
    if seed is None:
        bit_generator = ChaCha(key=secrets.randbits(256), counter=0, rounds=_CHACHA_ROUNDS)
        secure = True
    else:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer | np.random.SeedSequence):
            raise TypeError(
                f"seed must be None (secure), a non-negative int or a numpy SeedSequence; got {seed!r}"
            )
        if isinstance(seed, int | np.integer) and seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {seed}")
        bit_generator = ChaCha(seed=seed, rounds=_CHACHA_ROUNDS)
        secure = False
    generator = _Generator(bit_generator)
    generator.secure = secure
    return generator


def resolve_rng(rng: SeedLike = None) -> np.random.Generator:
    """Turn the ``rng`` argument of a sampling function into a generator.

    ``None`` gives a new secure generator; an int or SeedSequence gives a reproducible one
    (:func:`default_rng`); a :class:`numpy.random.Generator` is used as it is, so a caller can draw
    several releases from one stream.
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
    """True when ``rng`` was made by :func:`default_rng` without a seed (keyed from the OS)."""
    return bool(getattr(rng, "secure", False))
