"""The dask backend for real: a distributed.LocalCluster (2 worker processes) runs a small suite,
and its records and predictions equal the loky run's."""

from __future__ import annotations

import dask
import pandas as pd
import pytest

from pibench.benchmarks.store import ResultsStore
from pibench.cli import main
from tests.test_device import tiny_suite

distributed = pytest.importorskip("distributed")

#: What a record may differ in between two runs of the same tasks: when, where and how long.
RUN_FIELDS = {"started_at", "fit_seconds", "predict_seconds", "wall_seconds", "host"}


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
