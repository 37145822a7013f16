"""CPU vs GPU seconds for the torch work of pibench, side by side in one run.

    python -m benchmarks.perf_device [--repeats 1] [--threads N] [--only a b ...]

Each figure runs pibench's own code under ``use_device("cpu")`` and, when torch
sees a GPU, ``use_device("cuda")`` (synchronised before the clock stops; after an untimed
warm-up run, except the long GPU-only rows of :data:`COLD`, whose first-call costs of new
shapes, small next to them, are in their figures and in the steady-state differences), on
synthetic data of the paper's shapes (no download):

(a) one fesp online day-step of base fits: the 24 hourly MLPs of 8 days (192
    models, 100 sigmoid units, 544 training rows, 300 epochs) as one stack; on a GPU
    also for 64 days (a chunk of the shared fits there) and the whole year of 365;
(b) 100 iterations of PA-RNN at the paper's width (Elman, 1,000 units, window 15,
    batch 36 subsequences of 10 steps) through PA's trainer, in the annealing phase
    (plus its one pass over the training subsequences for the live weights: 2,000 here);
(c) one LSTM epoch on EEG-sized data (11,930 sequences of 40 steps, 20 units, 10
    horizons, batch 150; the EEG training split when these figures began, 15,360 now: kept, so that
    sessions compare), the sequence methods' training loop;
(d) PA intervals for the 8,760 fesp test points: the Gauss-Newton matrix of one
    sparse MLP over 544 rows, then 8,760 predictive variances;
(e) what batching an order-selection cell buys: (b) for the 5 seeds of a cell, one
    after another vs as one stack of networks (the runner batches cells on a GPU);
on a GPU also (b) and (e) batched at 1,100 iterations: the difference to 100 is the
    steady state per iteration, without start-up, graph capture and the live-weight pass;
(f) on a GPU only, the same for a sets cell: one epoch of CF-RNN's LSTM-100 on
    EEG-sized data for one seed, and for 5 seeds as one block-diagonal stack
    (:mod:`pibench.methods.sequence.stacked`);
(g) one annealing epoch of PA-LSTM-100 on EEG-sized data (SGHMC with the prior over all 42,210
    weights; ``sets_eeg100`` trains 150 epochs a seed, Adam for the first 100, then 20 refining ones);
    on a GPU also for 5 seeds as one stack (the runner's PA-LSTM cells);
(h) the eigendecomposition behind PA's dense intervals (the pseudo-inverse of an R x R curvature matrix,
    :func:`~pibench.methods.pa.intervals.pseudo_inverse`) at R = 4,096; on a GPU also at 8,192, to scale
    to PA-LSTM-100's size by R^3 (36x). PA-LSTM-100 on EEG keeps about 27,000 weights,
    and its curvature has no gap to cut at: a PA-LSTM-20 fitted on EEG (CPU, 2026-11-27) kept 1,741 weights,
    55 exactly null (twin biases), then eigenvalues falling smoothly through the 1e-8 cutoff (166 of them
    between 1e-10 and 1e-8 of the largest), so no Cholesky shortcut gives the same pseudo-inverse;
(i) the per-row Jacobians of PA-LSTM-100 for 256 EEG-sized sequences (float64), one chunk of its intervals
    (``sets_eeg100`` needs about 47 chunks for a seed's curvature and 75 for its 19,200 test sequences).

The CPU side uses ``--threads`` torch threads (default: all cores, as a user's
single job would); the pibench runner gives each task 1 thread and runs -j tasks.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch

from pibench.methods.cuda_graph import GRAPHS_ENV_VAR
from pibench.methods.device import current_device, use_device
from pibench.methods.forecasters.mlp import train_batched_mlp
from pibench.methods.pa.intervals import fit_asymptotic_normal, pseudo_inverse
from pibench.methods.pa.networks import MLP, AfterBurnIn, ElmanRNN, StackedElmanRNNs
from pibench.methods.pa.stacked_lstm import StackedPALSTMs
from pibench.methods.pa.trainer import PASettings, PATraining, train_pa
from pibench.methods.sequence.losses import mse_loss
from pibench.methods.sequence.network import SequenceNet
from pibench.methods.sequence.stacked import StackedSequenceNets
from pibench.methods.sequence.train import train_network, train_stack


def _seconds(work: Callable[[], object], device: str, repeats: int, warm_up: bool = True) -> float:
    """Best of ``repeats`` runs of ``work`` on ``device`` (on a GPU after one untimed warm-up run,
    which pays CUDA's start-up and kernel selection, unless ``warm_up`` is False)."""
    def once() -> float:
        with use_device(device):
            tic = time.perf_counter()
            work()
            if device == "cuda":
                torch.cuda.synchronize()
            return time.perf_counter() - tic
    if device == "cuda" and warm_up:
        once()
    return min(once() for _ in range(repeats))


def fesp_base_fits(days: int = 8) -> Callable[[], object]:
    """(a): the 24 hourly base MLPs of ``days`` online day-steps of fesp as one stack (8 days: 192 models)."""
    models = 24 * days
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(models, 544, 13)), rng.normal(size=(models, 544))
    return lambda: train_batched_mlp(X, y, seeds=list(range(models)), hidden=100, epochs=300, lr=1e-3)


