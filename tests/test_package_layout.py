"""pibench installs under one import name; the Python API; ``python -m pibench``; plugins from a distribution."""

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import pibench
from pibench import Interval, IntervalMethod, Results, load_results, register, run

ROOT = Path(__file__).resolve().parents[1]
PROJECT_FOLDERS = ("methods", "benchmarks", "data_loaders", "reports")
needs_setuptools = pytest.mark.skipif(importlib.util.find_spec("setuptools") is None,
                                      reason="building a wheel offline needs setuptools")


def _clean_env(**extra) -> dict:
    """The environment of a subprocess that must not see this checkout through PYTHONPATH or the cwd."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the source alone (a copy without build/ or egg-info leftovers, which setuptools would
    otherwise pack again)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in (*PROJECT_FOLDERS, "pibench"):
        shutil.copytree(ROOT / folder, source / folder, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(out), str(source)], capture_output=True, text=True, timeout=300,
                           cwd=out)
    if build.returncode != 0 and "setuptools" in build.stderr:
        pytest.skip(f"this environment's setuptools cannot build pibench offline: {build.stderr[-200:]}")
    assert build.returncode == 0, build.stderr
    (path,) = out.glob("pibench-*.whl")
    return path


@needs_setuptools
def test_the_wheel_holds_only_pibench(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"pibench"}
    for folder in PROJECT_FOLDERS:
        assert f"pibench/{folder}/__init__.py" in names
    # every source folder of the checkout is in the wheel (a new subpackage cannot be forgotten)
    for folder in PROJECT_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            assert f"pibench/{path.relative_to(ROOT).as_posix()}" in names, path
    assert {"pibench/py.typed", "pibench/benchmarks/suites/default.toml",
            "pibench/reports/reference_results.csv", "pibench/__main__.py"} <= set(names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "pibench = pibench.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@needs_setuptools
def test_an_installed_tree_runs_from_another_directory(wheel, tmp_path):
    """Not editable: the wheel unpacked into a folder of its own, run from a folder with a `methods/` of
    the user's own (which must not shadow pibench's)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    (work / "methods").mkdir(parents=True)
    (work / "methods" / "__init__.py").write_text("raise ImportError('the user folder was imported')\n")
    env = _clean_env(PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import pibench, pibench.methods.aci as m; print(m.__file__)"],
                           capture_output=True, text=True, cwd=work, env=env, timeout=120)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().is_relative_to(site.resolve())
    done = subprocess.run([sys.executable, "-m", "pibench", "run", "--methods", "aci", "--seeds", "0",
                           "--no-progress", "--results-dir", "r"], capture_output=True, text=True, cwd=work,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (work / "r" / "summary.csv").is_file() and "| aci |" in done.stdout


def test_python_dash_m_pibench_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "pibench", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "usage: pibench" in done.stdout and "run" in done.stdout


def test_the_api_returns_what_the_cli_prints(tmp_path, capsys):
    from pibench.cli import main

    results = run(methods=["aci", "oracle"], seeds=[0], results_dir=tmp_path / "r", progress=False)
    assert isinstance(results, Results) and len(results.run_report.executed) == 4  # aci: 2 gammas + normalized; oracle
    summary = results.summary
    assert isinstance(summary, pd.DataFrame) and set(summary["method"]) == {"aci", "oracle"}
    saved = pd.read_csv(tmp_path / "r" / "summary.csv")
    assert sorted(saved["task_id"]) == sorted(summary["task_id"])
    record = results.records[0]
    predictions = results.predictions(record["task_id"])
    covered = ((predictions["lower"] <= predictions["y"]) & (predictions["y"] <= predictions["upper"])).mean()
    assert covered == pytest.approx(record["coverage"], rel=1e-12)
    assert predictions.equals(results.predictions(record))
    with pytest.raises(KeyError, match="no finished task"):
        results.predictions("0" * 20)
    row = summary[summary["task_id"] == record["task_id"]].iloc[0].to_dict()  # a summary row serves too
    assert predictions.equals(results.predictions(row))
    assert predictions.equals(results.predictions(summary[summary["task_id"] == record["task_id"]].iloc[0]))
    with pytest.raises(KeyError, match=r"not a position: for the row at that position, give results.summary.iloc\[0\]"):
        results.predictions(0)
    with pytest.raises(KeyError, match="this dict has no 'task_id'"):
        results.predictions({"method": "aci"})
    # load_results gives the same from the finished store; a second run computes nothing
    again = load_results(tmp_path / "r")
    assert again.summary.equals(summary) and again.run_report is None
    assert run(methods=["aci", "oracle"], seeds=[0], results_dir=tmp_path / "r", progress=False).run_report.skipped == 4
    # figures and the report
    assert "conditional_coverage" in " ".join(results.figure_names)
    fig = results.figure("conditional_coverage")
    assert fig.axes and fig.axes[0].get_lines()
    html = results.to_html(tmp_path / "page.html")
    assert html.read_text().startswith("<!DOCTYPE html>") and "<img" in html.read_text()
    with pytest.raises(ValueError, match="is not in this store"):
        results.figure("no_such_figure")
    # the CLI prints the same tables
    capsys.readouterr()
    assert main(["report", "--results-dir", str(tmp_path / "r")]) == 0
    assert results.tables().splitlines()[0] in capsys.readouterr().out


def test_the_api_refuses_bad_input_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="jobs=0 must be a whole number"):
        run(jobs=0, results_dir=tmp_path / "r")
    with pytest.raises(ValueError, match="unknown method"):
        run(methods=["no_such_method"], results_dir=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_the_top_level_names():
    assert {"run", "load_results", "IntervalMethod", "Interval", "register"} <= set(pibench.__all__)
    assert IntervalMethod.__module__ == "pibench.methods.base" and callable(register) and Interval
    assert (Path(pibench.__file__).parent / "py.typed").is_file()


def test_the_readme_notebook_example_runs(tmp_path):
    """The README's Python example, executed as written (in a fresh folder)."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nfrom pibench import run")
    code = readme[start + len("```python\n"):readme.index("```", start + 10)]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "results" / "summary.csv").is_file() and (tmp_path / "report.html").is_file()


