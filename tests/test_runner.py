"""Runner: resume after a lost task, determinism across worker counts, failures recorded."""

import json
import re
import textwrap

import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.preflight import prepare_tasks
from pibench.benchmarks.runner import run_tasks
from pibench.benchmarks.store import ResultsStore
from pibench.benchmarks.suite import build_tasks, load_suite
from pibench.reports.summary import RUN_COLUMNS

SUITE = """
name = "tiny"
alpha = 0.1
seeds = [0, 1]
protocol = { kind = "online", window = 120, retrain_every = 20 }

[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 60 }

[[methods]]
name = "aci"
grid = { gamma = [0.0, 0.01] }
params = { hidden = 4, epochs = 3, lr = 0.05, batch_size = 20 }

[[methods]]
name = "autoreg"
params = { lags = 2 }
"""


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(textwrap.dedent(SUITE))
    return load_suite(str(path))


def prepared(suite, **selection):
    """The suite's tasks, bound to their data and code (as run_tasks binds them)."""
    return prepare_tasks(build_tasks(suite, **selection)).tasks


def stable_part(results_dir):
    frame = pd.read_csv(results_dir / "summary.csv")
    return frame.drop(columns=RUN_COLUMNS)


def test_tasks_and_seeds_are_derived_from_config(suite):
    tasks = prepared(suite)
    assert len(tasks) == 6  # (2 gammas + autoreg) x 2 seeds
    assert len({t.task_id for t in tasks}) == 6
    again = prepared(suite)
    assert [t.task_id for t in tasks] == [t.task_id for t in again]
    assert [t.method_seed for t in tasks] == [t.method_seed for t in again]
    # all methods on the same dataset and replicate share the data seed
    by_seed = {}
    for t in tasks:
        by_seed.setdefault(t.config["seed"], set()).add(t.data_seed)
    assert all(len(s) == 1 for s in by_seed.values()) and len(by_seed) == 2


def test_resume_runs_only_the_missing_task(suite, tmp_path):
    tasks = prepared(suite)
    out = tmp_path / "res"
    first = run_tasks(tasks, out, progress=False)
    assert len(first.executed) == 6 and not first.failed
    before = stable_part(out)

    lost = tasks[3].task_id
    ResultsStore(out).record_path(lost).unlink()
    second = run_tasks(tasks, out, progress=False)
    assert [r["task_id"] for r in second.executed] == [lost]
    assert second.skipped == 5
    pd.testing.assert_frame_equal(stable_part(out), before)


def test_same_numbers_with_one_or_two_workers(suite, tmp_path):
    tasks = prepared(suite)
    run_tasks(tasks, tmp_path / "j1", n_jobs=1, progress=False)
    run_tasks(tasks, tmp_path / "j2", n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(stable_part(tmp_path / "j1"), stable_part(tmp_path / "j2"))
    for t in tasks:
        a = ResultsStore(tmp_path / "j1").predictions(t.task_id)
        b = ResultsStore(tmp_path / "j2").predictions(t.task_id)
        pd.testing.assert_frame_equal(a, b)


def test_a_failing_task_is_recorded_and_others_finish(suite, tmp_path):
    # valid parameters, but 2 epochs cannot sparsify 601 weights below the 120 rows of a window: fails at run time
    suite["methods"].append({"name": "pa", "setting": "too wide", "params": {
        "hidden": 200, "epochs": 2, "T1": 1, "T2": 1, "T3": 2, "refine_epochs": 1}})
    tasks = build_tasks(suite, seeds=[0])
    report = run_tasks(tasks, tmp_path, progress=False)
    failed = report.failed
    assert len(failed) == 1 and "too many weights" in failed[0]["error"]
    assert sum(r["status"] == "ok" for r in report.executed) == 3
    record = json.loads(ResultsStore(tmp_path).record_path(failed[0]["task_id"]).read_text())
    assert "Traceback" in record["traceback"]
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["status"]) == {"ok", "error"}


def test_records_carry_provenance(suite, tmp_path):
    tasks = prepared(suite, methods=["autoreg"], seeds=[0])
    run_tasks(tasks, tmp_path, progress=False)
    record = ResultsStore(tmp_path).records()[0]
    assert record["config"] == tasks[0].config and record["identity"] == tasks[0].identity
    assert record["versions"]["numpy"] and record["versions"]["torch"]
    assert record["method_params"]["lags"] == 2 and record["wall_seconds"] > 0 and record["threads"] == 1
    predictions = ResultsStore(tmp_path).predictions(record["task_id"])
    assert len(predictions) == record["n_test"] == 60
    covered = ((predictions.y >= predictions.lower) & (predictions.y <= predictions.upper)).mean()
    assert covered == pytest.approx(record["coverage"])


