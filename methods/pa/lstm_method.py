"""PA on the LSTM for sets of sequences: the paper's "PA-RNN" of section 5.3 (SPEC §3.1, §1.2).

The sequence network of the set baselines (:mod:`pibench.methods.sequence.network`)
trains on train + calibration with PA's schedule: Adam for the initial phase
(t < T1), then SGHMC with the annealed mixture Gaussian prior; it is sparsified at
the posterior-inclusion threshold and refined on the kept weights. Each horizon
h gets sigma2_hat_h from the training residuals and varsigma2_h(x) from the
diagonal of G' (-Hess l_n)^{-1} G, and the interval is
mu_h(x) +/- z_{alpha/(2H)} sqrt(varsigma2_h(x)/n + sigma2_hat_h): the Bonferroni
value makes the H intervals hold jointly (``band = "bonferroni"``, the paper's).
Beyond the paper, ``band = "joint"`` uses PA's whole H x H predictive covariance of
each sequence and the quantile of the max of the correlated standardised normal
(:mod:`pibench.methods.pa.joint_band`): joint coverage 1 - alpha under the
asymptotics instead of at least 1 - alpha, so a narrower band when the horizons'
errors are correlated. The network fits standardised targets (SGHMC's step is not
scale-free) and the intervals are mapped back to raw units.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.pa.intervals import CurvatureKind, HessianKind, fit_asymptotic_normal
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.param_checks import non_negative_int, one_of
from pibench.methods.sequence.base import SequenceMethod


@register
class PALSTM(SequenceMethod):
    """Prior-annealed sparse LSTM with multi-horizon (Bonferroni) asymptotic-normal intervals."""

    name = "pa_lstm"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, hidden: int = 20, epochs: int = 100,
                 lr: float = 0.01, batch_size: int = 150, standardize_target: bool = True, momentum: float = 0.9,
                 T1: int = 50, T2: int = 55, T3: int = 80, s1: float = 0.1, s0_init: float = 1e-7,
                 s0_end: float = 1e-8, lam: float = 1e-7, tau: float = 1.0, refine_epochs: int = 20,
                 hessian: str = "ggn", curvature: str = "auto", band: str = "bonferroni"):
        super().__init__(alpha=alpha, random_state=random_state, hidden=hidden, epochs=epochs, lr=lr,
                         batch_size=batch_size, standardize_target=standardize_target)
        self.momentum, self.T1, self.T2, self.T3 = momentum, T1, T2, T3
        self.s1, self.s0_init, self.s0_end, self.lam, self.tau = s1, s0_init, s0_end, lam, tau
        self.refine_epochs, self.hessian, self.curvature = refine_epochs, hessian, curvature
        self.band = band

    def _settings(self) -> PASettings:
        return PASettings(epochs=self.epochs, lr=self.lr, momentum=self.momentum, batch_size=self.batch_size,
                          T1=self.T1, T2=self.T2, T3=self.T3, s1=self.s1, s0_init=self.s0_init,
                          s0_end=self.s0_end, lam=self.lam, tau=self.tau, refine_epochs=self.refine_epochs,
                          initial_optimizer="adam", prior_step="implicit")

    def _check_param_values(self) -> None:
        super()._check_param_values()
        non_negative_int("refine_epochs", self.refine_epochs)
        one_of("hessian", self.hessian, ("auto", "exact", "ggn"))
        one_of("curvature", self.curvature, ("auto", "dense", "matrix_free"))
        one_of("band", self.band, ("bonferroni", "joint"))
        self._settings().check()

    def fit(self, train: SetData, calibration: SetData | None = None) -> PALSTM:
        self.check_params()
        data = train if calibration is None else train.concat(calibration)
        x, y = self._scale(data)
        net = self._new_network(data)
        masks = train_pa(net, x, y, self._settings(), seed=self._seed())
        # both strings were checked against the kinds by check_params
        hessian, curvature = cast(HessianKind, self.hessian), cast(CurvatureKind, self.curvature)
        self.intervals_ = fit_asymptotic_normal(net.unrolled(), masks, x.double(), y.double(), hessian=hessian,
                                                curvature=curvature)
        return self

    def predict_interval(self, x: np.ndarray) -> Interval:
        predict = self.intervals_.predict_joint if self.band == "joint" else self.intervals_.predict
        point, lower, upper = (self._to_raw(np.asarray(a, dtype=float))
                               for a in predict(self._inputs(x).double(), self.alpha))
        return Interval(lower, upper, point)

    def diagnostics(self) -> dict:
        fitted = getattr(self, "intervals_", None)
        if fitted is None:
            return {}
        out = {"kept_weights": int(fitted.n_kept), "identified_weights": int(fitted.diagnostics["rank"]),
               "total_weights": int(fitted.flat.n_total), "hessian": fitted.diagnostics["hessian"],
               "curvature": fitted.diagnostics["curvature"]}
        if "cg" in fitted.diagnostics:  # matrix-free: how many conjugate-gradient solves did not converge
            out["cg_not_converged"] = fitted.diagnostics["cg"]["not_converged"]
        return out
