"""The volatility of each test step, by which conditional coverage is stratified (SPEC §4, beyond the paper).

* Where the problem knows its oracle (:mod:`pibench.data_loaders.oracle`) and the oracle's scale
  varies (the regime series), that scale: the true conditional standard deviation of the
  step. (A constant oracle scale, as of ar, nlar and expar, would stratify nothing.)
* Elsewhere, a causal rolling robust scale of the target: for step t of series g,
  1.4826 x the median of |y_s - y_{s-1}| over the :data:`WINDOW` steps s < t before it
  (training steps included; at least 2). Only the past enters, as a forecaster would
  know it; differences make a trend or a level shift no volatility; 1.4826 x MAD is the
  Gaussian standard deviation's robust twin (for differences of a random walk).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pibench.data_loaders.oracle import series_oracle
from pibench.data_loaders.problems import SeriesProblem

#: Past steps the rolling robust scale looks at.
WINDOW = 50


def rolling_robust_scale(y: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """(n, G): 1.4826 x median |first difference| over the ``window`` steps before each step (NaN first)."""
    moves = pd.DataFrame(np.abs(np.diff(np.asarray(y, dtype=float), axis=0, prepend=np.nan)))
    return 1.4826 * moves.shift(1).rolling(window, min_periods=2).median().to_numpy()


def volatility_of_test_steps(problem: SeriesProblem, stop: int | None = None) -> tuple[np.ndarray, str]:
    """(the volatility of test steps test_start..stop, (n_test, G); its source, 'oracle' or 'rolling')."""
    stop = problem.n_steps if stop is None else stop
    oracle = series_oracle(problem)
    if oracle is not None and np.ptp(oracle[1][problem.test_start:stop]) > 0:
        return oracle[1][problem.test_start:stop], "oracle"
    return rolling_robust_scale(problem.y[:stop])[problem.test_start:stop], "rolling"
