"""Figures of the French electricity suite: the paper's comparison, coverage by hour, the ACI gamma sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pibench.reports.figures.results import StoredResults, describe_test_span, headline_runs
from pibench.reports.figures.style import (
    figure_styles,
    legend_outside,
    method_colour,
    new_figure,
    nominal_line,
    text_colour_on,
)
from pibench.reports.paper_tables import aci_sweep, fesp_comparison


def fesp_paper_figure(results: StoredResults, suite: str = "fesp") -> Figure | None:
    """The paper's fesp figure: per method, mean length +/- std and median length +/- IQR/2 (EUR/MWh),
    ours filled, the paper's hollow beside; coverage (ours [paper]) printed at the right."""
    table = fesp_comparison(results.summary, suite)
    if table.empty:
        return None
    fig, axes = new_figure(11, 0.55 * len(table) + 1.9, 1, 2, sharey=True)
    styles = figure_styles(table["method"])
    y = np.arange(len(table))[::-1]
    panels = [("mean_length", "std_length", "paper_mean", "paper_mean_std", "mean length +/- std"),
              ("median_length", "iqr_length", "paper_median", "paper_median_iqr", "median length +/- IQR / 2")]
    for ax, (value, spread, paper, paper_spread, title) in zip(axes[0], panels):
        for yi, row in zip(y, table.itertuples()):
            colour = styles[row.method].colour
            half = getattr(row, spread) / (2 if spread == "iqr_length" else 1)
            ax.errorbar(getattr(row, value), yi + 0.15, xerr=half, fmt="o", color=colour, capsize=3,
                        label="pibench" if yi == y[0] else None)
            if np.isfinite(getattr(row, paper)):
                p_half = getattr(row, paper_spread) / (2 if spread == "iqr_length" else 1)
                ax.errorbar(getattr(row, paper), yi - 0.15, xerr=p_half, fmt="s", mfc="white", color=colour,
                            capsize=3, label="paper" if yi == y[0] else None)
        # a method with a few huge (infinite, capped) intervals must not squash the others: the axis stops at
        # three times the typical value, and a cut bar is labelled with its end
        ends = table[value] + table[spread] / (2 if spread == "iqr_length" else 1)
        right = min(float(ends.max()), 3 * float(table[value].median())) * 1.1
        ax.set_xlim(0, right)
        for yi, end in zip(y, ends):
            if end > right:
                ax.annotate(f"-> {end:.0f}", xy=(right, yi + 0.15), xytext=(-2, 4), textcoords="offset points",
                            ha="right", fontsize=7)
        ax.set_title(title)
        ax.set_xlabel("interval length (EUR/MWh)")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, table["label"])
    legend_outside(fig, [axes[0][0]], loc="outside lower center", ncols=2)
    right = axes[0][1]
    for yi, row in zip(y, table.itertuples()):
        paper = f" [{row.paper_coverage:.1f}]" if np.isfinite(row.paper_coverage) else ""
        right.annotate(f"{100 * row.coverage:.1f}%{paper}", xy=(1.01, yi), xycoords=("axes fraction", "data"),
                       va="center", fontsize=8)
    first = headline_runs(results, suite, "fesp")[0].task_id
    fig.suptitle(f"fesp, test span {describe_test_span(results, first, daily=True)}: interval lengths per method; "
                 f"coverage % (paper's) at the right; nominal {results.nominal_percent:g}%", wrap=True)
    return fig


def coverage_by_hour_figure(results: StoredResults, suite: str = "fesp") -> Figure | None:
    """Coverage (%) per hour of day and method, as a heat map centred on the nominal level."""
    runs = headline_runs(results, suite, "fesp")
    if not runs:
        return None
    hours = [f"{h:02d}" for h in range(24)]
    grid = pd.DataFrame([100 * np.asarray(results.record(r.task_id)["coverage_by_group"], dtype=float)
                         for r in runs], index=[r.label for r in runs], columns=hours)
    longest = max(len(str(label)) for label in grid.index)  # the row names' room, then 24 readable hours
    fig, axes = new_figure(10 + 0.07 * longest, 0.45 * len(runs) + 1.8)
    ax = axes[0][0]
    nominal = results.nominal_percent
    spread = max(5.0, float(np.nanmax(np.abs(grid.to_numpy() - nominal))))
    # white at the nominal level, a point of coverage one step of colour either way
    image = ax.imshow(grid.to_numpy(), cmap="RdBu", vmin=nominal - spread, vmax=nominal + spread, aspect="auto")
    for (i, j), value in np.ndenumerate(grid.to_numpy()):
        ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=6.5,
                color=text_colour_on(image.cmap(image.norm(value))))
    ax.set_xticks(range(24), hours)
    ax.set_yticks(range(len(runs)), grid.index)
    ax.set_xlabel("hour of day")
    bar = fig.colorbar(image, ax=ax, label=f"coverage % (white = nominal {nominal:g}%)")
    bar.ax.set_ylim(nominal - spread, min(100.0, nominal + spread))  # no coverage above 100% on its scale
    span = describe_test_span(results, runs[0].task_id, daily=True)
    ax.set_title(f"fesp: coverage per hour of day, test span {span}")
    return fig


