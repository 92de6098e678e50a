"""The one rounding helper: sensitivities go up, never down."""

from fractions import Fraction

import numpy as np

from smoothdp.sensitivity import round_up


def test_round_up_is_strictly_above_positive_values_and_keeps_zero():
    x = np.array([0.0, 1e-300, 0.1, 1.0, 3.7e12])
    up = round_up(x)
    assert up.shape == x.shape
    assert up[0] == 0.0
    assert np.all(up[1:] > x[1:])
    assert np.all(up[1:] <= x[1:] * (1 + 2e-12))


def test_round_up_dominates_the_error_of_a_float_computation():
    # exp(-b t)/w computed in floats, compared with the exact rational value of the same float inputs.
    rng = np.random.default_rng(1)
    for _ in range(200):
        a, b = rng.uniform(0.01, 10, size=2)
        computed = a / b + a * b
        exact = Fraction(a) / Fraction(b) + Fraction(a) * Fraction(b)
        assert Fraction(float(round_up(computed))) >= exact


def test_round_up_moves_subnormals_up():
    x = np.array([5e-324, 1e-310])
    assert np.all(round_up(x) > x)
