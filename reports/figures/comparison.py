"""The comparison figure: each row's mean interval score against the reference row's, with its CI."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import figure_styles, new_figure
from pibench.reports.statistics import paired_seeds


def comparison_groups(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs whose rows were compared (two or more rows and a reference)."""
    return sorted((str(suite), str(dataset)) for (suite, dataset, _), group in results.statistics.groups.items()
                  if group.reference is not None and len(group.table) > 1)


def comparison_figure(results: StoredResults, suite: str, dataset: str) -> Figure | None:
    """Per row: the mean difference of its interval score to the reference row's (the lowest mean score),
    with the 90% CI of the Diebold-Mariano comparison; filled markers for the rows in the 90% Model
    Confidence Set, hollow for the others, the oracle in grey; rows ordered by mean score."""
    group = next((g for (s, d, _), g in results.statistics.groups.items() if (s, d) == (suite, dataset)), None)
    if group is None or group.reference is None:
        return None
    table = group.table.sort_values("mean_loss", ascending=False).reset_index(drop=True)
    table = table.assign(difference=table["difference"].fillna(0.0) if "difference" in table else 0.0)
    for column in ("difference_ci_low", "difference_ci_high"):
        if column not in table:
            table[column] = 0.0
        table[column] = table[column].fillna(table["difference"])
    styles = figure_styles(table["method"])
    several = set(table.groupby("method")["setting"].nunique().loc[lambda n: n > 1].index)
    fig, axes = new_figure(8.5, 0.32 * len(table) + 1.6)
    ax = axes[0][0]
    y = np.arange(len(table))
    for yi, row in zip(y, table.itertuples()):
        style = styles[row.method]
        filled = bool(row.in_mcs) if isinstance(row.in_mcs, (bool, np.bool_)) else False  # the oracle: None
        ax.errorbar(row.difference, yi, xerr=np.clip([[row.difference - row.difference_ci_low],
                                                      [row.difference_ci_high - row.difference]], 0, None),
                    fmt=style.marker, color=style.colour, mfc=style.colour if filled else "white", capsize=3,
                    markersize=6)
    ax.axvline(0.0, color="#444444", linestyle="--", linewidth=1.0, zorder=0)
    labels = [f"{m} {s}" if m in several else m for m, s in zip(table["method"], table["setting"])]
    ax.set_yticks(y, labels, fontsize=8)
    kind = "per horizon at level alpha / H" if table["kind"].iloc[0] == "set" else "per test step"
    ax.set_xlabel(f"mean interval score {kind} minus the reference's (lower is better)")
    paired = paired_seeds(table)
    paired = f"; paired on {paired}, the ones every row has" if paired else ""
    ax.set_title(f"{dataset} ({suite}, alpha {results.alpha:g}): against {table['reference'].iloc[0]}; bars: 90% CI "
                 "(Diebold-Mariano, "
                 f"HAC); filled: in the 90% MCS{paired}", fontsize=9, wrap=True)
    ax.grid(axis="x", alpha=0.3)
    return fig
