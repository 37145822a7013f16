"""The one prepared command for a GPU session: every check and table that needs a GPU, in one run.

Here, once, to fill the carried folder ``.device/`` (git-ignored) with what a bare GPU
machine lacks (the staged data files and wheels of the dependencies its image does not
hold)::

    python -m pibench.benchmarks.device_run stage --data-dir ../shared/data

There (the device tool's ``run``, ``carry = [".device"]``), in the repository root::

    bash benchmarks/device_run.sh                      # every stage, within --budget seconds
    bash benchmarks/device_run.sh --stages sets_eeg100 fesp --resume .device/resume/*.tar.gz

Stages, in this order unless ``--stages`` names another, each in its own process group under
its own time limit (a stage that outruns it is stopped, the rest go on): ``env`` (torch,
CUDA, the GPU), ``tests`` (the CUDA tests), ``perf_device`` (CPU and GPU columns side by
side), ``profile`` (one PA-RNN iteration under ``torch.profiler``), ``ar_order_paper``,
``sets_eeg100`` and ``fesp`` (``pibench run --device cuda`` of each suite, then
``pibench report``). Each stage's wall
time, a suite's jobs finished (a suite stopped at its limit after its last job, none failed,
is ok: its workers were still exiting) and the GPU's peak memory in use while it ran
(``nvidia-smi``, every 0.25 s) go into
``OUT/device_run.md`` and ``OUT/device_run.json``, rewritten after every stage; every log
into ``OUT/logs.tar.gz``; each suite's result store into ``OUT/stores-<suite>.tar.gz``,
which ``--resume`` takes back (a store's finished tasks are not run again).

``--methods`` and ``--seeds`` narrow the suites to what an earlier run left (each suite runs those of the
methods it lists; a suite that lists none is skipped).

``--dry-run`` runs the same stages on the CPU at tiny sizes (tiny variants of the suites,
:mod:`pibench.benchmarks.tiny_suite`; the smallest perf figure; a 16-unit profile), so
that the command is tested where CI runs (tests/test_device_run.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CARRY_DIR = ".device"
#: wheels carried to the GPU machine, of the versions installed here: mapie and arch, which its image does not
#: hold (device README, KINDS.md), and pandas, whose behaviour changed between majors (its version there unknown)
CARRIED_WHEELS = ("mapie", "arch", "pandas")
#: the datasets the stages read
STAGED_DATASETS = ("fesp", "eeg")
#: the dataset each suite stage reads (the other stages read none)
STAGE_DATA = {"sets_eeg100": "eeg", "fesp": "fesp"}
#: the GPU machine's Python, for which wheels are fetched
DEVICE_PYTHON = "3.12"
MANYLINUX = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
SUITES = ("ar_order_paper", "sets_eeg100", "fesp")
#: each suite's share of the workers when they run together: sets_eeg100's 20 tasks are each long (150 LSTM-100
#: epochs, host-bound on a GPU: one core each), ar_order_paper batches its 40 PA-RNN fits into 8 cells
#: (H200, 2026-11-27, 4 workers each: CF-RNN 64-104 s and MQ-RNN 180 s a seed, 9 of 20 tasks in 600 s)
SUITE_SHARE = {"ar_order_paper": 1, "sets_eeg100": 2, "fesp": 1}
#: the suites' workers by default. Processes sharing one GPU take turns on it (time slices, no MPS): on an H200
#: (2026-11-27) with 16 workers at once, an NLAR cell's PA-RNN iteration took 14 ms against 2.5 ms alone
#: (perf_device (e), steady state) and a CF-RNN cell trained in 316 s against about 70 s alone (150 x (f));
#: with 7 at once, neither an MQ-RNN cell nor a DP-RNN seed finished in 220 s. So few workers, suites one by one.
GPU_WORKERS = 4
#: the test files of the tests stage (it runs their CUDA tests: ``-k "cuda or gpu"``)
CUDA_TEST_FILES = ("test_device.py", "test_pa_rnn_cell.py", "test_pa_graphs.py", "test_sequence_cells.py",
                   "test_span_serving.py", "test_pa_structure.py", "test_sequence_methods.py", "test_pa_lstm_cells.py")
TAIL_LINES = 40
#: a progress line of ``pibench run --progress-lines`` (the runner's ``_finished_line``): ``[done/total] what: status``
PROGRESS_LINE = re.compile(r"^\[(\d+)/(\d+)\] [^\n]*?: (\w+)(?:;|$)", re.MULTILINE)
#: the line ``pibench run`` prints once every job is done and the store is summarised
RUN_END = re.compile(r"^ran \d+, skipped \d+ already finished", re.MULTILINE)
#: the largest file the device tool brings back from OUT (16 MiB), less a margin
MAX_OUT_FILE = 15 * 2**20


@dataclass(frozen=True)
class Stage:
    """One stage: its name, what it shows, and the most seconds it may take."""

    name: str
    limit_s: int
    what: str


STAGES = (
    Stage("env", 30, "torch, CUDA and the GPU"),
    Stage("tests", 120, f"the CUDA tests (in tests/: {', '.join(CUDA_TEST_FILES)})"),
    Stage("perf_device", 180, "perf_device, CPU and GPU columns"),
    Stage("profile", 75, "one PA-RNN iteration (Elman-1000) under torch.profiler, one member and a stack of 5"),
    # a suite may run on past its target, as far as the budget goes: a table finished late is worth more than none
    # (the H200 run stopped all three at 300 / 300 / 120 s with 125 s of the budget unused)
    Stage("ar_order_paper", 480, "the order-selection table at width 1,000 (target: 5 min)"),
    Stage("sets_eeg100", 510, "the EEG LSTM-100 table (target: 5 min)"),
    Stage("fesp", 300, "fesp paper-scale with --device cuda (target: 30 s)"),
)
STAGE_NAMES = tuple(stage.name for stage in STAGES)

_ENV_SCRIPT = """
import os, platform, torch
print('python', platform.python_version(), '| torch', torch.__version__, '| CPU cores', os.cpu_count())
print('CUDA available:', torch.cuda.is_available(), '| CUDA', torch.version.cuda)
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print('GPU:', p.name, '| capability', f'{p.major}.{p.minor}', '| memory', round(p.total_memory / 2**30, 1), 'GiB',
          '| multiprocessors', p.multi_processor_count)
