"""Bring-your-own series: a CSV file, a target column, optional features and time.

How the rows become a problem (also in docs/tutorials/your-csv.md):

* order: by the ``time`` column when given (numbers in numeric order, dates in
  date order; each value is kept as the step's label, whole numbers as numbers,
  anything else as written), else the file's row order (each step labelled by
  its row, counted from 0 under the header). Dates are read with one format for the whole column:
  ISO 8601 (2021-01-13), else the one format pandas infers, read month first
  and day first; a column both read alike, or only one of them reads, is that
  column's order, and one that reads both ways in different orders (01/02/2021:
  2 January or 1 February) is an error asking for ``time_format`` (e.g.
  "%d/%m/%Y"). Text that is neither numbers nor dates, dates in several formats,
  missing or repeated times are errors; without ``time``, so is another column of
  dates newest first (the file's order would run backwards), and one of distinct dates that go back at more
  than :data:`SCRAMBLED_SHARE` of the steps where no other column counts up the file (shuffled rows); one of
  distinct dates out of order at fewer, or of whole numbers named as times (``year``, :data:`TIME_NAMES`)
  counting down, is a note.
* one series of several: ``where`` keeps the rows whose columns hold the values
  it names (``where = { region = "north" }``). A file that may be in long format
  (a column of dates, most of them repeated, once per value of a column of text
  that may name the series) is told: an error with ``time`` (a repeated time),
  a note without it where no column of dates tells the rows apart, as are full
  dates that repeat and go back more than a day (series stacked one after another).
* inputs X at row r: the ``features`` columns of row r (known before the target
  is revealed), then the previous ``lags`` target values y_{r-1}..y_{r-lags}
  (default 5; ``lags = 0`` for none). Lags and features combine.
* split: the test span is the last round(test_fraction x rows) rows of the file,
  at least :data:`MIN_TEST_POINTS`; the training span is the rows before it,
  less the first ``lags`` rows, which lack a full set of lags.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd

from pibench.data_loaders.dates import date_readings, dates_in_order
from pibench.data_loaders.lagged import MIN_TEST_POINTS, lagged_series_problem
from pibench.data_loaders.paths import DataNotFoundError
from pibench.data_loaders.problems import SeriesProblem
from pibench.data_loaders.step_order import as_written, gap_text, skipped, step_key, step_numbers, usual_step
from pibench.data_loaders.suite_entry import dataset_entry
from pibench.data_loaders.tables import (
    check_magnitude,
    comma_hint,
    header_below_hint,
    read_table,
    where_relative,
)
from pibench.data_loaders.validation import did_you_mean


def _time_labels(column: pd.Series, time_format: str | None, key: pd.Series) -> np.ndarray:
    """The steps' labels: whole numbers stay numbers (a figure shows step 1001 as a step, not as the year
    1001; years read fine as numbers too), anything else is kept as written, as text (dates are read
    from it where a figure needs them; ``time_format`` marks the column as dates, 20240131 included), but
    dates that do not read one way alone as written (01/02/1980: a format given, or the day-first reading
    :func:`~pibench.data_loaders.step_order.step_key` chose) are written as the dates ``key`` read, ISO 8601,
    so that every figure reads them as the loader did."""
    typed = pd.api.types  # dates, spans and flags are no step numbers, whatever pd.to_numeric makes of them
    dated = typed.is_datetime64_any_dtype(column) or typed.is_timedelta64_dtype(column) or typed.is_bool_dtype(column)
    if time_format is None and not dated:
        numbers = pd.to_numeric(column, errors="coerce").to_numpy(float)
        # whole numbers, exact in float64 and so within int64 too
        if np.isfinite(numbers).all() and (numbers == np.round(numbers)).all() and (np.abs(numbers) < 2**53).all():
            return numbers.astype(np.int64)
    text = column.astype(str)
    if typed.is_datetime64_any_dtype(key) and dates_in_order(text) is None:
        utc = key.dt.tz is not None  # times with offsets are read as instants in UTC: labelled so, "+00:00"
        stamps = key.dt.tz_convert("UTC").dt.tz_localize(None) if utc else key
        shown = ("%Y-%m-%d" if (stamps == stamps.dt.normalize()).all() and not utc else
                 "%Y-%m-%dT%H:%M:%S" + (".%f" if (stamps.dt.microsecond != 0).any() else ""))
        return (stamps.dt.strftime(shown) + ("+00:00" if utc else "")).to_numpy()
    return text.to_numpy()


def _order(frame: pd.DataFrame, time: str, path: Path, used: list[str], given: dict,
           time_format: str | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """The rows sorted by ``time`` and their steps as read (:func:`~pibench.data_loaders.step_order.step_key`:
    numbers or dates), in that order; an error for a repeated time (one for a
    file in long format, :func:`_series_names`, with ``where`` for one series added to the parameters
    ``given``)."""
    column = frame[time]
    key = step_key(column, f"the time column {time!r}", path, time_format,
                   fix="Fix that row, or leave `time` out to keep the file's row order.")
    if key.duplicated().any():
        names = _series_names(frame, time, used)
        if names is not None:
            raise ValueError(f"{path}: {_long_format_text(frame, time, names, given)}; a series has one row per "
                             "step.")
        again = int(np.flatnonzero(key.duplicated().to_numpy())[0])
        first = int(np.flatnonzero((key == key.iloc[again]).to_numpy())[0])
        repeated = as_written(column.iloc[again])  # 199, not np.int64(199)
        raise ValueError(f"{path}: the time column {time!r} repeats {repeated!r} (rows {column.index[first]} and "
                         f"{column.index[again]}, counted from 0 under the header); a series has one row per step: "
                         f"drop or fix one of them.{_clock_change_hint(key, again - first)}")
    order = np.argsort(key.to_numpy(), kind="stable")
    return frame.iloc[order], key.iloc[order]


def _clock_change_hint(key: pd.Series, rows_apart: int) -> str:
    """Where times of day without an offset repeat one within a few rows of its first (local clock times, set
    back an hour in autumn: 02:00, 02:15, ..., then 02:00 again), how to write them so that each is one instant."""
    if not pd.api.types.is_datetime64_dtype(key) or getattr(key.dt, "tz", None) is not None:
        return ""
    steps = key.sort_values().diff().dropna()
    if not len(steps) or steps.median() > pd.Timedelta(hours=1) or rows_apart * steps.median() > pd.Timedelta(
            hours=1):  # a repeat a clock change makes: the hour set back comes again at once
        return ""
    return (" If these are local clock times, a daylight-saving change repeats an hour each autumn: write the "
            "times with their UTC offset (2022-10-30T02:00+02:00, then 2022-10-30T02:00+01:00) or in UTC.")


def _series_names(frame: pd.DataFrame, dates: str, used: list[str]) -> str | None:
    """The column of text that tells apart the rows where the column ``dates`` repeats a date (each pair of a
    date and a name once, each name on several rows): the file is in long format, one series per name; None
    where no column does (a column of numbers or of times of day may be the step within a date, never named)."""
    if frame[dates].duplicated().mean() < 0.5:  # a date repeated now and then (a daylight-saving hour) is no sign
        return None
    for name in frame.columns:
        column = frame[name]
        if name in used or name == dates or pd.api.types.is_numeric_dtype(column) or column.isna().any():
            continue
        if 2 <= column.nunique() <= len(column) // 2 and not frame.duplicated([dates, name]).any() \
                and not date_readings(column.astype(str)):
            return str(name)
    return None


def _long_format_text(frame: pd.DataFrame, dates: str, names: str, given: dict) -> str:
    """What a file that may be in long format (:func:`_series_names`) is told: how many series the column
    ``names`` would name, and ``where`` for one added to the parameters ``given`` (each parameter, None where
    not given), with ``time`` the dates if not given. Said as a possibility: 01:00 to 24:00 beside a date
    may be the hours of one series (then a time column that tells every row apart is the fix)."""
    values = [as_written(v) for v in frame[names].unique()]
    shown = ", ".join(map(repr, values[:4])) + (", ..." if len(values) > 4 else "")
    one = {**given, "time": given["time"] or dates, "where": {**(given["where"] or {}), names: values[0]}}
    return (f"the column {dates!r} repeats its dates, once for each value of {names!r} ({len(values)} values: "
            f"{shown}): if the file holds {len(values)} series in long format, keep one with where, e.g. in a suite "
            f"file ({dataset_entry('csv', one)}); if they are steps within each date, give as time a column that "
            "tells every row apart")


def _stacked_note(frame: pd.DataFrame, name: str, readings: list[pd.Series]) -> str | None:
    """A note where the column ``name`` holds full dates (with a year) that repeat and go back by more than a
    day down the file in every reading: series stacked one after another, taken in file order as one (a cycle,
    January to December or hour by hour without a year, is not one, nor a clock set back an hour)."""
    column = frame[name]
    if column.is_unique or not column.astype(str).str.contains(r"\d{4}").all():
        return None
    day = np.timedelta64(1, "D")  # back by an hour or so is a clock set back (daylight saving), not a new series
    backs = [np.flatnonzero(r.diff().to_numpy()[1:] < -day) + 1 for r in readings]
    if not all(len(b) for b in backs):
        return None
    at = int(backs[0][0])
    return (f"the column {name!r} repeats dates and goes back {len(backs[0])} time(s) down the file (row "
            f"{frame.index[at]}'s {column.iloc[at]!r} comes after {column.iloc[at - 1]!r}, rows counted from 0 under "
            "the header), and "
            "without time the rows are taken in file order as one series: if the file holds several series one "
            "after another, keep one with where = { column = value } (a column that names the series)")


def _reads_as_yyyymmdd(column: pd.Series) -> bool:
    """Whether a column of whole numbers is dates written YYYYMMDD (20240131): as numbers, a month's end skips."""
    if not pd.api.types.is_integer_dtype(column) or not column.between(10_000_101, 99_991_231).all():
        return False
    return bool(pd.to_datetime(column.astype(str), format="%Y%m%d", errors="coerce").notna().all())


