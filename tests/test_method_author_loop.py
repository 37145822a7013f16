"""The loop a method author lives in: define, run, edit, rerun, look. The numbers stored under a code's
identity are that code's, in one process and with several workers; notebooks may register again; a method
defined in ``__main__`` runs in workers; and the run says what it left out, what failed and why it reran."""

import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pibench.methods.base as base
from pibench import IntervalMethod, NotApplicable, RunNote, TasksFailed, load_results, register, run
from pibench.methods import code_identity
from pibench.methods.code_identity import method_code_identity

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
"""A rolling Gaussian interval (a plugin of the user's own)."""
import numpy as np
from scipy.stats import norm
from pibench import Interval, IntervalMethod, register

WIDTH = 1.0


@register
class RollingGauss(IntervalMethod):
    """Rolling mean +/- WIDTH z sd of the last lookback steps."""
    name = "rolling_gauss"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 30):
        super().__init__(alpha=alpha, random_state=random_state)
        self.lookback = lookback

    def fit(self, data, calibration=None):
        self.history_ = list(data.y[-self.lookback:])
        return self

    def predict_interval(self, X):
        recent = np.asarray(self.history_[-self.lookback:])
        mean, sd = recent.mean(axis=0), recent.std(axis=0)
        half = WIDTH * norm.ppf(1 - self.alpha / 2) * sd
        return Interval((mean - half)[None], (mean + half)[None], mean[None])

    def update(self, y):
        self.history_.append(y[-1])
'''

SUITE = '''
name = "loop"
seeds = [0]
protocol = { kind = "online", window = 100, retrain_every = 50 }

[[datasets]]
name = "ar"
params = { n_train = 200, n_test = 200 }

[[methods]]
name = "rolling_gauss"
'''

#: run, edit the plugin file (WIDTH doubled), run again in the same process; print what each run stored
LIVE_EDIT = '''
import json, sys
import mypi.rolling_gauss
from pibench import run

def row(results):
    (record,) = [r for r in results.records if r["method"] == "rolling_gauss"]
    return {"mean_length": record["mean_length"], "coverage": record["coverage"],
            "plugin": record["identity"]["plugin"], "task_id": record["task_id"]}

jobs = int(sys.argv[1])
first = run("suite.toml", jobs=jobs, results_dir="r", progress=False)
path = mypi.rolling_gauss.__file__
source = open(path).read()
open(path, "w").write(source.replace("WIDTH = 1.0", "WIDTH = 2.0"))
second = run("suite.toml", jobs=jobs, results_dir="r", progress=False)
print(json.dumps({"first": row(first), "second": row(second), "ran": len(second.run_report.executed),
                  "redone": second.run_report.redone, "notes": second.run_report.notes}))
'''


def python(script: str, cwd: Path, *args: str) -> str:
    """Run ``script`` in a fresh interpreter in ``cwd`` (the plugin package importable from there)."""
    env = {**os.environ, "PYTHONPATH": str(cwd), "PYTHONDONTWRITEBYTECODE": "1"}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=300)
        # Once in CI (2026-11-27) a process printed its whole answer and then aborted while the interpreter shut
        # down ("terminate called without an active exception": a native thread pool torn down at exit, outside
        # pibench; not reproduced in 6 reruns). Such an exit is tried once more; a second one fails the test.
        if not (done.returncode == -6 and done.stderr.strip() == "terminate called without an active exception"):
            break
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture
def plugin_project(tmp_path) -> Path:
    (tmp_path / "mypi").mkdir()
    (tmp_path / "mypi" / "__init__.py").write_text("")
    (tmp_path / "mypi" / "rolling_gauss.py").write_text(PLUGIN)
    (tmp_path / "suite.toml").write_text(SUITE)
    (tmp_path / "series.toml").write_text(SUITE.replace("rolling_gauss", "autoreg"))  # for this process
    return tmp_path


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_live_edit_stores_the_new_codes_numbers_under_the_new_identity(plugin_project, jobs):
    out = json.loads(python(LIVE_EDIT, plugin_project, str(jobs)).strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    # the edit doubles every half-width: the stored lengths are the new code's
    assert second["mean_length"] == pytest.approx(2 * first["mean_length"], rel=1e-12)
    assert second["coverage"] > first["coverage"]
    # the package's modules loaded with the method (its __init__ and the method's module) and the class's own
    # code (which reads WIDTH) name it
    assert second["plugin"] != first["plugin"]
    assert set(second["plugin"]) == {"mypi", "mypi.rolling_gauss", "mypi.rolling_gauss:RollingGauss"}
    assert second["plugin"]["mypi"] == first["plugin"]["mypi"]
    assert second["plugin"]["mypi.rolling_gauss:RollingGauss"] != first["plugin"]["mypi.rolling_gauss:RollingGauss"]
    assert second["task_id"] != first["task_id"] and out["ran"] == 1
    assert out["redone"] == [f"ar / rolling_gauss default / seed 0 / alpha 0.1 (task {second['task_id']}): "
                             "plugin source changed: mypi/rolling_gauss.py"]
    assert any("reloaded method 'rolling_gauss': mypi/rolling_gauss.py changed on disk" in n for n in out["notes"])
    # a fresh process finds the new code's task done and serves its numbers
    again = python("import mypi.rolling_gauss, json; from pibench import run; r = run('suite.toml', "
                   "results_dir='r', progress=False); print(json.dumps([len(r.run_report.executed), "
                   "r.records[0]['mean_length']]))", plugin_project)
    ran, length = json.loads(again.strip().splitlines()[-1])
    assert ran == 0 and length == pytest.approx(second["mean_length"], rel=1e-12)
    summary = pd.read_csv(plugin_project / "r" / "summary.csv")
    assert summary["plugin_code"].tolist() == [";".join(f"{k}:{v}" for k, v in sorted(second["plugin"].items()))]


def test_a_comment_blank_line_or_spacing_edit_keeps_the_results_and_a_token_edit_does_not(plugin_project):
    """The files are named by their tokens (code_identity.source_digest): an edit Python compiles the same
    neither reloads the module nor reruns its tasks; a changed token does both, and says why."""
    script = '''
