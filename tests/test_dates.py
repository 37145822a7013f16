"""Date labels read with one format for the whole column (data_loaders/dates.py)."""

import pandas as pd

from pibench.data_loaders.dates import date_readings, dates_in_order


def test_day_first_labels_read_one_way_when_a_day_passes_12():
    labels = pd.Series(["31/12/2020", "01/01/2021", "02/01/2021", "13/01/2021"])
    (reading,) = date_readings(labels)
    assert reading.dt.strftime("%Y-%m-%d").tolist() == ["2020-12-31", "2021-01-01", "2021-01-02", "2021-01-13"]
    assert dates_in_order(labels).equals(reading)


def test_labels_that_read_both_ways_take_the_reading_in_their_order():
    """Stored labels are in time order: of two readings, the one in order is the time axis."""
    both = pd.Series(["02/01/2021", "03/01/2021", "04/01/2021"])  # 1 Feb, 1 Mar, 1 Apr or 2-4 Jan: both in order
    assert len(date_readings(both)) == 2 and dates_in_order(both) is None
    one = pd.Series(["12/01/2021", "01/02/2021"])  # 1 Dec, 2 Jan (backwards) or 12 Jan, 1 Feb
    assert len(date_readings(one)) == 2 and dates_in_order(one).dt.strftime("%m-%d").tolist() == ["01-12", "02-01"]
    stored = pd.Series(["30/01/2021", "31/01/2021", "01/02/2021", "02/02/2021"])  # the first label reads day first
    assert len(date_readings(stored)) == 1 and dates_in_order(stored).dt.day.tolist() == [30, 31, 1, 2]


def test_iso_and_non_dates():
    assert dates_in_order(pd.Series(["2021-01-01", "2021-01-02 06:00"])).dt.hour.tolist() == [0, 6]
    assert date_readings(pd.Series(["W1", "W2"])) == [] and dates_in_order(pd.Series(["W1", "W2"])) is None
    assert dates_in_order(pd.Series(["2021-01-02", "2021-01-01"])) is None  # not in order: labels, not a time axis


def test_step_numbers_are_never_dates_while_years_read_from_a_file_are():
    """A series without dates is labelled by its step numbers (stored as numbers): 1001 is a step, not a year."""
    assert dates_in_order(pd.Series(range(1001, 3001))) is None
    years = dates_in_order(pd.Series(["1749", "1750", "1751"]))  # a file's year column is text
    assert years is not None and years.dt.year.tolist() == [1749, 1750, 1751]
