"""Per-group ordinary least squares with an intercept: a fast, deterministic base forecaster."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class LinearForecaster:
    """y_g = [1, x_g] beta_g fitted by least squares for each of the G groups."""

    def fit(self, X: np.ndarray, y: np.ndarray, seeds: Sequence[int] | None = None) -> LinearForecaster:
        """X (n, G, p), y (n, G). ``seeds`` is accepted for interface parity and unused."""
        design = np.concatenate([np.ones(X.shape[:2] + (1,)), X], axis=2)  # (n, G, p+1)
        self.coef_ = np.stack(
            [np.linalg.lstsq(design[:, g], y[:, g], rcond=None)[0] for g in range(X.shape[1])]
        )  # (G, p+1)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (m, G, p) -> (m, G)."""
        return self.coef_[None, :, 0] + np.einsum("mgp,gp->mg", X, self.coef_[:, 1:])