def test_split_conformal_tasks_share_base_fits_equal_to_fits_on_demand(suite, tmp_path):
    from pibench.benchmarks.preflight import load_task_data, task_method
    from pibench.benchmarks.protocols import run_series

    tasks = prepared(suite, methods=["aci"], seeds=[0])
    assert len(tasks) == 2  # gamma 0 and 0.01
    run_tasks(tasks, tmp_path, progress=False)
    records = ResultsStore(tmp_path).records()
    keys = {r["shared_base_fits"] for r in records}
    assert len(keys) == 1  # one set of base fits served both gammas
    assert len(list((tmp_path / "cache" / "split" / keys.pop()).glob("*.npz"))) == 1  # 3 refits, one chunk
    for task in tasks:
        stored = ResultsStore(tmp_path).predictions(task.task_id)
        out = run_series(load_task_data(task, None).problem, task_method(task), **task.config["protocol"])
        np.testing.assert_array_equal(stored["point"], out.point.ravel())
        np.testing.assert_array_equal(stored["lower"], out.lower.ravel())
        np.testing.assert_array_equal(stored["upper"], out.upper.ravel())


def test_a_failed_or_corrupt_chunk_is_reported_and_recomputed(suite, tmp_path, monkeypatch):
    import pibench.benchmarks.forecast_stage as stage

    tasks = prepared(suite, methods=["aci"], seeds=[0])
    real = stage.compute_chunk

    def broken(*args, **kwargs):
        raise MemoryError("simulated")

    monkeypatch.setattr(stage, "compute_chunk", broken)
    report = run_tasks(tasks, tmp_path, progress=False)
    assert len(report.failed) == 2 and all("MemoryError: simulated" in r["error"] for r in report.failed)

    monkeypatch.setattr(stage, "compute_chunk", real)
    assert not run_tasks(tasks, tmp_path, progress=False).failed  # the rerun recomputes the chunk
    chunk = next((tmp_path / "cache" / "split").rglob("*.npz"))
    chunk.write_bytes(b"truncated")
    store = ResultsStore(tmp_path)
    store.record_path(tasks[0].task_id).write_text("{ not json")  # a torn record counts as not done
    report = run_tasks(tasks, tmp_path, progress=False)
    assert [r["task_id"] for r in report.executed] == [tasks[0].task_id]
    # the corrupt chunk is found before any task uses it, and computed again in this run
    assert not report.failed and chunk.is_file() and chunk.read_bytes() != b"truncated"
    assert any(f"{chunk.name} were unusable" in note for note in report.notes)


