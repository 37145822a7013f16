"""The order of a file's steps from a column of numbers or dates: the time column of a series
(:mod:`pibench.data_loaders.csv_series`) and the step column of a long table of sequences
(:mod:`pibench.data_loaders.csv_sets`) read alike.

Numbers order numerically. Dates are read with one format for the whole column (:mod:`dates`): ISO 8601
(2021-01-13, with or without a UTC offset, offsets that change at a daylight-saving switch included), else
the one format pandas infers, read month first and day first; a column that reads both ways in different
orders (01/02/2021) is an error asking for ``time_format``. Text that is neither, dates in several formats
and empty cells are errors: ordered as text, 01/02/2020 would come before 20/01/2020.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.tseries.api import guess_datetime_format

from pibench.data_loaders.dates import date_readings


def _dates(column: pd.Series, what: str, path: Path) -> pd.Series | None:
    """``column`` read as dates with one format for every row; None if it reads so in no way. ValueError if
    it reads both day first and month first, in different orders."""
    readings = date_readings(column)
    orders = [np.argsort(r.to_numpy(), kind="stable") for r in readings]
    if len(readings) == 2 and not np.array_equal(orders[0], orders[1]):
        row = column.index[(readings[0] != readings[1]).to_numpy()][0]
        month, day = (r[row].strftime("%d %B %Y").lstrip("0") for r in readings)
        raise ValueError(
            f"{path}: the dates of {what} read both month first and day first ({column[row]!r} in row {row}: "
            f"{month} or {day}), which orders the rows differently; give the format in the dataset's params, "
            'e.g. time_format = "%d/%m/%Y" (day first) or "%m/%d/%Y" (month first).')
    return readings[0] if readings else None


def step_key(column: pd.Series, what: str, path: Path, time_format: str | None = None,
             fix: str = "Fix that row.") -> pd.Series:
    """The values of ``column`` (named ``what`` in errors, e.g. "the time column 'date'") as numbers or
    dates that order its rows; ValueError naming the row and the fix for anything else. ``fix``: what else
    the user may do about a row that is neither a number nor a date."""
    if column.isna().any():
        rows = column.index[column.isna()][:5].tolist()
        raise ValueError(f"{path}: {what} is empty in row(s) {rows}; fill them or drop those rows.")
    if time_format is not None:
        with warnings.catch_warnings():  # offsets that change (daylight saving) read as one instant each
            warnings.simplefilter("ignore", FutureWarning)
            key = pd.to_datetime(column.astype(str), format=time_format, errors="coerce", utc="%z" in time_format)
        if key.isna().any():
            row = column.index[key.isna()][0]
            raise ValueError(f"{path}: row {row} of {what} holds {column[row]!r}, which time_format "
                             f"{time_format!r} does not read; fix that row or the format.")
        return key
    if pd.api.types.is_numeric_dtype(column):
        return column
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().all():
        return numbers
    dates = _dates(column.astype(str), what, path)
    if dates is not None:
        return dates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        loose = pd.to_datetime(column, errors="coerce", format="mixed", utc=True)
    # the column reads as whichever most of it is; the example is a value that is not that
    key = numbers if numbers.notna().sum() >= loose.notna().sum() else loose
    if not key.isna().any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            first = guess_datetime_format(str(column.iloc[0]))
            other = (pd.to_datetime(column, format=first, errors="coerce", utc=True).isna() if first
                     else column.isna())
        example = f" and {column[other].iloc[0]!r}" if other.any() else ""
        raise ValueError(f"{path}: the dates of {what} are written in more than one format (e.g. "
                         f"{column.iloc[0]!r}{example}); write them alike (YYYY-MM-DD reads one way only), or give "
                         "time_format.")
    row = key.index[key.isna()][0]
    kind = "numbers" if key is numbers else "dates"
    raise ValueError(f"{path}: {what} holds {kind}, but row {row} holds {column[row]!r}, which is neither a number "
                     f"nor a date, so pibench cannot order the rows by it. {fix}")
