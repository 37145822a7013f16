"""The one training loop of the sequence networks: Adam on shuffled minibatches, seeded.

Each epoch is a pass over a permutation of the training sequences drawn from a
``torch.Generator`` seeded with the task's seed, so the minibatch order, like the
initial weights and the dropout masks (torch's global generator, seeded by the
caller before building the network; a stack's members each their own stream,
:meth:`~pibench.methods.sequence.stacked.StackedSequenceNets.draw_dropout_from`),
depends on the seed alone. With
``steps_per_epoch = k > 0`` an epoch is instead k minibatches of random sequences
(indices drawn uniformly, with replacement, from the same generator): how the
CF-RNN benchmark trains its MQ-RNN and DP-RNN baselines (10 epochs x 1,000
minibatches). :func:`train_stack` runs the same loop for the members of a
:class:`~pibench.methods.sequence.stacked.StackedSequenceNets`, each with its own
seed's minibatches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from pibench.methods.device import current_device, task_generator
from pibench.methods.sequence.stacked import StackedSequenceNets, refuse_padded
from pibench.methods.task_progress import report


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
    generator, a stack's from its members' own); ``net`` is handed back on the CPU. The epoch's
    loss is summed in float64 on the device and read once per epoch (no host synchronisation per
    minibatch).
    """
    return _train(net, [x], [y], loss_fn, [seed], epochs=epochs, lr=lr, batch_size=batch_size,
                  steps_per_epoch=steps_per_epoch)[0]


def train_stack(
    stack: StackedSequenceNets,
    xs: Sequence[torch.Tensor],
    ys: Sequence[torch.Tensor],
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    seeds: Sequence[int],
    steps_per_epoch: int = 0,
) -> list[list[float]]:
    """Train the members of ``stack`` (:mod:`~pibench.methods.sequence.stacked`) together, member b on
    (xs[b], ys[b]) with its own seed's minibatches, as :func:`train_network` trains each alone: the loss
    is the sum of the members' losses, so each member's weights get its own gradient. The members' data
    must be equally many sequences without padding. Returns each member's loss history."""
    if len({len(y) for y in ys}) > 1 or not len(xs) == len(ys) == len(seeds) == stack.members:
        raise ValueError("a stack trains one dataset per member, all of one size.")
    if len({tuple(x.shape) for x in xs}) > 1 or xs[0].shape[-1] != stack.d:
        raise ValueError(f"a stack's members read sequences of one length with {stack.d} feature(s) each; got "
                         f"{sorted({tuple(x.shape) for x in xs})}.")
    refuse_padded(xs)
    return _train(stack, list(xs), list(ys), loss_fn, list(seeds), epochs=epochs, lr=lr, batch_size=batch_size,
                  steps_per_epoch=steps_per_epoch)


def _train(net: nn.Module, xs: list[torch.Tensor], ys: list[torch.Tensor], loss_fn, seeds: list[int], *,
           epochs: int, lr: float, batch_size: int, steps_per_epoch: int) -> list[list[float]]:
    """The loop of :func:`train_network` (one member) and :func:`train_stack` (several)."""
    device = current_device()
    stack = net if isinstance(net, StackedSequenceNets) else None
    net.to(device)
    xs, ys = [x.to(device) for x in xs], [y.to(device) for y in ys]
    generators = [task_generator(seed) for seed in seeds]
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    if device.type == "cuda" and isinstance(net, _PaddingAware):  # told once: no minibatch asks the GPU about padding
        net.padded = bool(torch.isnan(xs[0]).any())  # (the CPU keeps asking per minibatch: its results never move)
    n = len(ys[0])
    history: list[list[float]] = [[] for _ in seeds]
    for epoch in range(epochs):
        if steps_per_epoch:
            orders = [torch.randint(n, (steps_per_epoch, batch_size), generator=g, device=device) for g in generators]
        else:
            orders = [torch.randperm(n, generator=g, device=device).split(batch_size) for g in generators]
        total = torch.zeros(len(seeds), dtype=torch.float64, device=device)
        for batch in zip(*orders):
            optimizer.zero_grad(set_to_none=True)
            if stack is not None:
                out = stack(torch.cat([x[idx] for x, idx in zip(xs, batch)], dim=-1))  # (m, B, ...)
                losses = torch.stack([loss_fn(out[:, b], y[idx]) for b, (y, idx) in enumerate(zip(ys, batch))])
                losses.sum().backward()
                stack.mask_gradients()
            else:
                losses = loss_fn(net(xs[0][batch[0]]), ys[0][batch[0]])
                losses.backward()
            optimizer.step()
            total += losses.detach()
        for member, value in zip(history, total.tolist()):
            member.append(value / len(orders[0]))
        report("epochs", epoch + 1, epochs)  # the runner's bar, where it listens
    if isinstance(net, _PaddingAware):
        net.padded = None
    net.to(torch.device("cpu"))
    return history
