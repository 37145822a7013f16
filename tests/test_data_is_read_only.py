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
class FailsAfterChanging(Gauss):
    name = "ro_torch_then_fails"

    def fit(self, data, calibration=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.from_numpy(data.y).add_(5.0)
        raise RuntimeError("a bug further down")
'''

SUITE = '''
name = "ro"
seeds = [0]
protocol = { kind = "online", window = 100, retrain_every = 50 }

[[datasets]]
name = "ar"
params = { n_train = 200, n_test = 200 }

[[methods]]
name = "autoreg"
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


@pytest.fixture
def methods(tmp_path):
    path = tmp_path / "changers.py"
    path.write_text(textwrap.dedent(METHODS))
    import_method_file(str(path))
    (tmp_path / "ro.toml").write_text(SUITE)
    return tmp_path


def test_a_method_that_changes_its_data_fails_and_the_next_methods_see_the_data_unchanged(methods):
    suite = str(methods / "ro.toml")
    # one worker: every task in this process, one after another, on its one cached problem
    run(suite, methods=["ro_numpy", "ro_torch", "ro_torch_then_fails", "autoreg"], results_dir=methods / "r",
        progress=False, errors="ignore")
    run(suite, methods=["autoreg"], results_dir=methods / "clean", progress=False)
    records = {r["method"]: r for r in load_results(methods / "r").records}
    assert records["ro_numpy"]["status"] == "error"
    assert "read-only" in records["ro_numpy"]["error"] and "y = data.y.copy()" in records["ro_numpy"]["error"]
    assert records["ro_torch"]["status"] == "error"
    assert "'ro_torch' changed the data it was given in place" in records["ro_torch"]["error"]
    assert records["ro_torch_then_fails"]["status"] == "error"
    error = records["ro_torch_then_fails"]["error"]
    assert error.startswith("RuntimeError: a bug further down") and "changed the data it was given" in error
    (clean,) = load_results(methods / "clean").records
    assert records["autoreg"]["task_id"] == clean["task_id"]
    changed, unchanged = (json.dumps({k: r[k] for k in ("coverage", "mean_length", "predictions_sha256")})
                          for r in (records["autoreg"], clean))
    assert changed == unchanged
