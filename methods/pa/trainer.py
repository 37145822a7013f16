"""PA training (SPEC §3.1; paper appendix "Computation"): prior annealing with SGHMC,
sparsification at the posterior-inclusion threshold, then refining the kept weights.

Per-sample energy U = mean_i (y_i - mu_i)^2 / (2 sigma2) - eta_t log pi(beta) / n,
minimised by SGHMC at temperature tau_t, with eta_t, the spike variance s0 and
tau_t following the annealing schedule over epochs. After the last epoch,
weight j is kept iff |beta_j| > threshold(s0_end) and it can reach the output
(:mod:`pibench.methods.pa.structure`: dead weights are pruned too); the refining phase fixes the
mask (pruned weights stay exactly 0) and minimises the loss alone (momentum SGD).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pibench.methods.device import current_device, task_generator
from pibench.methods.pa.prior import MixtureGaussianPrior
from pibench.methods.pa.schedule import AnnealingSchedule
from pibench.methods.pa.sghmc import SGHMC
from pibench.methods.pa.structure import live_masks
from pibench.methods.param_checks import in_range, non_negative_int, one_of, positive, positive_int


@dataclass(frozen=True)
class PASettings:
    """Training settings; defaults are the paper's fesp ones (SPEC §3.1)."""

    epochs: int = 300  # schedule units (epochs or iterations, see ``unit``)
    lr: float = 1e-3
    momentum: float = 0.9
    batch_size: int = 100
    T1: int = 150
    T2: int = 160
    T3: int = 260
    s1: float = 0.01
    s0_init: float = 1e-5
    s0_end: float = 1e-6
    lam: float = 1e-7
    tau: float = 1.0
    refine_epochs: int = 50
    sigma2: float = 1.0  # likelihood variance on the (standardised) target scale
    unit: str = "epoch"  # what t counts: "epoch" (a pass over a permutation) or "iteration" (one random batch)
    initial_optimizer: str = "sgd"  # before T1: "sgd" (momentum SGD = SGHMC at tau 0) or "adam" (the paper's LSTM)
    prior_step: str = "explicit"  # the prior's pull in SGHMC: "explicit" (SPEC §3.1) or "implicit" (see sghmc.py)

    def check(self) -> None:
        """Raise ValueError for a setting out of range (the schedule and the priors check their own)."""
        positive_int("epochs", self.epochs)
        positive_int("batch_size", self.batch_size)
        non_negative_int("refine_epochs", self.refine_epochs)
        positive("lr", self.lr)
        positive("sigma2", self.sigma2)
        in_range("momentum", self.momentum, 0, 1, closed_low=True)
        one_of("unit", self.unit, ("epoch", "iteration"))
        one_of("initial_optimizer", self.initial_optimizer, ("sgd", "adam"))
        one_of("prior_step", self.prior_step, ("explicit", "implicit"))
        self.schedule()
        self.prior(self.s0_init), self.prior(self.s0_end)

    def schedule(self) -> AnnealingSchedule:
        return AnnealingSchedule(self.T1, self.T2, self.T3, self.s0_init, self.s0_end, self.tau)

    def prior(self, s0: float | None = None) -> MixtureGaussianPrior:
        return MixtureGaussianPrior(self.lam, self.s0_init if s0 is None else s0, self.s1)


def _unit_batches(n: int, batch_size: int, unit: str, generator: torch.Generator) -> list[torch.Tensor]:
    """Minibatch indices of one schedule unit: a permuted epoch, or one batch drawn with replacement
    (on the generator's device)."""
    if unit == "epoch":
        return list(torch.randperm(n, generator=generator, device=generator.device).split(batch_size))
    return [torch.randint(0, n, (batch_size,), generator=generator, device=generator.device)]


def _member_batches(n: int, batch_size: int, unit: str, generators: list[torch.Generator]) -> list[torch.Tensor]:
    """One unit's minibatches of a stack whose B members draw their own: (batch, B) index tensors."""
    return [torch.stack(idx, dim=1) for idx in zip(*(_unit_batches(n, batch_size, unit, g) for g in generators))]