import json, mypi.rolling_gauss
from pibench import run, load_results
path = mypi.rolling_gauss.__file__
first = run("suite.toml", results_dir="r", progress=False)
source = open(path).read()
open(path, "w").write("# my notes\\n\\n" + source.replace("WIDTH = 1.0", "WIDTH  =  1.0   # z multiplier\\n\\n")
                      + "\\n# the end\\n")
second = run("suite.toml", results_dir="r", progress=False)
open(path, "w").write(source.replace("WIDTH = 1.0", "WIDTH = 1.00"))
third = run("suite.toml", results_dir="r", progress=False)
print(json.dumps({"ids": [r.records[0]["task_id"] for r in (first, second, third)],
                  "ran": [len(r.run_report.executed) for r in (second, third)],
                  "notes": [r.run_report.notes for r in (second, third)], "redone": third.run_report.redone,
                  "left_out": load_results("r").left_out}))
'''
    out = json.loads(python(script, plugin_project).strip().splitlines()[-1])
    first, second, third = out["ids"]
    assert first == second and out["ran"][0] == 0 and not any("reloaded" in n for n in out["notes"][0])
    # "1.00" is another token, though the same number: new code, run again, with the reason
    assert third != first and out["ran"][1] == 1
    assert any("reloaded method 'rolling_gauss'" in n for n in out["notes"][1])
    assert len(out["redone"]) == 1 and out["redone"][0].endswith("plugin source changed: mypi/rolling_gauss.py")
    (line,) = out["left_out"]
    assert "superseded" in line and "plugin source changed: mypi/rolling_gauss.py" in line


def _fresh_class(source: str, module: str = "notebook_cell") -> type:
    """Execute ``source`` as the body of module ``module`` (what a notebook cell or a reload does)."""
    namespace = {"__name__": module}
    exec(compile(textwrap.dedent(source), f"<{module}>", "exec"), namespace)
    return namespace["Cell"]


CELL = '''
from pibench import Interval, IntervalMethod, register

@register
class Cell(IntervalMethod):
    name = "cell_method"
    def fit(self, data, calibration=None):
        return self
    def predict_interval(self, X):
        return Interval(X[..., 0] - {width}, X[..., 0] + {width}, X[..., 0])
'''


def test_running_a_cell_again_replaces_the_method_and_a_clash_is_refused():
    try:
        first = _fresh_class(CELL.format(width=1.0))
        with pytest.warns(base.MethodReplaced, match="registered again"):
            second = _fresh_class(CELL.format(width=2.0))
        assert base.registered_methods()["cell_method"] is second is not first
        assert method_code_identity(second) != method_code_identity(first)  # code digest: the cell changed
        with pytest.raises(ValueError, match="already registered by notebook_cell.Cell") as clash:
            _fresh_class(CELL.format(width=3.0), module="another_module")
        assert "restart the kernel" not in str(clash.value)  # another module: just another name
        with pytest.raises(ValueError, match=r"already registered by notebook_cell.Cell; choose another name \(a "
                                             r"class renamed in a re-run notebook cell .* restart the kernel\)"):
            _fresh_class(CELL.format(width=3.0).replace("class Cell(", "class Renamed("))
    finally:
        base._REGISTRY.pop("cell_method", None)


def test_importlib_reload_of_a_plugin_module_registers_again(plugin_project):
    script = '''
import importlib, warnings, mypi.rolling_gauss as m
from pibench.methods.catalog import get_method
before = get_method("rolling_gauss")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    importlib.reload(m)
after = get_method("rolling_gauss")
print(after is m.RollingGauss, after is not before, [str(w.message) for w in caught])
'''
    out = python(script, plugin_project).strip().splitlines()[-1]
    assert out.startswith("True True") and "registered again" in out


MAIN_METHOD = '''
import json, sys
import mypi.rolling_gauss  # the suite file names it
from pibench import Interval, IntervalMethod, register, run

@register
class LastPlusMinusTwo(IntervalMethod):
    """Last value +/- 2, defined in the running script."""
    name = "last_pm2"

    def fit(self, data, calibration=None):
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        point = self.last_[None, :]
        return Interval(point - 2.0, point + 2.0, point)

    def update(self, y):
        self.last_ = y[-1]

if __name__ == "__main__":
    out = {}
    for jobs in (1, 2):
        r = run("suite.toml", methods=["last_pm2"], seeds=[0, 1], jobs=jobs, results_dir=f"r{jobs}", progress=False)
        rows = sorted(r.records, key=lambda x: x["seed"])
        out[jobs] = [(x["seed"], x["coverage"], x["identity"]["plugin"]) for x in rows]
    print(json.dumps(out))
