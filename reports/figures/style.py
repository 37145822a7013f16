"""One look for every figure: a colour per method (the same in every figure), colour-blind-safe, and the helpers
that draw what every coverage axis needs (the nominal level).

Colours come from Okabe & Ito's colour-blind-safe palette (2008) and seaborn's
"colorblind" one. Methods that never share a figure share a colour by role: the
paper's method is vermillion whether it is PA (fesp), PA-RNN (order selection) or
PA-LSTM (sets); the main conformal baseline is blue (ACI, CF-RNN); and so on.
Methods pibench does not know (plugins) get the remaining colours by a stable
hash of their name.
"""

from __future__ import annotations

import hashlib

import matplotlib

matplotlib.use("Agg")  # figures are files: no display, whatever the environment says

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

OKABE_ITO = {"black": "#000000", "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7"}
EXTRA = ["#949494", "#ECE133", "#CA9161", "#FBAFE4", "#56B4E9", "#029E73"]  # seaborn "colorblind", rest

METHOD_COLOURS = {
    "pa": OKABE_ITO["vermillion"], "pa_rnn": OKABE_ITO["vermillion"], "pa_lstm": OKABE_ITO["vermillion"],
    "aci": OKABE_ITO["blue"], "cfrnn": OKABE_ITO["blue"],
    "agaci": OKABE_ITO["orange"], "mqrnn": OKABE_ITO["orange"],
    "nexcp": OKABE_ITO["green"], "dprnn": OKABE_ITO["green"],
    "enbpi": OKABE_ITO["purple"], "autoreg": OKABE_ITO["black"],
    "mapie_aci": OKABE_ITO["sky"], "mapie_enbpi": OKABE_ITO["yellow"],
    # online methods beyond the paper (they share fesp's figures with the paper's conformal methods)
    "quantile_tracker": OKABE_ITO["sky"], "conformal_pid": "#CA9161", "aci_decay": "#949494",
    "dtaci": "#FBAFE4", "sf_ogd": OKABE_ITO["yellow"], "saocp": "#6B3FA0",
}
NOMINAL_STYLE = {"color": "#444444", "linestyle": "--", "linewidth": 1.0}


def method_colour(method: str) -> str:
    """The method's colour, the same in every figure."""
    if method in METHOD_COLOURS:
        return METHOD_COLOURS[method]
    digest = int(hashlib.sha256(method.encode()).hexdigest()[:8], 16)
    return EXTRA[digest % len(EXTRA)]


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, **kwargs) -> tuple[Figure, object]:
    """A figure with a grid of axes, seaborn's ticks style, tight layout."""
    with plt.style.context("seaborn-v0_8-ticks"):
        fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False, layout="constrained", **kwargs)
    return fig, axes


def nominal_line(ax: Axes, level_percent: float, vertical: bool = False, label: bool = True) -> None:
    """The nominal coverage as a dashed line (horizontal unless ``vertical``)."""
    draw = ax.axvline if vertical else ax.axhline
    draw(level_percent, **NOMINAL_STYLE, label=f"nominal {level_percent:g}%" if label else None, zorder=0)


LINE_STYLES = [{"linestyle": "-", "marker": "o"}, {"linestyle": "--", "marker": "^"},
               {"linestyle": ":", "marker": "s"}, {"linestyle": "-.", "marker": "D"}]


def setting_style(method: str, setting: str, rows) -> dict:
    """Line and marker style telling apart the settings of one method (the colour tells the method)."""
    settings = sorted(rows.loc[rows["method"] == method, "setting"].unique())
    return LINE_STYLES[settings.index(setting) % len(LINE_STYLES)]
