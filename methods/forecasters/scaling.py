"""Standardisation with training-window statistics (refit whenever the model is refit)."""

from __future__ import annotations

import warnings

import numpy as np


class Standardizer:
    """z = (v - mean) / std over axis 0; constant columns get std 1 so they map to 0.

    NaN entries (the end padding of variable-length sequences) are left out of the
    statistics and stay NaN; a column with no value at all maps by (v - 0) / 1.
    """

    mean_: np.ndarray | float
    std_: np.ndarray | float

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def fit(self, values: np.ndarray) -> Standardizer:
        if self.enabled and np.isnan(values).any():
            observed = (~np.isnan(values)).any(axis=0)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, handled below
                mean, std = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
            self.mean_ = np.where(observed, mean, 0.0)
            self.std_ = np.where(observed & (std > 0), std, 1.0)
        elif self.enabled:
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
