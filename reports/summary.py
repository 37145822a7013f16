"""The summary table: one row per task record, as CSV and markdown.

Coverage has one definition in every table, :func:`summary_row`. A series record's
headline ``coverage`` is its marginal coverage (the share of covered steps). A
set-of-sequences record (one that carries ``per_horizon_coverage`` and
``joint_coverage``) is headlined by its JOINT coverage, the share of test sequences
with all H horizons covered: the level CF-RNN and PA-LSTM are calibrated for
(docs/guide/metrics.md). ``coverage_kind`` says which ("marginal" or "joint"),
``marginal_coverage`` holds the coverage over every (sequence, horizon) cell (the
record's own ``coverage`` field, which stays marginal) and ``coverage_h1`` ..
``coverage_hH`` the coverage per horizon. The records themselves are not changed.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pibench.reports.comparisons import MCS_LEVEL, MIN_UNITS
from pibench.reports.metrics import ORACLE, ROLLING_WINDOW, VOLATILITY_THIRDS
from pibench.reports.statistics import paired_seeds

KEY_COLUMNS = ["suite", "dataset", "alpha", "method", "setting", "seed"]
SUMMARY_COLUMNS = KEY_COLUMNS + [
    "coverage", "coverage_kind", "marginal_coverage", "mean_length", "median_length", "std_length", "iqr_length",
    "n_infinite", "winkler", "joint_coverage", "worst_rolling_coverage", "longest_miss_run", "n_test", "status",
    "fit_seconds", "predict_seconds", "wall_seconds", "task_id", "data_fingerprint", "code_version", "plugin_code",
    "device",
]
#: Columns that depend on when and where a task ran, not on its config and seed.
RUN_COLUMNS = ["fit_seconds", "predict_seconds", "wall_seconds", "started_at"]
#: Record fields no table shows: a failure's traceback, and the store's checksum of the record's own fields
#: (:data:`pibench.benchmarks.store.FIELDS_SHA256`), which changes with every rerun's times.
NOT_SHOWN = {"traceback", "fields_sha256"}
#: Per-horizon coverage columns of set rows: coverage_h1, coverage_h2, ...
HORIZON_COLUMN = re.compile(r"^coverage_h(\d+)$")
#: Per-horizon tables with more horizons than this are transposed (one row per horizon).
MAX_HORIZON_COLUMNS = 12


# -- one definition of a record's coverage ------------------------------------------------------------------------

def is_set_record(record: dict) -> bool:
    """A set-of-sequences record: it carries per-horizon (and joint) coverage."""
    return record.get("per_horizon_coverage") is not None or record.get("joint_coverage") is not None


def headline_coverage(record: dict) -> tuple[float | None, str | None]:
    """(the coverage a table headlines for this record, its kind): joint for sets, marginal for series;
    (None, None) for a record without coverage (a failed task)."""
    if is_set_record(record):
        return record.get("joint_coverage"), "joint"
    if record.get("coverage") is not None:
        return record["coverage"], "marginal"
    return None, None


def plugin_code(record: dict) -> str | None:
    """The source identity of a method defined outside pibench, as ``module:sha256-prefix`` (several
    joined by ``;``), from the record's identity; None for pibench's own methods."""
    plugin = (record.get("identity") or {}).get("plugin") or {}
    return ";".join(f"{module}:{digest}" for module, digest in sorted(plugin.items())) or None


def summary_row(record: dict) -> dict:
    """A record's row of the summary: its scalar fields, ``coverage`` the headline coverage
    (:func:`headline_coverage`), ``coverage_kind``, ``marginal_coverage``, ``coverage_h1`` ..
    ``coverage_hH`` (set records only) and ``plugin_code`` (:func:`plugin_code`)."""
    row = {k: v for k, v in record.items() if not isinstance(v, (dict, list))}
    row["plugin_code"] = plugin_code(record)
    value, kind = headline_coverage(record)
    if kind is not None:
        row["marginal_coverage"] = record.get("coverage")
        row["coverage"] = value
        row["coverage_kind"] = kind
    for h, cov in enumerate(record.get("per_horizon_coverage") or [], start=1):
        row[f"coverage_h{h}"] = float(cov)
    groups = record.get("coverage_by_group")
    if kind == "marginal" and groups and record.get("n_test"):  # a series: its test steps, of len(groups) points
        row["test_steps"] = int(record["n_test"]) // len(groups)
        if row["test_steps"] < ROLLING_WINDOW:  # no window but the span itself: its coverage, not a worst window
            row["worst_rolling_coverage"] = float("nan")
    return row


def _horizon_digits(column: str) -> str:
    """The horizon of a per-horizon coverage column ``coverage_h<h>``, as written in its name."""
    match = HORIZON_COLUMN.match(column)
    if match is None:
        raise ValueError(f"not a per-horizon coverage column: {column!r}")
    return match.group(1)


def horizon_columns(frame: pd.DataFrame) -> list[str]:
    """The frame's per-horizon coverage columns in horizon order (h1, h2, ..., h10, not as text)."""
    return sorted((c for c in frame.columns if HORIZON_COLUMN.match(str(c))),
                  key=lambda c: int(_horizon_digits(c)))


