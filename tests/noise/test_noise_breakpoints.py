"""NoiseDistribution.breakpoints(): where the slope of the log density jumps or is extreme.

The worst-case privacy-loss search puts output grid points there (it used to read ``shape``/``df``/``gamma``
attributes with getattr); each family now states its own points, and they are checked here numerically.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from smoothdp.noise import (
    DiscreteLaplace,
    Gaussian,
    GeneralizedCauchy,
    Laplace,
    NoiseDistribution,
    PlanarLaplace,
    PolyPlace,
    StudentT,
)


def _slope(noise: NoiseDistribution, x: np.ndarray, h: float) -> np.ndarray:
    return (noise.logpdf(x + h) - noise.logpdf(x - h)) / (2 * h)


@pytest.mark.parametrize(
    ("noise", "expected"),
    [
        (PolyPlace(2.0, 9.0), 2.0 / 9.0),
        (PolyPlace(1.0, 1.5), 1.0 / 1.5),
        (StudentT(3.0, scale=0.5), 0.5 * math.sqrt(3.0)),
        (StudentT(0.7), math.sqrt(0.7)),
        (GeneralizedCauchy(4.0, scale=3.0), 3.0 * 3.0**0.25),
        (GeneralizedCauchy(1.5), 0.5 ** (1 / 1.5)),
        (Laplace(2.0), 0.0),
    ],
    ids=lambda v: repr(v) if isinstance(v, NoiseDistribution) else "",
)
def test_breakpoints_are_stated_in_the_laws_units(noise, expected):
    assert noise.breakpoints() == pytest.approx((expected,), rel=1e-15, abs=0.0)


@pytest.mark.parametrize(
    "noise",
    [
        StudentT(3.0, scale=0.5),
        StudentT(10.0),
        GeneralizedCauchy(4.0, scale=3.0),
        GeneralizedCauchy(2.5),
        PolyPlace(2.0, 9.0),  # core and tail meet with the same slope −α/s, the steepest one
        PolyPlace(1.0, 3.0),
    ],
    ids=repr,
)
def test_the_log_slope_is_steepest_there(noise):
    (point,) = noise.breakpoints()
    x = np.linspace(1e-3, 20.0, 200_001) * noise.scale
    slopes = np.abs(_slope(noise, x, 1e-7 * noise.scale))
    assert x[np.argmax(slopes)] == pytest.approx(point, rel=1e-3)


@pytest.mark.parametrize("noise", [Laplace(2.0), Laplace(0.3)], ids=repr)
def test_laplace_has_its_slope_jump_there(noise):
    (point,) = noise.breakpoints()
    h = 1e-6 * noise.scale
    left = _slope(noise, np.array(point - 10 * h), h)
    right = _slope(noise, np.array(point + 10 * h), h)
    assert abs(float(right - left)) > 0.1 / noise.scale
    away = point + 0.05 * noise.scale
    assert float(_slope(noise, np.array(away - 10 * h), h) - _slope(noise, np.array(away + 10 * h), h)) == (
        pytest.approx(0.0, abs=1e-2 / noise.scale)
    )


def test_default_is_no_breakpoint():
    assert Gaussian(1.0).breakpoints() == ()
    assert DiscreteLaplace(2.0).breakpoints() == ()
    assert PlanarLaplace(1.0).breakpoints() == ()


def test_breakpoints_follow_the_scale():
    for noise in (PolyPlace(1.0, 4.0), StudentT(3.0), GeneralizedCauchy(4.0)):
        assert noise.with_scale(5.0).breakpoints() == pytest.approx(
            tuple(5.0 * p for p in noise.breakpoints())
        )
