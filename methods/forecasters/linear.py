"""Ordinary least squares with an intercept per (window, group): a fast, deterministic base forecaster."""

from __future__ import annotations

import numpy as np


class LinearForecaster:
    """y = [1, x] beta, fitted by least squares for each of F windows x G groups."""

    def fit(self, X: np.ndarray, y: np.ndarray, seeds: np.ndarray | None = None) -> LinearForecaster:
        """X (F, n, G, p), y (F, n, G). ``seeds`` is accepted for interface parity and unused."""
        F, n, G, p = X.shape
        design = np.concatenate([np.ones((F, n, G, 1)), X], axis=3)
        self.coef_ = np.empty((F, G, p + 1))
        for f in range(F):
            for g in range(G):
                self.coef_[f, g] = np.linalg.lstsq(design[f, :, g], y[f, :, g], rcond=None)[0]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (F, m, G, p) -> (F, m, G)."""
        return self.coef_[:, None, :, 0] + np.einsum("fmgp,fgp->fmg", X, self.coef_[:, :, 1:])
