"""A method from another package registers through the `pibench.methods` entry point."""

import os
import re
import subprocess
import sys
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import pibench.methods.base as base
import pibench.methods.catalog as catalog
from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.base import Interval, IntervalMethod

PLUGIN = '''
import numpy as np
from pibench.methods.base import Interval, IntervalMethod

class LastValue(IntervalMethod):
    """Random-walk forecast with a fixed half-width (a plugin)."""
    name = "last_value"

    def __init__(self, alpha=0.1, random_state=0, half_width=1.0):
        super().__init__(alpha=alpha, random_state=random_state)
        self.half_width = half_width

    def fit(self, data, calibration=None):
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        point = self.last_[None, :]
        return Interval(point - self.half_width, point + self.half_width, point)

    def update(self, y):
        self.last_ = y[-1]
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "pibench_plugin_demo.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint(name="last_value", value="pibench_plugin_demo:LastValue", group=catalog.ENTRY_POINT_GROUP)
    monkeypatch.setattr(catalog, "entry_points", lambda group: [ep] if group == catalog.ENTRY_POINT_GROUP else [])
    catalog._entry_points_on.cache_clear()  # read once per sys.path: read them again, this test's
    yield
    catalog._entry_points_on.cache_clear()
    base._REGISTRY.pop("last_value", None)


def test_entry_point_method_is_listed_and_runs(plugin):
    cls = catalog.get_method("last_value")
    assert "last_value" in catalog.available_methods()
    problem = ar_problem(n_train=50, n_test=10, seed=0)
    out = run_series(problem, cls(half_width=2.0), kind="offline")
    np.testing.assert_allclose(out.point[1:, 0], problem.y[50:59, 0])  # the previous revealed value
    np.testing.assert_allclose(out.upper - out.lower, 4.0)


def test_register_rejects_a_name_clash():
    class Clash(base.IntervalMethod):
        name = "aci"

        def fit(self, data, calibration=None):
            return self

        def predict_interval(self, X):
            raise NotImplementedError

    catalog.available_methods()
    with pytest.raises(ValueError, match="already registered"):
        base.register(Clash)


def test_register_refuses_an_unknown_shape_naming_the_three():
    """A typo ("sets") used to pass registration and end a later run in a KeyError traceback."""
    class Typo(base.IntervalMethod):
        name = "shape_typo_method"
        shape = "sets"  # type: ignore[assignment]

        def fit(self, data, calibration=None):
            return self

        def predict_interval(self, X):
            raise NotImplementedError

    with pytest.raises(ValueError, match=r"Typo.shape = 'sets': give one of 'series', 'set', 'any'"):
        base.register(Typo)
    assert "shape_typo_method" not in base.registered_methods()


def test_a_plugin_distribution_is_listed_and_runs(tmp_path):
    """A tiny installed distribution (its module and dist-info with the entry point) on the path of a
    fresh interpreter: `pibench list` shows its method and a run uses it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pibench_plugin_demo.py").write_text(PLUGIN)
    info = site / "pibench_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pibench-plugin-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pibench.methods]\nlast_value = pibench_plugin_demo:LastValue\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = subprocess.run([sys.executable, "-m", "pibench", "list"], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert "last_value" in listed.stdout and "a plugin" in listed.stdout
    done = subprocess.run([sys.executable, "-m", "pibench", "run", "--methods", "last_value", "--seeds", "0",
                           "--no-progress", "--results-dir", "r"], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| last_value |" in done.stdout


class _Shaped(IntervalMethod):
    """Answers every call with arrays of ``shape``: a plugin's bug the protocol names at the first answer."""

    name = "shaped_for_test"
    serves_spans = False

    def __init__(self, alpha: float = 0.1, random_state: int = 0, shape: tuple = (1, 1)):
        super().__init__(alpha=alpha, random_state=random_state)
        self.shape = shape

    def fit(self, data, calibration=None):
        return self

    def predict_interval(self, X):
        return Interval(np.full(self.shape, -1.0), np.full(self.shape, 1.0), np.zeros(self.shape))


@pytest.mark.parametrize("shape", [(1,), (3, 7), (1, 2)])
def test_answers_of_the_wrong_shape_stop_the_protocol_naming_the_method(shape):
    problem = ar_problem(n_train=200, n_test=50, seed=0)  # one series: a step's targets are (1, 1)
    with pytest.raises(ValueError, match=rf"method 'shaped_for_test' returned intervals of shape "
                                         rf"\({shape[0]},{' ' + str(shape[1]) if len(shape) > 1 else ''}\) "
                                         r"for one step, whose targets have shape \(1, 1\)"):
        run_series(problem, _Shaped(shape=shape), kind="online", window=100, retrain_every=25)
    out = run_series(problem, _Shaped(shape=(1, 1)), kind="online", window=100, retrain_every=25)
    assert out.lower.shape == (50, 1)


class _Swapped(_Shaped):
    """Upper and lower swapped at every step."""

    def predict_interval(self, X):
        iv = super().predict_interval(X)
        return Interval(iv.upper, iv.lower, iv.point)


def test_a_crossed_interval_stops_the_protocol_unless_the_method_may_cross():
    problem = ar_problem(n_train=200, n_test=50, seed=0)
    with pytest.raises(ValueError, match=r"'shaped_for_test' returned lower > upper for one step at 1 of 1 point"
                                         r"\(s\) \(at index \(0, 0\): 1 > -1\): swap the bounds"):
        run_series(problem, _Swapped(), kind="online", window=100, retrain_every=25)

    class _Crossing(_Swapped):
        may_cross = True

    out = run_series(problem, _Crossing(), kind="online", window=100, retrain_every=25)
    assert (out.lower > out.upper).all()


class _Tuple(_Shaped):
    """The bounds as a plain tuple, not an Interval."""

    def predict_interval(self, X):
        iv = super().predict_interval(X)
        return iv.lower, iv.upper, iv.point


def test_a_tuple_for_an_interval_names_the_method_and_the_fix():
    problem = ar_problem(n_train=200, n_test=50, seed=0)
    with pytest.raises(ValueError, match=r"method 'shaped_for_test' returned a tuple from predict_interval for one "
                                         r"step; return Interval\(lower, upper, point\)"):
        run_series(problem, _Tuple(), kind="online", window=100, retrain_every=25)


class _LateNaN(_Shaped):
    """A NaN lower bound at the 13th step after a fit (a statistic of an empty window, say)."""

    def fit(self, data, calibration=None):
        self.served_ = 0
        return self

    def predict_interval(self, X):
        iv = super().predict_interval(X)
        self.served_ += 1
        return Interval(iv.lower * (np.nan if self.served_ == 13 else 1.0), iv.upper, iv.point)


def test_a_failure_inside_the_protocol_names_the_method_and_the_test_step_in_the_record(tmp_path):
    """A bad answer at one test step said "at index (0, 0)" (the place in that step's array) and nothing of which
    step, nor, for a NaN, which method; the record's error says both now (where it refits too)."""
    problem = ar_problem(n_train=200, n_test=50, seed=0)
    with pytest.raises(ValueError) as failed:
        run_series(problem, _LateNaN(), kind="online", window=100, retrain_every=25)
    # the step's time as the stored predictions and the figures label it (a generated series counts its lags)
    assert failed.value.__notes__ == [f"method 'shaped_for_test' at test step 13 of 50 (time {problem.time[212]})"]
    assert problem.time[212] == 213

    class _RefitFails(_Shaped):
        def refit(self, data):
            raise RuntimeError("no convergence")

    with pytest.raises(RuntimeError) as failed:
        run_series(problem, _RefitFails(), kind="online", window=100, retrain_every=20)
    assert failed.value.__notes__ == ["method 'shaped_for_test' at refit 2 of 3, before test step 21 of 50"]

    class _AnticipateFails(_Shaped):
        def anticipate(self, X):
            if self.shape == (1, 1) and len(X) < 20:
                raise RuntimeError("no batch")

    with pytest.raises(RuntimeError) as failed:  # (it said "at refit 3 of 3", a refit that went well)
        run_series(problem, _AnticipateFails(), kind="online", window=100, retrain_every=20)
    assert failed.value.__notes__ == ["method 'shaped_for_test' at anticipate() of test steps 41-50 of 50"]
    from pibench import register, run

    @register
    class LateNaNForRecord(_LateNaN):
        name = "late_nan_for_record"

    results = run(methods=["late_nan_for_record"], datasets=["ar1"], quick=True, results_dir=tmp_path / "r",
                  progress=False, errors="ignore")
    (line,) = results.run_report.failure_lines()
    assert line.endswith("(method 'late_nan_for_record' at test step 13 of 500 (time 1013))"), line


def test_a_nan_bound_names_the_array_the_index_and_the_fix():
    lower = np.array([[-1.0, np.nan, np.nan]])
    with pytest.raises(ValueError, match=r"the interval's lower is NaN at 2 of 3 point\(s\) \(first at index "
                                         r"\(0, 1\)\): give finite bounds \(\+-inf for a side without one"):
        Interval(lower, np.ones((1, 3)), np.zeros((1, 3)))


WRONG_CALLS = {
    "predict_interval(self)": ("def predict_interval(self):", "predict_interval(X): define it as "
                                                             "def predict_interval(self, X)"),
    "update(self)": ("def update(self):", "update(y): define it as def update(self, y)"),
    "fit(self)": ("def fit(self):", "fit(data): define it as def fit(self, data, calibration=None)"),
}


@pytest.mark.parametrize("case", list(WRONG_CALLS))
def test_a_method_whose_calls_do_not_fit_the_protocol_is_refused_before_any_work(tmp_path, capsys, case):
    """Once a ``def predict_interval(self):`` failed inside every task, after the base fits."""
    from pibench.cli import main

    definition, message = WRONG_CALLS[case]
    body = {"fit": "def fit(self, data, calibration=None):\n        return self",
            "predict_interval": "def predict_interval(self, X):\n        return Interval(X[:, :, 0], X[:, :, 0], "
                                "X[:, :, 0])",
            "update": "def update(self, y):\n        pass"}
    name = definition.split("(")[0].removeprefix("def ")
    body[name] = definition + "\n        " + ("return self" if name == "fit" else "pass")
    method = f"wrong_{name}"  # a module and a method name of its own per case
    plugin = tmp_path / f"{method}.py"
    plugin.write_text("from pibench import Interval, IntervalMethod, register\n\n\n@register\n"
                      f"class Wrong(IntervalMethod):\n    name = \"{method}\"\n\n    " + "\n\n    ".join(body.values())
                      + "\n")
    results = tmp_path / "r"
    assert main(["run", "--plugin", str(plugin), "--methods", method, "aci", "--results-dir", str(results),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"method '{method}' cannot run: Wrong.{case} cannot be called as the series protocol calls it, " \
           f"{message}" in err
    assert not (results / "tasks").exists()


CONSTRUCTORS = {
    "no alpha": ("def __init__(self, width=1.0):\n        super().__init__()\n        self.width = width",
                 r"cannot be built: Wrong\(width=1.0\) cannot take alpha and random_state, which the runner sets: "
                 r"accept them and pass them on"),
    "kept under another name": ("def __init__(self, alpha=0.1, random_state=0, width=1.0):\n        super().__init__("
                                "alpha=alpha, random_state=random_state)\n        self.w = width",
                                r"cannot be built: Wrong keeps no attribute 'width' for its parameter of that name; "
                                r"store each constructor argument under its own name \(self.width = width\)"),
    "a required parameter": ("def __init__(self, width, alpha=0.1, random_state=0):\n        super().__init__("
                             "alpha=alpha, random_state=random_state)\n        self.width = width",
                             r"cannot be built: Wrong\(width, alpha=0.1, random_state=0\): missing a required "
                             r"argument: 'width'; give it in the suite entry's params"),
}


@pytest.mark.parametrize("case", list(CONSTRUCTORS))
def test_a_constructor_the_runner_cannot_use_is_refused_with_the_fix(tmp_path, capsys, case):
    from pibench.cli import main

    init, message = CONSTRUCTORS[case]
    method = "ctor_" + case.replace(" ", "_")
    plugin = tmp_path / f"{method}.py"
    plugin.write_text("from pibench import Interval, IntervalMethod, register\n\n\n@register\n"
                      f"class Wrong(IntervalMethod):\n    name = \"{method}\"\n\n    {init}\n\n"
                      "    def fit(self, data, calibration=None):\n"
                      "        return self\n\n    def predict_interval(self, X):\n"
                      "        return Interval(X[:, :, 0], X[:, :, 0], X[:, :, 0])\n")
    assert main(["run", "--plugin", str(plugin), "--methods", method, "--results-dir", str(tmp_path / "r"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert re.search(f"method '{method}' {message}", err), err


GOOD = '''from pibench import Interval, IntervalMethod, register


