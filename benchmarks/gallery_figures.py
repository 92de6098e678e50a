"""The site's pictures: docs/img/gallery/ (the reproductions) and docs/img/tutorials/ (the tutorials).

* ``docs/img/gallery/<experiment>.png``: one figure per reproduced experiment, from a quick run
  (``smoothdp.experiments.reproduce(mode="quick", seed=SEED)``, the run ``smoothdp reproduce --quick --seed
  2025`` makes) drawn at a lower resolution (``DPI``) and stored with a palette of 256 colours (Pillow, which
  matplotlib requires), so the site stays light;
* ``docs/img/tutorials/geo-heatmap.png``: the heat-map of the geo tutorial, made by running that page's
  Python blocks verbatim (in a temporary folder, as ``tests/docs/`` runs them) and keeping the ``heatmap.png``
  they write.

Every PNG must stay within ``MAX_BYTES`` (all together within ``MAX_TOTAL_BYTES``): the script stops with an
error naming the file otherwise, and ``tests/docs/test_images.py`` checks the committed ones.

Regenerate (about 2 minutes on 2 cores; matplotlib: the ``experiments`` extra)::

    .venv/bin/python -m benchmarks.gallery_figures                  # both
    .venv/bin/python -m benchmarks.gallery_figures --only tutorials # the tutorial figures alone (seconds)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "img" / "gallery"
TUTORIAL_IMAGES = ROOT / "docs" / "img" / "tutorials"
#: The seed of the quick run (a seed makes the committed pictures reproducible: a simulation, not a release).
SEED = 2025
#: Resolution of the gallery figures (the reports of ``smoothdp reproduce`` use 150).
DPI = 90
MAX_BYTES = 150_000
MAX_TOTAL_BYTES = 2_000_000
#: experiment → the figure of its quick run shown in the gallery (one per experiment).
FIGURES = {
    "polyplace-std": "std_per_sensitivity",
    "geo-threshold": "mse_pums2000",
    "geo-two-way": "mse_ratio_per_pair",
    "geo-kde": "contours",
    "central-adaptive": "percent_error_histograms",
    "private-ratio": "mae_against_ratio",
    "smoothed-elections": "figure2_delta_sdp_against_n",
    "smoothed-three-candidates": "delta_by_unit",
    "smoothed-sgd": "delta_sdp_against_n",
}
#: tutorial page (in docs/tutorials/) → (the file its code writes, its name in docs/img/tutorials/)
TUTORIAL_FIGURES = {"geo.md": ("heatmap.png", "geo-heatmap.png")}
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def check_size(path: Path) -> int:
    """The size of ``path`` in bytes; an error when it is over ``MAX_BYTES``."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{path.relative_to(ROOT)} is {size:,} bytes, over {MAX_BYTES:,}: lower DPI")
    return size


def to_palette(source: Path, target: Path) -> None:
    """Write ``source`` (an opaque RGBA figure) to ``target`` as a PNG of at most 256 colours (no dithering:
    plots have few colours, so lines and text stay exact and colour maps lose at most a shade)."""
    from PIL import Image

    with Image.open(source) as image:
        rgb = image.convert("RGB")
    palette = rgb.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    palette.save(target, "PNG", optimize=True)


def reproduction_figures() -> list[Path]:
    """Run every experiment in quick mode at ``DPI`` and copy the chosen figure of each into ``GALLERY``."""
    from smoothdp.experiments import reproduce

    GALLERY.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as run:
        records = reproduce(list(FIGURES), mode="quick", out_dir=run, seed=SEED, figure_dpi=DPI)
        failed = [f"{r.name}: {r.status} {r.reason}" for r in records if r.status != "done"]
        if failed:
            raise SystemExit("reproductions not done: " + "; ".join(failed))
        for experiment, figure in FIGURES.items():
            target = GALLERY / f"{experiment}.png"
            to_palette(Path(run) / experiment / f"{figure}.png", target)
            written.append(target)
    return written


def tutorial_figures() -> list[Path]:
    """Run each tutorial page's Python blocks verbatim, in order, in a temporary folder; keep its figure."""
    TUTORIAL_IMAGES.mkdir(parents=True, exist_ok=True)
    written = []
    for page, (produced, committed) in TUTORIAL_FIGURES.items():
        text = (ROOT / "docs" / "tutorials" / page).read_text(encoding="utf-8")
        here = Path.cwd()
        with tempfile.TemporaryDirectory() as work:
            os.chdir(work)
            try:
                namespace: dict[str, object] = {"__name__": "__docs_example__"}
                for code in PYTHON_BLOCK.findall(text):
                    exec(compile(code, f"docs/tutorials/{page}", "exec"), namespace)
            finally:
                os.chdir(here)
            target = TUTORIAL_IMAGES / committed
            shutil.copyfile(Path(work) / produced, target)
            written.append(target)
    return written


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("reproductions", "tutorials"), help="make one kind only")
    args = parser.parse_args()
    written = []
    if args.only != "tutorials":
        written += reproduction_figures()
    if args.only != "reproductions":
        written += tutorial_figures()
    for path in written:
        print(f"{check_size(path):>9,} bytes  {path.relative_to(ROOT)}")
    total = sum(p.stat().st_size for p in (ROOT / "docs" / "img").rglob("*.png"))
    print(f"{total:>9,} bytes  all of docs/img")
    if total > MAX_TOTAL_BYTES:
        raise SystemExit(f"docs/img holds {total:,} bytes, over {MAX_TOTAL_BYTES:,}")


if __name__ == "__main__":
    main()
