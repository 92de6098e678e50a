"""One look for every reproduction figure: colours, font sizes, legends and colour bars.

Every experiment's plotting goes through this module, so that a reader who has seen one figure can read
the next without its caption:

* **one colour per noise family and per mechanism**, the same in every figure (:func:`mechanism_style`):
  PolyPlace red and drawn thicker (the headline noise), Student's T blue, generalized Cauchy green, Laplace
  orange, every global-sensitivity baseline dark grey, non-private references black and dashed;
* **one set of font sizes** (:data:`RC`, applied by the :func:`styled` decorator around a figure builder);
* **figures laid out by matplotlib's constrained layout** (:func:`subplots`), with **one legend outside the
  data area** (:func:`legend_outside`, below or to the right of all panels) and **colour bars with a
  labelled unit** (:func:`colour_bar`).
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, ParamSpec, TypeVar, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colorbar import Colorbar
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.legend import Legend

from smoothdp.experiments._framework import plt

__all__ = [
    "FAMILY_COLOURS",
    "MECHANISM_COLOURS",
    "RC",
    "bar_style",
    "colour_bar",
    "data_axes",
    "is_colour_bar",
    "label_all",
    "legend_outside",
    "mechanism_style",
    "sequence_colours",
    "styled",
    "subplots",
    "suptitle",
]

P = ParamSpec("P")
Share = Literal["none", "all", "row", "col"]
R = TypeVar("R")

#: Font sizes and line widths of every reproduction figure.
RC: dict[str, Any] = {
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9.5,
    "figure.titlesize": 12,
    "lines.linewidth": 1.6,
    "lines.markersize": 4,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
}

#: The colour of each noise family (the noise that smooth-sensitivity mechanisms add).
FAMILY_COLOURS: dict[str, str] = {
    "polyplace": "#d62728",  # red: the headline noise
    "student_t": "#1f77b4",  # blue
    "cauchy": "#2ca02c",  # green
    "laplace": "#ff7f0e",  # orange
}

#: The colour of each other kind of mechanism.
MECHANISM_COLOURS: dict[str, str] = {
    "global": "#4d4d4d",  # global sensitivity / global Lipschitz: the baseline, dark grey
    "reference": "#000000",  # non-private references (dashed)
    "noise_a_priori": "#9467bd",  # purple
    "noise_a_priori_distance": "#8c564b",  # brown
    "local_dp": "#e377c2",  # pink
    "ptr": "#17becf",  # cyan
    "sample_and_aggregate": "#bcbd22",  # olive
    "bounded_local_sensitivity": "#17becf",  # cyan (the ratio's local-sensitivity bound, like PTR)
    "ksw": "#8c564b",  # brown
}

#: Line styles told apart within one colour (variants of one mechanism in one panel).
_VARIANT_STYLES = ("-", "-.", (0, (5, 2, 1, 2)), (0, (1, 1)))

#: (substrings of a label, lower case: all must occur) → (colour key, extra style), first match wins.
_RULES: tuple[tuple[tuple[str, ...], str, dict[str, Any]], ...] = (
    (("non-private",), "reference", {"linestyle": "--", "linewidth": 1.0}),
    (("polyplace",), "polyplace", {"linewidth": 2.4, "zorder": 3}),
    (("student",), "student_t", {}),
    (("t(3)",), "student_t", {}),
    (("cauchy",), "cauchy", {}),
    (("global",), "global", {}),
    (("naive",), "global", {}),
    (("noise a priori (distance)",), "noise_a_priori_distance", {}),
    (("noise a priori",), "noise_a_priori", {}),
    (("local dp",), "local_dp", {}),
    (("ptr",), "ptr", {}),
    (("sample-and-aggregate",), "sample_and_aggregate", {}),
    (("bounded ls",), "bounded_local_sensitivity", {}),
    (("ksw", "substitut"), "ksw", {"linestyle": "--"}),
    (("ksw",), "ksw", {}),
    (("laplace",), "laplace", {}),
)


def _colour(key: str) -> str:
    return FAMILY_COLOURS.get(key) or MECHANISM_COLOURS[key]


def mechanism_style(label: str, *, variant: int = 0) -> dict[str, Any]:
    """Matplotlib keyword arguments (``color``, and ``linestyle``/``linewidth`` where they differ) of the
    curve or bar of the mechanism or noise family named by ``label``, the same in every figure.

    ``variant`` (0, 1, ...) tells apart variants of one mechanism in one panel by line style (e.g. two ε₁
    fractions of the bounded-local-sensitivity ratio). Curves drawn with another family's constants (the
    Liang-Yi constants) are dotted. An unknown label is an error: every plotted mechanism has a colour here.
    """
    text = label.lower()
    for words, key, extra in _RULES:
        if all(word in text for word in words):
            style = {"color": _colour(key), **extra}
            if "liang-yi" in text:
                style["linestyle"] = ":"
            elif variant:
                style["linestyle"] = _VARIANT_STYLES[variant % len(_VARIANT_STYLES)]
            return style
    raise ValueError(f"no colour for the mechanism label {label!r}; add a rule to smoothdp.experiments.style")


def bar_style(label: str) -> dict[str, Any]:
    """:func:`mechanism_style` for a bar: its colour, hatched when the line would be dashed."""
    style = mechanism_style(label)
    out: dict[str, Any] = {"color": style["color"]}
    if style.get("linestyle") not in (None, "-"):
        out["hatch"] = "//"
    if "polyplace" in label.lower():
        out["edgecolor"] = "black"
        out["linewidth"] = 0.8
    return out


def sequence_colours(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours of an ordered parameter (e.g. ε from small to large), from the viridis map."""
    return [tuple(c) for c in plt.get_cmap("viridis")(np.linspace(0.0, 0.85, max(n, 1)))][:n]


