"""Figures of the sets-of-sequences runs: coverage and width per horizon, joint coverage with its seed spread."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures.results import StoredResults
from reports.figures.style import method_colour, new_figure, nominal_line, setting_style


def set_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs with finished set runs (records that carry per-horizon coverage)."""
    return sorted({(r["suite"], r["dataset"]) for r in results.records
                   if r.get("status") == "ok" and "per_horizon_coverage" in r})


def sets_figure(results: StoredResults, suite: str, dataset: str):
    """Three panels: per-horizon coverage and mean width (seed means) per method, and joint coverage
    per method with the spread over seeds (mean +/- std, seeds as dots)."""
    records = [r for r in results.records if r.get("status") == "ok" and r["suite"] == suite
               and r["dataset"] == dataset and "per_horizon_coverage" in r]
    if not records:
        return None
    per_horizon, joint = [], []
    for r in records:
        p = results.predictions(r["task_id"])
        width = (p["upper"] - p["lower"]).groupby(p["horizon"]).mean()
        for h, (cov, w) in enumerate(zip(r["per_horizon_coverage"], width.to_numpy()), start=1):
            per_horizon.append({"method": r["method"], "setting": r["setting"], "seed": r["seed"], "horizon": h,
                                "coverage": 100 * cov, "width": w})
        joint.append({"method": r["method"], "setting": r["setting"], "seed": r["seed"],
                      "joint": 100 * r["joint_coverage"]})
    per_horizon, joint = pd.DataFrame(per_horizon), pd.DataFrame(joint)
    fig, axes = new_figure(14, 3.8, 1, 3)
    cov_ax, width_ax, joint_ax = axes[0]
    labels = []
    for (method, setting), part in per_horizon.groupby(["method", "setting"], sort=True):
        mean = part.groupby("horizon")[["coverage", "width"]].mean()
        label = f"{method} {setting}" if per_horizon["setting"].nunique() > 1 else method
        style = setting_style(method, setting, per_horizon)
        cov_ax.plot(mean.index, mean["coverage"], color=method_colour(method), markersize=3, label=label, **style)
        width_ax.plot(mean.index, mean["width"], color=method_colour(method), markersize=3, label=label, **style)
        labels.append(((method, setting), label))
    nominal_line(cov_ax, results.nominal_percent)
    cov_ax.set(xlabel="horizon (steps ahead)", ylabel="coverage (%)", title="coverage per horizon (seed mean)")
    width_ax.set(xlabel="horizon (steps ahead)", ylabel="interval width (target units)",
                 title="width per horizon (seed mean)")
    for i, ((method, setting), label) in enumerate(labels):
        values = joint[(joint["method"] == method) & (joint["setting"] == setting)]["joint"]
        colour = method_colour(method)
        joint_ax.bar(i, values.mean(), yerr=values.std() if len(values) > 1 else None, color=colour, alpha=0.6,
                     capsize=4)
        joint_ax.scatter(np.full(len(values), i), values, color=colour, s=12, zorder=3)
    joint_ax.set_xticks(range(len(labels)), [label for _, label in labels], rotation=20)
    nominal_line(joint_ax, results.nominal_percent, label=False)
    seeds = int(joint.groupby(["method", "setting"]).size().max())
    joint_ax.set(ylabel="joint coverage (%)", title=f"joint coverage ({seeds} seeds: mean +/- std)")
    for ax in (cov_ax, width_ax, joint_ax):
        ax.grid(alpha=0.3)
    cov_ax.legend(fontsize=7)
    fig.suptitle(f"{dataset} ({suite}): sets of sequences (dashed: nominal {results.nominal_percent:g}%)")
    return fig
