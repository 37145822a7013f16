"""Bring-your-own series: a CSV file, a target column, optional features and time."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from data_loaders.problems import SeriesProblem


def csv_problem(
    *,
    path: str | os.PathLike,
    target: str,
    features: list[str] | None = None,
    time: str | None = None,
    lags: int | None = None,
    test_fraction: float = 0.25,
) -> SeriesProblem:
    """A single series from ``path``: y = ``target``; X = ``features`` and/or ``lags`` target lags.

    With neither features nor lags, the previous 5 target values are the features.
    Rows are sorted by ``time`` when given; the last ``test_fraction`` of the rows
    that have all their lags form the test span.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"CSV file {path} does not exist; give the path of a readable file.")
    frame = pd.read_csv(path)
    features = list(features or [])
    wanted = [target, *features] + ([time] if time else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; the file has {list(frame.columns)}.")
    if time:
        frame = frame.assign(**{time: pd.to_datetime(frame[time])}).sort_values(time, kind="stable")
    values = frame[[target, *features]].apply(pd.to_numeric, errors="coerce")
    bad = values.isna().any(axis=1).to_numpy() | ~np.isfinite(values.to_numpy(float)).all(axis=1)
    if bad.any():
        rows = values.index[bad][:5].tolist()  # rows of the file (the time sort keeps the index)
        raise ValueError(
            f"{path}: {int(bad.sum())} row(s) have a missing, non-numeric or infinite value in "
            f"{[target, *features]} (first rows {rows}); clean or drop them."
        )
    lags = (0 if features else 5) if lags is None else int(lags)
    y_all = values[target].to_numpy(float)
    columns = [values[features].to_numpy(float)] if features else []
    columns += [np.roll(y_all, k)[:, None] for k in range(1, lags + 1)]
    if not columns:
        raise ValueError("give feature columns or lags >= 1: a method needs inputs.")
    X = np.concatenate(columns, axis=1)[lags:]
    y = y_all[lags:]
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction={test_fraction} must lie in (0, 1).")
    n_test = int(round(len(y) * test_fraction))
    if len(y) < 4 or not 0 < n_test < len(y):
        raise ValueError(f"{path}: {len(y)} usable rows are too few to split into training and test spans.")
    stamps = frame[time].astype(str).to_numpy()[lags:] if time else None
    return SeriesProblem(
        name=f"csv:{path.name}:{target}", y=y, X=X, test_start=len(y) - n_test, time=stamps,
        groups=(target,), feature_names=tuple(features) + tuple(f"lag_{k}" for k in range(1, lags + 1)),
        metadata={"source": str(path)},
    )
