"""French electricity spot prices (docs/guide/datasets.md; Zaffran et al. 2022).

Hourly file, 24 rows a day, reshaped to a panel of 24 daily series (one per hour
of day): y (days, 24) and X (days, 24, 57) with the features ``hour``,
``dow_0..6``, ``lag_24_0..23``, ``lag_168_0..23``, ``conso``. Training = days
before 2019-01-01 (1,089), test = 2019 (365 days, 8,760 points).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from pibench.data_loaders.paths import locate
from pibench.data_loaders.problems import SeriesProblem

FEATURES = (
    ["hour"] + [f"dow_{k}" for k in range(7)] + [f"lag_24_{h}" for h in range(24)]
    + [f"lag_168_{h}" for h in range(24)] + ["conso"]
)
TARGET = "Spot"


def fesp_problem(
    *,
    data_dir: str | os.PathLike | None = None,
    test_start: str = "2019-01-01",
    test_days: int | None = None,
    end: str | None = None,
) -> SeriesProblem:
    """Load the prices as 24 hourly series.

    ``test_days`` keeps only the first test days; ``end`` drops the days from that
    date on (e.g. ``end="2019-01-01"`` with an earlier ``test_start`` tunes a
    method on the training span only, never touching the 2019 test year).
    """
    _check_span(test_start, test_days, end)
    path = locate("fesp", data_dir)
    frame = pd.read_csv(path)
    missing = [c for c in ["Date", TARGET, *FEATURES] if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; is this the Zaffran et al. prices file?")
    dates = pd.to_datetime(frame["Date"])
    if len(frame) % 24 or not (frame["hour"].to_numpy().reshape(-1, 24) == np.arange(24)).all():
        raise ValueError(f"{path}: expected 24 consecutive hourly rows (hour 0..23) for every day.")
    n_days = len(frame) // 24
    y = frame[TARGET].to_numpy(float).reshape(n_days, 24)
    X = frame[FEATURES].to_numpy(float).reshape(n_days, 24, len(FEATURES))
    days = dates.to_numpy()[::24]
    first_test = int(np.searchsorted(days, np.datetime64(pd.Timestamp(test_start))))
    stop = n_days if end is None else int(np.searchsorted(days, np.datetime64(pd.Timestamp(end))))
    stop = stop if test_days is None else min(stop, first_test + int(test_days))
    if not 0 < first_test < stop:
        raise ValueError(f"test_start={test_start!r} leaves no {'training' if first_test == 0 else 'test'} day: the "
                         f"file's days run from {str(days[0])[:10]} to {str(days[-1])[:10]}"
                         f"{f' (cut at end={end!r})' if end is not None else ''}; give a test_start between them.")
    return SeriesProblem(
        name="fesp", y=y[:stop], X=X[:stop], test_start=first_test,
        time=np.datetime_as_string(days[:stop], unit="D"),
        groups=tuple(f"h{h:02d}" for h in range(24)), feature_names=tuple(FEATURES),
        metadata={"source": str(path)},
    )


def _check_span(test_start: str, test_days: int | None, end: str | None) -> None:
    """The test span's parameters, every problem at once (ValueError), before the file is read."""
    problems, dates = [], {}
    for name, value in (("test_start", test_start), ("end", end)):
        if value is not None:
            try:
                dates[name] = pd.Timestamp(value)
            except (ValueError, TypeError):
                problems.append(f"{name}={value!r} is not a date: write it as YYYY-MM-DD.")
    if test_days is not None and test_days < 1:
        problems.append(f"test_days={test_days} must be at least 1 (leave it out for the whole test span).")
    if len(dates) == 2 and (dates["end"].tz is None) == (dates["test_start"].tz is None) \
            and dates["end"] <= dates["test_start"]:  # (a date with an offset and one without do not compare)
        problems.append(f"end={end!r} must come after test_start={test_start!r}: the test days run from test_start "
                        "up to end.")
    if problems:
        raise ValueError(" ".join(problems))
