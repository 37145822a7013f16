"""Why a record is left out of the tables (reports/selection.py), said so that a user can act on it."""

from pibench.reports.selection import select_current


def record(task_id: str, data: str, started: str) -> dict:
    return {"task_id": task_id, "suite": "s", "dataset": "covid", "method": "cfrnn", "setting": "default",
            "alpha": 0.1, "seed": 0, "status": "ok", "started_at": started, "config": {"seed": 0, "epochs": 5},
            "identity": {"code": "v1", "data": data}}


def test_a_record_of_the_same_seed_on_other_data_is_left_out_saying_the_data_differ():
    """Two runs of one entry from two data directories (an edited copy, the published file): the newer is shown,
    and the older's reason names the data, not only 'same configuration, code and seed'."""
    chosen, left_out = select_current([record("old", "fp-a", "2026-01-01"), record("new", "fp-b", "2026-01-02")],
                                      "v1")
    assert [r["task_id"] for r in chosen] == ["new"]
    (out,) = left_out
    assert out.task_id == "old" and "superseded by task new" in out.reason and "its data differ" in out.reason
    _, same_data = select_current([record("old", "fp-a", "2026-01-01"), record("new", "fp-a", "2026-01-02")], "v1")
    assert same_data[0].reason == "superseded by task new (same configuration, code and seed)"


def test_the_full_suite_after_its_quick_variant_shows_the_full_suite_again(tmp_path):
    """Run, --quick, run again into one folder: the third run finds every task done, and its table (and a later
    report) show the full suite's records, not the newer quick ones (they did before)."""
    import pandas as pd

    from pibench import load_results, run

    (tmp_path / "s.toml").write_text("""
name = "s"
protocol = { kind = "online", window = 100, retrain_every = 50 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 200 }
quick = { params = { n_test = 120 } }
[[methods]]
name = "aci"
params = { base = "linear" }
""")
    folder = tmp_path / "r"
    sizes = []
    for quick in (False, True, False):
        results = run(tmp_path / "s.toml", quick=quick, results_dir=folder, progress=False)
        sizes.append((results.run_report.skipped, int(pd.read_csv(folder / "summary.csv")["n_test"].iloc[0]),
                      int(results.summary["n_test"].iloc[0])))
    assert sizes == [(0, 200, 200), (0, 120, 120), (1, 200, 200)]
    report = load_results(folder)
    assert int(report.summary["n_test"].iloc[0]) == 200
    assert any("asked for last" in line for line in report.left_out)
    (folder / "requested.json").write_text("[not a mapping")  # unreadable: the newest record, as before
    assert int(load_results(folder).summary["n_test"].iloc[0]) == 120


def test_a_superseded_configuration_names_what_differs():
    old = {**record("old", "fp-a", "2026-01-01"), "config": {"seed": 0, "method": {"params": {"epochs": 20}}}}
    new = {**record("new", "fp-a", "2026-01-02"), "config": {"seed": 0, "method": {"params": {"epochs": 25}}}}
    chosen, (out,) = select_current([old, new], "v1")
    assert [r["task_id"] for r in chosen] == ["new"]
    assert out.reason.endswith("(another configuration: method.params.epochs 20, the table's 25)")


def test_a_run_after_a_parameter_edit_names_what_changed(tmp_path):
    """Editing one parameter reran its rows with only 'ran 1, skipped 1' to show for it."""
    from pibench import run

    suite = tmp_path / "s.toml"
    text = """
name = "s"
protocol = { kind = "online", window = 100, retrain_every = 50 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 120 }
[[methods]]
name = "autoreg"
params = { lags = LAGS }
[[methods]]
name = "oracle"
"""
    suite.write_text(text.replace("LAGS", "1"))
    run(suite, results_dir=tmp_path / "r", progress=False)
    suite.write_text(text.replace("LAGS", "2"))
    report = run(suite, results_dir=tmp_path / "r", progress=False).run_report
    assert report.skipped == 1 and len(report.executed) == 1
    (line,) = report.redone
    assert line.startswith("ar / autoreg default / seed 0 / alpha 0.1 (task ")
    assert line.endswith("its configuration changed since the last run of this row: method.params.lags 1, now 2")


