"""The scorecaster of conformal PID (Angelopoulos et al. 2023, section 3): a forecast of the next score.

Per series, statsmodels' Theta model (Assimakopoulos & Nikolopoulos 2000) is fitted
to the score history every ``refit_every`` steps and forecasts the scores until
the next refit; the history starts with the calibration scores of the first window.
"""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.tsa.forecasting.theta import ThetaModel


class ThetaScorecaster:
    """forecast() -> (G,) the next scores; observe(scores (G,)) after they are revealed."""

    def __init__(self, calibration_scores: np.ndarray, refit_every: int = 7, period: int | None = None):
        self.history = [list(column) for column in np.asarray(calibration_scores, dtype=float).T]
        self.refit_every, self.period = refit_every, period
        self.ahead = np.empty((0, len(self.history)))
        self.used = 0

    def _refit(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels' frequency and convergence notices
            self.ahead = np.stack([np.asarray(ThetaModel(np.asarray(h), period=self.period,
                                                         deseasonalize=self.period is not None)
                                              .fit().forecast(self.refit_every)) for h in self.history], axis=1)
        self.used = 0

    def forecast(self) -> np.ndarray:
        if self.used >= len(self.ahead):
            self._refit()
        return self.ahead[self.used]

    def observe(self, scores: np.ndarray) -> None:
        for h, s in zip(self.history, np.asarray(scores, dtype=float)):
            h.append(float(s))
        self.used += 1