'''


def test_a_method_defined_in_main_runs_with_two_workers(plugin_project):
    (plugin_project / "script.py").write_text(MAIN_METHOD)
    done = subprocess.run([sys.executable, "script.py"], cwd=plugin_project, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(plugin_project)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["1"] == out["2"] and len(out["2"]) == 2  # the same numbers and identity with one or two workers
    assert set(out["2"][0][2]) == {"__main__", "__main__:LastPlusMinusTwo"}  # the script, the class's own code


class _Fails(IntervalMethod):
    """Fails in fit (for the error reporting)."""

    name = "always_fails"

    def fit(self, data, calibration=None):
        raise RuntimeError("boom in fit")

    def predict_interval(self, X):
        raise AssertionError("never reached")


@pytest.fixture
def failing_method():
    register(_Fails)
    yield
    base._REGISTRY.pop("always_fails", None)


def test_run_warns_on_failed_tasks_or_raises_on_request(plugin_project, failing_method):
    suite = plugin_project / "series.toml"
    failed = (r"(?s)1 task\(s\) failed.*always_fails default / seed 0 / alpha 0.1 \(task [0-9a-f]{20}\): "
              r"RuntimeError: boom in fit")
    with pytest.warns(RunNote, match=failed):
        results = run(suite, methods=["always_fails", "autoreg"], results_dir=plugin_project / "w", progress=False)
    assert len(results.run_report.failed) == 1 and {r["method"] for r in results.records} == {"autoreg",
                                                                                             "always_fails"}
    failed_id = next(r["task_id"] for r in results.records if r["status"] != "ok")
    with pytest.raises(KeyError, match=r"always_fails default on .*seed 0\) failed, so it has no predictions: "
                                       r"RuntimeError: boom in fit"):
        results.predictions(failed_id)  # it was a bare FileNotFoundError of its parquet file
    with pytest.raises(ValueError, match="no suite here has a leaderboard: it needs series rows on two or more"):
        results.leaderboard()
    with pytest.raises(TasksFailed, match="boom in fit") as caught:
        run(suite, methods=["always_fails"], results_dir=plugin_project / "x", progress=False, errors="raise")
    assert caught.value.results.run_report.failed
    with pytest.raises(ValueError, match="errors='loud' must be one of"):
        run(suite, methods=["autoreg"], results_dir=plugin_project / "y", errors="loud")


def test_a_method_that_cannot_serve_a_dataset_is_left_out_with_one_line(tmp_path):
    pd.DataFrame({"y": np.random.default_rng(0).normal(size=400)}).to_csv(tmp_path / "y.csv", index=False)
    csv = f"csv:{tmp_path / 'y.csv'}:y"
    with pytest.warns(RunNote) as caught:
        results = run(methods=["oracle", "autoreg", "cfrnn"], datasets=[csv], results_dir=tmp_path / "r",
                      progress=False)
    lines = [str(w.message) for w in caught]
    assert {r["method"] for r in results.records} == {"autoreg"}
    assert any(line.startswith(f"method 'oracle' left out on dataset '{csv}'") and "has no oracle" in line
               for line in lines)
    assert f"method 'cfrnn' left out on '{csv}': it serves sets of sequences only" in lines
    assert isinstance(NotApplicable("x"), ValueError)


def test_results_and_run_reports_have_short_reprs_and_html_tables(plugin_project):
    results = run(plugin_project / "series.toml", methods=["autoreg", "aci"], alpha=[0.1, 0.2],
                  results_dir=plugin_project / "r", progress=False)
    text = repr(results)
    assert len(text) < 300 and "4 finished task(s)" in text and "2 alpha level(s)" in text, text
    assert repr(results.run_report) == "<RunReport: ran 4, skipped 0 already finished>"
    page = results._repr_html_()
    assert page.count("<tr") == 1 + 4 and "mean_length" in page  # header + (2 methods x 2 levels)
    import re

    shown = [float(v) for v in re.findall(r"<td>(\d+\.\d\d)</td>", page)]  # coverage in percent, as the tables say
    assert "coverage %" in page and any(abs(v - 100 * c) < 0.006 for v in shown for c in results.summary["coverage"])
    assert "<table" in results.run_report._repr_html_()


def test_alpha_levels_coexist_share_their_base_fits_and_get_a_calibration_figure(plugin_project):
    suite, out = plugin_project / "series.toml", plugin_project / "r"
    first = run(suite, methods=["aci"], alpha=0.1, results_dir=out, progress=False)
    chunks = sorted((out / "cache" / "split").rglob("*.npz"))
    assert chunks and len(first.records) == 1
    both = run(suite, methods=["aci"], alpha=[0.1, 0.2], results_dir=out, progress=False)
    # the second level reuses the first level's base fits: no new chunk, one task run
    assert sorted((out / "cache" / "split").rglob("*.npz")) == chunks
    assert len(both.run_report.executed) == 1 and both.run_report.skipped == 1
    rows = both.summary.set_index("alpha")
    assert sorted(rows.index) == [0.1, 0.2] and not both.left_out  # nothing superseded by the other level
    assert rows.loc[0.2, "coverage"] < rows.loc[0.1, "coverage"] and rows.loc[0.2, "mean_length"] < rows.loc[
        0.1, "mean_length"]
    names = both.figure_names
    assert "calibration" in names and "tradeoff-alpha0.1" in names and "tradeoff-alpha0.2" in names
    assert "| alpha |" in both.tables().splitlines()[0]  # the table groups its rows by level


def test_the_cli_takes_alpha_levels(plugin_project, capsys):
    from pibench.cli import main

    code = main(["run", "--suite", str(plugin_project / "series.toml"), "--methods", "autoreg", "--alpha", "0.05",
                 "0.2", "--results-dir", str(plugin_project / "r"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "2 task(s)" in out
    assert sorted(load_results(plugin_project / "r").summary["alpha"]) == [0.05, 0.2]
    assert main(["run", "--alpha", "1.5", "--results-dir", str(plugin_project / "s")]) == 2
    assert "alpha=1.5 is outside (0, 1)" in capsys.readouterr().err


def test_a_bad_suite_file_lists_every_problem(tmp_path):
    (tmp_path / "bad.toml").write_text(textwrap.dedent('''
        alpha = [0.1, 0.1]
        colour = "blue"
        [[datasets]]
        name = "arr"
        [[methods]]
        name = "acii"
        grid = { gamma = 0.1 }
        [[methods]]
        name = "aci"
        params = { random_state = 3 }
    '''))
    with pytest.raises(ValueError) as caught:
        run(tmp_path / "bad.toml", results_dir=tmp_path / "r")
    message = str(caught.value)
    for part in ("has 6 problems", "alpha 0.1 is given 2 times", "unknown key 'colour'", "unknown dataset 'arr'",
                 "unknown method 'acii'", "grid gamma = 0.1 must be a non-empty list",
                 "random_state is set by the runner"):
        assert part in message, message
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"methods": "autoreg"}, "methods='autoreg' must be a list of names"),
    ({"methods": []}, "methods=[] selects nothing"),
    ({"seeds": 0}, "seeds=0 must be a list of whole numbers"),
    ({"quick": "false"}, "quick='false' must be True or False"),
    ({"progress": "bar"}, "progress='bar' must be True, False or 'lines'"),
    ({"results_dir": None}, "results_dir=None must be a folder path"),
    ({"suite": ""}, "is not a suite"),
    ({"jobs": 0}, "jobs=0 must be a whole number >= 1"),  # (it said n_jobs, the runner's name)
    ({"threads": 1.5}, "threads=1.5 must be a whole number >= 1"),
    ({"data_dir": 3}, "data_dir=3 must be a folder path"),  # (it was taken as the folder "3")
    ({"on_start": 3}, "on_start=3 must be a function of (tasks, to_run)"),  # ('int' object is not callable)
    ({"suite": "fesp", "datasets": ["fsp"]}, "unknown dataset 'fsp'. Did you mean 'fesp'? It is neither a label "
                                             "of suite 'fesp' ('fesp') nor a dataset"),
])
def test_run_checks_its_arguments_before_any_work(tmp_path, kwargs, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=re.escape(message)):
            run(**{"results_dir": tmp_path / "r", **kwargs})
    assert not (tmp_path / "r").exists()


def _page_block(page: str, opening: str) -> str:
    """The python block of documentation page ``page`` that starts with ``opening``."""
    text = (ROOT / "docs" / page).read_text()
    start = text.index(f"```python\n{opening}") + len("```python\n")
    return text[start:text.index("```", start)]


def test_the_documented_notebook_loop_runs_as_written(tmp_path):
    """The tutorial's cells: define, run, edit cell 1 and run cells 1 and 2 again; then the set method's page."""
    loop = _page_block("tutorials/notebook-loop.md", "# cell 1")
    cells_1_2, marker, cell_3 = loop.partition("# cell 3")
    cell_3 = marker + cell_3
    edited = cells_1_2.replace("lookback: int = 50", "lookback: int = 100")
    assert edited != cells_1_2
    band = _page_block("tutorials/set-method.md", "import numpy as np")
    script = (cells_1_2 + "\nfirst = results\n" + edited + "\n" + cell_3 + "\n" + band + textwrap.dedent('''
        import json
        sets = run(methods=["naive_band"], datasets=["seasonal_sets"], results_dir="sets", progress=False)
        print(json.dumps({"first": [r["method"] for r in first.run_report.executed],
                          "second": [r["method"] for r in results.run_report.executed],
                          "redone": results.run_report.redone, "skipped": results.run_report.skipped,
                          "joint": sets.records[0]["joint_coverage"], "summary": str(results)}))
    '''))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "registered again" in done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(out["first"]) == {"aci", "oracle", "rolling_gauss"} and out["first"].count("rolling_gauss") == 1
    assert out["second"] == ["rolling_gauss"] and out["skipped"] == len(out["first"]) - 1
    (line,) = out["redone"]
    assert line.startswith("ar1 / rolling_gauss default")
    assert line.endswith("plugin code changed: RollingGauss in the running script or notebook")
    assert 0.85 < out["joint"] <= 1.0  # Bonferroni over the horizons keeps the joint level (90%)
    assert out["summary"].startswith(f"<Results mine: {len(out['first'])} finished task(s)")


HELPER_PLUGIN = PLUGIN.replace("WIDTH = 1.0\n", "from mypi.helper import WIDTH\n")


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edited_helper_module_is_new_code_with_any_number_of_workers(plugin_project, jobs):
    """The method reads its width from a helper module of its package: editing only the helper is a new
    identity, and one or two workers compute the new helper's numbers."""
    (plugin_project / "mypi" / "helper.py").write_text("WIDTH = 1.0\n")
    (plugin_project / "mypi" / "rolling_gauss.py").write_text(HELPER_PLUGIN)
    script = LIVE_EDIT.replace("path = mypi.rolling_gauss.__file__", "import mypi.helper; path = mypi.helper.__file__")
    out = json.loads(python(script, plugin_project, str(jobs)).strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    assert second["mean_length"] == pytest.approx(2 * first["mean_length"], rel=1e-12)
    assert first["plugin"]["mypi.helper"] != second["plugin"]["mypi.helper"]
    assert out["redone"][0].endswith("plugin source changed: mypi/helper.py")


BASE_CELL = '''
from pibench import Interval, IntervalMethod, register