def test_a_seed_shows_the_data_a_run_asked_for_last_not_the_record_started_last():
    """One entry run on copy a, on copy b, then on a again (found done): both files still read as they were, so
    only the runs' requests tell which data the table is about; a run on a whose task failed shows that failure,
    not b's finished numbers."""
    a, b = record("a", "fp-a", "2026-01-01T10:00"), record("b", "fp-b", "2026-01-01T11:00")
    requested = {"a": "2026-01-01T12:00", "b": "2026-01-01T11:00"}
    chosen, (out,) = select_current([a, b], "v1", requested=requested)
    assert [r["task_id"] for r in chosen] == ["a"]
    assert out.task_id == "b" and "its data differ" in out.reason
    assert "that task's was asked for or run last" in out.reason
    failed = {**a, "status": "error"}
    assert [r["task_id"] for r in select_current([failed, b], "v1", requested=requested)[0]] == ["a"]
    retried = {**record("a2", "fp-a", "2026-01-01T09:00")}  # an older finished record on the same data as a
    chosen, _ = select_current([failed, b, retried], "v1", requested=requested)
    assert [r["task_id"] for r in chosen] == ["a2"]  # on the data asked for, the finished record first


def test_runs_on_two_copies_of_a_file_show_the_copy_the_last_run_used(tmp_path, monkeypatch):
    """The same CSV entry run from two folders whose files differ (y and 10 y), then from the first again: the
    third run finds its task done and its table shows the first folder's lengths, not the second's."""
    import numpy as np
    import pandas as pd

    from pibench import load_results, run

    y = np.cumsum(np.random.default_rng(0).standard_normal(400)) * 0.1 + np.sin(np.arange(400))
    for folder, scale in (("A", 1.0), ("B", 10.0)):
        (tmp_path / folder).mkdir()
        pd.DataFrame({"y": scale * y}).to_csv(tmp_path / folder / "data.csv", index=False)
    lengths = {}
    for folder in ("A", "B", "A"):
        monkeypatch.chdir(tmp_path / folder)
        results = run(datasets=["csv:data.csv:y"], methods=["autoreg"], results_dir=tmp_path / "r", progress=False)
        lengths.setdefault(folder, []).append(float(results.summary["mean_length"].iloc[0]))
    assert lengths["B"][0] > 5 * lengths["A"][0]
    assert lengths["A"][1] == lengths["A"][0]  # was B's
    assert float(load_results(tmp_path / "r").summary["mean_length"].iloc[0]) == lengths["A"][0]


def test_a_row_never_mixes_seeds_run_on_two_different_files(tmp_path, monkeypatch):
    """Seeds 0 and 1 from folder A, then seed 0 alone from folder B (10 times A's values): the row shows B's seed
    0 alone and says why seed 1 is left out; before, it averaged B's seed 0 with A's seed 1."""
    import numpy as np
    import pandas as pd

    from pibench import load_results, run

    y = np.cumsum(np.random.default_rng(0).standard_normal(400)) * 0.1 + np.sin(np.arange(400))
    for folder, scale in (("A", 1.0), ("B", 10.0)):
        (tmp_path / folder).mkdir()
        pd.DataFrame({"y": scale * y}).to_csv(tmp_path / folder / "data.csv", index=False)
    args = dict(datasets=["csv:data.csv:y"], methods=["enbpi"], results_dir=tmp_path / "r", progress=False)
    monkeypatch.chdir(tmp_path / "A")
    a = run(seeds=[0, 1], **args).summary
    monkeypatch.chdir(tmp_path / "B")
    b = run(seeds=[0], **args).summary
    assert sorted(a["seed"]) == [0, 1] and list(b["seed"]) == [0]
    assert float(b["mean_length"].iloc[0]) > 5 * float(a["mean_length"].max())
    shown = load_results(tmp_path / "r")
    assert list(shown.summary["seed"]) == [0]  # was [0, 1]: B's seed 0 beside A's seed 1
    assert float(shown.summary["mean_length"].iloc[0]) == float(b["mean_length"].iloc[0])
    assert any("seed 1 ran only on other data" in line for line in shown.left_out)


