"""Where intervals fail: coverage in the calm, middle and volatile third of the test steps, per method."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import (
    figure_styles,
    in_setting_order,
    legend_outside,
    new_figure,
    nominal_line,
    run_labels,
    setting_style,
)
from pibench.reports.summary import thirds_of_one_scale, with_volatility_thirds

THIRDS = (("coverage_vol_low", "calm third"), ("coverage_vol_mid", "middle third"),
          ("coverage_vol_high", "volatile third"))


def conditional_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs with finished series rows that carry coverage by volatility third."""
    rows = with_volatility_thirds(thirds_of_one_scale(results.finished())[0])
    return sorted({(s, d) for s, d in zip(rows["suite"], rows["dataset"])})


def conditional_figure(results: StoredResults, suite: str, dataset: str) -> Figure | None:
    """Coverage (%) by volatility third, one line per (method, setting) over its seed means, the oracle
    (where the dataset has one) in grey and thick, the nominal level dashed; a line drawn over an equal one
    names it in the legend."""
    # (seeds that ranked their steps by different scales have no thirds to average: left out)
    rows = with_volatility_thirds(thirds_of_one_scale(results.finished(suite=suite, dataset=dataset))[0])
    if rows.empty:
        return None
    means = rows.groupby(["method", "setting"], sort=True)[[c for c, _ in THIRDS]].mean()
    # no step in any row's middle third (a two-valued scale): the calm and volatile thirds side by side, no
    # empty middle column for the lines to cross as though they had a value there
    thirds = [t for t in THIRDS if means[t[0]].notna().any()]
    means = means[[c for c, _ in thirds]]
    fig, axes = new_figure(9.5 if len(thirds) == 3 else 8.0, 4.4)
    ax = axes[0][0]
    x = np.arange(len(thirds))
    names = dict(zip(means.index, run_labels(means.index.get_level_values(0), means.index.get_level_values(1))))
    styles = figure_styles(rows["method"])
    drawn: dict[tuple, str] = {}  # a line's values -> the label of the first line drawn with them
    ordered = in_setting_order(means.iterrows())
    for i, ((method, setting), values) in enumerate(ordered):
        label = names[method, setting]
        same = tuple(None if np.isnan(v) else round(100 * v, 9) for v in values.to_numpy(float))
        if same in drawn:  # drawn over the first: the legend says where it is
            label += f" (= {drawn[same]})"
        else:
            drawn[same] = label
        # each line a little aside of the others, so that equal points do not hide each other; a third no step
        # falls in (a two-valued scale's middle) is NaN: the line joins the thirds there are (its dashes tell the
        # settings apart, where dots alone did not)
        shown = ~np.isnan(values.to_numpy(float))
        dodge = 0.12 * (i - (len(ordered) - 1) / 2) / max(len(ordered) - 1, 1)
        ax.plot(x[shown] + dodge, 100 * values.to_numpy(float)[shown], label=label,
                **styles[method].line(setting_style(method, setting, rows)))
    nominal_line(ax, results.nominal_percent)
    ax.set_xticks(x, [name for _, name in thirds])
    ax.set_xlim(-0.35, len(thirds) - 0.65)
    ax.set(xlabel="test steps ranked by volatility", ylabel="coverage (%)")
    ax.set_title(f"{dataset} ({suite}): coverage of the {results.nominal_percent:g}% intervals by volatility third"
                 + ("\n(no middle third: the volatilities take two values, so no step falls between the calm and the "
                    "volatile one)" if [c for c, _ in thirds] == ["coverage_vol_low", "coverage_vol_high"] else
                    "\n(the volatility scale is constant: every step is in one third)" if len(thirds) == 1 else ""),
                 wrap=True)  # a long name breaks, not cut
    ax.grid(alpha=0.3)
    legend_outside(fig, [ax])
    return fig
