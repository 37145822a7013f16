"""Loaders, registry, problem validation and protocol / method input checks.

The fesp facts come from the shared data folder's SOURCE.md
(french_electricity_prices/SOURCE.md); the CSV cases are hand-computed. No test
touches the network.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.protocols import run_series, run_set
from pibench.data_loaders.csv_series import csv_problem
from pibench.data_loaders.fesp import FEATURES, fesp_problem
from pibench.data_loaders.paths import DataNotFoundError
from pibench.data_loaders.problems import SeriesProblem, SetData
from pibench.data_loaders.registry import DATASETS, load_dataset, parse_dataset_arg
from pibench.data_loaders.synthetic import ar_problem, seasonal_ar_sets
from pibench.methods.catalog import get_method

# --------------------------------------------------------------------------- fesp

N_DAYS, N_TRAIN_DAYS, N_TEST_DAYS = 1454, 1089, 365


@pytest.fixture(scope="module")
def fesp(shared_data_dir: Path) -> SeriesProblem:
    return fesp_problem(data_dir=shared_data_dir)


def _feature(problem: SeriesProblem, name: str) -> int:
    return problem.feature_names.index(name)


def test_fesp_shapes_and_split(fesp: SeriesProblem) -> None:
    assert fesp.y.shape == (N_DAYS, 24)
    assert fesp.X.shape == (N_DAYS, 24, 57)
    assert fesp.feature_names == tuple(FEATURES) and len(FEATURES) == 57
    assert fesp.test_start == N_TRAIN_DAYS
    assert fesp.n_test == N_TEST_DAYS
    assert fesp.y[fesp.test_start :].size == 8_760
    assert fesp.y[: fesp.test_start].size == 26_136
    assert fesp.groups == tuple(f"h{h:02d}" for h in range(24))
    assert fesp.groups[0] == "h00" and fesp.groups[-1] == "h23"
    # 2016-01-08 .. 2019-12-31; the test span starts on 2019-01-01
    assert fesp.time[0] == "2016-01-08"
    assert fesp.time[-1] == "2019-12-31"
    assert fesp.time[fesp.test_start - 1] == "2018-12-31"
    assert fesp.time[fesp.test_start] == "2019-01-01"


def test_fesp_lag_24_is_previous_day(fesp: SeriesProblem) -> None:
    for h in range(24):
        lag = fesp.X[1:, :, _feature(fesp, f"lag_24_{h}")]  # (days-1, 24 groups)
        # identical on all 24 rows of a day and equal to Spot(d-1, h), exactly
        np.testing.assert_array_equal(lag, np.repeat(fesp.y[:-1, h][:, None], 24, axis=1))


def test_fesp_lag_168_is_one_week_before(fesp: SeriesProblem) -> None:
    for h in range(24):
        lag = fesp.X[7:, :, _feature(fesp, f"lag_168_{h}")]
        np.testing.assert_array_equal(lag, np.repeat(fesp.y[:-7, h][:, None], 24, axis=1))


def test_fesp_hour_and_day_of_week(fesp: SeriesProblem) -> None:
    hour = fesp.X[:, :, _feature(fesp, "hour")]
    np.testing.assert_array_equal(hour, np.broadcast_to(np.arange(24), (N_DAYS, 24)))
    dow = fesp.X[:, :, [_feature(fesp, f"dow_{k}") for k in range(7)]]
    np.testing.assert_array_equal(dow.sum(axis=2), 1.0)
    # dow_k is Python's weekday k (Monday = 0): 2016-01-08 was a Friday
    assert dow[0, 0].argmax() == 4
    weekdays = pd.to_datetime(fesp.time).day_of_week.to_numpy()
    np.testing.assert_array_equal(dow[:, 0].argmax(axis=1), weekdays)


def test_fesp_target_statistics(fesp: SeriesProblem) -> None:
    assert fesp.y.size == 34_896
    assert fesp.y.min() == pytest.approx(-31.82, abs=0.01)
    assert fesp.y.max() == pytest.approx(874.01, abs=0.01)
    assert fesp.y.mean() == pytest.approx(42.896, abs=0.01)
    assert int((fesp.y < 0).sum()) == 44
    # the extremes both fall in the training span (before 2019)
    lo, hi = fesp.train_target_range()
    assert lo == pytest.approx(-31.82, abs=0.01) and hi == pytest.approx(874.01, abs=0.01)


def test_fesp_span_problems_are_all_said_before_the_file_is_read(tmp_path: Path) -> None:
    """A bad date once reached pandas ("Unknown datetime string format, unable to parse: xx"), naming no
    parameter, and a negative test_days went unchecked; now each is named, all at once, with no file at hand."""
    with pytest.raises(ValueError) as info:
        fesp_problem(data_dir=tmp_path, test_start="2019-13-45", test_days=0, end="xx")
    assert all(part in str(info.value) for part in ("test_start='2019-13-45' is not a date", "end='xx' is not a date",
                                                    "test_days=0 must be at least 1"))
    with pytest.raises(ValueError, match="end='2018-06-01' must come after test_start='2019-01-01'"):
        fesp_problem(data_dir=tmp_path, end="2018-06-01")


@pytest.mark.parametrize("test_start, lacking", [("2030-01-01", "test"), ("2000-01-01", "training")])
def test_fesp_test_start_outside_the_file_leaves_no_days(shared_data_dir: Path, test_start: str, lacking: str) -> None:
    with pytest.raises(ValueError, match=f"leaves no {lacking} day: the file's days run from 2016-01-08 to 2019-12-31"):
        fesp_problem(data_dir=shared_data_dir, test_start=test_start)


def test_fesp_test_days_truncates_test_span(shared_data_dir: Path, fesp: SeriesProblem) -> None:
    short = fesp_problem(data_dir=shared_data_dir, test_days=30)
    assert short.y.shape == (N_TRAIN_DAYS + 30, 24)
    assert short.X.shape == (N_TRAIN_DAYS + 30, 24, 57)
    assert short.test_start == N_TRAIN_DAYS
    assert short.n_test == 30
    np.testing.assert_array_equal(short.y, fesp.y[: N_TRAIN_DAYS + 30])
    assert short.time[-1] == "2019-01-30"


def test_fesp_missing_file_says_how_to_fetch(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="pibench data fetch fesp") as info:
        fesp_problem(data_dir=tmp_path)
    assert str(tmp_path) in str(info.value)
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, ValueError)


# ---------------------------------------------------------------------------- csv


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _series_file(path: Path, n: int, header: str = "y") -> Path:
    """A CSV whose target is 0, 1, ..., n-1: every lag and split can be checked by hand."""
    return _write(path, header + "\n" + "\n".join(str(v) for v in range(n)) + "\n")


def test_csv_target_lags_and_split_by_hand(tmp_path: Path) -> None:
    path = _series_file(tmp_path / "s.csv", 400, header="price")
    p = csv_problem(path=path, target="price", lags=2, test_fraction=0.25)
    # rows 2..399 of the file; X[r] = (y_{r-1}, y_{r-2})
    np.testing.assert_array_equal(p.y[:, 0], np.arange(2, 400))
    np.testing.assert_array_equal(p.X[:3, 0], [[1, 0], [2, 1], [3, 2]])
    assert p.feature_names == ("lag_1", "lag_2") and p.groups == ("price",)
    # the test span is the last round(0.25 * 400) = 100 rows of the file: targets 300..399
    assert p.n_test == 100 and p.y[p.test_start, 0] == 300

    half = csv_problem(path=path, target="price", lags=2, test_fraction=0.5)
    assert half.n_test == 200 and half.y[half.test_start, 0] == 200


def test_csv_default_is_five_lags(tmp_path: Path) -> None:
    p = csv_problem(path=_series_file(tmp_path / "s.csv", 400), target="y")
    assert p.X.shape == (395, 1, 5)
    np.testing.assert_array_equal(p.X[0, 0], [4, 3, 2, 1, 0])
    np.testing.assert_array_equal(p.y[:, 0], np.arange(5, 400))
    assert p.n_test == 100 and p.y[p.test_start, 0] == 300  # counted on the file's rows, not after the lags


def _shuffled_days(n: int) -> list[tuple[str, int, int]]:
    """(day, y, f) rows, y = day number, f = 10 y, in a shuffled file order."""
    days = pd.date_range("2020-01-01", periods=n).strftime("%Y-%m-%d")
    order = np.random.default_rng(0).permutation(n)
    return [(days[i], i + 1, 10 * (i + 1)) for i in order]


def test_csv_sorts_by_date_and_combines_features_with_lags(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", "f,day,y\n" + "".join(f"{f},{d},{y}\n" for d, y, f in _shuffled_days(400)))

    p = csv_problem(path=path, target="y", features=["f"], time="day")  # features and the default 5 lags
    assert p.feature_names == ("f", "lag_1", "lag_2", "lag_3", "lag_4", "lag_5")
    np.testing.assert_array_equal(p.y[:, 0], np.arange(6, 401))
    np.testing.assert_array_equal(p.X[0, 0], [60, 5, 4, 3, 2, 1])
    assert p.time[0] == "2020-01-06" and p.n_test == 100

    only = csv_problem(path=path, target="y", features=["f"], time="day", lags=0)
    assert only.feature_names == ("f",) and only.X.shape == (400, 1, 1)
    np.testing.assert_array_equal(only.X[:3, 0, 0], [10, 20, 30])
    assert list(only.time[:2]) == ["2020-01-01", "2020-01-02"]


def test_csv_time_that_skips_steps_gets_a_note_and_weekends_and_months_do_not(tmp_path: Path) -> None:
    """A daily series missing 30 days ran with no word, where csv_sets notes the same gap; trading days (Friday
    to Monday) and months are even."""
    path = tmp_path / "gaps.csv"
    days = pd.date_range("2021-01-01", periods=600, freq="D")
    frame = pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "y": np.random.default_rng(0).normal(size=600)})
    frame.to_csv(path, index=False)
    assert "notes" not in csv_problem(path=str(path), target="y", time="date").metadata
    frame.drop(index=range(50, 80)).sample(frac=1, random_state=1).to_csv(path, index=False)  # shuffled too
    (note,) = csv_problem(path=str(path), target="y", time="date").metadata["notes"]
    assert note.startswith("the column 'date' skips steps 1 time(s) (first 2021-02-19 then 2021-03-22, where "
                           "the usual step is 1 day(s)): the rows are used as consecutive steps")
    frame.drop(index=range(50, 80)).to_csv(path, index=False)  # without time: its dates down the file say the same
    assert csv_problem(path=str(path), target="y").metadata["notes"] == [note]
    trading = pd.bdate_range("2021-01-04", periods=600)
    months = pd.date_range("1960-01-01", periods=600, freq="MS")
    for dates in (trading.strftime("%Y-%m-%d"), months.strftime("%Y-%m-%d"),
                  (trading + pd.Timedelta(hours=16)).tz_localize("America/New_York").strftime("%Y-%m-%d %H:%M:%S%z"),
                  trading.tz_localize("Europe/Paris").strftime("%Y-%m-%d %H:%M:%S%z")):  # Paris' midnight: UTC's 23:00
        frame.assign(date=dates).to_csv(path, index=False)
        assert "notes" not in csv_problem(path=str(path), target="y", time="date").metadata, dates[0]
    frame.assign(date=np.r_[np.arange(100), np.arange(103, 603)]).to_csv(path, index=False)  # step numbers
    (note,) = csv_problem(path=str(path), target="y", time="date").metadata["notes"]
    assert "(first 99 then 103, where the usual step is 1)" in note


@pytest.mark.parametrize("zone", [None, "Europe/Paris", "America/New_York", "Asia/Tokyo", "Pacific/Auckland",
                                  "Pacific/Tongatapu", "Pacific/Honolulu"])
def test_every_missing_day_skips_and_a_weekend_of_working_days_does_not(zone) -> None:
    """A day missing from a daily series on a Monday, Tuesday, Saturday or Sunday skipped nothing (57 gaps were
    said 27 times): a day read -12 hours before its date ran Monday to Wednesday as Sunday to Tuesday, one
    working day. Now each missing day of the week skips, in a file of every day and (weekdays) of working
    days, at midnight in any zone; a weekend between working days does not."""
    from pibench.data_loaders.step_order import skipped, step_numbers, usual_step

    for calendar in (pd.date_range("2021-01-04", periods=70), pd.bdate_range("2021-01-04", periods=70)):
        for drop in range(21, 28):  # seven days in a row: each day of the week, or Monday to Tuesday next week
            days = calendar.delete(drop)
            steps = step_numbers(pd.Series(days.tz_localize(zone) if zone else days))
            gaps = skipped(steps, usual_step(np.diff(steps)))
            assert gaps.sum() == 1, (calendar.freqstr, calendar[drop].day_name(), zone)  # its weekends: none


def test_a_special_saturday_session_leaves_the_weekends_of_working_days_alone() -> None:
    """One Saturday row in two years of working days made every weekend a gap (104 notes): a file with at most
    2% of its days on a weekend is one of working days."""
    from pibench.data_loaders.step_order import skipped, step_numbers, usual_step

    days = pd.bdate_range("2023-01-02", "2024-12-31")
    for calendar, expected in ((days.append(pd.DatetimeIndex(["2024-02-03"])).sort_values(), 0),
                               (days.delete(10), 1)):  # a holiday is a missing working day
        steps = step_numbers(pd.Series(calendar))
        assert skipped(steps, usual_step(np.diff(steps))).sum() == expected


def test_csv_integer_time_stays_as_it_is(tmp_path: Path) -> None:
    steps = np.random.default_rng(1).permutation(400) * 3 + 7  # integers, shuffled, not a date
    path = _write(tmp_path / "i.csv", "step,y\n" + "".join(f"{t},{t}\n" for t in steps))
    p = csv_problem(path=path, target="y", time="step", lags=1)
    np.testing.assert_array_equal(p.y[:, 0], np.sort(steps)[1:])  # numeric order
    assert p.time.dtype == np.int64 and list(p.time[:2]) == [10, 13]  # step numbers, not nanoseconds since 1970


@pytest.mark.parametrize("column, message", [
    (["W1", "W2", "W3"], "neither a number nor a date"),
    (["2020-01-01", "2020-01-01", "2020-01-02"],
     r"repeats '2020-01-01' \(rows 0 and 1, counted from 0 under the header\); a series has one row per step: drop "
     r"or fix one of them\.$"),
    (["2020-01-01", "", "2020-01-03"], "empty in row"),
])
def test_csv_time_that_cannot_order_the_rows_is_an_error(tmp_path: Path, column, message) -> None:
    times = column + [f"2021-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29)][:397]
    path = _write(tmp_path / "w.csv", "when,y\n" + "".join(f"{t},{i}\n" for i, t in enumerate(times)))
    with pytest.raises(ValueError, match=message):
        csv_problem(path=path, target="y", time="when")


def test_csv_hours_of_local_clock_time_repeated_in_autumn_are_refused_with_how_to_write_them(tmp_path: Path) -> None:
    """Hourly local times without an offset repeat 02:00 when the clocks go back: the error said only that the
    time repeats; it names the rows and the fix (offsets or UTC)."""
    hours = pd.date_range("2022-10-10", periods=720, freq="h", tz="Europe/Berlin")
    path = tmp_path / "local.csv"
    pd.DataFrame({"time": hours.strftime("%Y-%m-%d %H:%M"), "y": np.arange(720.0)}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"repeats '2022-10-30 02:00' \(rows 482 and 483, .*daylight-saving.*"
                                         r"2022-10-30T02:00\+01:00\) or in UTC\."):
        csv_problem(path=str(path), target="y", time="time")
    far = pd.date_range("2022-01-01", periods=720, freq="h").strftime("%Y-%m-%d %H:%M").to_numpy().copy()
    far[600] = far[3]  # a repeat far from its first, in January: a typo, no clock change
    pd.DataFrame({"time": far, "y": np.arange(720.0)}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"\(rows 3 and 600, counted from 0 under the header\); a series has one row "
                                         r"per step: drop or fix one of them\.$"):
        csv_problem(path=str(path), target="y", time="time")
    pd.DataFrame({"time": hours.strftime("%Y-%m-%dT%H:%M%z"), "y": np.arange(720.0)}).to_csv(path, index=False)
    assert len(csv_problem(path=str(path), target="y", time="time").time) == 715  # with offsets: each hour once


def test_csv_gap_notes_name_the_dates_as_the_file_wrote_them(tmp_path: Path) -> None:
    """Local midnights written with their offset were named in UTC, the day before and without a zone."""
    days = pd.date_range("2022-01-01", periods=600, freq="D", tz="Europe/Berlin")
    path = tmp_path / "gap.csv"
    pd.DataFrame({"date": days.strftime("%Y-%m-%dT%H:%M:%S%z"), "y": np.random.default_rng(0).normal(size=600)}
                 ).drop(index=[300]).to_csv(path, index=False)
    for time in ("date", None):  # given as time, or read down the file
        (note,) = csv_problem(path=str(path), target="y", time=time).metadata["notes"]
        assert "(first 2022-10-27T00:00:00+0200 then 2022-10-29T00:00:00+0200, where the usual step is 1 day(s))" \
            in note, note


def test_a_column_named_by_its_first_word_is_suggested(tmp_path: Path) -> None:
    path = tmp_path / "named.csv"
    pd.DataFrame({"Date (local)": pd.date_range("2022-01-01", periods=400).strftime("%Y-%m-%d"),
                  "Sales €/day": np.arange(400.0)}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"Did you mean 'Date \(local\)'\?"):
        csv_problem(path=str(path), target="Sales €/day", time="date")
    with pytest.raises(ValueError, match="Did you mean 'Sales €/day'"):
        csv_problem(path=str(path), target="sales")


def _days_file(tmp_path: Path, fmt: str, start: str = "2020-12-20") -> Path:
    """400 days from ``start`` written in ``fmt``, in a shuffled file order; y = the day's number (1..400)."""
    days = pd.date_range(start, periods=400)
    order = np.random.default_rng(2).permutation(400)
    return _write(tmp_path / "d.csv", "date,y\n" + "".join(f"{days[i].strftime(fmt)},{i + 1}\n" for i in order))


