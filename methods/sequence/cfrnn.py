"""CF-RNN: conformal forecasting RNN (Stankeviciute, Alaa & van der Schaar 2021; docs/guide/methods.md).

The network (MSE, all H horizons at once) trains on the training sequences; the
absolute errors |y_h - y_hat_h| of the calibration sequences give, per horizon,
the critical score c_h at the Bonferroni level min((n + 1)(1 - alpha/H)/n, 1), and
the interval is y_hat_h +/- c_h: joint coverage >= 1 - alpha for exchangeable
sequences when (n + 1)(1 - alpha/H) <= n, i.e. n >= H/alpha - 1 calibration
sequences. With fewer the level is capped at 1 (the largest score; CF-RNN's and
the paper's convention, kept for its tables) and the guarantee is gone: records
say so (``joint_guarantee``, beside the uncapped ``bonferroni_level``).
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.calibration.bonferroni import bonferroni_critical_scores, uncapped_bonferroni_level
from pibench.methods.sequence.base import TrainingPlan, TrainsTogether


@register
class CFRNN(TrainsTogether):
    """Conformal forecasting RNN: LSTM forecaster, Bonferroni split-conformal widths per horizon."""

    name = "cfrnn"

    def _training_plan(self, train: SetData, calibration: SetData | None) -> TrainingPlan:
        if calibration is None or calibration.n < 1:
            raise ValueError("cfrnn calibrates on held-out sequences: give a calibration split.")
        return TrainingPlan(train)

    def fit(self, train: SetData, calibration: SetData | None = None) -> CFRNN:
        self.check_params()
        self.net_ = self._train(**vars(self._training_plan(train, calibration)))
        assert calibration is not None  # the plan asked for it
        scores = np.abs(calibration.y - self._outputs(self.net_, calibration.x))
        self.critical_scores_ = bonferroni_critical_scores(scores, self.alpha)
        self.bonferroni_level_ = uncapped_bonferroni_level(len(scores), self.alpha, scores.shape[1])
        return self

    def diagnostics(self) -> dict:
        """The uncapped Bonferroni level, and whether the joint guarantee holds (the level is at most 1)."""
        level = getattr(self, "bonferroni_level_", None)
        return super().diagnostics() | (
            {} if level is None else {"bonferroni_level": level, "joint_guarantee": level <= 1.0})

    def predict_interval(self, x: np.ndarray) -> Interval:
        point = self._outputs(self.net_, x)
        return Interval(point - self.critical_scores_, point + self.critical_scores_, point)
