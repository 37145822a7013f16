"""NexCP on a split-conformal base forecaster (Barber, Candes, Ramdas & Tibshirani 2023; SPEC §3.5)."""

from __future__ import annotations

import numpy as np

from pibench.methods.base import register
from pibench.methods.calibration.nexcp import nexcp_width
from pibench.methods.param_checks import in_range
from pibench.methods.split_conformal import SplitConformalMethod


@register
class NexCP(SplitConformalMethod):
    """Weighted split conformal: calibration residuals weighted by decay^(age)."""

    name = "nexcp"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, decay: float = 0.99, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.decay = decay

    def _check_param_values(self) -> None:
        super()._check_param_values()
        in_range("decay", self.decay, 0, 1, closed_high=True)

    def _reset_online_state(self, data) -> None:
        self.n_infinite_ = 0

    def _on_refit(self, data) -> None:
        self.width_ = nexcp_width(self.calibration_scores_, self.alpha, self.decay)

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        self.n_infinite_ += int(np.isinf(self.width_).sum())
        return self.width_, np.zeros(self.width_.shape, dtype=bool)

    def diagnostics(self) -> dict:
        return {"n_infinite_widths": int(getattr(self, "n_infinite_", 0))}
