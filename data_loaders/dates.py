"""A column of date labels read with one format for all of it, never value by value (read value by value,
01/02/2021 is 2 January in one row while 13/01/2021 is 13 January in the next)."""

from __future__ import annotations

import warnings

import pandas as pd

#: Ends like a time's offset from UTC (2024-03-31T03:00:00+02:00, ...Z); "31-01-2024" matches too, and then
#: reads as no ISO time in UTC either, harmlessly.
UTC_OFFSET = r"(?:Z|[+-]\d{2}:?\d{2})\s*$"


def date_readings(labels: pd.Series) -> list[pd.Series]:
    """The distinct readings of ``labels`` as dates, each with one format for every value: ISO 8601
    (2021-01-13) if that reads them all (times with UTC offsets that change, as at a daylight-saving switch,
    in UTC), else the format pandas infers from the first label, read month
    first and day first (one reading where both agree or only one reads); [] if none reads every label."""
    try:
        return [pd.to_datetime(labels, format="ISO8601")]
    except (ValueError, TypeError, OverflowError):
        pass
    if labels.str.contains(UTC_OFFSET).all():  # offsets that change (daylight saving): each an instant, in UTC
        try:
            return [pd.to_datetime(labels, format="ISO8601", utc=True)]
        except (ValueError, TypeError, OverflowError):
            pass
    readings: list[pd.Series] = []
    for dayfirst in (False, True):
        try:
            with warnings.catch_warnings():  # "Parsing dates in %d/%m/%Y format when dayfirst=False": both are read
                warnings.simplefilter("ignore", UserWarning)
                reading = pd.to_datetime(labels, dayfirst=dayfirst)
        except (ValueError, TypeError, OverflowError):
            continue
        if not any(reading.equals(other) for other in readings):
            readings.append(reading)
    return readings


def dates_in_order(labels: pd.Series) -> pd.Series | None:
    """``labels`` of steps stored in time order, as dates: the one reading of :func:`date_readings` that
    does not decrease; None if no reading or more than one does (then they are labels, not dates), and
    None for numbers (a series without dates is labelled by its step numbers: 1001 is a step, not a year;
    a year read from a file is text, "1749")."""
    if pd.api.types.is_numeric_dtype(labels):
        return None
    ordered = [r for r in date_readings(labels.astype(str)) if r.is_monotonic_increasing]
    return ordered[0] if len(ordered) == 1 else None