def test_csv_day_first_dates_are_read_day_first_for_every_row(tmp_path: Path) -> None:
    """31/12/2020 can only be day first: the whole column reads with that one format (read value by value,
    01/02/2021 became 2 January, 13/01/2021 13 January, and the rows went out of order)."""
    p = csv_problem(path=_days_file(tmp_path, "%d/%m/%Y"), target="y", time="date", lags=1)
    np.testing.assert_array_equal(p.y[:, 0], np.arange(2, 401))
    assert list(p.time[10:13]) == ["31/12/2020", "01/01/2021", "02/01/2021"]  # after the first row (its lag)


def test_csv_dates_that_read_both_ways_ask_for_their_format(tmp_path: Path) -> None:
    path = _days_file(tmp_path, "%d/%m/%Y", start="2021-01-01")  # of these 400 days, those with a day <= 12
    days = pd.read_csv(path)["date"]
    ambiguous = days[pd.to_datetime(days, format="%d/%m/%Y").dt.day <= 12]
    assert len(ambiguous) > 150
    path = _write(tmp_path / "a.csv", "date,y\n" + "".join(f"{d},{i}\n" for i, d in enumerate(ambiguous)))
    with pytest.raises(ValueError, match=r"read both month first and day first .*time_format = \"%d/%m/%Y\""):
        csv_problem(path=path, target="y", time="date", lags=1, test_fraction=0.7)
    p = csv_problem(path=path, target="y", time="date", time_format="%d/%m/%Y", lags=1, test_fraction=0.7)
    order = np.argsort(pd.to_datetime(ambiguous, format="%d/%m/%Y").to_numpy())
    np.testing.assert_array_equal(p.y[:, 0], order[1:])  # y = the file row of each date, in date order


