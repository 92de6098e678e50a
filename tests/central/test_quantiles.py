"""Exponential-mechanism quantiles: the exact sampler, JointExp's dynamic programme against brute force,
the recursive algorithm, and the public choices."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from jointexp_law import sampler_law

from smoothdp.central.choose import choose_beta, choose_method
from smoothdp.central.quantiles import (
    ExponentialQuantile,
    JointQuantiles,
    RecursiveQuantiles,
    exact_categorical,
    joint_margin,
    prepare_data,
    recursive_levels,
)
from smoothdp.central.quantiles.exact_draws import _exact_fallback, dyadic_parts
from smoothdp.central.quantiles.greedy import greedy_margin
from smoothdp.central.quantiles.joint_window import windowed_margin
from smoothdp.central.quantiles.log_scans import lae_scan, scan_depth
from smoothdp.rng import default_rng


def _chi2_ok(counts: np.ndarray, probs: np.ndarray, total: int) -> bool:
    keep = probs * total >= 5
    expected = probs[keep] * total
    stat = float(np.sum((counts[keep] - expected) ** 2 / expected))
    dof = int(keep.sum()) - 1
    return stat < dof + 6 * math.sqrt(2 * max(dof, 1)) + 10  # far beyond any plausible chi-square draw


def test_exact_categorical_matches_the_weights():
    rng = default_rng(11)
    logw = np.log(np.array([1.0, 2.0, 3.0, 0.5, 3.5]))
    draws = np.bincount([exact_categorical(logw, rng) for _ in range(20000)], minlength=5)
    assert _chi2_ok(draws, np.exp(logw) / np.exp(logw).sum(), 20000)


def test_exact_categorical_zero_weights_are_never_drawn_and_tiny_ones_are_possible():
    rng = default_rng(12)
    logw = np.array([0.0, -np.inf, -1.0, -3000.0])
    draws = {exact_categorical(logw, rng) for _ in range(3000)}
    assert draws == {0, 2}
    with pytest.raises(ValueError, match="positive weight"):
        exact_categorical(np.array([-np.inf]), rng)


def test_the_exact_fallback_agrees_with_the_fast_path():
    rng = default_rng(13)
    logw = np.log(np.array([1.0, 1.0, 2.0, 4.0]))
    k, f = dyadic_parts(logw)
    live = f > 0
    top = int(k.max())
    head = live & (k - top >= -960)
    draws = np.bincount(
        [
            _exact_fallback(k, f, head, live, top, rng, first_bits=int(rng.integers(0, 2**63)) * 2)
            for _ in range(8000)
        ],
        minlength=4,
    )
    assert _chi2_ok(draws, np.array([1, 1, 2, 4]) / 8.0, 8000)


def test_prepare_data_imputes_nan_clips_inf_and_hides_counts():
    out = prepare_data([np.nan, np.inf, -np.inf, 3.0], 0.0, 10.0, clip=True)
    assert out.tolist() == [0.0, 3.0, 5.0, 10.0]
    with pytest.raises(ValueError, match="trusted data") as err:
        prepare_data([1.0, 20.0, 30.0], 0.0, 10.0, clip=False)
    assert "2" not in str(err.value)


def test_em_output_stays_in_bounds_and_concentrates_on_the_median():
    rng = default_rng(14)
    x = np.sort(np.random.default_rng(0).normal(1.2, 1.0, 1000))
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(-1e4, 1e4))
    d = mech._prepare(x)
    out = np.array([mech.sample(d, rng) for _ in range(300)])
    assert np.all((out >= -1e4) & (out <= 1e4))
    assert np.median(np.abs(out - x[499])) < 0.05


def test_em_candidates_are_exact_on_ties():
    rng = default_rng(15)
    x = np.array([3.0] * 60 + [1.0] * 20 + [7.0] * 20)
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 10.0), candidates=np.arange(11.0))
    out = [mech.sample(mech._prepare(x), rng) for _ in range(200)]
    assert np.mean(np.array(out) == 3.0) > 0.95


def test_jointexp_dynamic_programme_matches_brute_force_on_interval_pairs():
    """The sampler's law over (interval of o1, interval of o2) against the closed form."""
    rng = default_rng(16)
    x = np.array([0.1, 0.35, 0.4, 0.8])
    q1, q2, eps = 0.25, 0.75, 2.0
    mech = JointQuantiles(
        [q1, q2], epsilon=eps, bounds=(0.0, 1.0), lattice=None, numerics="float", clamp=False
    )
    n = x.size
    coef = (eps - mech.margin(n)) / 4.0
    edges = np.concatenate(([0.0], x, [1.0]))
    lengths = np.diff(edges)
    probs = np.zeros((n + 1, n + 1))
    for i in range(n + 1):
        for k in range(i, n + 1):
            u = abs(i - q1 * n) + abs(k - i - (q2 - q1) * n) + abs(n - k - (1 - q2) * n)
            vol = lengths[i] * lengths[k] if k > i else lengths[i] ** 2 / 2
            probs[i, k] = vol * math.exp(-coef * u)
    probs /= probs.sum()
    total = 12000
    counts = np.zeros_like(probs)
    d = mech._prepare(x)
    for _ in range(total):
        o1, o2 = mech.sample(d, rng)
        counts[np.searchsorted(x, o1), np.searchsorted(x, o2)] += 1
    assert _chi2_ok(counts.ravel(), probs.ravel(), total)


