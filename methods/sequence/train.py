"""The one training loop of the sequence networks: Adam on shuffled minibatches, seeded.

Each epoch is a pass over a permutation of the training sequences drawn from a
``torch.Generator`` seeded with the task's seed, so the minibatch order, like the
initial weights and the dropout masks (torch's global generator, seeded by the
caller before building the network), depends on the seed alone.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from methods.device import current_device


def train_network(
    net: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    seed: int,
) -> list[float]:
    """Train ``net`` in place on (x, y); returns the mean minibatch loss of each epoch.

    Training runs on :func:`~methods.device.current_device` (minibatch orders drawn on the
    CPU; dropout masks come from that device's generator); ``net`` is handed back on the CPU.
    """
    device = current_device()
    net.to(device)
    x, y = x.to(device), y.to(device)
    generator = torch.Generator().manual_seed(int(seed))
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    history = []
    for _ in range(epochs):
        total, batches = 0.0, 0
        for idx in torch.randperm(len(y), generator=generator).split(batch_size):
            idx = idx.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(net(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            total, batches = total + float(loss.detach()), batches + 1
        history.append(total / batches)
    net.to(torch.device("cpu"))
    return history