import pibench; print('pibench', pibench.__version__)
from importlib.metadata import version
print(' | '.join(f'{n} {version(n)}' for n in ('numpy', 'pandas', 'scipy', 'scikit-learn', 'statsmodels', 'mapie',
                                              'arch', 'pyarrow', 'joblib', 'seaborn')))
"""


@dataclass
class StageResult:
    """What one stage did: status is ok, failed (rc), timed out, or skipped (with the reason)."""

    name: str
    status: str
    wall_s: float = 0.0
    limit_s: float = 0.0
    peak_gpu_mib: float | None = None
    commands: list[str] = field(default_factory=list)
    beside: list[str] = field(default_factory=list)  # stages that ran at the same time (their wall time is shared)
    tail: str = ""
    report: str = ""
    store: str = ""  # what OUT/stores-<suite>.tar.gz holds
    jobs: str = ""  # a suite's jobs finished by its run, of those it had to do ("12 of 55"), from its progress lines


class GpuMemoryWatch:
    """The most GPU memory in use (MiB, all processes) while it is entered: nvidia-smi every 0.25 s.
    ``peak`` is None where there is no nvidia-smi (a CPU machine)."""

    def __init__(self) -> None:
        self.peak: float | None = None
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None

    def __enter__(self) -> GpuMemoryWatch:
        if shutil.which("nvidia-smi"):
            self._proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-lms", "250"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                used = float(line.strip().split(",")[0])
            except ValueError:
                continue
            self.peak = used if self.peak is None else max(self.peak, used)

    def __exit__(self, *exc) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            if self._reader is not None:
                self._reader.join(timeout=5)


def _shown(argv: Sequence[str]) -> str:
    """A command as the summary and logs show it (an inline script as <script>)."""
    return " ".join("<script>" if "\n" in arg else arg for arg in argv)


def _run_limited(argv: Sequence[str], log: Path, limit_s: float, env: dict) -> int | None:
    """Run ``argv`` in its own process group, output appended to ``log``; stop the whole group after
    ``limit_s`` seconds (SIGTERM, then SIGKILL). Returns the exit status, or None if stopped."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {_shown(argv)}\n")
        out.flush()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, cwd=REPO, env=env,
                                start_new_session=True)
        try:
            rc: int | None = proc.wait(timeout=max(limit_s, 1))
        except subprocess.TimeoutExpired:
            for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            rc = None
            out.write(f"\n[device_run] stopped after {limit_s:.0f} s (its limit)\n")
    return rc