WIDTH = {width}

class Base(IntervalMethod):
    def half(self):
        return WIDTH * {factor}
'''

SUB_CELL = '''
@register
class Cell(Base):
    name = "cell_method"
    def fit(self, data, calibration=None):
        return self
    def predict_interval(self, X):
        return Interval(X[..., 0] - self.half(), X[..., 0] + self.half(), X[..., 0])
'''


def _cells(width: float, factor: float) -> type:
    namespace = {"__name__": "notebook_cell"}
    exec(compile(BASE_CELL.format(width=width, factor=factor), "<cell 1>", "exec"), namespace)
    exec(compile(SUB_CELL, "<cell 2>", "exec"), namespace)
    return namespace["Cell"]


def test_a_notebook_base_class_or_global_edit_is_new_code():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", base.MethodReplaced)
            first = method_code_identity(_cells(1.0, 1.0))
            assert method_code_identity(_cells(1.0, 1.0)) == first  # the same cells again: the same code
            assert method_code_identity(_cells(1.0, 2.0)) != first  # the base class's method edited
            assert method_code_identity(_cells(3.0, 1.0)) != first  # a global it reads edited
        assert set(first) == {"notebook_cell:Base", "notebook_cell:Cell"}
    finally:
        base._REGISTRY.pop("cell_method", None)


def test_a_cells_code_digest_is_the_same_in_every_process():
    """Constants such as a frozenset of names, and a set of settings (read by content: the class has no file),
    hash in a process's own order; the digest must not."""
    script = (
        "from pibench import Interval, IntervalMethod\n"
        "class Cell(IntervalMethod):\n"
        "    name = 'cell'\n"
        "    LEVELS = {'x', 'y', 'z', 'w', 'v'}\n"
        "    def fit(self, data, calibration=None):\n"
        "        assert self.alpha in {0.1, 0.2, 0.05, 0.3, 0.4}\n"
        "        return self if 'a' in {'a', 'b', 'c', 'd', 'e', 'f'} else None\n"
        "    def predict_interval(self, X):\n"
        "        return None\n"
        "from pibench.methods.code_identity import method_code_identity\n"
        "print(method_code_identity(Cell))\n")
    digests = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1, digests


def test_a_class_run_by_exec_in_another_programs_main_is_named_by_its_code():
    """Code compiled from a string and run in ``__main__`` (a documentation builder running an example, a
    tool's REPL) is not the main module's file: its identity is its own code, and an edit is new code."""
    source = ("from pibench import Interval, IntervalMethod\n"
              "class Shown(IntervalMethod):\n    name = 'shown'\n"
              "    def fit(self, data, calibration=None):\n        return self\n"
              "    def predict_interval(self, X):\n"
              "        return Interval(X[..., 0] - {w}, X[..., 0] + {w}, X[..., 0])\n")
    identities = []
    for width in (1, 2):
        namespace = {"__name__": "__main__"}
        exec(compile(source.format(w=width), "examples/shown.py", "exec"), namespace)
        identities.append(method_code_identity(namespace["Shown"]))
    assert set(identities[0]) == {"__main__:Shown"} and identities[0] != identities[1]


#: a script that defines its method (PLUGIN's, reading the global WIDTH), sweeps WIDTH and defines it again
SCRIPT_EDITS = PLUGIN + '''
import json
from pibench import run


