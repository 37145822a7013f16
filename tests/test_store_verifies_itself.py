"""A store that verifies itself, and no input left unchecked (issue 27): an edited record is never shown and
is recomputed, a poisoned cache is never used, the store skips what is not a file, a run notices its folder
vanishing, and every careless argument gets one line before any work, leaving the results dir as it was."""

import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pibench.methods.base as base
from pibench import Interval, IntervalMethod, load_results, register
from pibench.benchmarks.store import ResultsStore
from pibench.cli import main
from pibench.data_loaders.csv_sets import read_long_sequences
from pibench.data_loaders.registry import load_dataset
from tests.test_cli_errors import one_line_error, snapshot

#: autoreg and the oracle on a short synthetic AR series (an oracle: the records carry length ratios), and
#: the oracle on the synthetic sets (per-horizon coverage)
SUITE = """
name = "verify"
protocol = { kind = "online", window = 120, retrain_every = 20 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 90 }
[[datasets]]
name = "seasonal_sets"
params = { n_train = 60, n_calibration = 40, n_test = 50 }
[[methods]]
name = "autoreg"
params = { lags = 2 }
[[methods]]
name = "oracle"
"""

#: split-conformal methods on shared base fits (a cache to poison)
SHARED = """
name = "shared"
protocol = { kind = "online", window = 100, retrain_every = 5 }
[[datasets]]
name = "ar"
params = { n_train = 120, n_test = 60 }
[[methods]]
name = "aci"
grid = { gamma = [0.0, 0.01] }
params = { hidden = 4, epochs = 5 }
"""


def cli_run(suite: Path, results: Path, *extra: str) -> int:
    return main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress", *extra])


@pytest.fixture
def verified(tmp_path, capsys):
    suite = tmp_path / "verify.toml"
    suite.write_text(SUITE)
    results = tmp_path / "results"
    assert cli_run(suite, results) == 0
    capsys.readouterr()
    return suite, results


def record_of(results: Path, method: str, dataset: str) -> tuple[Path, dict]:
    for path in sorted((results / "tasks").glob("*.json")):
        record = json.loads(path.read_text())
        if record["method"] == method and record["dataset"] == dataset:
            return path, record
    raise AssertionError(f"no {method} record on {dataset}")


@pytest.mark.parametrize("method, dataset, edit", [
    ("autoreg", "ar", lambda r: r.update(setting="gamma=0.5")),
    ("autoreg", "ar", lambda r: r["identity"].update(code="0.1.0+src.000000000000")),
    ("autoreg", "ar", lambda r: r.update(length_ratio_oracle=0.123)),
    ("autoreg", "ar", lambda r: r.update(length_ratio_vol_high=0.456)),
    ("autoreg", "ar", lambda r: r.update(coverage_vol_high=0.789)),
    ("autoreg", "ar", lambda r: r.update(seed=7)),
    ("oracle", "seasonal_sets", lambda r: r.update(per_horizon_coverage=[0.5] * len(r["per_horizon_coverage"]))),
    ("oracle", "seasonal_sets", lambda r: r.update(length_ratio_oracle=0.9)),
], ids=["setting", "identity.code", "length_ratio_oracle", "length_ratio_vol_high", "coverage_vol_high", "seed",
        "per_horizon_coverage", "set length ratio"])
def test_an_edited_record_is_never_shown_and_exactly_its_task_is_recomputed(verified, capsys, method, dataset, edit):
    suite, results = verified
    path, record = record_of(results, method, dataset)
    parquet = path.with_suffix(".parquet").read_bytes()
    edited = json.loads(json.dumps(record))
    edit(edited)
    path.write_text(json.dumps(edited))
    shown = json.dumps({k: v for k, v in edited.items() if json.dumps(v) != json.dumps(record.get(k))})

    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    assert f"{path.name}: tampered" in out and "np.float64" not in out  # the reason reads as plain numbers
    summary = pd.read_csv(results / "summary.csv")
    assert record["task_id"] not in set(summary["task_id"])  # the edited values are in no table
    tables = out.split("### Not in the tables")[0]  # the reason a record is left out may quote its edit
    for value in (0.123, 0.456, 0.789):
        if str(value) in shown:
            assert str(value) not in tables and not np.isclose(summary.select_dtypes(float), value).any()

    assert cli_run(suite, results) == 0
    out = capsys.readouterr().out
    assert "ran 1, skipped 2" in out and "tampered" in out.split("ran again:")[1]
    again = json.loads(path.read_text())
    assert path.with_suffix(".parquet").read_bytes() == parquet  # the same numbers, recomputed
    assert {k: again[k] for k in ("setting", "seed", "identity", "coverage")} == \
        {k: record[k] for k in ("setting", "seed", "identity", "coverage")}


