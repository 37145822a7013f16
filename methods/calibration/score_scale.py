"""Normalized conformity scores: the residual divided by a causal scale estimate (Lei et al. 2018's
locally weighted scores, with an online scale).

The scale of series g is an exponentially weighted moving average of its absolute
residuals, s <- decay * s + (1 - decay) * |r|, started at the power of two nearest the
mean absolute residual of the first calibration part. A calibration residual r_i is scored r_i / s_i with s_i the
scale before it; at test step t the interval is y_hat_t +/- q_t s_t, q_t whatever the
method's calibrator makes of the scores, and the revealed |y_t - y_hat_t| / s_t is the
score the calibrator sees. The scale is updated after every revealed step, so it only
ever uses the past. With ``decay = 1`` the scale stays at its start, a power of two, so
every score and width is the absolute method's times an exact constant: the intervals
are the absolute-score method's, bit for bit.
"""

from __future__ import annotations

import numpy as np


class EWMAScale:
    """The running scale of G series (module doc)."""

    def __init__(self, decay: float):
        self.decay = float(decay)
        self.value: np.ndarray | None = None

    def _step(self, scale: np.ndarray, abs_residual: np.ndarray) -> np.ndarray:
        return self.decay * scale + (1.0 - self.decay) * abs_residual

    def score(self, residuals: np.ndarray) -> np.ndarray:
        """Calibration scores r_i / s_i (n_cal, G) of a window's residuals in time order. The first window
        starts the scale at their mean; later windows score from the scale the stream has reached."""
        residuals = np.asarray(residuals, dtype=float)
        if self.value is None:  # the power of two nearest the mean: dividing and multiplying by it is exact
            mean = residuals.mean(axis=0)
            scale = np.where(mean > 0, 2.0 ** np.round(np.log2(np.where(mean > 0, mean, 1.0))), 1.0)
        else:
            scale = self.value
        scores = np.empty_like(residuals)
        for i, r in enumerate(residuals):
            scores[i] = r / scale
            scale = self._step(scale, r)
        if self.value is None:
            self.value = scale
        return scores

    def update(self, abs_residual: np.ndarray) -> None:
        """After a revealed step: fold |y - y_hat| (G,) into the scale."""
        self.value = self._step(self.value, abs_residual)

    def current(self) -> np.ndarray:
        """(G,) the scale for the next step (kept above the smallest positive float: a divisor)."""
        return np.maximum(self.value, np.finfo(float).tiny)