def row():
    r = run("suite.toml", results_dir="r", progress=False)
    return {"ran": len(r.run_report.executed), "redone": r.run_report.redone, "length": r.records[0]["mean_length"]}


out = {"first": row()}
WIDTH = 3.0
out["global"] = row()


@register
class RollingGauss(RollingGauss):  # noqa: F811  (the same name further down: a longer lookback)
    name = "rolling_gauss"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 60):
        super().__init__(alpha=alpha, random_state=random_state, lookback=lookback)


out["redefined"] = row()
out["again"] = row()
print(json.dumps(out))
'''


def test_a_global_set_between_runs_or_a_class_redefined_in_a_script_is_new_code(plugin_project):
    """A script's file is the same for every run in it: the class's own code, taken when each run starts
    (the globals it reads, its defaults), names what runs."""
    (plugin_project / "script.py").write_text(SCRIPT_EDITS)
    done = subprocess.run([sys.executable, "script.py"], cwd=plugin_project, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(plugin_project)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["first"]["ran"] == 1
    # WIDTH = 3.0: every half-width is 3 times the first run's
    assert out["global"]["ran"] == 1 and out["global"]["length"] == pytest.approx(3 * out["first"]["length"], rel=1e-12)
    assert out["global"]["redone"][0].endswith("plugin code changed: RollingGauss in the running script or notebook")
    assert out["redefined"]["ran"] == 1 and out["redefined"]["length"] != out["global"]["length"]
    assert out["again"] == {"ran": 0, "redone": [], "length": out["redefined"]["length"]}


#: a script whose method reads a dict of settings, rebound between its runs, then edited back in place
SCRIPT_SETTINGS = PLUGIN.replace("WIDTH = 1.0\n", "SETTINGS = {'width': 1.0}\n").replace(
    "half = WIDTH * norm.ppf", "half = SETTINGS['width'] * norm.ppf") + '''
import json
from pibench import run


def row():
    r = run("suite.toml", results_dir="r", progress=False)
    return {"ran": len(r.run_report.executed), "length": r.records[0]["mean_length"]}


out = {"first": row()}
SETTINGS = {"width": 3.0}
out["rebound"] = row()
SETTINGS["width"] = 1.0
out["back"] = row()
print(json.dumps(out))
'''


def test_a_dict_of_settings_a_script_rebinds_between_runs_is_new_code(plugin_project):
    """A script run as a file whose method reads ``SETTINGS["width"]``: rebinding the dict to width 3 reran
    nothing and showed width 1's numbers (its file is the same, and a dict was named by its type only); setting
    it back in place finds the first run's task done."""
    (plugin_project / "script.py").write_text(SCRIPT_SETTINGS)
    done = subprocess.run([sys.executable, "script.py"], cwd=plugin_project, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(plugin_project)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["first"]["ran"] == 1 and out["rebound"]["ran"] == 1
    assert out["rebound"]["length"] == pytest.approx(3 * out["first"]["length"], rel=1e-12)
    assert out["back"] == out["first"] | {"ran": 0}


#: a script whose method appends to a global list as it fits (a log, a cache), run in this process and in workers
SCRIPT_STATE = PLUGIN.replace("WIDTH = 1.0\n", "WIDTH = 1.0\nFITS = []\n").replace(
    "        self.history_ = list(data.y[-self.lookback:])", "        FITS.append(len(data.y))\n"
    "        self.history_ = list(data.y[-self.lookback:])") + '''
import json, sys
from pibench import run

jobs, out = int(sys.argv[1]), []
for _ in range(2):
    r = run("suite.toml", results_dir=f"r{jobs}", jobs=jobs, progress=False, errors="ignore")
    out.append([len(r.run_report.executed), [n for n in r.run_report.notes if "changed data of the running" in n]])
