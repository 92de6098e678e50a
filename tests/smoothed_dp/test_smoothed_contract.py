"""The smoothed-DP mechanisms' declarative part, the method dispatch and the package layout.

They are analysis objects, not ``smoothdp.mechanism.Mechanism`` subclasses (their δ depends on the data),
but they declare what the contract declares: name, neighbour relation, proof section, source.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
from typing import ClassVar

import numpy as np
import pytest

import smoothdp.smoothed_dp as sdp
from smoothdp.mechanism import REGISTRY, Mechanism
from smoothdp.privacy import NEIGHBOUR_RELATIONS
from smoothdp.smoothed_dp import (
    QuantizedSamplingAverage,
    SamplingAverage,
    SamplingHistogram,
    SmoothedDPMechanism,
    binary_privacy_profile,
    privacy_profile,
    smoothed_delta,
)
from smoothdp.smoothed_dp.binary import mixture_expected_delta

ROOT = pathlib.Path(__file__).resolve().parents[2]
MECHANISMS = [SamplingHistogram(eta=0.5), SamplingAverage(eta=0.5), QuantizedSamplingAverage(size=3)]


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_declarative_part(mech):
    assert isinstance(mech, SmoothedDPMechanism)
    assert not isinstance(mech, Mechanism)  # no fixed guarantee: nothing to charge to an accountant
    assert type(mech).__qualname__ not in {cls.__qualname__ for cls in REGISTRY.values()}
    assert mech.neighbours == "substitution" and mech.neighbours in NEIGHBOUR_RELATIONS
    assert mech.name and mech.name != SmoothedDPMechanism.name
    assert "Liu, Wang & Xia" in mech.source and "2023" in mech.source
    page, anchor = mech.proof.split("#")
    assert page == "docs/theory/smoothed-dp.md"
    headings = (ROOT / page).read_text(encoding="utf-8").splitlines()
    slugs = {
        re.sub(r"[^a-z0-9 -]", "", h[3:].lower()).replace(" ", "-") for h in headings if h.startswith("## ")
    }
    assert anchor in slugs
    doc = type(mech).__doc__ or ""
    assert "substitut" in doc and "accountant" in doc  # why it is an analysis object


def test_dispatch_goes_through_the_mechanisms_methods():
    class Counting(SamplingHistogram):
        calls: ClassVar[list[str]] = []

        def _privacy_profile(self, histogram, epsilon, method):
            self.calls.append("profile")
            return super()._privacy_profile(histogram, epsilon, method)

        def _smoothed_delta(self, epsilon, n, distributions, mixtures):
            self.calls.append("sdp")
            return super()._smoothed_delta(epsilon, n, distributions, mixtures)

    mech = Counting(eta=0.5)
    plain = SamplingHistogram(eta=0.5)
    assert privacy_profile(mech, [3, 2], 1.0) == privacy_profile(plain, [3, 2], 1.0)
    assert (
        smoothed_delta(mech, 1.0, 6, [[0.3, 0.7]]).delta == smoothed_delta(plain, 1.0, 6, [[0.3, 0.7]]).delta
    )
    assert Counting.calls == ["profile", "sdp"]


def test_functions_that_do_not_apply_name_themselves():
    quantized = QuantizedSamplingAverage(size=3)
    average = SamplingAverage(eta=0.5)
    with pytest.raises(TypeError, match="binary_privacy_profile does not apply to QuantizedSamplingAverage"):
        binary_privacy_profile(quantized, 10, 1.0)
    with pytest.raises(TypeError, match="mixture_expected_delta does not apply to SamplingAverage"):
        mixture_expected_delta(average, 1.0, [5, 5], [[0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(TypeError, match="SamplingHistogram"):
        binary_privacy_profile(object(), 10, 1.0)
    with pytest.raises(TypeError, match="sampled_smoothed_delta"):
        smoothed_delta(quantized, 1.0, 10, np.full((1, 256), 1 / 256))
    with pytest.raises(TypeError, match="continuous"):
        privacy_profile(average, [3, 2], 1.0)


def _imports(module: str) -> set[str]:
    path = ROOT / "src" / (module.replace(".", "/") + ".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("smoothdp.smoothed_dp.")
        ):
            found.add(node.module)
    return found


def test_the_package_imports_form_a_dag():
    package = pathlib.Path(sdp.__file__).parent
    modules = [f"smoothdp.smoothed_dp.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"]
    graph = {m: _imports(m) for m in modules}
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join((*path, node))}"
        if node in done:
            return
        for nxt in graph.get(node, ()):
            visit(nxt, (*path, node))
        done.add(node)

    for m in modules:
        visit(m, ())
        importlib.import_module(m)
    # the two modules of the former cycle, and the split-out binary path
    assert "smoothdp.smoothed_dp.quantized" not in _imports("smoothdp.smoothed_dp.profile")
    assert "smoothdp.smoothed_dp.profile" not in _imports("smoothdp.smoothed_dp.quantized")
    assert "smoothdp.smoothed_dp.mechanisms" not in _imports("smoothdp.smoothed_dp.algorithm1")
