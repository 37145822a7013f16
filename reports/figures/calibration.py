"""The calibration figure: empirical against nominal coverage across miscoverage levels, per method."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import (
    figure_styles,
    hide_spare_panels,
    in_setting_order,
    legend_outside,
    new_figure,
    run_labels,
    setting_style,
)


def calibration_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs whose finished rows hold two or more miscoverage levels."""
    rows = results.finished()
    if rows.empty:
        return []
    levels = rows.groupby(["suite", "dataset"])["alpha"].nunique()
    return sorted(levels[levels > 1].index)


def calibration_figure(results: StoredResults) -> Figure | None:
    """One panel per (suite, dataset) with several levels: per (method, setting), its headline coverage
    (seed means; joint for sets of sequences) at each nominal level 1 - alpha, with the diagonal where they
    agree. A method below the diagonal under-covers at that level."""
    pairs = calibration_datasets(results)
    if not pairs:
        return None
    rows = results.finished()
    cols = min(3, len(pairs))
    nrows = math.ceil(len(pairs) / cols)
    styles = figure_styles(rows["method"])
    fig, axes = new_figure(4.2 * cols + 2.2, 3.8 * nrows + 0.4, nrows, cols)
    for ax, (suite, dataset) in zip(axes.ravel(), pairs):
        part = rows[(rows["suite"] == suite) & (rows["dataset"] == dataset)]
        means = part.groupby(["method", "setting", "alpha"], sort=True)["coverage"].mean().reset_index()
        labels = dict(zip(zip(means["method"], means["setting"]), run_labels(means["method"], means["setting"])))
        for (method, setting), line in in_setting_order(means.groupby(["method", "setting"])):
            line = line.sort_values("alpha", ascending=False)
            label = labels[method, setting]
            ax.plot(100 * (1 - line["alpha"]), 100 * line["coverage"], label=label,
                    **styles[method].line(setting_style(method, setting, part)))
        nominal = 100 * (1 - np.array(sorted(part["alpha"].unique())))
        span = [float(nominal.min()) - 3, 100.0]
        ax.plot(span, span, color="#444444", linestyle="--", linewidth=1.0, zorder=0, label="empirical = nominal")
        ax.set(xlim=span, xlabel="nominal coverage 1 - alpha (%)", title=f"{dataset} ({suite})",
               ylabel=("joint " if part["coverage_kind"].eq("joint").any() else "") + "empirical coverage (%)")
        ax.set_xticks(nominal, [f"{v:g}" for v in nominal])
        ax.grid(alpha=0.3)
    hide_spare_panels(axes, len(pairs))
    legend_outside(fig, axes.ravel())
    fig.suptitle("Calibration: empirical against nominal coverage across levels (seed means)", wrap=True)
    return fig
