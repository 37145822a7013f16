"""Results that cannot be stale: tasks addressed by their data, records checked before they count."""

import textwrap

import numpy as np
import pandas as pd
import pytest

from pibench.benchmarks.store import ResultsStore
from pibench.cli import main
from pibench.reports.summary import RUN_COLUMNS

SUITE = """
name = "csv_trust"
alpha = 0.1
seeds = [0]
protocol = {{ kind = "online", window = 200, retrain_every = 50 }}

[[datasets]]
name = "csv"
label = "load"
params = {{ path = "{path}", target = "load" }}

[[methods]]
name = "aci"
grid = {{ gamma = [0.0, 0.01] }}
params = {{ hidden = 4, epochs = 3, lr = 0.05, batch_size = 20 }}

[[methods]]
name = "autoreg"
params = {{ lags = 2 }}
"""


def write_series(path, shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.sin(np.arange(500) / 7) + rng.normal(size=500) + shift
    pd.DataFrame({"t": np.arange(500), "load": y}).to_csv(path, index=False)


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "load.csv"
    write_series(data)
    suite = tmp_path / "suite.toml"
    suite.write_text(textwrap.dedent(SUITE.format(path=data)))
    return data, suite


def run(suite, results, capsys):
    code = main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress"])
    out = capsys.readouterr().out
    return code, out


def stable(results_dir):
    frame = pd.read_csv(results_dir / "summary.csv").drop(columns=RUN_COLUMNS + ["task_id"])
    return frame.sort_values(["method", "setting"]).reset_index(drop=True)


def test_changed_csv_reruns_every_task_and_matches_a_fresh_run(setup, tmp_path, capsys):
    data, suite = setup
    results = tmp_path / "results"
    assert run(suite, results, capsys)[0] == 0
    before = stable(results)
    assert "ran 0" in run(suite, results, capsys)[1]  # unchanged data: nothing to do

    write_series(data, shift=5.0, seed=1)  # regenerate the file
    code, out = run(suite, results, capsys)
    assert code == 0 and "ran 3, skipped 0" in out
    after = stable(results)
    code, _ = run(suite, tmp_path / "fresh", capsys)
    assert code == 0
    pd.testing.assert_frame_equal(after, stable(tmp_path / "fresh"))
    assert not after["coverage"].equals(before["coverage"])  # the new numbers, not the cached ones
    assert (after["data_fingerprint"] != before["data_fingerprint"]).all()

    # the old records stay on disk but the report shows only the new ones, and says why
    assert main(["report", "--results-dir", str(results)]) == 0
    report = capsys.readouterr().out
    assert report.count("| csv_trust | load |") == 3
    assert report.count("has changed since it ran") == 3


def test_cache_keys_follow_the_data(setup, tmp_path, capsys):
    """Two different files under one label never share base fits."""
    data, suite = setup
    results = tmp_path / "results"
    run(suite, results, capsys)
    write_series(data, shift=5.0, seed=1)
    run(suite, results, capsys)
    keys = {r["shared_base_fits"] for r in ResultsStore(results).records() if "shared_base_fits" in r}
    assert len(keys) == 2


@pytest.fixture
def finished(setup, tmp_path, capsys):
    _, suite = setup
    results = tmp_path / "results"
    assert run(suite, results, capsys)[0] == 0
    store = ResultsStore(results)
    records = sorted(store.records(), key=lambda r: (r["method"], r["setting"]))
    return suite, results, store, records


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_a_lost_or_truncated_parquet_reruns_exactly_that_task(finished, capsys, damage):
    suite, results, store, records = finished
    before = stable(results)
    victim = records[1]["task_id"]
    path = store.predictions_path(victim)
    if damage == "delete":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:100])
    assert not store.is_done(victim)
    assert all(store.is_done(r["task_id"]) for r in records if r["task_id"] != victim)
    code, out = run(suite, results, capsys)
    assert code == 0 and "ran 1, skipped 2" in out
    assert store.is_done(victim)
    pd.testing.assert_frame_equal(stable(results), before)


