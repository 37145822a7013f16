"""ACI on a split-conformal base forecaster (docs/guide/methods.md; Gibbs & Candes 2021)."""

from __future__ import annotations

import numpy as np

from pibench.methods.base import register
from pibench.methods.calibration.aci import aci_errors, aci_next_alpha, aci_width
from pibench.methods.split_conformal import SplitConformalMethod


@register
class ACI(SplitConformalMethod):
    """Adaptive conformal inference (gamma = 0 is online split conformal).

    alpha_t persists across the online refits: ``refit`` changes the scores, only
    ``fit`` restarts alpha_t at alpha.
    """

    name = "aci"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, gamma: float = 0.01, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.gamma = gamma

    def _check_param_values(self) -> None:
        super()._check_param_values()
        if not self.gamma >= 0:
            raise ValueError(f"gamma={self.gamma} must be >= 0 (gamma = 0 is split conformal).")

    def _reset_online_state(self, data) -> None:
        self.alpha_t_ = np.full(data.y.shape[1], float(self.alpha))
        self.alpha_path_: list[np.ndarray] = []

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        return aci_width(self.sorted_scores_, self.alpha_t_)

    def _observe(self, y: np.ndarray) -> None:
        lower, upper, empty = self.last_
        err = aci_errors(np.asarray(y, dtype=float), lower, upper, empty)
        for e in err:  # one row per revealed step, in time order
            self.alpha_path_.append(self.alpha_t_)
            self.alpha_t_ = aci_next_alpha(self.alpha_t_, self.alpha, self.gamma, e)
