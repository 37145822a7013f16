"""A method cannot change the data of the tasks after it: a problem's arrays and windows are read-only, and a
change behind the flag (a torch tensor that shares their memory) fails the task and is not served to the next.

Before, a plugin's `data.y -= ...` in ``fit`` changed the worker's cached problem: every later task of the
worker, other methods' too, was computed and stored on the changed data under the clean data's task id."""

import json
import textwrap

import numpy as np
import pytest

from pibench import load_results, run
from pibench.data_loaders.problems import SeriesProblem, SetData
from pibench.data_loaders.registry import load_dataset
from pibench.methods.catalog import import_method_file
from tests.test_method_author_loop import SUITE as LOOP_SUITE

METHODS = '''
import warnings
import numpy as np
import torch
from pibench import Interval, IntervalMethod, register


class Gauss(IntervalMethod):
    """mean +/- 2 sd of the window."""

    def fit(self, data, calibration=None):
        self.mean_, self.sd_ = data.y.mean(axis=0), data.y.std(axis=0)
        return self

    def predict_interval(self, X):
        return Interval((self.mean_ - 2 * self.sd_)[None], (self.mean_ + 2 * self.sd_)[None], self.mean_[None])


@register
class ChangesWithNumpy(Gauss):
    name = "ro_numpy"

    def fit(self, data, calibration=None):
        data.y -= 1.0
        return super().fit(data)


@register
class ChangesWithTorch(Gauss):
    name = "ro_torch"

    def fit(self, data, calibration=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's: the array is not writable
            torch.from_numpy(data.y).mul_(0.0)  # behind the flag: the memory is the problem's
        return super().fit(data)


@register
class ChangesTheMetadata(Gauss):
    name = "ro_metadata"

    def prepare(self, problem):
        problem.metadata["conditional_mean"] = 0.0 * problem.metadata["conditional_mean"]  # the oracle's


@register
class ChangesInACell(IntervalMethod):
    """A set method whose networks train together, the training changing the data behind the flag."""

    name = "ro_cell"
    shape = "set"

    @classmethod
    def fit_together(cls, methods, datas):
        for method, (train, calibration) in zip(methods, datas):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.from_numpy(train.y).add_(50.0)
            method.fit(train, calibration)

    def fit(self, data, calibration=None):
        self.mean_ = data.y.mean(axis=0)
        return self

    def predict_interval(self, X):
        mean = np.broadcast_to(self.mean_, (len(X), len(self.mean_)))
        return Interval(mean - 3.0, mean + 3.0, mean)


@register
class FailsAfterChanging(Gauss):
    name = "ro_torch_then_fails"

    def fit(self, data, calibration=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.from_numpy(data.y).add_(5.0)
        raise RuntimeError("a bug further down")
'''

SUITE = LOOP_SUITE.replace('name = "loop"', 'name = "ro"').replace('"rolling_gauss"', '"autoreg"')


SETS = '''
name = "ro_sets"
seeds = [0, 1, 2]

[[datasets]]
name = "seasonal_sets"
params = { n_train = 60, n_calibration = 40, n_test = 50, input_length = 10, horizon = 3 }

[[methods]]
name = "ro_cell"
'''


def test_a_problems_arrays_and_windows_are_read_only_and_the_callers_array_is_not():
    problem = load_dataset("ar", {"n_train": 200, "n_test": 100}, seed=0)
    assert isinstance(problem, SeriesProblem)
    window = problem.window(0, 50)
    for array in (problem.y, problem.X, problem.time, window.y, window.X):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0.0
    y = np.arange(10.0)
    sets = SetData(x=np.ones((10, 3, 1)), y=y)
    with pytest.raises(ValueError, match="read-only"):
        sets.y[0, 0] = 1.0
    y[0] = 5.0  # the loader's own array stays its own to write
    assert sets.y[0, 0] == 5.0
    for name, params in (("ar", {}), ("seasonal_sets", {})):  # the oracle's means, in the metadata
        metadata = load_dataset(name, params, seed=0).metadata
        key = "conditional_mean" if name == "ar" else "test_conditional_mean"
        with pytest.raises(ValueError, match="read-only"):
            metadata[key][0] = 0.0


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "changers.py").write_text(textwrap.dedent(METHODS))
    import_method_file(str(folder / "changers.py"))  # once: a module is imported once


@pytest.fixture
def methods(plugin, tmp_path):
    (tmp_path / "ro.toml").write_text(SUITE)
    return tmp_path


def test_a_method_that_changes_its_data_fails_and_the_next_methods_see_the_data_unchanged(methods):
    suite = str(methods / "ro.toml")
    # one worker: every task in this process, one after another, on its one cached problem
    run(suite, methods=["ro_numpy", "ro_torch", "ro_torch_then_fails", "ro_metadata", "autoreg", "oracle"],
        results_dir=methods / "r", progress=False, errors="ignore")
    run(suite, methods=["autoreg", "oracle"], results_dir=methods / "clean", progress=False)
    records = {r["method"]: r for r in load_results(methods / "r").records}
    assert records["ro_numpy"]["status"] == "error"
    assert "read-only" in records["ro_numpy"]["error"] and "y = data.y.copy()" in records["ro_numpy"]["error"]
    assert records["ro_torch"]["status"] == "error"
    assert "'ro_torch' changed the data it was given in place" in records["ro_torch"]["error"]
    assert records["ro_torch_then_fails"]["status"] == "error"
    error = records["ro_torch_then_fails"]["error"]
    assert error.startswith("RuntimeError: a bug further down") and "changed the data it was given" in error
    assert "'ro_metadata' changed the data it was given in place" in records["ro_metadata"]["error"]
    for clean in load_results(methods / "clean").records:
        after = records[clean["method"]]
        assert after["task_id"] == clean["task_id"]
        changed, unchanged = (json.dumps({k: r[k] for k in ("coverage", "mean_length", "predictions_sha256")})
                              for r in (after, clean))
        assert changed == unchanged