def gamma_sweep_figure(results: StoredResults, suite: str = "fesp", dataset: str = "fesp") -> Figure | None:
    """ACI against its step size gamma: coverage, mean length and the count of infinite intervals
    (symmetric-log gamma axis, so gamma = 0 is shown), a line per setting swept over gamma and a point per
    setting at one gamma (score=normalized beside the sweep), with the rows' 90% CIs of coverage and mean length
    as bands, or bars at a point (:mod:`pibench.reports.statistics`)."""
    sweep = aci_sweep(results.summary, suite, dataset, lone=True)
    if len(sweep) < 2:
        return None
    rows = results.statistics.rows
    ci = ["coverage_ci_low", "coverage_ci_high", "mean_length_ci_low", "mean_length_ci_high"]
    # the rows' 90% CIs (pibench.reports.statistics) as bands, where the results are of one level (the report
    # draws a figure per level; a sweep's means over several would have no CI of their own)
    sweep = sweep.drop(columns=[c for c in ci if c in sweep])  # the summary's are each seed's, not the row's
    if len(results.alphas) == 1 and len(rows) and set(ci) <= set(rows):
        mine = rows[(rows["suite"] == suite) & (rows["dataset"] == dataset) & (rows["method"] == "aci")]
        sweep = sweep.merge(mine[["setting", *ci]], on="setting", how="left")
    fig, axes = new_figure(12, 3.4, 1, 3, sharex=True)
    positive = sweep.loc[sweep["gamma"] > 0, "gamma"]
    linthresh = float(positive.min()) if len(positive) else 1.0
    colour = method_colour("aci")
    panels = [(100 * sweep["coverage"], "coverage (%)"), (sweep["mean_length"], "mean length (target units)"),
              (sweep["n_infinite"], "infinite intervals (count)")]
    bands = ([(100 * sweep["coverage_ci_low"], 100 * sweep["coverage_ci_high"]),
              (sweep["mean_length_ci_low"], sweep["mean_length_ci_high"]), None] if set(ci) <= set(sweep)
             else [None, None, None])
    variants = list(dict.fromkeys(sweep["variant"]))
    markers, dashes = "osD^v", ["-", "--", ":", "-."]
    banded = False
    for ax, (values, label), band in zip(axes[0], panels, bands):
        for i, variant in enumerate(variants):  # one line per setting swept over gamma (score=normalized, ...)
            part = sweep["variant"] == variant
            ax.plot(sweep.loc[part, "gamma"], values[part], marker=markers[i % len(markers)],
                    linestyle=dashes[i // len(markers) % len(dashes)], color=colour, markersize=4,
                    label=variant or "gamma alone")
            if band is None or not band[0][part].notna().any():
                continue
            banded = True
            if part.sum() > 1:
                ax.fill_between(sweep.loc[part, "gamma"], band[0][part], band[1][part], color=colour, alpha=0.12,
                                linewidth=0)
            else:  # a setting at one gamma: a point, its CI a bar
                low, high, value = band[0][part].iloc[0], band[1][part].iloc[0], values[part].iloc[0]
                ax.errorbar(sweep.loc[part, "gamma"], [value], yerr=[[max(value - low, 0)], [max(high - value, 0)]],
                            fmt="none", ecolor=colour, alpha=0.5, elinewidth=0.9)
        ax.set_xscale("symlog", linthresh=linthresh, linscale=0.5)
        decades = 10.0 ** np.arange(np.ceil(np.log10(linthresh)), np.floor(np.log10(sweep["gamma"].max())) + 1)
        ax.set_xticks([0.0, *decades], ["0", *(f"1e{int(np.log10(d))}" for d in decades)])
        ax.set_xlabel("gamma (symmetric log scale)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    counts = axes[0][2]  # whole numbers from 0 (all zero: 0 to 1, not -0.04 to 0.04)
    counts.set_ylim(0, max(1.0, float(sweep["n_infinite"].max())) * 1.08)
    counts.yaxis.set_major_locator(MaxNLocator(integer=True))
    if not sweep["n_infinite"].any():  # say it, rather than leave a flat line at 0 to be read
        counts.text(0.5, 0.5, "no infinite interval at any gamma", transform=counts.transAxes, ha="center",
                    va="center", fontsize=9, color="#555555")
    nominal_line(axes[0][0], results.nominal_percent, label=False)
    if len(variants) > 1:
        legend_outside(fig, [axes[0][0]])
    fig.suptitle(f"{dataset}: ACI gamma sweep (suite {suite}; {'bands: 90% CIs; ' if banded else ''}dashed: "
                 f"nominal {results.nominal_percent:g}%)", wrap=True)
    return fig