def _skipped_note(steps: np.ndarray, time: str, written: np.ndarray | None = None) -> str | None:
    """A note where the column of times ``time`` (given as time, or dates down the file; its cells ``written``, in
    the order of ``steps``) skips steps (:func:`~pibench.data_loaders.step_order.skipped`): the rows are the steps
    all the same."""
    if len(steps) < 3:
        return None
    usual = usual_step(np.diff(steps))
    skips = np.flatnonzero(skipped(steps, usual))
    if not len(skips):
        return None
    at = int(skips[0])
    return (f"the column {time!r} skips steps {len(skips)} time(s) (first {gap_text(steps, at, usual, written)}): "
            "the rows "
            "are used as consecutive steps (the lags and the windows count rows); fill or drop the gaps if they matter")


#: Distinct dates that go back at more than this share of the steps, where no other column counts up the file, are
#: rows shuffled (an error); fewer (two rows swapped) are a note.
SCRAMBLED_SHARE = 0.05
#: Names of a column of whole numbers that count the rows' times (a year): one counting down the file is noted.
TIME_NAMES = {"year", "yr", "time", "t", "step", "period", "date", "day", "week", "month", "quarter", "hour"}


def _check_not_backwards(frame: pd.DataFrame, used: list[str], path: Path, given: dict
                         ) -> tuple[tuple[str, np.ndarray] | None, str | None]:
    """Without ``time`` the rows are the steps in file order: a ValueError if another column of dates runs
    backwards down the file (newest first, as many downloads are), which would forecast the past. Returns the
    first column of dates that runs forwards, with its dates as numbers (else None), and a note where a column
    of distinct dates is out of order (shuffled rows, two swapped: the series would run scrambled; a column
    that repeats, an hour of the day or a month's name, is a cycle, not the rows' time), or, where no column of
    dates tells the rows apart, where one may hold several series (:func:`_series_names`,
    :func:`_stacked_note`)."""
    forwards, disorder = None, None
    scrambled: tuple[int, int, str] | None = None  # (steps back, steps, column) of the distinct dates out of order
    dated: dict[str, list[pd.Series]] = {}  # the columns of dates, each with its readings
    for name in frame.columns:
        column = frame[name]
        if name in used or len(column) < 2 or column.isna().any():
            continue
        if pd.api.types.is_numeric_dtype(column):  # a column named as times (a year) counting down the file
            if disorder is None and pd.api.types.is_integer_dtype(column) and \
                    str(name).strip().lower() in TIME_NAMES and (np.diff(column.to_numpy()) < 0).all():
                disorder = (f"the column {name!r} counts down the file ({as_written(column.iloc[0])} in the first "
                            f"row, {as_written(column.iloc[-1])} in the last), and without time the rows are taken "
                            f"in file order: if it is the rows' time (a year, newest first), the series runs "
                            f"backwards: order the rows by it with time = {name!r}, or reverse the file")
            continue
        readings = date_readings(column.astype(str))
        if readings:
            dated[str(name)] = readings
        steps = [r.diff().to_numpy()[1:] for r in readings]  # each reading's step from the row above
        earlier = [d < np.timedelta64(0) for d in steps]
        if readings and all(e.all() for e in earlier):
            raise ValueError(
                f"{path}: the column {name!r} holds dates newest first ({column.iloc[0]!r} in the first row, "
                f"{column.iloc[-1]!r} in the last), and without time the rows are taken in file order, so the "
                f"series would run backwards; order the rows by it with time = {name!r} in a suite file "
                f"({dataset_entry('csv', {**given, 'time': str(name)})}), or reverse the file.")
        if disorder is None and readings and column.is_unique and all(e.any() for e in earlier):
            back = int(np.argmax(earlier[0])) + 1
            scrambled = min(int(e.sum()) for e in earlier), len(column) - 1, str(name)
            disorder = (f"the column {name!r} holds distinct dates out of order (row {frame.index[back]}'s "
                        f"{column.iloc[back]!r} "
                        f"comes after {column.iloc[back - 1]!r}, rows counted from 0 under the header), and without "
                        "time the rows are taken in file order: if they are the series' times, order the rows by "
                        f"them with time = {name!r} in a suite file, or sort the file")
        forward = [r for r, d in zip(readings, steps) if (d > np.timedelta64(0)).all()]
        if forwards is None and forward:
            forwards = name, step_numbers(forward[0])
    if scrambled is not None and forwards is None and scrambled[0] > SCRAMBLED_SHARE * scrambled[1] and \
            not _ordered_by_another(frame, [*used, scrambled[2]], dated):
        back, count, name = scrambled
        raise ValueError(f"{path}: the column {name!r} holds distinct dates that go back at {back} of the {count} "
                         "steps down the file (shuffled rows?), and no other column counts up the file; without time "
                         "the rows are taken in file order, so the series would run scrambled. Order the rows by "
                         f"it with time = {name!r} in a suite file ({dataset_entry('csv', {**given, 'time': name})}), "
                         "or sort the file.")
    if not any(frame[name].is_unique for name in dated):  # no column of dates tells the rows apart: one series?
        for name, readings in dated.items():
            names = _series_names(frame, name, used)
            note = (_long_format_text(frame, name, names, given) + "; without time the rows are taken in file "
                    "order as one series") if names is not None else _stacked_note(frame, name, readings)
            if note:
                return forwards, note
    return forwards, disorder


