import math

import pytest

from smoothdp.privacy import ApproxDP, GeoPrivacy, PureDP, compose


def test_pure_composition_adds_epsilons():
    g = PureDP(0.5) + PureDP(0.25)
    assert isinstance(g, PureDP) and g.epsilon == pytest.approx(0.75)


def test_pure_plus_approximate_is_approximate():
    g = compose(PureDP(1.0), ApproxDP(0.5, 1e-6), ApproxDP(0.5, 2e-6))
    assert isinstance(g, ApproxDP)
    assert g.epsilon == pytest.approx(2.0) and g.delta == pytest.approx(3e-6)


def test_geo_composes_only_with_geo_of_the_same_metric():
    g = GeoPrivacy(0.1) + GeoPrivacy(0.2, 1e-9)
    assert isinstance(g, GeoPrivacy) and g.epsilon == pytest.approx(0.3) and g.delta == pytest.approx(1e-9)
    with pytest.raises(TypeError, match="geo-privacy"):
        GeoPrivacy(0.1) + PureDP(1.0)
    with pytest.raises(TypeError, match="metric"):
        GeoPrivacy(0.1) + GeoPrivacy(0.1, metric="manhattan")


@pytest.mark.parametrize("eps", [0.0, -1.0, math.inf, math.nan])
def test_bad_epsilon_is_refused_with_its_name(eps):
    with pytest.raises(ValueError, match="epsilon"):
        PureDP(eps)


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 2.0, math.nan])
def test_bad_delta_is_refused_with_its_name(delta):
    with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
        ApproxDP(1.0, delta)


def test_pure_dp_refuses_a_delta_and_composition_refuses_delta_one():
    with pytest.raises(ValueError, match="delta"):
        PureDP(1.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        ApproxDP(1.0, 0.6) + ApproxDP(1.0, 0.6)


def test_string_forms_name_the_guarantee():
    assert str(PureDP(1)) == "1-DP"
    assert str(ApproxDP(1, 1e-6)) == "(1, 1e-06)-DP"
    assert "geo-privacy" in str(GeoPrivacy(0.5))