@register
class Band(IntervalMethod):
    name = "{name}"

    def fit(self, data, calibration=None):
        return self

    def predict_interval(self, X):
        return Interval(X[:, :, 0] - 1, X[:, :, 0] + 1, X[:, :, 0])
'''


def test_a_plugin_no_task_runs_gets_a_line_naming_the_option(tmp_path, capsys):
    """--plugin without naming its method ran the suite's methods only, without a word."""
    from pibench.cli import main

    plugin = tmp_path / "band_idle.py"
    plugin.write_text(GOOD.format(name="band_idle"))
    assert main(["run", "--plugin", str(plugin), "--methods", "autoreg", "--results-dir", str(tmp_path / "r"),
                 "--no-progress"]) == 0
    assert f"note: 'band_idle' (from {plugin}) is in no task of this run; name it to run it: --methods band_idle " \
           "autoreg" in capsys.readouterr().out


def test_a_series_method_on_sets_only_says_why_first_and_how_to_declare_a_set_method(tmp_path, capsys):
    from pibench.cli import main

    plugin = tmp_path / "band_series.py"
    plugin.write_text(GOOD.format(name="band_series"))
    assert main(["run", "--suite", "sets", "--datasets", "seasonal_sets", "--plugin", str(plugin), "--methods",
                 "band_series", "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "the selection produced no task: method 'band_series' left out on 'seasonal_sets': it serves series " \
           "only; check" in err and 'says shape = "set" on its class' in err


def test_register_refuses_what_is_no_method_and_names_that_read_as_two():
    """register() on a class that forgot IntervalMethod, or on a function, failed with AttributeError: 'shape'; a
    name with a trailing space ('oracle ') made a second 'oracle' row in every table."""
    from pibench import IntervalMethod, register

    class Forgot:
        name = "forgot"

    with pytest.raises(ValueError, match=r"@register takes a subclass of IntervalMethod; class "
                                         r".*Forgot is not one: define it as class Mine\(IntervalMethod\)"):
        register(Forgot)
    with pytest.raises(ValueError, match="function .*band is not one"):
        register(lambda_band)
    for name in ("oracle ", "my band", "", "a,b"):
        spaced = type("Spaced", (IntervalMethod,), {"name": name})
        with pytest.raises(ValueError, match=re.escape(f"Spaced.name = {name!r}: give a name without spaces")):
            register(spaced)


def lambda_band(x):
    return x


@pytest.mark.parametrize("bounds", [(np.inf, np.inf), (-np.inf, -np.inf), (0.0, np.inf, np.inf)],
                         ids=["lower +inf", "upper -inf", "point inf"])
def test_an_infinite_bound_on_the_wrong_side_or_an_infinite_point_is_refused(bounds):
    """+inf as a lower bound or -inf as an upper one is no interval: its length was -inf and its interval score
    NaN, which took the comparison's reference and made the MCS fail for every row of the dataset."""
    lower, upper, *point = bounds
    with pytest.raises(ValueError, match=r"is (\+inf|-inf|infinite) at 1 of 2 point\(s\) \(first at index \(0, 1\)\)"
                                         r": give finite bounds \(-inf as a lower bound and \+inf as an upper one"):
        Interval(np.array([[0.0, lower]]), np.array([[1.0, upper]]), np.array([[0.5, point[0] if point else 0.5]]))
    Interval(np.array([[-np.inf]]), np.array([[np.inf]]), np.array([[0.0]]))  # ACI's whole line is one