def _ordered_by_another(frame: pd.DataFrame, used: list[str], dated: dict[str, list[pd.Series]]) -> bool:
    """Whether a column other than ``used`` counts up the file (never down, more than one value): numbers (a step,
    a year) or dates, repeats allowed (a date beside an hour): the rows' order, beside which dates out of order are
    some other date."""
    for name in frame.columns:
        if name in used or pd.api.types.is_bool_dtype(frame[name]):  # flags (False..., True...) count nothing
            continue
        values = frame[name]
        candidates = dated.get(str(name), []) if not pd.api.types.is_numeric_dtype(values) else [values]
        if any(c.is_monotonic_increasing and c.nunique() > 1 for c in candidates):
            return True
    return False


def _check_roles(target: str, features: list[str], time: str | None, path: Path) -> None:
    """Each column plays one part: the target is no feature, and the time column neither target nor feature."""
    if target in features:
        raise ValueError(f"{path}: the target {target!r} is also listed in features; a feature is known before "
                         "the target is revealed, so drop it from features (its past values are the lags).")
    if len(set(features)) < len(features):
        raise ValueError(f"{path}: features = {features} names a column twice; list each once.")
    if time is not None and time == target:
        raise ValueError(f"{path}: the time column {time!r} is also the target; sorting a series by its own "
                         "values destroys its order. Give the column of dates or step numbers as time, or "
                         "leave time out to keep the file's row order.")
    if time is not None and time in features:
        raise ValueError(f"{path}: the time column {time!r} is also listed in features; it orders the rows and "
                         "labels the steps, and is no input (a calendar input, such as the day of the week, is a "
                         "column of numbers of its own): drop it from features.")


