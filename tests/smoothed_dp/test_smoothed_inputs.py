"""Bad input gets a clear error naming the parameter; the election data and the theory helpers."""

import math
from fractions import Fraction

import numpy as np
import pytest

from smoothdp.data.elections import load_election_2020, load_election_history
from smoothdp.smoothed_dp import (
    QuantizedSamplingAverage,
    SamplingAverage,
    SamplingHistogram,
    hull_vertices,
    privacy_profile,
    smoothed_delta,
)
from smoothdp.smoothed_dp.theory import (
    in_theorem3_regime,
    large_epsilon_delta,
    remark8_delta_bound,
    theorem3_epsilon_threshold,
)

PI = [[0.9, 0.1], [0.3, 0.7]]


@pytest.mark.parametrize("eta", [0, 1, -0.2, 1.5, float("nan"), float("inf")])
def test_eta_outside_the_open_unit_interval(eta):
    with pytest.raises(ValueError, match="eta"):
        SamplingHistogram(eta=eta)


def test_sample_size_is_exact():
    assert SamplingHistogram(eta=0.07).sample_size(100) == 7  # 0.07·100 = 7.000000000000001 in floats
    assert SamplingHistogram(eta=Fraction(1, 3)).sample_size(9) == 3
    assert SamplingHistogram(eta=0.998).removed(100_000) == 200
    with pytest.raises(ValueError, match="exceeds"):
        SamplingHistogram(size=10).sample_size(5)
    with pytest.raises(ValueError, match="exactly one"):
        SamplingHistogram(eta=0.5, size=3)
    with pytest.raises(TypeError, match="eta"):
        SamplingHistogram(eta="0.5")


@pytest.mark.parametrize(
    ("distributions", "match"),
    [
        ([[0.5, 0.6], [0.3, 0.7]], "sum to 1"),
        ([[1.2, -0.2], [0.3, 0.7]], "non-negative"),
        ([[0.5, 0.5, 0.0]][0][:1], "m ≥ 2"),
        ([[[0.5, 0.5]]], "ndim"),
        ([[0.5, np.nan]], "finite"),
    ],
)
def test_bad_distributions(distributions, match):
    with pytest.raises(ValueError, match=match):
        smoothed_delta(SamplingHistogram(eta=0.5), 1.0, 10, distributions)


def test_bad_n_epsilon_mixtures():
    mech = SamplingHistogram(eta=0.5)
    with pytest.raises(ValueError, match="n must be"):
        smoothed_delta(mech, 1.0, 0, PI)
    with pytest.raises(TypeError, match="n must be an integer"):
        smoothed_delta(mech, 1.0, 10.5, PI)
    for eps in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            smoothed_delta(mech, eps, 10, PI)
    with pytest.raises(ValueError, match="mixtures"):
        smoothed_delta(mech, 1.0, 10, PI, mixtures="some")
    with pytest.raises(TypeError, match="SamplingAverage"):
        smoothed_delta(SamplingAverage(eta=0.5), 1.0, 10, PI)
    with pytest.raises(TypeError, match="mechanism"):
        smoothed_delta(object(), 1.0, 10, PI)
    # m = 3 without replacement has the large-n bracket; m = 4, and sampling with replacement, enumerate
    with pytest.raises(ValueError, match="too large"):
        smoothed_delta(mech, 1.0, 400, [[0.2, 0.3, 0.4, 0.1], [0.5, 0.3, 0.1, 0.1]])
    with pytest.raises(ValueError, match="too large"):
        smoothed_delta(SamplingHistogram(eta=0.5, replace=True), 1.0, 400, [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]])
    with pytest.raises(ValueError, match="mixtures='all'"):
        smoothed_delta(mech, 1.0, 400, [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]], mixtures="all")


@pytest.mark.parametrize(
    ("histogram", "match"),
    [
        ([3], "at least 2"),
        ([2, -1], "non-negative integer"),
        ([1.5, 2], "non-negative integer"),
        ([0, 0], "n ≥ 1"),
        ([[1, 2]], "ndim"),
    ],
)
def test_bad_histograms(histogram, match):
    with pytest.raises(ValueError, match=match):
        privacy_profile(SamplingHistogram(eta=0.5), histogram, 1.0)


