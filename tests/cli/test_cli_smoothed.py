"""``smoothdp smoothed-delta`` and ``smoothdp privacy-profile``: the library's smoothed-DP analysis of the
sampling-histogram mechanism, with Π and the data set read from the command line or a CSV."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import smoothdp
from smoothdp.cli import main
from smoothdp.smoothed_dp import SamplingHistogram, privacy_profile, smoothed_delta

ELECTION = Path(smoothdp.__file__).parent / "data" / "election_2020_president.csv"
PI = [[0.9447, 0.0553], [0.2286, 0.7714]]


def _one_line_error(capsys, argv, *fragments):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smoothdp: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert out == ""


def _json(capsys, argv):
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1
    return json.loads(out)


def _delta(*extra):
    return ["smoothed-delta", "--epsilon", "7", "--n", "100000", "--eta", "0.998", *extra]


def test_smoothed_delta_of_inline_distributions_is_the_library_value(capsys):
    argv = _delta("--distribution", *map(str, PI[0]), "--distribution", *map(str, PI[1]), "--json")
    payload = _json(capsys, argv)
    expected = smoothed_delta(SamplingHistogram(eta=0.998), 7.0, 100_000, PI)
    assert payload["log10_delta"] == expected.log10_delta == pytest.approx(-4.94, abs=0.01)  # the docstring's
    assert payload["mixture"] == list(expected.mixture) and payload["dp_delta"] == 0.998
    assert payload["vertices"] == expected.vertices.tolist() and payload["distributions"] == 2
    assert payload["proof"] == "docs/theory/smoothed-dp.md#sampling-histogram-mechanism"


def test_smoothed_delta_of_a_file_of_counts_is_the_election_figure(capsys, tmp_path):
    """Π = the 2020 jurisdictions' two-party shares (docs/smoothed_dp.md, Figure 2 left), from the vote
    counts: ``--counts`` divides each row by its total, as ``two_party_distributions()`` does."""
    from smoothdp.data.elections import load_election_2020

    argv = _delta("--distributions", str(ELECTION), "--columns", "biden", "trump", "--counts", "--json")
    argv[argv.index("100000")] = "20000"
    payload = _json(capsys, argv)
    pi = load_election_2020().jurisdictions().two_party_distributions()
    expected = smoothed_delta(SamplingHistogram(eta=0.998), 7.0, 20_000, pi)
    assert payload["log10_delta"] == expected.log10_delta and payload["mixture"] == list(expected.mixture)
    assert payload["distributions"] == 57  # the 56 units and the national total (inside the hull)
    # A file of shares (no --counts); its number columns are the categories by default.
    shares = tmp_path / "pi.csv"
    shares.write_text("name,a,b\n" + "".join(f"u{i},{p[0]},{p[1]}\n" for i, p in enumerate(PI)))
    argv = [
        "smoothed-delta",
        "--epsilon",
        "7",
        "--n",
        "20000",
        "--eta",
        "0.998",
        "--distributions",
        str(shares),
    ]
    payload = _json(capsys, [*argv, "--json"])
    assert payload["log10_delta"] == smoothed_delta(SamplingHistogram(eta=0.998), 7.0, 20_000, PI).log10_delta


def test_smoothed_delta_text_output(capsys):
    assert main(_delta("--distribution", "0.5", "0.5", "--size", "10")) == 2  # --eta and --size both
    capsys.readouterr()
    argv = ["smoothed-delta", "--epsilon", "1", "--n", "60", "--size", "50", "--replace"]
    assert main([*argv, "--distribution", "0.7", "0.3", "--distribution", "0.2", "0.8"]) == 0
    out = capsys.readouterr().out
    expected = smoothed_delta(SamplingHistogram(size=50, replace=True), 1.0, 60, [[0.7, 0.3], [0.2, 0.8]])
    lines = {line.split(":")[0]: line for line in out.splitlines()}
    assert lines["smoothed δ"].split()[2] == f"10^{expected.log10_delta:.4f}"
    assert "with replacement" in lines["mechanism"] and "every mixture evaluated" in lines["worst mix"]
    assert "NOT private" not in out  # depends on n and Π only


def test_smoothed_delta_errors_name_the_option(capsys, tmp_path):
    base = ["smoothed-delta", "--epsilon", "7", "--n", "100"]
    pi = ["--distribution", "0.5", "0.5"]
    _one_line_error(capsys, [*base, *pi], "--eta", "--size")
    _one_line_error(capsys, [*base, "--eta", "1.5", *pi], "--eta", "(0, 1)")
    _one_line_error(capsys, [*base, "--eta", "0.5"], "--distribution")
    _one_line_error(
        capsys, [*base, "--eta", "0.5", "--distribution", "0.5", "0.6"], "distributions", "sum to 1"
    )
    _one_line_error(capsys, [*base, "--eta", "0.5", *pi, "--distribution", "1"], "--distribution")
    _one_line_error(capsys, [*base, "--eta", "0.5", *pi, "--mixtures", "many"], "--mixtures")
    _one_line_error(capsys, [*base, "--eta", "0.5", *pi, "--counts"], "--counts")
    _one_line_error(
        capsys, ["smoothed-delta", "--epsilon", "0", "--n", "9", "--eta", "0.5", *pi], "--epsilon"
    )
    _one_line_error(capsys, ["smoothed-delta", "--epsilon", "1", "--n", "0", "--eta", "0.5", *pi], "n")
    counts = ["--distributions", str(ELECTION), "--columns", "biden", "trump"]
    _one_line_error(capsys, [*base, "--eta", "0.5", *counts], "sum to 1")  # counts without --counts
    _one_line_error(capsys, [*base, "--eta", "0.5", "--distributions", str(tmp_path / "no.csv")], "no.csv")


# -- privacy-profile: δ of one data set, NOT private ------------------------------------------------------
def test_privacy_profile_of_a_histogram_is_the_library_value(capsys):
    # LWX Figure 1, 2020: the national two-party totals, 0.2% of ballots lost, ε = ln(0.51/0.49).
    epsilon = float(np.log(0.51 / 0.49))
    argv = ["privacy-profile", "--histogram", "81268924", "74216154", "--epsilon", repr(epsilon)]
    payload = _json(capsys, [*argv, "--eta", "0.998", "--json"])
    expected = privacy_profile(SamplingHistogram(eta=0.998), [81268924, 74216154], epsilon)
    assert payload["log10_delta"] == expected.log10_delta == pytest.approx(-31.9, abs=0.05)
    assert payload["private"] is False and "NOT private" in payload["note"]
    assert main([*argv, "--eta", "0.998"]) == 0
    out = capsys.readouterr().out
    profile = [line for line in out.splitlines() if line.startswith("profile δ:")]
    assert len(profile) == 1 and profile[0].endswith("(computed from the data, NOT private: do not publish)")
    assert out.startswith("NOTE: the privacy profile is computed from the data without protection")


def test_privacy_profile_of_a_column_of_categories(capsys, tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("vote,age\n" + "A,3\n" * 5 + "B,4\n" * 3 + " A ,5\n")  # cells are stripped
    argv = ["privacy-profile", str(votes), "--column", "vote", "--epsilon", "0.5", "--size", "4"]
    payload = _json(capsys, [*argv, "--categories", "B", "A", "C", "--json"])
    expected = privacy_profile(SamplingHistogram(size=4), [3, 6, 0], 0.5)  # in the order of --categories
    assert payload["histogram"] == [3, 6, 0] and payload["delta"] == expected.delta
    a, b, direction = expected.neighbour
    assert payload["neighbour"] == {
        "from": ["B", "A", "C"][a],
        "to": ["B", "A", "C"][b],
        "direction": direction,
    }
    _one_line_error(capsys, [*argv, "--categories", "A"], "'B'", "--categories")
    _one_line_error(capsys, [*argv, "--categories", "A", "A", "B"], "--categories")
    _one_line_error(capsys, argv, "--categories")
    _one_line_error(capsys, [*argv, "--categories", "A", "B", "--histogram", "1", "2"], "--histogram")
    _one_line_error(capsys, ["privacy-profile", "--epsilon", "1", "--eta", "0.5"], "FILE", "--histogram")