print(json.dumps(out))
'''


def test_a_script_method_that_fills_a_global_is_told_it_runs_again(plugin_project):
    """A script's data containers name its method by their contents, so a method that appends to one as it runs
    in this process (jobs=1) is new code on the script's next run, and not with workers, whose copies change
    instead: the run says so, and how to keep such state."""
    (plugin_project / "script.py").write_text(SCRIPT_STATE)
    outs = {}
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "script.py", jobs], cwd=plugin_project, capture_output=True, text=True,
                              timeout=300, env={**os.environ, "PYTHONPATH": str(plugin_project)})
        assert done.returncode == 0, done.stderr[-3000:]
        outs[jobs] = json.loads(done.stdout.strip().splitlines()[-1])
    (first, said), (second, _) = outs["1"]
    assert first == 1 and second == 1 and len(said) == 1 and "self.cache_" in said[0]
    assert outs["2"] == [[1, []], [0, []]]


SIBLING_METHOD = PLUGIN.replace("WIDTH = 1.0\n", "from my_helpers import widen\n").replace(
    "half = WIDTH * norm.ppf", "half = widen(1.0) * norm.ppf")


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edited_sibling_helper_module_is_new_code(plugin_project, jobs):
    """The method's module imports a function from a module of the user's that is no package of it (a
    ``my_helpers.py`` beside it): editing only the helper reloads it and is a new identity."""
    (plugin_project / "my_helpers.py").write_text("def widen(x):\n    return 1.0 * x\n")
    (plugin_project / "my_methods.py").write_text(SIBLING_METHOD)
    script = (LIVE_EDIT.replace("import mypi.rolling_gauss", "import my_methods, my_helpers")
              .replace("path = mypi.rolling_gauss.__file__", "path = my_helpers.__file__")
              .replace('"WIDTH = 1.0", "WIDTH = 2.0"', '"1.0 * x", "2.0 * x"'))
    out = json.loads(python(script, plugin_project, str(jobs)).strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    assert second["mean_length"] == pytest.approx(2 * first["mean_length"], rel=1e-12)
    assert set(first["plugin"]) == {"my_methods", "my_helpers", "my_methods:RollingGauss"}
    assert first["plugin"]["my_helpers"] != second["plugin"]["my_helpers"]
    assert out["redone"][0].endswith("plugin source changed: my_helpers.py")
    assert any("reloaded method 'rolling_gauss': my_helpers.py changed on disk" in n for n in out["notes"])


LAZY_METHOD = PLUGIN.replace("        half = WIDTH * norm.ppf",
                             "        from my_helpers import widen  # where it is used\n"
                             "        half = widen(1.0) * norm.ppf")


LAZY_EDIT = '''
import json, sys
import my_methods
from pibench import run

def rows(results):
    return {r["seed"]: (r["mean_length"], r["identity"]["plugin"]) for r in results.records}

jobs = int(sys.argv[1])
first = rows(run("seeds.toml", jobs=jobs, results_dir="r", progress=False))
edited = open("my_helpers.py").read().replace("1.0 * x", "2.0 * x")
open("my_helpers.py", "w").write(edited)
second = run("seeds.toml", jobs=jobs, results_dir="r", progress=False)
print(json.dumps({"first": first, "second": rows(second), "redone": second.run_report.redone,
                  "notes": second.run_report.notes}))
'''


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_helper_imported_inside_a_method_is_new_code_when_edited(plugin_project, jobs):
    """A helper the method imports where it uses it (not imported yet when the class is created): its file is
    part of the identity, so an edit of it runs the tasks again, with the new code also in workers that imported
    the old one for the first run (loky keeps its workers: four seeds on two workers, each imports it)."""
    (plugin_project / "my_helpers.py").write_text("def widen(x):\n    return 1.0 * x\n")
    (plugin_project / "my_methods.py").write_text(LAZY_METHOD)
    (plugin_project / "seeds.toml").write_text(SUITE.replace("seeds = [0]", "seeds = [0, 1, 2, 3]"))
    out = json.loads(python(LAZY_EDIT, plugin_project, str(jobs)).strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    assert sorted(first) == sorted(second) == ["0", "1", "2", "3"]
    for seed, (length, plugin) in second.items():
        assert length == pytest.approx(2 * first[seed][0], rel=1e-12), seed
        assert set(plugin) == {"my_methods", "my_helpers", "my_methods:RollingGauss"}
        assert plugin["my_helpers"] != first[seed][1]["my_helpers"]
    assert len(out["redone"]) == 4 and out["redone"][0].endswith("plugin source changed: my_helpers.py")


def test_a_scripts_class_runs_a_helper_it_imports_where_it_uses_it_as_edited_before_the_first_run(plugin_project):
    """A class of a script whose helper, imported where the method uses it, was edited before any run: the run
    reads the file as it is (it was refused as an old copy loaded, which none was); run again, nothing reruns."""
    (plugin_project / "my_helpers.py").write_text("def widen(x):\n    return 1.0 * x\n")
    script = LAZY_METHOD + textwrap.dedent('''
        import json
        from pibench import run
        open("my_helpers.py", "w").write("def widen(x):\\n    return 2.0 * x\\n")
        first = run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
        again = run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
        print(json.dumps([first.records[0]["mean_length"], len(again.run_report.executed), again.run_report.notes]))
    ''')
    length, reran, notes = json.loads(python(script, plugin_project).strip().splitlines()[-1])
    assert reran == 0 and notes == []
    reference = json.loads(python(PLUGIN.replace("WIDTH = 1.0", "WIDTH = 2.0") + textwrap.dedent('''
        import json
        from pibench import run
        print(json.dumps(run("suite.toml", methods=["rolling_gauss"], results_dir="r2", progress=False)
                         .records[0]["mean_length"]))
    '''), plugin_project).strip().splitlines()[-1])
    assert length == pytest.approx(reference, rel=1e-12)  # the edited helper's width


def test_a_helper_imported_inside_a_method_is_found_without_importing_it(tmp_path, monkeypatch):
    """The files of a method's lazily imported helpers, a package's module among them (``from pkg import mod``,
    a relative import), are found without importing them; library modules so imported are not the user's."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "deep.py").write_text("def f():\n    from . import deeper\n    return deeper.g()\n")
    (tmp_path / "pkg" / "deeper.py").write_text("def g():\n    return 1.0\n")
    (tmp_path / "lazy_cls.py").write_text(textwrap.dedent('''
        from pibench import IntervalMethod

        class Lazy(IntervalMethod):
            name = "lazy_probe"
            def fit(self, data, calibration=None):
                import json, numpy.linalg
                from pkg import deep
                return deep.f()
            def predict_interval(self, X):
                raise NotImplementedError
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_cls  # noqa: F401  (defines the class; registers nothing)

    try:
        files = dict(code_identity._helper_files(sys.modules["lazy_cls"].Lazy))
        assert set(files) == {"pkg", "pkg.deep", "pkg.deeper"}
        assert not {"pkg.deep", "pkg.deeper"} & set(sys.modules)  # found, not imported
        snapshot = {s.module: s for s in code_identity.take_snapshot(sys.modules["lazy_cls"].Lazy)}
        assert snapshot["pkg.deeper"].runs_file and not snapshot["pkg.deeper"].is_stale()
    finally:
        for name in ("lazy_cls", "pkg"):
            sys.modules.pop(name, None)