def set_rows(frame: pd.DataFrame) -> pd.Series:
    """Boolean mask of the set-of-sequences rows (coverage_kind "joint"; in a frame without that
    column, rows with a joint coverage)."""
    if "coverage_kind" in frame:
        return frame["coverage_kind"].eq("joint").fillna(False).astype(bool)
    if "joint_coverage" in frame:
        return frame["joint_coverage"].notna()
    return pd.Series(False, index=frame.index)


# -- natural order of settings --------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf")


def setting_sort_key(setting) -> tuple:
    """A sort key that orders settings as a reader expects: ``key=number`` parts compare as numbers
    (gamma=5e-05 < gamma=0.01 < gamma=0.09, B=5 < B=10), other digits naturally (LSTM-20 < LSTM-500),
    text as text; the setting itself breaks ties."""
    text = "" if setting is None or (isinstance(setting, float) and math.isnan(setting)) else str(setting)
    atoms: list[tuple[int, float, str]] = []  # (0, number, "") sorts before (1, 0, text)
    for token in re.split(r"[\s,;]+", text.strip()):
        if not token:
            continue
        key, eq, value = token.partition("=")
        if eq and _NUMBER.fullmatch(value):
            atoms += [(1, 0.0, key + "="), (0, float(value), "")]
            continue
        for i, part in enumerate(re.split(r"(\d+(?:\.\d+)?)", token)):
            if part:
                atoms.append((0, float(part), "") if i % 2 else (1, 0.0, part))
    return tuple(atoms), text


def setting_rank(settings: pd.Series) -> pd.Series:
    """Each setting's rank in :func:`setting_sort_key` order (an integer column to sort by)."""
    keys = settings.map(setting_sort_key)
    rank = {key: i for i, key in enumerate(sorted(set(keys)))}
    return keys.map(rank).astype(int)


