"""The summary table: one row per task record, as CSV and markdown."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

KEY_COLUMNS = ["suite", "dataset", "method", "setting", "seed"]
SUMMARY_COLUMNS = KEY_COLUMNS + [
    "coverage", "mean_length", "median_length", "std_length", "iqr_length", "n_infinite", "winkler",
    "joint_coverage", "worst_rolling_coverage", "longest_miss_run", "n_test", "status",
    "fit_seconds", "predict_seconds", "wall_seconds", "task_id", "data_fingerprint", "code_version", "device",
]
#: Columns that depend on when and where a task ran, not on its config and seed.
RUN_COLUMNS = ["fit_seconds", "predict_seconds", "wall_seconds", "started_at"]


def summary_frame(records: list[dict]) -> pd.DataFrame:
    """Scalar fields of the records, key and metric columns first, sorted by the keys."""
    frame = pd.DataFrame(
        [{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in records]
    )
    if frame.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    for col in SUMMARY_COLUMNS:
        if col not in frame:
            frame[col] = pd.NA
    frame["device"] = frame["device"].fillna("cpu")  # records from before --device all ran on the cpu
    extra = sorted(c for c in frame.columns if c not in SUMMARY_COLUMNS and c != "traceback")
    frame = frame[SUMMARY_COLUMNS + extra]
    return frame.sort_values(KEY_COLUMNS + ["task_id"], kind="stable").reset_index(drop=True)


def write_summary(records: list[dict], results_dir: str | Path) -> Path:
    """Write ``<results_dir>/summary.csv`` and return its path."""
    path = Path(results_dir) / "summary.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    summary_frame(records).to_csv(path, index=False)
    return path


def markdown_table(frame: pd.DataFrame) -> str:
    """Mean over seeds of the headline metrics per (suite, dataset, method, setting), and the
    device(s) that computed them."""
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return "_no finished task_\n"
    metrics = ["coverage", "mean_length", "median_length", "n_infinite", "winkler", "n_test"]
    grouped = ok.groupby(KEY_COLUMNS[:-1], sort=True)
    table = grouped[metrics].mean(numeric_only=True)
    table.insert(0, "seeds", grouped.size())
    table["coverage"] = 100 * table["coverage"]
    table["device"] = grouped["device"].agg(lambda d: ", ".join(sorted(set(d))))
    table = table.rename(columns={"coverage": "coverage %"}).reset_index()
    header = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    for col in ("seeds", "n_infinite", "n_test"):
        table[col] = table[col].round().astype(int)  # counts (means over seeds, rounded)
    rows = [
        "| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + " |"
        for row in table.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows]) + "\n"


def failures(frame: pd.DataFrame) -> list[str]:
    """One line per failed task: what it was and the first line of its error."""
    lines = []
    for r in frame[frame["status"] != "ok"].itertuples():
        message = (str(r.error).strip() or "no message").splitlines()[0]
        lines.append(f"{r.dataset} / {r.method} {r.setting} / seed {r.seed} (task {r.task_id}): {message}")
    return lines
