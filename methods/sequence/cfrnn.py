"""CF-RNN: conformal forecasting RNN (Stankeviciute, Alaa & van der Schaar 2021; SPEC §3.6).

The network (MSE, all H horizons at once) trains on the training sequences; the
absolute errors |y_h - y_hat_h| of the calibration sequences give, per horizon,
the critical score c_h at the Bonferroni level min((n + 1)(1 - alpha/H)/n, 1), and
the interval is y_hat_h +/- c_h: joint coverage >= 1 - alpha for exchangeable
sequences.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.calibration.bonferroni import bonferroni_critical_scores
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
        return self

    def predict_interval(self, x: np.ndarray) -> Interval:
        point = self._outputs(self.net_, x)
        return Interval(point - self.critical_scores_, point + self.critical_scores_, point)