def test_recursive_levels_and_output_order():
    assert [recursive_levels(m) for m in (1, 2, 3, 4, 9)] == [1, 2, 2, 3, 4]
    rng = default_rng(17)
    x = np.random.default_rng(1).normal(0, 1, 2000)
    mech = RecursiveQuantiles([0.9, 0.1, 0.5, 0.1], epsilon=2.0, bounds=(-10.0, 10.0))
    out = mech.sample(mech._prepare(x), rng)
    assert out.shape == (4,) and out[1] == out[3]
    assert out[1] < out[2] < out[0]


def test_jointexp_refuses_only_when_its_float_margin_is_large():
    mech = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=0.1, bounds=(-1e4, 1e4))
    assert mech.admissible(1000) and mech.admissible(10**6)
    tiny = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1e-8, bounds=(-1e4, 1e4))
    assert not tiny.admissible(10)
    with pytest.raises(ValueError, match="method='recursive'"):
        tiny.sample(np.zeros(10), default_rng(1))


def test_jointexp_margin_is_small_public_and_monotone():
    """Deciles at n = 10^5, eps = 1 cost at most 10% of eps (in fact far less); 20 quantiles stay admissible
    up to n = 10^6 at eps >= 0.05; the margin reads only public parameters."""
    deciles = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0))
    assert deciles.margin(10**5) <= 0.1 * 1.0
    assert deciles.margin(10**5) <= 1e-4
    for eps in (0.05, 0.5, 2.0):
        twenty = JointQuantiles(np.linspace(0.02, 0.98, 20), epsilon=eps, bounds=(-1e6, 1e6))
        assert twenty.admissible(10**6)
        margins = [twenty.margin(10**k) for k in range(1, 7)]
        assert margins == sorted(margins) and margins[0] > 0.0
    continuum = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0), lattice=None)
    n = 10**3  # below the windows' threshold: every record is read
    assert continuum.window_plan(n) is None and deciles.window_plan(n) is None
    assert joint_margin(epsilon=1.0, n=n, m=9, width=125.0) == continuum.margin(n)
    # The lattice variant: the greedy programme, its margin taken at the heaviest atom masses it may use
    # (fixed before the selection runs), masses up to W = width + c(width/s + 2), rounding 10 ulps.
    integers = JointQuantiles(np.linspace(0.1, 0.9, 9), epsilon=1.0, bounds=(0.0, 125.0), lattice=1.0)
    widths = [125.0 + c * (125.0 + 2.0) for c in (64.0, 2.0**-14)]
    lat = max(
        greedy_margin(epsilon=integers.epsilon_main(n), n=n, m=9, width=w, mass_ulps=10.0) for w in widths
    )
    assert integers.margin(n) == lat > continuum.margin(n)
    assert deciles.margin(n) >= lat
    # From windows of ranks (n = 10^5): the windowed margin, (8m + 16)E* + 2^-25 + 2uε, at the same widths.
    assert integers.window_plan(10**5) is not None
    win = max(
        windowed_margin(epsilon=integers.epsilon_main(10**5), n=10**5, m=9, width=w, mass_ulps=10.0)
        for w in widths
    )
    assert integers.margin(10**5) == win
    # Without a lattice the windowed margin (greedy E*, no atoms) covers the continuum programme's, which the
    # windowed sampler's fallback runs.
    cont = windowed_margin(epsilon=1.0, n=10**5, m=9, width=125.0, mass_ulps=8.0)
    assert continuum.margin(10**5) == cont > joint_margin(epsilon=1.0, n=10**5, m=9, width=125.0)


