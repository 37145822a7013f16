"""PA training (paper section 4 and its appendix "Computation"): prior annealing with SGHMC,
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

from pibench.methods.cuda_graph import GRAPHS_ENV_VAR, GraphedStep, graphs_enabled
from pibench.methods.device import current_device, task_generator
from pibench.methods.pa.prior import MixtureGaussianPrior, mixture_grad_log_density
from pibench.methods.pa.schedule import AnnealingSchedule
from pibench.methods.pa.sghmc import SGHMC
from pibench.methods.pa.structure import live_masks
from pibench.methods.param_checks import in_range, non_negative_int, one_of, positive, positive_int
from pibench.methods.task_progress import report


@dataclass(frozen=True)
class PASettings:
    """Training settings; defaults are the paper's fesp ones (its appendix on fesp)."""

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
    prior_step: str = "explicit"  # the prior's pull in SGHMC: "explicit" (the paper's) or "implicit" (sghmc.py)

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
        if self.T3 > self.epochs:  # the paper's schedule: T1 <= T2 <= T3 <= T_end
            length = "epochs" if self.unit == "epoch" else "iterations"
            scaled = ", ".join(f"{name} = {round(getattr(self, name) * self.epochs / self.T3)}"
                               for name in ("T1", "T2", "T3"))
            raise ValueError(f"{length}={self.epochs} ends before the annealing does (T1={self.T1}, T2={self.T2}, "
                             f"T3={self.T3}): the prior would never be fully annealed. Give {length} >= {self.T3}, or "
                             f"the schedule scaled to {length} ({scaled}).")
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


def _minibatch_loss(model: nn.Module, X: torch.Tensor, y: torch.Tensor, idx: torch.Tensor, settings: PASettings,
                    members: bool) -> torch.Tensor:
    """The per-sample energy's likelihood part on minibatch ``idx`` (its (batch, B) form for a stack of members)."""
    if members:  # member b's rows idx[:, b] of its own data X[:, b]; the sum of the members' mean losses
        column = torch.arange(idx.shape[1], device=X.device)
        residual = model(X[idx, column]) - y[idx, column]
        return residual.square().sum() / (residual[:, 0].numel() * 2 * settings.sigma2)
    # a stack of G networks on shared rows (n_independent = G) sums its G per-group mean losses
    return ((model(X[idx]) - y[idx]) ** 2).mean() * getattr(model, "n_independent", 1) / (2 * settings.sigma2)


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
        _minibatch_loss(model, X, y, idx, settings, members).backward()
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


