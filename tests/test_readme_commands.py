"""Every `pibench` command the README and the documentation show exits 0 as written (the fast ones run here, in
the order a reader meets them)."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def documentation_pages() -> list[Path]:
    """README.md, then every page of the documentation site in its navigation order (mkdocs.yml)."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]

    def walk(entry):
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from walk(value)
        else:
            for item in entry:
                yield from walk(item)

    pages = [ROOT / "docs" / page for page in walk(nav) if (ROOT / "docs" / page).is_file()]
    return [ROOT / "README.md", *pages]


#: README commands too long for the test suite (minutes to hours), with what they take; run by hand.
SLOW = {
    "pibench run --suite fesp -j 2",
    "pibench run --suite fesp_enbpi_tuning",
    "pibench run --suite fesp_pa_tuning",
    "pibench run --suite ar_order --quick -j 2",
    "pibench run --suite ar_order -j 2",
    "pibench run --suite sets -j 2",
    # 3 min 5 s alone on 2 cores (5 min of CPU), 281-353 s beside the other tests: the suite's longest test, for a
    # path the real-data set tests cover (tests/test_sequence_cells.py, tests/test_conformal_pa.py); run by hand
    "pibench run --suite sets --quick -j 2",
    "pibench run --suite sets --datasets covid -j 2",
    # 128 s alone on 2 cores, 170 s beside the other tests (its 12 PA rows: 10 s each); the docs' --quick
    # line runs the same suite without them
    "pibench run --suite regime -j 2 --results-dir results_regime",
    "pibench run --suite sets --datasets eeg eeg_trials -j 2",
    "pibench run --suite sets_eeg100 -j 2",
    "pibench run --suite realworld -j 2",
    "pibench run --suite ar_order_paper --device cuda -j 4",
    "pibench run --suite ar_order_paper --quick -j 2",
}
#: Commands that read the shared data files (run only when they are there; `data fetch` then only verifies).
NEEDS_DATA = ("pibench data fetch fesp", "--suite fesp", "--suite sets")


def readme_commands() -> list[str]:
    """`pibench ...` lines of the bash blocks and inline code of the README and the documentation pages, without
    placeholders, in order (README first, then the site's navigation order)."""
    found = []
    for page in documentation_pages():
        text = page.read_text()
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
            found += [line.split("#")[0].strip() for line in block.splitlines()]
        found += re.findall(r"`(pibench [^`]+)`", text)
    commands = []
    for cmd in found:
        if cmd.startswith("pibench ") and not re.search(r"\b[A-Z]{2,}\b|\.\.\.", cmd) and cmd not in commands:
            commands.append(cmd)
    return commands


def test_the_readme_shows_the_main_commands():
    commands = readme_commands()
    for cmd in ["pibench run", "pibench report", "pibench list", "pibench run --suite fesp --quick -j 2",
                "pibench data fetch fesp"]:
        assert cmd in commands
    assert SLOW <= set(commands), "a command listed as slow is no longer in the README"


def command_groups() -> dict[str, list[str]]:
    """The fast commands in groups that share nothing, each in the order a reader meets them: those naming a
    results dir with it (a run, then its report), a suite run into the default folder alone (nothing after it
    reads what it wrote but the default group's reports, which exit 0 either way), the rest together. The groups
    run side by side on the test workers (as one test, the suite runs of the docs held one worker for minutes
    while the other stood idle)."""
    groups: dict[str, list[str]] = {}
    for cmd in readme_commands():
        if cmd in SLOW:
            continue
        named = re.search(r"--results-dir (\S+)", cmd)
        own = cmd.startswith("pibench run ") and ("--suite" in cmd or "--backend" in cmd)
        groups.setdefault(named.group(1) if named else cmd if own else "default", []).append(cmd)
    return groups


@pytest.mark.parametrize("group", list(command_groups()))
def test_fast_readme_commands_exit_0(group, tmp_path, shared_data_dir_or_none):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("PIBENCH_DATA", None)
    if shared_data_dir_or_none is not None:
        env["PIBENCH_DATA"] = str(shared_data_dir_or_none)
    bin_dir = Path(sys.executable).parent
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    ran = []
    for cmd in command_groups()[group]:
        if shared_data_dir_or_none is None and any(k in cmd for k in NEEDS_DATA):
            continue
        tic = time.perf_counter()
        done = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{cmd!r} exited {done.returncode}:\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, done.stderr
        ran.append(f"{cmd}: {time.perf_counter() - tic:.1f} s")
    print("\n".join(ran))
    if group == "default":
        assert ran and ran[0].startswith("pibench run:")  # the README's main command, first


def test_the_command_groups_keep_every_fast_command_once_and_a_run_before_its_report():
    groups = command_groups()
    flat = [cmd for commands in groups.values() for cmd in commands]
    assert sorted(flat) == sorted(c for c in readme_commands() if c not in SLOW)
    for name, commands in groups.items():
        if name.startswith("results_"):  # a folder's run comes before what reads it
            assert commands[0].startswith("pibench run "), commands


@pytest.fixture
def shared_data_dir_or_none():
    from pibench.data_loaders.paths import DATA_ENV_VAR, DATASET_FILES

    candidates = [os.environ.get(DATA_ENV_VAR), ROOT.parent / "shared" / "data"]
    for folder in candidates:
        if folder and (Path(folder) / DATASET_FILES["fesp"].relpath).is_file():
            return Path(folder)
    return None
