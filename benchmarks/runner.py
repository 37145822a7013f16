"""Run tasks in parallel through joblib, write each result as it finishes, resume on rerun.

Parallelism is joblib's only: loky processes by default, or a dask cluster
(:mod:`pibench.benchmarks.backends`). Every task pins its BLAS and torch threads (default 1)
so that its numbers do not depend on how many workers run beside it, and runs its
networks on the run's torch device (:mod:`pibench.methods.device`), which its record names.
"""

from __future__ import annotations

import html
import itertools
import math
import os
import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from pibench.benchmarks.backends import JobSlots, check_backend, check_remote_paths, check_workers, parallel_backend
from pibench.benchmarks.forecast_stage import (
    ForecastPlan,
    drop_bad_chunks,
    load_forecasts,
    missing_chunks,
    plan_for,
    write_chunk,
)
from pibench.benchmarks.preflight import (
    COPY_THE_DATA,
    LONG_RUN_NOTE,
    DataChanged,
    check_data_untouched,
    prepare_tasks,
    task_method,
    task_method_class,
    task_problem,
)
from pibench.benchmarks.protocols import ProtocolOutput, run_series, run_set, series_schedule
from pibench.benchmarks.provenance import code_version, identity_change, provenance
from pibench.benchmarks.store import FIELDS_SHA256, ResultsStore, check_results_dir, row_of
from pibench.benchmarks.suite import Task, stable_hash
from pibench.data_loaders.oracle import oracle_test_lengths
from pibench.data_loaders.paths import DATA_ENV_VAR
from pibench.data_loaders.problems import SeriesProblem
from pibench.data_loaders.volatility import volatility_of_test_steps
from pibench.methods.base import IntervalMethod
from pibench.methods.code_identity import files_part, method_code_identity, source_files, source_identity
from pibench.methods.device import describe_device, generator_family, resolve_device, use_device
from pibench.methods.split_conformal import SplitConformalMethod
from pibench.methods.task_progress import listening
from pibench.reports.metrics import DERIVED_FIELDS, default_cap, metrics_from_predictions
from pibench.reports.selection import configuration_change, select_current
from pibench.reports.statistics import compute_statistics
from pibench.reports.summary import write_summary

#: Names a method's diagnostics may not take: the record's metrics and what the store checks.
RESERVED_DIAGNOSTICS = {"coverage", "mean_length", "median_length", "std_length", "iqr_length", "n_infinite",
                        "winkler", "n_test", "status", "error", "length_cap", "predictions_sha256", FIELDS_SHA256,
                        "fit_seconds", "predict_seconds", "n_fits", "wall_seconds", "volatility_source",
                        "coverage_by_group", "worst_rolling_coverage", "longest_miss_run", "per_horizon_coverage",
                        *DERIVED_FIELDS}


def _predictions_frame(problem, out: ProtocolOutput, volatility: np.ndarray | None = None,
                       oracle_length: np.ndarray | None = None) -> pd.DataFrame:
    """Long format: one row per test step x series (series) or sequence x horizon (sets); series rows
    also hold each step's ``volatility`` (n, G) when given (:mod:`pibench.data_loaders.volatility`), for
    conditional coverage; rows of a dataset with an oracle hold the oracle's interval length
    (``oracle_length``), from which a record's length ratios are checked."""
    n, k = out.y.shape
    extra = {} if oracle_length is None else {"oracle_length": np.asarray(oracle_length, dtype=float).ravel()}
    if isinstance(problem, SeriesProblem):
        steps = np.arange(problem.test_start, problem.test_start + n)
        labels = problem.time[steps] if problem.time is not None else steps
        labels = labels if np.issubdtype(labels.dtype, np.integer) else labels.astype(str)  # steps stay numbers
        index = {"t": np.repeat(steps, k), "time": np.repeat(labels, k),
                 "group": np.tile(np.asarray(problem.groups), n)}
        if volatility is not None:
            extra["volatility"] = volatility.ravel()
    else:
        index = {"item": np.repeat(np.arange(n), k), "sequence": np.repeat(problem.sequence_ids(), k),
                 "horizon": np.tile(np.arange(1, k + 1), n)}
        if problem.test_clusters is not None:
            index["cluster"] = np.repeat(np.asarray(problem.test_clusters), k)
    return pd.DataFrame({**index, "y": out.y.ravel(), "lower": out.lower.ravel(),
                         "upper": out.upper.ravel(), "point": out.point.ravel(), **extra})


