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
