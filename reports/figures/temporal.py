"""Figures over time of series runs: rolling coverage, and interval bands with the misses marked."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pibench.data_loaders.dates import dates_in_order
from pibench.reports.figures.results import (
    MIN_ROLLING_STEPS,
    StoredResults,
    describe_test_span,
    headline_note,
    headline_runs,
    n_test_steps,
    rolling_window,
)
from pibench.reports.figures.style import figure_styles, hide_spare_panels, new_figure, nominal_line
from pibench.reports.metrics import rolling_coverage


def _time_axis(labels: pd.Series) -> pd.Series:
    """Step labels as dates when they read as dates in their order (:func:`dates_in_order`), else as they are."""
    dates = dates_in_order(labels)
    return dates if dates is not None else labels.reset_index(drop=True)


def rolling_coverage_figure(results: StoredResults, suite: str, dataset: str,
                            window: int | None = None) -> Figure | None:
    """Coverage over a moving window of test steps (all series of a step together), one small panel per
    method: the method in its colour, every other one in grey behind it, so 8+ methods stay readable."""
    runs = headline_runs(results, suite, dataset)
    if not runs:
        return None
    curves = {}
    daily = results.record(runs[0].task_id)["config"]["dataset"]["name"] == "fesp"  # one step = one day
    styles = figure_styles(run.method for run in runs)
    windows, spans = {}, {}
    for run in runs:
        covered = results.covered_by_step(run.task_id)
        w = windows[run.label] = window or rolling_window(len(covered), "fesp" if daily else dataset)
        spans[run.label] = describe_test_span(results, run.task_id, daily)
        times = results.predictions(run.task_id).drop_duplicates("t").set_index("t")["time"].reindex(covered.index)
        curves[run.label] = (_time_axis(times.iloc[w - 1:] if len(covered) >= w else times.iloc[-1:]),
                             100 * rolling_coverage(covered.to_numpy(), w), run.method)
    unit = "days" if daily else "steps"
    one_window, one_span = len(set(windows.values())) == 1, len(set(spans.values())) == 1  # (a store of mixed runs)
    cols = 2 if len(runs) > 1 else 1
    rows = math.ceil(len(runs) / cols)
    fig, axes = new_figure(max(9.0, 6.5 * cols), 2.2 * rows + 0.8, rows, cols, sharex=True, sharey=True)
    for ax, (label, (x, y, method)) in zip(axes.ravel(), curves.items()):
        for other, (xo, yo, _) in curves.items():
            if other != label:
                ax.plot(xo, yo, color="#BBBBBB", linewidth=0.7)
        ax.plot(x, y, **{**styles[method].line(), "marker": None})
        nominal_line(ax, results.nominal_percent, label=False)
        own = [f"window {windows[label]}"] * (not one_window) + [spans[label]] * (not one_span)
        ax.set_title(label + (f" ({'; '.join(own)})" if own else ""), fontsize=9)
        ax.set_ylabel("coverage (%)")
        ax.grid(alpha=0.3)
    for ax in axes.ravel():
        ax.tick_params(axis="x", labelrotation=30)
    for ax in axes[-1]:
        ax.set_xlabel("end of window")
    hide_spare_panels(axes, len(runs))
    note = headline_note(results, suite, dataset)
    span = f"test span {next(iter(spans.values()))}" if one_span else "test spans differ (in each panel's title)"
    each = f"each point over the {next(iter(windows.values()))} test {unit} up to it" if one_window else \
        f"each point over the window of test {unit} up to it in its panel's title"
    fig.suptitle(f"{dataset} ({suite}), {span}: rolling coverage, {each} "
                 f"(dashed: nominal {results.nominal_percent:g}%)" + (f"\n{note}" if note else ""), wrap=True)
    return fig


def interval_bands_figure(results: StoredResults, suite: str, dataset: str, group: str | None = None,
                          steps: int | None = None) -> Figure | None:
    """Intervals over a span of test steps for one series: the band, the truth as points, misses as red
    crosses, an infinite bound drawn a span beyond the truth with an arrow there; one panel per method, all on
    one y scale.
    Default: fesp's last 14 days at 18:00, else the first 100 steps."""
    runs = headline_runs(results, suite, dataset)
    if not runs:
        return None
    first = results.predictions(runs[0].task_id)
    group = group or ("h18" if dataset == "fesp" and "h18" in set(first["group"]) else str(first["group"].iloc[0]))
    steps = steps or (14 if dataset == "fesp" else 100)
    cols = 2 if len(runs) > 1 else 1
    rows = math.ceil(len(runs) / cols)
    styles = figure_styles(run.method for run in runs)
    # one y scale for every panel: the bands' widths compare by eye (one panel's -2..2 beside another's -5..5 did not)
    fig, axes = new_figure(max(9.0, 6.5 * cols), 2.4 * rows + 0.8, rows, cols, sharex=True, sharey=True)
    for ax, run in zip(axes.ravel(), runs):
        p = results.predictions(run.task_id)
        p = p[p["group"].astype(str) == group].sort_values("t")
        p = p.iloc[-steps:] if dataset == "fesp" else p.iloc[:steps]
        x = _time_axis(p["time"])
        span = float(p["y"].max() - p["y"].min()) or 1.0  # infinite bounds drawn a span beyond the truth
        lower = p["lower"].where(np.isfinite(p["lower"]), p["y"].min() - span)
        upper = p["upper"].where(np.isfinite(p["upper"]), p["y"].max() + span)
        colour = styles[run.method].colour
        ax.fill_between(x, lower, upper, color=colour, alpha=0.3, step="mid", linewidth=0)
        ax.plot(x, p["point"], color=colour, linewidth=1)
        miss = (p["y"] < p["lower"]) | (p["y"] > p["upper"])
        ax.scatter(x[~miss.to_numpy()], p["y"][~miss], s=10, color="black", zorder=3)
        ax.scatter(x[miss.to_numpy()], p["y"][miss], s=28, marker="x", color="#D00000", zorder=4)
        for bound, drawn, arrow in ((p["upper"], upper, "^"), (p["lower"], lower, "v")):
            beyond = ~np.isfinite(bound.to_numpy())  # an infinite bound: an arrow where its band is cut off
            ax.scatter(x[beyond], drawn[beyond], s=24, marker=arrow, color=colour, edgecolors="black",
                       linewidths=0.5, zorder=5)
        infinite = int((~np.isfinite(p["lower"]) | ~np.isfinite(p["upper"])).sum())
        ax.set_title(f"{run.label}: {int(miss.sum())} miss(es) of {len(p)}"
                     + (f"; {infinite} infinite (arrows)" if infinite else ""), fontsize=9)
        ax.set_ylabel("target (EUR/MWh)" if dataset == "fesp" else "target")
        ax.grid(alpha=0.3)
    for ax in axes.ravel():
        ax.tick_params(axis="x", labelrotation=30)
    for ax in axes[-1]:  # the shared x axis is labelled under the bottom row (and above a hidden panel)
        ax.set_xlabel("date" if pd.api.types.is_datetime64_any_dtype(x) else "test step")
    hide_spare_panels(axes, len(runs))
    where = (f"last {steps} test days at {group[1:]}:00" if dataset == "fesp"
             else f"first {steps} test steps, series {group}")
    note = headline_note(results, suite, dataset)
    fig.suptitle(f"{dataset}: {results.nominal_percent:g}% intervals (band), point forecast (line), truth (dots), "
                 f"misses (red x); {where}" + (f"\n{note}" if note else ""), wrap=True)
    return fig


def online_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs with a finished online series run: the ones the temporal figures are for."""
    pairs = set()
    for record in results.records:
        protocol = record.get("config", {}).get("protocol", {})
        if record.get("status") == "ok" and protocol.get("kind") == "online":
            pairs.add((record["suite"], record["dataset"]))
    return sorted(pairs)


def rolling_coverage_drawable(results: StoredResults, suite: str, dataset: str) -> bool:
    """Whether the rolling-coverage figure of (suite, dataset) has a curve to draw: a test span of
    :data:`~pibench.reports.figures.results.MIN_ROLLING_STEPS` steps or more."""
    return any(n_test_steps(r) >= MIN_ROLLING_STEPS for r in results.records
               if r.get("status") == "ok" and r["suite"] == suite and r["dataset"] == dataset)

