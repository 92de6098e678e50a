"""The README's examples run as written (with `incomes` supplied for the geo example)."""

import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    namespace = {"incomes": np.random.default_rng(0).lognormal(10.0, 1.0, 10_000)}
    exec(compile(BLOCKS[index], f"README block {index}", "exec"), namespace)
    if "release" in namespace:
        assert namespace["release"].guarantee.epsilon == 1.0
    if "share_above" in namespace:
        assert 0.0 < namespace["share_above"] < 1.5
