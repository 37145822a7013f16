"""Nothing unsafe, nothing silently wrong: every bad input of issue 18 stops before any work with one line
(exit 2), and leaves the results dir byte-identical."""

import os
import pickle
import socket
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.store import ResultsStore
from pibench.benchmarks.suite import check_alphas
from pibench.cli import main
from pibench.data_loaders.registry import load_dataset
from tests.test_cli_errors import TINY, one_line_error, snapshot, suite_with, without_root_override


def tiny_suite(results: Path) -> Path:
    """The suite the ``store`` fixture ran."""
    return results.parent / "tiny.toml"


def run_suite(suite: Path, results: Path, *extra: str) -> int:
    return main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress", *extra])


@pytest.fixture(name="store")
def finished_store(tmp_path, capsys):
    """A results dir holding one finished run of ``TINY``, and its files' contents (as the ``store``
    fixture of tests/test_cli_errors.py; defined here so no test parameter shadows an imported name)."""
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY)
    results = tmp_path / "results"
    assert run_suite(suite, results) == 0
    capsys.readouterr()
    return results, snapshot(results)


def series_csv(path: Path, n: int = 400, **columns) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"day": np.arange(n), "y": np.sin(np.arange(n) / 5) + 0.3 * rng.normal(size=n),
                          "temp": rng.normal(size=n), **columns})
    frame.to_csv(path, index=False)
    return path


# ------------------------------------------------------------------------ a pickle never runs unasked


