"""The command line as a user types it: the default suite, list, report, errors."""

from pathlib import Path

import pandas as pd
import pytest

from pibench.cli import main


def test_default_run_meets_the_acceptance_check(tmp_path, capsys):
    """`pibench run` (no download): ACI gamma = 0 covers 87-93% of >= 2,000 AR(1) test points."""
    assert main(["run", "--results-dir", str(tmp_path), "-j", "2", "--no-progress"]) == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    for column in ["suite", "dataset", "method", "setting", "seed", "coverage", "mean_length",
                   "median_length", "n_test", "status"]:
        assert column in summary
    assert set(summary["method"]) >= {"aci", "autoreg"}
    assert (summary["status"] == "ok").all()
    split = summary[(summary.method == "aci") & (summary.setting == "gamma=0")]
    assert (split["n_test"] >= 2000).all()
    assert split["coverage"].between(0.87, 0.93).all()
    out = capsys.readouterr().out
    assert "| default | ar1 | aci | gamma=0 |" in out
    assert f"suite 'default': {len(summary)} task(s), {len(summary)} to run -> {tmp_path}" in out

    # a second run finds every task finished
    assert main(["run", "--results-dir", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"{len(summary)} task(s), 0 to run" in out and "ran 0, skipped" in out

    assert main(["report", "--results-dir", str(tmp_path)]) == 0
    assert (tmp_path / "summary.md").read_text().startswith("| suite | dataset | method")

    # a selection: its rows only, compared among themselves; the folder's summary files keep every row
    full = (tmp_path / "summary.md").read_text()
    capsys.readouterr()
    assert main(["report", "--results-dir", str(tmp_path), "--methods", "aci", "autoreg"]) == 0
    out = capsys.readouterr()
    rows = [line for line in out.out.splitlines() if line.startswith("| default | ar1 |")]
    assert rows and {line.split("|")[3].strip() for line in rows} == {"aci", "autoreg"}
    assert "left as they are" in out.err and (tmp_path / "summary.md").read_text() == full
    assert main(["report", "--results-dir", str(tmp_path), "--methods", "acii"]) == 2
    assert "Did you mean 'aci'?" in capsys.readouterr().err
    assert main(["report", "--results-dir", str(tmp_path), "--methods", "aci", "--html"]) == 2
    assert main(["plot", "--results-dir", str(tmp_path), "--datasets", "ar1"]) == 0


def test_progress_lines_name_each_finished_task_for_a_log(tmp_path, capsys):
    """--progress-lines (what the GPU session's log needs): one line per finished task, its seconds."""
    rng = __import__("numpy").random.default_rng(1)
    pd.DataFrame({"y": rng.normal(size=400)}).to_csv(tmp_path / "s.csv", index=False)
    args = ["run", "--datasets", f"csv:{tmp_path / 's.csv'}:y", "--methods", "autoreg", "aci", "--quick",
            "--results-dir", str(tmp_path / "r"), "--progress-lines"]
    assert main(args) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    summary = pd.read_csv(tmp_path / "r" / "summary.csv")
    tasks = [line for line in lines if "/ base fits" not in line]  # the shared base fits' job says so too
    assert len(tasks) == len(summary) >= 2 and len(lines) - len(tasks) <= 1
    assert [int(line[1:line.index("/")]) for line in lines] == list(range(1, len(lines) + 1))
    for line in tasks:
        assert f"/{len(lines)}] csv:" in line and "/ seed 0: ok; fit " in line and " s, wall " in line, line
    assert any("/ autoreg /" in line for line in lines) and any("/ aci /" in line for line in lines)
    assert main(args) == 0  # nothing left to run: no line
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]


def test_a_task_line_says_when_its_cell_failed():
    from pibench.benchmarks.runner import _finished_line

    record = {"dataset": "eeg", "method": "cfrnn", "setting": "LSTM-100", "seed": 2, "status": "ok",
              "fit_seconds": 30.0, "predict_seconds": 1.0, "wall_seconds": 31.5}
    assert _finished_line({**record, "cell": {"members": 5, "train_seconds": 40.0}}, 3, 20) == (
        "[3/20] eeg / cfrnn / LSTM-100 / seed 2: ok; fit 30.0 s, predict 1.0 s, wall 31.5 s; trained in a cell of 5")
    failed = _finished_line({**record, "cell": {"members": 5, "error": "ValueError: padded sequences"}}, 3, 20)
    assert failed.endswith("; its cell of 5 failed, trained alone (ValueError: padded sequences)")
    phases = _finished_line({**record, "method": "pa_lstm", "train_seconds": 21.0, "intervals_seconds": 8.5}, 4, 20)
    assert phases == "[4/20] eeg / pa_lstm / LSTM-100 / seed 2: ok; fit 30.0 s, train 21.0 s, intervals 8.5 s, " \
                     "predict 1.0 s, wall 31.5 s"
    assert _finished_line({**record, "alpha": 0.05}, 5, 20, levels=True).startswith(
        "[5/20] eeg / cfrnn / LSTM-100 / seed 2 / alpha 0.05: ok;")  # a run at several levels tells them apart


def test_csv_dataset_from_the_command_line(tmp_path):
    rng = __import__("numpy").random.default_rng(0)
    y = rng.normal(size=400).cumsum() * 0.1 + rng.normal(size=400)
    pd.DataFrame({"day": pd.date_range("2020-01-01", periods=400), "load": y}).to_csv(tmp_path / "s.csv", index=False)
    code = main(["run", "--datasets", f"csv:{tmp_path / 's.csv'}:load", "--methods", "autoreg", "--quick",
                 "--results-dir", str(tmp_path / "r"), "--no-progress"])
    assert code == 0
    summary = pd.read_csv(tmp_path / "r" / "summary.csv")
    # the last round(0.25 * 400) = 100 rows of the file are the test span
    assert summary["dataset"].tolist() == [f"csv:{tmp_path / 's.csv'}:load"]
    assert summary["n_test"].tolist() == [100]


def test_list_shows_methods_datasets_and_suites(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ["aci", "autoreg", "ar", "nlar", "expar", "fesp", "csv", "default"]:
        assert name in out


@pytest.mark.parametrize("argv, message", [
    (["run", "--methods", "nope"], "unknown method 'nope'"),
    (["run", "--datasets", "nope"], "unknown dataset 'nope'"),
    (["run", "--suite", "nope"], "unknown suite 'nope'"),
    (["run", "--datasets", "csv:only-a-path"], "csv:PATH:TARGET"),
    (["run", "--methods", "acii"], "unknown method 'acii'. Did you mean 'aci'?"),
    (["run", "--datasets", "arr"], "unknown dataset 'arr'. Did you mean 'ar'?"),
    (["run", "--methods", "naive_band"], "A method of your own is known once the file that registers it is "
                                         "imported: pibench run --plugin FILE.py"),
    (["run", "--suite", "defualt"], "nor an existing TOML file. Did you mean 'default'?"),
])
def test_user_errors_are_one_clear_line(argv, message, tmp_path, capsys):
    assert main(argv + ["--results-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_fesp_file_says_how_to_get_it_before_any_work(tmp_path, capsys):
    code = main(["run", "--suite", "fesp", "--quick", "--data-dir", str(tmp_path / "empty"),
                 "--results-dir", str(tmp_path / "r"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dataset 'fesp'" in err and "pibench data fetch fesp" in err
    assert not (tmp_path / "r").exists()  # nothing written, no failed record left behind


PLUGIN_FILE = '''
import numpy as np
from pibench import Interval, IntervalMethod, register
from cli_width import widen


@register
class LastPlusMinus(IntervalMethod):
    """Last value +/- a width from the helper beside this file."""
    name = "cli_last_pm"

    def fit(self, data, calibration=None):
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        point = self.last_[None, :]
        return Interval(point - widen(), point + widen(), point)

    def update(self, y):
        self.last_ = y[-1]
'''


def test_the_command_that_reruns_rows_of_an_older_plugin_loads_the_plugin_and_runs_as_printed(tmp_path):
    """After an edit and a rerun on one dataset, the run prints the command that brings the other rows level: it
    named --methods cli_last_pm without --plugin, so pasted as printed it failed with "unknown method"."""
    import re
    import subprocess
    import sys

    (tmp_path / "cli_plugin.py").write_text(PLUGIN_FILE)
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 1.0\n")
    run = [sys.executable, "-m", "pibench", "run", "--plugin", "cli_plugin.py", "--methods", "cli_last_pm",
           "--quick", "--no-progress", "--results-dir", "r", "--datasets"]

    def shell(*args: str) -> str:
        done = subprocess.run([*args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    shell(*run, "ar", "nlar")
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 2.0\n")
    printed = re.search(r"run them again with that code loaded: `(pibench run [^`]*)`", shell(*run, "nlar"))
    assert printed, "no command printed"
    command = printed.group(1)
    assert command.startswith("pibench run --plugin cli_plugin.py --suite default --methods cli_last_pm --datasets "
                              "ar1 ") and command.endswith(" --quick --results-dir r"), command
    out = shell(sys.executable, "-m", *command.split())  # python -m pibench run ..., as printed
    assert "ran 1, skipped 0" in out and "ran other code" not in out


def test_a_report_says_when_a_plugins_file_changed_since_its_rows_ran(tmp_path):
    """A plugin's helper edited after the run, nothing run again: `pibench report` (a process that has not loaded
    the plugin, whose path does not hold the working folder) and `load_results` with the edited plugin imported
    showed the old code's numbers with no note."""
    import shutil
    import subprocess
    import sys

    (tmp_path / "cli_plugin.py").write_text(PLUGIN_FILE)
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 1.0\n")

    def shell(*args: str) -> str:
        done = subprocess.run([*args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    shell(sys.executable, "-m", "pibench", "run", "--plugin", "cli_plugin.py", "--methods", "cli_last_pm", "--quick",
          "--no-progress", "--results-dir", "r", "--datasets", "ar")
    # the console script (its path does not hold the working folder), beside this Python or on PATH
    pibench = shutil.which("pibench", path=str(Path(sys.executable).parent)) or shutil.which("pibench")
    assert pibench, "no pibench command installed"
    assert "changed since" not in shell(pibench, "report", "--results-dir", "r")
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 2.0\n")
    assert "cli_last_pm (default): cli_width.py changed since its rows ran" in shell(pibench, "report",
                                                                                      "--results-dir", "r")
    elsewhere = subprocess.run([pibench, "report", "--results-dir", str(tmp_path / "r")], cwd=tmp_path.parent,
                               capture_output=True, text=True, timeout=300)  # the files the records name
    assert "cli_last_pm (default): cli_width.py changed since its rows ran" in elsewhere.stdout, elsewhere.stderr
    loaded = shell(sys.executable, "-c", "import cli_plugin; from pibench import load_results; "
                                         "print(load_results('r').mixed_code())")
    assert "ran other code (plugin source changed: cli_width.py) than the one loaded now" in loaded
    given = shell(pibench, "report", "--results-dir", "r", "--plugin", "cli_plugin.py")  # as the run loaded it
    assert "ran other code (plugin source changed: cli_width.py) than the one loaded now" in given


def test_a_method_in_a_loose_file_runs_from_the_command_line(tmp_path, capsys, monkeypatch):
    """``--plugin FILE.py`` imports the file (its helpers beside it) before the run; an edit of the helper is
    new code; a missing or broken file is one line."""
    import sys

    import pibench.methods.base as base

    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "cli_plugin.py").write_text(PLUGIN_FILE)
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 1.0\n")
    argv = ["run", "--plugin", str(tmp_path / "cli_plugin.py"), "--methods", "cli_last_pm", "--quick", "-j", "2",
            "--results-dir", str(tmp_path / "r"), "--no-progress"]
    try:
        assert main(["list", "--plugin", str(tmp_path / "cli_plugin.py")]) == 0
        assert "cli_last_pm" in capsys.readouterr().out
        assert main(argv) == 0
        assert "ran 1, skipped 0" in capsys.readouterr().out
        first = pd.read_csv(tmp_path / "r" / "summary.csv")["mean_length"].item()
        (tmp_path / "cli_width.py").write_text("def widen():\n    return 2.0  # edited\n")
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "ran again" in out and "plugin source changed: cli_width.py" in out
        assert pd.read_csv(tmp_path / "r" / "summary.csv")["mean_length"].item() == pytest.approx(2 * first)
    finally:
        base._REGISTRY.pop("cli_last_pm", None)
        for name in ("cli_plugin", "cli_width"):
            sys.modules.pop(name, None)
    (tmp_path / "broken.py").write_text("raise RuntimeError('half written')\n")
    (tmp_path / "unregistered.py").write_text(PLUGIN_FILE.replace("@register\n", "").replace("cli_last_pm", "cli_u"))
    for path, message in ((tmp_path / "none.py", "no such Python file"),
                          (tmp_path / "broken.py", "importing it failed (RuntimeError: half written)"),
                          (tmp_path / "unregistered.py", "the file registers no method; put @register")):
        assert main(["run", "--plugin", str(path), "--results-dir", str(tmp_path / "r")]) == 2
        assert message in capsys.readouterr().err
    (tmp_path / "unregistered.py").write_text(PLUGIN_FILE.replace("cli_last_pm", "cli_u").replace(
        '    """Last value +/- a width from the helper beside this file."""\n', ""))  # fixed: imported afresh
    try:
        assert main(["list", "--plugin", str(tmp_path / "unregistered.py")]) == 0
        # a class without a docstring: where it comes from, not a blank
        assert "cli_u            [series] (no docstring; defined in unregistered)" in capsys.readouterr().out
    finally:
        base._REGISTRY.pop("cli_u", None)
    for name in ("unregistered", "cli_width"):
        sys.modules.pop(name, None)


def test_a_plugin_file_that_re_exports_a_registered_method_is_accepted(tmp_path, capsys, monkeypatch):
    """``--plugin impl.py wrap.py``, wrap.py only importing impl's registered class: wrap registers nothing new,
    yet it names a method, so it is not refused."""
    import sys

    import pibench.methods.base as base

    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "cli_width.py").write_text("def widen():\n    return 1.0\n")
    (tmp_path / "rx_impl.py").write_text(PLUGIN_FILE.replace("cli_last_pm", "rx_impl"))
    (tmp_path / "rx_wrap.py").write_text("from rx_impl import LastPlusMinus  # noqa: F401\n")
    try:
        assert main(["list", "--plugin", str(tmp_path / "rx_impl.py"), str(tmp_path / "rx_wrap.py")]) == 0
        assert "rx_impl" in capsys.readouterr().out
    finally:
        base._REGISTRY.pop("rx_impl", None)
        for name in ("rx_impl", "rx_wrap", "cli_width"):
            sys.modules.pop(name, None)


def test_a_reader_that_stops_early_is_no_error():
    """`pibench list | head -1` exited 2 with "Broken pipe; check that the folder exists"."""
    import subprocess
    import sys

    out = subprocess.run(f"{sys.executable} -m pibench list | head -1", shell=True, capture_output=True, text=True,
                         executable="/bin/bash")
    assert out.stdout == "methods:\n" and "error" not in out.stderr
    status = subprocess.run(f"set -o pipefail; {sys.executable} -m pibench list | head -1 > /dev/null", shell=True,
                            executable="/bin/bash")
    assert status.returncode == 0


def test_a_repeated_list_option_adds_to_it_rather_than_replacing_it():
    """--methods aci --methods autoreg kept autoreg alone, and two --plugin files the last alone (with no word)."""
    from pibench.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["run", "--methods", "aci", "--methods", "autoreg", "oracle", "--plugin", "a.py",
                              "--plugin", "b.py", "--seeds", "0", "--seeds", "1", "--alpha", "0.1", "--alpha", "0.2",
                              "--datasets", "ar", "--datasets", "nlar"])
    assert (args.methods, args.plugin, args.seeds, args.alpha, args.datasets) == (
        ["aci", "autoreg", "oracle"], ["a.py", "b.py"], [0, 1], [0.1, 0.2], ["ar", "nlar"])
    report = parser.parse_args(["report", "--methods", "aci", "--methods", "autoreg", "--suites", "a", "--suites", "b"])
    assert (report.methods, report.suites) == (["aci", "autoreg"], ["a", "b"])


def test_a_method_a_plugin_file_registers_from_a_module_beside_it_is_loaded_by_that_file(tmp_path, monkeypatch):
    """``--plugin run_c.py`` whose class is defined in ``lib_c.py`` (which registers nothing): a printed command
    must name run_c.py, which registers it (it named lib_c.py, which --plugin refuses)."""
    import sys

    import pibench.methods.base as base
    from pibench.methods.catalog import command_line_source, import_method_file

    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "lib_c_beside.py").write_text(PLUGIN_FILE.replace("@register\n", "").replace("cli_last_pm", "cli_c")
                                              .replace("from cli_width import widen", "widen = lambda: 1.0"))
    (tmp_path / "run_c_beside.py").write_text("from pibench import register\nfrom lib_c_beside import LastPlusMinus\n"
                                              "register(LastPlusMinus)\n")
    try:
        import_method_file(tmp_path / "run_c_beside.py")
        assert command_line_source("cli_c") == ("file", str(tmp_path / "run_c_beside.py"))
    finally:
        base._REGISTRY.pop("cli_c", None)
        for name in ("lib_c_beside", "run_c_beside"):
            sys.modules.pop(name, None)
