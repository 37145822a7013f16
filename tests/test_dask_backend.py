"""The dask backend for real: a distributed.LocalCluster (2 worker processes) runs a small suite,
and its records and predictions equal the loky run's."""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.store import ResultsStore
from pibench.cli import main
from tests.test_device import tiny_suite

distributed = pytest.importorskip("distributed")

#: What a record may differ in between two runs of the same tasks: when, where and how long (and so the checksum
#: of its fields).
RUN_FIELDS = {"started_at", "fit_seconds", "predict_seconds", "wall_seconds", "host", "fields_sha256"}


def stored(results_dir):
    return {r["task_id"]: {k: v for k, v in r.items() if k not in RUN_FIELDS}
            for r in ResultsStore(results_dir).records()}


def predictions(results_dir, task_id):
    return ResultsStore(results_dir).predictions(task_id)


def test_a_local_cluster_gives_the_loky_numbers(tmp_path, capsys):
    suite = tiny_suite(tmp_path)
    assert main(["run", "--suite", suite, "--results-dir", str(tmp_path / "loky"), "-j", "2", "--no-progress"]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        with distributed.get_task_stream(client) as stream:
            assert main(["run", "--suite", suite, "--results-dir", str(tmp_path / "dask"), "--backend", "dask",
                         "--scheduler", cluster.scheduler_address, "--no-progress"]) == 0
    assert len(stream.data) >= 6  # the jobs ran on the cluster's workers (joblib may batch several per job)
    printed = capsys.readouterr().out
    assert "ran 6, skipped 0" in printed
    loky, dask = stored(tmp_path / "loky"), stored(tmp_path / "dask")
    assert sorted(loky) == sorted(dask) and len(loky) == 6
    for task_id in loky:
        assert dask[task_id] == loky[task_id]  # metrics, predictions sha256, seeds, code version, device
        pd.testing.assert_frame_equal(predictions(tmp_path / "dask", task_id), predictions(tmp_path / "loky", task_id))
    columns = ["task_id", "coverage", "mean_length", "winkler", "status", "device"]
    summary = {name: pd.read_csv(tmp_path / name / "summary.csv")[columns] for name in ("loky", "dask")}
    pd.testing.assert_frame_equal(summary["dask"], summary["loky"])


def test_without_a_scheduler_dask_starts_its_own_local_cluster(tmp_path, capsys):
    assert main(["run", "--suite", tiny_suite(tmp_path), "--results-dir", str(tmp_path / "r"), "--backend", "dask",
                 "-j", "2", "--no-progress", "--methods", "aci"]) == 0
    assert "ran 4, skipped 0" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"], "could not reach the dask scheduler at tcp://127.0.0.1:9"),
    (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler goes with --backend dask"),
])
def test_backend_errors_are_one_line(argv, message, tmp_path, capsys):
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):  # nothing listens on port 9
        code = main(["run", "--suite", tiny_suite(tmp_path), "--results-dir", str(tmp_path / "r"), "--no-progress",
                     *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


SWEEP = '''
import json
import numpy as np
from pibench import Interval, IntervalMethod, register, run

Z = 1.0


def widen(sd):
    return Z * sd


@register
class Swept(IntervalMethod):
    name = "swept"

    def fit(self, data, calibration=None):
        self.sd_ = data.y.std(axis=0)
        return self

    def predict_interval(self, X):
        point = X[..., 0]
        return Interval(point - widen(self.sd_), point + widen(self.sd_), point)


if __name__ == "__main__":
    lengths = []
    for Z in (1.0, 2.0):
        r = run(methods=["swept"], quick=True, backend="dask", jobs=2, results_dir="r", progress=False)
        lengths.append([len(r.run_report.executed), r.records[0]["mean_length"]])
    print(json.dumps(lengths))
'''


def test_a_global_set_between_dask_runs_reaches_the_class(tmp_path):
    """The client unpickles the class it shipped in its own process: that must leave the user's class as it
    was (else its functions read a frozen copy of the globals, and the second run repeats the first's)."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "sweep.py").write_text(SWEEP)
    done = subprocess.run([sys.executable, "sweep.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    (ran_1, length_1), (ran_2, length_2) = json.loads(done.stdout.strip().splitlines()[-1])
    assert ran_1 == ran_2 == 1 and length_2 == pytest.approx(2 * length_1, rel=1e-12)


NAPPER = '''
import os
import time
from pibench import Interval, IntervalMethod, register


@register
class Napper(IntervalMethod):
    """A constant band around the last value, after a nap: tasks long enough to lose a cluster under."""

    name = "NAME"

    def fit(self, data, calibration=None):
        open(os.path.join(r"PIDS", str(os.getpid())), "a").close()  # where the fit ran
        time.sleep(2.0)
        self.sd_ = float(data.y.std())
        return self

    def predict_interval(self, X):
        point = X[..., 0]
        return Interval(point - self.sd_, point + self.sd_, point)
'''

NAPPING_SUITE = '''
name = "naps"
alpha = 0.1
seeds = [0, 1, 2, 3]
protocol = { kind = "offline" }
[[datasets]]
name = "ar"
params = { n_train = 200, n_test = 50, phi = [0.5] }
[[methods]]
name = "NAME"
'''


class ExternalCluster:
    """A real `dask scheduler` and `dask worker` (no nanny: a killed worker stays dead) as processes on a free
    port, as on a cluster; started, killed and restarted by the test."""

    def __init__(self, folder):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.folder = folder
        self.processes = []

    def _start(self, *argv, pythonpath=None):
        import os
        import subprocess
        import sys

        log = open(self.folder / f"dask-{len(self.processes)}.log", "w")
        env = {**os.environ, **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
        process = subprocess.Popen([sys.executable, "-m", "dask", *argv], stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=self.folder)  # not the checkout: `-m` puts the cwd first on the path
        self.processes.append(process)
        return process

    def scheduler(self):
        process = self._start("scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--dashboard-address",
                              ":0")
        wait_for(lambda: self.workers() >= 0, "the scheduler")
        return process

    def worker(self, pythonpath=None):
        """A worker; with ``pythonpath``, one that imports pibench from there (another checkout)."""
        before = self.workers()
        process = self._start("worker", self.address, "--nthreads", "1", "--no-nanny", pythonpath=pythonpath)
        wait_for(lambda: self.workers() > before, "a worker")
        return process

    def workers(self) -> int:
        with distributed.Client(self.address, timeout=2) as client:
            return len(client.scheduler_info()["workers"])

    def close(self):
        for process in self.processes:
            process.kill()
            process.wait()


def wait_for(ready, what, seconds=60.0):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{what} did not come up in {seconds:g} s")


def napping_run(tmp_path, address, name, seeds=4):
    """`pibench run` of the napping suite on ``address`` in a thread, its method and plugin module called
    ``name`` (one per test: a process imports a plugin module once): (thread, its result {"code": ...})."""
    import threading

    (tmp_path / "pids").mkdir(exist_ok=True)
    (tmp_path / f"{name}.py").write_text(NAPPER.replace("NAME", name).replace("PIDS", str(tmp_path / "pids")))
    (tmp_path / "naps.toml").write_text(NAPPING_SUITE.replace("NAME", name).replace("[0, 1, 2, 3]",
                                                                                      str(list(range(seeds)))))
    result = {}
    argv = ["run", "--suite", str(tmp_path / "naps.toml"), "--plugin", str(tmp_path / f"{name}.py"), "--results-dir",
            str(tmp_path / "r"), "--backend", "dask", "--scheduler", address, "--progress-lines"]
    thread = threading.Thread(target=lambda: result.update(code=main(argv)), daemon=True)
    thread.start()
    return thread, result


def test_a_cluster_left_without_workers_says_it_waits_and_goes_on_when_one_joins(tmp_path, capsys, monkeypatch):
    from pibench.benchmarks import backends

    monkeypatch.setattr(backends, "WORKERLESS_GRACE", 1.0)
    cluster = ExternalCluster(tmp_path)
    try:
        cluster.scheduler()
        workers = [cluster.worker(), cluster.worker()]
        thread, result = napping_run(tmp_path, cluster.address, "napper_waits")
        wait_for(lambda: any((tmp_path / "r" / "tasks").glob("*.json")), "the first record")
        for worker in workers:  # every worker dies mid-run (their tasks are lost with them and run again)
            worker.kill()
        said = []
        wait_for(lambda: said.append(capsys.readouterr().err) or "has had no worker for 1 s" in "".join(said),
                 "the waiting line")
        assert thread.is_alive()  # it waits, as an adaptive cluster would want
        cluster.worker()
        thread.join(timeout=120)
        said.append(capsys.readouterr().err)
    finally:
        cluster.close()
    err = "".join(said)
    assert result == {"code": 0}, err
    assert f"the dask scheduler {cluster.address} has had no worker for 1 s; the run waits" in err
    assert "dask worker(s) connected again; the run goes on" in err
    assert len(list((tmp_path / "r" / "tasks").glob("*.json"))) == 4 and "Traceback" not in err
    ran_on_workers(tmp_path)


def ran_on_workers(tmp_path) -> None:
    """The napper's fits ran in the cluster's workers, never in this process (joblib's own dask backend ran a
    one-thread cluster's jobs here)."""
    import os

    pids = {int(p.name) for p in (tmp_path / "pids").iterdir()}
    assert pids and os.getpid() not in pids


def test_a_one_worker_cluster_gets_every_job_at_once(tmp_path, capsys):
    """joblib ran a one-thread cluster's jobs in this process, and on a cluster kept only twice the workers it
    saw at the start in flight: workers that joined later (an adaptive cluster growing on its queue) never saw
    the rest. Now every job goes to the scheduler at once."""
    cluster = ExternalCluster(tmp_path)
    try:
        cluster.scheduler()
        cluster.worker()
        thread, result = napping_run(tmp_path, cluster.address, "napper_one", seeds=8)
        wait_for(lambda: any((tmp_path / "pids").iterdir()), "the first fit")
        with distributed.Client(cluster.address, timeout=5) as client:
            queued = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        thread.join(timeout=180)
    finally:
        cluster.close()
    assert result == {"code": 0}, capsys.readouterr().err
    assert queued >= 8  # the 8 tasks' jobs on the scheduler while the first runs (joblib's default: 4)
    ran_on_workers(tmp_path)


def test_a_lost_scheduler_stops_the_run_with_one_line_and_the_rerun_resumes(tmp_path, capsys):
    cluster = ExternalCluster(tmp_path)
    try:
        scheduler = cluster.scheduler()
        cluster.worker()
        cluster.worker()
        thread, result = napping_run(tmp_path, cluster.address, "napper_lost")
        wait_for(lambda: any((tmp_path / "r" / "tasks").glob("*.json")), "the first record")
        scheduler.kill()
        thread.join(timeout=120)
        err = capsys.readouterr().err
        assert result == {"code": 1}, err
        assert f"pibench: error: lost the dask scheduler at {cluster.address} mid-run; the tasks that finished " \
               "before are kept" in err and "Traceback" not in err
        cluster.scheduler()  # the same address again, a fresh worker: the same command resumes
        cluster.worker()
        thread, result = napping_run(tmp_path, cluster.address, "napper_lost")
        thread.join(timeout=120)
    finally:
        cluster.close()
    assert result == {"code": 0}
    import re

    ran, skipped = map(int, re.search(r"ran (\d+), skipped (\d+)", capsys.readouterr().out).groups())
    assert ran + skipped == 4 and skipped >= 1  # what finished before is kept (the old worker may finish its queue)
    assert len(list((tmp_path / "r" / "tasks").glob("*.json"))) == 4
    ran_on_workers(tmp_path)


def test_a_worker_on_other_code_is_refused_before_any_task(tmp_path, capsys):
    """A worker started from another checkout (one result-bearing file edited) was refused task by task, each
    a failed record; now the run stops before any task, naming the worker, with exit 2."""
    import shutil
    from pathlib import Path

    import pibench

    root = Path(pibench.__file__).resolve().parents[1]
    other = tmp_path / "other_checkout"
    for part in ("pibench", "methods", "benchmarks", "data_loaders", "reports"):
        shutil.copytree(root / part, other / part, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(other / "methods" / "aci.py", "a") as f:
        f.write("\nEDITED_ON_THAT_MACHINE = True\n")
    cluster = ExternalCluster(tmp_path)
    try:
        cluster.scheduler()
        cluster.worker()
        cluster.worker(pythonpath=other)
        thread, result = napping_run(tmp_path, cluster.address, "napper_other")
        thread.join(timeout=120)
    finally:
        cluster.close()
    err = capsys.readouterr().err
    assert result == {"code": 2}, err
    assert "1 of 2 dask worker(s) at" in err and "run other pibench code than this run" in err
    assert "Start every worker from this checkout" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # nothing ran, nothing was marked as asked for (requested.json), no lock


def test_a_cluster_in_another_folder_gets_absolute_paths_or_a_refusal(tmp_path, capsys, monkeypatch):
    """Workers run in their own folder: a relative --results-dir was written there (and the run then said the
    results dir 'vanished'); it is now the client's folder's, made absolute. A relative data file is refused
    before any work, naming its absolute path."""
    (tmp_path / "workers").mkdir()
    (tmp_path / "client").mkdir()
    cluster = ExternalCluster(tmp_path / "workers")
    monkeypatch.chdir(tmp_path / "client")
    (tmp_path / "pids").mkdir()
    (tmp_path / "client" / "napper_where.py").write_text(
        NAPPER.replace("NAME", "napper_where").replace("PIDS", str(tmp_path / "pids")))
    (tmp_path / "client" / "naps.toml").write_text(NAPPING_SUITE.replace("NAME", "napper_where").replace(
        "[0, 1, 2, 3]", "[0]"))
    pd.DataFrame({"y": np.sin(np.arange(300.0))}).to_csv(tmp_path / "client" / "s.csv", index=False)
    try:
        cluster.scheduler()
        cluster.worker()
        common = ["--plugin", "napper_where.py", "--backend", "dask", "--scheduler", cluster.address, "--no-progress"]
        assert main(["run", "--suite", "naps.toml", "--results-dir", "r", *common]) == 0, capsys.readouterr().err
        assert len(list((tmp_path / "client" / "r" / "tasks").glob("*.json"))) == 1
        assert not (tmp_path / "workers" / "r").exists()
        capsys.readouterr()
        code = main(["run", "--datasets", "csv:s.csv:y", "--methods", "napper_where", "--results-dir", "r2", *common])
    finally:
        cluster.close()
    err = capsys.readouterr().err
    assert code == 2 and "with --scheduler the workers read files from their own folders" in err
    assert f"path = 's.csv' -> '{tmp_path / 'client' / 's.csv'}'" in err and not (tmp_path / "client" / "r2").exists()