def test_blocked_scan_matches_numpy_accumulate_and_its_depth():
    v = np.random.default_rng(3).normal(0.0, 30.0, (2, 5000))
    v[0, 7] = v[1, 100] = -np.inf
    assert np.allclose(lae_scan(v), np.logaddexp.accumulate(v, axis=1), rtol=0, atol=1e-9)
    assert lae_scan(np.full((1, 300), -np.inf)).tolist() == [[-np.inf] * 300]
    # D(L) = L - 1 for L <= 64, else 64 + D(ceil(L / 64)); 10^6 + 1 -> 15626 -> 245 -> 4.
    assert [scan_depth(k) for k in (1, 64, 65, 64 * 64, 64 * 64 + 1, 10**6 + 1)] == [
        0,
        63,
        65,
        127,
        129,
        64 * 3 + 3,
    ]


def _jointexp_brute_force(x, qs, lower, upper, coef):
    """Closed-form law of the interval sequence i_1 <= ... <= i_m of JointExp (volume L^k/k! per run)."""
    n, m = x.size, len(qs)
    lengths = np.diff(np.concatenate(([lower], np.sort(x), [upper])))
    targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
    law = {}
    for seq in itertools.combinations_with_replacement(range(n + 1), m):
        counts = np.diff(np.concatenate(([0], seq, [n])))
        vol = 1.0
        for i in set(seq):
            k = seq.count(i)
            vol *= lengths[i] ** k / math.factorial(k)
        if vol > 0:
            law[seq] = vol * math.exp(-coef * float(np.sum(np.abs(counts - targets))))
    total = sum(law.values())
    return {s: p / total for s, p in law.items()}


@pytest.mark.parametrize(
    ("x", "qs", "eps"),
    [
        ([0.8, 0.1, 0.35, 0.35, 0.4], [0.2, 0.5, 0.7], 2.0),  # ties: an empty interval
        ([0.05, 0.2, 0.9, 0.6, 0.3, 0.3], [0.1, 0.25, 0.5, 0.9], 0.7),
        ([1.0, 1.0, 1.0], [0.3, 0.6], 1.0),  # all at the upper bound
        ([], [0.5, 0.75], 1.0),  # n = 0
    ],
)
def test_jointexp_programme_is_exactly_the_brute_force_law(x, qs, eps):
    """Every probability of the backward draws (from the float tables) against the closed form."""
    mech = JointQuantiles(qs, epsilon=eps, bounds=(0.0, 1.0))
    d = mech._prepare(x).sorted_values()
    n = d.size
    coef = (eps - mech.margin(n)) / 4.0
    expected = _jointexp_brute_force(d, list(mech.unique_qs), 0.0, 1.0, coef)
    got = sampler_law(mech._tables(d, coef), len(qs), n + 1)
    assert set(got) == set(expected)
    for seq, p in expected.items():
        assert got[seq] == pytest.approx(p, rel=1e-9)


def test_public_choices():
    assert choose_method(n=1000, epsilon=0.5) == "exponential"
    assert choose_method(n=1000, epsilon=2.0) == "smooth_sensitivity"
    assert choose_method(n=1000, epsilon=2.0, discrete=True) == "exponential"
    assert choose_method(n=1000, epsilon=1.0, n_quantiles=9) == "joint_exp"
    assert choose_method(n=1000, epsilon=1.0, n_quantiles=9, joint_ok=False) == "recursive"
    for eps in (0.1, 1.0, 2.0):
        beta = choose_beta(n=1000, epsilon=eps, bounds=(-1e4, 1e4))
        assert 0.02 * eps <= beta <= 0.45 * eps


# ------------------------------------------------------------------------------------------------------------
# ExponentialQuantile on a public lattice (docs/theory/quantiles.md#a-public-lattice-for-tied-data)
# ------------------------------------------------------------------------------------------------------------
def _open_counts(level, lo, hi):
    counts, _ = level.scan(np.stack([lo, hi], axis=-1).ravel())
    return counts[::2]