def test_a_method_entry_can_be_restricted_to_some_datasets(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(textwrap.dedent("""
        name = "two"
        protocol = { kind = "offline" }

        [[datasets]]
        name = "ar"
        label = "ar-a"

        [[datasets]]
        name = "ar"
        label = "ar-b"

        [[methods]]
        name = "autoreg"
        setting = "only b"
        params = { lags = 2 }
        datasets = ["ar-b"]

        [[methods]]
        name = "autoreg"
        setting = "by name"
        datasets = ["ar"]
        """))
    tasks = build_tasks(load_suite(str(path)))
    pairs = sorted((t.config["dataset"]["label"], t.config["setting"]) for t in tasks)
    assert pairs == [("ar-a", "by name"), ("ar-b", "by name"), ("ar-b", "only b")]


@pytest.mark.parametrize("quick", [False, True])
def test_every_builtin_suite_expands_and_every_method_entry_meets_a_dataset(quick):
    from pibench.benchmarks.suite import builtin_suites

    for name in builtin_suites():
        suite = load_suite(name, quick=quick)
        assert build_tasks(suite)
        if quick:
            continue  # a --quick entry may lose all its datasets to skip = true
        for i, entry in enumerate(suite["methods"]):
            alone = {**suite, "methods": [entry]}
            assert build_tasks(alone), f"{name}: method entry {i} ({entry['name']}) runs on no dataset"


@pytest.mark.parametrize("datasets, message", [('"ar"', "must be a list"), ('["ar-c"]', "does not have")])
def test_a_method_entry_naming_unknown_datasets_is_an_error(tmp_path, datasets, message):
    path = tmp_path / "bad.toml"
    path.write_text(textwrap.dedent(f"""
        name = "bad"
        [[datasets]]
        name = "ar"
        label = "ar-a"
        [[methods]]
        name = "autoreg"
        datasets = {datasets}
        """))
    with pytest.raises(ValueError, match=message):
        load_suite(str(path))


def test_set_methods_run_through_the_harness_and_an_absent_optional_dataset_is_skipped(tmp_path, capsys):
    from pibench.cli import main

    path = tmp_path / "sets.toml"
    path.write_text(textwrap.dedent("""
        name = "tiny_sets"
        [[datasets]]
        name = "seasonal_sets"
        params = { n_train = 120, n_calibration = 60, n_test = 50, horizon = 3, input_length = 12 }
        [[datasets]]
        name = "mimic"
        optional = true
        [[methods]]
        name = "cfrnn"
        params = { hidden = 4, epochs = 2 }
        [[methods]]
        name = "dprnn"
        params = { hidden = 4, epochs = 2, n_passes = 5 }
        """))
    argv = ["run", "--suite", str(path), "--data-dir", str(tmp_path / "data"), "--no-progress"]
    assert main(argv + ["--results-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "skipped dataset 'mimic' (optional): mimic data file not found" in out
    summary = pd.read_csv(tmp_path / "r" / "summary.csv")
    assert sorted(summary["method"]) == ["cfrnn", "dprnn"] and (summary["dataset"] == "seasonal_sets").all()
    assert summary["joint_coverage"].between(0, 1).all() and (summary["n_test"] == 50).all()

    broken = tmp_path / "data" / "mimic3_format_only" / "mimic_wbc.csv"
    broken.parent.mkdir(parents=True)
    broken.write_text("patient,visit,wbc\n1,1,3.0\n")  # there, but not in the documented columns
    assert main(argv + ["--results-dir", str(tmp_path / "r2")]) == 2
    assert "dataset 'mimic'" in capsys.readouterr().err and not (tmp_path / "r2").exists()


def test_a_rerun_names_what_changed_since_the_nearest_earlier_code():
    """K = 200, then K = 100, then K = 200 again (its first record reused), then only a helper edited: the new
    task differs from the first record in the helper alone, from the newest in both files."""
    from pibench.benchmarks.runner import _nearest

    first = {"data": "d", "code": "c", "plugin": {"mine": "k200", "helper": "h1"}}
    second = {"data": "d", "code": "c", "plugin": {"mine": "k100", "helper": "h1"}}
    now = {"data": "d", "code": "c", "plugin": {"mine": "k200", "helper": "h2"}}
    before = [("2026-01-01T00:00", "a", first), ("2026-01-02T00:00", "b", second)]
    assert _nearest(before, now) is first
    twin = dict(first)  # the same identity written twice: the newest of the nearest
    assert _nearest([*before, ("2026-01-03T00:00", "c", twin)], now) is twin


def test_the_silenced_loky_warning_is_the_one_loky_gives():
    """The runner hides loky's "worker stopped" line (the job reruns in a new worker): the text it filters must be
    the one the installed joblib writes, or the filter silently stops working."""
    import inspect
    import re

    from joblib.externals.loky import process_executor

    from pibench.benchmarks.runner import LOKY_WORKER_RESTART

    source = re.sub(r'"\s*\n\s*"', "", inspect.getsource(process_executor))  # adjacent string literals joined
    assert LOKY_WORKER_RESTART in source


def test_the_same_csv_reached_by_another_path_gives_the_same_numbers(suite, tmp_path, monkeypatch):
    """A network's seed followed the path as typed: csv:a/s.csv:y from above and csv:s.csv:y from a/ gave
    other intervals for the same file (coverage 91.4% against 89.7%). Now the file counts by its name."""
    from pibench import run

    rng = np.random.default_rng(3)
    y = np.zeros(440)  # a quarter of it to test: 110 points
    for t in range(1, len(y)):
        y[t] = 0.6 * y[t - 1] + rng.standard_normal()
    (tmp_path / "a").mkdir()
    pd.DataFrame({"y": y}).to_csv(tmp_path / "a" / "s.csv", index=False)
    suite_file = tmp_path / "tiny.toml"
    tables = []
    ids = ["dataset", "task_id", "shared_base_fits"]  # the path is part of what the tasks are called
    for where, path in ((tmp_path / "a", "s.csv"), (tmp_path, "a/s.csv"), (tmp_path, str(tmp_path / "a" / "s.csv"))):
        monkeypatch.chdir(where)
        results = run(suite_file, datasets=[f"csv:{path}:y"], methods=["aci"], results_dir=tmp_path / f"r{len(tables)}",
                      progress=False)
        tables.append(pd.read_csv(tmp_path / f"r{len(tables)}" / "summary.csv").drop(columns=[*RUN_COLUMNS, *ids]))
        assert len(results.records) == 4
    for table in tables[1:]:
        pd.testing.assert_frame_equal(table, tables[0])  # coverage, lengths, their CIs and tests


def test_an_optional_csv_dataset_whose_file_is_missing_is_skipped_but_a_bad_parameter_is_not(tmp_path, capsys):
    """optional = true skipped a missing built-in file but refused a missing CSV (the loaders raised a plain
    ValueError); a CSV entry with a wrong parameter beside the missing file is still refused."""
    from pibench.cli import main

    suite = tmp_path / "s.toml"
    entry = '''
        name = "mine"
        [[datasets]]
        name = "ar"
        params = {{ n_train = 200, n_test = 100 }}
        [[datasets]]
        name = "csv"
        label = "theirs"
        optional = true
        params = {{ path = "{path}", target = "y"{extra} }}
        [[methods]]
        name = "autoreg"
        '''
    suite.write_text(textwrap.dedent(entry.format(path=tmp_path / "absent.csv", extra="")))
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "skipped dataset 'theirs' (optional): CSV file" in out and "ran 1, skipped 0" in out
    suite.write_text(textwrap.dedent(entry.format(path=tmp_path / "absent.csv", extra=", lags = -1")))
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r2"), "--no-progress"]) == 2
    assert "lags=-1 must be a whole number >= 0" in capsys.readouterr().err


def test_a_wrong_value_of_one_variant_is_said_on_a_run_of_the_other(tmp_path):
    """A quick table's parameter of the wrong type was found only by the first --quick run (a full run of hours
    went by first), and a full-only one only without --quick; each is said on a run of either, once."""
    from pibench.api import suite_tasks
    from pibench.benchmarks.preflight import SetupError

    head = 'name = "q"\nseeds = [0]\n'
    (tmp_path / "q.toml").write_text(head + '[[datasets]]\nname = "ar"\nquick = { params = { n_test = "many" } }\n'
                                     '[[methods]]\nname = "aci"\nquick = { params = { gamma = "x" } }\n')
    with pytest.raises(SetupError) as refused:
        suite_tasks(tmp_path / "q.toml")
    assert refused.value.problems == [
        "the --quick variant: dataset 'ar': parameter n_test = 'many' must be int.",
        "the --quick variant: method 'aci' (default; [[methods]] entry 1): parameter gamma='x' must be float."]
    (tmp_path / "f.toml").write_text(head + '[[datasets]]\nname = "ar"\n[[methods]]\nname = "aci"\n'
                                     'params = { gamma = -1 }\nquick = { params = { gamma = 0.01 } }\n'
                                     '[[methods]]\nname = "nexcp"\nparams = { decay = 2.0 }\n')
    with pytest.raises(SetupError) as refused:
        suite_tasks(tmp_path / "f.toml", quick=True)
    assert len(refused.value.problems) == 1  # nexcp's decay is wrong in both: the quick run's own preflight says it
    assert refused.value.problems[0].startswith("the full variant (without --quick): method 'aci' (default; "
                                                "[[methods]] entry 1): gamma=-1")
    _, tasks = suite_tasks(tmp_path / "f.toml", methods=["nexcp"], quick=True)  # a selection: its entries alone
    assert [t.config["method"]["name"] for t in tasks] == ["nexcp"]
    # review: a problem of entries the selection does not run (two aci entries meeting on 'ar' under --quick only)
    (tmp_path / "s.toml").write_text(head + '[[datasets]]\nname = "ar"\n[[datasets]]\nname = "nlar"\n[[methods]]\n'
                                     'name = "autoreg"\n[[methods]]\nname = "aci"\nparams = { gamma = 0.01 }\n'
                                     'datasets = ["ar"]\n[[methods]]\nname = "aci"\nparams = { gamma = 0.05 }\n'
                                     'datasets = ["nlar"]\nquick = { datasets = ["ar"] }\n')
    assert len(suite_tasks(tmp_path / "s.toml", methods=["autoreg"])[1]) == 2
    with pytest.raises(SetupError, match="the --quick variant: method 'aci' has 2 entries labelled setting 'default'"):
        suite_tasks(tmp_path / "s.toml", methods=["aci"])


def test_a_notebooks_numpy_numbers_are_seeds_and_levels_as_the_numbers_they_print_as():
    """np.int64 seeds (list(np.arange(2)), a DataFrame's column) were "not a whole number", np.float32(0.1) "not a
    number", range(2) "must be a list"; np.float32(0.1) is the level 0.1, not 0.10000000149."""
    import numpy as np

    from pibench.api import suite_tasks

    plain = [(t.config["seed"], t.config["alpha"]) for t in suite_tasks(methods=["aci"], seeds=[0, 1],
                                                                        alpha=[0.1, 0.2])[1]]
    for seeds, alpha in ((list(np.arange(2)), [np.float32(0.1), np.float32(0.2)]), (range(2), [0.1, np.float64(0.2)])):
        tasks = suite_tasks(methods=["aci"], seeds=seeds, alpha=alpha)[1]
        assert [(t.config["seed"], t.config["alpha"]) for t in tasks] == plain
        assert {type(t.config["seed"]) for t in tasks} == {int} and {type(t.config["alpha"]) for t in tasks} == {float}
    with pytest.raises(ValueError, match="seed np.float64"):
        suite_tasks(methods=["aci"], seeds=[np.float64(1.0)])


def test_a_method_one_variant_leaves_out_is_no_problem_of_the_other(tmp_path):
    """Review: a method raising NotApplicable at the --quick variant's level (left out there with a note) refused
    the full run, where it applies, as a problem of the other variant."""
    import pibench.methods.base as base
    from pibench import Interval, IntervalMethod, NotApplicable, register
    from pibench.api import suite_tasks

    @register
    class LowLevelsOnly(IntervalMethod):
        name = "low_levels_only"

        def _check_param_values(self):
            super()._check_param_values()
            if self.alpha > 0.25:
                raise NotApplicable(f"serves alpha <= 0.25 only (alpha {self.alpha})")

        def fit(self, data, calibration=None):
            return self

        def predict_interval(self, X):
            return Interval(X[:, :1] - 1.0, X[:, :1] + 1.0, X[:, :1])

    try:
        (tmp_path / "n.toml").write_text('name = "n"\nalpha = 0.1\n[quick]\nalpha = 0.3\n[[datasets]]\nname = "ar"\n'
                                         '[[methods]]\nname = "aci"\n[[methods]]\nname = "low_levels_only"\n')
        assert {t.config["method"]["name"] for t in suite_tasks(tmp_path / "n.toml")[1]} == {"aci", "low_levels_only"}
    finally:
        base._REGISTRY.pop("low_levels_only", None)


def test_a_suite_protocol_no_task_takes_is_said(tmp_path):
    """A suite of sets only took an online protocol without a word (it serves a series added with --datasets)."""
    from pibench.api import suite_tasks

    (tmp_path / "s.toml").write_text('name = "s"\nprotocol = { kind = "online", window = 100 }\n'
                                     '[[datasets]]\nname = "covid"\n[[methods]]\nname = "cfrnn"\n')
    _, tasks = suite_tasks(tmp_path / "s.toml")
    assert [t.config["protocol"] for t in tasks] == [{"kind": "set"}]
    assert any(note.startswith("the suite's protocol {'kind': 'online', 'window': 100} is for series")
               for note in tasks.notes)
    series = tmp_path / "y.csv"
    series.write_text("y\n" + "\n".join(str(i % 7) for i in range(300)))
    _, tasks = suite_tasks(tmp_path / "s.toml", datasets=["covid", f"csv:{series}:y"], methods=["cfrnn", "aci"])
    assert {t.config["protocol"]["kind"] for t in tasks} == {"set", "online"}
    assert not any(note.startswith("the suite's protocol") for note in tasks.notes)


def test_quick_overrides_are_checked_as_the_rest_of_the_suite(tmp_path):
    """[[quick.methods]] replaced the suite's method entries unchecked (a misspelt grid ran the defaults), [quick]
    took a quick table of its own, and a method's quick datasets went unchecked (it ran on nothing, no word)."""
    from pibench.benchmarks.suite import load_suite

    head = 'name = "q"\n[[datasets]]\nname = "ar"\n[[methods]]\nname = "autoreg"\n'
    cases = {
        '[[quick.methods]]\nname = "autoreg"\ngird = { lags = [1, 2] }\n':
            "[quick]: an entry changes under --quick by a quick = { ... } table of its own",
        '[quick]\nquick = { whatever = 1 }\n': "[quick]: unknown key 'quick'; allowed keys: alpha, seeds, protocol, "
                                              "device.",
        '[quick]\ndevice = "gpu"\n': "[quick]: device = 'gpu' must be one of cpu, cuda, auto",
        'grid = { lags = [1, 2, 1] }\n': "[[methods]] entry 1 (autoreg): grid lags lists 1 more than once; list "
                                       "each value once.",  # (ran two settings for a grid of three)
    }
    for tail, message in cases.items():
        (tmp_path / "q.toml").write_text(head + tail)
        with pytest.raises(ValueError, match=re.escape(message)):
            load_suite(tmp_path / "q.toml")
    (tmp_path / "q.toml").write_text(head + 'quick = { datasets = ["nope"] }\n')
    with pytest.raises(ValueError, match=re.escape("method 'autoreg' (its quick table) names datasets ['nope']")):
        load_suite(tmp_path / "q.toml")
    (tmp_path / "q.toml").write_text(head + 'seeds = [0, 1]\n')  # a top-level key written under a table: that table's
    with pytest.raises(ValueError, match=re.escape("[[methods]] entry 1 (autoreg): unknown key 'seeds'; allowed keys: "
                                                   "name, setting, params, grid, protocol, datasets, quick. seeds is a "
                                                   "key of the suite itself: TOML gives a key written under a [[...]] "
                                                   "header to that table, so write it above the first [[datasets]]")):
        load_suite(tmp_path / "q.toml")
    (tmp_path / "q.toml").write_text('device = "GPU"\n' + head)  # the file named, where the runner said device= alone
    with pytest.raises(ValueError, match=re.escape(f"suite {tmp_path / 'q.toml'}: top level: device = 'GPU' must be")):
        load_suite(tmp_path / "q.toml")


def test_a_task_in_this_process_tells_the_bar_how_far_its_fits_and_epochs_are():
    """A long task showed nothing for minutes (API user): where tasks run one by one in the runner's process,
    the bar's postfix says the fits and training epochs done, a fit's epochs forgotten when it ends."""
    from pibench.benchmarks.protocols import run_series
    from pibench.benchmarks.runner import _TaskProgress
    from pibench.data_loaders.registry import load_dataset
    from pibench.methods.pa.method import PA
    from pibench.methods.task_progress import listening, report

    class Bar:
        def __init__(self):
            self.shown = []

        def set_postfix_str(self, text, refresh=True):
            self.shown.append(text)

    bar = Bar()
    progress = _TaskProgress(bar, every=0.0)
    problem = load_dataset("ar", {"n_train": 150, "n_test": 30})
    with listening(progress):
        run_series(problem, PA(hidden=4, epochs=3, T1=2, T2=2, T3=3), kind="online", window=100, retrain_every=10)
    assert bar.shown[:4] == ["epochs 1/3", "epochs 2/3", "epochs 3/3", "fits 1/3"]
    assert bar.shown[4:8] == ["fits 1/3, epochs 1/3", "fits 1/3, epochs 2/3", "fits 1/3, epochs 3/3", "fits 2/3"]
    assert bar.shown[-1] == "fits 3/3"
    report("fits", 1, 1)  # nobody listens outside the block: nothing happens
    assert bar.shown[-1] == "fits 3/3"
    import torch

    from pibench.methods.sequence.train import train_network

    heard = []  # the set models count their epochs as PA does: done, 1 to m (review: they told 0 to m - 1)
    with listening(lambda stage, done, total: heard.append(f"{stage} {done}/{total}")):
        train_network(torch.nn.Linear(3, 1), torch.randn(40, 3), torch.randn(40, 1), torch.nn.functional.mse_loss,
                      epochs=3, lr=0.01, batch_size=10, seed=0)
    assert heard == ["epochs 1/3", "epochs 2/3", "epochs 3/3"]
