"""Tables in the paper's layout, measured values beside the paper's (docs/reproductions).

The paper's numbers are in ``reports/reference_results.csv`` (a copy of the
project's reference table: table, dataset, method, setting, metric, value, std).
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd

from pibench.reports.summary import escape_cell, format_number, set_rows, setting_sort_key

#: The miscoverage level of every table of the paper: rows at other levels are never set beside its values.
PAPER_ALPHA = 0.1


def at_paper_level(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``summary`` at the paper's level :data:`PAPER_ALPHA` (all rows if it has no alpha column)."""
    if "alpha" not in summary or summary.empty:
        return summary
    return summary[np.isclose(pd.to_numeric(summary["alpha"], errors="coerce").astype(float), PAPER_ALPHA)]


def reference_results() -> pd.DataFrame:
    with resources.files("pibench.reports").joinpath("reference_results.csv").open() as fh:
        return pd.read_csv(fh)


def best_setting(settings: pd.DataFrame, alpha: float = 0.1) -> str | None:
    """The setting whose intervals are shortest among those covering at least 1 - alpha
    (else the one with the highest coverage): our reading of the paper's 'best' gamma."""
    if settings.empty:
        return None
    valid = settings[settings["coverage"] >= 1 - alpha]
    pick = valid.loc[valid["mean_length"].idxmin()] if len(valid) else settings.loc[settings["coverage"].idxmax()]
    return str(pick["setting"])