def test_records_of_equal_times_are_chosen_whatever_their_order():
    """Old records without times, on two copies of a file with other content: which copy a row shows was the
    first record read; now the same whatever the order the store lists them in."""
    def on(task_id: str, seed: int, sha: str) -> dict:
        return {**record(task_id, f"fp-{sha}", ""), "seed": seed, "started_at": None,
                "config": {"seed": seed, "epochs": 5}, "data_files": {f"/copy-{sha}/y.csv": sha}}

    records = [on("a0", 0, "a"), on("b1", 1, "b")]
    shown = [[r["task_id"] for r in select_current(order, "v1")[0]] for order in (records, records[::-1])]
    assert shown[0] == shown[1]


def _record(suite, dataset, method="m", plugin=None, code="v1", alpha=0.1, started="2026-01-01", setting="default"):
    return {"config": {"suite": suite}, "dataset": dataset, "method": method, "setting": setting, "alpha": alpha,
            "identity": {"code": code, "plugin": plugin}, "started_at": started, "task_id": f"{suite}{dataset}{alpha}"}


def test_the_note_of_rows_of_other_code_by_hand():
    """mixed_code_notes: per (suite, method), the rows of the older plugin code and the command that runs them
    again; the code loaded now, where known, is the current one, and a note says when no row ran it; alpha is
    named where the rows differ by it; labels are quoted for a shell; long lists are cut."""
    from pibench.reports.selection import mixed_code_notes

    # (a module no folder holds, as the notes look for a plugin's files on disk)
    old, new, newer = ({"pibench_no_such_module_p": v} for v in ("1", "2", "3"))
    records = [_record("s", "a", plugin=old), _record("s", "b", plugin=new, started="2026-02-01"),
               _record("t", "a", plugin=old)]  # suite t alone: one version, no note unless other code is loaded
    (line,) = mixed_code_notes(records, "v1")
    assert line == ("m (s): the rows on a (default) ran other code than its newest (plugin source changed: "
                    "pibench_no_such_module_p.py); to compare like with like, run them again with that code "
                    "loaded: `pibench run --plugin <the file that defines 'm'> --suite <the file of suite 's'> "
                    "--methods m --datasets a --alpha 0.1`")
    line, alone = mixed_code_notes(records, "v1", plugins={"m": newer}, results_dir="r")
    assert alone.startswith("m (t): its rows ran other code (plugin source changed: pibench_no_such_module_p.py) "
                            "than the one loaded now; run the rows on a (default) again with it loaded: ")
    assert line.startswith("m (s): its rows ran 2 versions of its code, none the one loaded now; run the rows on a "
                           "(default), b (default) again with it loaded: `pibench run --plugin <the file that defines "
                           "'m'> --suite <the file of suite 's'> --methods m --datasets a b --alpha 0.1 --results-dir "
                           "r`")
    levels = [_record("s", "my series", plugin=old, alpha=0.2), _record("s", "my series", plugin=new, started="2027")]
    (line,) = mixed_code_notes(levels, "v1")
    assert "the rows on my series (default, alpha 0.2) ran" in line and "--datasets 'my series' --alpha 0.2`" in line
    many = [_record("default", f"d{i}", code=None if i == 0 else "v0") for i in range(9)] + [_record("default", "z")]
    (line,) = mixed_code_notes(many, "v1", builtin=["default"])
    assert line == ("suite default: the rows on d0, d1, d2, d3, d4, d5 and 3 more ran other pibench code (unknown, "
                    "v0) than this one (v1); run them again to refresh: `pibench run --suite default --methods m "
                    "--datasets d0 d1 d2 d3 d4 d5 d6 d7 d8 --alpha 0.1`")


