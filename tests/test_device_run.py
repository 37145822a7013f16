"""The GPU session's prepared command (benchmarks/device_run.sh and .py) in its CPU dry run, so it cannot rot:
every stage runs through the same code and files as on a GPU, at tiny sizes (benchmarks/tiny_suite.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from pibench.benchmarks.device_run import (
    REPO,
    STAGE_NAMES,
    DeviceRun,
    Stage,
    _run_limited,
    jobs_done,
    stages_in_order,
)
from pibench.benchmarks.suite import load_suite
from pibench.benchmarks.tiny_suite import tiny_suite, to_toml
from pibench.data_loaders.paths import DATASET_FILES

#: what the device tool brings back from $OUT: at most 8 files, names of letters, digits, '.', '_', '-'
OUT_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def _script(args: list[str], out: Path, carry: Path, timeout: int = 500) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PIBENCH_DATA"}  # the script finds the carried data
    env.update(OUT=str(out), PIBENCH_PYTHON=sys.executable, PIBENCH_CARRY=str(carry))
    return subprocess.run(["bash", str(REPO / "benchmarks" / "device_run.sh"), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dry_run(shared_data_dir, tmp_path_factory):
    """Stage the carried folder (data only: no network in tests), then the whole prepared command, dry."""
    root = tmp_path_factory.mktemp("device_run")
    carry, out = root / "carry", root / "out"
    staged = subprocess.run([sys.executable, "-m", "pibench.benchmarks.device_run", "stage", "--no-wheels",
                             "--data-dir", str(shared_data_dir), "--dest", str(carry)],
                            capture_output=True, text=True, timeout=120)
    assert staged.returncode == 0, staged.stderr
    done = _script(["--dry-run", "--suites-together", "--work", str(root / "work"), "--budget", "500"], out, carry)
    return root, carry, out, done


def test_the_dry_run_runs_every_stage_and_brings_back_what_the_device_tool_can(dry_run):
    root, carry, out, done = dry_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for key in ("fesp", "eeg"):
        assert (carry / "data" / DATASET_FILES[key].relpath).is_file()
    summary = json.loads((out / "device_run.json").read_text())
    assert summary["dry_run"] is True
    assert [s["name"] for s in summary["stages"]] == list(STAGE_NAMES)
    assert all(s["status"] == "ok" for s in summary["stages"]), [(s["name"], s["status"]) for s in summary["stages"]]
    files = sorted(p.name for p in out.iterdir())
    assert len(files) <= 8 and all(OUT_NAME.match(f) and (out / f).is_file() for f in files), files
    assert files == ["device_run.json", "device_run.md", "logs.tar.gz", "stores-ar_order_paper.tar.gz",
                     "stores-fesp.tar.gz", "stores-sets_eeg100.tar.gz"]
    md = (out / "device_run.md").read_text()
    # the paper's tables, side by side with its values, for each suite; the profile's counts
    for title in ("Order selection (ar_order_paper): measured vs paper", "EEG, larger model (LSTM-100)",
                  "fesp: measured vs paper", "GPU busy ms"):
        assert title in md, title
    with tarfile.open(out / "logs.tar.gz") as tar:
        assert {f"logs/{name}.log" for name in STAGE_NAMES} <= set(tar.getnames())


def test_resume_keeps_the_finished_tasks(dry_run, tmp_path):
    root, carry, out, _ = dry_run
    again = _script(["--dry-run", "--stages", "ar_order_paper", "--work", str(tmp_path / "work"),
                     "--resume", str(out / "stores-ar_order_paper.tar.gz")], tmp_path / "out", carry)
    assert again.returncode == 0, again.stdout[-3000:]
    log = (tmp_path / "work" / "logs" / "ar_order_paper.log").read_text()
    assert re.search(r"ran 0, skipped [1-9]\d* already finished", log), log[-2000:]


def test_methods_and_seeds_narrow_the_suites_to_what_an_earlier_run_left(dry_run, tmp_path):
    """A second GPU call reruns only what the first left unfinished (`pibench run --methods / --seeds`)."""
    root, carry, _, _ = dry_run
    done = _script(["--dry-run", "--stages", "sets_eeg100", "--work", str(tmp_path / "work"), "--methods", "cfrnn",
                    "dprnn", "--seeds", "0"], tmp_path / "out", carry)
    assert done.returncode == 0, done.stdout[-3000:]
    records = [json.loads(p.read_text()) for p in (tmp_path / "work" / "stores" / "sets_eeg100").rglob("tasks/*.json")]
    assert sorted((r["method"], r["seed"]) for r in records) == [("cfrnn", 0), ("dprnn", 0)]
    assert "--methods cfrnn dprnn --seeds 0" in (tmp_path / "out" / "device_run.md").read_text()


def test_each_suite_gets_the_methods_it_lists_and_one_that_lists_none_is_skipped(tmp_path):
    """A method a suite does not list would run there with its default parameters: each suite takes only its own."""
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=60, dry_run=True, jobs=1, python=sys.executable,
                    methods=["cfrnn", "autoreg"], seeds=[0])
    sets_run = run.commands("sets_eeg100")[0]
    assert sets_run[sets_run.index("--methods"):] == ["--methods", "cfrnn", "--seeds", "0"]
    order_run = run.commands("ar_order_paper")[0]
    assert order_run[order_run.index("--methods"):] == ["--methods", "autoreg", "--seeds", "0"]
    only_cfrnn = DeviceRun(tmp_path / "out2", tmp_path / "work2", budget_s=60, dry_run=True, jobs=1,
                           python=sys.executable, methods=["cfrnn"])
    skipped = only_cfrnn.run_stage(Stage("ar_order_paper", 60, "order selection"))
    assert skipped.status == "skipped: it lists none of --methods cfrnn"


def test_a_stage_past_its_limit_is_stopped_with_every_process_it_started(tmp_path):
    pid_file = tmp_path / "child.pid"
    tic = time.perf_counter()
    rc = _run_limited(["bash", "-c", f"sleep 120 & echo $! > {pid_file}; wait"], tmp_path / "log", 2,
                      dict(os.environ))
    assert rc is None and time.perf_counter() - tic < 30
    status = Path(f"/proc/{int(pid_file.read_text())}/status")

    def alive() -> bool:  # gone, or a zombie awaiting its reaper, is dead
        try:
            return "State:\tZ" not in status.read_text()
        except FileNotFoundError:
            return False
    deadline = time.monotonic() + 20  # the signal is sent; a loaded machine may take a moment to act on it
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(), "the stage's child process outlived the stop"
    assert "stopped after 2 s (its limit)" in (tmp_path / "log").read_text()


def test_stages_run_in_the_order_named_and_once():
    assert [s.name for s in stages_in_order(["env", "sets_eeg100", "tests", "sets_eeg100"])] == \
        ["env", "sets_eeg100", "tests"]
    assert [s.name for s in stages_in_order(STAGE_NAMES)] == list(STAGE_NAMES)


def test_a_suites_jobs_are_read_from_its_progress_lines():
    assert jobs_done("$ pibench run\nsuite 'x': 3 task(s)\n") is None  # no job finished yet
    output = ("$ pibench run\nsuite 'x': 3 task(s)\n[1/3] eeg / pa_lstm / LSTM-100 / seed 0: error; wall 304.8 s\n"
              "[2/3] eeg / cfrnn / LSTM-100 / seed 0: ok; fit 0.4 s; trained in a cell of 5\n"
              "[device_run] stopped after 427 s (its limit)\n")
    assert jobs_done(output) == (2, 3, 1)


def test_the_runners_progress_lines_parse_back():
    """device_run reads what the runner prints: a line of each status, a cell's multi-line error included."""
    from pibench.benchmarks.runner import _finished_line
    base = {"dataset": "eeg", "method": "pa_lstm", "setting": "LSTM-100: a, b", "seed": 0, "wall_seconds": 1.0}
    lines = [_finished_line({**base, "status": "ok", "cell": {"members": 5, "train_seconds": 9.0}}, 1, 3),
             _finished_line({**base, "status": "error", "cell": {"members": 5, "error": "OOM\nsecond line"}}, 2, 3),
             _finished_line({**base, "status": "ok"}, 3, 3)]
    assert all("\n" not in line for line in lines)
    assert jobs_done("\n".join(lines)) == (3, 3, 1)