def test_a_cell_whose_training_changed_its_data_trains_each_task_alone_on_the_data_loaded_again(methods):
    """Three seeds trained as one cell, the training adding 50 to every target behind the read-only flag:
    the first task's check caught it and the two after it were stored as ok on the changed data. Now the
    cell's tasks train alone, on the data loaded anew, their records saying why."""
    from pibench.benchmarks.runner import run_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    (methods / "sets.toml").write_text(SETS)
    tasks = build_tasks(load_suite(str(methods / "sets.toml")))
    run_tasks(tasks, methods / "cell", progress=False, batch_cells=True)
    run_tasks(tasks, methods / "alone", progress=False, batch_cells=False)
    records, alone = (sorted(load_results(methods / folder).records, key=lambda r: r["seed"])
                      for folder in ("cell", "alone"))
    assert [r["status"] for r in records] == ["ok"] * 3
    assert all("changed the data it was given in place" in r["cell"]["error"] for r in records)
    assert [r["predictions_sha256"] for r in records] == [r["predictions_sha256"] for r in alone]


def test_a_table_in_the_metadata_is_digested_by_its_values_not_its_display():
    """A DataFrame's repr follows display options and elides middle rows: the digest reads its labels and values,
    so a display setting changes nothing and a middle row's change is seen."""
    import pandas as pd

    from pibench.data_loaders.fingerprint import metadata_digest

    problem = load_dataset("ar", {}, seed=0)
    table = pd.DataFrame({"a": np.arange(200.0), "b": ["x"] * 200})
    problem.metadata["table"] = table.copy()
    digest = metadata_digest(problem)
    with pd.option_context("display.max_rows", 4, "display.precision", 1):
        assert metadata_digest(problem) == digest
    problem.metadata["table"].iloc[100, 0] = -1.0
    assert metadata_digest(problem) != digest
    for other in (table.rename(columns={"a": "c"}), table.set_index(np.arange(1, 201)), table.rename_axis("day")):
        problem.metadata["table"] = other
        assert metadata_digest(problem) != digest
    series = pd.Series([[1, 2], {"k": 3}, np.arange(2)], name="mixed")  # cells pandas cannot hash: by their text
    problem.metadata["table"] = series
    digest = metadata_digest(problem)
    for other in (series.rename("other"), pd.Series([[1, 2], {"k": 4}, np.arange(2)], name="mixed")):
        problem.metadata["table"] = other
        assert metadata_digest(problem) != digest


def test_each_thread_of_a_worker_has_its_own_copy_so_a_change_is_blamed_on_its_own_task():
    """A dask worker of several threads runs tasks side by side in one process: each thread loads its own
    problem, so one task's change in place fails that task and leaves a concurrent task's data unchanged."""
    from concurrent.futures import ThreadPoolExecutor

    from pibench.api import suite_tasks
    from pibench.benchmarks.preflight import DataChanged, check_data_untouched, load_task_data

    task = suite_tasks(methods=["aci"], datasets=["ar1"], seeds=[0], quick=True)[1][0]
    here = load_task_data(task, None)
    assert load_task_data(task, None) is here  # one thread's tasks share one load
    with ThreadPoolExecutor(1) as pool:
        there = pool.submit(load_task_data, task, None).result()
        assert there is not here and there.fingerprint == here.fingerprint
        y = there.problem.y
        y.setflags(write=True)  # what a method behind the flag does
        y[0] += 1.0
        check_data_untouched(task, here)  # the concurrent task's data are as loaded
        with pytest.raises(DataChanged, match="changed the data it was given in place"):
            pool.submit(check_data_untouched, task, there).result()
        assert pool.submit(load_task_data, task, None).result() is not there  # that thread loads anew
    assert load_task_data(task, None) is here  # and this one keeps its own


def test_a_worker_of_many_threads_keeps_each_threads_load():
    """Twelve threads loading one dataset side by side, twice each: every thread finds its own first load again
    (one cache of 8 shared by all threads evicted some before their second load)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from pibench.api import suite_tasks
    from pibench.benchmarks.preflight import load_task_data

    task = suite_tasks(methods=["aci"], datasets=["ar1"], seeds=[0], quick=True)[1][0]
    together = threading.Barrier(12)

    def twice() -> bool:
        first = load_task_data(task, None)
        together.wait(timeout=60)  # every thread has loaded once before any loads again
        return load_task_data(task, None) is first

    with ThreadPoolExecutor(12) as pool:
        assert all(pool.map(lambda _: twice(), range(12)))