def elman_settings(iterations: int = 100) -> PASettings:
    """``iterations`` of PA-RNN's NLAR settings, all but the first two in the annealing phase."""
    return PASettings(epochs=iterations, lr=1e-3, batch_size=36, T1=1, T2=2, T3=iterations, s1=0.05, s0_init=4e-6,
                      s0_end=1e-7, lam=1e-7, tau=0.1, refine_epochs=0, unit="iteration")


def elman_iterations(graphs: bool = True, iterations: int = 100) -> Callable[[], object]:
    """(b); ``graphs=False``: on a GPU with CUDA graphs off (the same iterations, launched one kernel at a time)."""
    rng = np.random.default_rng(1)
    seqs = torch.as_tensor(rng.normal(size=(2000, 10, 15)), dtype=torch.float32)
    targets = torch.as_tensor(rng.normal(size=(2000, 7)), dtype=torch.float32)
    settings = elman_settings(iterations)

    def work():
        torch.manual_seed(0)
        with graphs_set(graphs):
            train_pa(AfterBurnIn(ElmanRNN(15, 1000, init_bound=0.003), 3), seqs, targets, settings, seed=0)
    return work


@contextmanager
def graphs_set(on: bool) -> Iterator[None]:
    """CUDA graphs on or off (:data:`~pibench.methods.cuda_graph.GRAPHS_ENV_VAR`) while it is entered."""
    before = os.environ.get(GRAPHS_ENV_VAR)
    os.environ[GRAPHS_ENV_VAR] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[GRAPHS_ENV_VAR]
        else:
            os.environ[GRAPHS_ENV_VAR] = before


def lstm_epoch() -> Callable[[], object]:
    rng = np.random.default_rng(2)
    x = torch.as_tensor(rng.normal(size=(11930, 40, 1)), dtype=torch.float32)
    y = torch.as_tensor(rng.normal(size=(11930, 10)), dtype=torch.float32)

    def work():
        torch.manual_seed(0)
        train_network(SequenceNet(1, 20, 10), x, y, mse_loss, epochs=1, lr=0.01, batch_size=150, seed=0)
    return work


