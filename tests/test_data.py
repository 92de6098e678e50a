import numpy as np
import pytest

from smoothdp.data import load_adult_ages, load_ca_incomes, load_csv, load_nyc_collisions


def test_adult_ages_match_the_documented_data_set():
    ages = load_adult_ages()
    assert ages.shape == (32_561,)
    assert ages.min() == 17 and ages.max() == 90


def test_ca_incomes_keep_negative_values():
    income = load_ca_incomes()
    assert income.shape == (10_000,) and (income < 0).any()


def test_nyc_projection_is_metres_about_the_centre():
    points = load_nyc_collisions()
    assert points.shape == (13_032, 2)
    np.testing.assert_allclose(points.mean(axis=0), 0.0, atol=1e-6)
    # New York City spans about 50 km: a degree-valued array would span < 1.
    extent = points.max(axis=0) - points.min(axis=0)
    assert np.all((extent > 20_000) & (extent < 80_000))


def test_user_file_of_the_same_shape_is_accepted(tmp_path):
    path = tmp_path / "ages.csv"
    path.write_text("age,other\n30,a\n40,b\n")
    np.testing.assert_array_equal(load_adult_ages(path), [30.0, 40.0])
    bad = tmp_path / "bad.csv"
    bad.write_text("years\n30\n")
    with pytest.raises(ValueError, match="lacks column"):
        load_adult_ages(bad)


def test_unknown_data_set_is_refused():
    with pytest.raises(ValueError, match="name must be one of"):
        load_csv("census2030")