@contextmanager
def task_runtime(threads: int, device: str = "cpu"):
    """Fix BLAS and torch threads (so a task's numbers do not depend on its neighbours) and the torch device."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(threads), use_device(device):
            yield
    finally:
        torch.set_num_threads(previous)


def seed_global_generators(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators from the task's seed before its method is built:
    a method that draws from ``random``, ``np.random`` or torch's default generator (rather than from its
    ``random_state``) then repeats its numbers in any worker, whatever ran there before."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def forecast_plan(task: Task, problem, method: IntervalMethod, device: str = "cpu") -> ForecastPlan | None:
    """The shared base fits of a split-conformal task on a series problem, chunked for ``device``, else None."""
    if isinstance(method, SplitConformalMethod) and method.shares_base_fits and isinstance(problem, SeriesProblem):
        return plan_for(task, problem, method.split_forecaster(), device)
    return None


def execute_task(task: Task, results_dir: str | os.PathLike, data_dir: str | None = None,
                 threads: int = 1, shared: bool = False, device: str = "cpu",
                 method: IntervalMethod | None = None, cell: dict | None = None) -> dict:
    """Run one task, write its record (and predictions), return the record. Never raises.

    ``shared``: the runner computed this task's base fits ahead; use them or fail
    (without it, a split-conformal task uses them when present, else fits on demand).
    ``device``: 'cpu' or 'cuda', resolved (:func:`pibench.methods.device.resolve_device`).
    ``method``, ``cell``: the task's method, already trained in a cell (:func:`execute_cell`), and
    what the record says about that cell.
    """
    c, identity = task.config, task.bound_identity
    record = {
        "task_id": task.task_id, "suite": c["suite"], "dataset": c["dataset"]["label"],
        "method": c["method"]["name"], "setting": c["setting"], "seed": c["seed"], "alpha": c["alpha"],
        "config": c, "identity": identity, "data_fingerprint": identity["data"],
        "data_seed": task.data_seed, "method_seed": task.method_seed,
        "started_at": datetime.now(UTC).isoformat(timespec="milliseconds"), **provenance(),
        "device": device, "threads": threads, **({"cell": cell} if cell else {}),
    }
    predictions, loaded = None, None
    tic = time.perf_counter()
    try:
        if record["code_version"] != identity["code"]:
            raise RuntimeError(f"this worker runs pibench code {record['code_version']}, but the run was prepared "
                               f"with {identity['code']}: every worker must run the same checkout.")
        cls = type(method) if method is not None else task_method_class(task)
        runs = source_identity(cls)
        if runs:  # where a plugin's files are, for a report that checks them later (not part of the identity)
            record["plugin_files"] = source_files(cls)
        prepared = files_part(identity.get("plugin", {}))
        if runs != prepared:  # never one code's numbers under another's name
            raise RuntimeError(f"this worker would run other code for method {c['method']['name']!r} ({runs}) than "
                               f"the run was prepared with ({prepared}).")
        record["device"], record["generator"] = describe_device(device), generator_family(device)
        with task_runtime(threads, device):
            loaded = task_problem(task, data_dir)
            problem, record["data_files"] = loaded.problem, loaded.files
            seed_global_generators(task.method_seed)
            method = task_method(task) if method is None else method
            record["method_params"] = method.get_params()
            method.prepare(problem)
            plan = forecast_plan(task, problem, method, device)
            if plan is not None and (shared or not missing_chunks(plan, results_dir)):
                assert isinstance(method, SplitConformalMethod)  # only those have a plan
                method.use_forecasts(load_forecasts(plan, results_dir))  # raises if a chunk failed
                record["shared_base_fits"] = plan.key
            cap = default_cap(*problem.train_target_range())
            if isinstance(problem, SeriesProblem):
                out = run_series(problem, method, **c["protocol"])
            else:
                out = run_set(problem, method)
        diagnostics = method.diagnostics()
        check_data_untouched(task, loaded)  # after the method's last call, before its data are scored and stored
        volatility = None
        if isinstance(problem, SeriesProblem):
            volatility, record["volatility_source"] = volatility_of_test_steps(problem, problem.test_start + len(out.y))
        best = oracle_test_lengths(problem, c["alpha"], len(out.y))
        predictions = _predictions_frame(problem, out, volatility, best)
        metrics = metrics_from_predictions(predictions, c["alpha"], cap)  # what a reader can check them against
        taken = sorted(set(diagnostics) & (set(record) | RESERVED_DIAGNOSTICS))
        if taken:
            raise ValueError(f"{type(method).__name__}.diagnostics() returns {taken}, which name fields of the "
                             "record or its metrics; give them other names (e.g. a prefix of the method's).")
        record.update(diagnostics)
        record.update(metrics, status="ok", length_cap=list(cap), fit_seconds=out.fit_seconds,
                      predict_seconds=out.predict_seconds, n_fits=out.n_fits)
    except Exception as exc:  # recorded, so that one failing task does not stop the others
        hint = f" ({COPY_THE_DATA})" if isinstance(exc, ValueError) and not isinstance(exc, DataChanged) and \
            "read-only" in str(exc) else ""
        try:
            if loaded is not None and not isinstance(exc, DataChanged):  # failed after changing the data?
                check_data_untouched(task, loaded)  # (then the next task loads it anew)
        except DataChanged as changed:
            hint += f"; and {changed}"
        where = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))  # where the protocol was
        record.update(status="error", error=f"{type(exc).__name__}: {exc}{where}{hint}",
                      traceback=traceback.format_exc())
    record["wall_seconds"] = time.perf_counter() - tic
    ResultsStore(results_dir).write(task.task_id, record, predictions)
    return record


#: What `pibench report` writes beside the store, removed by a run that computed something (never stale).
REPORT_FILES = ("summary.md", "report.html")


def execute_chunk(task: Task, fits: range, results_dir: str | os.PathLike, data_dir: str | None = None,
                  threads: int = 1, device: str = "cpu") -> dict:
    """Compute one chunk of shared base fits. A failure leaves its traceback beside the
    chunk; the tasks that needed it then fail with that traceback in their records."""
    what = {"method": "base fits", "dataset": task.config["dataset"]["label"], "setting": f"refits {fits.start}-"
            f"{fits.stop - 1} of the base of {task.config['method']['name']} {task.config['setting']}".rstrip()}
    tic = time.perf_counter()
    try:
        with task_runtime(threads, device):
            problem = task_problem(task, data_dir).problem
            plan = forecast_plan(task, problem, task_method(task), device)
            if plan is None or not isinstance(problem, SeriesProblem):
                raise RuntimeError(f"{task.label()} has no shared base fits to compute.")
            write_chunk(problem, task.config["protocol"], plan, fits, results_dir)
        return {**what, "status": "ok", "wall_seconds": time.perf_counter() - tic}
    except Exception as exc:
        return {**what, "status": "error", "error": f"{type(exc).__name__}: {exc}"}


@dataclass(frozen=True)
class CellDeferred:
    """What :func:`execute_cell` returns for a cell that could not train together: its tasks' ids, for the
    runner to run them alone as jobs of their own (side by side on its workers, not one after another in the
    cell's), and what their records say about the cell (``members``, ``error``)."""

    task_ids: list[str]
    cell: dict


def _trained_together(tasks: list[Task], data_dir: str | None, threads: int, device: str) -> list[IntervalMethod]:
    """The methods of a cell's tasks, their networks trained as one (the method class's ``fit_together``);
    DataChanged if the training changed any task's data (the cell's tasks then train alone, on data loaded
    anew)."""
    with task_runtime(threads, device):
        trained = [task_method(task) for task in tasks]
        datas: list = []  # what each task's first fit sees: a series window, or (train, calibration)
        loaded = [task_problem(task, data_dir) for task in tasks]  # held: the cache keeps a few
        for task, problem in zip(tasks, (data.problem for data in loaded)):
            if isinstance(problem, SeriesProblem):
                schedule = series_schedule(problem, **task.config["protocol"])
                datas.append(problem.window(schedule.window_start(schedule.fit_steps[0]), schedule.fit_steps[0]))
            else:
                datas.append((problem.train, problem.calibration))
        cell_class: Any = type(trained[0])  # cells() chose a method class that has fit_together
        cell_class.fit_together(trained, datas)
        for task, data in zip(tasks, loaded):
            check_data_untouched(task, data)
    return trained


def execute_cell(tasks: list[Task], results_dir: str | os.PathLike, data_dir: str | None = None,
                 threads: int = 1, device: str = "cpu") -> list[dict] | CellDeferred:
    """Train the networks of a cell (:func:`cells`) as one batched network, then run each task
    on its trained method, returning their records. If the cell cannot train together, its tasks
    go back to the runner (:class:`CellDeferred`), to train alone as jobs of their own, their
    records saying why under ``cell``. Never raises."""
    tic = time.perf_counter()
    methods: list[IntervalMethod | None]
    try:
        methods = list(_trained_together(tasks, data_dir, threads, device))
        cell: dict[str, object] = {"members": len(tasks), "train_seconds": time.perf_counter() - tic}
    except Exception as exc:
        methods, cell = [], {"members": len(tasks), "error": f"{type(exc).__name__}: {exc}"}
    if not methods:  # the exception and its frames are gone, and the stack with them
        if device == "cuda":
            torch.cuda.empty_cache()  # its GPU memory back to the driver: the tasks train in other workers now
        return CellDeferred([task.task_id for task in tasks], cell)
    records = []
    for i, task in enumerate(tasks):
        # each fitted member is let go after its task: on a GPU PA's dense curvature holds gigabytes
        method, methods[i] = methods[i], None
        records.append(execute_task(task, results_dir, data_dir, threads, False, device, method, cell))
        del method
    return records


def cells(tasks: list[Task]) -> tuple[list[list[Task]], list[Task]]:
    """(cells, the other tasks). A cell: >= 2 tasks of one fit each (offline series, or sets) that differ
    only in their seed, whose method trains several fits as one network (``fit_together``: PA-RNN's
    order-selection cells; CF-RNN, MQ-RNN and DP-RNN, :class:`~pibench.methods.sequence.base.TrainsTogether`)."""
    groups: dict[str, list[Task]] = {}
    others = []
    for task in tasks:
        c = task.config
        if c["protocol"].get("kind") in ("offline", "set") and hasattr(task_method_class(task), "fit_together"):
            groups.setdefault(stable_hash({k: v for k, v in c.items() if k != "seed"}), []).append(task)
        else:
            others.append(task)
    others += [group[0] for group in groups.values() if len(group) == 1]
    return [group for group in groups.values() if len(group) > 1], others


@dataclass
class RunReport:
    """What one run did: the records of the tasks it executed, how many it skipped as already finished,
    ``notes`` (datasets or methods left out, plugins imported again) and ``redone`` (tasks that ran again
    although a record of their configuration existed, each with why)."""

    executed: list[dict]
    skipped: int
    summary_path: Path
    notes: list[str] = field(default_factory=list)
    redone: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.executed if r["status"] != "ok"]

    def failure_lines(self) -> list[str]:
        """One line per failed task: what it was, its id and the first line of its error."""
        return [f"{r['dataset']} / {r['method']} {r['setting']} / seed {r['seed']} / alpha {r.get('alpha')} "
                f"(task {r.get('task_id')}): {(str(r.get('error', '')).strip() or 'no message').splitlines()[0]}"
                for r in self.failed]

    def __repr__(self) -> str:
        extra = "".join(f", {n} {what}" for n, what in ((len(self.failed), "failed"), (len(self.redone), "ran again"),
                                                       (len(self.notes), "note(s)")) if n)
        return f"<RunReport: ran {len(self.executed)}, skipped {self.skipped} already finished{extra}>"

    def _repr_html_(self) -> str:
        rows = [{"task": f"{r['dataset']} / {r['method']} {r['setting']} / seed {r['seed']}", "status": r["status"],
                 "seconds": round(float(r.get("wall_seconds") or 0), 1)} for r in self.executed]
        table = pd.DataFrame(rows, columns=["task", "status", "seconds"]).to_html(index=False, border=0)
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in [*self.notes, *self.redone])
        return (f"<p>{html.escape(repr(self))}</p>" + (f"<ul>{lines}</ul>" if lines else "")
                + (table if rows else ""))


