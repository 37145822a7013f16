"""Shared skeleton of split-conformal methods on a sliding window (SPEC §2).

The window is split sequentially: the first half trains the base forecaster,
the second half gives the absolute-residual scores |y - y_hat|. Subclasses turn
the sorted scores into half-widths (ACI, NexCP, ...).
"""

from __future__ import annotations

import numpy as np

from data_loaders.problems import SeriesData
from methods.base import Interval, IntervalMethod
from methods.forecasters.registry import make_forecaster


class SplitConformalMethod(IntervalMethod):
    """Base forecaster on the first part of the window, scores on the rest."""

    shape = "series"

    def __init__(
        self,
        alpha: float = 0.1,
        random_state: int = 0,
        base: str = "mlp",
        calibration_fraction: float = 0.5,
        hidden: int = 100,
        epochs: int = 300,
        lr: float = 1e-3,
        momentum: float = 0.9,
        batch_size: int = 100,
    ):
        super().__init__(alpha=alpha, random_state=random_state)
        self.base = base
        self.calibration_fraction = calibration_fraction
        self.hidden, self.epochs, self.lr = hidden, epochs, lr
        self.momentum, self.batch_size = momentum, batch_size

    def _split(self, n: int) -> int:
        if not 0 < self.calibration_fraction < 1:
            raise ValueError(f"calibration_fraction={self.calibration_fraction} must lie in (0, 1).")
        n_train = int(round(n * (1 - self.calibration_fraction)))
        if n_train < 2 or n - n_train < 2:
            raise ValueError(
                f"a window of {n} steps is too short to split into proper-training and "
                "calibration parts of at least 2 steps each; use a longer window."
            )
        return n_train

    def refit(self, data: SeriesData) -> SplitConformalMethod:
        """Train the base model on the first part of the window, score the rest."""
        self._check_alpha()
        n_train = self._split(data.n_steps)
        params = dict(hidden=self.hidden, epochs=self.epochs, lr=self.lr, momentum=self.momentum,
                      batch_size=self.batch_size)
        self.n_fits_ = getattr(self, "n_fits_", 0) + 1
        # a fresh, reproducible seed per fit and per group
        seeds = np.random.SeedSequence([self.random_state, self.n_fits_]).generate_state(data.y.shape[1])
        self.forecaster_ = make_forecaster(self.base, **params).fit(
            data.X[:n_train], data.y[:n_train], seeds=[int(s) for s in seeds]
        )
        residuals = np.abs(data.y[n_train:] - self.forecaster_.predict(data.X[n_train:]))
        self.sorted_scores_ = np.sort(residuals, axis=0)  # (n_cal, G)
        return self

    def fit(self, data: SeriesData) -> SplitConformalMethod:
        self.n_fits_ = 0
        self._reset_online_state(data.y.shape[1])
        return self.refit(data)

    def _reset_online_state(self, n_groups: int) -> None:
        """Start the online state afresh (nothing by default)."""

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        """(G,) half-widths and (G,) empty-interval mask for the next step."""
        raise NotImplementedError

    def predict_interval(self, X: np.ndarray) -> Interval:
        point = self.forecaster_.predict(X)
        width, empty = self._half_width()
        self.last_ = (point - width, point + width, np.broadcast_to(empty, point.shape))
        return Interval(lower=point - width, upper=point + width, point=point)
