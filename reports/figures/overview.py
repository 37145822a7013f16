"""The trade-off view: coverage against mean length for every (dataset, method, setting)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import (
    figure_styles,
    hide_spare_panels,
    label_away,
    label_colour,
    legend_outside,
    new_figure,
    nominal_line,
    place_labels,
    readable_limits,
    run_labels,
    setting_point_style,
)


def tradeoff_figure(results: StoredResults) -> Figure | None:
    """One panel per (suite, dataset): each (method, setting) as a point at (coverage %, mean length),
    seed means, named by its setting where a method has several or its one is not the default, with their 90%
    CIs as bars (:mod:`pibench.reports.statistics`); the nominal coverage as a vertical line. Coverage is the summary's
    headline coverage: marginal for series, joint for sets of sequences (the axis says which). Lengths are in
    each dataset's own units."""
    rows = results.finished()
    if rows.empty:
        return None
    cells = rows.groupby(["suite", "dataset", "method", "setting"], as_index=False).mean(numeric_only=True)
    intervals = results.statistics.rows
    if len(intervals):  # the rows' 90% CIs (seeds and units resampled), drawn as bars
        keep = ["suite", "dataset", "method", "setting", "coverage_ci_low", "coverage_ci_high", "mean_length_ci_low",
                "mean_length_ci_high"]
        cells = cells.drop(columns=[c for c in keep[4:] if c in cells])  # the tasks' own CIs: not the rows'
        cells = cells.merge(intervals[keep], on=["suite", "dataset", "method", "setting"], how="left")
    panels = list(cells.groupby(["suite", "dataset"], sort=True))
    cols = min(3, len(panels))
    nrows = math.ceil(len(panels) / cols)
    styles = figure_styles(cells["method"])
    fig, axes = new_figure(max(8.5, 4.2 * cols + 1.6), 3.4 * nrows + 0.4, nrows, cols)
    names: dict[Axes, list[Annotation]] = {}
    for ax, ((suite, dataset), part) in zip(axes.ravel(), panels):
        # set rows (a joint coverage): the headline coverage is joint
        is_set = "joint_coverage" in part and part["joint_coverage"].notna().any()
        # a method's settings share its colour and marker: each is named beside its point, on the side away
        # from the panel's nearest other point
        away = dict(zip(part.index, label_away(np.column_stack([100 * part["coverage"], part["mean_length"]]))))
        methods_of = part.groupby("setting")["method"].nunique()
        shared_names = set(methods_of[methods_of > 1].index)
        for method, points in part.groupby("method", sort=True):
            x = 100 * points["coverage"]  # the summary's headline coverage (reports.summary.summary_row)
            for i, (setting, one) in enumerate(points.groupby("setting", sort=False)):  # each setting its own look
                ax.scatter(100 * one["coverage"], one["mean_length"], label=None if i else method, alpha=0.85,
                           zorder=3, **styles[method].points(setting=setting_point_style(method, setting, cells)))
            if run_labels(points["method"], points["setting"])[0] != method:  # a setting named, as in the tables
                for row, xi, yi, setting in zip(points.index, x, points["mean_length"], points["setting"]):
                    dx, dy = away[row]
                    # the method's colour and marker tell it; where another method ran a setting of that name,
                    # the method is named too ("aci score=normalized", "quantile_tracker score=normalized")
                    label = f"{method} {setting}" if setting in shared_names else str(setting)
                    names.setdefault(ax, []).append(ax.annotate(
                        label, (xi, yi), xytext=(dx, dy), textcoords="offset points", fontsize=6.5,
                        color=label_colour(styles[method].colour), zorder=4, ha="left" if dx > 0 else "right",
                        va="bottom" if dy > 0 else "top"))
            if "coverage_ci_low" in points and points["coverage_ci_low"].notna().any():
                ax.errorbar(x, points["mean_length"], fmt="none", ecolor=styles[method].colour, alpha=0.5,
                            elinewidth=0.9, zorder=2,
                            xerr=np.clip([x - 100 * points["coverage_ci_low"], 100 * points["coverage_ci_high"] - x],
                                         0, None),  # a percentile CI need not hold the mean to the last bit
                            yerr=np.clip([points["mean_length"] - points["mean_length_ci_low"],
                                          points["mean_length_ci_high"] - points["mean_length"]], 0, None))
        nominal_line(ax, results.nominal_percent, vertical=True, label=False)
        readable_limits(ax)
        ax.set_title(f"{dataset} ({suite})", fontsize=9)
        ax.set_xlabel(("joint " if is_set else "") + "coverage (%)")
        ax.set_ylabel("mean length (target units)")
        ax.grid(alpha=0.3)
    hide_spare_panels(axes, len(panels))
    legend_outside(fig, axes.ravel())
    fig.suptitle(f"Coverage against mean length (seed means, bars: 90% CIs; dashed: nominal "
                 f"{results.nominal_percent:g}%)", wrap=True)
    _place_setting_names(fig, names)
    return fig


def _place_setting_names(fig: Figure, names: dict[Axes, list[Annotation]]) -> None:
    """Place the setting names (:func:`place_labels`) and say in each panel's title how many it hid. A title
    that changes moves the layout, so the names are placed again under the new titles until the counts hold
    (at most three times; should they still move, the names are placed once more under the last titles)."""
    if not names:
        return
    sides = {label: label.xyann for labels in names.values() for label in labels}
    titles = {ax: ax.get_title() for ax in names}
    suptitle = fig.get_suptitle()
    said: dict[Axes, int] = {}
    for _ in range(3):
        hidden = place_labels(fig, names, sides)
        if hidden == said:
            return
        said = hidden
        for ax, count in hidden.items():
            ax.set_title(f"{titles[ax]}; {count} of {len(names[ax])} names hidden" if count else titles[ax],
                         fontsize=9)
        crowded = any(hidden.values())
        fig.suptitle(f"{suptitle[:-1]}; names hidden where they would overlap or cover another point: the tables "
                     "have them)" if crowded
                     else suptitle, wrap=True)
    place_labels(fig, names, sides)
