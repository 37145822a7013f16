"""Online conformal prediction with decaying step sizes (Angelopoulos, Barber & Bates 2024).

The quantile tracker's update q_{t+1} = q_t + eta_t (err_t - alpha) with eta_t =
eta B_t t^(-1/2 - epsilon): long-run coverage under any sequence, and convergence of
q_t to the score quantile when the scores are i.i.d.
"""

from __future__ import annotations

from pibench.methods.base import register
from pibench.methods.calibration.pid import ConformalPID
from pibench.methods.online_radius import OnlineRadiusMethod
from pibench.methods.param_checks import in_range, positive, positive_int


@register
class ACIDecay(OnlineRadiusMethod):
    """Quantile tracking with step sizes decaying as t^(-1/2 - epsilon)."""

    name = "aci_decay"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, eta: float = 0.1, epsilon: float = 0.1,
                 window: int = 100, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.eta, self.epsilon, self.window = eta, epsilon, window

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive("eta", self.eta)
        in_range("epsilon", self.epsilon, 0, 0.5)
        positive_int("window", self.window)

    def _new_calibrator(self, calibration_scores):
        return ConformalPID(calibration_scores, self.alpha, self.eta, self.window, decay=self.epsilon)
