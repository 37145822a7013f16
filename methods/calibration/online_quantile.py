"""Online quantile regression of the radius: SF-OGD and SAOCP (Bhatnagar, Wang, Xiong & Bai, ICML 2023).

Both learn the radius delta_t of the interval y_hat +/- delta_t by online descent on
the pinball loss of the scores at level 1 - alpha,

    rho(s, delta) = (1 - alpha)(s - delta) if s > delta else alpha (delta - s),
    d rho / d delta = -(1 - alpha) if s > delta else alpha,

vectorised over the G series of a panel. Both start from the calibration scores of
the first window: the scale D = sqrt(3) max |score|, and a pass over those scores.

* SF-OGD (scale-free online gradient descent, Orabona & Pal 2016):
  delta_{t+1} = max(0, delta_t - D / sqrt(3 sum_{i <= t} g_i^2) g_t).
* SAOCP (strongly adaptive, after Jun et al. 2017's coin betting for changing
  environments): at each step t a new SF-OGD expert starts from the current radius
  and lives g 2^u steps (2^u the largest power of 2 dividing t); the radius is the
  average of the live experts' radii weighted by prior(t0) = 1 / (t0^2 (1 + floor(log2 t0)))
  times max(0, w), w = z / n (1 + sum g w) the expert's coin-betting wealth fraction on
  the clipped gains g = clip((rho_meta - rho_expert) / (D max(alpha, 1 - alpha)), -1{w > 0}, 1).
"""

from __future__ import annotations

import numpy as np


def pinball_grad(scores: np.ndarray, delta: np.ndarray, alpha: float) -> np.ndarray:
    """d rho / d delta at level 1 - alpha."""
    return np.where(scores > delta, -(1.0 - alpha), alpha)


def pinball(scores: np.ndarray, delta: np.ndarray, alpha: float) -> np.ndarray:
    u = scores - delta
    return np.where(u > 0, (1.0 - alpha) * u, -alpha * u)


class ScaleFreeOGD:
    """SF-OGD radius (G,); see the module docstring."""

    def __init__(self, calibration_scores: np.ndarray, alpha: float):
        scores = np.abs(np.asarray(calibration_scores, dtype=float))
        self.alpha = alpha
        self.scale = np.sqrt(3) * np.where(scores.max(axis=0) > 0, scores.max(axis=0), 1.0)
        self.delta = np.zeros(scores.shape[1])
        self.grad_sq = np.zeros(scores.shape[1])
        for row in scores:  # warm start on the calibration scores, in time order
            self.update(row, self.delta)

    def radius(self) -> np.ndarray:
        return self.delta.copy()

    def update(self, scores: np.ndarray, radius: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, dtype=float)
        err = (scores > radius).astype(float)
        grad = pinball_grad(scores, self.delta, self.alpha)
        self.grad_sq += grad**2
        step = np.where(self.grad_sq > 0, self.scale / np.sqrt(3 * np.maximum(self.grad_sq, 1e-300)), 0.0)
        self.delta = np.maximum(0.0, self.delta - step * grad)
        return err


class SAOCP:
    """SAOCP radius (G,); see the module docstring. ``lifetime`` is g, the experts' base lifetime."""

    def __init__(self, calibration_scores: np.ndarray, alpha: float, lifetime: int = 8):
        scores = np.abs(np.asarray(calibration_scores, dtype=float))
        self.alpha, self.g = alpha, lifetime
        G = scores.shape[1]
        self.scale = np.sqrt(3) * np.where(scores.max(axis=0) > 0, scores.max(axis=0), 1.0)
        self.t = 1
        empty = np.zeros((0, G))
        self.start, self.life = np.zeros(0, dtype=int), np.zeros(0, dtype=int)  # per expert
        self.value, self.grad_sq, self.z, self.wz, self.age = empty, empty, empty, empty, np.zeros(0, dtype=int)
        for row in scores:  # warm start on the calibration scores, in time order
            self.update(row, self.radius())

    def _weights(self) -> np.ndarray:
        """(K, G) probabilities of the live experts."""
        if not len(self.start):
            return np.zeros((0, len(self.scale)))
        t0 = self.start.astype(float)
        prior = 1.0 / (t0**2 * (1 + np.floor(np.log2(t0))))
        prior = (prior / prior.sum())[:, None]
        w = np.where(self.age[:, None] > 0, self.z / np.maximum(self.age[:, None], 1) * (1 + self.wz), 0.0)
        p = prior * np.maximum(0.0, w)
        total = p.sum(axis=0)
        return np.where(total > 0, p / np.where(total > 0, total, 1.0), prior)

    def radius(self) -> np.ndarray:
        if not len(self.start):
            return np.zeros(len(self.scale))
        return (self._weights() * self.value).sum(axis=0)

    def _lifetime(self, t: int) -> int:
        u = 0
        while t % 2 == 0:
            t //= 2
            u += 1
        return self.g * 2**u

    def update(self, scores: np.ndarray, radius: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, dtype=float)
        err = (scores > radius).astype(float)
        start_value = self.radius()  # the new expert starts from the radius before the expired ones go
        alive = self.age <= self.life
        self.start, self.life, self.age = self.start[alive], self.life[alive], self.age[alive]
        self.value, self.grad_sq, self.z, self.wz = (a[alive] for a in (self.value, self.grad_sq, self.z, self.wz))
        G = len(self.scale)
        # a new expert starts from the current radius
        self.start = np.append(self.start, self.t)
        self.life = np.append(self.life, self._lifetime(self.t))
        self.age = np.append(self.age, 0)
        self.value = np.vstack([self.value, start_value[None]])
        self.grad_sq, self.z, self.wz = (np.vstack([a, np.zeros((1, G))]) for a in (self.grad_sq, self.z, self.wz))
        meta = self.radius()
        w = np.where(self.age[:, None] > 0, self.z / np.maximum(self.age[:, None], 1) * (1 + self.wz), 0.0)
        gain = (pinball(scores, meta, self.alpha) - pinball(scores, self.value, self.alpha)) / self.scale \
            / max(self.alpha, 1 - self.alpha)
        gain = np.clip(gain, -1.0 * (w > 0), 1.0)
        self.z += gain
        self.wz += gain * w
        self.age += 1
        grad = pinball_grad(scores, self.value, self.alpha)
        self.grad_sq += grad**2
        step = np.where(self.grad_sq > 0, (self.scale / np.sqrt(3)) / np.sqrt(np.maximum(self.grad_sq, 1e-300)), 0.0)
        self.value = np.maximum(0.0, self.value - step * grad)
        self.t += 1
        return err