def test_csv_dates_as_the_target_say_to_give_them_as_time(tmp_path: Path) -> None:
    path = _days_file(tmp_path, "%Y-%m-%d")
    with pytest.raises(ValueError, match=r"first rows \[0, 1, 2, 3, 4\], counted from 0 under the header\); clean or "
                                         r"drop them. 'date' holds dates: "
                                         "give it as time"):
        csv_problem(path=path, target="date")


def test_csv_rows_newest_first_without_time_are_an_error(tmp_path: Path) -> None:
    days = pd.date_range("2020-01-01", periods=400).strftime("%Y-%m-%d")[::-1]  # a download, newest first
    path = _write(tmp_path / "n.csv", "date,y\n" + "".join(f"{d},{400 - i}\n" for i, d in enumerate(days)))
    with pytest.raises(ValueError, match=r"'date' holds dates newest first \('2021-02-03' in the first row, "
                                         r"'2020-01-01' in the last\).*with time = 'date' in a suite file "
                                         r'\(\[\[datasets\]\] name = "csv" params = \{ path = ".*n.csv", target = "y", '
                                         r'time = "date" \}'):
        csv_problem(path=path, target="y")
    p = csv_problem(path=path, target="y", time="date", lags=1)
    np.testing.assert_array_equal(p.y[:, 0], np.arange(2, 401))
    oldest_first = _write(tmp_path / "o.csv", "date,y\n" + "".join(f"{d},{i}\n" for i, d in enumerate(days[::-1])))
    assert csv_problem(path=oldest_first, target="y", lags=1).n_test == 100
    # a year of whole numbers counting down the file ran backwards without a word (its test span the oldest years);
    # a note, not an error: a column named t may count down in a file oldest first (days to expiry; review)
    years = _write(tmp_path / "years.csv", "Year,y\n" + "".join(f"{2023 - i},{i % 5}\n" for i in range(400)))
    (note,) = csv_problem(path=years, target="y").metadata["notes"]
    assert note.startswith("the column 'Year' counts down the file (2023 in the first row, 1624 in the last)") and \
        "order the rows by it with time = 'Year', or reverse the file" in note
    assert "notes" not in csv_problem(path=years, target="y", time="Year", lags=1).metadata
    countdown = _write(tmp_path / "c.csv", "days_left,y\n" + "".join(f"{400 - i},{i % 5}\n" for i in range(400)))
    assert "notes" not in csv_problem(path=countdown, target="y", lags=1).metadata  # not named as times: no note


