"""private-ratio (Harrison, "Privately bounding local sensitivity", 2024): MAE of a private a/b."""

import numpy as np
from _exp_helpers import read_table


def _table(tiny_run):
    _, folder = tiny_run("private-ratio")
    return read_table(folder / "mae.csv")


def _curve(table, b, prefix):
    mask = (table["b"] == b) & np.char.startswith(table["method"], prefix)
    return table["ratio"][mask], table["mae"][mask], table["mae_stderr"][mask]


def test_closed_form_errors_at_a_zero(tiny_run):
    # a = 0: naive releases Lap(2/ε)/(b + Lap(2/ε)) ≈ Lap(2/ε)/b, MAE ≈ 2/(εb); KSW (add/remove) ≈ Lap(1/ε)/b.
    table = _table(tiny_run)
    for b in (1_000, 10_000):
        _, naive, se = _curve(table, b, "naive")
        assert abs(naive[0] - 2 / b) < 5 * se[0] + 0.01 * 2 / b
        _, ksw, se = _curve(table, b, "KSW (add")
        assert abs(ksw[0] - 1 / b) < 5 * se[0] + 0.01 / b


def test_bounded_local_sensitivity_beats_naive_and_substitution_doubles_ksw(tiny_run):
    table = _table(tiny_run)
    for b in (1_000, 10_000):
        _, naive, _ = _curve(table, b, "naive")
        _, bounded, _ = _curve(table, b, "bounded")
        assert np.all(bounded < naive)
        _, add, _ = _curve(table, b, "KSW (add")
        _, sub, _ = _curve(table, b, "KSW (sub")
        np.testing.assert_allclose(sub / add, 2.0, rtol=0.1)
    # at large b the bounded-LS error approaches the non-private local-sensitivity reference
    _, bounded, _ = _curve(table, 10_000, "bounded")
    _, reference, _ = _curve(table, 10_000, "non-private")
    assert np.all(bounded < 1.6 * reference) and np.all(bounded > 0.9 * reference)


def test_guarantees_state_their_neighbour_relation(tiny_run):
    table = _table(tiny_run)
    guarantee = dict(zip(table["method"], table["guarantee"], strict=False))
    assert guarantee["naive"] == "1-DP (add/remove)"
    assert guarantee["KSW (add/remove)"] == "1-DP (add/remove)"
    assert guarantee["KSW (substitute)"] == "1-DP"  # substitution: no suffix
    assert guarantee["bounded LS, ε₁ = 0.3ε"] == "(1, 1e-08)-DP (add/remove)"
    assert guarantee["non-private: Lap(LS/ε)"] == "not private (reference)"