def _plan_shared_fits(tasks: list[Task], results_dir, data_dir, device: str = "cpu"
                      ) -> tuple[list, set[str], list[str]]:
    """Chunk jobs for the base fits that split-conformal tasks share, those tasks' ids, and a line per stored
    chunk that failed its check and is computed again (:func:`~pibench.benchmarks.forecast_stage.drop_bad_chunks`)."""
    jobs: dict[tuple[str, int], tuple[Task, range]] = {}
    dependent: set[str] = set()
    checked: dict[str, None] = {}
    dropped: list[str] = []
    for task in tasks:
        try:
            problem = task_problem(task, data_dir).problem
            plan = forecast_plan(task, problem, task_method(task), device)
        except Exception:  # the task itself will record the problem
            continue
        if plan is None:
            continue
        dependent.add(task.task_id)
        if plan.key not in checked:
            checked[plan.key] = None
            dropped += drop_bad_chunks(plan, results_dir)
        for fits in missing_chunks(plan, results_dir):
            jobs.setdefault((plan.key, fits.start), (task, fits))
    return list(jobs.values()), dependent, dropped


class _TaskProgress:
    """The bar's postfix while a task runs in this process (:mod:`pibench.methods.task_progress`): how far its
    fits and training epochs are ("fits 3/20, epochs 150/1000": done of all), redrawn at most every ``every``
    seconds."""

    def __init__(self, bar, every: float = 0.2) -> None:
        self.bar, self.every, self.shown = bar, every, -math.inf
        self.parts: dict[str, str] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "fits":  # a fit's epochs are done with it
            self.parts.pop("epochs", None)
        self.parts[stage] = f"{stage} {done}/{total}"
        now = time.monotonic()
        if now - self.shown >= self.every:
            self.shown = now
            self.bar.set_postfix_str(", ".join(self.parts.values()))


