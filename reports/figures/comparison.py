"""The comparison figure: each row's mean interval score against the reference row's, with its CI."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from pibench.reports.comparisons import MIN_UNITS
from pibench.reports.figures.results import StoredResults, describe_test_span
from pibench.reports.figures.style import figure_styles, new_figure, run_labels
from pibench.reports.statistics import ROW_KEYS, paired_seeds


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
    apart_rows = int((group.table["not_compared"] != "").sum())  # rows on other data: no difference to draw
    table = group.table[group.table["not_compared"] == ""].sort_values("mean_loss", ascending=False)
    table = table.reset_index(drop=True)
    table = table.assign(difference=table["difference"].fillna(0.0) if "difference" in table else 0.0)
    for column in ("difference_ci_low", "difference_ci_high"):
        if column not in table:
            table[column] = 0.0
        table[column] = table[column].fillna(table["difference"])
    styles = figure_styles(table["method"])
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
    labels = run_labels(table["method"], table["setting"])
    ax.set_yticks(y, labels, fontsize=8)
    sets = table["kind"].iloc[0] == "set"
    kind = "per horizon at level alpha / H" if sets else "per test step"
    linear = _linear_span(table)
    scale = ""
    if linear is not None:  # rows far out would squeeze the close calls into a point at 0
        ax.set_xscale("symlog", linthresh=linear, linscale=2.0)
        low = min(float(table["difference_ci_low"].min()), 0.0)
        high = max(float(table["difference_ci_high"].max()), 0.0)
        ax.set_xlim(low * 1.5 if low < -linear else low - 0.1 * linear,
                    high * 1.5 if high > linear else high + 0.1 * linear)
        _symlog_ticks(ax, linear)
        scale = f"\n(the axis is linear within +/-{linear:.3g} and logarithmic beyond)"
    ax.set_xlabel(f"mean interval score {kind} minus the reference's\n(lower is better){scale}")
    paired = paired_seeds(table)
    paired = f"; paired on {paired}, the ones every row has" if paired else ""
    variance = "" if sets else ", EWC variance"
    units = int(table["units"].iloc[0])
    what = (f"bars: 90% CI (Diebold-Mariano{variance}); filled: in the 90% MCS" if units >= MIN_UNITS else
            f"only {units} test unit(s): no CI, no MCS")
    apart = f"; {apart_rows} row(s) on other data not compared (the tables say why)" if apart_rows else ""
    ax.set_title(f"{dataset} ({suite}, alpha {results.alpha:g}): against {table['reference'].iloc[0]}"
                 f"{_test_span(results, group.reference, sets)}; {what}{paired}{apart}", fontsize=9, wrap=True)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _test_span(results: StoredResults, reference: tuple, sets: bool) -> str:
    """", test span 2019-01-01 to 2019-12-31 (365 days)" of the reference row's first seed: the rows compared
    share it (:mod:`pibench.reports.statistics` compares the rows over one span); "" for sets."""
    record = next((r for r in results.records if r.get("status") == "ok"
                   and tuple(r.get(k) for k in ROW_KEYS) == tuple(reference)), None)
    if sets or record is None:
        return ""
    daily = record["config"]["dataset"]["name"] == "fesp"  # one step a day of 24 hours
    return f", test span {describe_test_span(results, record['task_id'], daily)}"


def _symlog_ticks(ax, linear: float) -> None:
    """Ticks of a symmetric-log axis that read: plain numbers across its linear part (both signs where it
    shows them; matplotlib's own put a lone 10^2 beside 0 and none left of 0), decades beyond it."""
    left, right = ax.get_xlim()
    ticks = [t for t in MaxNLocator(nbins=7, steps=[1, 2, 2.5, 5, 10]).tick_values(max(left, -linear),
                                                                                   min(right, linear))
             if max(left, -linear) <= t <= min(right, linear)]
    for sign, end in ((1.0, right), (-1.0, -left)):
        if end > linear:
            ticks += [sign * 10.0 ** k for k in range(math.floor(math.log10(linear)) + 1,
                                                      math.floor(math.log10(end)) + 1) if 10.0 ** k > 1.5 * linear]
    ax.xaxis.set_major_locator(FixedLocator(sorted(ticks)))
    ax.xaxis.set_minor_locator(NullLocator())

    def label(x: float, _) -> str:
        if abs(x) <= linear:
            return f"{x:g}"
        return f"$\\mathregular{{{'-' if x < 0 else ''}10^{{{round(math.log10(abs(x)))}}}}}$"

    ax.xaxis.set_major_formatter(FuncFormatter(label))


#: How much farther than the close calls a row must lie for the axis to turn logarithmic beyond them.
FAR = 20.0


def _linear_span(table) -> float | None:
    """The half-width of the linear part of a symmetric-log axis, or None for a linear axis: where some row lies
    more than :data:`FAR` times as far from 0 as every close call (a row in the MCS or whose CI holds 0), the
    close calls' farthest bound, widened by half."""
    bounds = table[["difference_ci_low", "difference_ci_high"]].abs().max(axis=1)
    close = table["in_mcs"].eq(True) | ((table["difference_ci_low"] <= 0) & (table["difference_ci_high"] >= 0))
    near = float(bounds[close].max()) if close.any() else 0.0
    if near <= 0 or float(bounds.max()) <= FAR * near:
        return None
    return 1.5 * near
