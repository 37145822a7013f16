"""Conformal PID control (Angelopoulos, Candes & Tibshirani, NeurIPS 2023) on a stream of scores.

The radius q_t is set before s_t is revealed; err_t = 1{s_t > q_t}. Per series
(vectorised over the G series of a panel):

* quantile tracker (P):  q_{t+1} = q_t + eta_t (err_t - alpha),  eta_t = lr * B_t,
  B_t = max - min of the last ``window`` scores, s_t included (the paper scales the step to the scores);
  with ``decay`` = epsilon, eta_t = lr * B_t * t^(-1/2 - epsilon) (Angelopoulos, Barber &
  Bates 2024, "Online conformal prediction with decaying step sizes");
* integrator (I):        + r_t(E_t),  E_t = sum_{i <= t} (err_i - alpha),
  r_t(x) = K_I tan(x log(t) / (t C_sat)), saturating (+-inf) once |x log t / (t C_sat)| >= pi/2;
* scorecaster (D):       + s_hat_{t+1}, a forecast of the next score (statsmodels' Theta model
  refitted every ``refit_every`` steps on the score history), with the tracker then
  learning the correction q_{t+1} - s_hat_{t+1}.

With the integrator and scorecaster off this is the quantile tracker, which is
ACI's update carried out on the radius instead of the level.
"""

from __future__ import annotations

import math

import numpy as np


def saturation(x: np.ndarray, t: int, c_sat: float, k_i: float) -> np.ndarray:
    """r_t(x) = K_I tan(x log(t) / (t C_sat)), +-inf where the argument leaves (-pi/2, pi/2); 0 for t <= 1."""
    if t <= 1:
        return np.zeros_like(np.asarray(x, dtype=float))
    arg = np.asarray(x, dtype=float) * math.log(t) / (t * c_sat)
    out = k_i * np.tan(np.clip(arg, -np.pi / 2 + 1e-12, np.pi / 2 - 1e-12))
    return np.where(arg >= np.pi / 2, np.inf, np.where(arg <= -np.pi / 2, -np.inf, out))


class ScoreWindow:
    """The last ``size`` scores of each of G series, for the step scale B_t = max - min."""

    def __init__(self, first: np.ndarray, size: int):
        self.values = np.asarray(first, dtype=float)[-size:].copy()  # (m, G)
        self.size = size

    def push(self, scores: np.ndarray) -> None:
        self.values = np.concatenate([self.values, np.asarray(scores, dtype=float)[None]])[-self.size:]

    def spread(self) -> np.ndarray:
        return self.values.max(axis=0) - self.values.min(axis=0)


class ConformalPID:
    """Radius q_t (G,) by the quantile tracker, optionally with the integrator and a scorecaster."""

    def __init__(self, calibration_scores: np.ndarray, alpha: float, lr: float, window: int = 100,
                 integrator: bool = False, c_sat: float = 5.0, k_i: float | None = None,
                 scorecaster=None, decay: float | None = None):
        scores = np.asarray(calibration_scores, dtype=float)  # (n, G): the first window's calibration residuals
        self.alpha, self.lr = alpha, lr
        self.history = ScoreWindow(scores, window)
        # the P part starts at split conformal's radius (with a scorecaster: at that radius's excess over the mean)
        self.tracked = np.quantile(scores, 1 - alpha, axis=0) - (scores.mean(axis=0) if scorecaster else 0.0)
        self.integrator, self.c_sat = integrator, c_sat
        self.k_i = float(np.max(scores)) if k_i is None else k_i  # the paper sets K_I to the largest score seen
        self.error_sum = np.zeros(scores.shape[1])
        self.t = 0
        self.scorecaster = scorecaster
        self.decay = decay

    def radius(self) -> np.ndarray:
        """q_t (G,): tracker + integrator + scorecaster forecast."""
        q = self.tracked.copy()
        if self.integrator:
            q = q + saturation(self.error_sum, self.t, self.c_sat, self.k_i)
        if self.scorecaster is not None:
            q = q + self.scorecaster.forecast()
        return q

    def update(self, scores: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Reveal s_t (G,) after predicting with ``radius`` = q_t; returns err_t (G,)."""
        scores = np.asarray(scores, dtype=float)
        err = (scores > radius).astype(float)
        self.history.push(scores)
        step = self.lr * self.history.spread() * ((self.t + 1) ** -(0.5 + self.decay) if self.decay is not None else 1)
        self.tracked = self.tracked + step * (err - self.alpha)
        self.error_sum += err - self.alpha
        self.t += 1
        if self.scorecaster is not None:
            self.scorecaster.observe(scores)
        return err