def _drain(jobs, slots: JobSlots, bar, executed: list[dict], log: Callable[[dict], None] | None = None,
           deferred: list[CellDeferred] | None = None, inside: _TaskProgress | None = None) -> None:
    """Run ``jobs``, collecting their records, and into ``deferred`` the cells that could not train together;
    ``log`` sees each finished record (``progress="lines"``: a log's account of what ran, how and how long,
    where a bar only says how many); ``inside``, if given, shows how far a task is while it runs (the jobs
    run one by one in this process)."""
    if not jobs:  # nothing to ask of the workers (a dask cluster may be gone by now: no need to know)
        return
    parallel = Parallel(n_jobs=slots.n_jobs, pre_dispatch=slots.pre_dispatch, return_as="generator_unordered")
    with listening(inside) if inside is not None else nullcontext():
        for result in parallel(jobs):
            if isinstance(result, CellDeferred):
                assert deferred is not None, "a cell deferred its tasks to a drain that does not take them"
                deferred.append(result)
                continue
            for record in result if isinstance(result, list) else [result]:  # a cell's job: its tasks' records
                if record["method"] != "base fits":
                    executed.append(record)
                if inside is not None:  # the next task's fits and epochs start from nothing
                    inside.parts.clear()
                bar.set_postfix_str(f"{record['method']} {record['status']}", refresh=False)
                bar.update()
                if log is not None:
                    log(record)