class TensorScalarIterations:
    """PA's SGHMC iterations (unit "iteration", explicit prior step) with the schedule's values of each
    iteration (the prior's c1, c2 and s0, eta_t / n, the noise scale) read from one device tensor:
    every iteration then runs the same kernels on the same tensors, which is what a CUDA graph replays
    (:class:`~pibench.methods.cuda_graph.GraphedStep`; on a GPU, replayed or not, the numbers are the
    same). The minibatch, loss, prior gradient and update are :func:`_train_unit`'s, in its order of
    random draws, with 0-dim tensors where it passes Python numbers: on the CPU the two agree to
    float32 rounding (bit for bit on the machine this was written on; tests/test_pa_graphs.py asks for
    the rounding only).
    """

    def __init__(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor, settings: PASettings,
                 generator: torch.Generator | list[torch.Generator], graphs: bool) -> None:
        self.model, self.X, self.y, self.settings, self.generator = model, X, y, settings, generator
        self.members = isinstance(generator, list)
        self.values = torch.zeros(5, dtype=X.dtype, device=X.device)  # c1, c2, s0, eta_t / n, noise scale
        self.graphs = graphs and X.device.type == "cuda"
        self._steps: dict[tuple, GraphedStep] = {}
        self._closed: str | None = None

    @staticmethod
    def covers(settings: PASettings) -> bool:
        """Whether these iterations can run ``settings`` (the others run :func:`_train_unit`)."""
        return settings.unit == "iteration" and settings.prior_step == "explicit"

    def _iteration(self, opt: SGHMC, with_prior: bool, with_noise: bool) -> None:
        c1, c2, s0, weight, noise = self.values.unbind()
        n = len(self.y)
        if isinstance(self.generator, list):
            idx = _member_batches(n, self.settings.batch_size, "iteration", self.generator)[0]
        else:
            idx = _unit_batches(n, self.settings.batch_size, "iteration", self.generator)[0]
        opt.zero_grad(set_to_none=False)
        _minibatch_loss(self.model, self.X, self.y, idx, self.settings, self.members).backward()
        if with_prior:
            s1 = self.settings.s1

            def grad_log_prior(q: torch.Tensor) -> torch.Tensor:
                return mixture_grad_log_density(q, c1, c2, s0, s1)
            with torch.no_grad():
                for p in self.model.parameters():
                    assert p.grad is not None, "a parameter got no gradient: it does not enter the loss."
                    p.grad.addcmul_(_of_each(grad_log_prior, p, self.members), weight, value=-1.0)
        opt.step(noise_scale=noise if with_noise else None)

    def run(self, opt: SGHMC, prior: MixtureGaussianPrior | None, prior_weight: float) -> None:
        """One iteration: the schedule's values into the device tensor, then the (graphed) step."""
        with_prior = prior is not None and prior_weight != 0
        noise_std = opt.noise_std()
        key = (id(opt), with_prior, noise_std > 0)
        step = self._steps.get(key)
        if step is None:
            generators = self.generator if isinstance(self.generator, list) else [self.generator]
            step = GraphedStep(lambda: self._iteration(opt, with_prior, noise_std > 0), generators,
                               enabled=self.graphs)
            self._steps[key] = step
        n = len(self.y)
        c1, c2, s0 = (prior.c1, prior.c2, prior.s0) if with_prior and prior is not None else (0.0, 0.0, 1.0)
        row = torch.tensor([c1, c2, s0, prior_weight / n, noise_std], dtype=self.values.dtype)
        if self.values.is_cuda:  # from pinned memory, asynchronously: a pageable copy would wait for the GPU
            self.values.copy_(row.pin_memory(), non_blocking=True)
        else:
            self.values.copy_(row)
        step()  # without graphs (the CPU, or graphs off) the step runs as it is

    def modes(self) -> str:
        """How the iterations ran: 'cuda-graph', or 'eager' (with the reason on a GPU: graphs off, a step that
        waits for the host)."""
        if self._closed is not None:
            return self._closed
        if not self.graphs:
            return f"eager ({GRAPHS_ENV_VAR}=0)" if self.X.device.type == "cuda" else "eager"
        reasons = sorted({s.fallback_reason for s in self._steps.values() if s.fallback_reason})
        return "cuda-graph" if not reasons else "eager (" + "; ".join(reasons) + ")"

    def close(self) -> None:
        """Drop the graphs (and with them the references to the data, buffers and memory pools they hold);
        :meth:`modes` keeps its answer."""
        self._closed = self.modes()
        self._steps.clear()


def _of_each(term, p: torch.Tensor, members: bool) -> torch.Tensor:
    """A prior term of parameter p. For a stack of members on the CPU, of each member's slice apart: the
    vectorised kernels there (sigmoid's) round a tensor's tail lanes otherwise, and a member must see its
    own size to be bit for bit itself alone. A GPU's elementwise kernels compute every element alike
    whatever the size (tests/test_pa_rnn_cell.py checks it on CUDA), so there the whole stack goes in one
    call: B times fewer kernels per iteration."""
    return torch.stack([term(q) for q in p]) if members and p.device.type != "cuda" else term(p)