def test_csv_rows_out_of_date_order_without_time_are_noted(tmp_path: Path) -> None:
    """Shuffled rows, or two rows swapped, ran in file order without a word (coverage 88.0 where the series in
    order gives 86.4): a column of distinct dates out of order is noted. A column that repeats (an hour of the
    day, a month's name: a cycle, not the rows' time) is no such column, and loads without a note (an error
    there stopped valid files, review)."""
    days = list(pd.date_range("2020-01-01", periods=400).strftime("%Y-%m-%d"))
    days[100], days[101] = days[101], days[100]
    path = _write(tmp_path / "s.csv", "date,y\n" + "".join(f"{d},{i % 7}\n" for i, d in enumerate(days)))
    (note,) = csv_problem(path=path, target="y").metadata["notes"]
    assert re.match(r"the column 'date' holds distinct dates out of order \(row 101's '2020-04-10' comes after "
                    r"'2020-04-11'.*time = 'date'", note), note
    assert "notes" not in csv_problem(path=path, target="y", time="date", lags=1).metadata
    hours = [f"{h:02d}:00" for h in range(24)] * 17
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] * 34
    cycles = _write(tmp_path / "c.csv", "hour,month,y\n" + "".join(f"{h},{m},{i % 5}\n" for i, (h, m) in
                                                                   enumerate(zip(hours, months))))
    assert "notes" not in csv_problem(path=cycles, target="y", lags=1).metadata


def test_csv_rows_shuffled_without_time_are_refused_with_the_entry_that_orders_them(tmp_path: Path) -> None:
    """Rows shuffled ran in file order with a note while the same file newest first was refused (dogfood): distinct
    dates that go back at more than 5% of the steps, where no other column of dates runs forwards, are an error;
    beside a column of dates that runs forwards (the rows' time) or of numbers counting up (a step), they are some
    other date, and the file loads."""
    days = pd.Series(pd.date_range("2020-01-01", periods=400).strftime("%Y-%m-%d"))
    shuffled = days.sample(frac=1, random_state=0).tolist()
    path = _write(tmp_path / "s.csv", "date,y\n" + "".join(f"{d},{i % 7}\n" for i, d in enumerate(shuffled)))
    with pytest.raises(ValueError, match=r"the column 'date' holds distinct dates that go back at \d+ of the 399 "
                                         r"steps down the file \(shuffled rows\?\).*time = 'date'"):
        csv_problem(path=path, target="y")
    assert len(csv_problem(path=path, target="y", time="date", lags=1).y) == 399  # ordered by time: runs
    other = _write(tmp_path / "o.csv", "day,signed,y\n" + "".join(f"{d},{e},{i % 7}\n" for i, (d, e) in
                                                                  enumerate(zip(days, shuffled))))
    assert "notes" not in csv_problem(path=other, target="y").metadata  # 'day' orders the rows: 'signed' is data
    stepped = _write(tmp_path / "n.csv", "step,revised,y\n" + "".join(f"{i + 1},{e},{i % 7}\n" for i, e in
                                                                    enumerate(shuffled)))
    (note,) = csv_problem(path=stepped, target="y").metadata["notes"]  # a count of steps orders them: a note
    assert note.startswith("the column 'revised' holds distinct dates out of order")


def _long_file(path: Path, order: str) -> Path:
    """Two series of 400 days in long format (a column of dates, one naming the series, the value): ``stacked``
    (north's rows, then south's), ``interleaved`` (by date, then region) or ``numbered`` (stacked, the series
    named by a number). north's value on day i is i, south's 1000 + i: a row's series is told by its value."""
    days = pd.date_range("2020-01-01", periods=400).strftime("%Y-%m-%d")
    rows = [(d, region, i + 1000 * k) for k, region in enumerate(["north", "south"]) for i, d in enumerate(days)]
    if order == "interleaved":
        rows.sort()
    if order == "numbered":
        rows = [(d, 1 + (region == "south"), v) for d, region, v in rows]
    return _write(path, "date,region,y\n" + "".join(f"{d},{r},{v}\n" for d, r, v in rows))


@pytest.mark.parametrize("order", ["stacked", "interleaved"])
def test_csv_in_long_format_is_told_and_where_keeps_one_series(tmp_path: Path, order) -> None:
    """A file of several series in long format ran silently as one series (CSV user): north's days, then
    south's, or the two alternating day by day. Given as time, the repeated dates are an error naming the
    series' column and the fix; without time, a note (the same columns may be the hours of one series). The
    fix keeps one series: its values, in its own time order."""
    path = _long_file(tmp_path / "long.csv", order)
    told = (r"the column 'date' repeats its dates, once for each value of 'region' \(2 values: 'north', 'south'\): "
            r"if the file holds 2 series in long format, keep one with where, e\.g\. in a suite file "
            r'\(\[\[datasets\]\] name = "csv" params = \{ path = ".*long.csv", target = "y", time = "date", lags = 1, '
            r'where = \{ region = "north" \} \}\); if they are steps within each date, give as time a column that '
            r"tells every row apart")
    with pytest.raises(ValueError, match=told + "; a series has one row per step."):
        csv_problem(path=path, target="y", time="date", lags=1)
    (note,) = csv_problem(path=path, target="y", lags=1).metadata["notes"]
    assert re.fullmatch(told + "; without time the rows are taken in file order as one series", note), note
    for time in (None, "date"):
        for region, first in [("north", 0), ("south", 1000)]:
            p = csv_problem(path=path, target="y", time=time, lags=1, where={"region": region})
            np.testing.assert_array_equal(p.y[:, 0], first + np.arange(1, 400))  # one series, in order
            assert "notes" not in p.metadata


def test_csv_single_series_with_repeated_dates_are_not_taken_for_several(tmp_path: Path) -> None:
    """The review's files of one series: a unique date beside a column of week starts repeated per weekday
    name, and half-hourly local times repeating an hour where the clock goes back. Neither is told as several
    series (the first was refused as "7 series"; the second noted as stacked)."""
    days = pd.date_range("2024-01-01", periods=420)
    weekly = _write(tmp_path / "w.csv", "date,week,weekday,y\n" + "".join(
        f"{d:%Y-%m-%d},{d - pd.Timedelta(days=d.weekday()):%Y-%m-%d},{d:%A},{i % 7}\n" for i, d in enumerate(days)))
    assert "notes" not in csv_problem(path=weekly, target="y").metadata
    stamps = [f"{t:%Y-%m-%d %H:%M}" for t in pd.date_range("2023-11-01", periods=600, freq="30min")]
    local = stamps[:200] + stamps[198:200] + stamps[200:]  # 01:00 and 01:30 twice: the clock set back an hour
    dst = _write(tmp_path / "dst.csv", "local,y\n" + "".join(f"{t},{i % 5}\n" for i, t in enumerate(local)))
    assert "notes" not in csv_problem(path=dst, target="y").metadata


def test_csv_where_is_checked_against_the_file(tmp_path: Path) -> None:
    """``where`` names a column of the file and a value it holds; numbers are compared as numbers."""
    path = _long_file(tmp_path / "long.csv", "stacked")
    with pytest.raises(ValueError, match=r"no column\(s\) \['regoin'\].*Did you mean 'region'\?"):
        csv_problem(path=path, target="y", where={"regoin": "north"})
    with pytest.raises(ValueError, match=r"where = \{ region = 'nort' \} keeps no row: the column 'region' holds "
                                         r"'north', 'south'. Did you mean 'north'\?"):
        csv_problem(path=path, target="y", where={"region": "nort"})
    with pytest.raises(ValueError, match=r"no row holds all of where"):
        csv_problem(path=path, target="y", where={"region": "north", "y": 1000})
    numbered = _long_file(tmp_path / "numbered.csv", "numbered")
    p = csv_problem(path=numbered, target="y", lags=1, where={"region": 2})
    np.testing.assert_array_equal(p.y[:, 0], 1000 + np.arange(1, 400))


