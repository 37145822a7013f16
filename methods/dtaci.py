"""DtACI: ACI experts over a gamma grid, mixed by exponential weights (Gibbs & Candes, JMLR 2024).

On the shared split-conformal base fits: the interval at step t is the calibration
quantile at level 1 - alpha_t (ACI's width, :func:`pibench.methods.calibration.aci.aci_width`),
alpha_t drawn from the experts (:mod:`pibench.methods.calibration.dtaci`).
"""

from __future__ import annotations

import numpy as np

from pibench.methods.base import register
from pibench.methods.calibration.aci import aci_width
from pibench.methods.calibration.dtaci import GAMMAS, covering_level
from pibench.methods.calibration.dtaci import DtACI as DtACICalibrator
from pibench.methods.split_conformal import SplitConformalMethod


@register
class DtACI(SplitConformalMethod):
    """Dynamically-tuned ACI: exponentially weighted ACI experts over a gamma grid."""

    name = "dtaci"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, gammas: tuple = GAMMAS,
                 eta: float | None = None, sigma: float | None = None, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.gammas, self.eta, self.sigma = gammas, eta, sigma

    def _check_param_values(self) -> None:
        super()._check_param_values()
        gammas = np.asarray(self.gammas, dtype=float)
        if gammas.ndim != 1 or len(gammas) < 1 or not (gammas >= 0).all():
            raise ValueError(f"gammas={self.gammas!r} must list the experts' gammas, each >= 0.")
        if self.eta is not None and not self.eta > 0:
            raise ValueError(f"eta={self.eta} must be > 0.")
        if self.sigma is not None and not 0 <= self.sigma < 1:
            raise ValueError(f"sigma={self.sigma} must lie in [0, 1).")

    def _reset_online_state(self, data) -> None:
        self.experts_ = DtACICalibrator(data.y.shape[1], self.alpha, self.gammas, self.eta, self.sigma,
                                        seed=int(self.random_state))

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        return aci_width(self.sorted_scores_, self.experts_.level())

    def _observe(self, y: np.ndarray) -> None:
        scores = self.revealed_scores(y)
        self.experts_.update(covering_level(self.sorted_scores_, scores))
