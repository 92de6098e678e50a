from fractions import Fraction

import numpy as np
import pytest

from smoothdp.audit import (
    LatticeSampler,
    grid_cell,
    numpy_laplace_release,
    numpy_laplace_std,
    producible_on_grid,
    producible_on_lattice,
    unproducible_share,
)
from smoothdp.exact import OutputGrid


def test_numpy_laplace_model_reproduces_numpy_bit_for_bit():
    words = np.random.default_rng(3).bit_generator.random_raw(50_000)
    k = (words >> np.uint64(11)).astype(np.int64)
    k = k[k > 0]  # numpy rejects U = 0
    draws = np.random.default_rng(3).laplace(0.0, 1.0, k.size)
    np.testing.assert_array_equal(numpy_laplace_std(k), draws)


def test_toy_lattice_image_is_decided_exactly():
    def output(k):
        return 2.0 * (np.asarray(k) // 3)  # non-decreasing, image {0, 2, ..., 20} on [0, 30]

    y = np.array([0.0, 2.0, 20.0, 1.0, 22.0, -2.0, np.nan, 19.999999999999996])
    expected = np.array([True, True, True, False, False, False, False, False])
    np.testing.assert_array_equal(producible_on_lattice(y, output, first=0, last=30), expected)
    np.testing.assert_array_equal(
        producible_on_lattice(-y, lambda k: -output(k), first=0, last=30, increasing=False), expected
    )


def test_bisection_agrees_with_brute_force_on_a_small_lattice():
    bits = 18
    c, s = 0.3, 3.7

    def output(k):
        u = np.ldexp(np.asarray(k, dtype=np.float64), -bits)
        return c + s * np.log(u)  # increasing in k; only the map matters here

    image = output(np.arange(1, 2**bits))
    gen = np.random.default_rng(0)
    picks = image[gen.integers(0, image.size, 400)]
    y = np.concatenate([picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf)])
    sampler = LatticeSampler(output, 1, 2**bits - 1)
    np.testing.assert_array_equal(sampler.producible(y), np.isin(y, image))
    assert sampler.is_monotone_on_sample(samples=2000, rng=gen)


def test_float_laplace_release_is_porous_and_self_consistent():
    model = numpy_laplace_release(0.5, 42.0, 2.0)
    gen = np.random.default_rng(1)
    own = 0.5 + 42.0 * (2.0 * gen.laplace(0.0, 1.0, 500))
    assert unproducible_share(own, model.producible) == 0.0
    # Floats between two consecutive outputs exist wherever the output lattice is sparser than floats.
    k = np.arange(2**52, 2**52 + 50, dtype=np.int64)
    a, b = model.output(k), model.output(k + 1)
    gap = np.nextafter(a, np.inf) < b
    assert gap.any()
    assert not model.producible(np.nextafter(a[gap], np.inf)).any()


GRID = OutputGrid(exponent=3, precision=10)


@pytest.mark.parametrize("y", [0.0, 1.0, -1.0, 8.0, -8.0, 16.0, 7.9921875, 8.015625, 0.0078125, 1000.0])
def test_grid_cell_matches_the_rounding(y):
    assert float(GRID.round(y)) == y
    lower, upper = grid_cell(y, GRID)
    assert lower < Fraction(y) < upper
    lo, hi = float(lower), float(upper)
    assert Fraction(lo) == lower and Fraction(hi) == upper
    assert float(GRID.round(np.nextafter(lo, np.inf))) == y
    assert float(GRID.round(np.nextafter(hi, -np.inf))) == y
    assert float(GRID.round(np.nextafter(lo, -np.inf))) != y
    assert float(GRID.round(np.nextafter(hi, np.inf))) != y


def test_grid_cell_is_none_off_the_grid():
    assert grid_cell(0.001, GRID) is None
    assert grid_cell(np.inf, GRID) is None


def test_producible_on_grid():
    y = np.array([1.0, 0.001, 5.0, np.nan])
    np.testing.assert_array_equal(
        producible_on_grid(y, grid=GRID, center=0.3, sensitivity=2.0), [True, False, True, False]
    )
    # Bounded support: c + S·(0, 1) = (0.3, 2.3) meets the cells of 1.0 but not that of 5.0.
    np.testing.assert_array_equal(
        producible_on_grid(y, grid=GRID, center=0.3, sensitivity=2.0, support=(0.0, 1.0)),
        [True, False, False, False],
    )
    # S = 0: only R(c).
    assert producible_on_grid(np.array([1.0, 0.0]), grid=GRID, center=1.001, sensitivity=0.0).tolist() == [
        True,
        False,
    ]


def test_unproducible_share_checks_its_inputs():
    assert unproducible_share([1.0, 2.0, 3.0, 4.0], lambda y: y < 3) == 0.5
    with pytest.raises(ValueError, match="empty"):
        unproducible_share([], lambda y: y)
    with pytest.raises(ValueError, match="one bool per output"):
        unproducible_share([1.0, 2.0], lambda y: np.array([True]))
