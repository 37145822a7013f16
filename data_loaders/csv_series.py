"""Bring-your-own series: a CSV file, a target column, optional features and time.

How the rows become a problem (also in the README, "Your own series"):

* order: by the ``time`` column when given (numbers in numeric order, dates in
  date order; each value is kept as the step's label, unconverted), else the
  file's row order. Text that is neither numbers nor dates, missing or repeated
  times are errors.
* inputs X at row r: the ``features`` columns of row r (known before the target
  is revealed), then the previous ``lags`` target values y_{r-1}..y_{r-lags}
  (default 5; ``lags = 0`` for none). Lags and features combine.
* split: the test span is the last round(test_fraction x rows) rows of the file,
  at least :data:`MIN_TEST_POINTS`; the training span is the rows before it,
  less the first ``lags`` rows, which lack a full set of lags.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from pibench.data_loaders.lagged import MIN_TEST_POINTS, lagged_series_problem
from pibench.data_loaders.problems import SeriesProblem
from pibench.data_loaders.tables import check_magnitude, read_table


def _order(frame: pd.DataFrame, time: str, path: Path) -> pd.DataFrame:
    """The rows sorted by ``time`` (numbers numerically, dates chronologically); errors for anything else."""
    column = frame[time]
    if column.isna().any():
        rows = column.index[column.isna()][:5].tolist()
        raise ValueError(f"{path}: the time column {time!r} is empty in row(s) {rows}; fill them or drop those rows.")
    if pd.api.types.is_numeric_dtype(column):
        key = column
    else:
        numbers = pd.to_numeric(column, errors="coerce")
        dates = pd.to_datetime(column, errors="coerce", format="mixed")
        # the column reads as whichever most of it is; the example is a value that is not that
        key = numbers if numbers.notna().sum() >= dates.notna().sum() else dates
        if key.isna().any():
            row = key.index[key.isna()][0]
            kind = "numbers" if key is numbers else "dates"
            raise ValueError(
                f"{path}: the time column {time!r} holds {kind}, but row {row} holds {column[row]!r}, which is "
                "neither a number nor a date, so pibench cannot order the rows by it. Fix that row, or leave "
                "`time` out to keep the file's row order.")
    if key.duplicated().any():
        repeated = column[key.duplicated()].iloc[0]
        repeated = repeated.item() if isinstance(repeated, np.generic) else repeated  # 199, not np.int64(199)
        raise ValueError(f"{path}: the time column {time!r} repeats {repeated!r}; a series "
                         "has one row per step.")
    return frame.iloc[np.argsort(key.to_numpy(), kind="stable")]


def _check_roles(target: str, features: list[str], time: str | None, path: Path) -> None:
    """Each column plays one part: the target is no feature, and the time column neither target nor feature."""
    if target in features:
        raise ValueError(f"{path}: the target {target!r} is also listed in features; a feature is known before "
                         "the target is revealed, so drop it from features (its past values are the lags).")
    if len(set(features)) < len(features):
        raise ValueError(f"{path}: features = {features} names a column twice; list each once.")
    if time is not None and (time == target or time in features):
        role = "the target" if time == target else "a feature"
        raise ValueError(f"{path}: the time column {time!r} is also {role}; sorting a series by its own "
                         "values destroys its order. Give the column of dates or step numbers as time, or "
                         "leave time out to keep the file's row order.")


def csv_problem(
    *,
    path: str | os.PathLike,
    target: str,
    features: list[str] | None = None,
    time: str | None = None,
    lags: int = 5,
    test_fraction: float = 0.25,
) -> SeriesProblem:
    """A single series from ``path``: y = ``target``; X = ``features`` then ``lags`` target lags (module doc)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"CSV file {path} does not exist; give the path of a readable file.")
    if isinstance(lags, bool) or not isinstance(lags, int) or lags < 0:
        raise ValueError(f"lags={lags!r} must be a whole number >= 0 (0: no target lags, features only).")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction={test_fraction} must lie in (0, 1).")
    features = list(features or [])
    _check_roles(target, features, time, path)
    frame = read_table(path)
    wanted = [target, *features] + ([time] if time else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; the file has {list(frame.columns)}.")
    if not features and lags == 0:
        raise ValueError(f"{path}: lags = 0 and no features leave a method without inputs; give features or lags >= 1.")
    if time:
        frame = _order(frame, time, path)
    values = frame[[target, *features]].apply(pd.to_numeric, errors="coerce")
    bad = values.isna().any(axis=1).to_numpy() | ~np.isfinite(values.to_numpy(float)).all(axis=1)
    if bad.any():
        rows = values.index[bad][:5].tolist()  # rows of the file (the time sort keeps the index)
        raise ValueError(
            f"{path}: {int(bad.sum())} row(s) have a missing, non-numeric or infinite value in "
            f"{[target, *features]} (first rows {rows}); clean or drop them."
        )
    check_magnitude(values.to_numpy(float), [target, *features], path)
    n_rows = len(frame)
    n_test = int(round(n_rows * test_fraction))
    if n_test < MIN_TEST_POINTS:
        raise ValueError(
            f"{path}: the test span would hold {n_test} point(s) (test_fraction={test_fraction} of {n_rows} rows); "
            f"pibench needs at least {MIN_TEST_POINTS} test points for a coverage estimate worth reading. Give a "
            "longer series or a larger test_fraction.")
    return lagged_series_problem(
        f"csv:{path.name}:{target}", values[target].to_numpy(float), lags=lags, n_test=n_test, where=str(path),
        target=target, features=values[features].to_numpy(float) if features else None,
        feature_names=tuple(features), time=frame[time].astype(str).to_numpy() if time else None,
        metadata={"source": str(path)})