def test_a_cells_global_set_after_the_class_is_new_code():
    """The digest is taken when it is asked for: a global the class reads, set by a later cell, counts."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", base.MethodReplaced)
            namespace = {"__name__": "notebook_cell"}
            exec(compile(BASE_CELL.format(width=1.0, factor=1.0), "<cell 1>", "exec"), namespace)
            exec(compile(SUB_CELL, "<cell 2>", "exec"), namespace)
        before = method_code_identity(namespace["Cell"])
        exec("WIDTH = 2.0", namespace)
        after = method_code_identity(namespace["Cell"])
        assert before != after and after["notebook_cell:Cell"] == before["notebook_cell:Cell"]
        assert after["notebook_cell:Base"] != before["notebook_cell:Base"]  # Base.half reads WIDTH
        exec("WIDTH = 1.0", namespace)
        assert method_code_identity(namespace["Cell"]) == before
    finally:
        base._REGISTRY.pop("cell_method", None)


def test_a_stale_helper_of_a_class_without_a_file_stops_the_run_with_the_fix(plugin_project):
    """A class of a cell (``python -c``) keeps the helper function it imported: after the helper's file
    changes, the run refuses to start rather than store old code's numbers under a name it cannot check."""
    (plugin_project / "my_helpers.py").write_text("def widen(x):\n    return 1.0 * x\n")
    cell = SIBLING_METHOD + textwrap.dedent('''
        import time
        from pibench import run
        run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
        time.sleep(1.1)
        open("my_helpers.py", "w").write("def widen(x):\\n    return 2.0 * x\\n")
        try:
            run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
        except ValueError as exc:
            print(type(exc).__name__, exc)
    ''')
    out = python(cell, plugin_project).strip().splitlines()[-1]
    assert out.startswith("SetupError") and "my_helpers.py changed on disk" in out and "restart Python" in out


NOTEBOOK_HELPER_EDIT = """
import importlib, json, warnings
import my_helpers
from pibench import run

def define():  # the notebook's class cell (its ``from my_helpers import widen`` takes the loaded module's)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(CELL, "<class cell>", "exec"), globals())

def length(results):
    return [r["mean_length"] for r in results.records if r["method"] == "rolling_gauss"][0]

define()
first = run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
open("my_helpers.py", "w").write("def widen(x):\\n    return 2.0 * x\\n")
define()  # the class cell again, the helper not imported again: the old widen would run
try:
    run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
    refused = ""
except ValueError as exc:
    refused = f"{type(exc).__name__}: {exc}"
importlib.reload(my_helpers)
define()
second = run("suite.toml", methods=["rolling_gauss"], results_dir="r", progress=False)
print(json.dumps({"refused": refused, "first": length(first), "second": length(second),
                  "ran": len(second.run_report.executed)}))
"""


def test_a_class_cell_run_again_over_an_edited_helper_not_imported_again_stops_the_run(plugin_project):
    """The class is created after its helper's file was edited, the helper not imported again: the file is
    new but the code that would run is old. The run refuses, saying how to fix it; after importlib.reload
    and the cell again, the new code runs."""
    (plugin_project / "my_helpers.py").write_text("def widen(x):\n    return 1.0 * x\n")
    out = json.loads(python(f"CELL = {SIBLING_METHOD!r}\n" + NOTEBOOK_HELPER_EDIT, plugin_project).splitlines()[-1])
    assert out["refused"].startswith("SetupError") and "my_helpers.py changed on disk" in out["refused"]
    assert "importlib.reload" in out["refused"]
    assert out["ran"] == 1 and out["second"] == pytest.approx(2 * out["first"], rel=1e-12)


def test_a_built_in_name_is_refused_at_register_before_anything_else_is_loaded(tmp_path):
    """In a fresh process nothing has imported pibench's methods yet: the clash is still refused where the
    class is registered (it was accepted, and then every run failed on the built-in suite file)."""
    script = textwrap.dedent('''
        import sys
        from pibench import IntervalMethod, register
        loaded = "pibench.methods.autoreg" in sys.modules
        try:
            @register
            class Mine(IntervalMethod):
                name = "autoreg"
                def fit(self, data, calibration=None):
                    return self
                def predict_interval(self, X):
                    return None
        except ValueError as exc:
            print(loaded, exc)
    ''')
    out = python(script, tmp_path).strip().splitlines()[-1]
    assert out.startswith("False method name 'autoreg' is already registered by pibench.methods.autoreg.")


STATEFUL_PLUGIN = '''
import logging
import numpy as np
from pibench import Interval, IntervalMethod, register

log = logging.getLogger(__name__)  # its level differs between the parent (INFO below) and a worker
_SEEN = {}  # a cache the method fills as it runs


@register
class Stateful(IntervalMethod):
    name = "stateful"

    def fit(self, data, calibration=None):
        _SEEN[len(_SEEN)] = float(data.y[-1, 0])
        log.debug("fit %d", len(_SEEN))
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        point = self.last_[None, :]
        return Interval(point - 1.0, point + 1.0, point)

    def update(self, y):
        self.last_ = y[-1]
'''

STATEFUL_RUNS = '''
import json, logging
import stateful_method
from pibench import run
logging.basicConfig(level=logging.INFO)
out = []
for jobs in (1, 2, 1):
    r = run("stateful.toml", seeds=[0, 1], jobs=jobs, results_dir="r", progress=False, errors="ignore")
    out.append([len(r.run_report.executed), r.run_report.skipped, sorted(x["status"] for x in r.records)])
print(json.dumps(out))
'''


def test_state_a_method_keeps_in_its_module_neither_fails_its_tasks_nor_reruns_them(plugin_project):
    """A dict the method fills and a logger whose level differs between processes are objects, not plain
    values: named by their type in the digest, so neither a second task, a worker, nor a second run sees
    other code."""
    (plugin_project / "stateful_method.py").write_text(STATEFUL_PLUGIN)
    (plugin_project / "stateful.toml").write_text(SUITE.replace("rolling_gauss", "stateful"))
    out = json.loads(python(STATEFUL_RUNS, plugin_project).strip().splitlines()[-1])
    assert out == [[2, 0, ["ok", "ok"]], [0, 2, ["ok", "ok"]], [0, 2, ["ok", "ok"]]]