def _sorted(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """``frame`` sorted by ``by``, the ``setting`` column in natural order."""
    ranked = frame.assign(_setting_rank=setting_rank(frame["setting"]))
    by = ["_setting_rank" if c == "setting" else c for c in by]
    return ranked.sort_values(by, kind="stable").drop(columns="_setting_rank").reset_index(drop=True)


# -- the CSV ---------------------------------------------------------------------------------------------------------

def summary_frame(records: list[dict], statistics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One :func:`summary_row` per record: key and metric columns first, then the per-horizon coverage
    in horizon order, then the other scalar fields; sorted by the keys (settings in natural order).
    ``statistics``: per task_id columns to join (:mod:`pibench.reports.statistics`: CIs, tests, MCS)."""
    frame = pd.DataFrame([summary_row(r) for r in records])
    if frame.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    if statistics is not None and len(statistics):
        frame = frame.merge(statistics, on="task_id", how="left", suffixes=("", "_statistics"))
    for col in SUMMARY_COLUMNS:
        if col not in frame:
            frame[col] = pd.NA
    frame["device"] = frame["device"].fillna("cpu")  # records from before --device all ran on the cpu
    horizons = horizon_columns(frame)
    extra = sorted(c for c in frame.columns if c not in SUMMARY_COLUMNS and c not in horizons and c not in NOT_SHOWN)
    frame = frame[SUMMARY_COLUMNS + horizons + extra]
    return _sorted(frame, KEY_COLUMNS + ["task_id"])


def write_summary(records: list[dict], results_dir: str | Path, statistics: pd.DataFrame | None = None) -> Path:
    """Write ``<results_dir>/summary.csv`` (with the per-task ``statistics`` columns, when given) and return
    its path."""
    path = Path(results_dir) / "summary.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    summary_frame(records, statistics).to_csv(path, index=False)
    return path


# -- markdown --------------------------------------------------------------------------------------------------------

def format_number(value: float, digits: int = 3, sign: str = "") -> str:
    """``value`` with ``digits`` decimals, or with three significant digits where those decimals would show
    none of it (a length of 7.24e-09, not 0.000) or it has more than ten digits before the point (2.97e+50,
    not 51 digits); ``sign`` "+" writes the sign of a difference."""
    if value != 0 and math.isfinite(value) and not 10 ** -digits <= abs(value) < 1e10:
        return f"{value:{sign}.2e}"  # three significant digits
    return f"{value:{sign}.{digits}f}"


def escape_cell(value) -> str:
    """``value`` as the text of a markdown table's cell: a label's "|" would end the cell."""
    return str(value).replace("|", "\\|")


def _cell(value) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else format_number(value)
    return escape_cell(value)


def _markdown(table: pd.DataFrame) -> str:
    header = "| " + " | ".join(map(escape_cell, table.columns)) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    rows = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def _seed_means(rows: pd.DataFrame, metrics: list[str], statistics: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (suite, dataset, alpha, method, setting), natural setting order: seeds, seed means of ``metrics``
    and the device(s) that computed them, and the row's ``statistics`` columns when given (CIs over seeds,
    tests, MCS). The alpha column only where the rows hold several levels."""
    grouped = rows.groupby(KEY_COLUMNS[:-1], sort=True, dropna=False)
    table = grouped[metrics].mean(numeric_only=True).reindex(columns=metrics)
    table.insert(0, "seeds", grouped.size())
    table["device"] = grouped["device"].agg(lambda d: ", ".join(sorted(set(d))))
    table = table.reset_index()
    if statistics is not None and len(statistics):
        extra = statistics.drop(columns=[c for c in ("seeds",) if c in statistics])
        table = table.merge(extra, on=KEY_COLUMNS[:-1], how="left")
    table = _sorted(table, KEY_COLUMNS[:-1])
    return table if table["alpha"].nunique(dropna=False) > 1 else table.drop(columns="alpha")


#: How the tables print a value with its CI, and the note under a table that has them.
def statistics_note(series: bool, sets: bool) -> str:
    """The footnote of the tables with statistics, naming the tests of the kinds of rows shown."""
    units = [u for u, shown in (("series: a t interval from the test steps' long-run (EWC) variance, whole steps "
                                 "of a panel together, the spread of the seeds' means added", series),
                                ("sets: the bootstrap of test sequences one by one, or a dataset's groups whole "
                                 "(EEG's 64 channels of a trial, csv_sets' group_column), seeds resampled, then "
                                 "sequences, the same for every seed", sets))
             if shown]
    tests = [t for t, shown in (("p uc / ind / cc: Kupiec's unconditional coverage, Christoffersen's independence "
                                 "and conditional coverage tests (counts pooled over series and seeds, a time step's "
                                 "misses one cluster: each statistic divided by its design effect, Rao & Scott)",
                                 series),
                                ("p joint: binomial test of joint coverage (a sequence's seeds one cluster; the "
                                 "sets oracle's Bonferroni band covers more than 1 - alpha by design, so its test "
                                 "may reject)", sets))
             if shown]
    score = "the interval score" + (" (sets: per horizon at level alpha / H, Bonferroni's)" if sets else "")
    return (f"_A row over several seeds shows their means (counts rounded: n_infinite and n_test are per seed). "
            f"[low, high]: 90% CI ({'; '.join(units)}; capped lengths). "
            f"{', '.join(tests)}; * rejects at 5%. MCS: in the 90% Model Confidence Set of its dataset on "
            f"{score} (the oracle is never in it)._\n")


def _with_ci(table: pd.DataFrame, column: str, name: str, scale: float = 1.0, digits: int = 3) -> None:
    """Write ``column`` as "value [low, high]" where the CI columns ``name``_ci_low / _high are there (the
    bounds times ``scale``, the unit the column is already in)."""
    low, high = f"{name}_ci_low", f"{name}_ci_high"
    if low not in table or table[low].isna().all():
        return

    def cell(value: float, lo: float, hi: float) -> str:
        if pd.isna(lo):
            return format_number(value, digits)
        if abs(hi - lo) <= 1e-9 * abs(hi) and name != "coverage":  # a band of one width (relative: nanometres too)
            return f"{format_number(value, digits)} [{CONSTANT}]"
        low_text, high_text = format_number(scale * lo, digits), format_number(scale * hi, digits)
        return f"{format_number(value, digits)} [{low_text}, {high_text}]"

    table[column] = [cell(v, lo, hi) for v, lo, hi in zip(table[column], table[low], table[high])]


#: What a cell shows for a CI of no width (every test unit and seed of one value: a band of one width).
CONSTANT = "constant"
CONSTANT_NOTE = (f"[{CONSTANT}]: every test unit of every seed has this value (a band of one width), so a CI over "
                 "them has no width; the spread a new calibration draw would bring is not in it.")


def _p(value: float, edge: float = 0.05, mark: str = "*") -> str:
    """A p-value with two decimals, more where two would round to ``edge`` (0.047 is not "0.05*"), ``mark``ed
    below it."""
    if pd.isna(value):
        return "-"
    digits = next(d for d in (2, 3, 4, 6) if d == 6 or float(f"{value:.{d}f}") != edge)
    return f"{value:.{digits}f}{mark if value < edge else ''}"


def _mcs_cell(in_mcs: object, p_value: float) -> str:
    """"yes (0.43)": in the MCS or not, with the MCS p-value (in at level 1 - a where it is at least a)."""
    if pd.isna(in_mcs):
        return "-"
    return f"{'yes' if in_mcs else 'no'} ({_p(p_value, round(1 - MCS_LEVEL, 10), mark='')})"


def _statistics_cells(table: pd.DataFrame, tests: tuple[str, ...]) -> pd.DataFrame:
    """Replace the statistics columns by the tests' p-values ("p uc / ind / cc" or "p joint") and "MCS"."""
    if not all(t in table for t in tests):
        return table
    heading = "p " + " / ".join(t.removeprefix("p_") for t in tests)
    table[heading] = [" / ".join(_p(v) for v in values) for values in zip(*(table[t] for t in tests))]
    if "in_mcs" in table:
        table["MCS"] = table["in_mcs"].map(lambda v: "-" if pd.isna(v) else ("yes" if v else "no"))
    return table.drop(columns=[c for c in table.columns if c.endswith(("_ci_low", "_ci_high"))
                               or c in (*STATISTICS_COLUMNS, "in_mcs", "mcs_p")])


#: The row statistics the tables turn into cells (everything else of :mod:`pibench.reports.statistics`).
STATISTICS_COLUMNS = ("p_uc", "p_ind", "p_cc", "p_joint", "block_length", "design_effect")


def _counts(table: pd.DataFrame, columns=("seeds", "n_infinite", "n_test")) -> pd.DataFrame:
    for col in columns:
        table[col] = table[col].round().astype(int)  # counts (means over seeds, rounded)
    return table


def _series_table(rows: pd.DataFrame, statistics: pd.DataFrame | None = None) -> str:
    table = _counts(_seed_means(rows, ["coverage", "mean_length", "median_length", "n_infinite", "winkler",
                                       "n_test"], statistics))
    table["coverage"] = 100 * table["coverage"]
    _with_ci(table, "coverage", "coverage", 100, 2)
    _with_ci(table, "mean_length", "mean_length")
    _with_ci(table, "winkler", "winkler")
    table = _statistics_cells(table, ("p_uc", "p_ind", "p_cc"))
    return _markdown(table.rename(columns={"coverage": "coverage %"}))


#: Conditional coverage columns of series rows (reports/metrics.py) and their headings.
CONDITIONAL = {"coverage": "coverage %", "coverage_vol_low": "calm third %", "coverage_vol_mid": "middle third %",
               "coverage_vol_high": "volatile third %", "coverage_size_min": "worst length third %",
               "worst_rolling_coverage": "worst window %"}
#: Lengths against the oracle's, where the dataset knows it (synthetic series).
ORACLE_RATIO = {"length_ratio_oracle": "length / oracle", "length_ratio_vol_low": "calm third length / oracle",
                "length_ratio_vol_high": "volatile third length / oracle"}


def with_volatility_thirds(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows that carry coverage by volatility third (any third: a constant scale has a middle one only)."""
    present = [c for c in VOLATILITY_THIRDS if c in rows]
    return rows[rows[present].notna().any(axis=1)] if present else rows.iloc[:0]


def thirds_of_one_scale(rows: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """(``rows`` with the volatility thirds blank in the rows (suite, dataset, alpha, method, setting) whose seeds
    ranked their steps by different scales (``volatility_source``: the oracle's for one seed, a rolling one for
    another, as each test span allowed), whether any was): their seed means would average two quantities."""
    if "volatility_source" not in rows or rows.empty:
        return rows, False
    keys = [k for k in KEY_COLUMNS[:-1] if k in rows]
    mixed = rows.groupby(keys, dropna=False)["volatility_source"].transform(lambda v: v.astype(str).nunique()) > 1
    thirds = [c for c in (*VOLATILITY_THIRDS, "length_ratio_vol_low", "length_ratio_vol_high") if c in rows]
    return rows.assign(**{c: rows[c].where(~mixed) for c in thirds}), bool(mixed.any())


def conditional_table(frame: pd.DataFrame) -> str:
    """Where series intervals fail (seed means, in %): coverage over the test steps ranked by volatility
    (thirds: the oracle's scale where known, else a causal rolling robust scale of the target), the worst
    third by interval length, the worst rolling window, and (synthetic series) the mean length over the
    oracle's, overall and within the calm and volatile thirds. Empty without series rows that carry them."""
    ok = frame[(frame["status"] == "ok") & ~set_rows(frame)] if "status" in frame else frame.iloc[:0]
    ok = with_volatility_thirds(ok)
    if ok.empty:
        return ""
    ratio = [c for c in ORACLE_RATIO if c in ok and ok[c].notna().any()]
    ok, mixed = thirds_of_one_scale(ok)
    table = _seed_means(ok, list(CONDITIONAL) + ratio).drop(columns="device")
    for column in CONDITIONAL:  # percentages to 2 decimals, as the main table's coverage
        table[column] = [format_number(100 * v, 2) if math.isfinite(v) else "-" for v in table[column]]
    table = _counts(table.rename(columns={**CONDITIONAL, **ORACLE_RATIO}), columns=("seeds",))
    table = table[[c for c in table.columns if c != "suite"] + ["suite"]]  # compact: the suite last
    return ("### Conditional coverage: where the intervals fail (volatility thirds by the oracle's scale where "
            "known, else a causal rolling robust scale; equal values stay in one third, so a two-valued scale has no "
            f"middle one; worst window: over {ROLLING_WINDOW} test steps, - for a shorter test span)\n\n"
            + _markdown(table)
            + ("\n_- in a row's thirds: its seeds ranked their steps by different scales (summary.csv's "
               "volatility_source: the oracle's for one, a rolling one for another, as each seed's test span "
               "allowed), whose thirds are not one quantity; each seed's are in summary.csv._\n"
               if mixed else ""))


def _alpha_of(rows: pd.DataFrame) -> float | None:
    if "alpha" not in rows:
        return None
    values = pd.to_numeric(rows["alpha"], errors="coerce").dropna().unique()
    return float(values[0]) if len(values) == 1 else None


def _sets_table(rows: pd.DataFrame, statistics: pd.DataFrame | None = None) -> str:
    horizons = horizon_columns(rows)
    has_ratio = "length_ratio_oracle" in rows and rows["length_ratio_oracle"].notna().any()
    ratio = ["length_ratio_oracle"] if has_ratio else []
    table = _seed_means(rows, ["joint_coverage", "marginal_coverage", *horizons, "mean_length", *ratio,
                               "median_length", "n_infinite", "winkler",
                               *(["bonferroni_winkler"] if "bonferroni_winkler" in rows else []), "n_test"], statistics)
    worst = table[horizons].min(axis=1, skipna=True) if horizons else pd.Series(float("nan"), index=table.index)
    table.insert(table.columns.get_loc("marginal_coverage") + 1, "worst horizon %", 100 * worst)
    table = table.drop(columns=horizons)
    table["joint_coverage"] = 100 * table["joint_coverage"]
    table["marginal_coverage"] = 100 * table["marginal_coverage"]
    table = _counts(table, ("seeds", "n_infinite", "n_test"))
    _with_ci(table, "joint_coverage", "coverage", 100, 2)  # a set's headline coverage is its joint coverage
    _with_ci(table, "mean_length", "mean_length")
    _with_ci(table, "winkler", "winkler")
    _with_ci(table, "bonferroni_winkler", "bonferroni_winkler")
    if "bonferroni_winkler" in table and table["bonferroni_winkler"].isna().all():
        table = table.drop(columns="bonferroni_winkler")
    table = _statistics_cells(table, ("p_joint",))
    # two interval scores: at the level alpha, and at alpha / H, the one the MCS and the comparisons rank by
    table = table.rename(columns={"joint_coverage": "joint coverage %", "marginal_coverage": "marginal coverage %",
                                  "n_test": "n_test (sequences)", "winkler": "winkler (alpha)",
                                  "bonferroni_winkler": "winkler (alpha/H)", **ORACLE_RATIO})
    capped = _without_joint_guarantee(rows)
    if capped:  # the table has an alpha column only where it holds several levels
        levels = table["alpha"] if "alpha" in table else [rows["alpha"].iloc[0]] * len(table)
        table["setting"] = [f"{setting} †" if (suite, dataset, level, method, setting) in capped else setting
                            for suite, dataset, level, method, setting in
                            zip(table["suite"], table["dataset"], levels, table["method"], table["setting"])]
    alpha = _alpha_of(rows)
    target = f"nominal {100 * (1 - alpha):g}% joint" if alpha is not None else "nominal level joint"
    note = ("\n_†: no joint guarantee at this level: alpha / H is below 1 / (n + 1) for its n calibration "
            "sequences, so each horizon's band is the largest calibration score, whatever alpha (CF-RNN's rule; the "
            "record's joint_guarantee and bonferroni_level). More calibration sequences or a larger alpha restore "
            "it._\n" if capped else "")
    return ("### Sets of sequences: coverage is JOINT (share of test sequences with all H horizons covered; "
            f"{target}); marginal = over all (sequence, horizon) cells; worst horizon = lowest per-horizon "
            "coverage (seed means)\n\n" + _markdown(table) + note)


def _without_joint_guarantee(rows: pd.DataFrame) -> set[tuple]:
    """(suite, dataset, alpha, method, setting) of the rows a seed of which says its Bonferroni level was
    capped (``joint_guarantee`` False: CF-RNN with too few calibration sequences for alpha / H)."""
    if "joint_guarantee" not in rows:
        return set()
    capped = rows[rows["joint_guarantee"].eq(False)]
    return set(zip(capped["suite"], capped["dataset"], capped["alpha"], capped["method"], capped["setting"]))


def _per_horizon_tables(rows: pd.DataFrame) -> list[str]:
    """Per (suite, dataset): seed-mean coverage % per horizon, (method, setting) x h1..hH, or transposed
    (one row per horizon) when H > MAX_HORIZON_COLUMNS."""
    out = []
    for (suite, dataset, _level), part in rows.groupby(["suite", "dataset", "alpha"], sort=True, dropna=False):
        horizons = [c for c in horizon_columns(part) if part[c].notna().any()]
        if not horizons:
            continue
        means = _seed_means(part, horizons)
        H = len(horizons)
        alpha = _alpha_of(part)
        targets = (f"; alpha {alpha:g}, targets: per horizon (Bonferroni) 100(1 - alpha/H) = "
                   f"{100 * (1 - alpha / H):.2f}%, joint {100 * (1 - alpha):g}%" if alpha is not None else "")
        title = f"### {dataset} ({suite}): coverage % per horizon, H = {H} (seed means{targets})\n\n"
        values = 100 * means[horizons]
        values.columns = [f"h{_horizon_digits(c)}" for c in horizons]
        if H <= MAX_HORIZON_COLUMNS:
            table = pd.concat([means[["method", "setting", "seeds"]], values], axis=1)
            table["seeds"] = table["seeds"].astype(int)
        else:
            table = values.T
            table.columns = [f"{m} {s}" for m, s in zip(means["method"], means["setting"])]
            table.insert(0, "horizon", table.index)
        out.append(title + _markdown(table.reset_index(drop=True)))
    return out


def markdown_table(frame: pd.DataFrame, statistics: pd.DataFrame | None = None) -> str:
    """Mean over seeds of the headline metrics per (suite, dataset, alpha, method, setting), and the device(s)
    that computed them: series rows (coverage = marginal) and set-of-sequences rows (coverage = joint, with the
    marginal and the worst horizon beside it) in separate tables, then one table of coverage per horizon per
    (suite, dataset) with set rows. Settings in natural order (:func:`setting_sort_key`). ``statistics``
    (one row per table row, :func:`pibench.reports.statistics.compute_statistics`): CIs beside the coverage,
    mean length and interval score, the tests' p-values and MCS membership."""
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return "_no finished task_\n"
    sets = set_rows(ok)
    series, set_part = ok[~sets], ok[sets]
    parts = []
    if len(series):
        heading = "### Series: coverage is marginal (share of covered test steps)\n\n" if len(set_part) else ""
        parts.append(heading + _series_table(series, statistics))
    if len(set_part):
        parts.append(_sets_table(set_part, statistics))
        parts.extend(_per_horizon_tables(set_part))
    if statistics is not None and len(statistics):
        parts.append(statistics_note(bool(len(series)), bool(len(set_part))))
        if any(f"[{CONSTANT}]" in part for part in parts):
            parts.append(f"_{CONSTANT_NOTE}_\n")
    return "\n".join(parts)


def failures(frame: pd.DataFrame) -> list[str]:
    """One line per failed task: what it was and the first line of its error."""
    lines = []
    for r in frame[frame["status"] != "ok"].itertuples():
        message = (str(r.error).strip() or "no message").splitlines()[0]
        lines.append(f"{r.dataset} / {r.method} {r.setting} / seed {r.seed} (task {r.task_id}): {message}")
    return lines


#: The note under the comparison tables.
COMPARISON_NOTE = ("_difference: the row's mean interval score minus the reference's (positive: worse), with its "
                   "90% CI; DM p (Holm): the two-sided Diebold-Mariano p-value of that difference, Holm-adjusted "
                   "over the table's comparisons, since they share a reference picked as the lowest mean on the same "
                   "data (* below 0.05; a series' long-run variance from its lowest cosine frequencies: few degrees of "
                   "freedom on a short or persistent "
                   "span; `results.compare()` has the unadjusted `dm_p` too); "
                   f"MCS (p): in the {MCS_LEVEL:.0%} Model Confidence Set of the dataset or not, with its MCS "
                   f"p-value (in where it is at least {1 - MCS_LEVEL:.2f}). The MCS weighs every pair of rows at "
                   "once, so with many rows and few degrees of freedom it keeps rows that DM, one pair at a time, "
                   "finds worse._\n")


#: How to compare the rows a comparison leaves apart.
SAME_DATA_ADVICE = ("To compare every row, run them all on the same data and test span (a suite's rows all with "
                    "--quick, or all without)")


def _not_compared(table: pd.DataFrame) -> list[str]:
    """"method setting: why" per row of a :func:`~pibench.reports.statistics.compare_group` table compared with
    none (on other data than the rows compared, or another test span)."""
    return [f"{r.method} {r.setting}: {r.not_compared}" for r in _sorted(table, ["method", "setting"]).itertuples()
            if r.not_compared]


def not_compared_notes(groups: dict, rows: set[tuple[str, str]] | None = None) -> list[str]:
    """A line per dataset (at a level) with rows its comparison leaves out, naming them and why; only the groups
    with a row of ``rows`` ((suite, method) pairs; default all)."""
    lines = []
    for (suite, dataset, alpha), group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        table = group.table
        if rows is not None and not any((suite, m) in rows for m in table["method"]):
            continue
        apart = _not_compared(table)
        if apart:
            lines.append(f"dataset {dataset} ({suite}, alpha {alpha:g}): not compared with its other rows: "
                         + "; ".join(apart) + f"; {SAME_DATA_ADVICE[0].lower()}{SAME_DATA_ADVICE[1:]}")
    return lines


def comparison_tables(groups: dict) -> str:
    """The "Comparisons" section: per (suite, dataset, alpha), each row's mean interval score, its difference
    to the reference row with the 90% CI and the Diebold-Mariano p-value, and MCS membership; then, over
    datasets, each (method, setting)'s mean rank on the interval score and how often it is in the MCS.
    ``groups``: :attr:`pibench.reports.statistics.Statistics.groups`."""
    parts, ranks = [], []
    for (suite, dataset, alpha), group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        table = group.table
        if group.reference is None or len(table) < 2:
            continue
        # rows compared with none (on other data) are no rivals of the others: not ranked among them
        ranked = table[(table["method"] != ORACLE) & (table["not_compared"] == "")].assign(
            rank=lambda t: t["mean_loss"].rank(method="average"))
        ranks.append(ranked)
        rows = []
        paired = paired_seeds(table)  # None unless some row has seeds another lacks
        for r in _sorted(table, ["method", "setting"]).itertuples():
            difference = "not compared" if r.not_compared else "reference" if pd.isna(
                getattr(r, "difference", float("nan"))) else (
                format_number(r.difference, sign="+") + ("" if pd.isna(r.difference_ci_low) else
                                                         f" [{format_number(r.difference_ci_low, sign='+')}, "
                                                         f"{format_number(r.difference_ci_high, sign='+')}]"))
            rows.append({"method": r.method, "setting": r.setting, **({"seeds": r.seeds} if paired else {}),
                         "interval score": format_number(r.mean_loss), "difference [90% CI]": difference,
                         "DM p (Holm)": _p(getattr(r, "dm_p_holm", float("nan"))),
                         "MCS (p)": _mcs_cell(r.in_mcs, r.mcs_p)})
        score = ("the interval score per horizon at level alpha / H (Bonferroni's)" if table["kind"].iloc[0] == "set"
                 else "the interval score")
        lowest_on = (" on the seeds compared" if paired else "") + (
            "; the oracle is never the reference" if (table["method"] == ORACLE).any() else "")
        on_seeds = (f"\n\nThe differences, DM and the MCS pair the rows on {paired}, the ones every row has; the "
                    "interval score is each row's mean over all its seeds, so a difference need not equal the "
                    "difference of two scores shown." if paired else "")
        apart = _not_compared(table)
        if apart:
            on_seeds += ("\n\nNot compared (a comparison pairs rows unit by unit, on one data), nor ranked below: "
                         + "; ".join(apart) + f". {SAME_DATA_ADVICE}.")
        units = int(table["units"].iloc[0])
        if units < MIN_UNITS:
            on_seeds += (f"\n\nOnly {units} test unit(s) (sequences, or their groups) to compare on: no "
                         "Diebold-Mariano test and no MCS; give more test sequences or groups.")
        parts.append(f"### Comparisons: {dataset} ({suite}, alpha {alpha:g}) on {score}, against "
                     f"{table['reference'].iloc[0]} (the lowest mean score{lowest_on}){on_seeds}\n\n"
                     + _markdown(pd.DataFrame(rows)))
    if parts:  # what the comparison tables' columns mean, once, under the last of them
        parts.append(COMPARISON_NOTE)
    both = pd.concat(ranks) if ranks else pd.DataFrame(columns=["suite", "dataset", "alpha"])
    groups_of = both[["suite", "dataset", "alpha"]].drop_duplicates().groupby("suite").size()
    both = both[both["suite"].isin(groups_of[groups_of > 1].index)]  # suites compared on two groups or more
    if len(both):
        # a (method, setting) is one configuration within a suite only: suites' labels are not compared
        summary = both.groupby(["suite", "method", "setting"]).agg(
            groups=("rank", "size"), mean_rank=("rank", "mean"),
            in_mcs=("in_mcs", lambda v: int(v.fillna(False).sum())))
        # rows ranked over more groups first: a rank over one dataset is no match for one over several
        summary = summary.reset_index().sort_values(["suite", "groups", "mean_rank", "method"],
                                                    ascending=[True, False, True, True])
        summary["in MCS"] = [f"{n} of {d}" for n, d in zip(summary["in_mcs"], summary["groups"])]
        table = _markdown(summary.drop(columns="in_mcs").rename(columns={"mean_rank": "mean rank, any coverage"}))
        parts.append("### Comparisons across datasets: mean rank on the interval score among the rows whatever "
                     "their coverage (1 = best; the oracle unranked; a group is a dataset at one level; rows over "
                     "more groups first; the leaderboard ranks only the rows that cover) and MCS membership\n\n"
                     + table)
    return "\n".join(parts)


def leaderboard_tables(frame: pd.DataFrame, statistics: pd.DataFrame | None = None) -> str:
    """The leaderboard of every suite with series rows on two or more datasets
    (:mod:`pibench.reports.leaderboard`): per (method, setting), its mean rank on the interval score over the
    datasets it covers within 2 points of nominal, how many it covers, and per dataset its score over the best
    covering row's (↓ coverage more than 2 points short, ↑ more than 2 points over)."""
    from pibench.reports.leaderboard import COVERAGE_TOLERANCE, leaderboard_suites, overall, per_dataset

    parts = []
    for suite in leaderboard_suites(frame):
        table = per_dataset(frame, suite, statistics)
        if table["alpha"].nunique() > 1:
            table = table[np.isclose(table["alpha"].astype(float), 0.1)] if (table["alpha"] == 0.1).any() else \
                table[table["alpha"] == table["alpha"].min()]
        board = overall(table)
        marks = {(r.method, r.setting, r.dataset): ("" if r.covers else (" ↓" if r.coverage < 1 - r.alpha else " ↑"))
                 for r in table.itertuples()}
        datasets = sorted(table["dataset"].astype(str).unique())
        rows = []
        for r in board.itertuples():
            row = {"method": r.method, "setting": r.setting,
                   "mean rank": "-" if pd.isna(r.mean_rank) else f"{r.mean_rank:.1f}",
                   "covers": f"{r.covered} of {r.datasets}"}
            if "in_mcs" in board:
                row["in MCS"] = f"{r.in_mcs} of {r.mcs_datasets}" if r.mcs_datasets else "-"
            for dataset in datasets:
                value = board.loc[r.Index, dataset]
                row[dataset] = "-" if pd.isna(value) else f"{value:.2f}{marks.get((r.method, r.setting, dataset), '')}"
            rows.append(row)
        level = float(table["alpha"].iloc[0])
        parts.append(f"### Leaderboard ({suite}, alpha {level:g}): interval score over the best row that covers "
                     f"within {100 * COVERAGE_TOLERANCE:g} points of {100 * (1 - level):g}%, per dataset; mean rank "
                     "among covering rows; rows by the share of their datasets covered, then mean rank (↓ covers "
                     "more than 2 points less, ↑ more)"
                     + ("; the oracle, the truth, last and unranked" if (board["method"] == ORACLE).any() else "")
                     + (f"; in MCS: the datasets whose {MCS_LEVEL:.0%} Model Confidence Set on the interval score "
                        "holds the row (the ranks are point estimates: rows in one MCS are not told apart)"
                        if "in_mcs" in board else "")
                     + "\n\n"
                     + _markdown(pd.DataFrame(rows)))
    return "\n".join(parts)
