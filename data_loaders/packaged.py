"""Real series that ship with pibench's own dependencies: no download, on every user's disk.

``arch`` (``arch.data``) and statsmodels (``statsmodels.datasets``) carry these
series; each loader reads the package's own file, applies the transformation a
forecaster of that field would use, and builds an online problem with the series'
lags as inputs (:mod:`pibench.data_loaders.lagged`). The file's checksum is recorded
like any data file's, and the problem's fingerprint is part of every task's identity.

The datasets (source: target, and why):

- ``sp500`` (``arch.data.sp500``): daily log return of the adjusted close, in percent: prices are not
  stationary, returns are (with volatility clusters: 2008, 2011, 2015, 2018).
- ``nasdaq`` (``arch.data.nasdaq``): the same for the NASDAQ composite (the dot-com crash too).
- ``wti`` (``arch.data.wti``): daily log return of the WTI crude price, in percent, between quoted days (the
  290 days without a quote are dropped, not filled).
- ``vix`` (``arch.data.vix``): the log of the VIX (a mean-reverting level with a heavy right tail; logs make
  its moves comparable); the 46 days without a value are dropped.
- ``core_inflation`` (``arch.data.core_cpi``): month-on-month US core inflation, 100 log(CPI_t / CPI_{t-1}):
  the CPI level trends, inflation does not.
- ``credit_spread`` (``arch.data.default``): the BAA - AAA corporate yield spread, in percentage points: the
  default risk premium, a persistent level.
- ``co2`` (``statsmodels.datasets.co2``): the monthly change of Mauna Loa CO2 (ppm): monthly means of the
  weekly readings (59 weeks have none), from 1965, after the last month without any reading (1964-04); the
  change removes the trend, 12 lags see the season.
- ``sunspots`` (``statsmodels.datasets.sunspots``): yearly sunspot number transformed as
  2 (sqrt(1 + y) - 1) (Ghaddar & Tong 1981): it stabilises the variance of a count-like, strongly cyclic
  series.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pibench.data_loaders.lagged import lagged_series_problem
from pibench.data_loaders.problems import SeriesProblem


def _log_returns(prices: pd.Series) -> pd.Series:
    """100 log(p_t / p_{t-1}) over the quoted days (days without a price dropped first)."""
    prices = prices.dropna()
    if (prices <= 0).any():
        raise ValueError(f"{prices.name}: non-positive prices have no log return")
    return (100 * np.log(prices)).diff().dropna()


def _monthly_co2(weekly: pd.Series) -> pd.Series:
    """Monthly means of the weekly readings from the first month after the last month with none, differenced."""
    monthly = weekly.resample("MS").mean()
    empty = monthly.index[monthly.isna()]
    if len(empty):
        monthly = monthly[monthly.index > empty[-1]]
    return monthly.diff().dropna()


@dataclass(frozen=True)
class PackagedSeries:
    """One series of a dependency: where it is, how it becomes the target, and the defaults of its problem."""

    module: str                      #: the package module that loads it
    file: str                        #: its data file, beside the module
    column: str                      #: the column read (or "spread" for BAA - AAA)
    transform: Callable[[pd.Series], pd.Series]
    lags: int
    n_test: int
    frequency: str                   #: "daily", "monthly" or "yearly": how the step labels read
    description: str

    def raw(self) -> pd.Series:
        """The observations as the package ships them, indexed by date."""
        module = importlib.import_module(self.module)
        if self.module.startswith("statsmodels"):
            frame = module.load_pandas().data
            if "YEAR" in frame:
                frame = frame.set_index(pd.to_datetime(frame["YEAR"].astype(int).astype(str), format="%Y"))
        else:
            frame = module.load()
        if self.column == "spread":
            return (frame["BAA"] - frame["AAA"]).rename("spread")
        return frame[self.column]

    def path(self) -> Path:
        return Path(importlib.import_module(self.module).__file__ or "").parent / self.file


PACKAGED = {
    "sp500": PackagedSeries("arch.data.sp500", "sp500.csv.gz", "Adj Close", _log_returns, 5, 1000, "daily",
                            "S&P 500 daily log returns in percent, 1999-2018 (arch.data; built in)"),
    "nasdaq": PackagedSeries("arch.data.nasdaq", "nasdaq.csv.gz", "Adj Close", _log_returns, 5, 1000, "daily",
                             "NASDAQ composite daily log returns in percent, 1999-2018 (arch.data; built in)"),
    "wti": PackagedSeries("arch.data.wti", "wti.csv.gz", "DCOILWTICO", _log_returns, 5, 1500, "daily",
                          "WTI crude oil daily log returns in percent, 1986-2019 (arch.data; built in)"),
    "vix": PackagedSeries("arch.data.vix", "vix.csv.gz", "vix", lambda s: np.log(s.dropna()), 5, 500, "daily",
                          "log of the VIX, daily, 2014-2019 (arch.data; built in)"),
    "core_inflation": PackagedSeries("arch.data.core_cpi", "core-cpi.csv.gz", "CPILFESL",
                                     lambda s: (100 * np.log(s)).diff().dropna(), 12, 240, "monthly",
                                     "US core CPI month-on-month inflation in percent, 1957-2018 (arch.data; "
                                     "built in)"),
    "credit_spread": PackagedSeries("arch.data.default", "default.csv.gz", "spread", lambda s: s, 6, 360,
                                    "monthly", "BAA - AAA corporate bond yield spread, monthly, 1919-2018 "
                                               "(arch.data; built in)"),
    "co2": PackagedSeries("statsmodels.datasets.co2", "co2.csv", "co2", _monthly_co2, 12, 120, "monthly",
                          "Mauna Loa CO2, monthly change in ppm, 1965-2001 (statsmodels.datasets; built in)"),
    "sunspots": PackagedSeries("statsmodels.datasets.sunspots", "sunspots.csv", "SUNACTIVITY",
                               lambda s: 2 * (np.sqrt(1 + s) - 1), 9, 100, "yearly",
                               "yearly sunspot number, variance-stabilised, 1700-2008 (statsmodels.datasets; "
                               "built in)"),
}

_LABELS = {"daily": "%Y-%m-%d", "monthly": "%Y-%m", "yearly": "%Y"}


def packaged_problem(name: str, *, n_test: int | None = None, lags: int | None = None) -> SeriesProblem:
    """The online problem of packaged series ``name`` (module docstring): the last ``n_test`` steps are the
    test span (default: the series' own), ``lags`` past values the inputs."""
    spec = PACKAGED[name]
    try:
        raw = spec.raw()
    except (ImportError, OSError) as exc:
        raise ValueError(f"dataset {name!r} comes with {spec.module.split('.')[0]}, which could not load it "
                         f"({type(exc).__name__}: {exc}); reinstall pibench's dependencies.") from None
    target = spec.transform(raw).astype(float)
    if not np.isfinite(target.to_numpy()).all():
        raise ValueError(f"dataset {name!r}: its transformed series holds non-finite values")
    labels = pd.DatetimeIndex(target.index).strftime(_LABELS[spec.frequency]).to_numpy()
    return lagged_series_problem(
        name, target.to_numpy(), lags=spec.lags if lags is None else lags,
        n_test=spec.n_test if n_test is None else n_test, where=f"dataset {name!r}", target=name, time=labels,
        metadata={"source": str(spec.path()), "raw_rows": len(raw), "frequency": spec.frequency})


def _loader(name: str) -> Callable[..., SeriesProblem]:
    """A loader of its own for series ``name`` (the registry reads each loader's parameters)."""
    def load(*, n_test: int | None = None, lags: int | None = None) -> SeriesProblem:
        return packaged_problem(name, n_test=n_test, lags=lags)

    load.__name__ = load.__qualname__ = f"{name}_problem"
    load.__doc__ = (f"{PACKAGED[name].description}: the last ``n_test`` steps (default {PACKAGED[name].n_test}) "
                    f"are the test span, ``lags`` (default {PACKAGED[name].lags}) past values the inputs.")
    return load


LOADERS = {name: _loader(name) for name in PACKAGED}