def _suite_run(lines: str, then: str) -> list[list[str]]:
    """A suite stage's two commands, its run (printing ``lines``, then doing ``then``) and its report."""
    return [["bash", "-c", f"printf '{lines}'; {then}"], ["true"]]


@pytest.mark.parametrize("last", ["ok", "error", "ok, not summarised"])
def test_a_suite_stopped_while_exiting_after_its_last_job_is_ok(last, tmp_path, monkeypatch):
    """All jobs finished and the store summarised, the process still exiting at the limit (on a GPU: workers'
    CUDA contexts): the stage's work is done, so it is ok, unless a job failed or the run never printed its
    closing line; the jobs column says how many finished."""
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=100, dry_run=True, jobs=1, python=sys.executable)
    lines = (f"[1/2] ar / pa_rnn / seed 0: ok; wall 1.0 s\\n[2/2] ar / pa_rnn / seed 1: {last.split(',')[0]}; "
             "wall 1.0 s\\n" + ("" if "not" in last else "ran 2, skipped 0 already finished; summary: s.csv\\n"))
    monkeypatch.setattr(run, "commands", lambda stage, jobs=None: _suite_run(lines, "sleep 60"))
    result = run.run_stage(Stage("ar_order_paper", 10, "order selection"))
    assert result.wall_s < 40 and result.jobs == ("2 of 2 (1 failed)" if last == "error" else "2 of 2")
    assert result.status == ("ok" if last == "ok" else "timed out (limit 10 s)")
    assert f"| ar_order_paper | {result.status} | {result.jobs} |" in (tmp_path / "out" / "device_run.md").read_text()


