"""Standardisation with training-window statistics (refit whenever the model is refit)."""

from __future__ import annotations

import numpy as np


class Standardizer:
    """z = (v - mean) / std over axis 0; constant columns get std 1 so they map to 0."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def fit(self, values: np.ndarray) -> Standardizer:
        if self.enabled:
            self.mean_ = values.mean(axis=0)
            std = values.std(axis=0)
            self.std_ = np.where(std > 0, std, 1.0)
        else:
            self.mean_, self.std_ = 0.0, 1.0
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        return (values - self.mean_) / self.std_

    def inverse_transform(self, values: np.ndarray) -> np.ndarray:
        return values * self.std_ + self.mean_
