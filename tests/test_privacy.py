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


# -- neighbour relations -------------------------------------------------------------------------------------
def test_guarantees_record_their_neighbour_relation_and_default_to_substitution():
    assert PureDP(1.0).neighbours == "substitution"
    assert ApproxDP(1.0, 1e-6, neighbours="add_remove").neighbours == "add_remove"
    assert GeoPrivacy(0.1).neighbours == "metric"
    with pytest.raises(ValueError, match="neighbours must be one of"):
        PureDP(1.0, neighbours="hamming")
    with pytest.raises(ValueError, match="neighbours"):
        GeoPrivacy(0.1, neighbours="substitution")


def test_composition_refuses_to_mix_relations_and_says_how_to_convert():
    with pytest.raises(ValueError, match=r"as_substitution"):
        PureDP(0.5) + PureDP(0.2, neighbours="add_remove")
    with pytest.raises(ValueError, match="neighbour relation"):
        PureDP(0.5, neighbours="local") + PureDP(0.2)


def test_add_remove_converts_to_substitution_by_group_privacy():
    g = ApproxDP(0.3, 1e-6, neighbours="add_remove").as_substitution()
    assert g.neighbours == "substitution"
    assert g.epsilon >= 0.6 and g.epsilon == pytest.approx(0.6)
    assert g.delta >= (1 + math.exp(0.3)) * 1e-6 * (1 - 1e-15)
    assert PureDP(0.2).as_substitution() == PureDP(0.2)
    with pytest.raises(ValueError, match="no substitution form"):
        PureDP(0.2, neighbours="local").as_substitution()
    with pytest.raises(ValueError, match="geo-privacy"):
        GeoPrivacy(0.1).as_substitution()


def test_sum_of_release_guarantees_works():
    assert sum([PureDP(0.25), PureDP(0.5), ApproxDP(0.25, 1e-9)]) == compose(
        PureDP(0.25), PureDP(0.5), ApproxDP(0.25, 1e-9)
    )
    with pytest.raises(TypeError):
        PureDP(0.5) + 1.0


def test_composed_epsilon_is_never_below_the_exact_sum():
    from fractions import Fraction

    parts = [0.1] * 10 + [0.7, 1e-17]
    total = compose(*(PureDP(e) for e in parts)).epsilon
    assert Fraction(total) >= sum(map(Fraction, parts))
    assert total == pytest.approx(1.7)


def test_zcdp_composes_with_pure_and_converts_to_approximate_dp():
    from smoothdp.privacy import ZCDP

    z = ZCDP(0.1) + PureDP(0.2)  # 0.2-DP is 0.02-zCDP
    assert isinstance(z, ZCDP) and z.rho == pytest.approx(0.12)
    a = ZCDP(0.5).as_approx_dp(1e-6)
    assert a.epsilon == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    with pytest.raises(TypeError, match="zCDP"):
        ZCDP(0.1) + ApproxDP(0.2, 1e-6)
    with pytest.raises(ValueError, match="rho"):
        ZCDP(0.0)