def test_results_read_earlier_never_serve_a_predictions_file_changed_since(verified):
    """A Results object read before a predictions file was edited served the edited numbers (API user): its
    predictions (and so its figures) now refuse a file that is not the one its record checked, or is gone."""
    _, results = verified
    path, record = record_of(results, "autoreg", "ar")
    loaded = load_results(results)
    original = loaded.predictions(record["task_id"])  # read once and kept: the checked file
    fresh = load_results(results)
    parquet = path.with_suffix(".parquet")
    edited = original.assign(y=original["y"] + 100.0)  # every step a miss
    edited.to_parquet(parquet, index=False)
    pd.testing.assert_frame_equal(loaded.predictions(record["task_id"]), original)  # the checked file, kept
    with pytest.raises(ValueError, match=rf"{record['task_id']} are changed since its record was read .*read the "
                                         r"results again \(pibench.load_results"):
        fresh.predictions(record["task_id"])
    parquet.unlink()
    with pytest.raises(ValueError, match=rf"{record['task_id']} are gone since its record was read"):
        ResultsStore(results).reader([record])(record["task_id"])
    assert record["task_id"] not in {r["task_id"] for r in load_results(results).records}  # read again: left out


@pytest.mark.parametrize("edit", [lambda r: r.update(wall_seconds=0.5), lambda r: r.update(joint_guarantee=False),
                                  lambda r: r.update(device="cuda:0"), lambda r: r.pop("started_at")],
                         ids=["a time", "a flag", "the device", "a field taken away"])
def test_a_field_no_prediction_gives_is_checked_by_the_records_own_checksum(verified, edit):
    """A field the predictions cannot give (a time, a flag the tables mark with †, the device) edited by hand was
    shown as written (stop 50): the record's checksum of its own fields tells it; a record from before that
    checksum is read without it."""
    _, results = verified
    path, record = record_of(results, "oracle", "seasonal_sets")
    edited = json.loads(json.dumps(record))
    edit(edited)
    path.write_text(json.dumps(edited))
    records, skipped = ResultsStore(results).scan()
    assert record["task_id"] not in {r["task_id"] for r in records}
    (left,) = [s for s in skipped if s.path == path]
    assert left.reason == ("tampered: a field was edited after the run wrote the record (its fields_sha256 does "
                           "not match its fields)")
    older = {k: v for k, v in edited.items() if k != "fields_sha256"}
    path.write_text(json.dumps(older))
    assert record["task_id"] in {r["task_id"] for r in ResultsStore(results).scan()[0]}


def test_a_record_whose_id_does_not_re_derive_is_tampered(verified):
    _, results = verified
    path, record = record_of(results, "autoreg", "ar")
    record["config"]["method"]["params"]["lags"] = 3  # a config edited in place, labels left alone
    path.write_text(json.dumps(record))
    records, skipped = ResultsStore(results).scan()
    (left,) = [s for s in skipped if s.path == path]
    assert left.reason.startswith("tampered: its id does not re-derive from its config and identity")


