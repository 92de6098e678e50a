"""The README's examples run verbatim, in order, in one namespace (as a reader pastes them)."""

import re
from pathlib import Path

import pytest

import smoothdp

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(BLOCKS[index], f"README block {index}", "exec"), namespace)
    if "release" in namespace:
        release = namespace["release"]
        assert isinstance(release, smoothdp.Release)
        assert release.guarantee.epsilon <= 1.0 and release.guarantee.neighbours == "substitution"
        secret = release.not_private
        assert isinstance(secret, smoothdp.NotPrivate)
        printed = capsys.readouterr().out
        for value in (secret.smooth_sensitivity, secret.noise_scale, secret.noise_std):
            if value is not None:
                assert f"{value:.6g}" not in printed and repr(value) not in printed
    if "acc" in namespace:
        acc = namespace["acc"]
        assert isinstance(acc, smoothdp.Accountant) and len(acc) >= 1
        assert acc.spent.epsilon <= acc.total.epsilon
        if "release" in namespace:
            assert namespace["release"].guarantee in [c.guarantee for c in acc.charges]
    if "share_above" in namespace:
        assert 0.0 < namespace["share_above"] < 1.5


def test_readme_central_example_uses_the_keyword_api():
    central = [b for b in BLOCKS if "median(" in b]
    assert central, "the README shows a central median release"
    assert any("epsilon=" in b and "bounds=" in b for b in central)