def _tail(log: Path, lines: int = TAIL_LINES) -> str:
    if not log.is_file():
        return ""
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


class DeviceRun:
    """The stages of one prepared run (module doc), their results and what goes to ``out``."""

    def __init__(self, out: Path, work: Path, *, budget_s: float, dry_run: bool, jobs: int, python: str,
                 methods: Sequence[str] = (), seeds: Sequence[int] = ()) -> None:
        self.out, self.work, self.budget_s, self.dry_run = out, work, budget_s, dry_run
        self.jobs, self.python = jobs, python
        # the suites' selection (`pibench run --methods / --seeds`): what an earlier run left unfinished
        self.methods, self.seeds = list(methods), list(seeds)
        self.logs, self.stores, self.suites = work / "logs", work / "stores", work / "suites"
        for folder in (out, self.logs, self.stores, self.suites):
            folder.mkdir(parents=True, exist_ok=True)
        self.results: list[StageResult] = []
        #: the order of the summary's rows: the stages in the order of ``--stages`` (main sets it)
        self.stage_order: list[str] = list(STAGE_NAMES)
        self._lock = threading.Lock()
        self.started = time.perf_counter()
        self.env = dict(os.environ, PYTHONUNBUFFERED="1")

    # what each stage runs --------------------------------------------------------------------------------
    def _pibench(self, *args: str) -> list[str]:
        return [self.python, "-m", "pibench", *args]

    def _suite_file(self, suite: str) -> str:
        if not self.dry_run:
            return suite
        from pibench.benchmarks.tiny_suite import write_tiny_suite
        return str(write_tiny_suite(suite, self.suites / f"{suite}.toml"))

    def _selected_methods(self, suite: str) -> list[str]:
        """The ``--methods`` that ``suite`` lists (all of its methods when none were given)."""
        from pibench.benchmarks.suite import load_suite
        listed = [m["name"] for m in load_suite(self._suite_file(suite))["methods"]]
        return [m for m in self.methods if m in listed] if self.methods else listed

    def _selection(self, suite: str) -> list[str]:
        """``pibench run``'s arguments for ``--methods`` / ``--seeds`` of ``suite`` (each suite gets the methods it
        lists: a method it does not list would run with its default parameters)."""
        methods = self._selected_methods(suite) if self.methods else []
        seeds = ["--seeds", *map(str, self.seeds)] if self.seeds else []
        return [*(["--methods", *methods] if methods else []), *seeds]

    def commands(self, stage: str, jobs: int | None = None) -> list[list[str]]:
        """The commands of ``stage``, in order (the report runs even when the suite's run was stopped);
        ``jobs``: the suite's workers (default ``self.jobs``)."""
        py, dry = self.python, self.dry_run
        if stage == "env":
            return [[py, "-c", _ENV_SCRIPT]] + ([["nvidia-smi"]] if shutil.which("nvidia-smi") else [])
        if stage == "tests":
            files = [f"tests/{name}" for name in CUDA_TEST_FILES]
            return [[py, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider", *files, "-k", "cuda or gpu"]]
        if stage == "perf_device":
            return [[py, "-m", "pibench.benchmarks.perf_device", *(["--only", "d"] if dry else [])]]
        if stage == "profile":  # one member, then an order-selection cell's stack of five
            small = ["--hidden", "16", "--iterations", "3"] if dry else []
            return [[py, "-m", "pibench.benchmarks.profile_pa", *small],
                    [py, "-m", "pibench.benchmarks.profile_pa", "--members", "5", *small]]
        if stage in SUITES:
            store = str(self.stores / stage)
            device = "auto" if dry else "cuda"
            workers = str(min(jobs or self.jobs, 2) if dry else jobs or self.jobs)
            return [self._pibench("run", "--suite", self._suite_file(stage), "--device", device, "-j", workers,
                                  "--results-dir", store, "--progress-lines", *self._selection(stage)),
                    self._pibench("report", "--results-dir", store)]
        raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(STAGE_NAMES)}")

    # running -------------------------------------------------------------------------------------------
    def remaining(self) -> float:
        return self.budget_s - (time.perf_counter() - self.started)

    def run_stage(self, stage: Stage, jobs: int | None = None, beside: Sequence[str] = ()) -> StageResult:
        """Run one stage (``jobs``: a suite's workers; ``beside``: the stages running at the same time)."""
        log = self.logs / f"{stage.name}.log"
        limit = min(stage.limit_s, self.remaining() - 10)
        missing = _missing_data(stage.name) or (
            f"it lists none of --methods {' '.join(self.methods)}"
            if stage.name in SUITES and self.methods and not self._selected_methods(stage.name) else "")
        if limit < 10 or missing:
            why = missing or f"{self.remaining():.0f} s of the budget left"
            result = StageResult(stage.name, f"skipped: {why}", limit_s=0)
            print(f"[device_run] {stage.name}: {result.status}", flush=True)
            self._record(result)
            return result
        commands = self.commands(stage.name, jobs)
        result = StageResult(stage.name, "ok", limit_s=round(limit), commands=[_shown(c) for c in commands],
                             beside=list(beside))
        print(f"[device_run] {stage.name}: {stage.what} (limit {limit:.0f} s)", flush=True)
        tic = time.perf_counter()
        report_ok = False
        with GpuMemoryWatch() as watch:
            for i, argv in enumerate(commands):
                is_report = stage.name in SUITES and i == len(commands) - 1
                left = limit - (time.perf_counter() - tic)
                start = log.stat().st_size if log.is_file() else 0  # a second call on the machine appends
                rc = _run_limited(argv, log, max(left, 60) if is_report else left, self.env)
                report_ok = is_report and rc == 0
                if stage.name in SUITES and i == 0:
                    output = log.read_bytes()[start:].decode("utf-8", errors="replace")
                    done = jobs_done(output)
                    result.jobs = f"{done[0]} of {done[1]}{f' ({done[2]} failed)' if done[2] else ''}" if done else ""
                    if rc is None and done and done[0] == done[1] and not done[2] and RUN_END.search(output):
                        continue  # every job done and the store summarised: stopped while its workers exited
                if result.status == "ok" and rc != 0:
                    result.status = f"timed out (limit {limit:.0f} s)" if rc is None else f"failed (exit {rc})"
                    if stage.name not in SUITES:
                        break
        result.wall_s = round(time.perf_counter() - tic, 1)
        result.peak_gpu_mib = watch.peak
        result.tail = _tail(log)
        if report_ok:  # the tables of what finished (all of it, or what a stopped run left); the run's end
            result.report, result.tail = self._split_report(log)
            result.store = self._pack_store(stage.name)
        self._record(result)
        print(f"[device_run] {stage.name}: {result.status}, {result.wall_s:.1f} s"
              + (f", peak GPU memory {result.peak_gpu_mib:.0f} MiB" if result.peak_gpu_mib is not None else ""),
              flush=True)
        return result

    @staticmethod
    def _split_report(log: Path) -> tuple[str, str]:
        """The last command's output in the stage's log (`pibench report`: its tables), and the tail of
        what came before it (the run's end)."""
        text = log.read_text(encoding="utf-8", errors="replace")
        cut = text.rfind("\n$ ") + 1
        return text[cut:], "\n".join(text[:cut].splitlines()[-TAIL_LINES:])

    def _pack(self, name: str, folder: Path, leave_out: Callable[[str], bool] = lambda name: False) -> int:
        """``folder`` as OUT/name (gzipped tar), without the paths ``leave_out`` names; returns its bytes."""
        if not folder.is_dir():
            return 0
        with tarfile.open(self.out / name, "w:gz") as tar:
            tar.add(folder, arcname=folder.name, filter=lambda info: None if leave_out(info.name) else info)
        return (self.out / name).stat().st_size

    def _pack_store(self, suite: str) -> str:
        """A suite's store as OUT/stores-<suite>.tar.gz, within what the device tool brings back: without the
        shared base fits' cache (recomputed on a resume), and without the predictions if they do not fit
        (a resume then recomputes those tasks: a record is kept only with its predictions). Says which."""
        name, folder = f"stores-{suite}.tar.gz", self.stores / suite
        size = self._pack(name, folder, lambda path: "/cache" in path)
        if size <= MAX_OUT_FILE:
            return f"{name}: {size / 2**20:.1f} MiB, records and predictions"
        size = self._pack(name, folder, lambda path: "/cache" in path or path.endswith(".parquet"))
        return (f"{name}: {size / 2**20:.1f} MiB, records only (the predictions are over "
                f"{MAX_OUT_FILE / 2**20:.0f} MiB packed; they stay in {folder} on the machine)")

    def run_together(self, stages: Sequence[Stage]) -> list[StageResult]:
        """Run ``stages`` side by side (threads, each its own processes), the workers split between them by
        :data:`SUITE_SHARE`."""
        names = [s.name for s in stages]
        shares = sum(SUITE_SHARE.get(name, 1) for name in names)
        with ThreadPoolExecutor(max_workers=max(len(stages), 1)) as pool:
            futures = [pool.submit(self.run_stage, stage, max(1, self.jobs * SUITE_SHARE.get(stage.name, 1) // shares),
                                   [n for n in names if n != stage.name])
                       for stage in stages]
            return [f.result() for f in futures]

    def _record(self, result: StageResult) -> None:
        with self._lock:
            self._write(result)

    def _write(self, result: StageResult) -> None:
        order = {name: i for i, name in enumerate(self.stage_order)}
        self.results = sorted([r for r in self.results if r.name != result.name] + [result],
                              key=lambda r: order.get(r.name, len(order)))
        self._pack("logs.tar.gz", self.logs)
        payload = {"dry_run": self.dry_run, "budget_s": self.budget_s, "jobs": self.jobs,
                   "elapsed_s": round(time.perf_counter() - self.started, 1),
                   "stages": [asdict(r) for r in self.results]}
        (self.out / "device_run.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
        (self.out / "device_run.md").write_text(self.markdown(), encoding="utf-8")

    def markdown(self) -> str:
        """The summary: one row per stage, then each stage's report tables (suites) or output tail."""
        mode = "dry run on the CPU, tiny sizes" if self.dry_run else "full"
        elapsed = time.perf_counter() - self.started
        lines = [f"# device_run ({mode}): {elapsed:.0f} s of a {self.budget_s:.0f} s budget", "",
                 "| stage | status | jobs done | wall s | limit s | peak GPU memory MiB |",
                 "| --- | --- | --- | ---: | ---: | ---: |"]
        for r in self.results:
            peak = "-" if r.peak_gpu_mib is None else f"{r.peak_gpu_mib:.0f}"
            name = f"{r.name} (beside {', '.join(r.beside)})" if r.beside else r.name
            lines.append(f"| {name} | {r.status} | {r.jobs or '-'} | {r.wall_s:.1f} | {r.limit_s:.0f} | {peak} |")
        for r in self.results:
            shown = r.tail if not r.report else r.report if r.status == "ok" else f"{r.tail}\n\n{r.report}"
            lines += ["", f"## {r.name}", "", *(f"`{c}`" for c in r.commands), *(["", r.store] if r.store else []),
                      "", "```", shown, "```"]
        return "\n".join(lines) + "\n"

    def resume(self, archives: Sequence[Path]) -> None:
        """Unpack stores of an earlier run (``stores-<suite>.tar.gz``) so their finished tasks are kept."""
        for archive in archives:
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(self.stores, filter="data")
            print(f"[device_run] resumed from {archive}", flush=True)


def jobs_done(output: str) -> tuple[int, int, int] | None:
    """(finished, of, failed) from the progress lines in a suite run's ``output`` (``pibench run
    --progress-lines``: ``[k/N] what: status; ...``), or None before the first. A run stopped at its limit
    after its last job, none failed, and its closing line printed (:data:`RUN_END`: the store summarised; its
    workers still exiting, on a GPU their CUDA contexts) has done its work: its stage counts as ok."""
    found = PROGRESS_LINE.findall(output)
    if not found:
        return None
    return int(found[-1][0]), int(found[-1][1]), sum(status != "ok" for *_, status in found)


def _missing_data(stage: str) -> str:
    """Why ``stage`` cannot find its data file ('' when it can, or reads none)."""
    if stage not in STAGE_DATA:
        return ""
    from pibench.data_loaders.paths import DataNotFoundError, locate
    try:
        locate(STAGE_DATA[stage])
    except DataNotFoundError:
        return (f"its data file ({STAGE_DATA[stage]}) is not staged: run `python -m pibench.benchmarks.device_run "
                f"stage` where the data are, and carry {CARRY_DIR}")
    return ""


def preflight(dry_run: bool) -> list[str]:
    """What stops every stage before one starts: a module pibench imports that is missing (the carried
    wheels were not staged or installed), or no GPU for a full run."""
    problems = []
    try:  # every method module imports: a missing package (or one too old for a carried wheel) names itself
        from pibench.methods.catalog import available_methods
        available_methods()
    except Exception as exc:
        problems.append(f"pibench's methods do not import here: {type(exc).__name__}: {exc}")
    if problems:
        problems.append(f"stage the wheels here (`python -m pibench.benchmarks.device_run stage`), carry {CARRY_DIR}, "
                        "and start the run with `bash benchmarks/device_run.sh` (it installs them)")
    elif not dry_run:
        import torch
        if not torch.cuda.is_available():
            problems.append(f"torch {torch.__version__} sees no CUDA device: a full run needs a GPU (--dry-run runs "
                            "the stages at tiny sizes on the CPU)")
    return problems


# staging (on the developer's machine) ----------------------------------------------------------------
def stage_carry(data_dir: str | None, dest: Path, wheels: bool = True) -> list[Path]:
    """Copy the stages' data files into ``dest/data`` and fetch wheels of :data:`CARRIED_WHEELS` (the
    versions installed here, for the GPU machine's Python) into ``dest/wheels``. Returns what was staged."""
    from importlib.metadata import version

    from pibench.data_loaders.paths import DATASET_FILES, locate

    staged = []
    for key in STAGED_DATASETS:
        source = Path(locate(key, data_dir))
        target = dest / "data" / DATASET_FILES[key].relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        staged.append(target)
    if wheels:
        folder = dest / "wheels"
        folder.mkdir(parents=True, exist_ok=True)
        platforms = [arg for p in MANYLINUX for arg in ("--platform", p)]
        for name in CARRIED_WHEELS:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "--python-version", DEVICE_PYTHON, "--implementation", "cp", *platforms,
                            "-d", str(folder), f"{name}=={version(name)}"], check=True)
        staged += sorted(folder.glob("*.whl"))
    return staged


def _size_mib(paths: Sequence[Path]) -> float:
    return sum(p.stat().st_size for p in paths) / 2**20


def stages_in_order(names: Sequence[str]) -> list[Stage]:
    """The stages named, in the order named (a repeat runs once): a session short of device time puts the
    table it most needs first, e.g. ``--stages env tests sets_eeg100 perf_device``."""
    by_name = {stage.name: stage for stage in STAGES}
    return [by_name[name] for name in dict.fromkeys(names)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb", required=True)
    stage = sub.add_parser("stage", help="here: fill the carried folder with data files and wheels")
    stage.add_argument("--data-dir", default=None, help="where the data files are (default: $PIBENCH_DATA, ...)")
    stage.add_argument("--dest", default=str(REPO / CARRY_DIR), help=f"the carried folder (default {CARRY_DIR})")
    stage.add_argument("--no-wheels", action="store_true", help="stage the data files only")
    run = sub.add_parser("run", help="there: run the stages")
    run.add_argument("--out", required=True, help="where the summary, logs and stores go (the device tool's $OUT)")
    run.add_argument("--work", default=None,
                     help="scratch folder (default /tmp/pibench-device-run: a second call on the same machine finds "
                          "the stores of the first and skips their finished tasks)")
    run.add_argument("--stages", nargs="+", choices=STAGE_NAMES, default=list(STAGE_NAMES),
                     help="which stages, run in the order given (default: all, in the order above)")
    run.add_argument("--budget", type=float, default=560.0,
                     help="seconds for all stages together (default 560: a 600 s device command with room to pack)")
    run.add_argument("-j", "--jobs", type=int, default=GPU_WORKERS,
                     help=f"pibench workers for the suites (default {GPU_WORKERS}: processes sharing a GPU take turns)")
    run.add_argument("--resume", nargs="*", default=[], type=Path, help="stores-<suite>.tar.gz of an earlier run")
    run.add_argument("--suites-together", action="store_true",
                     help="run the suite stages side by side after the others, the workers split between them "
                          "(peak GPU memory and wall time then shared)")
    run.add_argument("--methods", nargs="+", default=[],
                     help="the suites run only these methods (`pibench run --methods`; default: all)")
    run.add_argument("--seeds", nargs="+", type=int, default=[],
                     help="the suites run only these seeds (`pibench run --seeds`; default: each suite's)")
    run.add_argument("--dry-run", action="store_true", help="the same stages on the CPU at tiny sizes (CI)")
    args = parser.parse_args(argv)
    if args.verb == "stage":
        staged = stage_carry(args.data_dir, Path(args.dest), wheels=not args.no_wheels)
        print(f"staged {len(staged)} files ({_size_mib(staged):.1f} MiB) in {args.dest}; on the GPU machine: "
              f'run(command="bash benchmarks/device_run.sh", carry=["{CARRY_DIR}"], timeout_s=600)')
        return 0
    missing = [str(a) for a in args.resume if not Path(a).is_file()]
    if missing:
        parser.error(f"--resume: no such file {', '.join(missing)}")
    if args.budget <= 0 or args.jobs < 1:
        parser.error("--budget must be > 0 seconds and -j at least 1")
    problems = preflight(args.dry_run)
    if problems:
        print("device_run: nothing was run:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    work = Path(args.work) if args.work else Path("/tmp/pibench-device-run")
    runner = DeviceRun(Path(args.out), work, budget_s=args.budget, dry_run=args.dry_run, jobs=args.jobs,
                       python=sys.executable, methods=args.methods, seeds=args.seeds)
    runner.resume(args.resume)
    chosen = stages_in_order(args.stages)
    runner.stage_order = [stage.name for stage in chosen]
    together = [stage for stage in chosen if stage.name in SUITES] if args.suites_together else []
    for stage_def in chosen:
        if stage_def not in together:
            runner.run_stage(stage_def)
    if together:
        runner.run_together(together)
    print(runner.markdown(), flush=True)
    return 0 if all(r.status == "ok" for r in runner.results) else 1


if __name__ == "__main__":
    sys.exit(main())