def test_csv_notes_count_the_files_rows_after_where(tmp_path: Path) -> None:
    """With where, a note named the row of the rows kept (row 4) where the file's row was 9 (review)."""
    days = list(pd.date_range("2020-01-01", periods=400).strftime("%Y-%m-%d"))
    days[3], days[4] = days[4], days[3]  # north's days 3 and 4 swapped
    rows = [(d, region, i) for i, d in enumerate(days) for region in ("north", "south")]
    path = _write(tmp_path / "l.csv", "date,region,y\n" + "".join(f"{d},{r},{v}\n" for d, r, v in rows))
    (note,) = csv_problem(path=path, target="y", where={"region": "north"}).metadata["notes"]
    assert "row 8's '2020-01-04' comes after '2020-01-05'" in note  # file row 8: north's fifth row


def test_csv_stacked_series_named_by_numbers_are_noted(tmp_path: Path) -> None:
    """Series stacked one after another, named by a number (no column of text tells them apart): full dates that
    repeat and go back down the file are noted. Hours within a date, the date repeating in order, are one
    series: no note."""
    (note,) = csv_problem(path=_long_file(tmp_path / "n.csv", "numbered"), target="y").metadata["notes"]
    assert note.startswith("the column 'date' repeats dates and goes back 1 time(s) down the file (row 400's "
                           "'2020-01-01' comes after '2021-02-03'") and "where = { column = value }" in note
    days = pd.date_range("2020-01-01", periods=20).strftime("%Y-%m-%d")
    hourly = _write(tmp_path / "h.csv", "date,hour,y\n" + "".join(f"{d},{h:02d}:00,{i}\n" for i, (d, h) in
                                                                   enumerate((d, h) for d in days for h in range(24))))
    assert "notes" not in csv_problem(path=hourly, target="y").metadata


@pytest.mark.parametrize("dates, time_format, message", [
    (["2021-01-01", "2 Jan 2021"], None, "written in more than one format"),
    (["01/02/2021", "2021-01-03"], "%d/%m/%Y", "time_format '%d/%m/%Y' does not read"),
])
def test_csv_dates_in_several_formats_are_an_error(tmp_path: Path, dates, time_format, message) -> None:
    times = [f"2020-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29)][:398] + dates
    if time_format:
        times = [pd.Timestamp(t).strftime(time_format) for t in times[:-1]] + times[-1:]
    path = _write(tmp_path / "m.csv", "when,y\n" + "".join(f"{t},{i}\n" for i, t in enumerate(times)))
    with pytest.raises(ValueError, match=message):
        csv_problem(path=path, target="y", time="when", time_format=time_format)


@pytest.mark.parametrize(
    "cell, bad_row",
    [("", 3), ("NaN", 3), ("abc", 4), ("inf", 5), ("-inf", 2)],
    ids=["missing", "nan", "non-numeric", "inf", "-inf"],
)
def test_csv_bad_target_values_name_the_row(tmp_path: Path, cell: str, bad_row: int) -> None:
    target = [str(v) for v in range(10)]
    target[bad_row] = cell
    path = _write(tmp_path / "bad.csv", "x,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate(target)))
    with pytest.raises(ValueError, match=rf"1 row\(s\).*first rows \[{bad_row}\]"):
        csv_problem(path=path, target="y", features=["x"])


def test_csv_bad_feature_value_names_the_row(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.csv", "x,y\n" + "".join(
        f"{'oops' if i in (6, 8) else i},{i}\n" for i in range(10)
    ))
    with pytest.raises(ValueError, match=r"2 row\(s\).*\['y', 'x'\].*first rows \[6, 8\]"):
        csv_problem(path=path, target="y", features=["x"])


def test_csv_bad_value_row_refers_to_file_when_sorted(tmp_path: Path) -> None:
    rows = _shuffled_days(400)
    victim = 2  # a row of the file; once sorted it sits elsewhere
    path = _write(tmp_path / "shuffled.csv", "t,y\n" + "".join(
        f"{d},{'' if i == victim else y}\n" for i, (d, y, _) in enumerate(rows)))
    with pytest.raises(ValueError, match=rf"first rows \[{victim}\]"):
        csv_problem(path=path, target="y", time="t", lags=1)


def test_csv_missing_column_lists_file_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.csv", "when,price,load\n2020-01-01,1,2\n")
    with pytest.raises(ValueError, match=re.escape("['when', 'price', 'load']")) as info:
        csv_problem(path=path, target="price", features=["temperature"])
    assert "temperature" in str(info.value)
    with pytest.raises(ValueError, match=re.escape("no column(s) ['Price']")):
        csv_problem(path=path, target="Price")
    with pytest.raises(ValueError, match=re.escape("no column(s) ['date']")):
        csv_problem(path=path, target="price", time="date")


def test_csv_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.csv"
    with pytest.raises(ValueError, match="does not exist"):
        csv_problem(path=missing, target="y")
    with pytest.raises(ValueError, match="does not exist"):
        csv_problem(path=tmp_path, target="y")  # a directory is not a file


def test_csv_too_few_rows_bad_fraction_and_no_inputs(tmp_path: Path) -> None:
    path = _series_file(tmp_path / "s.csv", 400)
    with pytest.raises(ValueError, match="test_fraction"):
        csv_problem(path=path, target="y", lags=1, test_fraction=1.0)
    with pytest.raises(ValueError, match="lags = 0 and no features"):
        csv_problem(path=path, target="y", lags=0)
    with pytest.raises(ValueError, match="whole number >= 0"):
        csv_problem(path=path, target="y", lags=-1)
    short = _series_file(tmp_path / "short.csv", 40)
    with pytest.raises(ValueError, match=r"test span would hold 10 point\(s\).*at least 100"):
        csv_problem(path=short, target="y")  # 25% of 40 rows
    with pytest.raises(ValueError, match="training row"):
        csv_problem(path=path, target="y", lags=5, test_fraction=0.99)


# ----------------------------------------------------------------------- registry


def test_parse_dataset_arg() -> None:
    assert parse_dataset_arg("csv:/a/b.csv:price") == ("csv", {"path": "/a/b.csv", "target": "price"})
    assert parse_dataset_arg("csv:C:/data/b.csv:price") == ("csv", {"path": "C:/data/b.csv", "target": "price"})
    assert parse_dataset_arg("csv:/a/x:y/b.csv:p") == ("csv", {"path": "/a/x:y/b.csv", "target": "p"})
    assert parse_dataset_arg("ar") == ("ar", {})
    assert parse_dataset_arg("fesp") == ("fesp", {})
    for bad in ("csv:price", "csv::price", "csv:/a/b.csv:"):
        with pytest.raises(ValueError, match="csv:PATH:TARGET"):
            parse_dataset_arg(bad)


def test_parse_dataset_arg_unknown_lists_datasets() -> None:
    with pytest.raises(ValueError, match="unknown dataset 'nope'") as info:
        parse_dataset_arg("nope")
    message = str(info.value)
    for name in DATASETS:
        assert name in message
    assert "ar, nlar, expar, regime, seasonal_sets, fesp, csv" in message


def test_load_dataset_unknown_parameter() -> None:
    with pytest.raises(ValueError, match=r"dataset 'ar' has no parameter\(s\) \['bogus'\]") as info:
        load_dataset("ar", {"bogus": 1})
    assert "n_test" in str(info.value)
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("nope", {})


@pytest.mark.parametrize("name", ["ar", "nlar", "expar", "regime"])
@pytest.mark.parametrize("key", ["n_train", "n_test"])
def test_a_synthetic_span_below_one_is_named(name: str, key: str) -> None:
    """n_train = -3 said "n_test=1000 must lie in [1, 996]": the blame fell on the span the user left alone."""
    with pytest.raises(ValueError, match=f"^{key}=-3 must be at least 1"):
        load_dataset(name, {key: -3})


def test_load_dataset_is_deterministic_in_seed() -> None:
    params = {"n_test": 10, "n_train": 50}
    a = load_dataset("ar", params, seed=3)
    b = load_dataset("ar", params, seed=3)
    c = load_dataset("ar", params, seed=4)
    assert a.y.shape == (60, 1) and a.test_start == 50 and a.n_test == 10
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.y, c.y)
    # the seed reaches the generator: same as calling it directly
    np.testing.assert_array_equal(a.y, ar_problem(n_train=50, n_test=10, seed=3).y)
    # an explicit seed parameter wins over the runner's seed
    np.testing.assert_array_equal(load_dataset("ar", {**params, "seed": 3}, seed=99).y, a.y)


