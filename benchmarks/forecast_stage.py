"""Fit once, calibrate many: the base fits of split-conformal tasks, computed ahead in batches.

Tasks whose methods share a base-forecaster configuration on the same data and
protocol (ACI at every gamma, AgACI, NexCP) share one set of base fits. The
runner computes them before those tasks, in chunks of consecutive refits: each
chunk trains the models of all its windows and groups as one batched network
(docs/guide/methods.md: one base fit per hour and step serves every calibrator). Chunks are
files under ``<results-dir>/cache/split/<key>/``, written atomically, so they
resume like tasks.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pibench.benchmarks.protocols import SeriesSchedule, series_schedule
from pibench.benchmarks.store import atomic_write
from pibench.benchmarks.suite import Task, stable_hash
from pibench.data_loaders.problems import SeriesProblem
from pibench.methods.forecasters.split import PrecomputedForecasts, SplitForecaster

#: Refits per chunk, by device: on the CPU large enough to batch many windows and small enough to
#: spread over workers; on a GPU many more day-steps at once (one chunk of fesp trains 64 x 24 MLPs
#: together), since a batched step costs about as much for 1,536 models as for 192 there.
CHUNK_FITS = {"cpu": 8, "cuda": 64}


@dataclass(frozen=True)
class ForecastPlan:
    """The shared base fits one split-conformal task needs."""

    key: str
    forecaster: SplitForecaster
    n_fits: int
    chunk_fits: int = CHUNK_FITS["cpu"]

    def chunk_ranges(self) -> list[range]:
        size = self.chunk_fits
        return [range(lo, min(lo + size, self.n_fits)) for lo in range(0, self.n_fits, size)]


def plan_for(task: Task, problem: SeriesProblem, forecaster: SplitForecaster, device: str = "cpu") -> ForecastPlan:
    """The task's shared fits, chunked for ``device`` (chunk files name their refits, so chunks of a
    CPU and a GPU run share a folder without mixing)."""
    c = task.config
    schedule = series_schedule(problem, **c["protocol"])
    key = stable_hash({"dataset": c["dataset"], "data_seed": task.data_seed, "protocol": c["protocol"],
                       "forecaster": forecaster.config(), "identity": task.identity})[:20]
    return ForecastPlan(key=key, forecaster=forecaster, n_fits=len(schedule.fit_steps), chunk_fits=CHUNK_FITS[device])


def chunk_path(results_dir: str | os.PathLike, key: str, fits: range) -> Path:
    return Path(results_dir) / "cache" / "split" / key / f"fits_{fits.start:06d}_{fits.stop:06d}.npz"


def compute_chunk(problem: SeriesProblem, schedule: SeriesSchedule, forecaster: SplitForecaster,
                  fits: range) -> PrecomputedForecasts:
    """Train the base models of refits ``fits`` together and predict the steps each serves."""
    fit_steps = [schedule.fit_steps[i] for i in fits]
    starts = np.array([schedule.window_start(t) for t in fit_steps])
    X = np.stack([problem.X[s : s + schedule.window] for s in starts])
    y = np.stack([problem.y[s : s + schedule.window] for s in starts])
    model, residuals = forecaster.fit_windows(X, y, starts)
    served = [list(schedule.served_steps(i)) for i in fits]
    longest = max(len(s) for s in served)
    padded = np.stack([problem.X[s + [s[-1]] * (longest - len(s))] for s in served])  # (F, m, G, p)
    # one step at a time, as the online loop asks on demand: the same float32 kernels, the same bits
    points = np.concatenate([model.predict(padded[:, j : j + 1]) for j in range(longest)], axis=1)
    return PrecomputedForecasts(
        starts=starts, residuals=residuals, X_served=[problem.X[s] for s in served],
        points=[points[f, : len(s)] for f, s in enumerate(served)],
    )


def produced_by(plan: ForecastPlan, fits: range) -> str:
    """What a chunk file must say produced it: the plan's key and its refits."""
    return f"{plan.key}:{fits.start}-{fits.stop}"


def error_path(path: Path) -> Path:
    """Where a failed chunk leaves its traceback, for the tasks that needed it."""
    return path.with_suffix(".error")


def write_chunk(problem: SeriesProblem, protocol: dict, plan: ForecastPlan, fits: range,
                results_dir: str | os.PathLike) -> None:
    path = chunk_path(results_dir, plan.key, fits)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        chunk = compute_chunk(problem, series_schedule(problem, **protocol), plan.forecaster, fits)
    except Exception:
        atomic_write(error_path(path), lambda p: Path(p).write_text(traceback.format_exc()))
        raise
    atomic_write(path, lambda p: chunk.save(p, produced_by(plan, fits)))
    error_path(path).unlink(missing_ok=True)


def missing_chunks(plan: ForecastPlan, results_dir: str | os.PathLike) -> list[range]:
    return [r for r in plan.chunk_ranges() if not chunk_path(results_dir, plan.key, r).is_file()]


def drop_bad_chunks(plan: ForecastPlan, results_dir: str | os.PathLike) -> list[str]:
    """Check every stored chunk of the plan (each array against its checksum, and what produced it);
    delete those that fail, so that the run computes them again, and say so, one line each."""
    lines = []
    for fits in plan.chunk_ranges():
        path = chunk_path(results_dir, plan.key, fits)
        if not path.exists() and not path.is_symlink():
            continue
        try:
            if not path.is_file():
                raise ValueError("it is not a regular file")
            PrecomputedForecasts.load(path, produced_by(plan, fits))
        except Exception as exc:
            path.unlink(missing_ok=True)
            lines.append(f"shared base fits {path.parent.name}/{path.name} were unusable ({exc}); computed again")
    return lines


def load_forecasts(plan: ForecastPlan, results_dir: str | os.PathLike) -> PrecomputedForecasts:
    """All chunks of the plan, each checked (:meth:`PrecomputedForecasts.load`). A chunk that fails to
    load is deleted (a rerun recomputes it) and the error says so; a chunk that failed to compute raises
    with its traceback."""
    parts = []
    for fits in plan.chunk_ranges():
        path = chunk_path(results_dir, plan.key, fits)
        if not path.is_file():
            failure = error_path(path).read_text() if error_path(path).is_file() else "it was not computed"
            raise RuntimeError(f"shared base fits {path.name} are missing; the chunk failed:\n{failure}")
        try:
            parts.append(PrecomputedForecasts.load(path, produced_by(plan, fits)))
        except Exception as exc:
            path.unlink(missing_ok=True)
            raise RuntimeError(f"shared base fits {path} were unusable ({exc}); removed, rerun to recompute.") from exc
    return PrecomputedForecasts.concat(parts)
