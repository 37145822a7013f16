"""Performance figures of the sets-of-sequences suite, printed (by hand, not in CI).

    python -m benchmarks.perf_sets [--data-dir DIR] [--quick] [--suite]

(a) seconds to fit and to predict, per method on EEG and COVID-19 with the
    ``sets`` suite's settings (seed 0; ``--quick`` takes the quick variant's);
(b) one Adam step of five LSTM-20 (five seeds) trained apart, against one
    block-diagonal LSTM-100 holding all five: what training the seeds together,
    as the fesp MLPs are, would buy;
(c) with ``--suite``: the wall time of ``pibench run --suite sets -j 2`` (``--quick``:
    its quick variant) in a fresh results folder.
Single-threaded, as the runner's tasks are.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

import torch
from threadpoolctl import threadpool_limits

from pibench.benchmarks.protocols import run_set
from pibench.benchmarks.suite import build_tasks, load_suite
from pibench.data_loaders.problems import SetProblem
from pibench.data_loaders.registry import load_dataset
from pibench.methods.catalog import get_method


def fit_and_predict_seconds(quick: bool, data_dir: str | None) -> None:
    suite = load_suite("sets", quick=quick)
    print(f"(a) seconds per fit and per prediction, seed 0, suite 'sets'{' (quick)' if quick else ''}:")
    problems: dict[str, SetProblem] = {}
    for task in build_tasks(suite, datasets=["eeg", "covid"], seeds=[0]):
        c = task.config
        name = c["dataset"]["name"]
        if name not in problems:
            problem = load_dataset(name, c["dataset"]["params"], replicate=0, data_dir=data_dir)
            if not isinstance(problem, SetProblem):
                raise TypeError(f"dataset {name!r} is not a sets-of-sequences problem.")
            problems[name] = problem
        method = get_method(c["method"]["name"])(alpha=c["alpha"], random_state=0, **c["method"]["params"])
        out = run_set(problems[name], method)
        print(f"    {name:<6} {c['method']['name']:<8} fit {out.fit_seconds:7.1f} s"
              f"   predict {out.predict_seconds:6.1f} s")


def adam_step_seconds(steps: int = 20, seeds: int = 5, hidden: int = 20, length: int = 40, batch: int = 150) -> None:
    x = torch.randn(batch, length, 1)

    def timed(lstm: torch.nn.LSTM, head: torch.nn.Linear, inputs: torch.Tensor) -> float:
        params = list(lstm.parameters()) + list(head.parameters())
        opt = torch.optim.Adam(params, lr=1e-3)
        y = torch.randn(batch, head.out_features)
        tic = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad()
            (head(lstm(inputs)[1][0][-1]) - y).square().mean().backward()
            opt.step()
        return (time.perf_counter() - tic) / steps

    apart = sum(timed(torch.nn.LSTM(1, hidden, batch_first=True), torch.nn.Linear(hidden, 10), x)
                for _ in range(seeds))
    together = timed(torch.nn.LSTM(seeds, seeds * hidden, batch_first=True),
                     torch.nn.Linear(seeds * hidden, 10 * seeds), x.repeat(1, 1, seeds))
    print(f"(b) one Adam step, batch {batch}, {length} steps: {seeds} x LSTM-{hidden} apart {1e3 * apart:.1f} ms, "
          f"one block-diagonal LSTM-{seeds * hidden} {1e3 * together:.1f} ms (ratio {apart / together:.2f})")


def suite_seconds(quick: bool, data_dir: str | None) -> None:
    with tempfile.TemporaryDirectory() as results:
        command = [sys.executable, "-m", "pibench", "run", "--suite", "sets", "-j", "2", "--no-progress",
                   "--results-dir", results, *(["--quick"] if quick else []),
                   *(["--data-dir", data_dir] if data_dir else [])]
        tic = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - tic
    status = "ok" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    print(f"(c) pibench run --suite sets{' --quick' if quick else ''} -j 2: {wall / 60:.1f} min ({status})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--quick", action="store_true", help="the suite's quick settings")
    parser.add_argument("--suite", action="store_true", help="also time the whole suite with -j 2")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with threadpool_limits(1):
        fit_and_predict_seconds(args.quick, args.data_dir)
        adam_step_seconds()
    if args.suite:
        suite_seconds(args.quick, args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
