"""The leaderboard heat map: methods x datasets, the interval score over the best covering row's."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FormatStrFormatter, NullFormatter

from pibench.reports.comparisons import MCS_LEVEL
from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import new_figure, run_labels, text_colour_on
from pibench.reports.leaderboard import COVERAGE_TOLERANCE, leaderboard_suites, overall, per_dataset
from pibench.reports.metrics import ORACLE

#: The face of a cell whose row misses the nominal level by more than the tolerance.
NOT_COVERING = "#DDDDDD"


def leaderboard_figure(results: StoredResults, suite: str) -> Figure | None:
    """One row per (method, setting), best first (:func:`pibench.reports.leaderboard.overall`), one column per
    dataset: the interval score over the best covering row's (1 = the best; log colour scale), the number in
    each cell, a down or up arrow where coverage is more than 2 points short of or over the nominal level, and
    such a cell grey (a score below the best's bought by missing the level is no win), and the cell outlined
    where the dataset's Model Confidence Set holds the row (the data do not tell it apart from the best). The
    oracle is left out: the truth, not a contender, its ratio below 1 off the scale."""
    table = per_dataset(results.summary, suite, results.statistics.rows)
    if table.empty or table["dataset"].nunique() < 2:
        return None
    board = overall(table)
    board = board[board["method"] != ORACLE].reset_index(drop=True)
    if board.empty:
        return None
    datasets = sorted(table["dataset"].astype(str).unique())
    values = board[datasets].to_numpy(dtype=float)
    labels = run_labels(board["method"], board["setting"])
    fig, axes = new_figure(1.1 * len(datasets) + 4.5, max(3.0, 0.32 * len(board) + 1.8))  # room for the bar's label
    ax = axes[0][0]
    covers = {(r.method, r.setting, r.dataset): (r.covers, r.coverage < 1 - r.alpha) for r in table.itertuples()}
    covering = np.array([[covers.get((m, s, d), (True, False))[0] for d in datasets]
                         for m, s in zip(board["method"], board["setting"])], dtype=bool).reshape(values.shape)
    shown = np.where(covering, values, np.nan)  # a row that misses the level is grey: its score buys no coverage
    finite = shown[np.isfinite(shown)]
    image = ax.imshow(shown, cmap=colormaps["viridis_r"].with_extremes(bad="white"), aspect="auto",
                      norm=LogNorm(vmin=1.0, vmax=max(1.5, float(np.nanmax(finite)) if len(finite) else 1.5)))
    missed = np.where(~covering & np.isfinite(values), 1.0, np.nan)  # grey over those; a row not run stays white
    ax.imshow(missed, cmap=ListedColormap([NOT_COVERING]).with_extremes(bad=(0, 0, 0, 0)), aspect="auto")
    for i, (method, setting) in enumerate(zip(board["method"], board["setting"])):
        for j, dataset in enumerate(datasets):
            if not np.isfinite(values[i, j]):
                continue
            ok, short = covers.get((method, setting, dataset), (True, False))
            mark = "" if ok else (" ↓" if short else " ↑")
            ax.text(j, i, f"{values[i, j]:.2f}{mark}", ha="center", va="center", fontsize=7,
                    color=text_colour_on(image.cmap(image.norm(values[i, j]))) if ok else "#333333")
    in_mcs = {(r.method, r.setting, r.dataset) for r in table.itertuples()
              if pd.notna(getattr(r, "in_mcs", None)) and bool(r.in_mcs)}
    for i, (method, setting) in enumerate(zip(board["method"], board["setting"])):
        for j, dataset in enumerate(datasets):  # no score there tells the row apart from the best: outlined
            if (method, setting, dataset) in in_mcs:
                ax.add_patch(Rectangle((j - 0.45, i - 0.42), 0.9, 0.84, fill=False, edgecolor="#D81B60", lw=1.4))
    ax.set_xticks(range(len(datasets)), datasets, rotation=30, ha="right")
    ax.set_yticks(range(len(board)), labels, fontsize=7)
    level = float(table["alpha"].iloc[0])
    bar = fig.colorbar(image, ax=ax, label="interval score /\nbest covering row's")
    top = float(image.norm.vmax)
    bar.set_ticks([v for v in (1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0) if v <= top])
    bar.ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"{suite}: interval score against the best row covering within {100 * COVERAGE_TOLERANCE:g} points "
                 f"of {100 * (1 - level):g}%;\nrows by the share of datasets they cover, then their mean rank "
                 "there; grey: coverage ↓ short or ↑ over"
                 + (f"; outlined: in the dataset's {MCS_LEVEL:.0%} MCS (not told apart from the best)" if in_mcs
                    else ""), fontsize=9,
                 wrap=True)
    return fig


__all__ = ["leaderboard_figure", "leaderboard_suites"]
