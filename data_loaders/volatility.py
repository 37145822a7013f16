"""The volatility of each test step, by which conditional coverage is stratified (beyond the paper;
docs/guide/metrics.md).

* Where the problem knows its oracle (:mod:`pibench.data_loaders.oracle`) and the oracle's scale
  varies (the regime series), that scale: the true conditional standard deviation of the
  step. (A constant oracle scale, as of ar, nlar and expar, would stratify nothing.)
* Elsewhere, a causal rolling robust scale of the target: for step t of series g,
  1.4826 x the median of |y_s - y_{s-k}| over the :data:`WINDOW` steps s < t before it
  (training steps included; at least 2). Only the past enters, as a forecaster would
  know it; differences make a trend or a level shift no volatility; 1.4826 x MAD is the
  Gaussian standard deviation's robust twin (for differences of a random walk). The lag k
  is 1 unless the training span has a seasonal cycle (:func:`seasonal_lag`): first
  differences of a daily series with a weekly swing of 6 and noise whose sd drifts from
  1 to 2.5 over a year measure the swing (their rolling scale's correlation with the
  noise's sd over the second year -0.21 to 0.65 in five draws), its differences at lag 7
  the noise (0.75-0.83), so the volatility thirds sort calm from volatile steps rather
  than steps of the cycle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pibench.data_loaders.oracle import series_oracle
from pibench.data_loaders.problems import SeriesProblem

#: Past steps the rolling robust scale looks at.
WINDOW = 50
#: The longest lag :func:`seasonal_lag` considers (a year of weeks, five years of months), and how much smaller
#: the differences at a seasonal lag must be than the first differences for it to replace them.
MAX_LAG, SEASONAL_RATIO = 60, 0.5


def _median_moves(y: np.ndarray, lag: int) -> float:
    """The median over series of each series' median |y_t - y_{t-lag}|."""
    return float(np.nanmedian(np.nanmedian(np.abs(y[lag:] - y[:-lag]), axis=0)))


def seasonal_lag(y: np.ndarray) -> int:
    """The lag of the differences the rolling scale reads from a training span ``y`` (n, G): 1, unless at some
    lag k of 2..min(:data:`MAX_LAG`, n / 4) the median |y_t - y_{t-k}| is under :data:`SEASONAL_RATIO` of the
    first differences' (a cycle of k steps, or of a divisor of k: the movement is the cycle's, not the noise's);
    then the shortest lag within 25% of the least (7, not 14, for a weekly cycle: their medians differ by noise)."""
    if len(y) < 8:  # no lag but the first to compare
        return 1
    y = np.asarray(y, dtype=float).reshape(len(y), -1)
    lags = range(1, min(MAX_LAG, len(y) // 4) + 1)
    moves = np.array([_median_moves(y, k) for k in lags])
    if len(moves) < 2 or not np.isfinite(moves).all() or moves[0] <= 0 or moves.min() >= SEASONAL_RATIO * moves[0]:
        return 1
    return int(np.flatnonzero(moves <= 1.25 * moves.min())[0]) + 1


def rolling_robust_scale(y: np.ndarray, window: int = WINDOW, lag: int = 1) -> np.ndarray:
    """(n, G): 1.4826 x median |y_t - y_{t-lag}| over the ``window`` steps before each step (NaN first)."""
    y = np.asarray(y, dtype=float).reshape(len(y), -1)
    moves = pd.DataFrame(np.abs(y - np.vstack([np.full((lag, y.shape[1]), np.nan), y[:-lag]])))
    return 1.4826 * moves.shift(1).rolling(window, min_periods=2).median().to_numpy()


def volatility_of_test_steps(problem: SeriesProblem, stop: int | None = None) -> tuple[np.ndarray, str]:
    """(the volatility of test steps test_start..stop, (n_test, G); its source: 'oracle', 'rolling', or
    'rolling, lag k' where the training span's cycle sets the differences' lag)."""
    stop = problem.n_steps if stop is None else stop
    oracle = series_oracle(problem)
    if oracle is not None and np.ptp(oracle[1][problem.test_start:stop]) > 0:
        return oracle[1][problem.test_start:stop], "oracle"
    lag = seasonal_lag(problem.y[:problem.test_start])
    return (rolling_robust_scale(problem.y[:stop], lag=lag)[problem.test_start:stop],
            "rolling" if lag == 1 else f"rolling, lag {lag}")
