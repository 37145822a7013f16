"""What the figures read: the records the tables show, and their per-step predictions, from the store only.

The CLI builds a :class:`StoredResults` from the results store (after the record
selection of :mod:`pibench.reports.selection`); figures never run a method. Predictions
are read on first use and kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from pibench.data_loaders.dates import dates_in_order
from pibench.reports.statistics import Statistics, compute_statistics
from pibench.reports.summary import summary_frame


@dataclass
class StoredResults:
    """The records (dicts) of a results store and a reader of a task's predictions parquet."""

    records: list[dict]
    read_predictions: Callable[[str], pd.DataFrame]
    _cache: dict = field(default_factory=dict, repr=False)
    #: where per-record statistics are cached (None: computed each time)
    statistics_cache: Path | None = None

    @cached_property
    def statistics(self) -> Statistics:
        """CIs, tests and comparisons of these records (:mod:`pibench.reports.statistics`)."""
        return compute_statistics(self.records, self.read_predictions, self.statistics_cache)

    @cached_property
    def summary(self) -> pd.DataFrame:
        return summary_frame(self.records, self.statistics.tasks)

    @property
    def alphas(self) -> list[float]:
        """The miscoverage levels of the records, ascending."""
        return sorted({float(r["alpha"]) for r in self.records if r.get("alpha") is not None})

    @property
    def alpha(self) -> float:
        """The level of these records (a view of one level: :meth:`at_alpha`); 0.1 if none is stated."""
        levels = self.alphas
        return levels[0] if levels else 0.1

    def at_alpha(self, level: float) -> StoredResults:
        """The records at one miscoverage level, sharing this store's predictions (read once)."""
        records = [r for r in self.records if r.get("alpha") is not None and float(r["alpha"]) == level]
        return StoredResults(records, self.read_predictions, self._cache, self.statistics_cache)

    @property
    def nominal_percent(self) -> float:
        return 100 * (1 - self.alpha)

    def finished(self, **where) -> pd.DataFrame:
        """Summary rows with status ok matching ``where`` (column = value)."""
        frame = self.summary[self.summary["status"] == "ok"]
        for column, value in where.items():
            frame = frame[frame[column] == value]
        return frame

    def record(self, task_id: str) -> dict:
        return next(r for r in self.records if r["task_id"] == task_id)

    def predictions(self, task_id: str) -> pd.DataFrame:
        if task_id not in self._cache:
            self._cache[task_id] = self.read_predictions(task_id)
        return self._cache[task_id]

    def covered_by_step(self, task_id: str) -> pd.DataFrame:
        """Series predictions as a (time x group) table of 0/1 coverage, steps in order."""
        p = self.predictions(task_id)
        hit = ((p["y"] >= p["lower"]) & (p["y"] <= p["upper"])).astype(float)
        return p.assign(hit=hit).pivot_table(index="t", columns="group", values="hit", sort=True)


def n_test_steps(record: dict) -> int:
    """The test steps of a series record (its test points over its series)."""
    return int(record.get("n_test") or 0) // max(1, len(record.get("coverage_by_group") or [1]))


#: The shortest test span a rolling-coverage figure is drawn for (shorter spans have no window to roll).
MIN_ROLLING_STEPS = 6


