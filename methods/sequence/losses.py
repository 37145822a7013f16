"""Training losses of the sequence methods: squared error (k = 1 output per step) and pinball (k quantiles)."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def mse_loss(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """mean over sequences and horizons of (y - pred)^2; pred and y (m, H)."""
    return (y - pred).square().mean()


def pinball_loss(pred: torch.Tensor, y: torch.Tensor, quantiles: Sequence[float]) -> torch.Tensor:
    """Sum over the k quantile levels q of the mean pinball loss rho_q(y - pred_q).

    pred (m, H, k), y (m, H); rho_q(u) = max(q u, (q - 1) u) (Koenker & Bassett 1978),
    whose minimiser over a constant is the q-quantile of y. MQ-RNN (docs/guide/methods.md) trains
    the alpha/2 and 1 - alpha/2 levels this way.
    """
    q = torch.as_tensor(quantiles, dtype=pred.dtype, device=pred.device)
    if pred.shape[-1] != len(q):
        raise ValueError(f"pred has {pred.shape[-1]} outputs per step for {len(q)} quantile levels.")
    u = y.unsqueeze(-1) - pred
    return torch.maximum(q * u, (q - 1) * u).mean(dim=(0, 1)).sum()
