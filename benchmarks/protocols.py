"""Evaluation protocols (docs/guide/protocols.md): offline, online sliding window, and sets.

Each protocol drives an :class:`~pibench.methods.base.IntervalMethod` through its
contract and returns the per-step predictions plus fit / predict wall times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from pibench.data_loaders.problems import SeriesProblem, SetProblem
from pibench.data_loaders.typed_params import check_arguments, parameter_types
from pibench.methods.base import Interval, IntervalMethod
from pibench.methods.task_progress import report


@dataclass
class ProtocolOutput:
    """Test targets and intervals, (n_test, G) for series or (n, H) for sets."""

    y: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    point: np.ndarray
    fit_seconds: float
    predict_seconds: float
    n_fits: int


def _check_shape(method: IntervalMethod, shape: str, problem_name: str) -> None:
    if not method.handles(shape):
        raise ValueError(
            f"method {method.name!r} handles {method.shape} problems, but dataset "
            f"{problem_name!r} is a {shape} problem; pick a {shape} method (see `pibench list`)."
        )


@dataclass(frozen=True)
class SeriesSchedule:
    """When a series protocol (re)fits: at each of ``fit_steps`` on the ``window`` steps before it."""

    window: int
    stop: int
    fit_steps: tuple[int, ...]

    def window_start(self, fit_step: int) -> int:
        return fit_step - self.window

    def served_steps(self, i: int) -> range:
        """Test steps predicted by the i-th fit."""
        end = self.fit_steps[i + 1] if i + 1 < len(self.fit_steps) else self.stop
        return range(self.fit_steps[i], end)


def check_protocol(protocol: dict) -> None:
    """A series protocol's keys, value types and kind (ValueError with the fix): all that needs no data;
    the ranges are :func:`series_schedule`'s."""
    allowed = [k for k in parameter_types(series_schedule) if k != "problem"]
    unknown = sorted(set(protocol) - set(allowed))
    found = [f"protocol has no key(s) {unknown}; it takes {allowed}."] if unknown else []
    for check, arguments in ((check_arguments, (series_schedule, {k: v for k, v in protocol.items() if k in allowed},
                                                "protocol")), (_check_kind, (protocol.get("kind", "online"),)),
                             (_check_counts, (protocol,))):
        try:
            check(*arguments)
        except ValueError as exc:
            found.append(str(exc))
    if found:
        raise ValueError(" ".join(dict.fromkeys(found)))


def _check_counts(protocol: dict) -> None:
    """The counts of a protocol that must be at least 1, whatever the data (a window of 0 or less is no window)."""
    low = [f"{key}={protocol[key]!r}" for key in ("window", "retrain_every", "test_steps")
           if isinstance(protocol.get(key), (int, float)) and not isinstance(protocol[key], bool) and protocol[key] < 1]
    if low:
        raise ValueError(f"protocol {', '.join(low)}: each must be at least 1 (window: the steps each fit sees; "
                         "retrain_every: 1 refits at every step, as in the paper; test_steps: how many test steps "
                         "to use).")


def _check_kind(kind) -> None:
    if kind not in ("online", "offline"):
        raise ValueError(f"protocol kind={kind!r}; use 'online' or 'offline'.")


def series_schedule(
    problem: SeriesProblem,
    *,
    kind: str = "online",
    window: int | None = None,
    retrain_every: int = 1,
    test_steps: int | None = None,
) -> SeriesSchedule:
    """Validate a series protocol's parameters and list its fits."""
    _check_kind(kind)
    window = problem.test_start if window is None else int(window)
    if not 0 < window <= problem.test_start:
        raise ValueError(
            f"window={window} must be between 1 and the {problem.test_start} training steps of "
            f"{problem.name!r}; the series is too short for this window (shorten the window or "
            "lengthen the training span)."
        )
    if retrain_every < 1:
        raise ValueError(f"retrain_every={retrain_every} must be >= 1 (1 refits at every step, as in the paper).")
    stop = problem.n_steps if test_steps is None else min(problem.n_steps, problem.test_start + int(test_steps))
    if stop <= problem.test_start:
        raise ValueError(f"test_steps={test_steps} leaves no test step; use a positive number.")
    every = retrain_every if kind == "online" else stop
    return SeriesSchedule(window=window, stop=stop, fit_steps=tuple(range(problem.test_start, stop, every)))


