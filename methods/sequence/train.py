"""The one training loop of the sequence networks: Adam on shuffled minibatches, seeded.

Each epoch is a pass over a permutation of the training sequences drawn from a
``torch.Generator`` seeded with the task's seed, so the minibatch order, like the
initial weights and the dropout masks (torch's global generator, seeded by the
caller before building the network), depends on the seed alone. With
``steps_per_epoch = k > 0`` an epoch is instead k minibatches of random sequences
(indices drawn uniformly, with replacement, from the same generator): how the
CF-RNN benchmark trains its MQ-RNN and DP-RNN baselines (10 epochs x 1,000
minibatches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from pibench.methods.device import current_device, task_generator


@runtime_checkable
class _PaddingAware(Protocol):
    """A network that can be told once whether its inputs hold NaN padding (``SequenceNet.padded``)."""

    padded: bool | None


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
    steps_per_epoch: int = 0,
) -> list[float]:
    """Train ``net`` in place on (x, y); returns the mean minibatch loss of each epoch.

    Training runs on :func:`~pibench.methods.device.current_device`, minibatch orders drawn there
    (:func:`~pibench.methods.device.task_generator`; dropout masks come from that device's global
    generator); ``net`` is handed back on the CPU. The epoch's loss is summed in float64 on
    the device and read once per epoch (no host synchronisation per minibatch).
    """
    device = current_device()
    net.to(device)
    x, y = x.to(device), y.to(device)
    generator = task_generator(seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    if device.type == "cuda" and isinstance(net, _PaddingAware):  # told once: no minibatch asks the GPU about padding
        net.padded = bool(torch.isnan(x).any())  # (the CPU keeps asking per minibatch: its results never move)
    history = []
    for _ in range(epochs):
        if steps_per_epoch:
            batches = torch.randint(len(y), (steps_per_epoch, batch_size), generator=generator, device=device)
        else:
            batches = torch.randperm(len(y), generator=generator, device=device).split(batch_size)
        total = torch.zeros((), dtype=torch.float64, device=device)
        for idx in batches:
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(net(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            total += loss.detach()
        history.append(float(total) / len(batches))
    if isinstance(net, _PaddingAware):
        net.padded = None
    net.to(torch.device("cpu"))
    return history