@pytest.mark.parametrize(
    ("numer", "denom"),
    [(1, 1), (1, 4), (3, 1), (1000, 1), (1, 1024), (5, 8), (1, 10), (1, 100), (3, 10), (7, 1000)],
)
def test_lattice_counts_and_membership_are_exact_against_fractions(numer, denom):
    """Every level's points are the correctly rounded floats fl(k·P/Q) (decimals: the floats nearest to
    the cents, not multiples of the float 0.01): open counts and membership against exact rationals."""
    from fractions import Fraction

    from smoothdp.central.quantiles.atoms import Level

    level = Level(numer, denom)
    sigma = Fraction(numer, denom)
    gen = np.random.default_rng(21)
    ks = np.arange(-20, 21)
    pts_exact = np.array([float(Fraction(int(k) * numer, denom)) for k in ks])
    near = np.concatenate([pts_exact, np.nextafter(pts_exact, -np.inf), np.nextafter(pts_exact, np.inf)])
    pts = np.sort(np.concatenate([gen.uniform(-20 * float(sigma), 20 * float(sigma), 100), near]))
    atoms = [float(Fraction(j * numer, denom)) for j in range(-25, 26)]
    expected = [sum(1 for v in atoms if a < v < b) for a, b in itertools.pairwise(pts)]
    assert _open_counts(level, pts[:-1], pts[1:]).tolist() == expected
    assert level.contains(pts).tolist() == [v in set(atoms) for v in pts]


def test_lattice_reach_and_the_floats_of_decimal_points():
    from smoothdp.central.quantiles.atoms import Level

    lat = Level(1, 1)  # the integers: atoms up to 2^51, beyond they are not; counts stay exact
    assert _open_counts(lat, np.array([-1e7, -1e300]), np.array([1e7, 1e300])).tolist() == [
        2e7 - 1,
        2.0**52 + 1,
    ]
    far = np.array([2.0**51, -(2.0**51), 2.0**51 + 2, 1e300])
    assert lat.contains(far).tolist() == [True, True, False, False]
    cents = Level(1, 100)
    assert cents.contains(np.array([9.99, 0.1 + 0.2, 0.3, 1e12 + 0.01])).tolist() == [True, False, True, True]
    assert cents.reach == 2**50 and cents.contains(np.array([2.0**50 / 100 * 1.5])).tolist() == [False]


def test_lattice_is_checked_from_public_values_alone():
    from smoothdp.central.quantiles.atoms import check_lattice

    assert check_lattice(None) is None and check_lattice(1) == 1.0 and check_lattice(0.25) == 0.25
    assert check_lattice(0.1) == 0.1 and check_lattice("multiscale") == "multiscale"
    assert check_lattice([1, 0.5, 0.01]) == (1.0, 0.5, 0.01)
    bad_values = ((0.0, ValueError), (-1.0, ValueError), (np.inf, ValueError), (1 / 3, ValueError))
    bad_values += ((True, TypeError), ("1", ValueError), ("auto", ValueError), ([], ValueError))
    bad_values += (([1.0, "x"], TypeError),)
    for bad, err in bad_values:
        with pytest.raises(err, match="lattice"):
            check_lattice(bad)
    # Bounds far beyond the lattice's reach (e.g. private bounds) never raise: those points are not atoms.
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(-1e300, 1e300))
    assert mech.atom_mass == 2.0**-14
    assert math.isfinite(mech.sample(np.array([1.0, 2.0, 2.0]), default_rng(1)))


@pytest.mark.parametrize(
    ("lattice", "levels", "x"),
    [
        (1.0, [(1, 1)], [0.5, 1.0, 1.0, 1.0, 2.5, 3.2]),
        ((1.0, 0.5, 0.1), [(1, 1), (1, 2), (1, 10)], [0.5, 0.5, 1.0, 1.3, 1.3, 2.5, 3.25]),
    ],
)
def test_lattice_sampler_matches_the_exact_law(lattice, levels, x):
    """Chi-square of the sampler against the closed-form law, with large atom masses so that every branch
    (continuum, atom at a data value, atom of each level inside a gap) has visible probability."""
    from atoms_law import atom_masses, binned_counts, em_law

    from smoothdp.central.quantiles.atoms import Atoms

    mech = ExponentialQuantile(0.5, epsilon=1.5, bounds=(0.0, 5.0), lattice=lattice, numerics="float")
    mech.atoms = Atoms(mech.lattice, factor=0.3)
    d = mech._prepare(np.array(x)).sorted_values()
    coef = 0.5 * mech.epsilon_used(d.size)
    cuts, pts, p_pieces, p_atoms = em_law(
        d, 0.0, 5.0, mech_target(d.size), coef, atom_masses(levels, 0.3, 0.0, 5.0)
    )
    assert p_atoms.sum() > 0.2 and p_pieces.sum() > 0.2
    rng = default_rng(22)
    total = 20000 if len(levels) == 1 else 8000
    out = np.array([mech.sample(d, rng) for _ in range(total)])
    assert _chi2_ok(binned_counts(out, cuts, pts), np.concatenate((p_pieces, p_atoms)), total)