def _of_shape(interval: object, shape: tuple[int, ...], method: IntervalMethod, asked: str) -> Interval:
    """``interval`` if it is an :class:`Interval` whose arrays have the targets' ``shape`` and no lower bound
    above its upper one (unless the method ``may_cross``); else a ValueError naming the method, before the
    answer is stacked with the others."""
    if not isinstance(interval, Interval):
        raise ValueError(f"method {method.name!r} returned a {type(interval).__name__} from predict_interval for "
                         f"{asked}; return Interval(lower, upper, point) (from pibench import Interval), each an "
                         f"array of shape {shape}.")
    if interval.lower.shape != shape:
        raise ValueError(f"method {method.name!r} returned intervals of shape {interval.lower.shape} for {asked}, "
                         f"whose targets have shape {shape}: predict_interval must answer every row of X (steps "
                         "or sequences) and every series or horizon, one value each.")
    crossed = interval.lower > interval.upper
    if crossed.any() and not method.may_cross:
        where = tuple(int(i) for i in np.argwhere(crossed)[0])
        raise ValueError(f"method {method.name!r} returned lower > upper for {asked} at {int(crossed.sum())} of "
                         f"{crossed.size} point(s) (at index {where}: {interval.lower[where]:.6g} > "
                         f"{interval.upper[where]:.6g}): swap the bounds, or, where crossing is an outcome of the "
                         "method (quantiles estimated apart), set may_cross = True on its class and count it in "
                         "its diagnostics.")
    return interval


def _time_label(problem: SeriesProblem, row: int) -> str:
    """Row ``row``'s time as the stored predictions and the figures label it."""
    return str(problem.time[row]) if problem.time is not None else str(row)


def run_series(problem: SeriesProblem, method: IntervalMethod, **protocol) -> ProtocolOutput:
    """Offline (fit once) or online (refit every ``retrain_every`` steps on the last ``window``).

    At each test step t the method predicts the interval for X_t from data up to
    t - 1, then sees y_t through ``update`` (a method that ``serves_spans`` is asked
    for a fit's steps at once). Offline fits once on the ``window`` steps before the
    test span (default: the whole training span).
    """
    _check_shape(method, "series", problem.name)
    schedule = series_schedule(problem, **protocol)
    fit_s = predict_s = 0.0
    intervals: list[Interval] = []
    n_test = schedule.stop - problem.test_start
    for i, t_fit in enumerate(schedule.fit_steps):
        tic = time.perf_counter()
        stage, steps = "fit", range(t_fit, t_fit)  # where a failure is: said only then (no work per step)
        try:
            data = problem.window(schedule.window_start(t_fit), t_fit)
            method.fit(data) if i == 0 else method.refit(data)
            fit_s += time.perf_counter() - tic
            tic = time.perf_counter()
            steps = schedule.served_steps(i)
            if method.serves_spans:  # no online state: every step of this fit in one call
                stage = "span"
                intervals.append(_of_shape(method.predict_interval(problem.X[steps.start : steps.stop]),
                                           problem.y[steps.start : steps.stop].shape, method,
                                           f"a span of {len(steps)} steps (serves_spans = True)"))
            else:
                stage = "anticipate"
                method.anticipate(problem.X[steps.start : steps.stop])
                stage = "step"
                for t in steps:
                    intervals.append(_of_shape(method.predict_interval(problem.X[t : t + 1]),
                                               problem.y[t : t + 1].shape, method, "one step"))
                    method.update(problem.y[t : t + 1])
        except Exception as exc:  # where in the test span: said in the record's error (runner.execute_task)
            first, last = steps.start - problem.test_start + 1, steps.stop - problem.test_start
            where = {"fit": f"{'fitting' if i == 0 else 'refit'} {i + 1} of {len(schedule.fit_steps)}, before test "
                            f"step {t_fit - problem.test_start + 1} of {n_test}",
                     "span": f"test steps {first}-{last} of {n_test}",
                     "anticipate": f"anticipate() of test steps {first}-{last} of {n_test}"}.get(stage) or \
                f"test step {t - problem.test_start + 1} of {n_test} (time {_time_label(problem, t)})"
            exc.add_note(f"method {method.name!r} at {where}")
            raise
        predict_s += time.perf_counter() - tic
        report("fits", i + 1, len(schedule.fit_steps))  # the runner's bar, where it listens

    def stack(attr: str) -> np.ndarray:
        return np.concatenate([getattr(iv, attr) for iv in intervals])

    return ProtocolOutput(
        y=problem.y[problem.test_start : schedule.stop], lower=stack("lower"), upper=stack("upper"),
        point=stack("point"), fit_seconds=fit_s, predict_seconds=predict_s, n_fits=len(schedule.fit_steps),
    )


def run_set(problem: SetProblem, method: IntervalMethod) -> ProtocolOutput:
    """Fit on train (and calibration), predict every test sequence (docs/guide/protocols.md)."""
    _check_shape(method, "set", problem.name)
    tic = time.perf_counter()
    method.fit(problem.train, problem.calibration)
    fit_s = time.perf_counter() - tic
    tic = time.perf_counter()
    iv = _of_shape(method.predict_interval(problem.test.x), problem.test.y.shape, method, "the test sequences")
    predict_s = time.perf_counter() - tic
    return ProtocolOutput(
        y=problem.test.y, lower=iv.lower, upper=iv.upper, point=iv.point,
        fit_seconds=fit_s, predict_seconds=predict_s, n_fits=1,
    )
