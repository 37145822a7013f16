"""One look for every figure: each method a colour and a marker of its own, colour-blind-safe, the oracle
thick grey everywhere, and the helpers that draw what every coverage axis needs (the nominal level).

Colours come from Okabe & Ito's colour-blind-safe palette (2008) and seaborn's
"colorblind" one. A colour tells a family (the paper's method is vermillion
whether PA, PA-RNN or PA-LSTM; ACI-like methods blue), the marker tells the
members of a family apart: every built-in method has its own (colour, marker)
pair, the same in every figure. Methods pibench does not know (plugins) draw
from other markers (so they never look like a built-in), starting at a stable
hash of their name, and take a colour no other method of the figure has while
one is free (figures of bands tell methods apart by colour alone), so a plugin's
colour can differ between figures of other methods; where two of them would
still look alike, the later one (by name) takes the next free marker
(:func:`figure_styles`). Dash patterns,
hollow markers and lighter shades tell the settings of one method apart, in the
tables' order (:func:`setting_style`).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import matplotlib.style
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from pibench.reports.summary import setting_sort_key

if TYPE_CHECKING:
    from matplotlib.typing import LegendLocType

OKABE_ITO = {"black": "#000000", "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7"}
#: seaborn "colorblind" colours beyond Okabe-Ito's, and a dark purple
BROWN, PINK, DARK_PURPLE = "#CA9161", "#FBAFE4", "#6B3FA0"
ORACLE_COLOUR = "#777777"


#: What tells the settings of one method apart, in turn: 8 dash patterns, then hollow markers, then lighter shades
#: of the method's colour (48 settings of one method before two look alike).
DASHES: list = ["-", "--", ":", "-.", (0, (5, 1)), (0, (1, 3)), (0, (3, 1, 1, 1, 1, 1)), (0, (8, 3, 2, 3))]
FILLS = ["full", "none"]
SHADES = [0.0, 0.4, 0.65]  # the share of white mixed into the colour


@dataclass(frozen=True)
class SettingLook:
    """How one setting of a method differs from its others: dash pattern, marker fill, lighter colour."""

    linestyle: object = "-"
    fillstyle: str = "full"
    shade: float = 0.0


@dataclass(frozen=True)
class MethodStyle:
    """How one method is drawn: colour, marker, and a line width (the oracle's is thick)."""

    colour: str
    marker: str
    linewidth: float = 1.4

    def line(self, setting: SettingLook | None = None, markersize: float = 4) -> dict:
        """Keyword arguments of ``Axes.plot`` for a line of this method (one setting of it: :func:`setting_style`)."""
        look = setting or SettingLook()
        colour = self.colour
        if look.shade:  # mixed with white
            colour = to_hex(tuple(c + (1 - c) * look.shade for c in to_rgb(self.colour)))  # type: ignore[arg-type]
        return {"color": colour, "marker": self.marker, "linestyle": look.linestyle, "fillstyle": look.fillstyle,
                "linewidth": self.linewidth, "markersize": markersize + (2 if self.marker == "*" else 0),
                **({"alpha": 0.7, "zorder": 1} if self.colour == ORACLE_COLOUR else {})}

    def points(self, size: float = 26, setting: SettingLook | None = None) -> dict:
        """Keyword arguments of ``Axes.scatter`` for points of this method (one setting of it: hollow or lighter,
        :func:`setting_style`)."""
        look = setting or SettingLook()
        colour = self.line(look)["color"]
        face = "none" if look.fillstyle == "none" else colour
        return {"facecolors": face, "edgecolors": colour, "linewidths": 1.2, "marker": self.marker,
                "s": size * (2.5 if self.marker == "*" else 1)}


ORACLE_STYLE = MethodStyle(ORACLE_COLOUR, "*", 3.0)

#: The built-in methods: every (colour, marker) pair is unique.
BUILTIN_STYLES = {
    "pa": MethodStyle(OKABE_ITO["vermillion"], "o"), "pa_rnn": MethodStyle(OKABE_ITO["vermillion"], "s"),
    "pa_lstm": MethodStyle(OKABE_ITO["vermillion"], "D"),
    "aci": MethodStyle(OKABE_ITO["blue"], "o"), "cfrnn": MethodStyle(OKABE_ITO["blue"], "s"),
    "aci_decay": MethodStyle(OKABE_ITO["blue"], "^"),
    "agaci": MethodStyle(OKABE_ITO["orange"], "o"), "mqrnn": MethodStyle(OKABE_ITO["orange"], "s"),
    "nexcp": MethodStyle(OKABE_ITO["green"], "o"), "dprnn": MethodStyle(OKABE_ITO["green"], "s"),
    "enbpi": MethodStyle(OKABE_ITO["purple"], "o"), "autoreg": MethodStyle(OKABE_ITO["black"], "o"),
    "garch": MethodStyle(OKABE_ITO["black"], "s"),
    "quantile_tracker": MethodStyle(OKABE_ITO["sky"], "o"), "mapie_aci": MethodStyle(OKABE_ITO["sky"], "s"),
    "sf_ogd": MethodStyle(OKABE_ITO["yellow"], "o"), "mapie_enbpi": MethodStyle(OKABE_ITO["yellow"], "s"),
    "conformal_pid": MethodStyle(BROWN, "o"), "dtaci": MethodStyle(PINK, "o"), "saocp": MethodStyle(DARK_PURPLE, "o"),
    "oracle": ORACLE_STYLE,
}
#: What plugins draw from: the colours above (not the oracle's grey) and markers no built-in uses.
PLUGIN_COLOURS = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky", "black")] + [
    BROWN, PINK, DARK_PURPLE]