class PATraining:
    """One PA training run, schedule unit by schedule unit: what :func:`train_pa` runs (and
    benchmarks/profile_pa.py profiles one unit of). See :func:`train_pa` for the arguments.

    On a GPU, units of ``unit = "iteration"`` with the explicit prior step run as
    :class:`TensorScalarIterations`, captured as CUDA graphs unless ``graphs`` is False (default:
    :func:`~pibench.methods.cuda_graph.graphs_enabled`); elsewhere :func:`_train_unit` runs them.
    """

    def __init__(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor, settings: PASettings,
                 seed: int | Sequence[int], graphs: bool | None = None) -> None:
        settings.check()
        if len(y) < 2:
            raise ValueError("PA needs at least 2 training points.")
        device = current_device()
        self.model, self.settings = model.to(device), settings
        self.X, self.y = X.to(device), y.to(device)
        if isinstance(seed, Sequence):
            seeds = [int(s) for s in seed]
            if not seeds:
                raise ValueError("seed is an empty sequence: give one seed, or one per member of the stack.")
            self.first_seed = seeds[0]
            self.generator: torch.Generator | list[torch.Generator] = [task_generator(s) for s in seeds]
        else:
            self.first_seed = int(seed)
            self.generator = task_generator(self.first_seed)
        self.schedule = settings.schedule()
        self.opt = SGHMC(model.parameters(), lr=settings.lr, momentum=settings.momentum, temperature=0.0,
                         n=len(y), generator=self.generator)
        self.adam = (torch.optim.Adam(model.parameters(), lr=settings.lr) if settings.initial_optimizer == "adam"
                     else None)
        self.iterations = (TensorScalarIterations(model, self.X, self.y, settings, self.generator,
                                                  graphs=graphs_enabled() if graphs is None else graphs)
                           if device.type == "cuda" and TensorScalarIterations.covers(settings) else None)

    def _unit(self, opt: torch.optim.Optimizer, prior: MixtureGaussianPrior | None = None,
              prior_weight: float = 0.0) -> None:
        if self.iterations is not None and isinstance(opt, SGHMC):
            self.iterations.run(opt, prior, prior_weight)
        else:
            _train_unit(self.model, opt, self.X, self.y, self.settings, self.generator, prior=prior,
                        prior_weight=prior_weight)

    def unit(self, t: int) -> None:
        """Schedule unit t of the annealing phase (an epoch or an iteration)."""
        annealing = self.schedule.phase(t) != "initial"
        self.opt.set_temperature(self.schedule.temperature(t) if annealing else 0.0)
        self._unit(self.adam if self.adam is not None and not annealing else self.opt,
                   prior=self.settings.prior(self.schedule.s0(t)), prior_weight=self.schedule.prior_weight(t))

    def sparsify_and_refine(self) -> dict:
        """Keep the weights above the threshold that reach the output, refine them; the model and
        the masks go back to the CPU. Returns the masks."""
        model, settings = self.model, self.settings
        threshold = settings.prior(settings.s0_end).threshold()
        masks = {}
        with torch.no_grad():
            for name, p in model.named_parameters():
                masks[name] = p.abs() > threshold
                p.mul_(masks[name])
        masks = live_masks(model, masks, self.X, torch.Generator().manual_seed(self.first_seed))
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.mul_(masks[name])
        params = dict(model.named_parameters())
        refine = SGHMC(model.parameters(), lr=settings.lr, momentum=settings.momentum, temperature=0.0, n=len(self.y),
                       masks={params[k]: m for k, m in masks.items()})
        for _ in range(settings.refine_epochs):
            self._unit(refine)
        if self.iterations is not None:
            self.iterations.close()
        model.to(torch.device("cpu"))
        return {name: mask.cpu() for name, mask in masks.items()}

    @property
    def step_mode(self) -> str:
        """How the units ran: 'eager', 'cuda-graph', or 'eager (<why no graph>)'."""
        return "eager" if self.iterations is None else self.iterations.modes()


def train_pa(model: nn.Module, X: torch.Tensor, y: torch.Tensor, settings: PASettings,
             seed: int | Sequence[int], info: dict | None = None) -> dict:
    """Train ``model`` in place; returns the masks {parameter name: bool tensor (True = kept)}.

    X, y: the n training samples (any shapes the model maps between, first axis n).
    ``seed``: one seed, or one per member of a stack of independent networks with their
    own data (X (n, B, ...), y (n, B, ...), member b on [:, b]; every parameter (B, ...), e.g.
    :class:`~pibench.methods.pa.networks.StackedElmanRNNs` or
    :class:`~pibench.methods.pa.stacked_lstm.StackedPALSTMs`): member b then draws its minibatches and
    SGHMC noise from its own generator, as it would trained alone.
    Training runs on :func:`~pibench.methods.device.current_device`, its minibatches and SGHMC noise
    drawn there (:func:`~pibench.methods.device.task_generator`); the model and the masks are handed
    back on the CPU. ``info``, if given, gets ``train_step``: how the units ran (:class:`PATraining`).
    """
    training = PATraining(model, X, y, settings, seed)
    for t in range(settings.epochs):
        training.unit(t)
        report("epochs", t + 1, settings.epochs)
    masks = training.sparsify_and_refine()
    if info is not None:
        info["train_step"] = training.step_mode
    return masks
