"""Classical baseline: a Gaussian AR(p) per series fitted by statsmodels' AutoReg.

One-step interval: mu +/- z_{alpha/2} sqrt(sigma2), with mu = c + sum_k phi_k y_{t-k}
and (c, phi, sigma2) from ``statsmodels.tsa.ar_model.AutoReg(...).fit()``; this is
what ``AutoRegResults.get_prediction(...).conf_int(alpha)`` returns one step
past the fitted sample (checked in tests). The covariates X are ignored: the
model uses the target's own history, extended by ``update`` between refits.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from statsmodels.tsa.ar_model import AutoReg

from data_loaders.problems import SeriesData
from methods.base import Interval, IntervalMethod, register


@register
class AutoRegInterval(IntervalMethod):
    """statsmodels AutoReg with its Gaussian one-step prediction intervals."""

    name = "autoreg"
    shape = "series"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lags: int = 1, trend: str = "c"):
        super().__init__(alpha=alpha, random_state=random_state)
        self.lags = lags
        self.trend = trend

    def fit(self, data: SeriesData) -> AutoRegInterval:
        self._check_alpha()
        if self.trend not in ("c", "n"):
            raise ValueError(f"trend={self.trend!r}: use 'c' (constant) or 'n' (none).")
        if data.n_steps <= 2 * self.lags + 1:
            raise ValueError(
                f"AutoReg with lags={self.lags} needs more than {2 * self.lags + 1} steps; "
                f"the window has {data.n_steps}. Use a longer window or fewer lags."
            )
        fits = [AutoReg(data.y[:, g], lags=self.lags, trend=self.trend).fit() for g in range(data.y.shape[1])]
        self.params_ = np.stack([np.asarray(f.params) for f in fits])  # (G, n_trend + lags)
        self.sigma_ = np.sqrt([f.sigma2 for f in fits])  # (G,)
        self.history_ = data.y[-self.lags :].copy()  # (lags, G), oldest first
        return self

    def _point(self) -> np.ndarray:
        lagged = self.history_[::-1].T  # (G, lags): y_{t-1}, ..., y_{t-p}
        const = self.params_[:, 0] if self.trend == "c" else 0.0
        return const + (self.params_[:, -self.lags :] * lagged).sum(axis=1)

    def predict_interval(self, X: np.ndarray) -> Interval:
        if X.shape[0] != 1:
            raise ValueError("autoreg predicts one step at a time; call update(y) between steps.")
        point = self._point()[None, :]
        half = norm.ppf(1 - self.alpha / 2) * self.sigma_[None, :]
        return Interval(lower=point - half, upper=point + half, point=point)

    def update(self, y: np.ndarray) -> None:
        self.history_ = np.concatenate([self.history_, np.asarray(y, dtype=float)])[-self.lags :]