def test_a_record_of_other_code_with_other_metrics_is_outdated_not_tampered(verified):
    """A metric whose definition changed (the length thirds once split ties by time) leaves an older record's
    number unequal to its recomputation: that record is outdated, its task runs again under the new code's
    id; the same number edited into a record of this code is tampered."""
    from pibench.benchmarks.suite import task_id_of

    _, results = verified
    path, record = record_of(results, "autoreg", "ar")
    older = json.loads(json.dumps(record))
    older["identity"]["code"] = older["code_version"] = "0.1.0+src.0123456789ab"
    older["coverage_size_min"] = record["coverage_size_min"] - 0.05  # what the older definition gave
    older["task_id"] = task_id_of(older["config"], older["identity"])
    old_path = path.with_name(f"{older['task_id']}.json")
    old_path.write_text(json.dumps(older))
    shutil.copy(path.with_suffix(".parquet"), old_path.with_suffix(".parquet"))
    edited = dict(record, coverage_size_min=older["coverage_size_min"])
    path.write_text(json.dumps(edited))
    reasons = {s.path: s.reason for s in ResultsStore(results).scan()[1]}
    assert reasons[old_path].startswith("outdated or edited: written by pibench code 0.1.0+src.0123456789ab, and "
                                        "coverage_size_min:")
    assert reasons[path].startswith("tampered: its metrics disagree with its predictions (coverage_size_min:")


def _poison_residuals(chunk: Path, factor: float = 10.0) -> None:
    """Multiply the residuals in a chunk by ``factor``, keeping a valid npz (and its old checksums)."""
    with np.load(chunk) as z:
        arrays = {name: z[name] for name in z.files}
    arrays["residuals"] = arrays["residuals"] * factor
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    chunk.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("damage", ["poisoned residuals", "truncated", "a FIFO"])
def test_a_damaged_cache_chunk_is_computed_again_and_never_used(tmp_path, capsys, damage):
    suite = tmp_path / "shared.toml"
    suite.write_text(SHARED)
    results = tmp_path / "r"
    assert cli_run(suite, results) == 0
    capsys.readouterr()
    chunks = sorted((results / "cache" / "split").rglob("*.npz"))
    assert len(chunks) >= 2
    path, _ = record_of(results, "aci", "ar")
    original = path.with_suffix(".parquet").read_bytes()
    if damage == "poisoned residuals":
        _poison_residuals(chunks[0])
    elif damage == "truncated":
        chunks[0].write_bytes(chunks[0].read_bytes()[:100])
    else:
        chunks[0].unlink()
        os.mkfifo(chunks[0])
    path.unlink()  # one task to compute again, on the (damaged) shared fits

    assert cli_run(suite, results) == 0  # recovers in the first rerun
    out = capsys.readouterr().out
    assert "ran 1," in out and f"shared base fits {chunks[0].parent.name}/{chunks[0].name} were unusable" in out
    assert path.with_suffix(".parquet").read_bytes() == original  # the clean fits, computed again
    assert chunks[0].is_file()
    with zipfile.ZipFile(chunks[0]) as z:
        assert "meta.npy" in z.namelist()  # the new chunk carries its checksums