def test_the_rerun_command_says_quick_for_quick_rows_and_gives_python_for_a_notebooks_method():
    """The command dropped --quick for rows of the --quick variant (following it ran the full configuration beside
    the quick rows), and gave `pibench run` for a method defined in the running notebook, which it cannot load."""
    from pibench.api import _quick_only_configs
    from pibench.benchmarks.suite import build_tasks, load_suite
    from pibench.reports.selection import rerun_command

    quick_only = _quick_only_configs({"default", "not a built-in suite"})
    quick, full = (next(t.config for t in build_tasks(load_suite("default", quick=q), methods=["aci"])
                        if t.config["dataset"]["label"] == "ar1") for q in (True, False))

    def row(config, plugin=None):
        return {"config": config, "method": "aci", "dataset": "ar1", "alpha": 0.1, "identity": {"plugin": plugin}}

    assert rerun_command("default", [row(quick)], "r", ["default"], quick_only) == (
        "pibench run --suite default --methods aci --datasets ar1 --alpha 0.1 --quick --results-dir r")
    assert "--quick" not in rerun_command("default", [row(full)], "r", ["default"], quick_only)
    assert "--quick" not in rerun_command("default", [row(quick), row(full)], "r", ["default"], quick_only)
    assert rerun_command("default", [row(quick)], "r", ["default"], quick_only, whole=True) == (
        "pibench run --suite default --quick --results-dir r")  # every row of the quick variant: the whole of it
    mine = {**quick, "method": {"name": "band", "params": {}}}  # a method the suite does not list, on quick data
    command = rerun_command("default", [{**row(mine, {"__main__:Band": "code:1"}), "method": "band"}], "r",
                            ["default"], quick_only)
    assert command == "pibench.run(suite='default', methods=['band'], datasets=['ar1'], alpha=[0.1], quick=True, " \
                      "results_dir='r')"


def test_a_file_edited_outside_the_data_a_task_reads_keeps_its_results(tmp_path, monkeypatch):
    """A column no task reads edited (or the file saved again with other bytes): the run found the task done (its
    id is of the data as loaded), while every table left it out as run on a changed file, and the rerun the report
    advised found it done again, for ever. The run now writes the files as it loaded them into those records and
    says so; an edit of the target still runs the task again; the same data in another folder (csv:f.csv:y run
    from there) is the file the record then names; a target edited after the run loaded the file is never taken
    in (review: its checksum was read again at the lock)."""
    import numpy as np
    import pandas as pd

    import pibench.benchmarks.runner as runner
    from pibench import load_results, run

    frame = pd.DataFrame({"y": np.random.default_rng(0).normal(size=400), "note": 0.0})
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "a")
    frame.to_csv("f.csv", index=False)

    def again():
        return run(methods=["autoreg"], datasets=["csv:f.csv:y"], results_dir=tmp_path / "r", progress=False)

    first = again()
    frame.assign(note=1.0).to_csv("f.csv", index=False)
    assert "has changed since it ran" in " ".join(load_results(tmp_path / "r").left_out)  # (before a run says why)
    second = again()
    assert second.run_report.skipped == 1 and not second.run_report.executed
    assert any(note.startswith(f"{tmp_path / 'a' / 'f.csv'} holds the data the stored tasks of 'csv:f.csv:y' were "
                               "computed on") for note in second.run_report.notes)
    shown = load_results(tmp_path / "r")
    assert shown.summary[["task_id", "coverage"]].equals(first.summary[["task_id", "coverage"]]) and not shown.left_out
    frame.to_csv(tmp_path / "b" / "f.csv", index=False)  # the same data in another folder, A's copy then edited
    frame.assign(y=frame["y"] * 2).to_csv("f.csv", index=False)
    monkeypatch.chdir(tmp_path / "b")
    copied = again()
    assert not copied.run_report.executed and list(copied.summary["task_id"]) == list(first.summary["task_id"])
    assert list(copied.records[0]["data_files"]) == [str(tmp_path / "b" / "f.csv")]  # (A's edit never taken in)
    real = runner.prepare_tasks

    def then_edited(*args, **kwargs):  # the target rewritten after the run loaded the file, before the lock
        prepared = real(*args, **kwargs)
        frame.assign(y=frame["y"] * 3).to_csv("f.csv", index=False)
        return prepared

    monkeypatch.setattr(runner, "prepare_tasks", then_edited)
    raced = again()
    assert not raced.run_report.executed and not any("results stand" in n for n in raced.run_report.notes)
    assert raced.records == [] and "has changed since it ran" in " ".join(raced.left_out)  # not shown as the new file's
    monkeypatch.setattr(runner, "prepare_tasks", real)
    third = again()  # the new target: run again
    assert len(third.run_report.executed) == 1 and not any("results stand" in n for n in third.run_report.notes)