def _finished_line(record: dict, done: int, total: int, levels: bool = False) -> str:
    """``[done/total] dataset / method setting / seed s: status, fit (of it train / intervals, where a method
    says) / predict / wall seconds, how it trained``; `` / alpha a`` after the seed where the run has several
    ``levels``."""
    what = " / ".join(str(record[k]) for k in ("dataset", "method", "setting") if record.get(k) not in (None, ""))
    seconds = ", ".join(f"{k} {record[f'{k}_seconds']:.1f} s" for k in ("fit", "train", "intervals", "predict", "wall")
                        if isinstance(record.get(f"{k}_seconds"), (int, float)))
    extra = [f"train step {record['train_step']}"] if record.get("train_step") else []
    cell = record.get("cell")
    if isinstance(cell, dict):
        error = " ".join(str(cell.get("error", "")).split())[:100]  # one line: device_run reads these lines back
        extra.insert(0, f"trained in a cell of {cell.get('members')}" if "error" not in cell
                     else f"its cell of {cell.get('members')} failed, trained alone ({error})")
    seed = f" / seed {record['seed']}" if "seed" in record else ""
    seed += f" / alpha {record['alpha']:g}" if levels and isinstance(record.get("alpha"), (int, float)) else ""
    return (f"[{done}/{total}] {what}{seed}: {record['status']}"
            + (f"; {seconds}" if seconds else "") + "".join(f"; {e}" for e in extra))