class _Tripwire:
    """Unpickling this creates the marker file: proof that the file's code ran."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "unpickled"))


@pytest.mark.parametrize("flag", ['"false"', '"yes"', '"true"', "1", "0"])
def test_trust_pickle_takes_only_a_toml_boolean(store, tmp_path, capsys, flag):
    results, before = store
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "mimic.p"
    evil.write_bytes(pickle.dumps(_Tripwire(str(marker))))
    suite = suite_with(tmp_path, f'name = "mimic"\nparams = {{ path = "{evil}", trust_pickle = {flag} }}',
                       'name = "cfrnn"')
    err = one_line_error(capsys, run_suite(suite, results))
    assert "trust_pickle" in err and "true or false" in err
    assert not marker.exists()  # the file was never opened
    assert snapshot(results) == before


def test_the_tripwire_does_fire_when_trusted(tmp_path):
    """The pickle above really runs code when unpickled: the refusal is what keeps the marker absent."""
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "mimic.p"
    evil.write_bytes(pickle.dumps(_Tripwire(str(marker))))
    with pytest.raises(ValueError, match="expected a dict"):
        load_dataset("mimic", {"path": str(evil), "trust_pickle": True})
    assert marker.read_text() == "unpickled"


# ------------------------------------------------------------------------ what the runner sets


@pytest.mark.parametrize("entry, where", [
    ('name = "autoreg"\nparams = { lags = 2, alpha = 1.5 }', "alpha = ... at the top of the suite file"),
    ('name = "aci"\ngrid = { alpha = [0.05, 0.1] }', "alpha = ... at the top of the suite file"),
    ('name = "autoreg"\nparams = { random_state = 3 }', "seeds = [...] or --seeds"),
])
def test_names_the_runner_sets_are_refused_in_method_params(store, tmp_path, capsys, entry, where):
    results, before = store
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, 'name = "ar"', entry), results))
    assert "is set by the runner" in err and where in err
    assert snapshot(results) == before


def test_the_data_folder_is_refused_as_a_dataset_parameter(store, tmp_path, capsys):
    results, before = store
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, 'name = "ar"\nparams = { data_dir = "/tmp" }'),
                                           results))
    assert "data_dir is not a dataset parameter" in err and "--data-dir" in err
    assert snapshot(results) == before


@pytest.mark.parametrize("value", ['"3"', "3.5", "true"])
def test_a_pinned_dataset_seed_is_typed(store, tmp_path, capsys, value):
    results, before = store
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, f'name = "ar"\nparams = {{ seed = {value} }}'),
                                           results))
    assert "seed" in err
    assert snapshot(results) == before


@pytest.mark.parametrize("protocol, shown", [('window = "150"', "window = '150' must be int | None"),
                                             ("retrain_every = 2.5", "retrain_every = 2.5 must be int"),
                                             ("window = true", "window = True must be int | None"),
                                             ("every = 3", "protocol has no key(s) ['every']")])
def test_protocol_values_are_typed(store, tmp_path, capsys, protocol, shown):
    results, before = store
    dataset = f'name = "ar"\nprotocol = {{ {protocol} }}'
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, dataset), results))
    assert shown in err
    assert snapshot(results) == before


# ------------------------------------------------------------------------ CSV series


CSV_CASES = {
    "time is the target": (lambda d: {"path": series_csv(d / "a.csv"), "target": "y", "time": "y"},
                           ["the time column 'y' is also the target", "leave time out"]),
    "time is a feature": (lambda d: {"path": series_csv(d / "b.csv"), "target": "y", "time": "temp",
                                     "features": ["temp"]},
                          ["the time column 'temp' is also listed in features; it orders the rows",
                           "drop it from features"]),
    "target as a feature": (lambda d: {"path": series_csv(d / "c.csv"), "target": "y", "features": ["y"]},
                            ["the target 'y' is also listed in features"]),
    "constant target": (lambda d: {"path": series_csv(d / "d.csv", flat=np.full(400, 3.0)), "target": "flat"},
                        ["the target 'flat' is constant (3)", "no uncertainty"]),
    "empty file": (lambda d: {"path": _write(d / "e.csv", ""), "target": "y"}, ["is empty (0 bytes)"]),
    "header only": (lambda d: {"path": _write(d / "f.csv", "day,y\n"), "target": "y"}, ["no data rows"]),
    "repeated time": (lambda d: {"path": series_csv(d / "g.csv", stamp=np.r_[np.arange(399), 199]),
                                 "target": "y", "time": "stamp"},
                      ["the time column 'stamp' repeats 199 (rows 199 and 399,", "drop or fix one of them"]),
    "huge values": (lambda d: {"path": series_csv(d / "h.csv", big=np.linspace(1, 2, 400) * 1e300),
                               "target": "big"}, ["exceed 1e+100 in magnitude", "column 'big'", "Rescale"]),
    "features not a list of names": (lambda d: {"path": series_csv(d / "i.csv"), "target": "y", "features": [3]},
                                     ["features = [3] must be list[str] | None"]),
    "lags as text": (lambda d: {"path": series_csv(d / "j.csv"), "target": "y", "lags": "2"},
                     ["lags = '2' must be int"]),
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _toml_params(params: dict) -> str:
    def value(v):
        if isinstance(v, Path):
            return f'"{v}"'
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)
    return ", ".join(f"{k} = {value(v)}" for k, v in params.items())


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_csv_series_mistakes_stop_with_one_line(store, tmp_path, capsys, case):
    results, before = store
    make, expected = CSV_CASES[case]
    dataset = f'name = "csv"\nparams = {{ {_toml_params(make(tmp_path))} }}'
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, dataset), results))
    for text in expected:
        assert text in err, err
    assert "np.int64" not in err and "Warning" not in err
    assert snapshot(results) == before


def test_a_valid_csv_with_its_time_column_still_runs(tmp_path, capsys):
    path = series_csv(tmp_path / "ok.csv")
    dataset = f'name = "csv"\nparams = {{ path = "{path}", target = "y", time = "day", features = ["temp"] }}'
    assert run_suite(suite_with(tmp_path, dataset), tmp_path / "r") == 0


# ------------------------------------------------------------------------ csv_sets parameters


def long_sets(path: Path, n: int = 40, steps: int = 12, split: list[str] | None = None) -> Path:
    rng = np.random.default_rng(1)
    rows = []
    for i in range(n):
        walk = np.cumsum(rng.normal(size=steps))
        for t in range(steps):
            rows.append({"id": f"s{i:03d}", "step": t, "value": walk[t],
                         **({"part": split[i]} if split else {})})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("value, shown", [('"ten"', "input_length = 'ten' must be int"),
                                          ("10.7", "input_length = 10.7 must be int")])
def test_csv_sets_parameters_are_typed(store, tmp_path, capsys, value, shown):
    results, before = store
    dataset = f'name = "csv_sets"\nparams = {{ path = "{long_sets(tmp_path / "s.csv")}", input_length = {value}, ' \
              'horizon = 2 }'
    err = one_line_error(capsys, run_suite(suite_with(tmp_path, dataset, 'name = "cfrnn"'), results))
    assert shown in err and "dataset 'csv_sets'" in err
    assert snapshot(results) == before


def test_csv_sets_on_the_command_line_says_to_write_a_suite(store, tmp_path, capsys, monkeypatch):
    results, before = store
    err = one_line_error(capsys, main(["run", "--datasets", "csv_sets", "--methods", "cfrnn", "--results-dir",
                                       str(results), "--no-progress"]))
    assert "needs path, input_length, horizon" in err and "only a suite file" in err
    assert snapshot(results) == before
    # the example the message gives is a working suite file
    example = err.split("save the two lines `")[1]
    datasets_line, methods_line = example.split("`")[0], example.split("` and `")[1].split("`")[0]
    monkeypatch.chdir(tmp_path)
    long_sets(tmp_path / "sets.csv", n=30)
    (tmp_path / "my_suite.toml").write_text(
        datasets_line + "\n" + methods_line.replace('"cfrnn" }', '"cfrnn", params = { epochs = 2 } }') + "\n")
    assert main(["run", "--suite", "my_suite.toml", "--results-dir", "r", "--no-progress"]) == 0


# ------------------------------------------------------------------------ seeds and folders


@pytest.mark.parametrize("argv, shown", [(["--seeds", "0", "0", "0"], "seed 0 is given 3 times"),
                                         (["--seeds", "-1"], "seed -1 is not a whole number from 0 to"),
                                         (["--seeds", str(2**32)], f"seed {2**32} is not a whole number")])
def test_seeds_are_distinct_and_in_range(store, capsys, argv, shown):
    results, before = store
    suite = tiny_suite(results)
    err = one_line_error(capsys, run_suite(suite, results, *argv))
    assert shown in err
    assert snapshot(results) == before


def test_levels_are_kept_as_the_tables_show_them():
    """alpha 0.1 and 0.1000000001 ran as two levels that every table showed as 0.1 (API user): a level with more
    significant digits than the tables' 6 is refused, naming the one to give; float noise (1 - 0.9) is the level."""
    assert check_alphas([1 - 0.9, 0.05]) == [0.1, 0.05] and check_alphas(0.123456) == [0.123456]
    with pytest.raises(ValueError, match=r"alpha 0.1000000001 has more significant digits than the tables show "
                                         r"\(6: it reads 0.1 there.*give 0.1, or"):
        check_alphas([0.1, 0.1000000001])
    with pytest.raises(ValueError, match=r"alpha 0.1 is given 2 times"):
        check_alphas([0.1, 1 - 0.9])


