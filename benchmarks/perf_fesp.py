"""Performance figures for the fesp online suite, measured side by side in one run.

    python -m benchmarks.perf_fesp train  [--epochs 20] [--data-dir DIR]
    python -m benchmarks.perf_fesp aci    [--steps 8760]
    python -m benchmarks.perf_fesp online [--data-dir DIR] [--scorecaster]

``train`` (figure a): seconds per online day-step to fit the base MLPs, the
naive way (a plain PyTorch loop per model: 24 separate per-hour fits for every
method, each method fitting its own models) versus pibench's way (the 24 hourly
models of 8 consecutive days trained as one batched network, one fit shared by
every split-conformal method). Fewer epochs than the paper's 300 keep it short;
both sides use the same epochs, so the ratio is the figure.

``aci`` (figure b): the online ACI loop over 8,760 steps for the 30 gammas of
the grid, pibench's vectorised calibrator versus MAPIE's ACI loop, with the same
prefit linear model on the same data.

``online`` (figure c): the per-step cost of every online calibrator (ACI, AgACI,
NexCP and the six methods beyond the paper) on fesp's 365 days x 24 hours, each
beside ACI's, on the same daily-refitted linear base model.

Peak memory (figure d) is measured on the real run:
``python -m benchmarks.peak_memory -- pibench run --suite fesp -j 2``.
Single-threaded throughout (BLAS and torch), as the runner's tasks are.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from pibench.benchmarks.forecast_stage import CHUNK_FITS, compute_chunk
from pibench.benchmarks.protocols import series_schedule
from pibench.data_loaders.fesp import fesp_problem
from pibench.methods.agaci import GAMMA_GRID
from pibench.methods.forecasters.split import SplitForecaster, proper_training_size


def naive_fit_seconds(X: np.ndarray, y: np.ndarray, epochs: int, seed: int) -> float:
    """One per-hour model the usual way: nn.Sequential, torch.optim.SGD, a minibatch loop."""
    tic = time.perf_counter()
    torch.manual_seed(seed)
    Xs = torch.as_tensor((X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1), dtype=torch.float32)
    ys = torch.as_tensor((y - y.mean()) / y.std(), dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], 100), torch.nn.Sigmoid(), torch.nn.Linear(100, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for _ in range(epochs):
        order = torch.randperm(len(ys))
        for start in range(0, len(ys), 100):
            idx = order[start : start + 100]
            loss = torch.nn.functional.mse_loss(model(Xs[idx]).squeeze(-1), ys[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return time.perf_counter() - tic


def figure_train(args: argparse.Namespace) -> None:
    problem = fesp_problem(data_dir=args.data_dir)
    schedule = series_schedule(problem, kind="online", window=1089, retrain_every=1)
    W = schedule.window
    n_train = proper_training_size(W, 0.5)  # the same proper-training half as the split methods
    # naive: a few per-hour fits, timed one by one
    start = schedule.window_start(schedule.fit_steps[0])
    forecaster = SplitForecaster(base="mlp", base_params=(("epochs", args.epochs),), random_state=0)
    # warm both paths up (first-call costs of torch), untimed
    naive_fit_seconds(problem.X[start : start + n_train, 0], problem.y[start : start + n_train, 0], 1, 0)
    compute_chunk(problem, schedule, SplitForecaster(base="mlp", base_params=(("epochs", 1),)), range(1))
    per_fit = [naive_fit_seconds(problem.X[start : start + n_train, g], problem.y[start : start + n_train, g],
                                 args.epochs, g) for g in range(args.naive_fits)]
    naive_step = 24 * float(np.mean(per_fit))
    # pibench: one chunk of CHUNK_FITS days x 24 hours, batched; shared by all split methods
    tic = time.perf_counter()
    compute_chunk(problem, schedule, forecaster, range(CHUNK_FITS["cpu"]))
    ours_step = (time.perf_counter() - tic) / CHUNK_FITS["cpu"]
    print(f"(a) base-model fitting per online day-step, {args.epochs} epochs, 1 thread, window {W}:")
    print(f"    naive, one method  : {naive_step:8.2f} s  (24 x {np.mean(per_fit):.3f} s per separate fit)")
    print(f"    pibench, all split methods together: {ours_step:8.2f} s  (24 x {CHUNK_FITS['cpu']} models batched)")
    for label, n_methods in (("ACI gamma 0 and 0.01, AgACI, NexCP", 4), ("the 30-gamma sweep, AgACI, NexCP", 32)):
        print(f"    ratio with {n_methods:2d} methods ({label}): {n_methods * naive_step / ours_step:7.1f}x")
    print(f"    paper scale (365 steps, 300 epochs) for pibench, extrapolated: "
          f"{ours_step * 365 * 300 / args.epochs / 60:.1f} core-minutes")


def figure_aci(args: argparse.Namespace) -> None:
    from pibench.data_loaders.problems import SeriesData
    from pibench.methods.aci import ACI
    from pibench.methods.calibration.aci import aci_online
    from pibench.methods.mapie_methods import MapieACI

    rng = np.random.default_rng(0)
    T, n = args.steps, 1000  # n proper-training + n calibration points, then T online steps
    x = rng.normal(size=(2 * n + T, 1, 3))
    y = x[..., 0] - 0.5 * x[..., 1] + 0.25 * x[..., 2] + rng.standard_t(df=5, size=(2 * n + T, 1))
    window = SeriesData(y=y[: 2 * n], X=x[: 2 * n])
    gammas = np.asarray(GAMMA_GRID)
    # pibench: the linear base fitted on the first half, scores on the second, all gammas at once
    tic = time.perf_counter()
    base = ACI(alpha=0.1, base="linear").fit(window)
    aci_online(base.window_fit_.predict(x[2 * n :]), y[2 * n :], base.sorted_scores_, 0.1, gammas)
    ours = time.perf_counter() - tic
    # MAPIE: the same prefit linear model and split, one TimeSeriesRegressor per gamma, step by step
    steps = min(T, args.mapie_steps)
    tic = time.perf_counter()
    for gamma in gammas:
        method = MapieACI(alpha=0.1, gamma=float(gamma), base="linear").fit(window)
        for t in range(2 * n, 2 * n + steps):
            method.predict_interval(x[t : t + 1])
            method.update(y[t : t + 1])
    mapie = (time.perf_counter() - tic) * T / steps
    print(f"(b) online ACI, {T} steps x {len(gammas)} gammas, prefit linear model, n_cal = {n}:")
    print(f"    pibench (vectorised over gammas, incl. the base fit): {ours:8.3f} s")
    print(f"    MAPIE TimeSeriesRegressor, one loop per gamma     : {mapie:8.1f} s"
          + (f"  (measured on {steps} steps, scaled to {T})" if steps < T else ""))
    print(f"    ratio: {mapie / ours:.0f}x")


ONLINE_METHODS = ("aci", "agaci", "nexcp", "quantile_tracker", "conformal_pid", "aci_decay", "dtaci", "sf_ogd",
                  "saocp")


def figure_online(args: argparse.Namespace) -> None:
    """Per-step cost of each calibrator on fesp's 365 test days x 24 hours, beside ACI's (same linear base fits)."""
    from pibench.benchmarks.protocols import run_series
    from pibench.methods.catalog import get_method

    problem = fesp_problem(data_dir=args.data_dir)
    print(f"(c) online calibrators on fesp, {problem.n_test} days x {problem.n_groups} hours, the base model refitted"
          " daily (linear here, the same for every method); seconds of the online loop (predict + update):")
    seconds = {}
    for name in ONLINE_METHODS:
        # each method's own keyword parameters: the registry only knows the IntervalMethod constructor
        params: dict[str, Any] = {"alpha": 0.1, "base": "linear"}
        if name == "conformal_pid" and args.scorecaster:
            params["scorecaster"] = "theta"
        out = run_series(problem, get_method(name)(**params), kind="online", window=1089)
        seconds[name] = out.predict_seconds
        print(f"    {name:<17} {out.predict_seconds:7.2f} s  = {1e6 * out.predict_seconds / problem.n_test:8.0f} us per"
              f" day (24 hours)   x{out.predict_seconds / seconds['aci']:5.1f} ACI's")
    new = sum(v for k, v in seconds.items() if k not in ("aci", "agaci", "nexcp"))
    print(f"    the six new methods together: {new:.1f} s of online loop")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="figure", required=True)
    train = sub.add_parser("train")
    train.add_argument("--epochs", type=int, default=20)
    train.add_argument("--naive-fits", type=int, default=6, help="per-hour fits timed for the naive side")
    train.add_argument("--data-dir", default=None)
    aci = sub.add_parser("aci")
    aci.add_argument("--steps", type=int, default=8760)
    aci.add_argument("--mapie-steps", type=int, default=8760, help="steps actually run through MAPIE")
    online = sub.add_parser("online")
    online.add_argument("--data-dir", default=None)
    online.add_argument("--scorecaster", action="store_true", help="conformal PID with its Theta scorecaster")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with threadpool_limits(1):
        {"train": figure_train, "aci": figure_aci, "online": figure_online}[args.figure](args)


if __name__ == "__main__":
    main()