#: loky replaces a worker whose memory grew (torch's allocator) and warns that it did; the job runs in the new
#: worker, so the line only alarms a user.
LOKY_WORKER_RESTART = "A worker stopped while some jobs were given to the executor"


def run_tasks(tasks: list[Task], results_dir: str | os.PathLike, *, n_jobs: int = 1,
              data_dir: str | None = None, threads: int = 1, progress: bool | str = True, device: str = "cpu",
              backend: str = "loky", scheduler: str | None = None, batch_cells: bool | None = None,
              on_start: Callable[[int, int], None] | None = None) -> RunReport:
    """Check everything, execute the unfinished tasks, then rewrite ``summary.csv`` from the store.

    Before any work: the results dir must be usable, the device and backend
    available, and every task valid (:func:`~pibench.benchmarks.preflight.prepare_tasks`; a
    ValueError lists the problems and nothing is written). The results dir is locked
    for the run. Phase 1 runs the tasks that need no shared base fits and computes
    the chunks of those fits, side by side; phase 2 runs the split-conformal tasks on
    the fits, and alone the tasks of any cell that could not train together. ``device``
    ('cpu', 'cuda' or 'auto') is where networks train; it is not part of a task's identity
    (a GPU result replaces no CPU one: the same task is done).
    ``backend`` 'loky' (this machine) or 'dask' (``scheduler`` address, else a local cluster).
    ``batch_cells`` (default: on a GPU only) trains each cell's networks as one (:func:`cells`);
    on the CPU every task trains alone, as it always has. ``progress``: True a bar, False nothing,
    "lines" one line per finished task on stderr (for logs). ``on_start(tasks, to_run)``, if given, is called
    once every check passed, before any work.
    """
    check_workers(n_jobs, threads, backend, scheduler)
    check_backend(backend, scheduler)
    device = resolve_device(device)
    batch_cells = device == "cuda" if batch_cells is None else batch_cells
    check_results_dir(results_dir)
    ResultsStore(results_dir).check_free()  # at once, not after the preparation (the lock below decides)
    # the folder this process found the data in, given to every worker: a dask worker elsewhere has not
    # this shell's PIBENCH_DATA
    data_dir = data_dir if data_dir is not None else os.environ.get(DATA_ENV_VAR) or None
    data_dir = os.path.abspath(data_dir) if data_dir else None  # as a worker in another folder must see it
    check_remote_paths([t.config["dataset"] for t in tasks], scheduler)
    tasks, notes = prepare_tasks(tasks, data_dir)
    for line in notes:  # a run's cost is worth knowing before the wait (the report repeats it at the end)
        if LONG_RUN_NOTE in line:
            print(line, file=sys.stderr, flush=True)
    store = ResultsStore(results_dir)
    with store.lock():
        folder = store.folder_id()
        why = {t.task_id: store.why_not_done(t.task_id) for t in tasks}
        notes += _refreshed_files([t for t in tasks if why[t.task_id] is None], store)
        store.mark_requested([t.task_id for t in tasks])
        todo = [t for t in tasks if why[t.task_id] is not None]
        redone = _why_again(todo, why, store)
        if on_start is not None:
            on_start(len(tasks), len(todo))
        executed: list[dict] = []
        if todo:
            chunks, dependent, dropped = _plan_shared_fits(todo, results_dir, data_dir, device)
            notes += dropped
            rd = os.path.abspath(results_dir)  # as the workers must see it: a remote one runs in its own folder
            # the tasks that need no shared fits (often the longest) start first, the chunks fill the other workers
            independent = [t for t in todo if t.task_id not in dependent]
            batched, independent = cells(independent) if batch_cells else ([], independent)
            phase1 = [delayed(execute_cell)(cell, rd, data_dir, threads, device) for cell in batched]
            phase1 += [delayed(execute_task)(t, rd, data_dir, threads, False, device) for t in independent]
            phase1 += [delayed(execute_chunk)(t, fits, rd, data_dir, threads, device) for t, fits in chunks]
            jobs = len(todo) + len(chunks)
            with warnings.catch_warnings(), parallel_backend(backend, n_jobs, scheduler) as slots, \
                    tqdm(total=jobs, desc=f"{len(todo)} tasks + {len(chunks)} shared fit chunks" if chunks else
                         "pibench", unit="job", disable=progress is not True) as bar:
                warnings.filterwarnings("ignore", message=LOKY_WORKER_RESTART, category=UserWarning)
                finished = itertools.count(1)
                levels = len({t.config["alpha"] for t in todo}) > 1

                def log(record: dict) -> None:
                    print(_finished_line(record, next(finished), jobs, levels), file=sys.stderr, flush=True)
                deferred: list[CellDeferred] = []
                # one job at a time in this process: the bar says how far the running task's fits and epochs are
                inside = _TaskProgress(bar) if progress is True and slots.n_jobs == 1 and backend == "loky" else None
                _drain(phase1, slots, bar, executed, log if progress == "lines" else None, deferred, inside)
                # the tasks of cells that could not train together, alone and side by side, beside those on shared fits
                by_id = {t.task_id: t for t in todo}
                phase2 = [delayed(execute_task)(by_id[i], rd, data_dir, threads, False, device, None, d.cell)
                          for d in deferred for i in d.task_ids]
                phase2 += [delayed(execute_task)(t, rd, data_dir, threads, True, device)
                           for t in todo if t.task_id in dependent]
                _drain(phase2, slots, bar, executed, log if progress == "lines" else None, inside=inside)
        store.check_kept(folder, [r["task_id"] for r in executed])
        notes += _script_state_notes(tasks) if executed else []
        plugins = {t.config["method"]["name"]: t.bound_identity["plugin"] for t in tasks
                   if "plugin" in t.bound_identity}
        current, _ = select_current(store.records(), code_version(), plugins, store.requested())
        statistics = compute_statistics(current, store.reader(current), store.statistics_cache)
        summary = write_summary(current, Path(results_dir), statistics.tasks)
        if executed:  # what `pibench report` wrote no longer holds every task: it writes them again
            for derived in REPORT_FILES:
                (Path(results_dir) / derived).unlink(missing_ok=True)
    return RunReport(executed=executed, skipped=len(tasks) - len(todo), summary_path=summary, notes=notes,
                     redone=redone)


