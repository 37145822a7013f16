"""Where one PA-RNN iteration spends its time: ``torch.profiler`` on one SGHMC iteration of the paper's width.

    python -m pibench.benchmarks.profile_pa [--hidden 1000] [--members 1] [--iterations 50]

The iteration is PA's own (:class:`~pibench.methods.pa.trainer.PATraining`, the annealing phase
with the prior and SGHMC's noise on), on perf_device (b)'s shapes: an Elman RNN over windows of
15 lags, batches of 36 subsequences of 10 steps. Printed, per device (the CPU, and the GPU when
torch sees one, there eager and captured as a CUDA graph side by side):

* wall milliseconds per iteration (the mean over ``--iterations``, synchronised);
* per iteration, from one profiled iteration: torch operators dispatched, GPU kernels and their
  busy time, kernel launches and graph launches, and host syncs (``cudaStreamSynchronize``,
  ``cudaDeviceSynchronize``, device-to-host copies): an iteration is bound by the host when its
  wall time is well above the GPU's busy time;
* the operators that took the most time (self time on the device, or on the CPU).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.profiler import ProfilerActivity, profile

from pibench.methods.device import use_device
from pibench.methods.pa.networks import AfterBurnIn, ElmanRNN, StackedElmanRNNs
from pibench.methods.pa.trainer import PASettings, PATraining

WARMUP = 5  # iterations before timing: lazy initialisation, and the graph's capture on a GPU
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")
LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")


def settings_for(iterations: int) -> PASettings:
    """perf_device (b)'s settings: every unit after the first in the annealing phase (prior and noise on)."""
    return PASettings(epochs=WARMUP + iterations + 1, lr=1e-3, batch_size=36, T1=1, T2=2, T3=WARMUP + iterations + 1,
                      s1=0.05, s0_init=4e-6, s0_end=1e-7, lam=1e-7, tau=0.1, refine_epochs=0, unit="iteration")


def training(device: str, hidden: int, members: int, iterations: int, graphs: bool) -> PATraining:
    g = torch.Generator().manual_seed(1)
    shape = (2000,) if members == 1 else (2000, members)
    seqs, targets = torch.randn(*shape, 10, 15, generator=g), torch.randn(*shape, 7, generator=g)

    def rnn(b: int) -> ElmanRNN:
        torch.manual_seed(b)
        return ElmanRNN(15, hidden, init_bound=0.003)
    model = (AfterBurnIn(rnn(0), 3) if members == 1
             else StackedElmanRNNs.from_members([rnn(b) for b in range(members)], burn_in=3))
    with use_device(device):
        return PATraining(model, seqs, targets, settings_for(iterations), 0 if members == 1 else list(range(members)),
                          graphs=graphs)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def measure(device: str, hidden: int, members: int, iterations: int, graphs: bool) -> dict:
    """Wall ms per iteration, then one profiled iteration's counts and its top operators."""
    run = training(device, hidden, members, iterations, graphs)
    with use_device(device):
        for t in range(WARMUP):
            run.unit(t)
        _sync(device)
        tic = time.perf_counter()
        for t in range(WARMUP, WARMUP + iterations):
            run.unit(t)
        _sync(device)
        wall_ms = (time.perf_counter() - tic) / iterations * 1e3
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        with profile(activities=activities) as prof:
            run.unit(WARMUP + iterations)
            _sync(device)
    averages = prof.key_averages()
    counts = {a.key: a.count for a in averages}
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy_ms = sum(getattr(e, "device_time", 0.0) for e in kernels) / 1e3
    operators = sum(a.count for a in averages if a.key.startswith("aten::"))
    sort_by = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    return {"device": device, "mode": run.step_mode, "wall_ms": wall_ms, "operators": operators,
            "kernels": len(kernels), "gpu_busy_ms": busy_ms,
            "launches": sum(counts.get(k, 0) for k in LAUNCH_CALLS), "graph_launches": counts.get("cudaGraphLaunch", 0),
            "syncs": sum(counts.get(k, 0) for k in SYNC_CALLS),
            "device_to_host": sum(a.count for a in averages if "DtoH" in a.key or "Memcpy DtoH" in a.key),
            "table": averages.table(sort_by=sort_by, row_limit=12, max_name_column_width=48)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=1000, help="recurrent units (default: the paper's 1,000)")
    parser.add_argument("--members", type=int, default=1, help="networks trained as one stack (a cell: 5)")
    parser.add_argument("--iterations", type=int, default=50, help="timed iterations (default 50)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads on the CPU (default: all)")
    args = parser.parse_args(argv)
    if args.hidden < 1 or args.members < 1 or args.iterations < 1:
        parser.error("--hidden, --members and --iterations must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    runs = [("cpu", False)] + ([("cuda", False), ("cuda", True)] if torch.cuda.is_available() else [])
    print(f"one PA-RNN iteration: Elman-{args.hidden}, {args.members} member(s), batch 36 x 10 steps x 15 lags; "
          f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread(s)"
          + (f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ", no GPU"))
    results = [measure(device, args.hidden, args.members, args.iterations, graphs) for device, graphs in runs]
    header = (f"{'device':<6} {'step':<12} {'wall ms':>8} {'GPU busy ms':>11} {'operators':>9} {'kernels':>8} "
              f"{'launches':>8} {'graph launches':>14} {'syncs':>5} {'DtoH':>5}")
    print(header)
    for r in results:
        print(f"{r['device']:<6} {r['mode'][:12]:<12} {r['wall_ms']:>8.3f} {r['gpu_busy_ms']:>11.3f} "
              f"{r['operators']:>9} {r['kernels']:>8} {r['launches']:>8} {r['graph_launches']:>14} {r['syncs']:>5} "
              f"{r['device_to_host']:>5}")
    for r in results:
        print(f"\n{r['device']} ({r['mode']}): top operators of one iteration\n{r['table']}")


if __name__ == "__main__":
    main()