def _kept_rows(frame: pd.DataFrame, where: dict, path: Path) -> pd.DataFrame:
    """The rows of ``frame`` whose columns hold ``where``'s values (numbers compared as numbers, anything
    else as text), their index kept (rows of the file); an error naming the values a column holds where
    none is left."""
    kept = np.ones(len(frame), bool)
    for name, value in where.items():
        column = frame[name]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and pd.api.types.is_numeric_dtype(column):
            match = (column == value).to_numpy()
        else:
            match = (column.astype(str).str.strip() == str(value).strip()).to_numpy()
        if not match.any():
            values = [as_written(v) for v in column.unique()]
            shown = ", ".join(map(repr, values[:6])) + (", ..." if len(values) > 6 else "")
            raise ValueError(f"{path}: where = {{ {name} = {value!r} }} keeps no row: the column {name!r} holds "
                             f"{shown}.{did_you_mean(str(value), [str(v) for v in values])}")
        kept &= match
    if not kept.any():
        raise ValueError(f"{path}: no row holds all of where = {where}; each value alone is in the file, but "
                         "never together in one row.")
    return frame[kept]


def csv_problem(
    *,
    path: str | os.PathLike,
    target: str,
    features: list[str] | None = None,
    time: str | None = None,
    time_format: str | None = None,
    lags: int = 5,
    test_fraction: float = 0.25,
    where: dict[str, str | int | float] | None = None,
) -> SeriesProblem:
    """A single series from ``path``: y = ``target``; X = ``features`` then ``lags`` target lags; the rows
    ``where`` names alone, if given (module doc)."""
    path = Path(path).expanduser()
    problems = []  # every problem of the parameters at once, then those of the file's columns
    exists = path.is_file()
    if not exists:
        problems.append(f"CSV file {path} does not exist{where_relative(path)}; give the path of a readable file.")
    if isinstance(lags, bool) or not isinstance(lags, int) or lags < 0:
        problems.append(f"lags={lags!r} must be a whole number >= 0 (0: no target lags, features only).")
    if not 0 < test_fraction < 1:
        problems.append(f"test_fraction={test_fraction} must lie in (0, 1).")
    features = list(features or [])
    try:
        _check_roles(target, features, time, path)
    except ValueError as exc:
        problems.append(str(exc))
    if time_format is not None and time is None:
        problems.append(f"time_format={time_format!r} reads the time column: give time (its name) too.")
    frame = None
    if exists:
        try:
            frame = read_table(path)
        except ValueError as exc:  # an unreadable file: said with the parameters' problems
            if not problems:
                raise
            problems.append(str(exc))
    where = dict(where or {})
    defaults = csv_problem.__kwdefaults__ or {}
    given = {key: None if value in ([], {}) or value == defaults.get(key) else value for key, value in dict(
        path=str(path), target=target, features=features, time=time, time_format=time_format, lags=lags,
        test_fraction=test_fraction, where=where).items()}  # the parameters as given (None: left out), for fixes
    missing = [c for c in [target, *features, *([time] if time else []), *where]
               if frame is not None and c not in frame]
    if frame is not None and missing:
        taken = {target, time} if missing[0] in features else set()  # a feature is neither the target nor the time
        offered = [c for c in frame.columns if c not in taken]
        problems.append(f"{path}: no column(s) {missing}; the file has {list(frame.columns)}."
                        f"{header_below_hint(frame, missing) or did_you_mean(missing[0], offered)}")
    if problems or frame is None:
        if not exists and len(problems) == 1:  # the file alone is missing: an optional entry is skipped
            raise DataNotFoundError(problems[0])
        raise ValueError(" ".join(problems))
    if not features and lags == 0:
        raise ValueError(f"{path}: lags = 0 and no features leave a method without inputs; give features or lags >= 1.")
    if where:
        frame = _kept_rows(frame, where, path)
    if time:
        frame, key = _order(frame, time, path, [target, *features], given, time_format)
        order_note = _skipped_note(step_numbers(key), time, frame[time].to_numpy())
        if order_note and time_format is None and _reads_as_yyyymmdd(frame[time]):
            order_note += (f"; its whole numbers read as dates written YYYYMMDD (the first {frame[time].iloc[0]}): "
                           "give time_format = \"%Y%m%d\" to step by days, not by numbers")
    else:
        forwards, disorder = _check_not_backwards(frame, [target, *features], path, given)
        order_note = _skipped_note(forwards[1], forwards[0], frame[forwards[0]].to_numpy()) if forwards else disorder
    values = frame[[target, *features]].apply(pd.to_numeric, errors="coerce")
    bad = values.isna().any(axis=1).to_numpy() | ~np.isfinite(values.to_numpy(float)).all(axis=1)
    if bad.any():
        rows = values.index[bad][:5].tolist()  # rows of the file (the time sort keeps the index)
        dated = [c for c in (target, *features) if values[c].isna().all() and date_readings(frame[c].astype(str))]
        hint = (f" {dated[0]!r} holds dates: give it as time, and numbers as the target and features." if dated
                else comma_hint(frame[[target, *features]].to_numpy()[bad]))
        raise ValueError(
            f"{path}: {int(bad.sum())} row(s) have a missing, non-numeric or infinite value in "
            f"{[target, *features]} (first rows {rows}, counted from 0 under the header); clean or drop them.{hint}"
        )
    check_magnitude(values.to_numpy(float), [target, *features], path)
    n_rows = len(frame)
    n_test = int(round(n_rows * test_fraction))
    if n_test < MIN_TEST_POINTS:
        # the smallest fraction (in hundredths) and the fewest rows at this fraction that test enough points
        fraction = next((f / 100 for f in range(1, 51) if int(round(n_rows * f / 100)) >= MIN_TEST_POINTS), None)
        rows = next(n for n in itertools.count(int(MIN_TEST_POINTS / test_fraction) - 2)
                    if int(round(n * test_fraction)) >= MIN_TEST_POINTS)
        # a larger test_fraction helps only where it leaves a training span at least as long as the test span
        fix = (f"a larger test_fraction in a suite file ({dataset_entry('csv', {**given, 'test_fraction': fraction})})"
               if fraction is not None else
               f"a longer series: at least {rows} rows at test_fraction = {test_fraction}, or {2 * MIN_TEST_POINTS} "
               "with test_fraction = 0.5 (as many rows to train on as to test)")
        raise ValueError(
            f"{path}: the test span would hold {n_test} point(s) (test_fraction={test_fraction} of {n_rows} rows); "
            f"pibench needs at least {MIN_TEST_POINTS} test points for a coverage estimate worth reading. Give "
            f"{fix}.")
    # each step's label: its time, else its row of the file (counted from 0 under the header, as errors count)
    labels = _time_labels(frame[time], time_format, key) if time else frame.index.to_numpy()
    return lagged_series_problem(
        f"csv:{path.name}:{target}", values[target].to_numpy(float), lags=lags, n_test=n_test, where=str(path),
        target=target, features=values[features].to_numpy(float) if features else None,
        feature_names=tuple(features), time=labels,
        metadata={"source": str(path), **({"notes": [order_note]} if order_note else {})})
