"""Classical baseline: a Gaussian AR(p) per series fitted by statsmodels' AutoReg.

One-step interval: mu +/- z_{alpha/2} sqrt(sigma2), with mu = c + sum_k phi_k y_{t-k}
and (c, phi, sigma2) from ``statsmodels.tsa.ar_model.AutoReg(...).fit()`` (with the
constant, fitted to the window less its mean m: mu = m + c' + sum_k phi_k (y_{t-k} - m),
the same model, numerically sound for a series far from 0); this is
what ``AutoRegResults.get_prediction(...).conf_int(alpha)`` returns one step
past the fitted sample (checked in tests). The covariates X are ignored: the
model uses the target's own history, extended by ``update`` between refits.
With ``lags="aic"`` or ``"bic"`` the order is chosen on each window by
statsmodels' ``ar_select_order`` (the classical row of the order-selection table).

The interval ignores the error of the estimated coefficients and sigma2 is the in-sample
mean square (statsmodels' maximum likelihood), so it covers less as the order nears the
window: on the built-in AR(1) with a 200-step window, 90% intervals covered 90% at 1 lag,
84% at 20, 73% at 50 and 50% at 80. A window of 2p + 1 steps or fewer is refused. A window
whose lagged values are collinear (a constant stretch: prices held at a cap) has no unique
fit; statsmodels' minimum-norm solution is used, and such fits are counted
(``autoreg_singular_fits`` in the record) rather than warned about at every refit.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import norm
from statsmodels.tools.sm_exceptions import SingularMatrixWarning
from statsmodels.tsa.ar_model import AutoReg

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.ar_order import select_ar_lags
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.param_checks import one_of, positive_int


@register
class AutoRegInterval(IntervalMethod):
    """statsmodels AutoReg with its Gaussian one-step prediction intervals."""

    name = "autoreg"
    shape = "series"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lags: int | str = 1, trend: str = "c",
                 max_lags: int = 15):
        super().__init__(alpha=alpha, random_state=random_state)
        self.lags = lags
        self.trend = trend
        self.max_lags = max_lags

    def _check_param_values(self) -> None:
        super()._check_param_values()
        if isinstance(self.lags, str) and self.lags not in ("aic", "bic"):
            raise ValueError(f"lags={self.lags!r}: give an order >= 1 (lags = 2), or 'aic' / 'bic' to select it.")
        if not isinstance(self.lags, str) and (isinstance(self.lags, bool) or self.lags < 1):
            raise ValueError(f"lags={self.lags} must be >= 1, or 'aic' / 'bic' to select the order.")
        one_of("trend", self.trend, ("c", "n"))
        positive_int("max_lags", self.max_lags)

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        p = self.max_lags if isinstance(self.lags, str) else int(self.lags)
        if n_steps <= 2 * p + 1:
            raise ValueError(f"autoreg with lags up to {p} needs a window of more than {2 * p + 1} steps; "
                             f"got {n_steps}. Use a longer window or fewer lags.")

    def _lag_list(self, y: np.ndarray) -> list[int]:
        """lags = p (1..p), or "aic"/"bic": the lags statsmodels' ar_select_order picks up to
        max_lags (possibly none: then the model is a constant plus noise)."""
        if isinstance(self.lags, str):
            return sorted(select_ar_lags(y, self.max_lags, criterion=self.lags))
        return list(range(1, int(self.lags) + 1))

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> AutoRegInterval:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        self.check_params()
        self.check_window(data.n_steps)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SingularMatrixWarning)
            self._fit_groups(data)
        singular = [w for w in caught if issubclass(w.category, SingularMatrixWarning)]
        for warning in caught:  # the singular fits are counted in diagnostics(); any other warning is shown
            if warning not in singular:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        self.n_singular_ = getattr(self, "n_singular_", 0) + bool(singular)
        return self

    def _fit_groups(self, data: SeriesData) -> None:
        """The lags, coefficients, constant and sigma of each series of the window (module docstring)."""
        G = data.y.shape[1]
        self.lag_lists_ = [self._lag_list(data.y[:, g]) for g in range(G)]
        p = max(max(lags, default=0) for lags in self.lag_lists_)
        self.coef_ = np.zeros((G, p))  # coefficient of lag j at column j - 1 (0 where not selected)
        self.const_, self.sigma_ = np.zeros(G), np.zeros(G)
        # with a constant the model is fitted to the window less its mean (the same model, written about the
        # mean): an offset of 1e12 leaves least squares near singular, with intervals millions wide
        self.offset_ = data.y.mean(axis=0) if self.trend == "c" else np.zeros(G)
        for g, lags in enumerate(self.lag_lists_):
            if not lags and self.trend == "n":
                raise ValueError("no lag was selected and trend='n' leaves nothing to fit; use trend='c'.")
            res = AutoReg(data.y[:, g] - self.offset_[g], lags=lags or 0, trend=self.trend).fit()
            params = np.asarray(res.params)
            self.const_[g] = params[0] if self.trend == "c" else 0.0
            self.coef_[g, np.asarray(lags, dtype=int) - 1] = params[len(params) - len(lags) :]
            self.sigma_[g] = np.sqrt(res.sigma2)
        self.history_ = data.y[data.n_steps - p :].copy()  # (p, G), oldest first

    def _point(self) -> np.ndarray:
        lagged = self.history_[::-1].T - self.offset_[:, None]  # (G, p): y_{t-1}, ..., y_{t-p}, less the mean
        return self.offset_ + self.const_ + (self.coef_ * lagged).sum(axis=1)

    def predict_interval(self, X: np.ndarray) -> Interval:
        if X.shape[0] != 1:
            raise ValueError("autoreg predicts one step at a time; call update(y) between steps.")
        point = self._point()[None, :]
        half = norm.ppf(1 - self.alpha / 2) * self.sigma_[None, :]
        return Interval(lower=point - half, upper=point + half, point=point)

    def update(self, y: np.ndarray) -> None:
        history = np.concatenate([self.history_, np.asarray(y, dtype=float)])
        self.history_ = history[len(history) - self.coef_.shape[1] :]

    def diagnostics(self) -> dict:
        singular = {"autoreg_singular_fits": int(getattr(self, "n_singular_", 0))}
        if not hasattr(self, "lag_lists_") or len(self.lag_lists_) != 1:
            return singular if hasattr(self, "lag_lists_") else {}
        lags = self.lag_lists_[0]
        candidates = self.max_lags if isinstance(self.lags, str) else int(self.lags)
        return {"selected_lags": ",".join(map(str, lags)), "ar_order": max(lags, default=0),
                "candidate_lags": candidates, **singular}