def test_load_dataset_passes_data_dir(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="pibench data fetch fesp") as info:
        load_dataset("fesp", {"test_days": 5}, data_dir=tmp_path)
    assert str(tmp_path) in str(info.value)


def test_load_dataset_csv(tmp_path: Path) -> None:
    path = _series_file(tmp_path / "s.csv", 400)
    name, params = parse_dataset_arg(f"csv:{path}:y")
    p = load_dataset(name, {**params, "lags": 2}, seed=7)
    assert p.y.shape == (398, 1) and p.X.shape == (398, 1, 2)
    assert p.name == "csv:s.csv:y"


# ---------------------------------------------------------- problem validation


def _series(n: int = 10, G: int = 2, p: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, G)), rng.standard_normal((n, G, p))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_series_problem_rejects_non_finite_y(bad: float) -> None:
    y, X = _series()
    y[4, 1] = bad
    kind = "NaN" if np.isnan(bad) else "inf"
    with pytest.raises(ValueError,
                       match=rf"demo: target y has 1 non-finite value\(s\) \({kind} first at index \(4, 1\)\)"):
        SeriesProblem("demo", y, X, test_start=5)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_series_problem_rejects_non_finite_X(bad: float) -> None:
    y, X = _series()
    X[2, 0, 1] = bad
    X[7, 1, 2] = bad
    with pytest.raises(ValueError, match=r"demo: features X has 2 non-finite value\(s\).*index \(2, 0, 1\)"):
        SeriesProblem("demo", y, X, test_start=5)


@pytest.mark.parametrize(
    "X_shape", [(11, 2, 3), (9, 2, 3), (10, 3, 3), (10, 1, 3)], ids=["n+1", "n-1", "G+1", "G-1"]
)
def test_series_problem_rejects_mismatched_X(X_shape: tuple[int, int, int]) -> None:
    y, _ = _series()
    X = np.zeros(X_shape)
    with pytest.raises(ValueError, match=re.escape(f"X has shape {X_shape} but y has (10, 2)")):
        SeriesProblem("demo", y, X, test_start=5)


@pytest.mark.parametrize("test_start", [0, 10, -1, 11])
def test_series_problem_rejects_empty_span(test_start: int) -> None:
    y, X = _series()
    with pytest.raises(ValueError, match=f"test_start={test_start} must lie strictly inside the 10 steps"):
        SeriesProblem("demo", y, X, test_start=test_start)


def test_series_problem_accepts_valid_and_promotes_shapes() -> None:
    y, X = _series()
    p = SeriesProblem("demo", y, X, test_start=1)
    assert (p.n_steps, p.n_groups, p.n_test) == (10, 2, 9)
    assert p.groups == ("0", "1")
    single = SeriesProblem("one", np.arange(6.0), np.arange(12.0).reshape(6, 2), test_start=5)
    assert single.y.shape == (6, 1) and single.X.shape == (6, 1, 2)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_set_data_rejects_non_finite(bad: float) -> None:
    x = np.zeros((5, 4, 2))
    y = np.zeros((5, 2))
    x_bad = x.copy()
    x_bad[1, 2, 0] = bad  # one feature of a step: not padding
    with pytest.raises(ValueError, match=r"set inputs x \(outside the NaN padding\) has 1 non-finite"):
        SetData(x_bad, y)
    y_bad = y.copy()
    y_bad[3, 1] = bad
    with pytest.raises(ValueError, match=r"set targets y has 1 non-finite.*index \(3, 1\)"):
        SetData(x, y_bad)


def test_set_data_takes_nan_padding_at_the_end_only() -> None:
    x = np.arange(20.0).reshape(5, 4, 1)
    x[1, 2:] = np.nan  # sequence 1 has 2 observed steps
    data = SetData(x, np.zeros((5, 2)))
    assert data.lengths.tolist() == [4, 2, 4, 4, 4]
    x[3, 1] = np.nan  # a gap before an observed step
    with pytest.raises(ValueError, match="row 3 has NaN padding before an observed step"):
        SetData(x, np.zeros((5, 2)))
    x[3, 1] = 0.0
    x[4, :] = np.nan  # nothing observed
    with pytest.raises(ValueError, match="row 4"):
        SetData(x, np.zeros((5, 2)))


def test_set_data_rejects_mismatched_n() -> None:
    with pytest.raises(ValueError, match=re.escape("got x(5, 4, 1), y(4, 2)")):
        SetData(np.zeros((5, 4, 1)), np.zeros((4, 2)))


# --------------------------------------------------------- protocol validation


@pytest.fixture(scope="module")
def ar_small() -> SeriesProblem:
    return ar_problem(n_train=100, n_test=20, seed=1)


def _autoreg():
    return get_method("autoreg")(lags=1)


def test_run_series_window_too_long(ar_small: SeriesProblem) -> None:
    with pytest.raises(ValueError, match="too short") as info:
        run_series(ar_small, _autoreg(), window=101)
    assert "window=101" in str(info.value) and "100 training steps" in str(info.value)
    with pytest.raises(ValueError, match="window=0"):
        run_series(ar_small, _autoreg(), window=0)


@pytest.mark.parametrize("retrain_every", [0, -1])
def test_run_series_retrain_every_must_be_positive(ar_small: SeriesProblem, retrain_every: int) -> None:
    with pytest.raises(ValueError, match=f"retrain_every={retrain_every} must be >= 1"):
        run_series(ar_small, _autoreg(), window=50, retrain_every=retrain_every)


def test_run_series_bad_kind(ar_small: SeriesProblem) -> None:
    with pytest.raises(ValueError, match="kind='batch'"):
        run_series(ar_small, _autoreg(), kind="batch")


def test_run_series_accepts_full_window(ar_small: SeriesProblem) -> None:
    out = run_series(ar_small, _autoreg(), window=100, retrain_every=10, test_steps=5)
    assert out.lower.shape == (5, 1) and out.n_fits == 1


def test_series_method_on_set_problem() -> None:
    sets = seasonal_ar_sets(n_train=20, n_calibration=10, n_test=10)
    with pytest.raises(ValueError, match=r"handles series problems.*'seasonal_ar' is a set problem"):
        run_set(sets, _autoreg())


# ------------------------------------------------------------- alpha validation


@pytest.mark.parametrize("alpha", [1.5, 0.0, 1.0, -0.1])
def test_aci_alpha_outside_unit_interval(ar_small: SeriesProblem, alpha: float) -> None:
    method = get_method("aci")(alpha=alpha, base="linear")
    with pytest.raises(ValueError, match=re.escape("outside (0, 1)")):
        method.fit(ar_small.window(0, 100))


@pytest.mark.parametrize("alpha", [1.5, 0.0])
def test_autoreg_alpha_outside_unit_interval(ar_small: SeriesProblem, alpha: float) -> None:
    with pytest.raises(ValueError, match=re.escape("outside (0, 1)")):
        get_method("autoreg")(alpha=alpha).fit(ar_small.window(0, 100))