def _refreshed_files(done: list[Task], store: ResultsStore) -> list[str]:
    """A line per data file whose bytes (or path) differ from those the records of done tasks name, where the data
    this run loaded from it are theirs (their ids, re-derived from the data as loaded, are the same): a column they
    do not read edited, another copy of the file. Their records take the files as loaded
    (:meth:`ResultsStore.refresh_data_files`), where the tables left them out as run on a changed file."""
    kept: dict[str, set[str]] = {}
    for task in done:
        for path in store.refresh_data_files(task.task_id, task.data_files) if task.data_files else []:
            kept.setdefault(path, set()).add(task.config["dataset"]["label"])
    return [f"{path} holds the data the stored tasks of {', '.join(map(repr, sorted(labels)))} were computed on, "
            "though its bytes or its folder differ from those they name (a column they do not read edited, or "
            "another copy): their results stand, now naming this file"
            for path, labels in sorted(kept.items())]


def _script_state_notes(tasks: list[Task]) -> list[str]:
    """A line per method of the running script whose code's data (a global its code reads) changed while the
    run ran it in this process, as a cache it fills would: the next run in this script names it as new code and
    runs its tasks again, and with other workers it would not."""
    lines: dict[str, None] = {}
    for name, (task, prepared) in {t.config["method"]["name"]: (t, t.bound_identity.get("plugin") or {})
                                   for t in tasks}.items():
        if any(key.startswith("__main__:") for key in prepared) and \
                method_code_identity(task_method_class(task)) != prepared:
            lines[f"method {name!r} changed data of the running script that its code reads while it ran (a cache "
                  "in a global?): the next run in this script counts that as new code and runs it again; keep "
                  "such state on the method (self.cache_) or in a module of its own"] = None
    return list(lines)