PLUGIN_MARKERS = ["v", "P", "X", "h", "<", ">", "p", "d"]


class LineKwargs(TypedDict, total=False):
    """Keyword arguments of ``Axes.axhline``/``axvline`` for a reference line."""

    color: str
    linestyle: str
    linewidth: float
    alpha: float


NOMINAL_STYLE: LineKwargs = {"color": "#444444", "linestyle": "--", "linewidth": 1.0}


def _plugin_start(method: str) -> int:
    return int(hashlib.sha256(method.encode()).hexdigest()[:8], 16)


def method_style(method: str) -> MethodStyle:
    """The method's style on its own (a plugin's first choice; :func:`figure_styles` settles clashes)."""
    if method in BUILTIN_STYLES:
        return BUILTIN_STYLES[method]
    start = _plugin_start(method)
    return MethodStyle(PLUGIN_COLOURS[start % len(PLUGIN_COLOURS)], PLUGIN_MARKERS[start % len(PLUGIN_MARKERS)])


def figure_styles(methods: Iterable[str]) -> dict[str, MethodStyle]:
    """A style per method of one figure, no two alike: built-ins as :data:`BUILTIN_STYLES`, plugins
    (by name) their own style unless an earlier one took it, else the next free marker of their colour,
    then the next colour; a colour no other method of the figure has first (a figure of bands tells methods
    apart by colour alone)."""
    names = sorted(set(methods))
    styles = {m: BUILTIN_STYLES[m] for m in names if m in BUILTIN_STYLES}
    taken = {(s.colour, s.marker) for s in styles.values()}
    steps = len(PLUGIN_COLOURS) * len(PLUGIN_MARKERS)
    for method in (m for m in names if m not in BUILTIN_STYLES):
        start = _plugin_start(method)
        candidates = [(PLUGIN_COLOURS[(start + step // len(PLUGIN_MARKERS)) % len(PLUGIN_COLOURS)],
                       PLUGIN_MARKERS[(start + step) % len(PLUGIN_MARKERS)]) for step in range(steps)]
        used = {colour for colour, _ in taken}
        colour, marker = next((c for c in candidates if c[0] not in used and c not in taken),
                              next((c for c in candidates if c not in taken), candidates[0]))
        styles[method] = MethodStyle(colour, marker)
        taken.add((colour, marker))
    return styles


def method_colour(method: str) -> str:
    """The method's colour (its family's; :func:`figure_styles` tells members apart by marker)."""
    return method_style(method).colour


class ReportFigure(Figure):
    """A Figure that a notebook shows as a PNG wherever it is returned, whatever the session's matplotlib
    backend (IPython reads ``_repr_png_``; a session's inline backend, where active, shows it its own way)."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, **kwargs) -> tuple[Figure, np.ndarray]:
    """A figure with a grid of axes (a 2-d array of :class:`Axes`, ``squeeze=False``), seaborn's ticks
    style, tight layout. A plain :class:`Figure`, outside pyplot: it renders without a display, stays out of
    the figures a notebook shows by itself (and of pyplot's count of open ones), and leaves the session's
    backend alone; a notebook shows it where it is returned (:class:`ReportFigure`)."""
    with matplotlib.style.context("seaborn-v0_8-ticks"):
        fig = ReportFigure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False, **kwargs)
    return fig, axes


def hide_spare_panels(axes: np.ndarray, used: int) -> None:
    """Hide the panels of the grid ``axes`` after the first ``used``, and label the x axis of the panel above
    each hidden one (with a shared x axis only the bottom row has labels, and that panel is now its column's
    last)."""
    flat = axes.ravel()
    for ax in flat[used:]:
        ax.set_visible(False)
    cols = axes.shape[1]
    for i in range(max(used - cols, 0), used):
        if i + cols >= used:  # the panel below is hidden or missing
            flat[i].tick_params(axis="x", labelbottom=True)
            if not flat[i].get_xlabel():
                flat[i].set_xlabel(flat[-1].get_xlabel())


def readable_limits(ax: Axes, min_relative_span: float = 0.02) -> None:
    """Widen each axis of ``ax`` whose span is under ``min_relative_span`` of its values' magnitude (one
    point, or points equal but for rounding), so its ticks are not rounding noise read through an offset."""
    for get, put in ((ax.get_xlim, ax.set_xlim), (ax.get_ylim, ax.set_ylim)):
        low, high = get()
        scale = max(abs(low), abs(high))
        need = min_relative_span * scale if scale > 0 else 1.0
        if high - low < need:
            middle = (low + high) / 2
            put(middle - need / 2, middle + need / 2)


def label_away(points: np.ndarray) -> list[tuple[int, int]]:
    """For labels beside ``points`` (n, 2) in one panel: each label's offset in points, (+-5, +-4), on the
    side away from its nearest neighbour (distances in units of each axis's span), so a name is never
    nearer another point than its own."""
    span = np.ptp(points, axis=0)
    scaled = points / np.where(span > 0, span, 1.0)
    turns = [(5, 4), (-5, -4), (5, -4), (-5, 4)]  # points at one place: their names in turn round it
    offsets = []
    for i, p in enumerate(scaled):
        others = np.delete(scaled, i, axis=0)
        same = int((scaled[:i] == p).all(axis=1).sum())
        if len(others) == 0 or same or (others == p).all(axis=1).any():
            offsets.append(turns[same % len(turns)])
            continue
        nearest = others[np.argmin(np.hypot(*(others - p).T))]
        offsets.append((-5 if nearest[0] > p[0] else 5, -4 if nearest[1] > p[1] else 4))
    return offsets


#: Pixels kept between two point labels (:func:`place_labels`).
LABEL_GAP = 1.0


def place_labels(fig: Figure, panels: dict[Axes, list[Annotation]], sides: dict[Annotation, tuple[float, float]]
                 ) -> dict[Axes, int]:
    """Place each panel's point labels (offset from their points; ``sides`` holds each label's first-choice
    offset) so that none overlaps one placed already, lies over another point (where it would read as that
    point's name) or runs out of its panel, the most isolated points' first (nearest other point in display
    space): on its first side if it fits there, else on another side of its point, else hidden. One layout
    for every panel; how many labels each panel hid. A crowd of settings keeps a few names instead of a blot
    of many."""
    fig.draw_without_rendering()  # the layout, then the labels' places
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)  # a display-free one
    renderer = canvas.get_renderer()
    hidden = {}
    for ax, labels in panels.items():
        anchors = np.array([ax.transData.transform(label.xy) for label in labels])
        gaps = [float(np.delete(np.hypot(*(anchors - a).T), i).min()) if len(labels) > 1 else 0.0
                for i, a in enumerate(anchors)]
        marks = _marks(ax)
        panel = ax.get_window_extent(renderer)
        placed: list = []
        hidden[ax] = 0
        for i in sorted(range(len(labels)), key=lambda k: -gaps[k]):
            label = labels[i]
            dx, dy = sides[label]
            label.set_visible(True)
            own = anchors[i]
            fits = []  # (side, box) inside the panel and clear of the labels placed
            for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):  # its first side first
                _turn(label, sx * dx, sy * dy)
                box = label.get_window_extent(renderer)
                inside = panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0 and box.y1 <= panel.y1
                kept_apart = box.padded(LABEL_GAP)  # a pixel apart: a layout that moves a hair keeps them apart
                if inside and not any(kept_apart.overlaps(other) for other in placed):
                    fits.append(((sx * dx, sy * dy), kept_apart))
            # a side whose name lies over no other point: a name over another point reads as that point's
            clear = [f for f in fits if not _covers(f[1].padded(MARK_CLEARANCE), marks, own)]
            if clear:
                (ox, oy), box = clear[0]
                _turn(label, ox, oy)
                placed.append(box)
            else:
                label.set_visible(False)
                hidden[ax] += 1
    return hidden


#: Pixels between a point label and any other point it must not lie over (:func:`place_labels`).
MARK_CLEARANCE = 8.0


def _turn(label: Annotation, dx: float, dy: float) -> None:
    """Put ``label`` at offset (dx, dy) points from its point, on that side of it."""
    label.xyann = (dx, dy)
    label.set_horizontalalignment("left" if dx > 0 else "right")
    label.set_verticalalignment("bottom" if dy > 0 else "top")


def _marks(ax: Axes) -> np.ndarray:
    """(n, 2) display positions of the points of ``ax``'s scatter plots."""
    found = [c.get_offset_transform().transform(np.asarray(c.get_offsets(), dtype=float)) for c in ax.collections
             if isinstance(c, PathCollection)]
    return np.concatenate(found) if found else np.empty((0, 2))


def _covers(box, marks: np.ndarray, own: np.ndarray) -> bool:
    """Whether ``box`` (display) holds a point of ``marks`` other than ``own``."""
    other = np.hypot(*(marks - own).T) > 0.5
    inside = (marks[:, 0] >= box.x0) & (marks[:, 0] <= box.x1) & (marks[:, 1] >= box.y0) & (marks[:, 1] <= box.y1)
    return bool((inside & other).any())


def nominal_line(ax: Axes, level_percent: float, vertical: bool = False, label: bool = True) -> None:
    """The nominal coverage as a dashed line (horizontal unless ``vertical``)."""
    draw = ax.axvline if vertical else ax.axhline
    draw(level_percent, **NOMINAL_STYLE, label=f"nominal {level_percent:g}%" if label else None, zorder=0)


def legend_outside(fig: Figure, axes: Iterable[Axes], loc: LegendLocType = "outside right center",
                   **kwargs) -> None:
    """One legend of the labelled artists of ``axes`` (each label once), outside the axes (default: to the
    right of the figure), off the data."""
    entries: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if entries:
        kwargs.setdefault("handlelength", 3.5)  # long enough to show a dashed or dotted setting beside its marker
        fig.legend(list(entries.values()), list(entries), loc=loc, fontsize=7, frameon=False, **kwargs)


def _luminance(rgba) -> float:
    """WCAG relative luminance of a colour (0 black, 1 white)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def text_colour_on(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba`` (WCAG relative luminance)."""
    return "white" if _luminance(rgba) < 0.179 else "black"


def label_colour(colour: str, contrast: float = 3.0) -> str:
    """``colour`` for text on white: as it is where it contrasts with white at least ``contrast`` : 1 (WCAG), else
    darkened with black until it does (Okabe & Ito's yellow, 1.3 : 1 as it is, becomes an olive that reads)."""
    rgb = to_rgb(colour)
    for share in np.linspace(0.0, 1.0, 41):  # the share of black mixed in
        darker = tuple(c * (1 - share) for c in rgb)
        if 1.05 / (_luminance(darker) + 0.05) >= contrast:
            return to_hex(darker)
    return "#000000"


def setting_style(method: str, setting: str, rows) -> SettingLook:
    """The look telling ``setting`` apart from the method's other settings in ``rows`` (colour and marker tell
    the method), by its place in the tables' natural order (gamma=0.001 before gamma=0.01)."""
    settings = sorted(rows.loc[rows["method"] == method, "setting"].unique(), key=setting_sort_key)
    i = settings.index(setting)
    return SettingLook(DASHES[i % len(DASHES)], FILLS[i // len(DASHES) % len(FILLS)],
                       SHADES[i // (len(DASHES) * len(FILLS)) % len(SHADES)])


def setting_point_style(method: str, setting: str, rows) -> SettingLook:
    """As :func:`setting_style`, for points, which have no dashes: filled, hollow, then lighter shades of both."""
    settings = sorted(rows.loc[rows["method"] == method, "setting"].unique(), key=setting_sort_key)
    i = settings.index(setting)
    return SettingLook(fillstyle=FILLS[i % len(FILLS)], shade=SHADES[i // len(FILLS) % len(SHADES)])


def run_labels(methods: Iterable[str], settings: Iterable[str]) -> list[str]:
    """Each (method, setting)'s name in a legend or on an axis: the method alone where it ran one setting, the
    default one, else "method setting" (a lone setting such as ``dist=t`` is named, as the tables name it)."""
    pairs = list(zip(methods, settings))
    counts: dict[str, set] = {}
    for method, setting in pairs:
        counts.setdefault(method, set()).add(setting)
    return [f"{m} {s}" if len(counts[m]) > 1 or str(s) != "default" else str(m) for m, s in pairs]


def in_setting_order(groups: Iterable) -> list:
    """``(method, setting), ...`` items (a groupby's) by method, then setting in the tables' natural order, so a
    legend lists period=7 before period=14."""
    return sorted(groups, key=lambda item: (item[0][0], setting_sort_key(item[0][1])))