def rolling_window(n_steps: int, dataset: str) -> int:
    """Default rolling-coverage window: 30 days on fesp, else a tenth of the test span (10 to 200 steps);
    never more than a third of the span, so the curve has points (a 30-day fesp run rolls over 10 days)."""
    window = 30 if dataset == "fesp" else int(np.clip(n_steps // 10, 10, 200))
    return max(2, min(window, n_steps // 3))


def _resolution(times: pd.Series) -> str:
    """The date format that shows what varies in ``times``: years (every date a 1 January), months (every
    date a first of the month), days, or minutes (times of day)."""
    if (times.dt.hour != 0).any() or (times.dt.minute != 0).any():
        return "%Y-%m-%d %H:%M"
    if (times.dt.day == 1).all():
        return "%Y" if (times.dt.month == 1).all() else "%Y-%m"
    return "%Y-%m-%d"


def describe_test_span(results: StoredResults, task_id: str, daily: bool = False) -> str:
    """The test span of a series run in words, from its stored step labels: "2019-01-01 to 2019-12-31
    (365 days)", or "steps 1001 to 3000 (2,000 steps)" where the labels are not dates."""
    p = results.predictions(task_id)
    steps = p.drop_duplicates("t").sort_values("t")
    times = dates_in_order(steps["time"]) if "time" in steps and len(steps) else None
    unit = "days" if daily else "steps"
    if times is not None:
        shown = _resolution(times)
        return f"{times.iloc[0]:{shown}} to {times.iloc[-1]:{shown}} ({len(steps):,} {unit})"
    numbered = "time" in steps and pd.api.types.is_numeric_dtype(steps["time"])  # a file's own step numbers
    first, last = steps["time" if numbered else "t"].iloc[[0, -1]]
    return f"steps {int(first)} to {int(last)} ({len(steps):,} {unit})"


@dataclass(frozen=True)
class Headline:
    """One method's run shown in the per-method figures: its label, method, setting and the task of its first seed."""

    label: str
    method: str
    setting: str
    task_id: str


def headline_runs(results: StoredResults, suite: str, dataset: str) -> list[Headline]:
    """The runs the per-method figures show for a (suite, dataset): the fesp table's rows on fesp (the
    paper's, then every other method), else each method's best setting
    (:func:`pibench.reports.paper_tables.best_setting`), first seed each."""
    from pibench.reports.figures.style import run_labels
    from pibench.reports.paper_tables import best_setting, fesp_comparison

    rows = results.finished(suite=suite, dataset=dataset)
    if rows.empty:
        return []
    if dataset == "fesp":
        table = fesp_comparison(results.summary, suite, paper_level=False)
        picks = [(r.label, r.method, r.setting) for r in table.itertuples() if not r.label.startswith("ACI best")]
    else:
        picks = []
        for method, part in rows.groupby("method", sort=True):
            settings = part.groupby("setting", as_index=False).mean(numeric_only=True)
            setting = best_setting(settings, results.alpha)
            labels = dict(zip(part["setting"], run_labels(part["method"], part["setting"])))
            picks.append((labels[setting], method, setting))
    runs = []
    for label, method, setting in picks:
        part = rows[(rows["method"] == method) & (rows["setting"] == setting)].sort_values("seed")
        if len(part):
            runs.append(Headline(label, method, setting, str(part["task_id"].iloc[0])))
    return runs


def headline_note(results: StoredResults, suite: str, dataset: str) -> str:
    """What the per-method figures of :func:`headline_runs` leave out, for their titles ("" if nothing): the
    other settings of a method that ran several, the other seeds."""
    rows = results.finished(suite=suite, dataset=dataset)
    parts = []
    if len(rows) and rows.groupby("method")["setting"].nunique().max() > 1:
        parts.append("the fesp table's rows" if dataset == "fesp" else
                     f"a method's shortest setting covering {results.nominal_percent:g}% (else its best covering)")
    if len(rows) and rows["seed"].nunique() > 1:
        parts.append("its first seed")
    shown = f"shown: {' and '.join(parts)}" if parts else ""
    apart = other_data_rows(results, suite, dataset)
    return "; ".join(p for p in (shown, f"{apart} row(s) ran on other data than the rest (not compared: the tables "
                                        "say why)" if apart else "") if p)


def other_data_rows(results: StoredResults, suite: str, dataset: str) -> int:
    """How many rows of a (suite, dataset) its comparison leaves apart (on other data, or another test span): from
    the store's statistics where they are computed already (a report), else from this dataset's alone (a figure
    drawn by itself need not compare every other dataset)."""
    if "statistics" not in vars(results):
        results = StoredResults([r for r in results.records if (r.get("suite"), r.get("dataset")) == (suite, dataset)],
                                results.read_predictions, results._cache, results.statistics_cache)
    return sum(int((group.table["not_compared"] != "").sum())
               for (s, d, _), group in results.statistics.groups.items() if (s, d) == (suite, dataset))
