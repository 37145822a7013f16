"""Conformal PID control (Angelopoulos, Candes & Tibshirani, NeurIPS 2023): tracker + integrator (+ scorecaster).

q_{t+1} = s_hat_{t+1} + q^P_{t+1} + r_t(sum_{i <= t} (err_i - alpha)), with the quantile
tracker q^P, the saturation r_t(x) = K_I tan(x log t / (t C_sat)) and, with
``scorecaster = "theta"``, a Theta-model forecast s_hat of the next score
(:mod:`pibench.methods.calibration.pid`, :mod:`pibench.methods.calibration.scorecaster`).
"""

from __future__ import annotations

from pibench.methods.base import register
from pibench.methods.calibration.pid import ConformalPID as PIDCalibrator
from pibench.methods.calibration.scorecaster import ThetaScorecaster
from pibench.methods.online_radius import OnlineRadiusMethod
from pibench.methods.param_checks import one_of, positive, positive_int


@register
class ConformalPIDMethod(OnlineRadiusMethod):
    """Conformal PID control: quantile tracking, a saturating integrator, an optional scorecaster."""

    name = "conformal_pid"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, eta: float = 0.1, window: int = 100,
                 c_sat: float = 5.0, k_i: float | None = None, scorecaster: str = "none", refit_every: int = 7,
                 **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.eta, self.window, self.c_sat, self.k_i = eta, window, c_sat, k_i
        self.scorecaster, self.refit_every = scorecaster, refit_every

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive("eta", self.eta)
        positive("c_sat", self.c_sat)
        if self.k_i is not None:
            positive("k_i", self.k_i)
        one_of("scorecaster", self.scorecaster, ("none", "theta"))
        positive_int("window", self.window)
        positive_int("refit_every", self.refit_every)

    def _new_calibrator(self, calibration_scores):
        caster = ThetaScorecaster(calibration_scores, self.refit_every) if self.scorecaster == "theta" else None
        return PIDCalibrator(calibration_scores, self.alpha, self.eta, self.window, integrator=True, c_sat=self.c_sat,
                             k_i=self.k_i, scorecaster=caster)