@pytest.mark.parametrize("content, reason", [
    ('{"status": "ok"}', "incomplete record"),
    ("[1, 2, 3]", "the record is a JSON list, not an object"),
    ('{"task_id": "x", "status": "ok", "coverage"', "unreadable record"),
])
def test_a_stub_list_or_torn_record_is_recomputed_and_reported(finished, capsys, content, reason):
    suite, results, store, records = finished
    victim = records[0]["task_id"]
    store.record_path(victim).write_text(content)
    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    assert f"{victim}.json: {reason}" in out  # the report says what it left out and why
    assert out.count("| csv_trust | load |") == 2
    code, out = run(suite, results, capsys)
    assert code == 0 and "ran 1, skipped 2" in out
    assert store.is_done(victim)


def test_a_record_of_another_task_does_not_count(finished):
    _, _, store, records = finished
    a, b = records[0]["task_id"], records[1]["task_id"]
    store.record_path(a).write_text(store.record_path(b).read_text())
    assert not store.is_done(a) and store.is_done(b)


def test_report_itemises_failures_with_their_first_line(finished, capsys):
    _, results, store, records = finished
    failed = dict(records[2], status="error", error="ValueError: something broke\nmore detail")
    store.write(failed["task_id"], {k: v for k, v in failed.items() if k != "predictions_sha256"}, None)
    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    assert "### Failed tasks (1)" in out
    assert f"(task {failed['task_id']}): ValueError: something broke" in out and "more detail" not in out


def test_results_of_other_code_are_flagged_and_superseded(finished, capsys, monkeypatch):
    suite, results, store, records = finished
    from pibench.benchmarks import preflight, provenance, runner
    # what editing the source would do: code_version() is a hash of it
    for module in (preflight, runner, provenance):
        monkeypatch.setattr(module, "code_version", lambda: "0.1.0+src.newer")

    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    stored = records[0]["identity"]["code"]
    assert f"_Rows of other code: suite csv_trust: every row ran other pibench code ({stored}) than this one " \
           "(0.1.0+src.newer); run it again to refresh: `pibench run --suite <the file of suite 'csv_trust'> " \
           f"--results-dir {results}`._" in out
    code, out = run(suite, results, capsys)
    assert code == 0 and "ran 3, skipped 0" in out  # new code, new tasks
    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    older = f"(pibench code {records[0]['identity']['code']}, the table's 0.1.0+src.newer)"
    assert out.count("| csv_trust | load |") == 3 and out.count(older) == 3
    assert "other pibench code" not in out
    assert len(store.records()) == 6  # nothing was deleted


def test_a_row_never_mixes_configurations(setup, tmp_path, capsys):
    """Rerunning one seed of an entry with changed parameters replaces the row; it is not averaged in."""
    _, suite = setup
    results = tmp_path / "results"
    two_seeds = suite.read_text().replace("seeds = [0]", "seeds = [0, 1]")
    suite.write_text(two_seeds)
    assert run(suite, results, capsys)[0] == 0  # lags = 2, seeds 0 and 1
    suite.write_text(two_seeds.replace("params = { lags = 2 }", 'params = { lags = 3 }'))
    assert main(["run", "--suite", str(suite), "--results-dir", str(results), "--methods", "autoreg",
                 "--seeds", "0", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| csv_trust | load | autoreg |"))
    assert row.split("|")[5].strip() == "1"  # one seed: the new configuration's, not seed 1 of the old
    newest = max((r for r in ResultsStore(results).records() if r["method"] == "autoreg"),
                 key=lambda r: r["started_at"])
    assert f"{100 * newest['coverage']:.2f} [" in row  # the coverage with its CI
    assert out.count("(another configuration: method.params.lags 2, the table's 3)") == 2