def test_bad_quantized_inputs():
    mech = QuantizedSamplingAverage(size=2, low=-3, high=3)
    with pytest.raises(ValueError, match="codes"):
        mech.sample([0, 5, 1], rng=1)
    with pytest.raises(ValueError, match="categories"):
        privacy_profile(mech, [1, 2, 3], 1.0)
    with pytest.raises(ValueError, match="low must be < high"):
        QuantizedSamplingAverage(low=3, high=3)


def test_hull_of_the_2020_election():
    election = load_election_2020()
    assert len(election.units) == 57 and "US" in election.units
    units = election.jurisdictions()
    vertices = hull_vertices(units.two_party_distributions())
    dc, ne3 = units.unit("DC"), units.unit("NE-3")
    np.testing.assert_allclose(vertices[:, 0], [ne3[0] / (ne3[0] + ne3[1]), dc[0] / (dc[0] + dc[1])])
    assert dc == (317_323, 18_586, 8_447)
    assert vertices[1, 0] == pytest.approx(0.944670, abs=1e-6)
    assert (
        len(hull_vertices(units.three_way_distributions())) == 7
    )  # notes §5.1: NE-3, WY, AK, VT, DC, FL, WV
    with pytest.raises(ValueError, match="unknown unit"):
        units.unit("XX")


def test_figure1_values_from_the_history():
    """Notes §5.1: ε = ln(0.51/0.49) gives ≈1e-32 for 2020 and ≈1e-8 for the 1920s; ε → 0 gives 10^-2.84."""
    history = load_election_history().since(1920)
    assert history.years.min() == 1920 and len(history.years) == 26
    mech = SamplingHistogram(eta=0.998)
    i2020 = int(np.flatnonzero(history.years == 2020)[0])
    counts = [history.candidate_a[i2020], history.candidate_b[i2020]]
    assert -33 < privacy_profile(mech, counts, math.log(0.51 / 0.49)).log10_delta < -31
    assert privacy_profile(mech, counts, 1e-9).log10_delta == pytest.approx(-2.84, abs=0.01)
    i1920 = int(np.flatnonzero(history.years == 1920)[0])
    counts = [history.candidate_a[i1920], history.candidate_b[i1920]]
    assert -9 < privacy_profile(mech, counts, math.log(0.51 / 0.49)).log10_delta < -7


def test_user_file_for_the_election_loaders(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("unit,biden,trump,other\nA,3,1,0\nB,1,3,1\n")
    assert load_election_2020(path).two_party_distributions().tolist() == [[0.75, 0.25], [0.25, 0.75]]
    bad = tmp_path / "bad.csv"
    bad.write_text("unit,biden\nA,3\n")
    with pytest.raises(ValueError, match="lacks column"):
        load_election_2020(bad)


def test_theorem3_and_remark8():
    assert theorem3_epsilon_threshold(0.998) == pytest.approx(math.log(500))
    assert in_theorem3_regime(7.0, 0.998) and not in_theorem3_regime(6.0, 0.998)
    # notes §4: f = 0.05533, η = 0.998, ε = 7 gives 0.9989 at n = 1e5 and 0.334 at n = 1e8
    assert remark8_delta_bound(7.0, 0.998, 0.05533, 100_000, 2) == pytest.approx(0.9989, abs=1e-4)
    assert remark8_delta_bound(7.0, 0.998, 0.05533, 10**8, 2) == pytest.approx(0.334, abs=1e-3)
    with pytest.raises(ValueError, match="epsilon > ln"):
        remark8_delta_bound(6.0, 0.998, 0.05, 1000, 2)
    assert large_epsilon_delta(200, [[0.94467, 0.05533]]) == pytest.approx(math.log10(1.1376e-5), abs=1e-4)
    with pytest.raises(ValueError, match="strictly positive"):
        large_epsilon_delta(200, [[1.0, 0.0]])