def styled(builder: Callable[P, R]) -> Callable[P, R]:
    """Run a figure builder with :data:`RC` in force (font sizes are read when text is created)."""

    @functools.wraps(builder)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with plt.rc_context(cast(Any, RC)):
            return builder(*args, **kwargs)

    return wrapper


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    panel_size: tuple[float, float] = (4.2, 3.3),
    sharex: bool | Share = False,
    sharey: bool | Share = False,
) -> tuple[Figure, np.ndarray]:
    """A figure of ``nrows × ncols`` panels (always a 2-D array of axes) in constrained layout, each panel
    ``panel_size`` inches; ``sharey=True`` / ``"row"`` gives panels that are compared one y-scale."""
    fig, axes = plt.subplots(
        nrows,
        ncols,
        squeeze=False,
        sharex=sharex,
        sharey=sharey,
        figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
        layout="constrained",
    )
    return fig, axes


def suptitle(fig: Figure, text: str) -> Any:
    """The figure's title (what the figure compares), wrapped to the figure's width so that it never
    runs past the panels."""
    chars = max(int(fig.get_figwidth() * 11), 30)  # ~11 characters per inch at the title's size
    bound = text.replace(" = ", "\u00a0=\u00a0")  # never break "ε = 1/12,000" across lines
    return fig.suptitle(textwrap.fill(bound, chars))


def is_colour_bar(ax: Axes) -> bool:
    """Whether ``ax`` holds a colour bar (not data)."""
    return getattr(ax, "_colorbar", None) is not None


def data_axes(fig: Figure) -> list[Axes]:
    """The visible panels of ``fig`` that show data (not colour bars)."""
    return [ax for ax in fig.axes if ax.get_visible() and not is_colour_bar(ax)]


def legend_outside(
    fig: Figure,
    axes: Iterable[Axes] | None = None,
    *,
    where: str = "below",
    ncols: int | None = None,
    title: str | None = None,
) -> Legend:
    """One figure legend outside every panel, below (``where="below"``) or right of them (``"right"``).

    Collects the labelled artists of ``axes`` (default: every data panel), one entry per label in the
    order first drawn, removes the panels' own legends and places the figure legend in the margin that
    the constrained layout keeps free of data.
    """
    if where not in ("below", "right"):
        raise ValueError(f"where must be 'below' or 'right'; got {where!r}")
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        raise ValueError("legend_outside needs a figure in constrained layout (style.subplots)")
    entries: dict[str, Any] = {}
    for ax in data_axes(fig) if axes is None else list(axes):
        handles, labels = ax.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            entries.setdefault(label, handle)
        own = ax.get_legend()
        if own is not None:
            own.remove()
    if not entries:
        raise ValueError("legend_outside: no labelled artist to put in the legend")
    loc: Literal["outside lower center", "outside right center"]
    if where == "below":
        columns = ncols or min(len(entries), 4)
        loc = "outside lower center"
    else:
        columns = ncols or 1
        loc = "outside right center"
    return fig.legend(
        list(entries.values()), list(entries), loc=loc, ncols=columns, title=title, frameon=False
    )


def colour_bar(
    fig: Figure, mappable: Any, axes: Axes | Sequence[Axes], *, label: str, **options: Any
) -> Colorbar:
    """One colour bar for the panels ``axes`` (sharing ``mappable``'s colour scale), its unit in ``label``;
    ``options`` go to ``Figure.colorbar`` (e.g. ``format="%.3f"``)."""
    if not label:
        raise ValueError("a colour bar needs a label naming the quantity and its unit")
    targets = [axes] if isinstance(axes, Axes) else list(axes)
    return fig.colorbar(mappable, ax=targets, label=label, shrink=0.9, **options)


def label_all(fig: Figure, labels: Mapping[str, str]) -> None:
    """Set the same ``xlabel`` / ``ylabel`` on every data panel (``labels`` keys: ``x``, ``y``)."""
    for ax in data_axes(fig):
        if "x" in labels:
            ax.set_xlabel(labels["x"])
        if "y" in labels:
            ax.set_ylabel(labels["y"])
