"""Run tasks in parallel through joblib, write each result as it finishes, resume on rerun.

Parallelism is joblib's only: loky processes by default, or any backend the
caller selects with ``joblib.parallel_config`` (e.g. ``backend="dask"`` on a
cluster). Every task pins its BLAS and torch threads (default 1) so that its
numbers do not depend on how many workers run beside it.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from benchmarks.protocols import ProtocolOutput, run_series, run_set
from benchmarks.provenance import provenance
from benchmarks.store import ResultsStore
from benchmarks.suite import Task
from data_loaders.problems import SeriesProblem
from data_loaders.registry import load_dataset
from methods.base import IntervalMethod, get_method
from reports.metrics import default_cap, series_metrics, set_metrics
from reports.summary import write_summary


def build_method(name: str, params: dict, alpha: float, seed: int) -> IntervalMethod:
    """Instantiate a registered method; unknown parameters give a ValueError listing the valid ones."""
    cls = get_method(name)
    valid = cls._param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"method {name!r} has no parameter(s) {unknown}; it takes {valid}.")
    return cls(**{**params, "alpha": alpha, "random_state": seed})


def _predictions_frame(problem, out: ProtocolOutput) -> pd.DataFrame:
    """Long format: one row per test step x series (series) or sequence x horizon (sets)."""
    n, k = out.y.shape
    if isinstance(problem, SeriesProblem):
        steps = np.arange(problem.test_start, problem.test_start + n)
        index = {"t": np.repeat(steps, k), "time": np.repeat(problem.time[steps].astype(str), k),
                 "group": np.tile(np.asarray(problem.groups), n)}
    else:
        index = {"item": np.repeat(np.arange(n), k), "horizon": np.tile(np.arange(1, k + 1), n)}
    return pd.DataFrame({**index, "y": out.y.ravel(), "lower": out.lower.ravel(),
                         "upper": out.upper.ravel(), "point": out.point.ravel()})


def execute_task(task: Task, results_dir: str | os.PathLike, data_dir: str | None = None,
                 threads: int = 1) -> dict:
    """Run one task, write its record (and predictions), return the record. Never raises."""
    c = task.config
    record = {
        "task_id": task.task_id, "suite": c["suite"], "dataset": c["dataset"]["label"],
        "method": c["method"]["name"], "setting": c["setting"], "seed": c["seed"], "alpha": c["alpha"],
        "config": c, "data_seed": task.data_seed, "method_seed": task.method_seed,
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **provenance(),
    }
    predictions = None
    tic = time.perf_counter()
    previous_threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        with threadpool_limits(threads):
            problem = load_dataset(c["dataset"]["name"], c["dataset"]["params"], seed=task.data_seed,
                                   data_dir=data_dir)
            method = build_method(c["method"]["name"], c["method"]["params"], c["alpha"], task.method_seed)
            record["method_params"] = method.get_params()
            cap = default_cap(*problem.train_target_range())
            if isinstance(problem, SeriesProblem):
                protocol = {k: v for k, v in c["protocol"].items()}
                out = run_series(problem, method, **protocol)
                metrics = series_metrics(out.y, out.lower, out.upper, c["alpha"], cap)
            else:
                out = run_set(problem, method)
                metrics = set_metrics(out.y, out.lower, out.upper, c["alpha"], cap)
        predictions = _predictions_frame(problem, out)
        record.update(metrics, status="ok", length_cap=list(cap), fit_seconds=out.fit_seconds,
                      predict_seconds=out.predict_seconds, n_fits=out.n_fits)
    except Exception as exc:  # recorded, so that one failing task does not stop the others
        record.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    finally:
        torch.set_num_threads(previous_threads)
    record["wall_seconds"] = time.perf_counter() - tic
    ResultsStore(results_dir).write(task.task_id, record, predictions)
    return record


@dataclass
class RunReport:
    executed: list[dict]
    skipped: int
    summary_path: Path

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.executed if r["status"] != "ok"]


def run_tasks(tasks: list[Task], results_dir: str | os.PathLike, *, n_jobs: int = 1,
              data_dir: str | None = None, threads: int = 1, progress: bool = True) -> RunReport:
    """Execute the unfinished tasks, then rewrite ``summary.csv`` from the whole store."""
    store = ResultsStore(results_dir)
    todo = [t for t in tasks if not store.is_done(t.task_id)]
    executed: list[dict] = []
    if todo:
        jobs = (delayed(execute_task)(t, str(results_dir), data_dir, threads) for t in todo)
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs)
        with tqdm(total=len(todo), desc="pibench", unit="task", disable=not progress) as bar:
            for record in results:
                executed.append(record)
                bar.set_postfix_str(f"{record['method']} {record['status']}", refresh=False)
                bar.update()
    summary = write_summary(store.records(), results_dir)
    return RunReport(executed=executed, skipped=len(tasks) - len(todo), summary_path=summary)
