"""Dynamically-tuned ACI (Gibbs & Candes, JMLR 2024, "Conformal inference for online prediction with
arbitrary distribution shifts", Algorithm 1), vectorised over the G series of a panel.

K ACI experts with step sizes gamma_k keep levels alpha_t^k; at each step the
interval uses the level alpha_t of one expert drawn with probabilities p_t (a
seeded generator). After y_t is revealed, beta_t = sup{beta : s_t <= Q(1 - beta)}
is the largest level whose interval would have covered (Q the calibration quantile);
then, per expert,

    loss_k = pinball_alpha(beta_t - alpha_t^k) = alpha (beta_t - alpha_t^k) - min(0, beta_t - alpha_t^k),
    alpha_{t+1}^k = alpha_t^k + gamma_k (alpha - 1{alpha_t^k > beta_t}),
    w_k <- (1 - sigma) w_k e^{-eta loss_k} / sum_j w_j e^{-eta loss_j} + sigma / K.

Defaults are the paper's: gammas 0.001 x 2^0..7, sigma = 1 / (2 I) and
eta = sqrt(3 / I) sqrt((log(K I) + 2) / ((1 - alpha)^2 alpha^3 + alpha^2 (1 - alpha)^3)), I = 500.
"""

from __future__ import annotations

import math

import numpy as np

GAMMAS = tuple(0.001 * 2.0**k for k in range(8))


def default_eta_sigma(alpha: float, n_experts: int, interval: int = 500) -> tuple[float, float]:
    """The paper's eta and sigma for a local interval of length I."""
    eta = math.sqrt(3 / interval) * math.sqrt((math.log(n_experts * interval) + 2)
                                              / ((1 - alpha) ** 2 * alpha**3 + alpha**2 * (1 - alpha) ** 3))
    return eta, 1 / (2 * interval)


def covering_level(sorted_scores: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """beta (G,): 1 - the smallest q with Q(q) >= s, Q the linearly interpolated quantile of the sorted
    (n, G) scores: 1 below the smallest score, 0 above the largest."""
    n = sorted_scores.shape[0]
    beta = np.empty(len(scores))
    for g, s in enumerate(scores):
        column = sorted_scores[:, g]
        k = int(np.searchsorted(column, s, side="left"))  # first index with column[k] >= s
        if k == 0:
            beta[g] = 1.0
        elif k == n:
            beta[g] = 0.0
        else:
            lo, hi = column[k - 1], column[k]
            h = (k - 1) + ((s - lo) / (hi - lo) if hi > lo else 1.0)
            beta[g] = 1.0 - h / (n - 1)
    return beta


class DtACI:
    """Levels alpha_t (G,) from K ACI experts (module docstring); ``choose`` draws the expert of each series."""

    def __init__(self, n_groups: int, alpha: float, gammas=GAMMAS, eta: float | None = None,
                 sigma: float | None = None, seed: int = 0):
        self.alpha = alpha
        self.gammas = np.asarray(gammas, dtype=float)[:, None]  # (K, 1)
        K = len(self.gammas)
        default_eta, default_sigma = default_eta_sigma(alpha, K)
        self.eta = default_eta if eta is None else eta
        self.sigma = default_sigma if sigma is None else sigma
        self.levels = np.full((K, n_groups), float(alpha))
        self.weights = np.full((K, n_groups), 1.0 / K)
        self.rng = np.random.default_rng(seed)
        self.choose()

    def choose(self) -> None:
        """Draw the expert whose level each series uses next (probabilities = the weights)."""
        cumulative = np.cumsum(self.weights / self.weights.sum(axis=0), axis=0)
        u = self.rng.random(self.levels.shape[1])
        self.current = np.minimum((cumulative < u).sum(axis=0), len(self.gammas) - 1)

    def level(self) -> np.ndarray:
        return self.levels[self.current, np.arange(self.levels.shape[1])]

    def update(self, beta: np.ndarray) -> None:
        """Reveal beta_t (G,): update every expert's level and the weights, then draw the next experts."""
        diff = beta[None, :] - self.levels
        loss = self.alpha * diff - np.minimum(0.0, diff)
        self.levels = self.levels + self.gammas * (self.alpha - (self.levels > beta[None, :]))
        if len(self.gammas) > 1:
            w = self.weights * np.exp(-self.eta * (loss - loss.min(axis=0)))  # shifted: same ratios, no underflow
            self.weights = (1 - self.sigma) * w / w.sum(axis=0) + self.sigma / len(self.gammas)
        self.choose()
