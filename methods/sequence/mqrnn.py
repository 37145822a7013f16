"""MQ-RNN, simplified as in the CF-RNN benchmark (Wen et al. 2017; docs/guide/methods.md).

The network gives the alpha/2 and 1 - alpha/2 quantiles of every horizon,
trained with the pinball loss on train + calibration; they are the interval, with
no calibration and no Bonferroni correction, so joint coverage falls short of
1 - alpha (a finding of the paper, not a defect). The point is their midpoint.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.sequence.base import TrainingPlan, TrainsTogether
from pibench.methods.sequence.losses import pinball_loss


@register
class MQRNN(TrainsTogether):
    """Multi-quantile RNN: the alpha/2 and 1 - alpha/2 quantiles of each horizon, pinball loss."""

    name = "mqrnn"
    may_cross = True  # its bounds are estimated apart; diagnostics count the crossings

    def _training_plan(self, train: SetData, calibration: SetData | None) -> TrainingPlan:
        levels = (self.alpha / 2, 1 - self.alpha / 2)
        return TrainingPlan(train if calibration is None else train.concat(calibration), outputs_per_step=2,
                            loss_fn=lambda pred, y: pinball_loss(pred, y, levels))

    def fit(self, train: SetData, calibration: SetData | None = None) -> MQRNN:
        self.check_params()
        self.net_ = self._train(**vars(self._training_plan(train, calibration)))
        return self

    def predict_interval(self, x: np.ndarray) -> Interval:
        quantiles = self._outputs(self.net_, x)  # (m, H, 2)
        lower, upper = quantiles[..., 0], quantiles[..., 1]
        self.n_crossed_ = int((lower > upper).sum())
        return Interval(lower, upper, (lower + upper) / 2)

    def diagnostics(self) -> dict:
        return {**super().diagnostics(), "n_crossed_quantiles": getattr(self, "n_crossed_", 0)}
