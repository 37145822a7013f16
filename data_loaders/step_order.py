"""The order of a file's steps from a column of numbers or dates: the time column of a series
(:mod:`pibench.data_loaders.csv_series`) and the step column of a long table of sequences
(:mod:`pibench.data_loaders.csv_sets`) read alike.

Numbers order numerically. Dates are read with one format for the whole column (:mod:`dates`): ISO 8601
(2021-01-13, with or without a UTC offset, offsets that change at a daylight-saving switch included), else
the one format pandas infers, read month first and day first; a column that reads both ways in different
orders (01/02/2021) is an error asking for ``time_format``, one that reads both ways in one order takes the
reading whose steps skip least. Text that is neither, dates in several formats
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
    it reads both day first and month first, in different orders; where both give one order, the reading
    whose steps skip least (month first if they skip alike): monthly dates 01/01/1980, 01/02/1980, ... read
    month first are January's first twelve days, a year apart each twelve."""
    readings = date_readings(column)
    orders = [np.argsort(r.to_numpy(), kind="stable") for r in readings]
    if len(readings) == 2 and not np.array_equal(orders[0], orders[1]):
        row = column.index[(readings[0] != readings[1]).to_numpy()][0]
        month, day = (r[row].strftime("%d %B %Y").lstrip("0") for r in readings)
        raise ValueError(
            f"{path}: the dates of {what} read both month first and day first ({column[row]!r} in row {row}: "
            f"{month} or {day}), which orders the rows differently; give the format in the dataset's params, "
            'e.g. time_format = "%d/%m/%Y" (day first) or "%m/%d/%Y" (month first).')
    if len(readings) == 2:  # one order: the reading whose steps skip least (01/02/1980 a month on, not a day)
        # (on the distinct dates: the sequences of a long table of sets repeat them)
        return min(readings, key=lambda r: int(_skips(step_numbers(r.drop_duplicates().sort_values())).sum()))
    return readings[0] if readings else None


def _skips(steps: np.ndarray) -> np.ndarray:
    """:func:`skipped` of ``steps`` at their usual step (none for fewer than three)."""
    return skipped(steps, usual_step(np.diff(steps))) if len(steps) >= 3 else np.zeros(0, bool)


def as_written(value: object) -> object:
    """A cell as the file wrote it: 20200101, not np.int64(20200101)."""
    return value.item() if isinstance(value, np.generic) else value


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
            raise ValueError(f"{path}: row {row} of {what} holds {as_written(column[row])!r}, which "
                             f"time_format {time_format!r} does not read; fix that row or the format.")
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
    if key.notna().sum() == 0:  # nothing in it reads as either
        raise ValueError(f"{path}: {what} holds neither numbers nor dates (row {row} holds {column[row]!r}), so "
                         f"pibench cannot order the rows by it. {fix}")
    kind = "numbers" if key is numbers else "dates"
    raise ValueError(f"{path}: {what} holds {kind}, but row {row} holds {as_written(column[row])!r}, which is neither "
                     f"a number nor a date, so pibench cannot order the rows by it. {fix}")


def step_numbers(key: pd.Series) -> np.ndarray:
    """Steps (numbers or dates, as :func:`step_key` gives them) as numbers: dates as int64 nanoseconds since
    1970 (UTC), numbers as floats."""
    if pd.api.types.is_datetime64_any_dtype(key):
        return pd.to_datetime(key, utc=True).dt.as_unit("ns").astype("int64").to_numpy()
    return key.to_numpy(float)


def step_text(value, span: bool = False) -> str:
    """A step of :func:`step_numbers` (or, ``span``, a difference of steps) as the file wrote it: a number, or a
    date from nanoseconds."""
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):  # dates, as nanoseconds
        if span:
            delta = pd.Timedelta(int(value))
            return f"{delta.days} day(s)" if delta == pd.Timedelta(days=delta.days) else str(delta)
        stamp = pd.Timestamp(int(value))
        return stamp.strftime("%Y-%m-%d") if stamp == stamp.normalize() else str(stamp)
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"


def usual_step(gaps: np.ndarray):
    """The most common difference between consecutive steps."""
    values, counts = np.unique(gaps, return_counts=True)
    return values[np.argmax(counts)]


_DAY_NS = 86_400 * 10**9


#: Hours a file's own day may be from UTC's (Kiritimati: +14, Baker Island: -12), nearest first.
_SHIFTS_NS = [h * 3_600 * 10**9 for h in sorted(range(-14, 15), key=abs)]
#: A file of working days may hold this share of weekend days (a special Saturday session).
WEEKEND_SHARE = 0.02


def skipped(steps: np.ndarray, usual) -> np.ndarray:
    """Which differences of consecutive ``steps`` (:func:`step_numbers`) skip steps: at least 1.5 times the
    ``usual`` one (months of 28 to 31 days and float steps never do). In a file of daily working days (stock
    prices; at most :data:`WEEKEND_SHARE` of them on a weekend), a weekend between two of them skips nothing;
    in one with weekend days, every missing day skips. The calendar days are the instants in UTC shifted by
    the whole hours, -14 to +14, that put the fewest of them on a weekend, the nearest such shift first (the
    file's own days, whatever its UTC offset)."""
    gaps = np.diff(steps)
    skips = gaps >= 1.5 * usual
    if steps.dtype.kind == "i" and usual == _DAY_NS and skips.any():
        readings = [(steps + shift).astype("datetime64[ns]").astype("datetime64[D]") for shift in _SHIFTS_NS]
        days = min(readings, key=lambda d: int((~np.is_busday(d)).sum()))  # (the first of a tie: the nearest)
        if (~np.is_busday(days)).mean() <= WEEKEND_SHARE:
            skips &= np.busday_count(days[:-1], days[1:]) > 1  # Friday (or Saturday) to Monday: none missing
    return skips


def gap_text(steps: np.ndarray, at: int, usual, written: np.ndarray | None = None) -> str:
    """"A then B, where the usual step is C": the gap after ``steps[at]``, as the file wrote its steps (its cells
    ``written``, in the order of ``steps``, where given: a date with an offset reads as written, not in UTC)."""
    first, then = (as_written(written[at]), as_written(written[at + 1])) if written is not None else \
        (step_text(steps[at]), step_text(steps[at + 1]))
    return f"{first} then {then}, where the usual step is {step_text(usual, span=True)}"
