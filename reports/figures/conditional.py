"""Where intervals fail: coverage in the calm, middle and volatile third of the test steps, per method."""

from __future__ import annotations

import numpy as np

from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.style import method_colour, new_figure, nominal_line, setting_style

THIRDS = (("coverage_vol_low", "calm third"), ("coverage_vol_mid", "middle third"),
          ("coverage_vol_high", "volatile third"))


def conditional_datasets(results: StoredResults) -> list[tuple[str, str]]:
    """(suite, dataset) pairs with finished series rows that carry coverage by volatility third."""
    summary = results.finished()
    if summary.empty or "coverage_vol_high" not in summary:
        return []
    rows = summary[summary["coverage_vol_high"].notna()]
    return sorted({(s, d) for s, d in zip(rows["suite"], rows["dataset"])})


def conditional_figure(results: StoredResults, suite: str, dataset: str):
    """Coverage (%) by volatility third, one line per (method, setting) over its seed means, the oracle
    (where the dataset has one) in grey and thick, the nominal level dashed."""
    rows = results.finished(suite=suite, dataset=dataset)
    rows = rows[rows["coverage_vol_high"].notna()] if "coverage_vol_high" in rows else rows.iloc[:0]
    if rows.empty:
        return None
    means = rows.groupby(["method", "setting"], sort=True)[[c for c, _ in THIRDS]].mean()
    fig, axes = new_figure(7.5, 4.2)
    ax = axes[0][0]
    x = np.arange(len(THIRDS))
    several = set(rows.groupby("method")["setting"].nunique().loc[lambda n: n > 1].index)
    for (method, setting), values in means.iterrows():
        label = f"{method} {setting}" if method in several else method
        if method == "oracle":
            ax.plot(x, 100 * values.to_numpy(), color="#777777", linewidth=3, alpha=0.6, label=label, zorder=1)
            continue
        ax.plot(x, 100 * values.to_numpy(), color=method_colour(method), markersize=4, label=label,
                **setting_style(method, setting, rows))
    nominal_line(ax, results.nominal_percent)
    ax.set_xticks(x, [name for _, name in THIRDS])
    ax.set(xlabel="test steps ranked by volatility", ylabel="coverage (%)",
           title=f"{dataset} ({suite}): coverage by volatility third")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncols=2)
    return fig