@pytest.mark.parametrize("command", ["report", "run"])
def test_a_fifo_in_the_store_is_skipped_with_a_reason(verified, tmp_path, command):
    suite, results = verified
    os.mkfifo(results / "tasks" / "zzzz.json")
    (results / "tasks" / next(p.name for p in (results / "tasks").glob("*.json") if p.is_file())).unlink()
    extra = ["--suite", str(suite), "--no-progress"] if command == "run" else []
    done = subprocess.run([sys.executable, "-m", "pibench", command, "--results-dir", str(results), *extra],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    if command == "report":
        assert "zzzz.json: not a regular file" in done.stdout
    else:
        assert "ran 1," in done.stdout  # the deleted record runs again; the FIFO is never read


class _DeletesTheResults(IntervalMethod):
    """Deletes the results dir when it fits (a folder removed in the middle of a run)."""

    name = "deletes_results"
    target: Path | None = None

    def fit(self, data, calibration=None):
        if self.target is not None and self.target.exists():
            shutil.rmtree(self.target)
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        point = self.last_[None, :]
        return Interval(point - 1.0, point + 1.0, point)

    def update(self, y):
        self.last_ = y[-1]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_whose_results_dir_vanishes_exits_1_naming_it(verified, capsys, jobs):
    suite, _ = verified
    results = suite.parent / "vanishing"
    register(_DeletesTheResults)
    try:
        _DeletesTheResults.target = results  # sent to the workers with the class
        code = cli_run(suite, results, "--methods", "autoreg", "deletes_results", "--datasets", "ar", "-j", jobs)
    finally:
        base._REGISTRY.pop("deletes_results", None)
        _DeletesTheResults.target = None
    err = capsys.readouterr().err
    assert code == 1 and f"results dir {results} vanished or was replaced during the run" in err
    assert "Traceback" not in err


def test_records_are_written_with_the_users_umask(verified):
    _, results = verified
    for path in (results / "tasks").iterdir():
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == 0o666 & ~_umask(), (path.name, oct(mode))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_pinned_dataset_seed_says_that_replicates_share_data(tmp_path, capsys):
    suite = tmp_path / "pinned.toml"
    suite.write_text(SUITE.replace('params = { n_train = 150, n_test = 90 }',
                                   'params = { n_train = 150, n_test = 90, seed = 3 }'))
    assert cli_run(suite, tmp_path / "r", "--datasets", "ar", "--methods", "autoreg", "--seeds", "0", "1") == 0
    out = capsys.readouterr().out
    assert "dataset 'ar' pins seed = 3: its 2 replicates (seeds 0, 1) share one dataset" in out
    data = {r["data_fingerprint"] for r in load_results(tmp_path / "r").records}
    assert len(data) == 1


def test_repeated_entries_run_once_with_a_line(tmp_path, capsys):
    suite = tmp_path / "twice.toml"
    suite.write_text(SUITE + '\n[[methods]]\nname = "autoreg"\nparams = { lags = 2 }\n')
    assert cli_run(suite, tmp_path / "r", "--datasets", "ar", "--methods", "autoreg") == 0
    out = capsys.readouterr().out
    assert "ar / autoreg default / alpha 0.1 is given 2 times (a repeated entry or grid value, or the same " \
           "configuration under two entries); it runs once" in out
    assert "ran 1," in out
    # named twice on the command line: once said, whether the suite has the method or not
    assert cli_run(suite, tmp_path / "r2", "--datasets", "ar", "ar", "--methods", "autoreg", "autoreg", "aci",
                   "aci") == 0
    out = capsys.readouterr().out
    assert "method 'autoreg' is named 2 times in the selection; it runs once" in out
    assert "method 'aci' is named 2 times in the selection; it runs once" in out
    assert "dataset 'ar' is named 2 times in the selection; it runs once" in out
    assert out.count("it runs once") == 4  # the suite's own repeat of autoreg, and the three above


def test_csv_sets_ids_are_compared_as_written(tmp_path):
    rows = [(i, s, float(s + k)) for k, i in enumerate(["007", "7", "a", "b", "c", "d", "e", "f", "g", "h"])
            for s in range(8)]
    pd.DataFrame(rows, columns=["id", "step", "value"]).to_csv(tmp_path / "sets.csv", index=False)
    ids, sequences, *_ = read_long_sequences(tmp_path / "sets.csv")
    assert {"007", "7"} <= set(ids) and len(ids) == 10 and all(len(s) == 8 for s in sequences)
    problem = load_dataset("csv_sets", {"path": str(tmp_path / "sets.csv"), "input_length": 4, "horizon": 2})
    assert problem.train.n + problem.calibration.n + problem.test.n == 10  # not 9 with 007 and 7 merged


def test_a_time_column_with_text_names_the_row_and_the_value(tmp_path, capsys):
    days = [str(i) for i in range(300)]
    days[10] = "abc"
    pd.DataFrame({"day": days, "y": np.sin(np.arange(300) / 5)}).to_csv(tmp_path / "y.csv", index=False)
    suite = tmp_path / "csv.toml"
    suite.write_text(f'[[datasets]]\nname = "csv"\nparams = {{ path = "{tmp_path / "y.csv"}", target = "y", '
                     'time = "day" }\n[[methods]]\nname = "autoreg"\n')
    err = one_line_error(capsys, cli_run(suite, tmp_path / "r"))
    assert "holds numbers, but row 10 holds 'abc'" in err and not (tmp_path / "r").exists()


def test_a_test_ids_file_that_is_not_utf8_is_named(tmp_path):
    rows = [(f"s{i}", s, float(s)) for i in range(10) for s in range(8)]
    pd.DataFrame(rows, columns=["id", "step", "value"]).to_csv(tmp_path / "sets.csv", index=False)
    (tmp_path / "ids.txt").write_bytes(b"s1\n\xff\xfe s2\n")
    with pytest.raises(ValueError, match=r"test_ids file .*ids.txt is not UTF-8 text"):
        load_dataset("csv_sets", {"path": str(tmp_path / "sets.csv"), "input_length": 4, "horizon": 2,
                                  "test_ids": str(tmp_path / "ids.txt")})


@pytest.mark.parametrize("flags, message", [
    (["--threads", "100000"], "(--threads 100000) is more than the"),
    (["-j", "1000000"], "(-j 1000000) is far more than the"),
])
def test_worker_and_thread_counts_are_bounded_by_the_machine(verified, capsys, flags, message):
    suite, results = verified
    before = snapshot(results)
    err = one_line_error(capsys, cli_run(suite, results, *flags))
    assert message in err and snapshot(results) == before


def test_a_huge_selection_asks_for_yes(tmp_path, capsys):
    suite = tmp_path / "grid.toml"
    values = ", ".join(f"{g / 1e5:g}" for g in range(1, 1001))
    suite.write_text(f'[[datasets]]\nname = "ar"\n[[methods]]\nname = "aci"\ngrid = {{ gamma = [{values}], '
                     f'hidden = [{", ".join(str(h) for h in range(1, 101))}] }}\n')
    err = one_line_error(capsys, cli_run(suite, tmp_path / "r"))
    assert "expands to 100,000 tasks" in err and "--yes" in err and not (tmp_path / "r").exists()


def test_load_results_of_a_missing_folder_says_so(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_results(tmp_path / "typo")
    for wrong in (5, None):  # a raw TypeError of pathlib
        with pytest.raises(ValueError, match=rf"results dir {wrong} is not a folder path; give one, e.g. "):
            load_results(wrong)


def test_report_figures_into_an_unwritable_folder_writes_nothing(verified, capsys, tmp_path):
    _, results = verified
    before = snapshot(results)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    err = one_line_error(capsys, main(["report", "--results-dir", str(results), "--figures", str(blocked)]))
    assert "--figures" in err and snapshot(results) == before


class _NotAScheduler(threading.Thread):
    """A TCP server that answers every connection with bytes no dask scheduler sends."""

    def __init__(self):
        super().__init__(daemon=True)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]

    def run(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            try:
                conn.sendall(b"\xff" * 64 + b"HTTP/1.1 200 OK\r\n\r\nhello")
            except OSError:
                pass
            finally:
                conn.close()


@pytest.mark.parametrize("scheme", ["tcp", "tls"])
def test_an_address_that_is_not_a_dask_scheduler_gets_one_line_before_any_work(verified, capsys, scheme):
    pytest.importorskip("distributed")
    suite, results = verified
    before = snapshot(results)
    server = _NotAScheduler()
    server.start()
    try:
        fresh = suite.parent / "fresh"
        err = one_line_error(capsys, cli_run(suite, fresh, "--backend", "dask", "--scheduler",
                                             f"{scheme}://127.0.0.1:{server.port}"))
    finally:
        server.server.close()
    assert "did not answer as a dask scheduler" in err
    assert not fresh.exists() and snapshot(results) == before  # no .lock, no folder
    if scheme == "tls":
        assert "TLS settings" in err


@pytest.mark.parametrize("argv, message", [
    (["--suite", ""], "'' is not a suite: give a built-in suite name"),
    (["--methods", "cfrnn"], "method 'cfrnn' left out on 'ar1': it serves sets of sequences only"),
])
def test_half_clear_selections_say_what_is_wrong(tmp_path, capsys, argv, message):
    err = one_line_error(capsys, main(["run", *argv, "--results-dir", str(tmp_path / "r"), "--no-progress"]))
    assert message in err and not (tmp_path / "r").exists()


def test_a_long_series_run_says_its_cost_before_it_starts(tmp_path):
    from pibench.benchmarks.preflight import prepare_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    suite = tmp_path / "long.toml"
    suite.write_text('protocol = { kind = "online", window = 200, retrain_every = 50 }\n[[datasets]]\nname = "ar"\n'
                     'params = { n_train = 300, n_test = 120000 }\n[[methods]]\nname = "autoreg"\n')
    notes = prepare_tasks(build_tasks(load_suite(str(suite)))).notes
    assert "dataset 'ar': 120,000 online test steps and 2,400 refits per task" in notes[0]
    assert "expect a long run" in notes[0]


def test_a_records_labels_and_seeds_come_from_its_config(verified, capsys):
    _, results = verified
    path, record = record_of(results, "autoreg", "ar")
    edited = dict(record)
    del edited["suite"], edited["data_seed"]  # labels taken away: the config says them
    del edited["fields_sha256"]  # a record from before the checksum of its fields
    path.write_text(json.dumps(edited))
    (kept,) = [r for r in ResultsStore(results).records() if r["task_id"] == record["task_id"]]
    assert (kept["suite"], kept["data_seed"]) == (record["suite"], record["data_seed"])
    assert main(["report", "--results-dir", str(results)]) == 0
    summary = pd.read_csv(results / "summary.csv").set_index("task_id")
    assert summary.loc[record["task_id"], "suite"] == record["suite"]
    edited.update(suite=record["suite"], data_seed=record["data_seed"], method_seed=999)  # a seed written over
    path.write_text(json.dumps(edited))
    records, skipped = ResultsStore(results).scan()
    assert record["task_id"] not in {r["task_id"] for r in records}
    reason = f"tampered: its method_seed 999 is not its config's {record['method_seed']}"
    assert any(s.reason == reason for s in skipped)


def test_the_cost_of_a_long_run_is_printed_before_its_first_task(verified, capsys, monkeypatch):
    import pibench.benchmarks.preflight as preflight

    suite, results = verified
    monkeypatch.setattr(preflight, "LARGE_STEPS", 10)  # this small run counts as long
    assert cli_run(suite, results.parent / "long", "--methods", "autoreg", "--datasets", "ar") == 0
    captured = capsys.readouterr()
    assert "dataset 'ar': 90 online test steps" in captured.err and "expect a long run" in captured.err


class _DiagnosesItsAlpha(_DeletesTheResults):
    """Reports a diagnostic under a name the record uses."""

    name = "diagnoses_alpha"
    target = None

    def diagnostics(self):
        return {"alpha": 0.5}


def test_a_diagnostic_named_like_a_record_field_fails_its_task_with_the_fix(verified, capsys):
    suite, _ = verified
    register(_DiagnosesItsAlpha)
    try:
        code = cli_run(suite, suite.parent / "diag", "--methods", "diagnoses_alpha", "--datasets", "ar")
    finally:
        base._REGISTRY.pop("diagnoses_alpha", None)
    err = capsys.readouterr().err
    assert code == 1 and "diagnostics() returns ['alpha'], which name fields of the record" in err


def test_a_record_of_other_code_whose_predictions_this_code_cannot_read_is_outdated(verified):
    """Predictions of an older layout (a column renamed) give this code no metrics: for a record of other
    code that is 'outdated or edited', for one of this code 'tampered'."""
    from pibench.benchmarks.store import _mismatch_reason
    from pibench.reports.metrics import metrics_mismatch

    _, results = verified
    path, record = record_of(results, "autoreg", "ar")
    older_layout = pd.read_parquet(path.with_suffix(".parquet")).rename(columns={"lower": "lo"})
    mismatch = metrics_mismatch(record, older_layout)
    assert mismatch is not None and mismatch.this_codes_reading
    other = {**record, "identity": {**record["identity"], "code": "0.1.0+src.0123456789ab"}}
    assert _mismatch_reason(other, mismatch).startswith("outdated or edited: written by pibench code 0.1.0+src.01")
    assert _mismatch_reason(record, mismatch).startswith("tampered: its metrics disagree")
