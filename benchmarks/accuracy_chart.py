"""The accuracy comparison as a chart: docs/img/accuracy.png from benchmarks/results/accuracy.json.

One panel per data set and statistic (median; deciles), median absolute error against ε (log–log), one line
per library in its default setting (smoothdp's default call and the competitors: the rows whose ``role`` is
``"default"`` or ``"competitor"``). An error of exactly 0 (tied data
released exactly) is drawn at the panel's floor, with a hollow marker. The numbers are the benchmark's own
(``python -m benchmarks.accuracy`` writes the JSON); this script only draws them.

Regenerate: ``.venv/bin/python -m benchmarks.accuracy_chart`` (matplotlib: the ``experiments`` extra).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.accuracy.report import trial_counts
from benchmarks.gallery_figures import check_size, to_palette

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "benchmarks" / "results" / "accuracy.json"
TARGET = ROOT / "docs" / "img" / "accuracy.png"


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    every = json.loads(SOURCE.read_text(encoding="utf-8"))["cells"]
    cells = [c for c in every if c["role"] in ("default", "competitor")]
    panels = sorted({(c["kind"], c["dataset"]) for c in cells})
    libraries = sorted({c["method"] for c in cells}, key=lambda m: (m != "smoothdp", m))
    columns = 4
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(12, 2.6 * rows), squeeze=False)
    colours = dict(zip(libraries, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, (kind, dataset) in zip(axes.flat, panels, strict=False):
        mine = [c for c in cells if c["kind"] == kind and c["dataset"] == dataset and not c["failure"]]
        positive = [c["median_abs_error"] for c in mine if c["median_abs_error"] > 0]
        floor = min(positive) / 10 if positive else 1e-6
        for library in libraries:
            line = sorted((c["epsilon"], c["median_abs_error"]) for c in mine if c["method"] == library)
            if not line:
                continue
            eps = [e for e, _ in line]
            err = [max(v, floor) for _, v in line]
            ax.plot(eps, err, "-", color=colours[library], label=library, linewidth=1.5)
            shown = [(e, v) for e, v in line if v > 0]
            ax.plot([e for e, _ in shown], [v for _, v in shown], "o", color=colours[library], ms=4)
            zeros = [e for e, v in line if v == 0]
            ax.plot(zeros, [floor] * len(zeros), "o", mfc="none", color=colours[library], ms=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{dataset} ({kind})", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("ε", fontsize=8)
        ax.set_ylabel("median |error|", fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    title = f"Median absolute error of one release ({trial_counts(cells)} trials per cell; lower is better)"
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        drawn = Path(work) / "accuracy.png"
        fig.savefig(drawn, dpi=72)
        to_palette(drawn, TARGET)  # 256 colours, as the gallery's figures: the site's size limit
    print(f"wrote {TARGET.relative_to(ROOT)} ({check_size(TARGET) // 1024} KB)")


if __name__ == "__main__":
    main()
