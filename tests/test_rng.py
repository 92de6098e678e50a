import numpy as np
import pytest
from scipy import stats

from smoothdp.rng import default_rng, is_secure, resolve_rng


def test_unseeded_generators_are_secure_and_independent():
    a, b = default_rng(), default_rng()
    assert is_secure(a) and is_secure(b)
    # Two OS-keyed streams must differ (probability of equality 2^-6400).
    assert not np.array_equal(a.integers(0, 2**32, 200), b.integers(0, 2**32, 200))


def test_seeded_generators_reproduce_and_are_labelled_insecure():
    a, b = default_rng(123), default_rng(123)
    assert not is_secure(a)
    np.testing.assert_array_equal(a.random(50), b.random(50))
    assert not np.array_equal(default_rng(1).random(50), default_rng(2).random(50))


def test_resolve_rng_passes_generators_through_and_makes_secure_ones():
    g = default_rng(5)
    assert resolve_rng(g) is g
    assert is_secure(resolve_rng(None))
    np.testing.assert_array_equal(resolve_rng(9).random(3), default_rng(9).random(3))


def test_secure_stream_is_uniform():
    u = default_rng().random(20_000)
    assert stats.kstest(u, "uniform").pvalue > 1e-6


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", True])
def test_bad_seeds_are_refused(bad):
    with pytest.raises((TypeError, ValueError), match="seed"):
        default_rng(bad)


def test_resolve_rng_refuses_legacy_random_state():
    with pytest.raises(TypeError, match="rng"):
        resolve_rng(np.random.RandomState(0))


# -- the process's secure generator ------------------------------------------------------------------------
def test_rng_none_is_one_secure_stream_per_process() -> None:
    a, b = resolve_rng(None), resolve_rng(None)
    assert a is b and is_secure(a)
    assert not np.array_equal(a.integers(0, 2**32, 50), b.integers(0, 2**32, 50))  # one stream, moving on


def _parent_and_child_draws() -> tuple[bytes, bytes]:
    """32 bytes from rng=None's stream in this process and in a child forked right after it."""
    import os

    resolve_rng(None).bytes(8)  # the parent's stream exists before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, resolve_rng(None).bytes(32))
        finally:
            os._exit(0)
    os.close(write)
    parent = resolve_rng(None).bytes(32)
    child = os.read(read, 32)
    os.close(read)
    os.waitpid(pid, 0)
    return parent, child


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no os.fork on this platform")
def test_forked_child_does_not_share_the_parents_stream() -> None:
    parent, child = _parent_and_child_draws()
    assert len(child) == 32 and parent != child


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no os.fork on this platform")
def test_broken_twin_without_rekeying_the_child_repeats_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """With both safeguards off (no at-fork hook, a process id that never changes) the child draws the
    parent's very bytes: the test above would catch a generator shared across a fork."""
    import os

    import smoothdp.rng as rng_module

    pid = os.getpid()
    monkeypatch.setattr(rng_module, "_forget_shared_after_fork", lambda: None)
    monkeypatch.setattr(rng_module.os, "getpid", lambda: pid)
    parent, child = _parent_and_child_draws()
    assert parent == child
