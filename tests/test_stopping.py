"""A run stopped from outside (SIGTERM from a batch system, `timeout`, `kill`) stops as Ctrl-C does: a line,
its own exit status, and its loky workers gone with it. They used to carry on through the queue without their
parent, writing records into a results dir whose lock was already released."""

import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

SLOW = textwrap.dedent("""
    name = "slow"
    protocol = { kind = "online", window = 150, retrain_every = 1 }
    [[datasets]]
    name = "ar"
    params = { n_train = 200, n_test = 400 }
    [[methods]]
    name = "aci"
    params = { base = "mlp", hidden = 16, epochs = 30 }
    grid = { gamma = [0.0, 0.001, 0.002, 0.003, 0.004, 0.005] }
    """)


@pytest.mark.parametrize("stop, status, said", [(signal.SIGTERM, 143, "stopped (SIGTERM)"),
                                               (signal.SIGINT, 130, "interrupted")])
def test_a_stopped_run_takes_its_workers_with_it(tmp_path, stop, status, said):
    (tmp_path / "slow.toml").write_text(SLOW)
    # a test session started in the background of a script ignores SIGINT, and so would the run it starts
    run = subprocess.Popen([sys.executable, "-m", "pibench", "run", "--suite", str(tmp_path / "slow.toml"), "-j", "2",
                            "--results-dir", str(tmp_path / "r"), "--no-progress"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    parent = psutil.Process(run.pid)
    deadline = time.monotonic() + 120
    workers: list[psutil.Process] = []
    while time.monotonic() < deadline and len(workers) < 2:  # the workers are at work
        workers = [p for p in parent.children(recursive=True) if "loky" in " ".join(p.cmdline())
                   and "resource_tracker" not in " ".join(p.cmdline())]
        time.sleep(0.5)
    assert len(workers) >= 2, "the run never started its workers"
    time.sleep(3)
    run.send_signal(stop)
    _, err = run.communicate(timeout=120)
    assert run.returncode == status and said in err and "Traceback" not in err, err
    gone, alive = psutil.wait_procs(workers, timeout=30)
    for orphan in alive:  # never leave them running, whatever the verdict
        orphan.kill()
    assert not alive, f"{len(alive)} worker(s) still running after the run stopped"
    written = sorted((tmp_path / "r" / "tasks").glob("*.json")) if (tmp_path / "r" / "tasks").is_dir() else []
    time.sleep(2)
    after = sorted((tmp_path / "r" / "tasks").glob("*.json")) if (tmp_path / "r" / "tasks").is_dir() else []
    assert after == written  # nothing writes on after the run has stopped


@pytest.mark.parametrize("module, call", [
    ("pibench.benchmarks.backends", "from pibench.cli import main; sys.exit(main(['list']))"),
    ("pibench.cli", "import runpy; runpy.run_module('pibench', run_name='__main__')")])
def test_ctrl_c_while_the_command_line_loads_its_libraries_is_one_line(module, call):
    """Ctrl-C in the second torch and pandas take to load printed a traceback of the import (in `pibench.cli.main`
    or in `python -m pibench` before it). The interrupt is raised where Ctrl-C raises it, in the main thread
    inside the import, by an import hook."""
    hook = textwrap.dedent(f"""
        import sys
        import pibench

        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == {module!r}:
                    raise KeyboardInterrupt
        sys.modules.pop({module!r}, None)
        sys.meta_path.insert(0, Interrupt())
        {call}
        """)
    done = subprocess.run([sys.executable, "-c", hook], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and done.stderr == "pibench: interrupted before anything ran.\n", done.stderr
