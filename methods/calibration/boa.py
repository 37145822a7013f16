"""Bernstein Online Aggregation with the gradient trick (Wintenberger 2017; docs/guide/methods.md).

Aggregates K experts' forecasts of a quantile (pinball loss at level tau) for
several independent series at once: every array is (K, ...), one column per
series. Per expert k, with uniform prior w0 = 1/K, start eta = 1, V = 0,
B = 2^-20, R = 0:

    p_k ∝ w0 eta_k exp(eta_k R_k);     b_hat = sum_k p_k b_k
    r_k = (1{y < b_hat} - tau) (b_hat - b_k)              (linearised regret)
    B_k = max(B_k, |r_k|);  B2_k = 2^ceil(log2 B_k);  V_k += r_k^2
    eta_k = min(1 / B2_k, sqrt(log(1 / w0) / V_k))
    R_k += (r_k - eta_k r_k^2 + B2_k 1{eta_k r_k > 1/2}) / 2
"""

from __future__ import annotations

import numpy as np


class BernsteinOnlineAggregation:
    """BOA state for K experts over arrays of series of shape ``shape``."""

    def __init__(self, n_experts: int, shape: tuple[int, ...], tau: float):
        if n_experts < 1:
            raise ValueError("BOA needs at least one expert.")
        if not 0 < tau < 1:
            raise ValueError(f"tau={tau} must lie in (0, 1).")
        full = (n_experts, *shape)
        self.tau = tau
        self.log_w0 = -np.log(n_experts)
        self.eta = np.ones(full)
        self.V = np.zeros(full)
        self.B = np.full(full, 2.0**-20)
        self.R = np.zeros(full)

    def weights(self) -> np.ndarray:
        """p (K, ...), computed in log space for stability."""
        if self.eta.shape[0] == 1:  # one expert: all weight on it (its eta may reach 0)
            return np.ones_like(self.eta)
        log_p = self.log_w0 + np.log(self.eta) + self.eta * self.R
        log_p -= log_p.max(axis=0, keepdims=True)
        p = np.exp(log_p)
        return p / p.sum(axis=0, keepdims=True)

    def predict(self, experts: np.ndarray) -> np.ndarray:
        """Aggregated forecast from the experts' forecasts (K, ...)."""
        return (self.weights() * experts).sum(axis=0)

    def update(self, experts: np.ndarray, y: np.ndarray, forecast: np.ndarray | None = None) -> None:
        """Learn from the outcome y (...) given the experts' forecasts (K, ...); ``forecast`` is
        the aggregate already computed from them with the current weights, if at hand."""
        b_hat = self.predict(experts) if forecast is None else forecast
        r = ((y < b_hat) - self.tau) * (b_hat - experts)
        self.B = np.maximum(self.B, np.abs(r))
        B2 = 2.0 ** np.ceil(np.log2(self.B))
        self.V = self.V + r**2
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(self.V > 0, np.sqrt(-self.log_w0 / self.V), np.inf)
        self.eta = np.minimum(1.0 / B2, rate)
        self.R = self.R + 0.5 * (r - self.eta * r**2 + B2 * (self.eta * r > 0.5))
