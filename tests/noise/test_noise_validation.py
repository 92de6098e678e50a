"""Bad input: every constructor argument and ppf's q get a ValueError naming the parameter."""

from __future__ import annotations

import math

import pytest

from smoothdp.noise import (
    DiscreteLaplace,
    Gaussian,
    GeneralizedCauchy,
    Laplace,
    PlanarLaplace,
    PolyPlace,
    StudentT,
)

BAD_POSITIVE = [0.0, -1.0, math.nan, math.inf, -math.inf]

SCALE_FACTORIES = {
    "laplace": lambda s: Laplace(s),
    "gaussian": lambda s: Gaussian(s),
    "discrete_laplace": lambda s: DiscreteLaplace(s),
    "planar_laplace": lambda s: PlanarLaplace(s),
    "polyplace": lambda s: PolyPlace(s, 3.0),
    "student_t": lambda s: StudentT(3.0, s),
    "gen_cauchy": lambda s: GeneralizedCauchy(4.0, s),
}


@pytest.mark.parametrize("bad", BAD_POSITIVE)
@pytest.mark.parametrize("family", SCALE_FACTORIES)
def test_bad_scale(family: str, bad: float) -> None:
    with pytest.raises(ValueError, match=r"scale must be in"):
        SCALE_FACTORIES[family](bad)
    with pytest.raises(ValueError, match=r"scale must be in"):
        SCALE_FACTORIES[family](1.0).with_scale(bad)


@pytest.mark.parametrize("bad", [1.0, 0.5, -2.0, math.nan, math.inf])
def test_bad_polyplace_shape(bad: float) -> None:
    with pytest.raises(ValueError, match=r"shape must be in \(1, inf\)"):
        PolyPlace(1.0, bad)


@pytest.mark.parametrize("bad", [1.0, 0.9, 0.0, math.nan, math.inf])
def test_bad_cauchy_gamma(bad: float) -> None:
    with pytest.raises(ValueError, match=r"gamma must be in \(1, inf\)"):
        GeneralizedCauchy(bad)


@pytest.mark.parametrize("bad", [0.0, -3.0, math.nan, math.inf])
def test_bad_student_df(bad: float) -> None:
    with pytest.raises(ValueError, match=r"df must be in \(0, inf\)"):
        StudentT(bad)


@pytest.mark.parametrize("arg", ["3", None, True])
def test_non_numbers_are_type_errors(arg) -> None:
    with pytest.raises(TypeError, match="shape"):
        PolyPlace(1.0, arg)
    with pytest.raises(TypeError, match="scale"):
        Gaussian(arg)


@pytest.mark.parametrize("family", SCALE_FACTORIES)
@pytest.mark.parametrize("bad_q", [-0.1, 1.5, math.nan, [0.2, 1.01]])
def test_ppf_outside_unit_interval(family: str, bad_q) -> None:
    with pytest.raises(ValueError, match=r"^q must"):
        SCALE_FACTORIES[family](1.0).ppf(bad_q)


def test_bad_rng_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="rng"):
        PolyPlace(1.0, 3.0).sample(3, rng="seed")
