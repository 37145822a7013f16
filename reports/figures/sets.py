"""Figures of the sets-of-sequences runs: coverage and width per horizon, joint coverage with its seed spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import (
    NOMINAL_STYLE,
    LineKwargs,
    figure_styles,
    in_setting_order,
    legend_outside,
    new_figure,
    run_labels,
    setting_style,
)
from pibench.reports.metrics import cap_bounds

#: The nominal (joint) level, in both panels that show it: dotted, apart from the dashed per-horizon target.
JOINT_NOMINAL_STYLE: LineKwargs = {**NOMINAL_STYLE, "linestyle": ":", "linewidth": 1.4}


#: Widths spanning more than this factor are drawn on a log scale.
WIDE = 20.0


def set_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs with finished set runs (records that carry per-horizon coverage)."""
    return sorted({(r["suite"], r["dataset"]) for r in results.records
                   if r.get("status") == "ok" and "per_horizon_coverage" in r})


def per_horizon_target(alpha: float, horizon: int) -> float:
    """The per-horizon coverage (%) that a Bonferroni correction over ``horizon`` steps aims at: 100 (1 - alpha/H)."""
    return 100 * (1 - alpha / horizon)


def _joint_cis(results: StoredResults, suite: str, dataset: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(method, setting) -> the 90% CI of its joint coverage (%) from the statistics
    (:mod:`pibench.reports.statistics`: a set's headline coverage is joint); {} where there are none, or the
    results hold several levels (the report draws a figure per level)."""
    rows = results.statistics.rows
    if not len(rows) or "coverage_ci_low" not in rows or len(results.alphas) != 1:  # a bar over several levels
        return {}
    mine = rows[(rows["suite"] == suite) & (rows["dataset"] == dataset)]
    return {(r.method, r.setting): (100 * r.coverage_ci_low, 100 * r.coverage_ci_high) for r in mine.itertuples()}


def sets_figure(results: StoredResults, suite: str, dataset: str) -> Figure | None:
    """Three panels: per-horizon coverage and mean width (seed means) per method, and joint coverage
    per method, its bar the seed mean with the row's 90% CI (the seeds' std where no statistics are given),
    seeds as dots, and a † on the rows without a joint guarantee (``joint_guarantee`` False).

    Each coverage panel carries its own target, alpha from the records and H the length of their
    per-horizon coverage: the per-horizon panel the Bonferroni per-horizon level 100 (1 - alpha/H)
    (dashed; the nominal 100 (1 - alpha) faint beside it), the joint panel the nominal 100 (1 - alpha).
    Widths are those of the tables, infinite bounds at the record's cap (``length_cap``); a horizon with
    infinite intervals is ringed.
    """
    records = [r for r in results.records if r.get("status") == "ok" and r["suite"] == suite
               and r["dataset"] == dataset and "per_horizon_coverage" in r]
    if not records:
        return None
    alphas = sorted({float(r["alpha"]) for r in records if r.get("alpha") is not None}) or [results.alpha]
    horizons = sorted({len(r["per_horizon_coverage"]) for r in records})
    per_horizon, joint = [], []
    for r in records:
        p = results.predictions(r["task_id"])
        lower, upper = p["lower"].to_numpy(float), p["upper"].to_numpy(float)
        infinite = ~np.isfinite(lower) | ~np.isfinite(upper)
        lower, upper = cap_bounds(lower, upper, tuple(r["length_cap"]))
        by_horizon = pd.DataFrame({"width": upper - lower, "infinite": infinite}).groupby(p["horizon"].to_numpy())
        width, infinite = by_horizon["width"].mean().to_numpy(), by_horizon["infinite"].sum().to_numpy()
        for h, (cov, w, n) in enumerate(zip(r["per_horizon_coverage"], width, infinite), start=1):
            per_horizon.append({"method": r["method"], "setting": r["setting"], "seed": r["seed"], "horizon": h,
                                "coverage": 100 * cov, "width": w, "infinite": int(n)})
        joint.append({"method": r["method"], "setting": r["setting"], "seed": r["seed"],
                      "joint": 100 * r["joint_coverage"], "guaranteed": r.get("joint_guarantee") is not False})
    per_horizon, joint = pd.DataFrame(per_horizon), pd.DataFrame(joint)
    styles = figure_styles(per_horizon["method"])
    groups = in_setting_order(per_horizon.groupby(["method", "setting"]))
    names = dict(zip(zip(per_horizon["method"], per_horizon["setting"]),
                     run_labels(per_horizon["method"], per_horizon["setting"])))
    fig, axes = new_figure(15, max(3.8, 0.32 * len(groups) + 1.6), 1, 3)
    cov_ax, width_ax, joint_ax = axes[0]
    labels = []
    for (method, setting), part in groups:
        mean = part.groupby("horizon")[["coverage", "width"]].mean()
        label = names[method, setting]
        style = styles[method].line(setting_style(method, setting, per_horizon), markersize=3)
        cov_ax.plot(mean.index, mean["coverage"], label=label, **style)
        width_ax.plot(mean.index, mean["width"], label=label, **style)
        ringed = part.groupby("horizon")["infinite"].sum().to_numpy() > 0
        if ringed.any():  # capped as in the tables: say where
            width_ax.scatter(mean.index[ringed], mean["width"][ringed], s=70, facecolors="none",
                             edgecolors=styles[method].colour, linewidths=1.2, zorder=4)
        labels.append(((method, setting), label))
    nominals = [100 * (1 - a) for a in alphas]
    for alpha in alphas:
        for H in horizons:
            target = per_horizon_target(alpha, H)
            cov_ax.axhline(target, **NOMINAL_STYLE, zorder=0,
                           label=f"Bonferroni per-horizon target 1 - alpha/H = {target:.4g}%")
    for level in nominals:
        cov_ax.axhline(level, **JOINT_NOMINAL_STYLE, zorder=0, label=f"nominal (joint) 1 - alpha = {level:g}%")
    cov_ax.set(xlabel="horizon (steps ahead)", ylabel="coverage (%)", title="coverage per horizon (seed mean)")
    capped = "\n(ringed: infinite intervals, at the tables' cap)" if per_horizon["infinite"].any() else ""
    width_ax.set(xlabel="horizon (steps ahead)", ylabel="interval width (target units)",
                 title=f"width per horizon (seed mean){capped}")
    for ax in (cov_ax, width_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    widths = per_horizon["width"].to_numpy(float)
    if len(widths) and widths.min() > 0 and widths.max() > WIDE * widths.min():  # narrow bands flat at 0 otherwise
        width_ax.set_yscale("log")
        width_ax.set_ylabel("interval width (target units, log scale)")
    # joint coverage as horizontal bars: the labels read along the y axis, however many and long; the bar's
    # error bar the row's 90% CI where the statistics give it (seeds and sequences resampled), else the seeds' std
    cis = _joint_cis(results, suite, dataset)
    rows = np.arange(len(labels))[::-1]
    for i, ((method, setting), _label) in zip(rows, labels):
        values = joint[(joint["method"] == method) & (joint["setting"] == setting)]["joint"]
        look = styles[method]
        mean = values.mean()
        if cis:
            low, high = cis.get((method, setting), (np.nan, np.nan))
            error = [[max(mean - low, 0.0)], [max(high - mean, 0.0)]] if np.isfinite([low, high]).all() else None
        else:
            error = values.std() if len(values) > 1 else None
        joint_ax.barh(i, mean, xerr=error, color=look.colour, alpha=0.6, capsize=3)
        joint_ax.scatter(values, np.full(len(values), i), color=look.colour, marker=look.marker, s=14, zorder=3)
    unguaranteed = set(zip(*joint.loc[~joint["guaranteed"], ["method", "setting"]].to_numpy().T))
    joint_ax.set_yticks(rows, [f"{label} †" if key in unguaranteed else label for key, label in labels], fontsize=7)
    joint_ax.set_ylim(-1.0, len(labels))  # a lone bar not stretched over the whole panel
    for level in nominals:
        joint_ax.axvline(level, **JOINT_NOMINAL_STYLE, zorder=0)
    joint_ax.set_xlim(0.0, 100.5)  # bars from 0: a cut axis would stretch their differences
    seeds = int(joint.groupby(["method", "setting"]).size().max())
    spread = ("bars: 90% CIs" + ("" if seeds == 1 else f", dots: {seeds} seeds") if cis else
              "1 seed" if seeds == 1 else f"{seeds} seeds: mean +/- std")
    dagger = ("\n†: no joint guarantee at this level (too few calibration\nsequences for alpha / H: the tables' note)"
              if unguaranteed else "")
    joint_ax.set(xlabel="joint coverage (%)", title=f"joint coverage ({spread}){dagger}")
    for ax in (cov_ax, width_ax, joint_ax):
        ax.grid(alpha=0.3)
    legend_outside(fig, [cov_ax])
    targets = ", ".join(f"{per_horizon_target(a, H):.4g}%" for a in alphas for H in horizons)
    fig.suptitle(f"{dataset} ({suite}): sets of sequences (dashed: per-horizon Bonferroni target {targets}; "
                 f"dotted: joint target {', '.join(f'{n:g}%' for n in nominals)})", wrap=True)
    return fig
