import json

import numpy as np
import pytest

from smoothdp.privacy import PureDP
from smoothdp.release import NotPrivate, Release


def _release(**kw):
    secret = NotPrivate(smooth_sensitivity=0.123456789, noise_scale=0.987654321, noise_std=0.55555)
    return Release(
        3.5, PureDP(1.0), "median", "smooth sensitivity", "Hladík & Tětek 2025", not_private=secret, **kw
    )


def test_release_converts_to_float_and_describes_itself():
    r = _release()
    assert float(r) == 3.5
    assert "median = 3.5" in str(r) and "1-DP" in str(r)


def test_refused_release_says_why_and_cannot_be_used_as_a_number():
    r = Release(None, PureDP(1.0), "median", "PTR", "Dwork & Lei 2009", refused=True, reason="too close")
    assert "refused" in str(r) and "too close" in str(r)
    with pytest.raises(ValueError, match="refused"):
        float(r)


@pytest.mark.parametrize("show", [repr, str, lambda r: json.dumps(r.to_dict())])
def test_printed_forms_leave_out_every_data_dependent_value(show):
    text = show(_release())
    for secret in ("0.123456", "0.987654", "0.55555", "smooth_sensitivity", "noise_std", "noise_scale"):
        assert secret not in text


def test_not_private_values_stay_reachable_for_the_data_holder():
    r = _release()
    assert r.not_private.smooth_sensitivity == 0.123456789 and r.not_private.noise_std == 0.55555
    assert "0.123" not in repr(r.not_private)


def test_to_dict_is_json_with_full_precision_and_the_guarantee():
    value = 59931.123456789012
    r = Release(value, PureDP(0.5, neighbours="add_remove"), "mean", "m", "s", proof="docs/x.md#y")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["value"] == value and d["neighbours"] == "add_remove" and d["proof"] == "docs/x.md#y"
    assert d["guarantee"]["epsilon"] == 0.5 and d["guarantee"]["type"] == "PureDP"
    arr = Release(np.array([1.5, np.inf]), PureDP(1.0), "reports", "m", "s").to_dict()
    assert arr["value"] == [1.5, "inf"]
