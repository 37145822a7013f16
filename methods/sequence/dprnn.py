"""DP-RNN: Monte Carlo dropout (Gal & Ghahramani 2016; docs/guide/methods.md).

Dropout p on the LSTM's last hidden state, MSE, trained on train + calibration;
at prediction dropout stays on and ``n_passes`` stochastic passes give, per
horizon, the mean and standard deviation (of the passes, ddof 0); the interval is
mean +/- z_{alpha/2} std, with no Bonferroni correction. It ignores the noise in
y, so it under-covers badly (a finding of the paper, not a defect).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import norm

from pibench.data_loaders.problems import SetData
from pibench.methods.base import Interval, register
from pibench.methods.param_checks import in_range, positive_int
from pibench.methods.sequence.base import TrainingPlan, TrainsTogether


@register
class DPRNN(TrainsTogether):
    """MC-dropout RNN: mean +/- z_{alpha/2} std over stochastic forward passes."""

    name = "dprnn"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, dropout: float = 0.5, n_passes: int = 100,
                 **network_params):
        super().__init__(alpha=alpha, random_state=random_state, **network_params)
        self.dropout, self.n_passes = dropout, n_passes

    def _check_param_values(self) -> None:
        super()._check_param_values()
        in_range("dropout", self.dropout, 0, 1, closed_low=True)
        positive_int("n_passes", self.n_passes)

    def _training_plan(self, train: SetData, calibration: SetData | None) -> TrainingPlan:
        return TrainingPlan(train if calibration is None else train.concat(calibration), dropout=self.dropout)

    def fit(self, train: SetData, calibration: SetData | None = None) -> DPRNN:
        self.check_params()
        self.net_ = self._train(**vars(self._training_plan(train, calibration)))
        return self

    def mc_passes(self, x: np.ndarray) -> np.ndarray:
        """(n_passes, m, H) outputs with dropout on, from a generator seeded by the task's seed.

        Dropout acts on the LSTM's last state only, so the LSTM reads x once and each pass redraws the
        mask and applies the head: the same masks, in the same order, as ``n_passes`` whole forward
        passes, and the same bytes (the LSTM without dropout draws nothing), at 1 / ``n_passes`` of the cost.
        """
        net = self.net_.train()
        torch.manual_seed(self._seed() + 1)
        try:
            with torch.no_grad():
                state = net.encode(self._inputs(x))
                return np.stack([self._to_raw(net.readout(state).double().numpy()) for _ in range(self.n_passes)])
        finally:
            net.eval()

    def predict_interval(self, x: np.ndarray) -> Interval:
        passes = self.mc_passes(x)
        mean, std = passes.mean(axis=0), passes.std(axis=0)
        half = norm.ppf(1 - self.alpha / 2) * std
        return Interval(mean - half, mean + half, mean)