def test_a_second_call_reads_its_own_progress_lines_not_the_first_calls(tmp_path, monkeypatch):
    """The log of a stage run again on the same machine is appended to: the second run's jobs and status are
    its own (here it finishes nothing before its limit)."""
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=100, dry_run=True, jobs=1, python=sys.executable)
    done = "[1/1] ar / pa_rnn / seed 0: ok; wall 1.0 s\\nran 1, skipped 0 already finished; summary: s.csv\\n"
    monkeypatch.setattr(run, "commands", lambda stage, jobs=None: _suite_run(done, "true"))
    first = run.run_stage(Stage("ar_order_paper", 10, "order selection"))
    assert first.status == "ok" and first.jobs == "1 of 1"
    monkeypatch.setattr(run, "commands", lambda stage, jobs=None: _suite_run("suite started\\n", "sleep 60"))
    second = run.run_stage(Stage("ar_order_paper", 10, "order selection"))
    assert second.status == "timed out (limit 10 s)" and second.jobs == ""
    assert "[1/1]" in (run.logs / "ar_order_paper.log").read_text()  # the first call's lines are still there


def test_perf_devices_rows_without_a_warm_up_are_gpu_rows():
    from pibench.benchmarks.perf_device import COLD, GPU_ONLY
    assert COLD and COLD <= set(GPU_ONLY)  # a renamed row would silently get its warm-up back


def test_stages_that_the_budget_cannot_hold_are_skipped_with_the_reason(tmp_path):
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=30, dry_run=True, jobs=1, python=sys.executable)
    first = run.run_stage(Stage("env", 60, "torch"))
    run.started -= 25  # as if the first stage had taken 25 s more: under 20 s of the budget are left
    second = run.run_stage(Stage("profile", 60, "profile"))
    assert first.status == "ok" and first.limit_s == 20  # the budget less 10 s, not the stage's 60
    assert second.status.startswith("skipped:") and "of the budget left" in second.status
    assert "| profile | skipped" in (tmp_path / "out" / "device_run.md").read_text()