def _fmt(value: float, spread: float | None = None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if spread is None or (isinstance(spread, float) and np.isnan(spread)):
        return format_number(value, digits)
    return f"{format_number(value, digits)} ({format_number(spread, digits)})"


def _markdown(rows: list[dict]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(map(escape_cell, cols)) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(escape_cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


#: Online conformal methods the paper does not have, in the fesp table after its rows (no paper values).
BEYOND_THE_PAPER = [("quantile_tracker", "Quantile tracker"), ("conformal_pid", "Conformal PID"),
                    ("aci_decay", "ACI, decaying steps"), ("dtaci", "DtACI"), ("sf_ogd", "SF-OGD"), ("saocp", "SAOCP")]


def _alpha(summary: pd.DataFrame) -> float:
    return float(summary["alpha"].dropna().iloc[0]) if "alpha" in summary and summary["alpha"].notna().any() else 0.1


def fesp_comparison(summary: pd.DataFrame, suite: str = "fesp", paper_level: bool = True) -> pd.DataFrame:
    """The rows of the paper's fesp table that ran (seed means), with the paper's values beside, then the
    methods beyond the paper, then every other method that ran (a plugin, AutoReg: its best setting).

    Columns: label, method, setting, our coverage and length statistics, and paper_coverage (%),
    paper_mean, paper_mean_std, paper_median, paper_median_iqr (NaN where the paper has none).
    ``paper_level``: only the rows at the paper's miscoverage level (else the one level ``summary`` holds).
    """
    if paper_level:
        summary = at_paper_level(summary)
    ok = summary[(summary["suite"] == suite) & (summary["status"] == "ok") & (summary["dataset"] == "fesp")]
    if ok.empty:
        return pd.DataFrame()
    ok = ok.groupby(["method", "setting"], as_index=False).mean(numeric_only=True)
    ref = reference_results()
    ref = ref[ref["table"] == "fesp_results"]
    best = best_setting(ok[ok["method"] == "aci"], _alpha(summary))
    rows_spec = [
        ("PA offline", "pa", None, "PA", "offline"),
        ("AgACI online", "agaci", None, "AgACI", "online"),
        ("ACI gamma=0.01 online", "aci", "gamma=0.01", "ACI", "online gamma=0.01"),
        ("ACI gamma=0 online", "aci", "gamma=0", "ACI", "online gamma=0"),
        (f"ACI best ({best}) online", "aci", best, None, None),
        ("EnbPI-V2 online", "enbpi", None, "EnbPI-V2", "online"),
        ("NexCP online", "nexcp", None, "NexCP", "online"),
        *((f"{label} online (beyond the paper)", method, None, None, None) for method, label in BEYOND_THE_PAPER),
    ]
    listed = {spec[1] for spec in rows_spec}
    for method in sorted(set(ok["method"]) - listed):  # plugins and the rest: each its best setting
        setting = best_setting(ok[ok["method"] == method], _alpha(summary))
        label = method if ok[ok["method"] == method]["setting"].nunique() == 1 else f"{method} {setting}"
        rows_spec.append((label, method, setting, None, None))
    rows = []
    for label, method, setting, ref_method, ref_setting in rows_spec:
        mine = ok[ok["method"] == method]
        if setting is not None:
            mine = mine[mine["setting"] == setting]
        paper = ref[(ref["method"] == ref_method) & (ref["setting"] == ref_setting)].set_index("metric")

        def p(metric: str, column: str = "value", paper: pd.DataFrame = paper) -> float:
            return float(paper.at[metric, column]) if metric in paper.index else np.nan

        for m in mine.itertuples():  # one row per setting (e.g. PA with the paper's and tuned settings)
            rows.append({
                "label": label if len(mine) == 1 or setting else f"{label} [{m.setting}]",
                "method": method, "setting": m.setting, "coverage": m.coverage, "mean_length": m.mean_length,
                "std_length": m.std_length, "median_length": m.median_length, "iqr_length": m.iqr_length,
                "n_infinite": m.n_infinite, "n_test": m.n_test, "paper_coverage": p("coverage"),
                "paper_mean": p("mean_length"), "paper_mean_std": p("mean_length", "std"),
                "paper_median": p("median_length"), "paper_median_iqr": p("median_length", "std"),
            })
    return pd.DataFrame(rows)


def _gamma_and_rest(setting: str) -> tuple[float, str]:
    """(gamma, the setting's other keys) of an ACI setting label ("gamma=0.01,score=normalized" -> (0.01,
    "score=normalized")); gamma NaN where the label names none."""
    parts = setting.split(",")
    named = [p for p in parts if p.startswith("gamma=")]
    gamma = pd.to_numeric(named[0].removeprefix("gamma="), errors="coerce") if len(named) == 1 else float("nan")
    return float(gamma), ",".join(p for p in parts if p not in named)


def aci_sweep(summary: pd.DataFrame, suite: str = "fesp", dataset: str = "fesp", lone: bool = False
              ) -> pd.DataFrame:
    """ACI's rows of one dataset with a numeric ``gamma`` column and ``variant``, the setting's other keys ("" for
    plain "gamma=X"), sorted by variant and gamma (seed means); only variants swept over two gammas or more,
    and with ``lone`` the variants of one gamma too where one variant is swept (none where none is)."""
    ok = summary[(summary["suite"] == suite) & (summary["status"] == "ok") & (summary["dataset"] == dataset)
                 & (summary["method"] == "aci")]
    if ok.empty:
        return pd.DataFrame()
    aci = ok.groupby("setting", as_index=False).mean(numeric_only=True)
    parsed = [_gamma_and_rest(setting) for setting in aci["setting"]]
    aci = aci.assign(gamma=[g for g, _ in parsed], variant=[v for _, v in parsed]).dropna(subset=["gamma"])
    swept = aci.groupby("variant")["gamma"].transform("size") > 1
    aci = aci if lone and swept.any() else aci[swept]
    return aci.sort_values(["variant", "gamma"]).reset_index(drop=True)


def fesp_tables(summary: pd.DataFrame, suite: str = "fesp") -> str:
    """The fesp comparison (paper Table 'fesp_results') and the ACI gamma sweep, as markdown."""
    table = fesp_comparison(summary, suite)
    if table.empty and summary[(summary["suite"] == suite) & (summary["dataset"] == "fesp")].empty:
        return ""
    rows = [{
        "method": r.label, "coverage %": _fmt(100 * r.coverage), "paper coverage %": _fmt(r.paper_coverage),
        "mean length (std)": _fmt(r.mean_length, r.std_length),
        "paper mean (std)": _fmt(r.paper_mean, r.paper_mean_std),
        "median length (IQR)": _fmt(r.median_length, r.iqr_length),
        "paper median (IQR)": _fmt(r.paper_median, r.paper_median_iqr),
        "#inf": round(r.n_infinite), "n": round(r.n_test),  # seed means of counts, rounded as in the summary
    } for r in table.itertuples()]
    full = 365 * 24  # the paper's test span: 2019, 24 hours a day
    short = sorted({round(n) for n in table["n_test"] if round(n) < full}) if len(table) else []
    quick = (f"; **not the paper's test span**: {', '.join(f'{n:,}' for n in short)} test points against its "
             f"{full:,} (a --quick run, say), so the coverage is noisier and the lengths are of another span"
             if short else "")
    out = f"### fesp: measured vs paper (mean length uses capped bounds; #inf counts infinite intervals{quick})\n\n"
    out += _markdown(rows) if rows else "_no fesp method in the paper's table has finished_\n"
    sweep = aci_sweep(at_paper_level(summary), suite)
    sweep = sweep[sweep["variant"] == ""] if len(sweep) else sweep  # the paper's: gamma alone
    if len(sweep) > 1:
        lines = [{"gamma": f"{r.gamma:g}", "coverage %": _fmt(100 * r.coverage),
                  "mean length (std)": _fmt(r.mean_length, r.std_length),
                  "median length (IQR)": _fmt(r.median_length, r.iqr_length), "#inf": round(r.n_infinite)}
                 for r in sweep.itertuples()]
        out += "\n### fesp: ACI gamma sweep\n\n" + _markdown(lines)
    return out


def order_selection_comparison(summary: pd.DataFrame, suite: str = "ar_order") -> pd.DataFrame:
    """Per (dataset label "PROCESS window=K", method, setting), over its seeds: FSR and NSR of the
    selected lag sets (against the true lags within the method's reach, its ``candidate_lags``
    diagnostic), mean estimated order, #hidden links, MSPE, MSFE and coverage; the paper's
    PA-RNN values beside them (columns paper_*, NaN where the paper has none)."""
    from pibench.reports.order_selection import (
        TRUE_LAGS,
        false_selection_rate,
        negative_selection_rate,
        selectable_truth,
    )

    summary = at_paper_level(summary)
    ok = summary[(summary["suite"] == suite) & (summary["status"] == "ok")]
    if ok.empty or "selected_lags" not in ok:
        return pd.DataFrame()
    ok = ok[ok["selected_lags"].notna()]  # the methods that select lags; ACI or the oracle on nlar do not
    ref = reference_results()
    rows = []
    for (label, method, setting), part in ok.groupby(["dataset", "method", "setting"], sort=True):
        process, _, window = str(label).partition(" ")
        if process not in TRUE_LAGS:
            continue
        chosen = [set(int(j) for j in str(s).split(",") if j) if isinstance(s, str) else set()
                  for s in part["selected_lags"]]
        paper = ref[(ref["dataset"] == process) & (ref["setting"] == window)].set_index("metric")["value"]
        mean = part.mean(numeric_only=True)
        truth = selectable_truth(TRUE_LAGS[process], part["candidate_lags"].max() if "candidate_lags" in part else None)
        rows.append({
            "data": label, "process": process, "window": int(window.partition("=")[2] or 0),
            "method": method, "setting": setting, "seeds": len(part),
            "fsr": false_selection_rate(truth, chosen), "nsr": negative_selection_rate(truth, chosen),
            "ar_order": mean.get("ar_order", np.nan), "hidden_links": mean.get("hidden_links", np.nan),
            "mspe": mean["mspe"], "msfe": mean.get("msfe", np.nan), "coverage": mean["coverage"],
            **{f"paper_{k}": float(paper[k]) if k in paper.index else np.nan
               for k in ("fsr", "nsr", "ar_order", "hidden_links", "mspe", "msfe")},
        })
    return pd.DataFrame(rows)


def order_selection_table(summary: pd.DataFrame, suite: str = "ar_order") -> str:
    """The order-selection comparison (paper Tables 'sim_results' and 'sim_results_new') as markdown;
    see :func:`order_selection_comparison`; the oracle MSPE is 1.0 (N(0, 1) noise)."""
    table = order_selection_comparison(summary, suite)
    if table.empty:
        return ""
    rows = [{
        "data": r.data, "method": f"{r.method} {r.setting}", "seeds": r.seeds,
        "FSR": _fmt(r.fsr, digits=3), "paper FSR": _fmt(r.paper_fsr, digits=3),
        "NSR": _fmt(r.nsr, digits=3), "paper NSR": _fmt(r.paper_nsr, digits=3),
        "AR order": _fmt(r.ar_order), "paper order": _fmt(r.paper_ar_order, digits=3),
        "#hidden link": _fmt(r.hidden_links, digits=1), "paper links": _fmt(r.paper_hidden_links, digits=3),
        "MSPE": _fmt(r.mspe, digits=3), "paper MSPE": _fmt(r.paper_mspe, digits=3),
        "MSFE": _fmt(r.msfe, digits=3), "paper MSFE": _fmt(r.paper_msfe, digits=3),
        "coverage %": _fmt(100 * r.coverage),
    } for r in table.itertuples()]
    where = f" ({suite})" if suite != "ar_order" else ""
    return (f"### Order selection{where}: measured vs paper PA-RNN (oracle MSPE = 1.0, oracle 90% length 3.29)\n\n"
            + _markdown(rows))


#: Set methods in the paper's row order, with the names the paper gives them.
SET_METHODS = {"pa_lstm": "PA-RNN", "cfrnn": "CF-RNN", "mqrnn": "MQ-RNN", "dprnn": "DP-RNN"}
#: Which paper table a sets suite reproduces.
SET_TABLES = {"sets": "set_of_ts_results", "sets_eeg100": "additional_eeg_results"}
#: The setting of the paper's configuration in each of those suites: only its rows stand beside the paper's values
#: (a setting beyond the paper, "LSTM-20, joint band", has none).
PAPER_SETTINGS = {"sets": "LSTM-20", "sets_eeg100": "LSTM-100"}


def set_suites(summary: pd.DataFrame) -> list[str]:
    """The suites with finished set-of-sequences rows, whatever their name (a user's csv_sets suite too)."""
    if summary.empty:
        return []
    ok = summary[(summary["status"] == "ok") & set_rows(summary)]
    return sorted(ok["suite"].unique())


def sets_table(summary: pd.DataFrame, suite: str = "sets", _one_of_several_levels: bool = False) -> str:
    """The sets-of-sequences comparison of one suite (paper Tables 'set_of_ts_results' /
    'additional_eeg_results' for the suites of SET_TABLES).

    Per method and dataset, over its seeds: joint coverage and interval length (averaged
    over horizons) as mean (standard deviation across seeds). Every set method that ran has
    a row: the paper's four first, in its order and with its names, then the others by name;
    a method with several settings on one dataset has one row per setting. The paper's values
    stand beside ours only for the suites of SET_TABLES, in the rows of the paper's setting (PAPER_SETTINGS).
    """
    if summary.empty:
        return ""
    ok = summary[(summary["suite"] == suite) & (summary["status"] == "ok") & set_rows(summary)]
    if ok.empty:
        return ""
    levels = sorted(ok["alpha"].dropna().unique()) if "alpha" in ok else []
    if len(levels) > 1:  # one table per level: never an average over levels
        return "\n".join(sets_table(summary[summary["alpha"] == level], suite, True) for level in levels)
    at_level = levels[0] if levels else PAPER_ALPHA
    paper_table = SET_TABLES.get(suite) if np.isclose(at_level, PAPER_ALPHA) else None  # the paper's level only
    ref = reference_results()
    ref = ref[ref["table"] == paper_table]
    datasets = sorted(ok["dataset"].unique())
    methods = [m for m in SET_METHODS if m in set(ok["method"])]
    methods += sorted(set(ok["method"]) - set(SET_METHODS))
    rows = []
    for method in methods:
        mine = ok[ok["method"] == method]
        name = f"{SET_METHODS[method]} ({method})" if method in SET_METHODS else method
        if mine.groupby("dataset")["setting"].nunique().max() > 1:  # never average settings into one row
            groups = [(f"{name} {s}", mine[mine["setting"] == s])
                      for s in sorted(mine["setting"].unique(), key=setting_sort_key)]
        else:
            groups = [(name, mine)]
        for label, part_of_method in groups:
            row: dict[str, str | int] = {"method": label}
            for dataset in datasets:
                part = part_of_method[part_of_method["dataset"] == dataset]
                cov, length = 100 * part["joint_coverage"], part["mean_length"]
                spread = len(part) > 1
                papers_setting = set((part if len(part) else part_of_method)["setting"]) == {PAPER_SETTINGS.get(suite)}
                paper = ref[(ref["method"] == SET_METHODS.get(method)) & (ref["dataset"] == dataset)
                            & papers_setting].set_index("metric")

                def paper_value(metric: str, digits: int = 2, paper: pd.DataFrame = paper) -> str:
                    if metric not in paper.index:
                        return "-"
                    return _fmt(paper.at[metric, "value"], paper.at[metric, "std"], digits=digits)

                row[f"{dataset} coverage %"] = (_fmt(cov.mean(), cov.std() if spread else None, digits=1)
                                                if len(part) else "-")
                if paper_table:
                    row[f"{dataset} paper cov."] = paper_value("joint_coverage", digits=1)
                row[f"{dataset} length"] = _fmt(length.mean(), length.std() if spread else None) if len(part) else "-"
                if paper_table:
                    row[f"{dataset} paper length"] = paper_value("mean_length")
                row[f"{dataset} seeds"] = len(part)
            rows.append(row)
    if paper_table:
        title = {"sets": "Sets of sequences", "sets_eeg100": "EEG, larger model (LSTM-100)"}[suite]
        title += ", alpha 0.1" if _one_of_several_levels else ""
        return (f"### {title}: joint coverage and mean length (std across seeds) vs paper "
                f"(Table '{paper_table}')\n\n" + _markdown(rows))
    level = f", alpha {at_level:g}" if _one_of_several_levels or not np.isclose(at_level, PAPER_ALPHA) else ""
    none = ("the paper's are at alpha 0.1" if suite in SET_TABLES else "no paper values for this suite")
    return (f"### Sets of sequences ({suite}{level}): joint coverage and mean length (std across seeds; "
            f"{none})\n\n" + _markdown(rows))
