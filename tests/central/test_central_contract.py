"""Every central mechanism follows the mechanism contract (smoothdp.mechanism): it is a registered Mechanism,
declares a guarantee with the right neighbour relation before seeing data, cites a docs section that exists,
takes its privacy parameters by keyword, and publishes only public values."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import smoothdp
from smoothdp.central import (
    BoundedLocalSensitivity,
    GaussianMean,
    GlobalSensitivityMean,
    GlobalSensitivityMedian,
    Max,
    Mean,
    Median,
    Min,
    NoisyCount,
    NoisyHistogram,
    NoisySum,
    PrivateRatio,
    ProposeTestRelease,
    Quantile,
    SampleAndAggregate,
    SmoothSensitivityMechanism,
    TrimmedMean,
)
from smoothdp.central.frameworks.inverse_sensitivity import InverseSensitivity
from smoothdp.central.frameworks.piecewise_laplace import PiecewiseLaplace
from smoothdp.central.moments.clipped import ClippedMean, ClippedVariance
from smoothdp.central.moments.noisy_sums import NoisyMoments
from smoothdp.central.moments.on_private_range import RangeMean, RangeVariance
from smoothdp.central.moments.private_clip import PrivateClipMean
from smoothdp.central.moments.range_sweep import SweepRange
from smoothdp.central.moments.ratio_mean import RatioMean
from smoothdp.central.quantiles import (
    ExponentialQuantile,
    HeavyLevelOrSmoothQuantile,
    JointQuantiles,
    RecursiveQuantiles,
)
from smoothdp.central.quantiles.nested import NestedJointQuantiles
from smoothdp.central.unbounded.ladder import UnboundedQuantile, UnboundedRange
from smoothdp.central.unbounded.private_bounds import PrivateRange
from smoothdp.central.unbounded.scale_free import ScaleFreeQuantile
from smoothdp.mechanism import REGISTRY, Mechanism
from smoothdp.privacy import ZCDP

ROOT = Path(__file__).resolve().parents[2]
X = np.array([0.1, 0.2, 0.25, 0.3, 0.45, 0.5, 0.9])


def _anchors(path: Path) -> set[str]:
    """GitHub-style anchors of a markdown file's headings."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#+\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


def _resolves(ref: str) -> bool:
    page, _, anchor = ref.partition("#")
    path = ROOT / page
    return path.is_file() and anchor in _anchors(path)


