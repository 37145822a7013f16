"""SAOCP: strongly adaptive online conformal prediction (Bhatnagar, Wang, Xiong & Bai, ICML 2023)."""

from __future__ import annotations

from pibench.methods.base import register
from pibench.methods.calibration.online_quantile import SAOCP as SAOCPCalibrator
from pibench.methods.online_radius import OnlineRadiusMethod
from pibench.methods.param_checks import positive_int


@register
class SAOCP(OnlineRadiusMethod):
    """SF-OGD experts of geometric lifetimes, mixed by coin betting (strongly adaptive regret)."""

    name = "saocp"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lifetime: int = 8, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.lifetime = lifetime

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive_int("lifetime", self.lifetime)

    def _new_calibrator(self, calibration_scores):
        return SAOCPCalibrator(calibration_scores, self.alpha, self.lifetime)
