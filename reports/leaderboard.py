"""The leaderboard of a suite over several series datasets: who is best where, and who covers everywhere.

Per (suite, dataset, alpha), every (method, setting) row's seed means of coverage,
mean length, interval score and the coverage of its worst volatility third, with the
statistics of :mod:`pibench.reports.statistics` where given (CIs, coverage tests, MCS).
A row *covers* a dataset when its coverage is within :data:`COVERAGE_TOLERANCE` of the
nominal level; among the rows that cover it, ranks by interval score (1 = best,
ties averaged) and each row's score over the best covering row's. The oracle (the
true interval, where a dataset knows it) is the truth, not a contender: it is never
ranked nor the best row, and its ratio shows how far the best row is from it.
Across datasets, per row: its mean rank over the datasets it covers, on how many it
covers, its mean score ratio over those same datasets (a ratio below 1 bought
by missing the level is no win), and on how many the Model Confidence Set holds it
(ranks are point estimates: where the MCS holds several rows, the data do not
tell their scores apart). The interval score decides because it is proper
for central intervals (Gneiting & Raftery 2007): a narrow interval that misses pays
for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pibench.reports.metrics import ORACLE, VOLATILITY_THIRDS

#: A row covers a dataset when |coverage - (1 - alpha)| is at most this (2 points).
COVERAGE_TOLERANCE = 0.02
ROW = ["suite", "dataset", "alpha", "method", "setting"]


def leaderboard_suites(summary: pd.DataFrame) -> list[str]:
    """The suites with finished series rows on two or more datasets (what a leaderboard compares)."""
    ok = summary[(summary["status"] == "ok") & (summary.get("coverage_kind", "marginal") != "joint")]
    counts = ok.groupby("suite")["dataset"].nunique()
    return sorted(counts[counts >= 2].index)


def per_dataset(summary: pd.DataFrame, suite: str, statistics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (dataset, alpha, method, setting) of ``suite``'s series rows (module docstring)."""
    ok = summary[(summary["suite"] == suite) & (summary["status"] == "ok")]
    ok = ok[ok.get("coverage_kind", "marginal") != "joint"]
    if ok.empty:
        return pd.DataFrame()
    thirds = [c for c in VOLATILITY_THIRDS if c in ok]
    ok = ok.assign(worst_third=ok[thirds].min(axis=1) if thirds else np.nan)
    grouped = ok.groupby(ROW, sort=True, dropna=False)
    table = grouped[["coverage", "mean_length", "winkler", "worst_third"]].mean(numeric_only=True)
    table.insert(0, "seeds", grouped.size())
    table = table.reset_index()
    if statistics is not None and len(statistics):
        keep = [c for c in statistics.columns if c in ROW or c.startswith(("coverage_ci", "winkler_ci", "p_"))
                or c in ("in_mcs", "mcs_p")]
        table = table.merge(statistics[keep], on=ROW, how="left")
    table["covers"] = (table["coverage"] - (1 - table["alpha"])).abs() <= COVERAGE_TOLERANCE + 1e-12
    table["rank"] = np.nan
    table["score_ratio"] = np.nan
    for _, index in table.groupby(["dataset", "alpha"]).groups.items():
        part = table.loc[index]
        contenders = part[part["method"] != ORACLE]
        pool = contenders[contenders["covers"]] if contenders["covers"].any() else contenders  # none covers: the best
        best = pool["winkler"].min()
        table.loc[index, "score_ratio"] = part["winkler"] / best
        table.loc[pool.index[pool["covers"]], "rank"] = pool.loc[pool["covers"], "winkler"].rank(method="average")
    return table


def overall(table: pd.DataFrame) -> pd.DataFrame:
    """Per (method, setting) over the datasets of ``table`` (:func:`per_dataset`): mean rank where it covers,
    datasets covered (of all), mean score ratio, where statistics are given the datasets whose Model Confidence
    Set holds it (``in_mcs``, of ``mcs_datasets`` with a verdict: there no row is told apart from it by the
    score), and each dataset's score ratio as a column; best first (the largest share of its datasets covered,
    then the lowest mean rank; the oracle last)."""
    if table.empty:
        return pd.DataFrame()
    keys = ["method", "setting"]
    grouped = table.groupby(keys)
    covered_ratio = table["score_ratio"].where(table["covers"])  # a ratio where the row misses the level buys nothing
    out = pd.DataFrame({"mean_rank": grouped["rank"].mean(), "covered": grouped["covers"].sum().astype(int),
                        "datasets": grouped.size(),
                        "mean_score_ratio": covered_ratio.groupby([table[k] for k in keys]).mean()})
    if "in_mcs" in table:  # where the score's differences are real: the datasets whose MCS holds the row
        verdict = table["in_mcs"].map(lambda v: None if pd.isna(v) else bool(v))
        out["in_mcs"] = verdict.eq(True).groupby([table[k] for k in keys]).sum().astype(int)
        out["mcs_datasets"] = verdict.notna().groupby([table[k] for k in keys]).sum().astype(int)
    wide = table.assign(column=table["dataset"].astype(str)).pivot_table(index=keys, columns="column",
                                                                       values="score_ratio", aggfunc="mean")
    wide = wide.reindex(columns=sorted(table["dataset"].astype(str).unique()))  # a dataset of the oracle alone: NaN
    out = out.join(wide)
    # the share of its datasets a row covers first (a method that applies to three datasets and covers all three
    # is not behind one that covers seven of eight), then its mean rank
    share = out["covered"] / out["datasets"]
    out = out.assign(_share=share).reset_index()
    return (out.assign(_oracle=out["method"] == ORACLE)  # the truth, unranked, under the rows it is the truth for
            .sort_values(["_oracle", "_share", "mean_rank", "mean_score_ratio"], ascending=[True, False, True, True],
                         na_position="last").drop(columns=["_share", "_oracle"]).reset_index(drop=True))