# --------------------------------------------------------------- method names


def test_unknown_method_lists_available() -> None:
    with pytest.raises(ValueError, match="unknown method 'nope'") as info:
        get_method("nope")
    message = str(info.value)
    assert "aci" in message and "autoreg" in message
    assert get_method("aci").name == "aci" and get_method("autoreg").name == "autoreg"


@pytest.mark.parametrize("rows, message", [
    ("2020-01-01,5,005.67\n2020-01-02,1,989.99\n", "the first data row has 3 fields but the header names 2"),
    ("2020-01-01,5\n2020-01-02,1,989.99\n", "line 3 has 3 fields but the header names 2"),
    ("2020,1,234.5\n2021,1,100.0\n", "the first data row has 3 fields"),  # years: pandas made them a RangeIndex
])
def test_rows_longer_than_the_header_are_refused_not_shifted(tmp_path: Path, rows, message) -> None:
    """An unquoted thousands separator gives every row one more field: pandas would take the first as an
    index and benchmark the digits after the comma."""
    path = _write(tmp_path / "t.csv", "date,y\n" + (rows * 200 if "2020-" in rows else rows))
    with pytest.raises(ValueError, match=message) as refused:
        csv_problem(path=path, target="y")
    assert "thousands separators" in str(refused.value)


TITLE_ABOVE = ("its first line ({!r}) is no header but a title or comment above it (the next line names the columns): "
               "remove that line")


@pytest.mark.parametrize("title, message", [
    ("# exported 2024-01-01", TITLE_ABOVE.format("# exported 2024-01-01")),
    ("Daily prices export", TITLE_ABOVE.format("Daily prices export")),
    ("Daily prices, EUR", "no column(s) ['y']; the file has ['Daily prices', 'EUR']. The line under the first names "
                          "'y': the first line (Daily prices, EUR) is a title above the header; remove it."),
])
def test_a_title_line_above_the_header_is_named_as_such(tmp_path: Path, title, message) -> None:
    """An export's comment or title line above the header was refused with advice on thousands separators, which
    the file had none of (or, with as many fields as the header, pandas' header: its column was not there)."""
    rows = "".join(f"{i},{v}\n" for i, v in enumerate(np.random.default_rng(0).normal(size=300)))
    path = _write(tmp_path / "c.csv", f"{title}\nt,y\n{rows}")
    with pytest.raises(ValueError, match=re.escape(message)):
        csv_problem(path=path, target="y")


def test_without_time_a_step_is_labelled_by_its_row_of_the_file(tmp_path: Path) -> None:
    """Rows counted from 0 under the header, as the errors count them: 1,000 rows, a quarter tested, is rows
    750 to 999 (once 745 to 994: the rows less the lags)."""
    path = _write(tmp_path / "r.csv", "y\n" + "".join(f"{v}\n" for v in np.random.default_rng(0).normal(size=1000)))
    p = csv_problem(path=path, target="y")
    assert p.time.dtype.kind == "i" and p.time[p.test_start] == 750 and p.time[-1] == 999


@pytest.mark.parametrize("start", ["2024-03-30", "2024-10-26"])  # the spring and the autumn switch
@pytest.mark.parametrize("time_format", [None, "%Y-%m-%dT%H:%M:%S%z"])
def test_times_across_a_daylight_saving_switch_order_as_instants(tmp_path: Path, start, time_format) -> None:
    """Hourly Paris times written with their offsets (+01:00, then +02:00): each one instant, so a shuffled
    file orders back in time (pandas alone refuses the mixed offsets), and the figures read them as dates."""
    from pibench.data_loaders.dates import dates_in_order

    times = pd.date_range(start, periods=400, freq="h", tz="Europe/Paris")
    written = times.strftime("%Y-%m-%dT%H:%M:%S%z").str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)
    assert len(set(w[-6:] for w in written)) == 2  # both offsets occur
    y = np.random.default_rng(0).normal(size=400)
    path = tmp_path / "tz.csv"
    pd.DataFrame({"time": written, "y": y}).sample(frac=1, random_state=0).to_csv(path, index=False)
    p = csv_problem(path=path, target="y", time="time", lags=1, time_format=time_format)
    np.testing.assert_array_equal(p.y[:, 0], y[1:])
    read = dates_in_order(pd.Series(p.time))
    assert read is not None and (read.diff().dropna() == pd.Timedelta(hours=1)).all()


@pytest.mark.parametrize("content, message", [
    (b"date;y\n2020-01-01;5,1\n", "reads as one column 'date;y': its fields are separated by ';', not commas"),
    (b"date,y\n2020-01-01,5\n2020-01-02,caf\xe9\n", "is not UTF-8 text"),
    (b'date,y\n2020-01-01,"19,012.57"\n', "Values such as '19,012.57' have a comma inside: remove thousands"),
])
def test_a_file_in_another_dialect_is_refused_with_the_fix(tmp_path: Path, content, message) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(content + content.split(b"\n", 1)[1] * 200)  # 201 data rows
    with pytest.raises(ValueError, match=re.escape(message)):
        csv_problem(path=path, target="y")


def test_a_space_after_each_comma_is_no_part_of_a_name(tmp_path: Path) -> None:
    rows = "".join(f"{i}, {v}\n" for i, v in enumerate(np.random.default_rng(0).normal(size=400)))
    p = csv_problem(path=_write(tmp_path / "s.csv", '"step", "y"\n' + rows), target="y", time="step")
    assert p.n_steps == 400 - 5 and p.time[-1] == 399


@pytest.mark.parametrize("rows, fix", [
    (300, 'test_fraction = 0.34 }'),  # 0.34 x 300 = 102 test points, 198 to train on (0.33: 99)
    (200, 'test_fraction = 0.5 }'),  # 100 and 100
    (120, "a longer series: at least 398 rows at test_fraction = 0.25, or 200 with test_fraction = 0.5"),
])
def test_a_short_test_span_gets_a_fix_that_leaves_a_training_span(tmp_path: Path, rows, fix) -> None:
    path = _write(tmp_path / "s.csv", "y\n" + "".join(f"{v}\n" for v in np.random.default_rng(0).normal(size=rows)))
    with pytest.raises(ValueError, match="at least 100 test points") as refused:
        csv_problem(path=path, target="y")
    assert fix in str(refused.value)


def test_a_missing_relative_path_says_where_it_was_looked_for(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"CSV file load.csv does not exist (a relative path is read from "
                                                   f"the folder pibench runs in, {tmp_path})")):
        csv_problem(path="load.csv", target="y")


@pytest.mark.parametrize("name, content", [
    ("blank.csv", "date,y\n\n" + "2020-01-01,5,005.67\n" * 200),  # a blank line after the header
    ("zipped.csv.gz", "date,y\n" + "2020-01-01,5,005.67\n" * 200),
])
def test_a_longer_first_row_is_found_after_a_blank_line_and_in_a_compressed_file(tmp_path: Path, name, content):
    import gzip

    path = tmp_path / name
    path.write_bytes(gzip.compress(content.encode()) if name.endswith(".gz") else content.encode())
    with pytest.raises(ValueError, match="the first data row has 3 fields but the header names 2"):
        csv_problem(path=path, target="y")


def test_rows_ending_in_a_comma_the_header_lacks_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", "step,y\n" + "".join(f"{i},{v},\n" for i, v in enumerate(range(300))))
    with pytest.raises(ValueError, match="The row ends with a comma the header lacks: remove trailing commas"):
        csv_problem(path=path, target="y", time="step")