def _nearest(before: list[tuple[str, str, dict]], identity: dict) -> dict:
    """Of earlier (started_at, task id, identity) of one configuration, the identity with the fewest parts
    unlike ``identity`` (data, pibench's code, each plugin module), the newest among those: what this run
    changed is told against the code that ran last (a plugin edited back to an earlier version reuses that
    version's record, which is then older than the one it replaced)."""
    def unlike(other: dict) -> int:
        plugin, theirs = identity.get("plugin") or {}, other.get("plugin") or {}
        return (int(other.get("data") != identity.get("data")) + int(other.get("code") != identity.get("code"))
                + sum(plugin.get(m) != theirs.get(m) for m in set(plugin) | set(theirs)))

    newest_first = sorted(before, key=lambda e: e[0], reverse=True)
    return min(newest_first, key=lambda e: unlike(e[2]))[2]  # the first of the fewest: the newest of them


def _why_again(todo: list[Task], why: dict[str, str | None], store: ResultsStore) -> list[str]:
    """One line per task to run whose configuration was run before: a damaged or failed record, or a
    record of the same configuration and seed under another identity (the data, pibench's code, a
    plugin's source changed), naming what changed."""
    lines = [f"{t.label()} (task {t.task_id}): {why[t.task_id]}" for t in todo if why[t.task_id] != "no record"]
    new = [t for t in todo if why[t.task_id] == "no record"]
    earlier = store.identities_by_config() if new else {}
    rows: dict[tuple, list[tuple[str, dict]]] | None = None
    for task in new:
        before = [entry for entry in earlier.get(stable_hash(task.config), []) if entry[1] != task.task_id]
        reason = identity_change(_nearest(before, task.bound_identity), task.bound_identity) if before else None
        if not before:  # a new configuration of a row run before: say what changed in it
            rows = store.configs_by_row() if rows is None else rows
            older = sorted(rows.get(row_of(task.config), []), key=lambda entry: entry[0])
            changed = configuration_change(older[-1][1], task.config) if older else ""
            reason = f"its configuration changed since the last run of this row: {changed}" if changed else None
        if reason:
            lines.append(f"{task.label()} (task {task.task_id}): {reason}")
    return lines