# (mechanism, data, expected neighbour relation)
CASES = [
    (ExponentialQuantile(0.5, epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (HeavyLevelOrSmoothQuantile(0.5, epsilon=2.0, bounds=(0, 1)), X, "substitution"),
    (RecursiveQuantiles([0.25, 0.75], epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (JointQuantiles([0.25, 0.75], epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (NestedJointQuantiles([0.25, 0.75], epsilon=1.0, bounds=(0, 1), halvings=3), X, "substitution"),
    (PrivateRange(epsilon=1.0), X, "substitution"),
    (PrivateClipMean(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=1.0), X, "substitution"),
    (SmoothSensitivityMechanism(Quantile(0.9, bounds=(0, 1)), epsilon=1.0), X, "substitution"),
    (SmoothSensitivityMechanism(TrimmedMean(1, bounds=(0, 1)), epsilon=1.0), X, "substitution"),
    (SmoothSensitivityMechanism(Min(bounds=(0, 1)), epsilon=1.0), X, "substitution"),
    (SmoothSensitivityMechanism(Max(bounds=(0, 1)), epsilon=1.0), X, "substitution"),
    (SmoothSensitivityMechanism(Mean(bounds=(0, 1)), epsilon=1.0), X, "add_remove"),
    (
        SmoothSensitivityMechanism(Median(bounds=(0, 1)), epsilon=1.0, noise="laplace", delta=1e-6),
        X,
        "substitution",
    ),
    (
        ProposeTestRelease(Median(bounds=(0, 1)), proposed_bound=0.5, epsilon=1.0, delta=1e-6),
        X,
        "substitution",
    ),
    (ProposeTestRelease(Mean(bounds=(0, 1)), proposed_bound=0.5, epsilon=1.0, delta=1e-6), X, "add_remove"),
    (SampleAndAggregate("mean", n_blocks=3, bounds=(0, 1), epsilon=1.0), X, "add_remove"),
    (
        SampleAndAggregate("mean", n_blocks=3, bounds=(0, 1), epsilon=1.0, neighbours="substitution"),
        X,
        "substitution",
    ),
    (
        SampleAndAggregate(np.mean, n_blocks=3, bounds=(0, 1), epsilon=1.0, partition="balanced"),
        X,
        "substitution",
    ),
    (
        SampleAndAggregate("mean", n_blocks=3, bounds=(0, 1), epsilon=1.0, aggregator="median"),
        X,
        "add_remove",
    ),
    (PrivateRatio(epsilon=1.0), (30, 100), "add_remove"),
    (PrivateRatio(epsilon=1.0, method="ksw", neighbours="substitution"), (30, 100), "substitution"),
    (
        PrivateRatio(epsilon=1.0, method="bounded_local_sensitivity", delta=1e-6),
        (3000, 10000),
        "add_remove",
    ),
    (
        BoundedLocalSensitivity(np.mean, lambda x, rng: 1.0, epsilon_1=0.1, epsilon_2=0.9, delta=1e-6),
        X,
        "substitution",
    ),
    (GlobalSensitivityMean(bounds=(0, 1), epsilon=1.0), X, "add_remove"),
    (GlobalSensitivityMedian(bounds=(0, 1), epsilon=1.0), X, "substitution"),
    (GaussianMean(bounds=(0, 1), rho=0.5), X, "substitution"),
    (ClippedMean(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (ClippedVariance(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (RangeMean(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (RangeVariance(epsilon=1.0, bounds=(0, 1), ddof=0), X, "substitution"),
    (SweepRange(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (SweepRange(epsilon=1.0, bounds=(0, 1), neighbours="add_remove"), X, "add_remove"),
    (NoisyMoments(epsilon=1.0, bounds=(0, 1)), X, "add_remove"),
    (NoisyCount(epsilon=1.0), X, "add_remove"),
    (NoisyCount(rho=0.5, noise="gaussian"), X, "add_remove"),
    (NoisySum(bounds=(0, 1), epsilon=1.0), X, "add_remove"),
    (
        NoisySum(bounds=(0, 1), epsilon=1.0, delta=1e-6, noise="gaussian", neighbours="substitution"),
        X,
        "substitution",
    ),
    (NoisyHistogram(bins=[0, 0.5, 1], epsilon=1.0), X, "add_remove"),
    (NoisyHistogram(categories=[0.1, 0.9], epsilon=1.0, neighbours="substitution"), X, "substitution"),
    (ClippedMean(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (ClippedVariance(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (RangeMean(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (RangeVariance(epsilon=1.0, bounds=(0, 1), ddof=0), X, "substitution"),
    (SweepRange(epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (SweepRange(epsilon=1.0, bounds=(0, 1), neighbours="add_remove"), X, "add_remove"),
    (NoisyMoments(epsilon=1.0, bounds=(0, 1)), X, "add_remove"),
    (InverseSensitivity(0.5, epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (PiecewiseLaplace(0.5, epsilon=1.0, bounds=(0, 1)), X, "substitution"),
    (ScaleFreeQuantile(0.5, epsilon=1.0), X, "substitution"),
    (ScaleFreeQuantile(0.5, epsilon=1.0, neighbours="add_remove"), X, "add_remove"),
    (UnboundedQuantile(0.5, epsilon=1.0), X, "substitution"),
    (UnboundedQuantile(0.25, epsilon=1.0, neighbours="add_remove"), X, "add_remove"),
    (UnboundedRange(epsilon=1.0), X, "substitution"),
    (RatioMean(epsilon=1.0, bounds=(0, 1)), X, "add_remove"),
]
IDS = [f"{type(m).__name__}-{i}" for i, (m, _, _) in enumerate(CASES)]


def test_every_central_mechanism_is_registered_and_covered_here():
    central = {cls for name, cls in REGISTRY.items() if name.startswith("smoothdp.central.")}
    assert central == {type(m) for m, _, _ in CASES}
    assert all(issubclass(cls, Mechanism) for cls in central)


@pytest.mark.parametrize(("mech", "data", "relation"), CASES, ids=IDS)
def test_release_carries_the_guarantee_its_relation_and_a_resolving_proof(mech, data, relation):
    assert mech.guarantee.neighbours == relation == mech.neighbours
    assert _resolves(mech.proof), mech.proof
    for ref in re.findall(r"docs/[\w/\-]+\.md#[\w\-]+", mech.source):
        assert _resolves(ref), ref
    assert not re.search(r"notes/|notes §|seed 00[0-4]|PDP §", mech.source)
    rel = mech.release(data, rng=1)
    assert rel.guarantee == mech.guarantee and rel.neighbours == relation
    assert rel.details["neighbours"] == relation
    assert rel.proof == mech.proof and rel.source == mech.source
    assert not {"adjacency", "not_private"} & set(rel.details)
    shown = repr(rel) + str(rel) + repr(rel.to_dict())
    secret = rel.not_private
    for value in (secret.smooth_sensitivity, secret.noise_scale, secret.noise_std):
        # (short round numbers such as a data-independent Laplace scale 2.0 are not searchable as text)
        if isinstance(value, float) and np.isfinite(value) and len(f"{value:.6g}") >= 4:
            assert f"{value:.6g}" not in shown and repr(value) not in shown


@pytest.mark.parametrize(("mech", "data", "relation"), CASES, ids=IDS)
def test_budget_error_releases_nothing_draws_nothing_and_charges_nothing(mech, data, relation):
    zcdp = isinstance(mech.guarantee, ZCDP)  # a zCDP charge needs a conversion slack
    acc = smoothdp.Accountant(
        epsilon=0.01, delta=1e-6 if zcdp else 0.0, slack=1e-6 if zcdp else 0.0, neighbours=relation
    )
    gen, twin = smoothdp.default_rng(9), smoothdp.default_rng(9)
    with pytest.raises(smoothdp.BudgetError):
        mech.release(data, accountant=acc, rng=gen)
    assert gen.random(3).tolist() == twin.random(3).tolist()
    assert len(acc) == 0


def test_central_sources_cite_no_unshipped_notes():
    src = ROOT / "src" / "smoothdp" / "central"
    for path in sorted(src.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"notes/[a-z_]+\.md|notes §|seed 00[0-4]|PDP §", text), path.name
        for ref in re.findall(r"docs/[\w/\-]+\.md#[\w\-]+", text):
            assert _resolves(ref), f"{path.name}: {ref}"
    assert not (ROOT / "src" / "smoothdp" / "sensitivity" / "hamming.py").exists()