def mech_target(n):
    from smoothdp.central.quantiles import target_rank

    return target_rank(0.5, n)


def test_lattice_em_is_exact_on_heavy_ties():
    """60% of the records at the median value (a lattice point): error 0 in ≥ 95% of releases at ε = 0.5;
    the pure continuum (lattice=None) is never exact there."""
    gen = np.random.default_rng(23)
    x = np.concatenate([np.full(600, 5.0), gen.integers(0, 5, 200), gen.integers(6, 11, 200)]).astype(float)
    exact = {}
    for lattice in (1.0, "multiscale", None):
        mech = ExponentialQuantile(0.5, epsilon=0.5, bounds=(0.0, 10.0), lattice=lattice)
        d, rng = mech._prepare(x), default_rng(24)
        exact[lattice] = np.mean(np.array([mech.sample(d, rng) for _ in range(200)]) == 5.0)
    assert exact[1.0] >= 0.95 and exact["multiscale"] >= 0.95 and exact[None] == 0.0


@pytest.mark.parametrize(
    ("value", "bounds"), [(62.5, (0.0, 125.0)), (9.99, (0.0, 100.0)), (21.3, (-50.0, 60.0))]
)
@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_default_releases_values_tied_at_halves_tenths_and_cents_exactly(value, bounds, q):
    """200 copies of 62.5, of 9.99 (the float fl(999/100)) or of 21.3, ε = 1, nothing passed: the default
    quantile is the tied value itself in ≥ 90% of releases; the integer lattice alone never is. (q = 0.1
    is not: its target sits 19.5 ranks inside the run, below the ≈ 29 a light atom needs against a gap of
    62.5 at ε = 1; docs/theory/quantiles.md#choosing-the-atom-mass.)"""
    import smoothdp as sd

    x = np.full(200, value)
    for lattice, least, most in (("multiscale", 0.9, 1.0), (1.0, 0.0, 0.0)):
        rng = default_rng(31)
        out = [
            float(sd.quantile(x, q, epsilon=1.0, bounds=bounds, lattice=lattice, rng=rng)) for _ in range(50)
        ]
        assert least <= np.mean(np.array(out) == value) <= most


def test_lattice_em_is_exact_on_adult_ages():
    from smoothdp.data import load_adult_ages

    ages = load_adult_ages()
    true = np.quantile(ages, 0.5, method="inverted_cdf")
    mech = ExponentialQuantile(0.5, epsilon=0.5, bounds=(0.0, 125.0))
    d, rng = mech._prepare(ages), default_rng(25)
    out = np.array([mech.sample(d, rng) for _ in range(100)])
    assert np.mean(out == true) >= 0.9


@pytest.mark.parametrize("lattice", [1.0, "multiscale"])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
def test_lattice_costs_nothing_on_continuous_data(eps, lattice):
    """N(1.2, 1), n = 1000, bounds ±1e4: median |error| with the atoms within 5% of the continuum (200
    releases each, the same uniform bits)."""
    x = np.random.default_rng(26).normal(1.2, 1.0, 1000)
    true = np.quantile(x, 0.5, method="inverted_cdf")
    err = {}
    for lat in (lattice, None):
        mech = ExponentialQuantile(0.5, epsilon=eps, bounds=(-1e4, 1e4), lattice=lat)
        d, rng = mech._prepare(x), default_rng(27)
        err[lat] = np.median(np.abs(np.array([mech.sample(d, rng) for _ in range(200)]) - true))
    assert err[lattice] <= 1.05 * err[None]


def test_candidates_still_override_the_lattice():
    x = np.array([3.0] * 60 + [1.0] * 20 + [7.0] * 20)
    mech = ExponentialQuantile(0.5, epsilon=1.0, bounds=(0.0, 10.0), candidates=[0.5, 3.5, 8.0])
    out = {mech.sample(mech._prepare(x), default_rng(28)) for _ in range(50)}
    assert out <= {0.5, 3.5, 8.0}
    assert mech.release(x, rng=default_rng(29)).details["lattice"] is None


