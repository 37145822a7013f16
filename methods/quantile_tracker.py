"""Quantile tracking, the P part of conformal PID (Angelopoulos, Candes & Tibshirani, NeurIPS 2023).

q_{t+1} = q_t + eta_t (err_t - alpha), err_t = 1{s_t > q_t}, eta_t = eta B_t with B_t the
range of the last ``window`` scores; q_1 = split conformal's radius on the first window.
"""

from __future__ import annotations

from pibench.methods.base import register
from pibench.methods.calibration.pid import ConformalPID
from pibench.methods.online_radius import OnlineRadiusMethod
from pibench.methods.param_checks import positive, positive_int


@register
class QuantileTracker(OnlineRadiusMethod):
    """Online quantile tracking of the radius (conformal PID's P part)."""

    name = "quantile_tracker"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, eta: float = 0.1, window: int = 100, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.eta, self.window = eta, window

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive("eta", self.eta)
        positive_int("window", self.window)

    def _new_calibrator(self, calibration_scores):
        return ConformalPID(calibration_scores, self.alpha, self.eta, self.window)
