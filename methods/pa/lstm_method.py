"""PA on the LSTM for sets of sequences: the paper's "PA-RNN" of section 5.3
(docs/guide/methods.md, docs/guide/datasets.md).

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
scale-free) and the intervals are mapped back to raw units. On a GPU the runner trains the
seeds of one configuration as one stack (:meth:`PALSTM.fit_together`); each fit then forms
its own intervals.

``calibration = "conformal"`` (conformalised PA, beyond the paper) keeps PA's shape and
fixes its scale with a finite-sample guarantee: the network trains on the training
sequences only (as CF-RNN's does); each calibration sequence scores
s = max_h |y_h - mu_h(x)| / sd_h(x), sd_h(x) = sqrt(varsigma2_h(x)/n + sigma2_hat_h) PA's
predictive sd; the band is mu_h(x) +/- q sd_h(x) with q the ceil((n_cal + 1)(1 - alpha))-th
smallest score (:func:`~pibench.methods.calibration.quantile.conformal_quantile`). For
exchangeable sequences all H intervals hold jointly with probability >= 1 - alpha, without
Bonferroni and whatever PA's asymptotics get wrong (split conformal with a normalized
max score: Lei et al. 2018; Stankeviciute et al. 2021 use the unnormalized per-horizon one).
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np
import torch

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.calibration.quantile import conformal_quantile
from pibench.methods.pa.intervals import CurvatureKind, HessianKind, fit_asymptotic_normal
from pibench.methods.pa.stacked_lstm import StackedPALSTMs
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.param_checks import non_negative_int, one_of
from pibench.methods.sequence.base import SequenceMethod, set_fingerprint
from pibench.methods.sequence.network import SequenceNet
from pibench.methods.sequence.stacked import refuse_padded


@register
class PALSTM(SequenceMethod):
    """Prior-annealed sparse LSTM with multi-horizon (Bonferroni) asymptotic-normal intervals."""

    name = "pa_lstm"
    #: left by :meth:`fit_together` for the next fit: (the training data's fingerprint, network, masks)
    trained_together_: tuple[str, SequenceNet, dict[str, torch.Tensor]]

    def __init__(self, alpha: float = 0.1, random_state: int = 0, hidden: int = 20, epochs: int = 100,
                 lr: float = 0.01, batch_size: int = 150, standardize_target: bool = True, momentum: float = 0.9,
                 T1: int = 50, T2: int = 55, T3: int = 80, s1: float = 0.1, s0_init: float = 1e-7,
                 s0_end: float = 1e-8, lam: float = 1e-7, tau: float = 1.0, refine_epochs: int = 20,
                 hessian: str = "ggn", curvature: str = "auto", band: str = "bonferroni",
                 calibration: str = "asymptotic"):
        super().__init__(alpha=alpha, random_state=random_state, hidden=hidden, epochs=epochs, lr=lr,
                         batch_size=batch_size, standardize_target=standardize_target)
        self.momentum, self.T1, self.T2, self.T3 = momentum, T1, T2, T3
        self.s1, self.s0_init, self.s0_end, self.lam, self.tau = s1, s0_init, s0_end, lam, tau
        self.refine_epochs, self.hessian, self.curvature = refine_epochs, hessian, curvature
        self.band, self.calibration = band, calibration

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
        one_of("calibration", self.calibration, ("asymptotic", "conformal"))
        if self.calibration == "conformal" and self.band != "bonferroni":
            raise ValueError('calibration="conformal" makes its own joint band from the calibration scores; '
                             'leave band at its default ("bonferroni").')
        self._settings().check()

    def fit(self, train: SetData, calibration: SetData | None = None) -> PALSTM:
        self.check_params()
        conformal = self.calibration == "conformal"
        if conformal and (calibration is None or calibration.n < 1):
            raise ValueError('pa_lstm with calibration="conformal" calibrates on held-out sequences: give a '
                             "calibration split.")
        data = self._training_data(train, calibration)
        x, y = self._scale(data)
        tic = time.perf_counter()
        from_cell = self._take_from_cell(set_fingerprint(data))
        self.trained_in_cell_ = from_cell is not None
        if from_cell is not None:
            net, masks = from_cell
        else:
            net = self._new_network(data)
            masks = train_pa(net, x, y, self._settings(), seed=self._seed())  # hands the network back on the CPU
        trained = time.perf_counter()
        # both strings were checked against the kinds by check_params
        hessian, curvature = cast(HessianKind, self.hessian), cast(CurvatureKind, self.curvature)
        self.intervals_ = fit_asymptotic_normal(net.unrolled(), masks, x.double(), y.double(), hessian=hessian,
                                                curvature=curvature)
        # where a fit's time goes (on a GPU the dense curvature of a large LSTM may outweigh its training;
        # a cell's training is its record's cell["train_seconds"])
        self.phase_seconds_ = {**({} if from_cell is not None else {"train": trained - tic}),
                               "intervals": time.perf_counter() - trained}
        self.__dict__.pop("conformal_quantile_", None)  # a refit without calibration leaves none behind
        if conformal:
            assert calibration is not None  # checked above
            point, sd = self._point_and_sd(calibration.x)
            self.calibration_scores_ = np.max(np.abs(calibration.y - point) / sd, axis=1)
            self.conformal_quantile_ = conformal_quantile(self.calibration_scores_, self.alpha)
        return self

    def _training_data(self, train: SetData, calibration: SetData | None) -> SetData:
        """What the network trains on: train and calibration, or train alone when conformal calibration
        holds the calibration sequences out."""
        return train if self.calibration == "conformal" or calibration is None else train.concat(calibration)

    @classmethod
    def fit_together(cls, methods: list[PALSTM], datas: list[tuple[SetData, SetData | None]]) -> None:
        """Train the networks of ``methods[b].fit(*datas[b])`` as one stack (a cell of seeds on a GPU); each
        fit then takes its member and its masks and computes its own intervals.

        Member b keeps its seed's initial weights, minibatches and SGHMC noise
        (:class:`~pibench.methods.pa.stacked_lstm.StackedPALSTMs`), so it gets the network it would get
        alone up to the rounding of the larger kernels (the same masks in tests/test_pa_lstm_cells.py). The
        fits must share every setting but the seed, and their training sets their size.
        """
        cls._check_cell(methods)
        sets = [m._training_data(train, calibration) for m, (train, calibration) in zip(methods, datas)]
        scaled = [m._scale(data) for m, data in zip(methods, sets)]
        if len({x.shape for x, _ in scaled}) > 1:
            raise ValueError(f"{cls.name} fits train together only on equally many sequences of one shape.")
        refuse_padded([x for x, _ in scaled])
        stack = StackedPALSTMs([m._new_network(data) for m, data in zip(methods, sets)])
        masks = train_pa(stack, torch.stack([x for x, _ in scaled], dim=1), torch.stack([y for _, y in scaled], dim=1),
                         methods[0]._settings(), seed=[m._seed() for m in methods])
        if not all(bool(torch.isfinite(p).all()) for p in stack.parameters()):  # one diverged: it spoils the others
            raise ValueError("a member of the stack diverged (inf or NaN), which reaches its cell-mates through the "
                             "shared products; the fits train alone.")
        for b, (m, data) in enumerate(zip(methods, sets)):
            m.trained_together_ = (set_fingerprint(data), stack.member(b), stack.member_masks(masks, b))

    def _point_and_sd(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(m, H) PA's point forecasts and predictive sd sqrt(varsigma2_h(x)/n + sigma2_hat_h), in target units."""
        point, _, var_total = self.intervals_.predictive_variance(self._inputs(x).double())
        std = np.asarray(self.y_scaler_.std_, dtype=float)
        return self._to_raw(np.asarray(point, dtype=float)), np.sqrt(np.asarray(var_total, dtype=float)) * std

    def predict_interval(self, x: np.ndarray) -> Interval:
        if self.calibration == "conformal":
            point, sd = self._point_and_sd(x)
            half = self.conformal_quantile_ * sd
            return Interval(point - half, point + half, point)
        predict = self.intervals_.predict_joint if self.band == "joint" else self.intervals_.predict
        point, lower, upper = (self._to_raw(np.asarray(a, dtype=float))
                               for a in predict(self._inputs(x).double(), self.alpha))
        return Interval(lower, upper, point)

    def diagnostics(self) -> dict:
        fitted = getattr(self, "intervals_", None)
        if fitted is None:
            return {}
        out = {"kept_weights": int(fitted.n_kept), "identified_weights": int(fitted.diagnostics["rank"]),
               **{f"{phase}_seconds": seconds for phase, seconds in getattr(self, "phase_seconds_", {}).items()},
               # within the intervals' time, the dense path's two big steps: forming A (the Jacobians of every
               # training sequence), and its eigendecomposition with the pseudo-inverse built from it
               **{f"{phase}_seconds": seconds for phase, seconds in fitted.diagnostics.get("seconds", {}).items()},
               "total_weights": int(fitted.flat.n_total), "hessian": fitted.diagnostics["hessian"],
               "curvature": fitted.diagnostics["curvature"], **super().diagnostics()}  # trained_in_cell
        if "cg" in fitted.diagnostics:  # matrix-free: how many conjugate-gradient solves did not converge
            out["cg_not_converged"] = fitted.diagnostics["cg"]["not_converged"]
        if hasattr(self, "conformal_quantile_"):  # q beside Bonferroni's z: how far PA's own scale was off
            out["conformal_quantile"] = self.conformal_quantile_
            out["bonferroni_z"] = fitted.critical_value(self.alpha)
        return out