def test_epsilon_times_n_beyond_2_to_50_is_a_clear_parameter_error():
    """The exact samplers keep the weights' binary exponents far inside int64: ε(n + 1) ≤ 2^50 (public),
    refused above with a message naming epsilon; at the limit the release is the median itself."""
    import smoothdp as sd

    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    at_limit = 2.0**50 / 6.0
    assert sd.median(x, epsilon=at_limit, bounds=(0.0, 10.0), method="exponential", rng=1).value == 3.0
    for call in (
        lambda: sd.median(x, epsilon=at_limit * 1.001, bounds=(0.0, 10.0), method="exponential", rng=1),
        lambda: sd.quantiles(x, [0.2, 0.8], epsilon=1e16, bounds=(0.0, 10.0), method="recursive", rng=1),
        lambda: sd.median(x, epsilon=1e16, bounds="private", rng=1),
    ):
        with pytest.raises(ValueError, match=r"epsilon.*2\^50"):
            call()


@pytest.mark.parametrize("denom", [1, 2, 4, 32, 1024])
def test_the_power_of_two_floor_shortcut_is_the_corrected_floor(denom):
    """σ = 2^-j ≤ 1 skips the floor's corrections (w/σ is exact): the same F(v) as the corrected path on
    normal, subnormal, signed-zero, huge and on-lattice values; a broken shortcut (σ = 1/10 taken as exact)
    differs."""
    from smoothdp.central.quantiles.atoms import Level

    gen = np.random.default_rng(denom)
    values = np.concatenate(
        [
            gen.normal(0, 10, 20000),
            gen.normal(0, 1e-300, 500),
            [0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0, 0.5, -0.5, 1e300, -1e300, np.nextafter(1, 0)],
            np.round(gen.normal(0, 100, 5000)) / 32,
            np.arange(-500, 500) / 10,  # the tenths' points, where ⌊v/fl(0.1)⌋ can be one off
        ]
    )
    level = Level(1, denom)
    assert level.power_of_two_at_most_one
    fast = level.floor(values)
    level.power_of_two_at_most_one = False
    assert np.array_equal(fast, level.floor(values))
    tenth = Level(1, 10)
    assert not tenth.power_of_two_at_most_one
    corrected = tenth.floor(values)
    # the uncorrected guess ⌊v/fl(σ)⌋, which a shortcut taken for σ = 1/10 would return, is wrong somewhere
    assert not np.array_equal(corrected, np.floor(np.clip(values, -tenth.edge, tenth.edge) / tenth.spacing))


def _exact_floor(level, e):
    """max{k : fl(k·P/Q) ≤ e} by exact rationals (Fraction → float rounds correctly)."""
    import math
    from fractions import Fraction

    k = math.floor(Fraction(e) * level.denom / level.numer)
    while float(Fraction(k * level.numer, level.denom)) > e:
        k -= 1
    while float(Fraction((k + 1) * level.numer, level.denom)) <= e:
        k += 1
    return k


@pytest.mark.parametrize(
    ("numer", "denom"), [(1, 1), (1, 32), (1, 10), (1, 10000), (3, 1), (5, 2), (7, 1000)]
)
def test_level_scan_counts_within_and_beyond_the_reach_against_exact_rationals(numer, denom):
    """Level.scan's open counts and membership, on sorted edges inside ±p(K) (the unclipped fast path)
    and reaching beyond it (clipped), against counts of k ∈ [−K, K] by exact rationals."""
    from smoothdp.central.quantiles.atoms import Level

    level = Level(numer, denom)
    big = float(level.top)
    gen = np.random.default_rng(numer * 100003 + denom)
    inside = np.concatenate(
        [
            gen.uniform(-30, 30, 40) * level.spacing,
            np.round(gen.uniform(-30, 30, 20)) * level.spacing,
            level.point(np.round(gen.uniform(-30, 30, 20))),
            [big, -big, np.nextafter(big, 0.0), 0.0],
        ]
    )
    beyond = np.concatenate([inside, [level.edge, -level.edge, 2 * big, -2 * big, 1e308, -1e308]])
    for edges in (np.sort(inside), np.sort(beyond)):
        counts, on = level.scan(edges)
        reach = level.reach
        clipped = [min(max(float(e), -level.edge), level.edge) for e in edges]  # F is defined up to p(K + 1)
        floors = [_exact_floor(level, e) for e in clipped]
        expected_on = [
            -reach <= k <= reach and float(Fraction(k * numer, denom)) == float(e)
            for k, e in zip(floors, edges, strict=True)
        ]
        expected_counts = []
        for j in range(edges.size - 1):
            last = floors[j + 1] - (float(Fraction(floors[j + 1] * numer, denom)) == clipped[j + 1])
            first = floors[j] + 1
            expected_counts.append(max(0, min(last, reach) - max(first, -reach) + 1))
        assert on.tolist() == expected_on
        assert counts.tolist() == expected_counts