def test_a_parquet_time_column_of_dates_labels_the_steps_as_dates(tmp_path: Path) -> None:
    """pandas' datetime64 is numbers to pd.to_numeric: the labels were nanosecond counts, not dates."""
    from pibench.data_loaders.dates import dates_in_order

    days = pd.date_range("2020-01-06", periods=400)
    pd.DataFrame({"day": days, "y": np.random.default_rng(0).normal(size=400)}).to_parquet(tmp_path / "d.parquet")
    p = csv_problem(path=tmp_path / "d.parquet", target="y", time="day", lags=1)
    read = dates_in_order(pd.Series(p.time))
    assert read is not None and read.iloc[0] == days[1] and read.iloc[-1] == days[-1]


def test_whole_numbers_that_are_yyyymmdd_dates_point_at_time_format(tmp_path: Path) -> None:
    """20200131 then 20200201 read as numbers skip 70 steps: the note said so without naming the fix; and a
    time_format that does not read a number showed np.int64(20200101)."""
    days = pd.date_range("2020-01-01", periods=400).strftime("%Y%m%d")
    path = _write(tmp_path / "d.csv", "d,y\n" + "".join(f"{d},{i % 7}\n" for i, d in enumerate(days)))
    (note,) = csv_problem(path=path, target="y", time="d").metadata["notes"]
    assert note.endswith('its whole numbers read as dates written YYYYMMDD (the first 20200101): give time_format = '
                         '"%Y%m%d" to step by days, not by numbers')
    assert "notes" not in csv_problem(path=path, target="y", time="d", time_format="%Y%m%d").metadata
    with pytest.raises(ValueError, match=r"row 0 of the time column 'd' holds 20200101, which time_format"):
        csv_problem(path=path, target="y", time="d", time_format="%Y-%m-%d")
    steps = _write(tmp_path / "s.csv", "t,y\n" + "".join(f"{t},{t % 7}\n" for t in [*range(200), *range(300, 500)]))
    (plain,) = csv_problem(path=steps, target="y", time="t").metadata["notes"]
    assert "YYYYMMDD" not in plain  # step numbers that skip are no dates


def test_a_suite_entry_in_a_fix_parses_as_toml_whatever_its_values() -> None:
    """The fixes' suite entries (review): a notebook's numpy values were a TypeError or np.float64(1.5) in the
    text, a column named beyond the BMP a surrogate escape TOML refuses; each now reads back as given."""
    import tomllib

    from pibench.data_loaders.suite_entry import dataset_entry

    params = {"path": "a.csv", "target": "y", "features": None,
              "where": {"reg🌍": np.int64(3), "x\x7fy": np.float64(1.5), "ok": 'é"\\', "flag": np.bool_(True)}}
    entry = dataset_entry("csv", params)
    assert "np." not in entry and "features" not in entry  # None: left out
    table = tomllib.loads(entry.replace("]] name", "]]\nname").replace(" params =", "\nparams ="))
    assert table["datasets"][0] == {"name": "csv", "params": {
        "path": "a.csv", "target": "y", "where": {"reg🌍": 3, "x\x7fy": 1.5, "ok": 'é"\\', "flag": True}}}


@pytest.mark.parametrize("time_format", [None, "%d/%m/%Y"])
def test_csv_day_first_months_are_read_as_months_and_labelled_as_dates(tmp_path: Path, time_format) -> None:
    """Monthly dates written day first (01/02/1980: 1 February) read both ways in one order: month first they
    were January's first twelve days, a year apart, noted as 39 skipped steps (docs reader); now the reading
    that skips least is taken. Their labels, as written, read two ways, so every figure's axis was one text
    label per step: they are now the dates read, ISO 8601."""
    from pibench.data_loaders.dates import dates_in_order

    months = pd.date_range("1980-01-01", periods=480, freq="MS")
    path = _write(tmp_path / "m.csv", "date,y\n" + "".join(f"{d:%d/%m/%Y},{i % 7}\n" for i, d in enumerate(months)))
    p = csv_problem(path=path, target="y", time="date", time_format=time_format, lags=1)
    assert "notes" not in p.metadata  # no skipped steps: a month apart each
    assert list(p.time[:3]) == ["1980-02-01", "1980-03-01", "1980-04-01"]  # the first row is a lag
    read = dates_in_order(pd.Series(p.time))
    assert read is not None and (read.dt.day == 1).all()
    iso = _write(tmp_path / "iso.csv", "date,y\n" + "".join(f"{d:%Y-%m-%d},{i % 7}\n" for i, d in enumerate(months)))
    assert list(csv_problem(path=iso, target="y", time="date", lags=1).time[:1]) == ["1980-02-01"]  # as written


def test_csv_a_mistyped_feature_is_never_offered_the_time_column(tmp_path: Path) -> None:
    """features = ["dat"] was asked "Did you mean 'date'?", the time column, refused next (docs reader)."""
    path = _write(tmp_path / "f.csv", "date,data,y\n" + "".join(f"2020-01-{d:02d},{d},{d % 3}\n" for d in range(1, 29)))
    with pytest.raises(ValueError, match=r"no column\(s\) \['dat'\].*Did you mean 'data'\?"):
        csv_problem(path=path, target="y", features=["dat"], time="date")
    with pytest.raises(ValueError, match=r"no column\(s\) \['dat'\].*Did you mean 'date'\?"):
        csv_problem(path=path, target="y", time="dat")  # a mistyped time column: the dates are its fix


def test_csv_labels_of_dates_read_by_a_format_keep_their_instant_and_fraction(tmp_path: Path) -> None:
    """Labels written as the dates read (review): times with an offset are the instants in UTC they are read as,
    said so ("+00:00", not a bare 23:00 of the day before), and fractions of a second are kept (100 ms steps had
    one label for ten steps)."""
    stamps = pd.date_range("2024-01-01", periods=400, freq="100ms")
    fine = _write(tmp_path / "ms.csv", "t,y\n" + "".join(f"{t:%d.%m.%Y_%H:%M:%S.%f},{i % 5}\n"
                                                         for i, t in enumerate(stamps)))
    p = csv_problem(path=fine, target="y", time="t", time_format="%d.%m.%Y_%H:%M:%S.%f", lags=1)
    assert list(p.time[:2]) == ["2024-01-01T00:00:00.100000", "2024-01-01T00:00:00.200000"]
    assert len(set(p.time)) == len(p.time)
    days = pd.date_range("2024-01-02", periods=400, freq="D")
    offset = _write(tmp_path / "z.csv", "t,y\n" + "".join(f"{d:%d.%m.%Y}+00:00+0100,{i % 5}\n"
                                                          for i, d in enumerate(days)))
    p = csv_problem(path=offset, target="y", time="t", time_format="%d.%m.%Y+%H:%M%z", lags=1)
    assert p.time[0] == "2024-01-02T23:00:00+00:00"  # 3 January 00:00 at +01:00


def test_csv_sets_day_first_months_shared_by_sequences_read_as_months(tmp_path: Path) -> None:
    """The reading that skips least is judged on the distinct dates: sequences of a long table share them, and on
    the repeats every step 'skipped' in both readings, so sets kept month first, with false gap notes (review)."""
    from pibench.data_loaders.csv_sets import csv_sets_problem

    months = pd.date_range("1980-01-01", periods=240, freq="MS")
    rows = "".join(f"{i},{d:%d/%m/%Y},{np.sin(k + i) + 0.1 * k}\n" for i in range(4) for k, d in enumerate(months))
    p = csv_sets_problem(path=_write(tmp_path / "s.csv", "id,step,value\n" + rows), input_length=6, horizon=200)
    assert "notes" not in p.metadata