def test_a_suite_without_methods_says_how_to_write_one(tmp_path, capsys):
    """A suite file of the CSV page's [[datasets]] block alone was refused, --methods or not, without saying
    what else a suite needs (docs reader)."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[datasets]]\nname = "ar"\n')
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--methods", "aci", "--results-dir",
                                       str(tmp_path / "r"), "--no-progress"]))
    assert 'needs at least one [[methods]] entry (e.g. [[methods]] then name = "aci" on the next line' in err
    assert "even with --methods" in err and not (tmp_path / "r").exists()


def test_suite_seeds_are_checked_with_the_file_named(tmp_path, capsys):
    suite = tmp_path / "s.toml"
    suite.write_text(TINY.replace('name = "tiny"', 'name = "tiny"\nseeds = [1, 1]'))
    err = one_line_error(capsys, run_suite(suite, tmp_path / "r"))
    assert str(suite) in err and "seed 1 is given 2 times" in err
    assert not (tmp_path / "r").exists()


def test_an_empty_results_dir_name_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suite = _write(tmp_path / "tiny.toml", TINY)
    err = one_line_error(capsys, main(["run", "--suite", str(suite), "--results-dir", "", "--no-progress"]))
    assert "the results dir is empty; give a folder, e.g. --results-dir results" in err
    assert sorted(os.listdir(tmp_path)) == ["tiny.toml"]  # nothing written into the current folder


def test_a_dangling_link_as_results_dir(tmp_path, capsys):
    link = tmp_path / "results"
    link.symlink_to(tmp_path / "gone")
    err = one_line_error(capsys, run_suite(_write(tmp_path / "tiny.toml", TINY), link))
    assert "is a link to" in err and "does not exist" in err and not (tmp_path / "gone").exists()


def test_a_read_only_tasks_folder_is_refused_before_any_fit(store, tmp_path):
    """Only tasks/ is read-only: the run must refuse before computing (and caching) anything."""
    results, before = store
    suite = tiny_suite(results)
    (results / "tasks").chmod(0o555)
    try:
        run = without_root_override(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress",
                                     "--seeds", "5"])
    finally:
        (results / "tasks").chmod(0o755)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "no permission to write in" in run.stderr and "tasks" in run.stderr
    assert snapshot(results) == before and not (results / "cache" / "split").exists()  # no base fit


def test_a_binary_suite_file_is_named(tmp_path, capsys):
    path = tmp_path / "suite.toml"
    path.write_bytes(bytes(range(256)))
    err = one_line_error(capsys, main(["run", "--suite", str(path), "--results-dir", str(tmp_path / "r")]))
    assert str(path) in err and "not text" in err


def test_report_on_a_file_says_so(tmp_path, capsys):
    target = _write(tmp_path / "notes.txt", "mine")
    err = one_line_error(capsys, main(["report", "--results-dir", str(target)]))
    assert "is a file, not a folder" in err and target.read_text() == "mine"


def test_a_dead_dask_scheduler_is_reported_quickly(store, capsys):
    pytest.importorskip("distributed")
    results, before = store
    suite = tiny_suite(results)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tic = time.perf_counter()
    err = one_line_error(capsys, run_suite(suite, results, "--backend", "dask", "--scheduler",
                                           f"tcp://127.0.0.1:{port}"))
    assert "could not reach the dask scheduler" in err and time.perf_counter() - tic < 10
    assert snapshot(results) == before


# ------------------------------------------------------------------------ stored results that lie


def test_a_hand_edited_metric_is_left_out_as_tampered_and_recomputed(store, capsys):
    results, _ = store
    suite = tiny_suite(results)
    (path,) = (results / "tasks").glob("*.json")
    record = path.read_text()
    path.write_text(record.replace('"coverage": 0.', '"coverage": 99.99, "was": 0.', 1))
    assert main(["report", "--results-dir", str(results)]) == 1  # its only record is left out
    err = capsys.readouterr().err
    assert "tampered: its metrics disagree with its predictions (coverage: 99.99 in the record" in err
    assert "9999" not in pd.read_csv(results / "summary.csv").to_csv()
    assert run_suite(suite, results) == 0
    out = capsys.readouterr().out
    assert "ran 1" in out and "ran again: ar / autoreg default / seed 0" in out and "tampered" in out
    assert ResultsStore(results).records()[0]["coverage"] < 1


def test_a_rerun_after_a_damaged_predictions_file_names_the_task(store, capsys):
    results, _ = store
    suite = tiny_suite(results)
    (parquet,) = (results / "tasks").glob("*.parquet")
    parquet.write_bytes(parquet.read_bytes()[:-10])
    assert run_suite(suite, results) == 0
    out = capsys.readouterr().out
    assert "ran 1," in out and "ran again: ar / autoreg default / seed 0" in out and "checksum" in out


def test_report_after_every_record_went_stale_clears_the_summary(tmp_path, capsys):
    path = series_csv(tmp_path / "load.csv")
    suite = suite_with(tmp_path, f'name = "csv"\nparams = {{ path = "{path}", target = "y" }}')
    results = tmp_path / "r"
    assert run_suite(suite, results) == 0
    assert len(pd.read_csv(results / "summary.csv")) == 1
    series_csv(path, n=401)  # the data file changes
    capsys.readouterr()
    assert main(["report", "--results-dir", str(results)]) == 1
    assert "has changed since it ran" in capsys.readouterr().err
    assert pd.read_csv(results / "summary.csv").empty  # no stale row left on disk