def _eeg_sized(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random data of EEG's shapes: 11,930 sequences of 40 steps, 10 horizons."""
    rng = np.random.default_rng(seed)
    return (torch.as_tensor(rng.normal(size=(11930, 40, 1)), dtype=torch.float32),
            torch.as_tensor(rng.normal(size=(11930, 10)), dtype=torch.float32))


def _lstm100(seed: int) -> SequenceNet:
    """``sets_eeg100``'s network for one seed."""
    torch.manual_seed(seed)
    return SequenceNet(1, 100, 10)


def lstm100_epoch(seeds: int) -> Callable[[], object]:
    """(f): one epoch of ``sets_eeg100``'s LSTM-100 (EEG-sized), for one seed or ``seeds`` as one stack."""
    x, y = _eeg_sized(4)

    def work():
        if seeds == 1:
            train_network(_lstm100(0), x, y, mse_loss, epochs=1, lr=1e-3, batch_size=150, seed=0)
        else:
            train_stack(StackedSequenceNets([_lstm100(b) for b in range(seeds)]), [x] * seeds, [y] * seeds, mse_loss,
                        epochs=1, lr=1e-3, batch_size=150, seeds=list(range(seeds)))
    return work


def pa_lstm100_epoch(seeds: int = 1) -> Callable[[], object]:
    """(g): one annealing epoch of ``sets_eeg100``'s PA-LSTM-100 on EEG-sized data (SGHMC at temperature tau
    with the implicit prior step, the network's whole prior over its 42,210 weights), for one seed or
    ``seeds`` as one stack (:class:`~pibench.methods.pa.stacked_lstm.StackedPALSTMs`)."""
    x, y = _eeg_sized(5)
    settings = PASettings(epochs=1, lr=1e-3, batch_size=150, T1=0, T2=0, T3=1, s1=0.01, s0_init=1e-5,
                          s0_end=1e-6, lam=1e-7, tau=1.0, refine_epochs=0, initial_optimizer="adam",
                          prior_step="implicit")

    def work():  # t = 0 >= T2: the full prior
        if seeds == 1:
            PATraining(_lstm100(0), x, y, settings, seed=0).unit(0)
        else:
            stack = StackedPALSTMs([_lstm100(b) for b in range(seeds)])
            PATraining(stack, torch.stack([x] * seeds, 1), torch.stack([y] * seeds, 1), settings,
                       seed=list(range(seeds))).unit(0)
    return work


def fesp_intervals() -> Callable[[], object]:
    rng = np.random.default_rng(3)
    X, X_test = rng.normal(size=(544, 13)), rng.normal(size=(8760, 13))
    torch.manual_seed(0)
    net = MLP(13, 100)
    masks = {name: torch.rand(p.shape) < 0.25 for name, p in net.named_parameters()}  # ~370 kept weights
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.mul_(masks[name])
        y = net(torch.as_tensor(X, dtype=torch.float32)).double().numpy() + rng.normal(scale=0.1, size=544)

    def work():
        fitted = fit_asymptotic_normal(net, masks, X, y, hessian="ggn")
        fitted.predict(X_test, 0.1)
    return work


def dense_pseudo_inverse(size: int = 4096) -> Callable[[], object]:
    """(h): :func:`pseudo_inverse` of a dense symmetric positive definite size x size matrix (built in O(size^2):
    a random symmetric matrix made diagonally dominant; eigh's cost does not hang on the spectrum's shape)."""
    g = torch.Generator().manual_seed(0)
    M = torch.randn(size, size, generator=g, dtype=torch.float64)
    on = {"cpu": 0.5 * (M + M.T) + size * torch.eye(size, dtype=torch.float64)}

    def work():
        device = str(current_device())
        if device not in on:  # moved once, in the warm-up run (the cold row at 8,192 pays it: 0.5 GiB, ~0.02 s)
            on[device] = on["cpu"].to(device)
        pseudo_inverse(on[device])
    return work


def lstm100_row_jacobians(rows: int = 256) -> Callable[[], object]:
    """(i): :meth:`~pibench.methods.sequence.network.SequenceNet.row_jacobians` of ``sets_eeg100``'s network
    for ``rows`` EEG-sized sequences, in float64 as PA's intervals take them."""
    net = _lstm100(0).unrolled().double()
    x = _eeg_sized(6)[0][:rows].double()

    def work():
        device = current_device()
        params = {name: p.detach().to(device) for name, p in net.named_parameters()}
        net.to(device).row_jacobians(params, x.to(device))
    return work


def order_cell(batched: bool, graphs: bool = True, iterations: int = 100) -> Callable[[], object]:
    """(b)'s training for the 5 seeds of an order-selection cell: one after another, or as one stack
    (:class:`~pibench.methods.pa.networks.StackedElmanRNNs`, what the runner does on a GPU)."""
    rng = np.random.default_rng(1)
    seqs = torch.as_tensor(rng.normal(size=(2000, 5, 10, 15)), dtype=torch.float32)
    targets = torch.as_tensor(rng.normal(size=(2000, 5, 7)), dtype=torch.float32)
    settings = elman_settings(iterations)

    def initial(b: int) -> ElmanRNN:
        torch.manual_seed(b)
        return ElmanRNN(15, 1000, init_bound=0.003)

    def work():
        with graphs_set(graphs):
            if batched:
                stack = StackedElmanRNNs.from_members([initial(b) for b in range(5)], burn_in=3)
                train_pa(stack, seqs, targets, settings, seed=list(range(5)))
            else:
                for b in range(5):
                    train_pa(AfterBurnIn(initial(b), 3), seqs[:, b], targets[:, b], settings, seed=b)
    return work


FIGURES: dict[str, Callable[[], Callable[[], object]]] = {
    "(a) fesp day-step of base fits (192 MLPs, 300 epochs)": fesp_base_fits,
    "(b) 100 PA-RNN iterations, Elman-1000": elman_iterations,
    "(c) one LSTM epoch, EEG-sized (11,930 x 40)": lstm_epoch,
    "(d) PA intervals, 8,760 fesp test points": fesp_intervals,
    "(e) order-selection cell: (b) for 5 seeds, apart": lambda: order_cell(batched=False),
    "(e) order-selection cell: (b) for 5 seeds, batched": lambda: order_cell(batched=True),
    "(g) one PA-LSTM-100 annealing epoch, EEG-sized": pa_lstm100_epoch,
    "(h) dense PA pseudo-inverse (eigh), R = 4,096": dense_pseudo_inverse,
    "(i) PA-LSTM-100 row Jacobians, 256 EEG-sized sequences": lstm100_row_jacobians,
}
#: GPU-only rows: (b) and (e) batched with CUDA graphs off, beside the rows above (graphs on)
GPU_ONLY: dict[str, Callable[[], Callable[[], object]]] = {
    "(b) the same, CUDA graphs off": lambda: elman_iterations(graphs=False),
    "(e) batched, CUDA graphs off": lambda: order_cell(batched=True, graphs=False),
    "(b) 1,100 iterations": lambda: elman_iterations(iterations=1100),
    "(e) batched, 1,100 iterations": lambda: order_cell(batched=True, iterations=1100),
    "(f) one LSTM-100 epoch, EEG-sized, one seed": lambda: lstm100_epoch(1),
    "(f) the same, 5 seeds as one stack": lambda: lstm100_epoch(5),
    "(g) the same, 5 seeds as one PA stack": lambda: pa_lstm100_epoch(5),
    # PA-LSTM-100's ~27,000 weights cost about (27,000 / 8,192)^3 = 36x this (torch's GPU eigh is cuSOLVER's)
    "(h) the same at R = 8,192": lambda: dense_pseudo_inverse(8192),
    # how the shared fesp base fits scale with the chunk (forecast_stage.CHUNK_FITS: 64 day-steps on a GPU);
    # last: the whole year may take a minute or more
    "(a) the same for 64 days (1,536 MLPs): one GPU chunk": lambda: fesp_base_fits(64),
    "(a) the same for 365 days (8,760 MLPs): the whole year": lambda: fesp_base_fits(365),
}
#: GPU-only rows timed without a warm-up run: long next to CUDA's start-up, and their kernels warmed by a smaller
#: run of the same work above (a warm-up of the whole year would double the stage's longest row)
COLD = {"(b) 1,100 iterations", "(e) batched, 1,100 iterations", "(h) the same at R = 8,192",
        "(a) the same for 64 days (1,536 MLPs): one GPU chunk",
        "(a) the same for 365 days (8,760 MLPs): the whole year"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per figure (best kept; default 1)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads on the CPU side (default: all)")
    parser.add_argument("--only", nargs="+", metavar="LETTER", help="only these figures, e.g. --only a d")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    print(f"torch {torch.__version__}; CPU side: {torch.get_num_threads()} thread(s); "
          f"device: {gpu or 'none (torch sees no CUDA device: CPU column only)'}")
    print(f"{'figure':<58} {'cpu s':>9} {'cuda s':>9} {'cpu/cuda':>9}")
    seconds: dict[str, dict[str, float]] = {}
    for label, make in FIGURES.items():
        if args.only and label[1] not in args.only:
            continue
        work = make()
        seconds[label] = {"cpu": _seconds(work, "cpu", args.repeats)}
        if gpu is not None:
            seconds[label]["cuda"] = _seconds(work, "cuda", args.repeats)
        print(_row(label, seconds[label]), flush=True)
    for label, make in GPU_ONLY.items():
        if gpu is None or (args.only and label[1] not in args.only):
            continue
        try:
            seconds[label] = {"cuda": _seconds(make(), "cuda", args.repeats, warm_up=label not in COLD)}
        except RuntimeError as error:  # e.g. out of memory: the row says so, the others go on
            print(f"{label:<58} failed: {str(error).splitlines()[0][:120]}", flush=True)
            continue
        print(_row(label, seconds[label]), flush=True)
    for line in targets(seconds):
        print(line)


def _row(label: str, times: dict[str, float]) -> str:
    cpu, cuda = times.get("cpu"), times.get("cuda")
    ratio = f"{cpu / cuda:>8.1f}x" if cpu is not None and cuda is not None else f"{'-':>9}"
    return (f"{label:<58} {'-' if cpu is None else f'{cpu:.3f}':>9} {'-' if cuda is None else f'{cuda:.3f}':>9} "
            f"{ratio}")


def targets(seconds: dict[str, dict[str, float]]) -> list[str]:
    """The issue's targets on the device column: (b) per iteration, and (e) batched over one member (b)."""
    b = seconds.get("(b) 100 PA-RNN iterations, Elman-1000", {})
    batched = seconds.get("(e) order-selection cell: (b) for 5 seeds, batched", {})
    lines = []
    for device in ("cuda", "cpu"):
        if device in b:
            lines.append(f"{device}: (b) {b[device] * 10:.2f} ms per iteration (100 iterations and one pass for "
                         "the live weights; target on a GPU <= 1.5 ms)")
        if device in b and device in batched:
            lines.append(f"{device}: (e) five seeds batched / one member (b) = {batched[device] / b[device]:.2f}x "
                         "(target on a GPU <= 1.5x)")
    # steady state: the 1,000 iterations between the runs of 100 and 1,100 (start-up, graph capture and the
    # live-weight pass cancel)
    long_b, long_e = (seconds.get(k, {}).get("cuda") for k in ("(b) 1,100 iterations", "(e) batched, 1,100 iterations"))
    if long_b and "cuda" in b:
        per_b = (long_b - b["cuda"]) / 1000
        lines.append(f"cuda: (b) steady state {per_b * 1e3:.2f} ms per iteration (target <= 1.5 ms)")
        if long_e and "cuda" in batched:
            lines.append(f"cuda: (e) steady state, five seeds batched / one member = "
                         f"{(long_e - batched['cuda']) / 1000 / per_b:.2f}x (target <= 1.5x)")
    days = {8: "(a) fesp day-step of base fits (192 MLPs, 300 epochs)",
            64: "(a) the same for 64 days (1,536 MLPs): one GPU chunk",
            365: "(a) the same for 365 days (8,760 MLPs): the whole year"}
    per_day = {n: t / n for n, label in days.items() if (t := seconds.get(label, {}).get("cuda"))}
    if len(per_day) > 1:
        lines.append("cuda: (a) seconds per day-step (24 MLPs) when a stack holds " +
                     ", ".join(f"{n} days: {t:.3f}" for n, t in per_day.items()))
    for figure, pair in (("(f) five seeds stacked", ("(f) one LSTM-100 epoch, EEG-sized, one seed",
                                                     "(f) the same, 5 seeds as one stack")),
                         ("(g) five PA-LSTM seeds stacked", ("(g) one PA-LSTM-100 annealing epoch, EEG-sized",
                                                            "(g) the same, 5 seeds as one PA stack"))):
        one, stack = (seconds.get(k, {}).get("cuda") for k in pair)
        if one and stack:
            lines.append(f"cuda: {figure} / one = {stack / one:.2f}x (apart: 5x)")
    return lines

if __name__ == "__main__":
    main()
