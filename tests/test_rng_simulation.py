import copy
import pickle

import numpy as np
import pytest
import randomgen

import smoothdp
from smoothdp.accounting import Accountant
from smoothdp.rng import default_rng, is_secure, resolve_rng, secure_bit_generator_name

NOTE = "SIMULATION (seeded or non-cryptographic generator): not private"
X = np.linspace(1.0, 99.0, 41)


def test_secure_default_is_a_standard_cipher():
    bg = default_rng().bit_generator
    has_aesni = randomgen.AESCounter(key=0).use_aesni
    if has_aesni:
        assert isinstance(bg, randomgen.AESCounter) and bg.use_aesni
        assert secure_bit_generator_name().startswith("AES")
    else:
        assert isinstance(bg, randomgen.ChaCha)
        assert secure_bit_generator_name() == "ChaCha20"


def test_seeded_streams_stay_chacha20_for_reproducibility():
    assert isinstance(default_rng(5).bit_generator, randomgen.ChaCha)
    expected = np.random.Generator(randomgen.ChaCha(seed=5, rounds=20)).random(5)
    np.testing.assert_array_equal(default_rng(5).random(5), expected)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.random.default_rng(7),
        lambda: np.random.Generator(np.random.PCG64()),
        lambda: np.random.Generator(randomgen.ChaCha(key=1, rounds=20)),  # not keyed by smoothdp
        lambda: copy.deepcopy(default_rng()),  # a copy replays the stream
        lambda: pickle.loads(pickle.dumps(default_rng())),
        lambda: default_rng(3),
    ],
)
def test_only_os_keyed_generators_from_default_rng_are_secure(make):
    assert not is_secure(make())


def test_secure_flag_is_read_only():
    g = default_rng(1)
    with pytest.raises(AttributeError):
        g.secure = True  # type: ignore[misc]
    assert not is_secure(g)
    assert is_secure(resolve_rng(None))


@pytest.mark.parametrize("rng", [7, np.random.SeedSequence(7), "numpy", "pcg"])
def test_a_non_secure_generator_makes_a_simulation(rng):
    if rng == "numpy":
        rng = np.random.default_rng(7)
    elif rng == "pcg":
        rng = np.random.Generator(np.random.PCG64(7))
    release = smoothdp.median(X, epsilon=1.0, bounds=(0.0, 100.0), rng=rng)
    assert release.is_simulation
    assert NOTE in str(release) and NOTE in release.guarantee_text
    assert release.to_dict()["is_simulation"] is True and NOTE in release.to_dict()["guarantee_text"]
    assert "is_simulation=True" in repr(release)
    # The guarantee object itself is the mechanism's declared one (composition and accounting unchanged).
    assert release.guarantee == smoothdp.PureDP(1.0)


def test_a_secure_release_is_not_a_simulation():
    release = smoothdp.median(X, epsilon=1.0, bounds=(0.0, 100.0))
    assert not release.is_simulation
    assert "SIMULATION" not in str(release) and release.guarantee_text == str(release.guarantee)
    assert release.to_dict()["is_simulation"] is False


def test_a_simulation_is_still_charged_to_the_accountant():
    acc = Accountant(epsilon=1.5)
    smoothdp.median(X, epsilon=1.0, bounds=(0.0, 100.0), rng=3, accountant=acc)
    with pytest.raises(smoothdp.BudgetError):
        smoothdp.median(X, epsilon=1.0, bounds=(0.0, 100.0), rng=4, accountant=acc)