def _train_unit(model: nn.Module, opt: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor, settings: PASettings,
                generator: torch.Generator | list[torch.Generator], prior: MixtureGaussianPrior | None = None,
                prior_weight: float = 0.0) -> None:
    n = len(y)
    members = isinstance(generator, list)
    if isinstance(generator, list):
        batches = _member_batches(n, settings.batch_size, settings.unit, generator)
    else:
        batches = _unit_batches(n, settings.batch_size, settings.unit, generator)
    for idx in batches:
        idx = idx.to(X.device)
        opt.zero_grad(set_to_none=False)
        if members:  # member b's rows idx[:, b] of its own data X[:, b]; the sum of the members' mean losses
            column = torch.arange(idx.shape[1], device=X.device)
            residual = model(X[idx, column]) - y[idx, column]
            loss = residual.square().sum() / (residual[:, 0].numel() * 2 * settings.sigma2)
        else:  # a stack of G networks on shared rows (n_independent = G) sums its G per-group mean losses
            loss = ((model(X[idx]) - y[idx]) ** 2).mean() * getattr(model, "n_independent", 1) / (2 * settings.sigma2)
        loss.backward()
        if prior is None or prior_weight == 0:
            opt.step()
        elif settings.prior_step == "implicit":  # -grad log prior / n = kappa(b) b / n, taken at the new b
            if not isinstance(opt, SGHMC):  # the prior acts only once annealing, which SGHMC runs
                raise TypeError(f"the implicit prior step needs the SGHMC optimizer; got {type(opt).__name__}.")
            with torch.no_grad():
                opt.step(stiffness={p: _of_each(prior.curvature, p, members).mul_(prior_weight / n)
                                    for p in model.parameters()})
        else:
            with torch.no_grad():
                for p in model.parameters():
                    if p.grad is None:
                        raise RuntimeError("a parameter got no gradient: it does not enter the loss.")
                    p.grad.sub_(_of_each(prior.grad_log_density, p, members), alpha=prior_weight / n)
            opt.step()


def _of_each(term, p: torch.Tensor, members: bool) -> torch.Tensor:
    """A prior term of parameter p; of each member's slice apart for a stack of members, since
    torch's sigmoid kernel rounds by tensor size and a member must see its own size (bit-for-bit)."""
    return torch.stack([term(q) for q in p]) if members else term(p)


def train_pa(model: nn.Module, X: torch.Tensor, y: torch.Tensor, settings: PASettings,
             seed: int | Sequence[int]) -> dict:
    """Train ``model`` in place; returns the masks {parameter name: bool tensor (True = kept)}.

    X, y: the n training samples (any shapes the model maps between, first axis n).
    ``seed``: one seed, or one per member of a stack of independent networks with their
    own data (X (n, B, ...), y (n, B, ...), member b on [:, b]; e.g.
    :class:`~pibench.methods.pa.networks.StackedElmanRNNs`): member b then draws its minibatches and
    SGHMC noise from its own generator, as it would trained alone.
    Training runs on :func:`~pibench.methods.device.current_device`, its minibatches and SGHMC noise
    drawn there (:func:`~pibench.methods.device.task_generator`); the model and the masks are handed
    back on the CPU.
    """
    settings.check()
    if len(y) < 2:
        raise ValueError("PA needs at least 2 training points.")
    device = current_device()
    model.to(device)
    X, y = X.to(device), y.to(device)
    seeds: list[int] | None
    if isinstance(seed, Sequence):
        seeds = [int(s) for s in seed]
        if not seeds:
            raise ValueError("seed is an empty sequence: give one seed, or one per member of the stack.")
        first_seed = seeds[0]
    else:
        seeds, first_seed = None, int(seed)
    generator = [task_generator(s) for s in seeds] if seeds else task_generator(first_seed)
    schedule = settings.schedule()
    opt = SGHMC(model.parameters(), lr=settings.lr, momentum=settings.momentum, temperature=0.0, n=len(y),
                generator=generator)
    adam = torch.optim.Adam(model.parameters(), lr=settings.lr) if settings.initial_optimizer == "adam" else None
    for t in range(settings.epochs):
        annealing = schedule.phase(t) != "initial"
        opt.set_temperature(schedule.temperature(t) if annealing else 0.0)
        _train_unit(model, adam if adam is not None and not annealing else opt, X, y, settings, generator,
                    prior=settings.prior(schedule.s0(t)), prior_weight=schedule.prior_weight(t))
    threshold = settings.prior(settings.s0_end).threshold()
    masks = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            masks[name] = p.abs() > threshold
            p.mul_(masks[name])
    masks = live_masks(model, masks, X, torch.Generator().manual_seed(first_seed))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.mul_(masks[name])
    params = dict(model.named_parameters())
    refine = SGHMC(model.parameters(), lr=settings.lr, momentum=settings.momentum, temperature=0.0, n=len(y),
                   masks={params[k]: m for k, m in masks.items()})
    for _ in range(settings.refine_epochs):
        _train_unit(model, refine, X, y, settings, generator)
    model.to(torch.device("cpu"))
    return {name: mask.cpu() for name, mask in masks.items()}
