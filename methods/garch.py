"""The baseline a user of return series picks first: GARCH(1,1) one-step intervals, refitted on each window.

Bollerslev's (1986) GARCH(1,1), fitted by maximum likelihood with ``arch``'s
``arch_model`` on the window's targets: y_t = mu + e_t, e_t = sigma_t z_t,
sigma2_t = omega + a e_{t-1}^2 + b sigma2_{t-1}, z standard normal or standardised
Student-t with nu degrees of freedom (``dist``). The one-step interval is
mu +/- q sigma_{t+1}, q the (1 - alpha/2) quantile of z (for the t:
t_{1 - alpha/2, nu} sqrt((nu - 2) / nu)). Right after a fit, sigma2_{t+1} is what
``arch``'s own ``forecast(horizon=1)`` gives (tested); between refits ``update``
advances the same recursion with the revealed targets and the fitted parameters.
The covariates X are not used: the model reads the series' own history.
"""

from __future__ import annotations

import warnings

import numpy as np
from arch import arch_model
from scipy.stats import norm, t

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.param_checks import one_of

#: Fewest window steps a GARCH(1,1) is fitted on (four parameters, and the volatility needs history).
MIN_WINDOW = 100


@register
class GarchInterval(IntervalMethod):
    """GARCH(1,1) by arch, normal or Student-t innovations, one-step intervals (returns)."""

    name = "garch"
    shape = "series"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, dist: str = "normal", mean: str = "constant"):
        super().__init__(alpha=alpha, random_state=random_state)
        self.dist = dist
        self.mean = mean

    def _check_param_values(self) -> None:
        super()._check_param_values()
        one_of("dist", self.dist, ("normal", "t"))
        one_of("mean", self.mean, ("constant", "zero"))

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        if n_steps < MIN_WINDOW:
            raise ValueError(f"garch needs a window of at least {MIN_WINDOW} steps to estimate its volatility; "
                             f"got {n_steps}. Use a longer window.")

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> GarchInterval:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        self.check_params()
        self.check_window(data.n_steps)
        G = data.y.shape[1]
        self.mu_, self.omega_, self.a_, self.b_ = (np.zeros(G) for _ in range(4))
        self.quantile_, self.variance_ = np.zeros(G), np.zeros(G)
        self.n_unconverged_ = getattr(self, "n_unconverged_", 0)
        for g in range(G):
            model = arch_model(data.y[:, g], mean="Constant" if self.mean == "constant" else "Zero", vol="GARCH",
                               p=1, q=1, dist="normal" if self.dist == "normal" else "t", rescale=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # arch's convergence and scaling notes: counted, not printed
                result = model.fit(disp="off", show_warning=False)
            self.n_unconverged_ += int(result.convergence_flag != 0)
            params = result.params
            self.mu_[g] = params["mu"] if self.mean == "constant" else 0.0
            self.omega_[g], self.a_[g], self.b_[g] = params["omega"], params["alpha[1]"], params["beta[1]"]
            self.quantile_[g] = (norm.ppf(1 - self.alpha / 2) if self.dist == "normal" else
                                 t.ppf(1 - self.alpha / 2, params["nu"]) * np.sqrt((params["nu"] - 2) / params["nu"]))
            last_residual = float(np.asarray(result.resid)[-1])
            last_variance = float(np.asarray(result.conditional_volatility)[-1]) ** 2
            self.variance_[g] = self.omega_[g] + self.a_[g] * last_residual ** 2 + self.b_[g] * last_variance
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        if X.shape[0] != 1:
            raise ValueError("garch predicts one step at a time; call update(y) between steps.")
        point = self.mu_[None, :]
        half = self.quantile_[None, :] * np.sqrt(self.variance_)[None, :]
        return Interval(lower=point - half, upper=point + half, point=point)

    def update(self, y: np.ndarray) -> None:
        residual = np.asarray(y, dtype=float)[-1] - self.mu_
        self.variance_ = self.omega_ + self.a_ * residual ** 2 + self.b_ * self.variance_

    def diagnostics(self) -> dict:
        return {"garch_unconverged_fits": int(getattr(self, "n_unconverged_", 0))}
