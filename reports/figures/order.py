"""The order-selection figure: FSR, NSR and the estimated order per input window, the paper's beside ours."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import figure_styles, in_setting_order, legend_outside, new_figure, setting_style
from pibench.reports.paper_tables import order_selection_comparison


def order_selection_figure(results: StoredResults, suite: str = "ar_order") -> Figure | None:
    """Rows NLAR / EXPAR, columns FSR, NSR, estimated AR order against the window; each (method, setting)
    a line of filled markers, the paper's PA-RNN as hollow black squares."""
    table = order_selection_comparison(results.summary, suite)
    if table.empty:
        return None
    processes = sorted(table["process"].unique())
    styles = figure_styles(table["method"])
    fig, axes = new_figure(13.5, 3.0 * len(processes) + 0.6, len(processes), 3)
    metrics = [("fsr", "false selection rate"), ("nsr", "negative selection rate"), ("ar_order", "estimated order")]
    for row, process in zip(axes, processes):
        part = table[table["process"] == process].sort_values("window")
        for col, (metric, label) in zip(row, metrics):
            for (method, setting), line in in_setting_order(part.groupby(["method", "setting"])):
                col.plot(line["window"], line[metric], label=f"{method} {setting}",
                         **styles[method].line(setting_style(method, setting, part)))
            paper = part.drop_duplicates("window")
            has = np.isfinite(paper[f"paper_{metric}"])
            col.scatter(paper["window"][has], paper[f"paper_{metric}"][has], marker="s", facecolors="none",
                        edgecolors="black", s=70, zorder=3, label="paper PA-RNN")  # frames a point, hides none
            col.set(xlabel="input window (lags)", ylabel=label, title=f"{process.upper()}: {label}")
            col.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # whole numbers of lags
            col.grid(alpha=0.3)
    legend_outside(fig, axes.ravel())
    low, high = int(table["seeds"].min()), int(table["seeds"].max())  # the paper's: five
    count = f"{low}" if low == high else f"{low} to {high}"
    fig.suptitle(f"Autoregressive order selection, over the {count} dataset{'s' * (high > 1)} (seeds) of each window "
                 "(paper, over five: hollow squares)", wrap=True)
    return fig
