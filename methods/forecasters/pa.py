"""PA's sparse MLPs as a split-conformal base forecaster, with their own predictive sd.

``base = "pa"`` trains one :class:`~pibench.methods.pa.method.PA` stack (one network per
group) on each window's proper-training part. Besides the point forecast mu(x) it gives
PA's predictive sd(x) = sqrt(varsigma2(x)/n + sigma2_hat) (docs/guide/methods.md), the scale of
``scale = "model"`` normalized scores (:class:`~pibench.methods.calibration.score_scale.ModelScale`):
an online calibrator then fixes the scale of PA's band mu(x) +/- q_t sd(x) (conformalised PA).
"""

from __future__ import annotations

import numpy as np

from pibench.methods.pa.method import PA


class PAForecaster:
    """One PA fit per window; ``predict`` the points, ``predict_sd`` PA's predictive sd (both (F, m, G))."""

    def __init__(self, **pa_params):
        self.pa_params = pa_params

    def fit(self, X: np.ndarray, y: np.ndarray, seeds: np.ndarray) -> PAForecaster:
        """X (F, n, G, p), y (F, n, G); window f's stack trains with torch seed ``seeds[f, 0]``."""
        self.fits_ = [PA(**self.pa_params).fit_arrays(X[f], y[f], int(seeds[f, 0])) for f in range(X.shape[0])]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (F, m, G, p) -> (F, m, G) point forecasts."""
        return np.stack([fit.point(X[f]) for f, fit in enumerate(self.fits_)])

    def predict_sd(self, X: np.ndarray) -> np.ndarray:
        """X (F, m, G, p) -> (F, m, G) PA's predictive sd."""
        return np.stack([fit.point_and_sd(X[f])[1] for f, fit in enumerate(self.fits_)])
