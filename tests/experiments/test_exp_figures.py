"""Figures a reader understands alone: structural checks of every experiment's figures on a tiny run.

Each experiment module exposes ``figures(tables, config) -> {name: Figure}``; here it is called on the
tables its tiny run wrote (read back from the CSVs), and the figures are inspected: a title, labelled
axes, one legend outside the data area (a figure legend that overlaps no panel and no title), shared
y-scales where panels are compared, colour bars on the maps, PolyPlace panels where it is the headline,
and the same colour for a mechanism in every figure.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from _exp_helpers import read_table
from matplotlib.colors import to_rgba
from matplotlib.transforms import Bbox

from smoothdp.experiments import EXPERIMENTS, Table
from smoothdp.experiments import style as style_module
from smoothdp.experiments.style import (
    FAMILY_COLOURS,
    data_axes,
    is_colour_bar,
    legend_outside,
    mechanism_style,
    subplots,
)

#: The experiments whose figures this file checks: every registered one.
NAMES = tuple(EXPERIMENTS)
#: The experiments whose figures show no noise family (smoothed DP adds no noise), hence no PolyPlace curve.
WITHOUT_NOISE_FAMILY = ("smoothed-elections", "smoothed-three-candidates", "smoothed-sgd", "private-ratio")


def _figures(tiny_run, name):
    _, folder = tiny_run(name)
    module = EXPERIMENTS[name].load()
    tables = {path.stem: Table(read_table(path)) for path in sorted(folder.glob("*.csv"))}
    figures = module.figures(tables, module.CONFIGS["tiny"])
    for fig in figures.values():
        fig.canvas.draw()
    return figures


@pytest.fixture(scope="module")
def figures_of(tiny_run):
    """``figures_of(name)``: the figures of a tiny run, drawn once per module (the tests only read them)."""
    made = {}

    def make(name):
        if name not in made:
            made[name] = _figures(tiny_run, name)
        return made[name]

    yield make
    for figures in made.values():
        for fig in figures.values():
            plt.close(fig)


def _area(a: Bbox, b: Bbox) -> float:
    inter = Bbox.intersection(a, b)
    return 0.0 if inter is None else max(inter.width, 0.0) * max(inter.height, 0.0)


def _panel_boxes(fig):
    renderer = fig.canvas.get_renderer()
    return [ax.get_tightbbox(renderer) for ax in data_axes(fig)]


def _labelled(ax, axis):
    """The axis has a label, or a panel sharing that axis has one (inner panels of a shared grid)."""
    shared = ax.get_shared_x_axes() if axis == "x" else ax.get_shared_y_axes()
    return any(
        (sibling.get_xlabel() if axis == "x" else sibling.get_ylabel()).strip()
        for sibling in shared.get_siblings(ax)
        if sibling.get_visible()
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_figure_has_a_title_labelled_axes_and_no_legend_inside_a_panel(figures_of, name):
    for fig_name, fig in figures_of(name).items():
        assert fig._suptitle is not None and fig._suptitle.get_text().strip(), (name, fig_name)
        panels = data_axes(fig)
        assert panels
        for ax in panels:
            assert ax.get_legend() is None, f"{name}/{fig_name}: a legend inside a panel"
            assert _labelled(ax, "x") and _labelled(ax, "y"), f"{name}/{fig_name}: unlabelled axis"
        for ax in fig.axes:
            if is_colour_bar(ax):
                assert ax.get_ylabel().strip() or ax.get_xlabel().strip(), (
                    f"{name}/{fig_name}: bare colour bar"
                )


@pytest.mark.parametrize("name", NAMES)
def test_the_legend_is_one_figure_legend_outside_every_panel_and_the_title(figures_of, name):
    for fig_name, fig in figures_of(name).items():
        labelled = [
            label
            for ax in data_axes(fig)
            for label in ax.get_legend_handles_labels()[1]
            if not label.startswith("_")
        ]
        if not labelled and not fig.legends:
            continue  # a map: its colour bar is its key
        assert len(fig.legends) == 1, f"{name}/{fig_name}: {len(fig.legends)} figure legends"
        renderer = fig.canvas.get_renderer()
        legend_box = fig.legends[0].get_window_extent(renderer)
        entries = [t.get_text() for t in fig.legends[0].get_texts()]
        assert set(labelled) <= set(entries), f"{name}/{fig_name}: curves missing from the legend"
        for box in _panel_boxes(fig):
            assert _area(legend_box, box) < 1.0, f"{name}/{fig_name}: the legend overlaps a panel"
        title_box = fig._suptitle.get_window_extent(renderer)
        assert _area(legend_box, title_box) < 1.0, f"{name}/{fig_name}: the legend overlaps the title"


@pytest.mark.parametrize("name", NAMES)
def test_the_title_overlaps_no_panel(figures_of, name):
    for fig_name, fig in figures_of(name).items():
        title_box = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
        for box in _panel_boxes(fig):
            assert _area(title_box, box) < 1.0, f"{name}/{fig_name}: the title overlaps a panel"


def _coloured_entries(ax):
    """(label, RGB) of every labelled line, bar group and histogram of a panel."""
    out = []
    for line in ax.get_lines():
        out.append((line.get_label(), to_rgba(line.get_color())[:3]))
    for container in ax.containers:
        patch = container.patches[0]
        out.append((container.get_label(), to_rgba(patch.get_facecolor())[:3]))
    for patch in ax.patches:
        colour = patch.get_facecolor() if patch.get_fill() else patch.get_edgecolor()
        out.append((patch.get_label(), to_rgba(colour)[:3]))
    return [(label, colour) for label, colour in out if label and not label.startswith("_")]


@pytest.mark.parametrize("name", NAMES)
def test_a_mechanism_has_the_same_colour_in_every_figure(figures_of, name):
    polyplace = to_rgba(FAMILY_COLOURS["polyplace"])[:3]
    seen = 0
    for fig in figures_of(name).values():
        for ax in data_axes(fig):
            for label, colour in _coloured_entries(ax):
                if _is_mechanism(label):
                    expected = to_rgba(mechanism_style(label)["color"])[:3]
                    assert colour == pytest.approx(expected), (name, label)
                if "polyplace" in label.lower():
                    seen += 1
                    assert colour == pytest.approx(polyplace), (name, label)
    if name not in WITHOUT_NOISE_FAMILY:
        assert seen, f"{name}: no PolyPlace curve or bar"


def _is_mechanism(label):
    try:
        mechanism_style(label)
    except ValueError:
        return False
    return True


def test_threshold_panels_of_one_row_share_the_y_scale_and_rows_differ(figures_of):
    for fig in figures_of("geo-threshold").values():  # tiny: 2 thresholds × 1 ε
        rows = [[ax for ax in fig.axes if ax.get_subplotspec().rowspan.start == r] for r in range(2)]
        for row in rows:
            for ax in row[1:]:
                assert row[0].get_shared_y_axes().joined(row[0], ax)
        assert not rows[0][0].get_shared_y_axes().joined(rows[0][0], rows[1][0])


def test_threshold_full_figure_shares_y_within_each_row():
    # The full 4 × 3 grid, on made-up numbers (the layout, not the data, is under test).
    from smoothdp.experiments import geo_threshold

    config = geo_threshold.CONFIGS["full"]
    rows = []
    for dataset in config.datasets:
        for t, eps_list in zip(config.thresholds, config.epsilons, strict=True):
            for eps in eps_list:
                for n in config.n_values:
                    for name in geo_threshold.MECHANISMS:
                        rows.append((dataset, t, eps, n, name, 1e-6 * t / n))
    columns = dict(
        zip(
            ("dataset", "threshold", "epsilon", "n", "mechanism", "mse_soft"),
            zip(*rows, strict=True),
            strict=True,
        )
    )
    table = Table({k: np.array(v) for k, v in columns.items()})
    figures = geo_threshold.figures({"mse": table}, config)
    try:
        for fig in figures.values():
            axes = np.array(fig.axes).reshape(4, 3)
            for r in range(4):
                assert all(axes[r, 0].get_shared_y_axes().joined(axes[r, 0], ax) for ax in axes[r, 1:])
            assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    finally:
        for fig in figures.values():
            plt.close(fig)


@pytest.mark.parametrize(("name", "figure"), [("geo-kde", "ase_bars"), ("geo-two-way", "ase_bars")])
def test_compared_bar_panels_share_the_y_scale(figures_of, name, figure):
    axes = data_axes(figures_of(name)[figure])
    assert len(axes) >= 2
    assert all(axes[0].get_shared_y_axes().joined(axes[0], ax) for ax in axes[1:])


def test_central_histograms_share_the_trial_count_scale(figures_of):
    axes = data_axes(figures_of("central-adaptive")["percent_error_histograms"])
    assert all(axes[0].get_shared_y_axes().joined(axes[0], ax) for ax in axes[1:])


def test_kde_contours_have_a_colour_bar_and_a_polyplace_panel_next_to_the_truth(figures_of):
    fig = figures_of("geo-kde")["contours"]
    titles = [ax.get_title() for ax in data_axes(fig)]
    assert titles[0] == "true (non-private)"
    assert "smooth sensitivity, PolyPlace" in titles[:2]
    assert {"smooth sensitivity, T(3)", "global Lipschitz", "local DP"} <= set(titles)
    bars = [ax for ax in fig.axes if is_colour_bar(ax)]
    assert len(bars) == 1 and "density" in bars[0].get_ylabel()
    # one colour scale for every panel: the same contour levels everywhere
    levels = {
        tuple(np.round(c.levels, 12)) for ax in data_axes(fig) for c in ax.collections if hasattr(c, "levels")
    }
    assert len(levels) == 1


def test_two_way_pair_maps_show_polyplace_and_one_colour_bar(figures_of):
    fig = figures_of("geo-two-way")["mse_ratio_per_pair"]
    titles = [ax.get_title() for ax in data_axes(fig)]
    assert "smooth sensitivity, PolyPlace" in titles and "smooth sensitivity, T(3)" in titles
    assert sum(is_colour_bar(ax) for ax in fig.axes) == 1
    images = [ax.get_images()[0] for ax in data_axes(fig)]
    assert len({im.get_clim() for im in images}) == 1  # one colour scale


# -- the style module itself ------------------------------------------------------------------------------


def test_one_colour_per_family_whatever_the_wording():
    same = [
        ("smooth sensitivity, PolyPlace", "PolyPlace (HT Thm 8)", "smooth sensitivity, polyplace"),
        ("smooth sensitivity, T(3)", "Student's T, BS19 constants", "smooth sensitivity, student_t"),
        ("generalized Cauchy, NRS constants", "smooth sensitivity, cauchy"),
        ("global Lipschitz", "global sensitivity (sum/count)", "global sensitivity (Laplace)"),
    ]
    colours = []
    for group in same:
        group_colours = {mechanism_style(label)["color"] for label in group}
        assert len(group_colours) == 1, group
        colours.append(group_colours.pop())
    assert len(set(colours)) == len(colours)  # the families differ
    assert mechanism_style("Student's T, Liang-Yi constants")["linestyle"] == ":"
    assert mechanism_style("smooth sensitivity, PolyPlace")["linewidth"] > 2


def test_unknown_labels_and_misuse_are_errors():
    with pytest.raises(ValueError, match="no colour"):
        mechanism_style("a mechanism nobody registered")
    fig, ax = plt.subplots()  # not constrained layout
    ax.plot([0, 1], label="global Lipschitz")
    try:
        with pytest.raises(ValueError, match="constrained"):
            legend_outside(fig)
    finally:
        plt.close(fig)
    fig, axes = subplots(1, 1)
    try:
        with pytest.raises(ValueError, match="where"):
            legend_outside(fig, where="inside")
        with pytest.raises(ValueError, match="label"):
            style_module.colour_bar(fig, axes[0, 0].imshow([[0, 1]]), axes[0, 0], label="")
    finally:
        plt.close(fig)


def test_legend_outside_merges_panels_and_removes_their_legends():
    fig, axes = subplots(1, 2)
    try:
        axes[0, 0].plot([0, 1], label="global Lipschitz")
        axes[0, 1].plot([0, 1], label="global Lipschitz")
        axes[0, 1].plot([1, 0], label="local DP")
        axes[0, 1].legend()
        legend = legend_outside(fig)
        assert [t.get_text() for t in legend.get_texts()] == ["global Lipschitz", "local DP"]
        assert axes[0, 1].get_legend() is None and fig.legends == [legend]
    finally:
        plt.close(fig)
