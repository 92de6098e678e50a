import pytest

from smoothdp.privacy import PureDP
from smoothdp.release import Release


def test_release_converts_to_float_and_describes_itself():
    r = Release(3.5, PureDP(1.0), "median", "smooth sensitivity", "HT25 Thm 8", noise_std=0.2)
    assert float(r) == 3.5
    assert "median = 3.5" in str(r) and "1-DP" in str(r)


def test_refused_release_says_why_and_cannot_be_used_as_a_number():
    r = Release(
        None, PureDP(1.0), "median", "PTR", "PDP §PTR", refused=True, reason="too close to instability"
    )
    assert "refused" in str(r) and "too close" in str(r)
    with pytest.raises(ValueError, match="refused"):
        float(r)