def test_attribute_names_are_not_globals_of_the_digest():
    """``data.y`` loads the attribute y: a notebook global named y is not part of the method."""
    namespace = {"__name__": "notebook_attr", "IntervalMethod": IntervalMethod, "y": 1.0}
    exec(compile("class Attr(IntervalMethod):\n    name = 'attr_cell'\n"
                 "    def fit(self, data, calibration=None):\n        self.last_ = data.y[-1]\n        return self\n"
                 "    def predict_interval(self, X):\n        return None\n", "<cell>", "exec"), namespace)
    before = method_code_identity(namespace["Attr"])
    namespace["y"] = 2.0
    assert method_code_identity(namespace["Attr"]) == before


CHAINED_HELPERS = {"z_utils.py": "def f():\n    return 1.0\n",
                   "a_helpers.py": "from z_utils import f\n\n\ndef widen(x):\n    return f() * x\n",
                   "my_methods.py": SIBLING_METHOD.replace("from my_helpers import", "from a_helpers import")}


def test_helpers_are_imported_again_in_the_order_they_import_each_other(plugin_project):
    """my_methods imports a_helpers, which imports z_utils: after an edit of z_utils, a_helpers must be
    imported again after it (alphabetical order kept the old function: old numbers under the new name)."""
    for name, text in CHAINED_HELPERS.items():
        (plugin_project / name).write_text(text)
    script = (LIVE_EDIT.replace("import mypi.rolling_gauss", "import my_methods, z_utils")
              .replace("path = mypi.rolling_gauss.__file__", "path = z_utils.__file__")
              .replace('"WIDTH = 1.0", "WIDTH = 2.0"', '"return 1.0", "return 2.0"'))
    out = json.loads(python(script, plugin_project, "1").strip().splitlines()[-1])
    assert out["second"]["mean_length"] == pytest.approx(2 * out["first"]["mean_length"], rel=1e-12)
    assert {"z_utils", "a_helpers", "my_methods"} <= set(out["first"]["plugin"])
    assert out["redone"][0].endswith("plugin source changed: z_utils.py")


def test_a_mixin_base_or_a_default_from_a_helper_module_names_that_module(plugin_project):
    (plugin_project / "mixins.py").write_text("class Wide:\n    def half(self):\n        return 2.0\n\n\n"
                                              "def unit():\n    return 1.0\n")
    script = textwrap.dedent('''
        import json
        import mixins
        from pibench import IntervalMethod
        from pibench.methods.code_identity import method_code_identity

        class Mixed(mixins.Wide, IntervalMethod):
            name = "mixed"
            def fit(self, data, calibration=None):
                return self
            def predict_interval(self, X, scale=mixins.unit):
                return None

        print(json.dumps(sorted(method_code_identity(Mixed))))
    ''')
    keys = json.loads(python(script, plugin_project).strip().splitlines()[-1])
    assert keys == ["__main__:Mixed", "mixins"]


#: two datasets, an edit of the plugin, a rerun on one of them, then on both: what each run and report said
PARTIAL_RERUN = '''
import json
import mypi.rolling_gauss
from pibench import run, load_results

run("two.toml", results_dir="r", progress=False)
path = mypi.rolling_gauss.__file__
source = open(path).read()
open(path, "w").write(source.replace("WIDTH = 1.0", "WIDTH = 2.0"))
part = run("two.toml", datasets=["b"], results_dir="r", progress=False)
tables = load_results("r").tables()
whole = run("two.toml", results_dir="r", progress=False)
print(json.dumps({"part": part.run_report.notes, "tables": tables, "whole": whole.run_report.notes,
                  "whole_tables": load_results("r").tables()}))
'''


def test_a_rerun_on_some_datasets_after_an_edit_says_which_rows_ran_older_code(plugin_project):
    """Each row shows its newest code, so after an edit and a rerun on dataset b alone, the method's row on a
    was older code than its row on b, and a leaderboard ranked them as one method with nothing said: the run
    and the report name the rows and the command that brings them level; the note goes once they are."""
    two = SUITE.replace('[[datasets]]\nname = "ar"\nparams = { n_train = 200, n_test = 200 }',
                        '[[datasets]]\nname = "ar"\nlabel = "a"\nparams = { n_train = 200, n_test = 200 }\n\n'
                        '[[datasets]]\nname = "ar"\nlabel = "b"\nparams = { n_train = 200, n_test = 200, phi = [0.3] }')
    assert two != SUITE
    (plugin_project / "two.toml").write_text(two)
    out = json.loads(python(PARTIAL_RERUN, plugin_project).strip().splitlines()[-1])
    expected = ("rolling_gauss (loop): the rows on a (default) ran other code than the code loaded now (plugin "
                "source changed: mypi/rolling_gauss.py); to compare like with like, run them again with that code "
                "loaded: `pibench.run(suite=<the file of suite 'loop'>, methods=['rolling_gauss'], datasets=['a'], "
                "alpha=[0.1], results_dir='r')`")  # a module of the user's package: --plugin cannot import it so
    assert expected in out["part"], out["part"]
    assert "_Rows of other code: " + expected in out["tables"]
    assert not [n for n in out["whole"] if "another version" in n] and "Rows of other code" not in out["whole_tables"]


def test_a_plugin_file_that_no_longer_defines_its_class_stops_the_run(plugin_project):
    """importlib.reload runs the new source in the module's old namespace, so a class the file no longer defines
    was still found there, and the run served the old class's stored results after saying "reloaded"."""
    script = '''
import mypi.rolling_gauss
from pibench import run
run("suite.toml", results_dir="r", progress=False)
open(mypi.rolling_gauss.__file__, "w").write("# the method moved to another file\\n")
try:
    run("suite.toml", results_dir="r", progress=False)
except ValueError as exc:
    print("refused:", exc)
'''
    out = python(script, plugin_project)
    assert "refused:" in out and "mypi/rolling_gauss.py changed on disk and no longer defines RollingGauss" in out
