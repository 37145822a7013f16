"""What a user can get wrong gets one actionable line, before any work, and loses nothing stored."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.store import ResultsStore
from pibench.cli import main

ROOT = Path(__file__).resolve().parents[1]

TINY = """
name = "tiny"
protocol = { kind = "online", window = 120, retrain_every = 20 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 60 }
[[methods]]
name = "autoreg"
params = { lags = 2 }
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".lock"}


@pytest.fixture
def store(tmp_path, capsys):
    """A results dir holding one finished run, and its files' contents."""
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY)
    results = tmp_path / "results"
    assert main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress"]) == 0
    capsys.readouterr()
    return results, snapshot(results)


def csv_file(path: Path, n: int = 400, bad_row: int | None = None, column: str = "load") -> Path:
    y = np.sin(np.arange(n) / 5.0)
    cells = [("" if i == bad_row else f"{v:.4f}") for i, v in enumerate(y)]
    path.write_text(f"day,{column}\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells)))
    return path


def suite_with(tmp_path: Path, dataset: str, method: str = 'name = "autoreg"\nparams = { lags = 2 }') -> Path:
    path = tmp_path / "case.toml"
    path.write_text(textwrap.dedent(f"""
        name = "case"
        protocol = {{ kind = "online", window = 200, retrain_every = 50 }}
        [[datasets]]
        {dataset}
        [[methods]]
        {method}
        """))
    return path


def one_line_error(capsys, code, expected_code=2) -> str:
    out = capsys.readouterr()
    assert code == expected_code, out
    assert "Traceback" not in out.err and out.err.startswith("pibench: error:") and out.err.count("\n") == 1, out.err
    return out.err


CASES = {
    "NaN in the target": (
        lambda d: f'name = "csv"\nlabel = "bad"\nparams = {{ path = "{csv_file(d / "nan.csv", bad_row=7)}", '
                  'target = "load" }', None, ["dataset 'bad'", "nan.csv", "first rows [7]", "clean or drop"]),
    "missing column": (
        lambda d: f'name = "csv"\nparams = {{ path = "{csv_file(d / "c.csv")}", target = "price" }}', None,
        ["no column(s) ['price']", "the file has ['day', 'load']"]),
    "too-short series": (
        lambda d: f'name = "csv"\nparams = {{ path = "{csv_file(d / "s.csv", n=40)}", target = "load" }}', None,
        ["test span would hold 10 point(s)", "at least 100"]),
    "wrong parameter type": (
        lambda d: 'name = "ar"', 'name = "aci"\nparams = { epochs = "many" }',
        ["method 'aci'", "epochs='many' must be int"]),
    "several wrong parameter types": (
        lambda d: 'name = "ar"', 'name = "aci"\nparams = { epochs = "many", gamma = -1, lr = "fast" }',
        ["method 'aci'", "parameters epochs='many' must be int", "lr='fast' must be"]),
    "parameter out of range": (
        lambda d: 'name = "ar"', 'name = "nexcp"\nparams = { decay = 1.5 }', ["decay=1.5 must lie in (0, 1]"]),
    "window too short for the method": (
        lambda d: 'name = "ar"', 'name = "autoreg"\nparams = { lags = 150 }',
        ["method 'autoreg'", "more than 301 steps; got 200"]),
    "unknown key in a suite entry": (
        lambda d: 'name = "ar"', 'name = "autoreg"\nparam = { lags = 2 }', ["unknown key 'param'", "case.toml"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_data_or_method_stops_the_run_before_any_work(store, tmp_path, capsys, case):
    results, before = store
    dataset, method, expected = CASES[case]
    suite = suite_with(tmp_path, dataset(tmp_path), *([method] if method else []))
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress"]))
    for text in expected:
        assert text in err
    assert snapshot(results) == before


def test_every_problem_is_listed_at_once(tmp_path, capsys):
    suite = suite_with(tmp_path, 'name = "ar"', 'name = "nexcp"\nparams = { decay = 2.0 }\n[[methods]]\n'
                                                 'name = "aci"\nparams = { gamma = -1.0 }')
    code = main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "decay=2.0" in err and "gamma=-1.0" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_the_protocol_dataset_and_methods_are_checked_in_one_go_even_where_the_data_fail(tmp_path, capsys):
    """A protocol key and kind mistyped, a dataset parameter mistyped (its data cannot load) and a method parameter
    mistyped over a grid: one run names all four, each once, where it used to take three runs to see them."""
    path = tmp_path / "typos.toml"
    path.write_text(textwrap.dedent("""
        name = "typos"
        protocol = { kind = "onlin", windw = 200, retrain_every = 50 }
        [[datasets]]
        name = "ar"
        params = { n_tst = 300 }
        [[methods]]
        name = "aci"
        grid = { gama = [0.0, 0.01] }
        [[methods]]
        name = "autoreg"
        params = { lags = "many" }
        """))
    each_said_once(path, tmp_path, capsys, ("no key(s) ['windw']", "kind='onlin'", "no parameter(s) ['n_tst']",
                                             "no parameter(s) ['gama']", "lags='many': give an order >= 1"))


def each_said_once(suite: Path, tmp_path: Path, capsys, texts) -> str:
    """Run ``suite``: refused before any work (exit 2, no folder, no traceback), each of ``texts`` said once;
    the error."""
    code = main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and not (tmp_path / "r").exists()
    for text in texts:
        assert err.count(text) == 1, (text, err)
    return err


def test_two_entries_of_a_method_in_one_table_row_are_refused_naming_what_differs(tmp_path, capsys):
    """Two autoreg entries without settings of their own: both would be the row 'autoreg default', and the tables
    would show one and hide the other; the suite is refused before any work, saying how to tell them apart."""
    suite = suite_with(tmp_path, 'name = "ar"', 'name = "autoreg"\nparams = { lags = 1 }\n[[methods]]\n'
                                                'name = "autoreg"\nparams = { lags = 2 }')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r")]))
    assert "2 entries labelled setting 'default' on dataset 'ar'" in err and 'method {"lags": 1} vs {"lags": 2}' in err
    assert 'give each [[methods]] entry a setting = "..."' in err and not (tmp_path / "r").exists()
    labelled = suite.read_text().replace("params = { lags = 2 }", 'setting = "two lags"\nparams = { lags = 2 }')
    suite.write_text(labelled)
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    assert "| autoreg | two lags |" in capsys.readouterr().out


def test_malformed_suite_file_is_named(tmp_path, capsys):
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[[datasets]\nname = "ar"\n')
    err = one_line_error(capsys, main(["run", "--suite", str(path), "--results-dir", str(tmp_path / "r")]))
    assert str(path) in err and "not valid TOML" in err and "line 2" in err


@pytest.mark.parametrize("argv", [["-j", "0"], ["-j", "-1"], ["--threads", "0"], ["--threads", "-2"], ["-j", "two"]])
def test_worker_and_thread_counts_below_one_are_rejected(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "--results-dir", str(tmp_path / "r"), *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and ("must be >= 1" in err or "not a whole number" in err)
    assert not (tmp_path / "r").exists()


def test_results_dir_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "results.txt"
    target.write_text("my notes")
    err = one_line_error(capsys, main(["run", "--results-dir", str(target), "--no-progress"]))
    assert "is a file, not a folder" in err and target.read_text() == "my notes"


def test_a_second_run_on_a_results_dir_in_use_refuses(store, capsys):
    results, before = store
    with ResultsStore(results).lock():  # what a running `pibench run` holds
        err = one_line_error(capsys, main(["run", "--suite", str(results.parent / "tiny.toml"),
                                           "--results-dir", str(results), "--no-progress"]))
    assert "is in use by another pibench run (pid" in err and "wait for it" in err
    assert snapshot(results) == before
    assert main(["run", "--suite", str(results.parent / "tiny.toml"), "--results-dir", str(results),
                 "--no-progress"]) == 0  # released


def without_root_override(argv: list[str]) -> subprocess.CompletedProcess:
    """The CLI in a subprocess that obeys file permissions even when the tests run as root
    (root without CAP_DAC_OVERRIDE, as a normal user is)."""
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot make a folder read-only to this process")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "pibench", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_read_only_results_dir(store):
    results, before = store
    for folder in (results, results / "tasks"):
        folder.chmod(0o555)
    try:
        run = without_root_override(["run", "--suite", str(results.parent / "tiny.toml"), "--results-dir",
                                     str(results), "--no-progress"])
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert "no permission to write" in run.stderr and run.stderr.count("\n") == 1
        report = without_root_override(["report", "--results-dir", str(results)])
        assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
        assert "| tiny | ar | autoreg |" in report.stdout and "could not write the summary files" in report.stderr
        # the figures go where --figures points all the same; the page, which belongs in the store, is refused
        figures = results.parent / "figures_elsewhere"
        report = without_root_override(["report", "--results-dir", str(results), "--figures", str(figures)])
        assert report.returncode == 0 and any(figures.glob("*.png")), report.stderr
        report = without_root_override(["report", "--results-dir", str(results), "--html"])
        assert report.returncode == 2 and "could not write" in report.stderr and "report.html" in report.stderr
        assert "Traceback" not in report.stderr, report.stderr
    finally:
        for folder in (results, results / "tasks"):
            folder.chmod(0o755)
    assert snapshot(results) == before


def test_report_on_an_empty_or_missing_dir(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", "--results-dir", str(tmp_path / "empty")]) == 2  # no folder a run wrote
    err = capsys.readouterr().err
    assert "is no results folder (it has no tasks/)" in err and "Traceback" not in err
    (tmp_path / "empty" / "tasks").mkdir()  # a run's folder, nothing finished in it yet
    assert main(["report", "--results-dir", str(tmp_path / "empty")]) == 1
    assert "no usable results" in capsys.readouterr().err
    assert main(["report", "--results-dir", str(tmp_path / "nothing")]) == 2  # a typo, not an empty store
    err = capsys.readouterr().err
    assert "does not exist" in err and err.count("\n") == 1 and not (tmp_path / "nothing").exists()


def test_report_survives_a_record_holding_a_list(store, capsys):
    results, _ = store
    (results / "tasks" / "0123456789abcdef0123.json").write_text("[1, 2]")
    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    assert "0123456789abcdef0123.json: the record is a JSON list, not an object" in out
    assert "| tiny | ar | autoreg |" in out
    pd.read_csv(results / "summary.csv")


def test_a_store_with_nothing_usable_names_the_suite_that_fills_it(tmp_path, capsys):
    """Every record edited: report, plot and to_html say so and name the command that refills the folder
    (once: the default suite's command for any folder, and a KeyError from to_html)."""
    import json

    from pibench import load_results

    results = tmp_path / "r"
    assert main(["run", "--suite", "default", "--methods", "autoreg", "--results-dir", str(results),
                 "--no-progress"]) == 0
    capsys.readouterr()
    for path in (results / "tasks").glob("*.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "coverage": 0.5}))
    command = f"--alpha 0.1 --results-dir {results}`"
    assert main(["report", "--results-dir", str(results)]) == 1
    assert "`pibench run --suite default --methods autoreg --datasets ar1 " in capsys.readouterr().err
    assert main(["plot", "--results-dir", str(results)]) == 1
    assert command in capsys.readouterr().err
    with pytest.raises(ValueError, match="no usable results") as refused:
        load_results(results).to_html(tmp_path / "r.html")
    assert command in str(refused.value) and not (tmp_path / "r.html").exists()
    (tmp_path / "empty" / "tasks").mkdir(parents=True)
    with pytest.raises(ValueError, match=f"run `pibench run --results-dir {tmp_path / 'empty'}` first"):
        load_results(tmp_path / "empty").to_html(tmp_path / "e.html")


def test_a_store_whose_csv_changed_names_the_command_that_runs_that_csv_again(tmp_path, monkeypatch):
    """Every record left out since the CSV changed: the hint named `--suite default` alone, which runs the
    built-in AR(1) data, not the file."""
    import numpy as np

    from pibench import load_results, run

    monkeypatch.chdir(tmp_path)
    values = np.sin(np.arange(400) / 5) + np.random.default_rng(0).normal(size=400)
    pd.DataFrame({"y": values}).to_csv("f.csv", index=False)
    run(methods=["autoreg"], datasets=["csv:f.csv:y"], results_dir="r", progress=False)
    pd.DataFrame({"y": values + 1}).to_csv("f.csv", index=False)
    hint = load_results("r").why_empty()
    assert "its data file" in hint and "has changed since it ran" in hint
    assert "`pibench run --suite default --methods autoreg --datasets csv:f.csv:y --alpha 0.1 --results-dir r`" in hint


def test_protocols_that_meet_no_series_are_checked_and_a_set_datasets_protocol_is_refused(tmp_path, capsys):
    """A suite of sets only: its protocols were dropped unread, a typo, a bogus kind and a negative window
    alike, and it ran with exit 0."""
    path = tmp_path / "sets.toml"
    path.write_text(textwrap.dedent("""
        name = "sets_only"
        protocol = { kind = "offline", windw = 10, retrain_every = 0 }
        [[datasets]]
        name = "seasonal_sets"
        protocol = { kind = "online", window = 100 }
        [[methods]]
        name = "cfrnn"
        protocol = { kind = "bogus" }
        """))
    each_said_once(path, tmp_path, capsys, ("top level: protocol has no key(s) ['windw']",
                                             "retrain_every=0: each must be at least 1",
                                             "seasonal_sets holds sets of sequences, which take no protocol",
                                             "(cfrnn): protocol kind='bogus'"))


@pytest.mark.parametrize("method, expected", [
    ('name = "aci"\nparams = { base = "linear", gamma = 0.3 }\ngrid = { gamma = [0.0, 0.01] }',
     "gamma is in both params (0.3) and grid ([0.0, 0.01]); keep it in one"),
    ('name = "autoreg"\ndatasets = []', "datasets = [] runs the entry on no dataset"),
    # one entry with a setting and a grid of two: the error said two entries had one setting
    ('name = "autoreg"\nsetting = "mine"\ngrid = { lags = [1, 2] }',
     "[[methods]] entry 1 (autoreg): setting = 'mine' names one setting, but its grid makes 2"),
])
def test_a_method_entry_that_would_be_overridden_or_run_nowhere_is_refused(tmp_path, capsys, method, expected):
    suite = suite_with(tmp_path, 'name = "ar"', method)
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r")]))
    assert expected in err and not (tmp_path / "r").exists()


def test_a_window_below_one_is_told_as_such_not_as_a_short_series(tmp_path, capsys):
    suite = suite_with(tmp_path, 'name = "ar"').read_text().replace("window = 200", "window = -5")
    (tmp_path / "case.toml").write_text(suite)
    err = one_line_error(capsys, main(["run", "--suite", str(tmp_path / "case.toml"), "--results-dir",
                                       str(tmp_path / "r")]))
    assert "window=-5: each must be at least 1" in err and "too short" not in err


def test_two_dataset_entries_with_one_label_are_named_with_the_fix(tmp_path, capsys):
    """An nlar entry labelled "ar" beside ar: the error blamed the method ('give each [[methods]] entry a
    setting'), naming neither dataset entry."""
    suite = suite_with(tmp_path, 'name = "ar"\n[[datasets]]\nname = "nlar"\nlabel = "ar"')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r")]))
    assert "[[datasets]] entry 2 (nlar) and entry 1 (ar) are both labelled 'ar'" in err
    assert 'give each [[datasets]] entry a label = "..." of its own' in err and "[[methods]]" not in err


def test_a_mistyped_parameter_gets_the_closest_name_and_only_what_a_suite_may_set(tmp_path, capsys):
    suite = suite_with(tmp_path, 'name = "ar"\nparams = { n_tset = 300 }', 'name = "autoreg"\nparams = { lag = 2 }')
    code = main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "no parameter(s) ['lag']" in err and "Did you mean 'lags'?" in err
    assert "no parameter(s) ['n_tset']" in err and "Did you mean 'n_test'?" in err
    takes = err.split("no parameter(s) ['lag']; it takes ")[1].split("]")[0]
    assert "'alpha'" not in takes and "'random_state'" not in takes  # the runner sets them


def test_a_labelled_datasets_problem_names_it_once(tmp_path, capsys):
    """'dataset 'strid200': dataset 'csv_sets': parameter ...' said dataset twice."""
    suite = suite_with(tmp_path, 'name = "ar"\nlabel = "mine"\nparams = { n_test = "many" }')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r")]))
    assert "dataset 'mine' (ar): parameter n_test = 'many' must be" in err and err.count("dataset '") == 1
    unlabelled = suite_with(tmp_path, 'name = "ar"\nparams = { n_test = "many" }')
    err = one_line_error(capsys, main(["run", "--suite", str(unlabelled), "--results-dir", str(tmp_path / "r")]))
    assert "dataset 'ar': parameter n_test = 'many' must be" in err and "(ar)" not in err


def test_a_failed_task_names_its_id_and_where_its_traceback_is(tmp_path, capsys):
    plugin = tmp_path / "breaks.py"
    plugin.write_text(textwrap.dedent("""
        from pibench import IntervalMethod, register

        @register
        class Breaks(IntervalMethod):
            name = "breaks_in_fit"

            def fit(self, data, calibration=None):
                raise RuntimeError("no fit today")

            def predict_interval(self, X):
                raise NotImplementedError
        """))
    suite = suite_with(tmp_path, 'name = "ar"\nparams = { n_train = 250, n_test = 100 }', 'name = "breaks_in_fit"')
    code = main(["run", "--suite", str(suite), "--plugin", str(plugin), "--results-dir", str(tmp_path / "r"),
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    (task_id,) = [p.stem for p in (tmp_path / "r" / "tasks").glob("*.json")]
    assert f"(task {task_id}): RuntimeError: no fit today" in err
    assert f"traceback field: {tmp_path / 'r' / 'tasks'}/<task id>.json" in err
    record = json.loads((tmp_path / "r" / "tasks" / f"{task_id}.json").read_text())
    assert "no fit today" in record["traceback"]


def test_an_alpha_above_one_half_runs_with_a_note_on_what_it_asks_for(tmp_path, capsys):
    """alpha = 0.9 (a coverage level given as alpha) ran silently and showed the oracle covering 10%."""
    suite = suite_with(tmp_path, 'name = "ar"\nparams = { n_train = 250, n_test = 100 }', 'name = "oracle"')
    suite.write_text(suite.read_text().replace('name = "case"', 'name = "case"\nalpha = 0.9'))
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "alpha 0.9 is the share of misses a method aims at: it asks for 10% intervals; for 90% intervals give " \
           "alpha = 0.1" in out


@pytest.mark.parametrize("protocol, expected", [
    ('{ kind = "offline", retrain_every = 5 }', "the offline protocol fits once on the training span: its "
                                                "retrain_every = 5 has no effect"),
    ('{ kind = "online", window = 200, retrain_every = 1000 }', "retrain_every = 1000 is at least its 100 test steps: "
                                                               "one fit serves the whole test span"),
    ('{ kind = "online", window = 200, retrain_every = 50, test_steps = 5000 }',
     "test_steps = 5000 is more than its 100 test steps: all 100 are used"),
])
def test_a_protocol_that_does_less_than_it_says_runs_with_a_note(tmp_path, capsys, protocol, expected):
    suite = suite_with(tmp_path, 'name = "ar"\nparams = { n_train = 250, n_test = 100 }', 'name = "oracle"')
    suite.write_text(suite.read_text().replace('protocol = { kind = "online", window = 200, retrain_every = 50 }',
                                               f"protocol = {protocol}"))
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    assert f"dataset 'ar': {expected}" in capsys.readouterr().out


def test_a_run_that_computes_removes_the_reports_it_made_stale_and_a_report_mid_run_says_so(store, tmp_path, capsys):
    """summary.md kept 4 rows after a run added a fifth; a report while a run held the folder said nothing."""
    from pibench.benchmarks.store import ResultsStore

    results, _ = store
    folder = tmp_path / "r"
    shutil.copytree(results, folder)
    assert main(["report", "--results-dir", str(folder), "--html"]) == 0
    assert (folder / "summary.md").is_file() and (folder / "report.html").is_file()
    assert main(["run", "--suite", str(results.parent / "tiny.toml"), "--results-dir", str(folder), "--no-progress",
                 "--seeds", "0", "1"]) == 0  # a new seed: one task computed
    assert not (folder / "summary.md").exists() and not (folder / "report.html").exists()
    capsys.readouterr()
    with ResultsStore(folder).lock():
        assert main(["report", "--results-dir", str(folder)]) == 0
    assert "a run is writing into" in capsys.readouterr().err
    assert main(["report", "--results-dir", str(folder)]) == 0
    assert "a run is writing into" not in capsys.readouterr().err


def test_a_run_into_a_folder_in_use_is_refused_before_its_preparation(store, capsys, monkeypatch):
    """The refusal came after the data were loaded and every task checked (about 9 s on a sets suite)."""
    from pibench.benchmarks import runner

    results, _ = store

    def prepared(*args, **kwargs):
        raise AssertionError("the run prepared its tasks before asking whether the folder is free")

    monkeypatch.setattr(runner, "prepare_tasks", prepared)
    with ResultsStore(results).lock():
        err = one_line_error(capsys, main(["run", "--suite", str(results.parent / "tiny.toml"),
                                           "--results-dir", str(results), "--no-progress"]))
    assert "is in use by another pibench run (pid" in err


def test_errors_found_with_the_tasks_name_the_method_entry_they_come_from(tmp_path, capsys):
    """Two aci entries, the second with a misspelt parameter; a method entry's protocol with a bad value; an
    order too long for the window: each line said which entry (the first two named none), once for an entry
    whatever its datasets and grid."""
    suite = suite_with(tmp_path, 'name = "ar"\n[[datasets]]\nname = "nlar"',
                       'name = "aci"\ngrid = { gamma = [0.0, 0.01] }\n'
                       '[[methods]]\nname = "aci"\nsetting = "x"\nparams = { hiden = 3 }\n'
                       '[[methods]]\nname = "autoreg"\nprotocol = { retrain_every = -1 }\n'
                       '[[methods]]\nname = "autoreg"\nsetting = "big"\nparams = { lags = 150 }')
    each_said_once(suite, tmp_path, capsys, (
        "method 'aci' ([[methods]] entry 2) has no parameter(s) ['hiden']",
        "(method 'autoreg' of [[methods]] entry 3 on datasets 'ar', 'nlar'): protocol retrain_every=-1",
        "method 'autoreg' (big; [[methods]] entry 4) on dataset 'ar': autoreg with lags up to 150"))


def test_with_quick_an_entry_keeps_the_number_the_file_gives_it(tmp_path, capsys):
    suite = suite_with(tmp_path, 'name = "ar"', 'name = "autoreg"\nquick = { skip = true }\n'
                                                '[[methods]]\nname = "aci"\nparams = { hiden = 3 }')
    code = main(["run", "--suite", str(suite), "--quick", "--results-dir", str(tmp_path / "r"), "--no-progress"])
    assert code == 2 and "method 'aci' ([[methods]] entry 2) has no parameter(s) ['hiden']" in capsys.readouterr().err
    from pibench.benchmarks.tiny_suite import tiny_suite, to_toml

    assert "_method_entry_numbers" not in to_toml(tiny_suite(str(suite)))  # load_suite's note, no key of a file


def test_a_window_the_series_cannot_hold_is_one_problem_for_every_method_entry_that_uses_it(tmp_path, capsys):
    """A window longer than one dataset's training span was said once per method, the same line four times;
    it is one line naming the entries. A method's own problems on that dataset are still listed, once for both
    datasets, as they were said once per dataset (and "aci: parameter ..." named aci twice)."""
    suite = suite_with(tmp_path, 'name = "ar"\nparams = { n_train = 150, n_test = 200 }\n[[datasets]]\nname = "nlar"',
                       'name = "aci"\nparams = { gamma = "big" }\n[[methods]]\nname = "autoreg"\n'
                       '[[methods]]\nname = "oracle"\n[[methods]]\nname = "nexcp"\nparams = { decay = 1.5 }')
    err = each_said_once(suite, tmp_path, capsys, (
        "(method 'aci' of [[methods]] entry 1, method 'autoreg' of [[methods]] entry 2, method 'oracle' of "
        "[[methods]] entry 3, method 'nexcp' of [[methods]] entry 4 on dataset 'ar'): window=200 must be between 1 "
        "and the 150 training steps of 'ar'",
        "method 'nexcp' (default; [[methods]] entry 4): decay=1.5 must lie in (0, 1]",
        "method 'aci' (default; [[methods]] entry 1): parameter gamma='big' must be float"))
    assert "training steps of 'nlar'" not in err and err.count("\n") == 4  # (nlar's span holds the window)


def test_a_misspelt_suite_label_in_datasets_gets_the_label(tmp_path, capsys):
    """--datasets min, where the suite labels its entry 'mine': the error listed the dataset names only."""
    suite = suite_with(tmp_path, 'name = "ar"\nlabel = "mine"')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--datasets", "min", "--results-dir",
                                       str(tmp_path / "r")]))
    assert "unknown dataset 'min'. Did you mean 'mine'? It is neither a label of suite 'case' ('mine')" in err


def test_a_window_too_long_names_only_the_methods_that_could_serve_the_dataset(tmp_path, capsys):
    """The oracle cannot serve a CSV (no known law): it is left out there as always, not named among the
    entries whose window the file cannot hold; a window only the oracle uses on the file runs the rest."""
    path = csv_file(tmp_path / "c.csv")
    dataset = f'name = "csv"\nlabel = "mine"\nparams = {{ path = "{path}", target = "load" }}'
    suite = suite_with(tmp_path, dataset + "\nprotocol = { window = 5000 }",
                       'name = "aci"\n[[methods]]\nname = "oracle"')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r")]))
    assert "(method 'aci' of [[methods]] entry 1 on dataset 'mine'): window=5000" in err and "'oracle'" not in err
    suite = suite_with(tmp_path, dataset + '\n[[datasets]]\nname = "ar"',
                       'name = "autoreg"\n[[methods]]\nname = "oracle"\nprotocol = { window = 5000 }\n'
                       'datasets = ["mine"]')
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    assert "method 'oracle' left out on dataset 'mine'" in capsys.readouterr().out


def test_load_results_of_a_folder_that_holds_a_results_folder_names_it(tmp_path):
    """The parent of a results folder quietly loaded as 0 finished tasks (an empty compare()); the CLI said
    more. It is refused, naming the results folder inside it."""
    from pibench import load_results, run

    run(datasets=["ar"], methods=["autoreg"], quick=True, results_dir=tmp_path / "r", progress=False)
    with pytest.raises(ValueError, match=f"no results folder .* {tmp_path / 'r'} inside it is one"):
        load_results(tmp_path)
    assert len(load_results(tmp_path / "r").records) == 1


def test_an_entry_with_several_bad_values_lists_them_all_in_one_round(tmp_path, capsys):
    """A method's checks stop at its first problem, as did a CSV's: a user fixed score, ran, fixed base, ran,
    fixed gamma (dogfooding). Each entry's line now names every problem of its values."""
    pd.DataFrame({"date": pd.date_range("2020-01-01", periods=300).astype(str), "y": np.arange(300.0) % 7}).to_csv(
        tmp_path / "s.csv", index=False)
    (tmp_path / "bad.toml").write_text(f"""
name = "bad"
protocol = {{ kind = "online", window = 100, retrain_every = 25 }}
[[datasets]]
name = "csv"
label = "s"
params = {{ path = "{tmp_path / 's.csv'}", target = "y", time = "dat", lags = -1, test_fraction = 1.5 }}
[[methods]]
name = "aci"
params = {{ base = "lin", score = "absolut", gamma = -0.01 }}
""")
    assert main(["run", "--suite", str(tmp_path / "bad.toml"), "--results-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    dataset = next(line for line in err.splitlines() if "dataset 's'" in line)
    assert all(part in dataset for part in ("lags=-1", "test_fraction=1.5", "no column(s) ['dat']"))
    method = next(line for line in err.splitlines() if "method 'aci'" in line)
    assert all(part in method for part in ("base='lin'", "score='absolut'", "gamma=-0.01"))
    assert not (tmp_path / "r").exists()
    # a value fine with the entry's own (misspelt) score but not with the default put back is not blamed
    bad = (tmp_path / "bad.toml").read_text().replace('base = "lin", score = "absolut", gamma = -0.01',
                                                      'score = "normalised", scale = "garch"')
    (tmp_path / "bad.toml").write_text(bad)
    assert main(["run", "--suite", str(tmp_path / "bad.toml"), "--results-dir", str(tmp_path / "r")]) == 2
    method = next(line for line in capsys.readouterr().err.splitlines() if "method 'aci'" in line)
    assert "score='normalised'" in method and "scale='garch'" not in method
    # a misspelt name is said with the entry's bad values, not alone (one more round for the user)
    (tmp_path / "bad.toml").write_text(bad.replace('score = "normalised", scale = "garch"',
                                                   'gama = 0.01, score = "absolut", calibration_fraction = -1'))
    assert main(["run", "--suite", str(tmp_path / "bad.toml"), "--results-dir", str(tmp_path / "r")]) == 2
    method = next(line for line in capsys.readouterr().err.splitlines() if "method 'aci'" in line)
    assert all(part in method for part in ("no parameter(s) ['gama']", "Did you mean 'gamma'?", "score='absolut'",
                                           "calibration_fraction=-1"))


def test_a_generated_datasets_bad_values_are_all_said_in_one_round(tmp_path, capsys):
    """A generator's checks stop at their first problem: the entry's line now says each value that is wrong
    (the named ones set back to their defaults and the data built again), none of a default's."""
    (tmp_path / "bad.toml").write_text("""
datasets = [{ name = "ar", params = { n_train = -5, phi = 3, noise_std = -1 } },
            { name = "nlar", label = "n", params = { n_test = 0, n_lags = 0 } }]
methods = [{ name = "autoreg" }]
""")
    assert main(["run", "--suite", str(tmp_path / "bad.toml"), "--results-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    ar = next(line for line in err.splitlines() if "dataset 'ar'" in line)
    assert all(part in ar for part in ("phi = 3 must be tuple[float, ...]", "n_train=-5 must be at least 1",
                                       "noise_std=-1.0 must be positive"))
    nlar = next(line for line in err.splitlines() if "dataset 'n'" in line)
    assert "n_test=0 must be at least 1" in nlar and "n_lags=0 must be at least 1" in nlar
    assert not (tmp_path / "r").exists()


def test_a_selection_of_names_that_never_met_says_where_the_methods_ran(tmp_path):
    """aci ran on one dataset, nlar had only autoreg: selecting both said "each is there, but not together";
    it now says where aci ran (dogfooding)."""
    from pibench import run
    from pibench.api import Results

    results = run(datasets=["ar", "nlar"], methods=["autoreg", "aci"], quick=True, results_dir=tmp_path / "r",
                  progress=False)
    partial = Results(results.results_dir, [r for r in results.records
                                            if not (r["method"] == "aci" and r["dataset"] == "nlar")], [])
    ar = next(r["dataset"] for r in partial.records if r["method"] == "aci")
    with pytest.raises(ValueError, match=rf"each is there, but not together \(aci ran on {ar}\)\."):
        partial.select(methods="aci", datasets="nlar")


@pytest.mark.parametrize("method", ["aci", "enbpi", "nexcp"])
def test_a_linear_base_checks_the_network_settings_too(method):
    """hidden = -5 passed with base = "linear" (which trains no network); a grid over the base with shared
    network settings passes (refusing changed settings with the linear base stopped that grid: review)."""
    from pibench.methods.catalog import get_method

    with pytest.raises(ValueError, match=r"hidden=-5 must be a whole number >= 1"):
        get_method(method)(base="linear", hidden=-5).check_params()
    get_method(method)(base="linear", hidden=20, epochs=30).check_params()


def test_small_slips_of_paths_names_labels_and_notebook_arrays(tmp_path, capsys, monkeypatch):
    """What an edge-case dogfood found: ~ was not expanded, a folder was said not to exist, a column name with a
    colon split csv:PATH:TARGET in the wrong place, 'Y' for 'y' got no suggestion, a label's '|' broke the
    markdown table and an empty one passed, 1e50 printed with 51 digits, numpy arrays of levels or seeds were
    refused."""
    from pibench import run
    from pibench.data_loaders.registry import parse_dataset_arg
    from pibench.data_loaders.validation import did_you_mean
    from pibench.reports.summary import _cell, format_number

    y = np.sin(np.arange(400) / 5) + np.random.default_rng(0).normal(size=400)
    pd.DataFrame({"price:eur": y}).to_csv(tmp_path / "c.csv", index=False)
    assert parse_dataset_arg(f"csv:{tmp_path / 'c.csv'}:price:eur") == (
        "csv", {"path": str(tmp_path / "c.csv"), "target": "price:eur"})
    assert did_you_mean("Y", ["y", "x"]) == " Did you mean 'y'?"
    assert _cell("a|b") == "a\\|b" and format_number(2.97e50) == "2.97e+50" and format_number(12.5) == "12.500"
    from pibench.reports.paper_tables import _markdown as paper_markdown
    from pibench.reports.summary import _markdown

    for table in (_markdown(pd.DataFrame({"x|y": ["a|b"]})), paper_markdown([{"x|y": "a|b"}])):
        assert table.splitlines()[0] == "| x\\|y |" and table.splitlines()[2] == "| a\\|b |", table
    assert main(["run", "--datasets", f"csv:{tmp_path}:y", "--methods", "autoreg", "--results-dir",
                 str(tmp_path / "r")]) == 2
    assert "it is a folder" in capsys.readouterr().err
    monkeypatch.setenv("HOME", str(tmp_path))  # ~ is this folder
    results = run(datasets=["csv:~/c.csv:price:eur"], methods=["autoreg"], quick=True, progress=False,
                  results_dir=tmp_path / "r2", alpha=np.array([0.1, 0.2]), seeds=np.arange(2))
    assert sorted((r["alpha"], r["seed"]) for r in results.records) == [(0.1, 0), (0.1, 1), (0.2, 0), (0.2, 1)]
    (tmp_path / "s.toml").write_text('datasets = [{ name = "ar", label = " " }]\nmethods = [{ name = "autoreg" }]\n')
    assert main(["run", "--suite", str(tmp_path / "s.toml"), "--results-dir", str(tmp_path / "r3")]) == 2
    assert "label = ' ' names nothing" in capsys.readouterr().err


@pytest.mark.parametrize("plugin", [5, [1], "abc", {"mod": 5}])
def test_a_hand_edited_plugin_identity_leaves_the_hints_and_notes_as_they_are(tmp_path, plugin):
    """A record whose identity's plugin part is no {module: digest} (a hand-edited file): the rerun hint and the
    notes of rows of other code read it and raised (TypeError, AttributeError); they leave it out."""
    import json

    from pibench import load_results
    from pibench.reports.selection import mixed_code_notes

    (tmp_path / "r" / "tasks").mkdir(parents=True)
    record = {"task_id": "abc", "status": "ok", "method": "m", "dataset": "d", "alpha": 0.1, "setting": "", "seed": 0,
              "config": {"suite": "default", "method": {"name": "m"}, "dataset": {"name": "d"}, "seed": 0},
              "identity": {"plugin": plugin, "code": "v1"}}
    (tmp_path / "r" / "tasks" / "abc.json").write_text(json.dumps(record))
    assert f"run `pibench run --suite default --results-dir {tmp_path / 'r'}` first" in \
        load_results(tmp_path / "r").why_empty()
    assert mixed_code_notes([record], "v1") == []