@pytest.mark.parametrize("suite", ["ar_order_paper", "sets_eeg100", "fesp"])
def test_the_tiny_variant_keeps_the_quick_suite_and_shrinks_its_sizes(suite, tmp_path):
    quick, tiny = load_suite(suite, quick=True), tiny_suite(suite)
    assert [(d["name"], d.get("label")) for d in tiny["datasets"]] == \
        [(d["name"], d.get("label")) for d in quick["datasets"]]
    assert {(m["name"], m.get("setting")) for m in tiny["methods"]} <= {(m["name"], m.get("setting"))
                                                                      for m in quick["methods"]}
    assert len(tiny["seeds"]) == 1
    for entry in tiny["datasets"] + tiny["methods"]:
        params = entry.get("params", {})
        assert params.get("hidden", 0) <= 8 and params.get("epochs", 0) <= 3 and params.get("iterations", 0) <= 30
        assert params.get("n_train", 0) <= 300 and params.get("n_test", 0) <= 60
        if entry["name"] == "eeg":  # a dataset sized by default to all of its file: its first trials only
            assert params["max_trials"] == 6
        if "T1" in params:
            assert 0 <= params["T1"] <= params["T2"] <= params["T3"] <= params.get("iterations", params.get("epochs"))
    path = tmp_path / f"{suite}.toml"
    path.write_text(to_toml(tiny))
    assert load_suite(path)["methods"] == tiny["methods"]  # the written file reads back as the same suite


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_a_full_run_without_a_gpu_stops_before_any_stage_with_the_fix(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pibench.benchmarks.device_run", "run", "--out", str(tmp_path / "out"),
                           "--work", str(tmp_path / "work")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "sees no CUDA device" in done.stderr and "--dry-run" in done.stderr
    assert not (tmp_path / "work").exists()


def test_a_stage_whose_data_are_not_staged_is_skipped_with_how_to_stage_them(tmp_path, monkeypatch):
    monkeypatch.setenv("PIBENCH_DATA", str(tmp_path / "empty"))
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=100, dry_run=True, jobs=1, python=sys.executable)
    result = run.run_stage(Stage("sets_eeg100", 60, "eeg"))
    assert result.status.startswith("skipped: its data file (eeg) is not staged")
    assert "device_run stage" in result.status


def test_the_script_installs_the_carried_wheels_first(tmp_path):
    """A pure wheel in the carried folder is installed onto the run's path before anything runs."""
    import zipfile
    carry = tmp_path / "carry"
    (carry / "wheels").mkdir(parents=True)
    info = "device_run_probe-0.1.dist-info"
    with zipfile.ZipFile(carry / "wheels" / "device_run_probe-0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr("device_run_probe.py", "VALUE = 7\n")
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: device-run-probe\nVersion: 0.1\n")
        wheel.writestr(f"{info}/WHEEL",
                       "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", f"device_run_probe.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    done = _script(["--dry-run", "--stages", "env", "--work", str(tmp_path / "work")], tmp_path / "out", carry,
                   timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    site = re.search(r"installed 1 carried wheel\(s\) into (\S+)", done.stdout)
    assert site and (Path(site.group(1)) / "device_run_probe.py").read_text() == "VALUE = 7\n"


def test_a_store_too_big_to_bring_back_comes_back_as_its_records(tmp_path, monkeypatch):
    import pibench.benchmarks.device_run as device_run
    run = DeviceRun(tmp_path / "out", tmp_path / "work", budget_s=100, dry_run=True, jobs=1, python=sys.executable)
    store = run.stores / "sets_eeg100"
    (store / "tasks").mkdir(parents=True)
    (store / "cache" / "k").mkdir(parents=True)
    (store / "tasks" / "a.json").write_text("{}")
    (store / "tasks" / "a.parquet").write_bytes(os.urandom(200_000))
    (store / "cache" / "k" / "chunk.npz").write_bytes(os.urandom(100_000))

    def names() -> set[str]:
        with tarfile.open(tmp_path / "out" / "stores-sets_eeg100.tar.gz") as tar:
            return {n for n in tar.getnames() if "." in n.rsplit("/", 1)[-1]}
    said = run._pack_store("sets_eeg100")
    assert names() == {"sets_eeg100/tasks/a.json", "sets_eeg100/tasks/a.parquet"} and "and predictions" in said
    monkeypatch.setattr(device_run, "MAX_OUT_FILE", 100_000)  # the predictions no longer fit
    said = run._pack_store("sets_eeg100")
    assert names() == {"sets_eeg100/tasks/a.json"} and "records only" in said


def test_preflight_names_a_package_pibench_cannot_import():
    """The carried wheels missing (here: arch hidden) stop the run before any stage, saying what to stage."""
    code = ("import sys; sys.modules['arch'] = None\n"
            "from pibench.benchmarks.device_run import preflight\n"
            "print('\\n'.join(preflight(dry_run=True)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "do not import here" in done.stdout and "arch" in done.stdout and "device_run stage" in done.stdout
