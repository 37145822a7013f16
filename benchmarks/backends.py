"""Where a run's jobs execute: joblib's loky processes on this machine, or a dask cluster.

Both go through joblib (DESIGN: no home-made scheduler); the runner's jobs are
the same, only ``joblib.parallel_config`` changes. With dask, every worker must
run the same pibench checkout (the runner checks the code version) and see the
same results and data folders (a shared file system), and each worker process
should run one task at a time (``dask worker --nthreads 1``): a task pins torch's
threads, a process-wide setting.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tqdm.auto import tqdm

BACKENDS = ("loky", "dask")


def check_backend(backend: str, scheduler: str | None) -> None:
    """Raise ValueError, with the fix, for a backend that cannot run (before any work)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; use one of {', '.join(BACKENDS)}.")
    if scheduler is not None and backend != "dask":
        raise ValueError("--scheduler goes with --backend dask (loky runs on this machine only).")
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ValueError("the dask backend needs dask.distributed: pip install -c constraints.txt -e "
                             "'.[dask]' (on this machine and on every worker).") from None
    if scheduler is not None:
        _probe_scheduler(scheduler)


def check_remote_paths(datasets: list[dict], scheduler: str | None) -> None:
    """ValueError, before any work, for a dataset parameter (of suite dataset entries) naming a file by a relative
    path: read from the folder pibench runs in, which a remote cluster's workers do not share."""
    if scheduler is None:
        return
    relative = {f"{d.get('label', d.get('name'))}: {key} = {value!r} -> {os.path.abspath(value)!r}": None
                for d in datasets for key, value in d.get("params", {}).items()
                if isinstance(value, str) and not os.path.isabs(value) and os.path.isfile(value)}
    if relative:
        raise ValueError(f"with --scheduler the workers read files from their own folders, not this one; name "
                         f"these files by their absolute paths in the suite or --datasets: {'; '.join(relative)}.")


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: More local workers than this many per core only wait on each other (and a huge -j fails late).
WORKERS_PER_CORE = 8


def check_workers(n_jobs: int, threads: int, backend: str = "loky", scheduler: str | None = None,
                  jobs_name: str = "n_jobs") -> None:
    """ValueError (with the fix) for a worker or thread count this machine cannot serve: threads per task
    at most its cores, local workers at most :data:`WORKERS_PER_CORE` per core (a remote dask cluster
    brings its own). ``jobs_name``: what the caller calls ``n_jobs``."""
    for name, value in ((jobs_name, n_jobs), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a whole number >= 1.")
    cores = available_cores()
    remote = backend == "dask" and scheduler is not None  # a cluster brings its own cores
    if threads > cores and not remote:
        raise ValueError(f"threads={threads} (--threads {threads}) is more than the {cores} CPU core(s) this "
                         f"process may use; give 1 (the default) to {cores}.")
    if n_jobs > WORKERS_PER_CORE * cores and not remote:
        raise ValueError(f"{jobs_name}={n_jobs} (-j {n_jobs}) is far more than the {cores} CPU core(s) here (at most "
                         f"{WORKERS_PER_CORE * cores}: more workers only wait); give {cores} to run one task per "
                         "core, or the dask backend with a scheduler's address for a cluster.")


#: Seconds to wait for a dask scheduler to accept a connection, before any work starts.
CONNECT_TIMEOUT = 5.0


def _probe_scheduler(address: str) -> None:
    """ValueError, within :data:`CONNECT_TIMEOUT`, if ``address`` does not answer as a dask scheduler: a
    tcp:// address that takes no connection, a service that is not a scheduler, a tls:// address without
    dask's security settings. Checked before any work (and before the results dir is locked)."""
    scheme, _, rest = address.rpartition("://")
    if scheme == "tcp" or not scheme:
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--scheduler {address!r}: give the address as tcp://HOST:PORT, e.g. "
                             "tcp://10.0.0.5:8786.")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
        except OSError as exc:
            raise ValueError(f"could not reach the dask scheduler at {address} within {CONNECT_TIMEOUT:g} s "
                             f"({exc.strerror or exc}); start it with `dask scheduler` and give the address it "
                             "prints.") from None
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except Exception as exc:  # a service that speaks another protocol fails in many ways (MemoryError too)
        hint = ("a tls:// scheduler needs dask's TLS settings (distributed.comm.tls in the dask config); "
                if scheme == "tls" else "")
        raise ValueError(f"{address} did not answer as a dask scheduler ({type(exc).__name__}: "
                         f"{str(exc)[:100]}); {hint}give the address `dask scheduler` prints.") from None
    with client:  # its workers' code too, before the results dir is locked or marked (asked again at the start)
        check_worker_code(client, address)


#: Seconds a dask cluster may have no worker before the run says it is waiting for one.
WORKERLESS_GRACE = 30.0


class ClusterLost(RuntimeError):
    """The dask scheduler went away mid-run: the tasks finished before are stored, the others are not."""


def watch_workers(count: Callable[[], int], stop: threading.Event, say: Callable[[str], None], where: str,
                  grace: float, poll: float = 1.0) -> None:
    """Until ``stop``: poll the cluster's worker ``count`` and ``say`` once per outage that the cluster has had
    no worker for ``grace`` seconds (the run waits: an adaptive cluster may bring workers back), and again when
    workers are back. Ends quietly when the count raises (the scheduler is gone: the run itself says so)."""
    since: float | None = None
    waiting = seen = False
    while not stop.wait(poll):
        try:
            n = count()
        except Exception:
            return
        if n:
            if waiting:
                say(f"pibench: {n} dask worker(s) connected{' again' if seen else ''}; the run goes on.")
            since, waiting, seen = None, False, True
        elif since is None:
            since = time.monotonic()
        elif not waiting and time.monotonic() - since >= grace:
            say(f"pibench: the dask scheduler {where} has had no worker for {grace:g} s; the run waits for one. "
                f"Start workers (dask worker {where} --nthreads 1), or stop with Ctrl-C: finished tasks are kept.")
            waiting = True


def check_worker_code(client, address: str) -> None:
    """ValueError, before any job, if a worker of the cluster at ``address`` runs other pibench code than
    this process (:func:`~pibench.benchmarks.provenance.code_version`) or cannot import pibench. (A worker
    that joins later is still refused per task.)"""
    from pibench.benchmarks.provenance import code_version

    answers = client.run(code_version, on_error="return")
    lacking = {worker: answer for worker, answer in answers.items() if isinstance(answer, ImportError)}
    if lacking:
        worker, error = sorted(lacking.items())[0]
        raise ValueError(f"{len(lacking)} dask worker(s) at {address} cannot import pibench ({worker}: {error}); "
                         "install it from this checkout on every worker (pip install -c constraints.txt -e "
                         "'.[dask]') and rerun.")
    # a worker that left or failed meanwhile is skipped: one that comes back is checked per task
    versions = {worker: answer for worker, answer in answers.items() if isinstance(answer, str)}
    ours = code_version()
    other = {worker: version for worker, version in versions.items() if version != ours}
    if other:
        named = ", ".join(f"{worker} runs {version}" for worker, version in sorted(other.items())[:3])
        raise ValueError(f"{len(other)} of {len(versions)} dask worker(s) at {address} run other pibench code than "
                         f"this run ({ours}): {named}{', ...' if len(other) > 3 else ''}. Start every worker from "
                         "this checkout (the same commit) and rerun.")


def _scheduler_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is dask's word that the client lost its scheduler (a future cancelled for it; between
    jobs the loss shows as the client's status instead)."""
    from distributed.client import FutureCancelledError

    return isinstance(exc, FutureCancelledError) and "scheduler-connection-lost" in str(exc)


@dataclass(frozen=True)
class JobSlots:
    """What to give ``joblib.Parallel`` in a backend: its ``n_jobs`` and ``pre_dispatch``."""

    n_jobs: int
    pre_dispatch: str = "2*n_jobs"


@contextmanager
def parallel_backend(backend: str, n_jobs: int, scheduler: str | None = None) -> Iterator[JobSlots]:
    """Enter the backend; yields what to give ``joblib.Parallel`` (:class:`JobSlots`).

    dask: connect to ``scheduler`` (``tcp://host:8786``), or start a local cluster of
    ``n_jobs`` single-threaded worker processes when none is given; every worker of
    the cluster then takes jobs (n_jobs = -1), and every job is handed to the
    scheduler at once (``pre_dispatch = "all"``: joblib would otherwise keep twice the
    workers it saw at the start in flight, however many join later, and an adaptive
    cluster would never see the queue that makes it grow). The caller checks the backend first
    (:func:`check_backend`, before the results dir is locked). While it runs, a
    cluster left without workers is said (:func:`watch_workers`); a scheduler lost
    mid-run raises :class:`ClusterLost`.
    """
    if backend == "loky":
        yield JobSlots(n_jobs)
        return
    from distributed import Client, LocalCluster
    from joblib import parallel_config, register_parallel_backend

    from pibench.benchmarks.cluster_backend import CLUSTER_BACKEND, ClusterBackend

    if scheduler is None:
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    else:
        cluster = None
    try:
        try:
            client = Client(cluster) if cluster is not None else Client(scheduler, timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            raise ValueError(f"could not reach the dask scheduler at {scheduler} ({exc}); start it with "
                             "`dask scheduler` and give the address it prints.") from None
        address = client.scheduler.address
        stop = threading.Event()

        def count() -> int:  # asked of the scheduler each time (scheduler_info may give the client's old answer)
            return len(client.ncores())

        def say(line: str) -> None:
            tqdm.write(line, file=sys.stderr)

        watcher = threading.Thread(target=watch_workers, args=(count, stop, say, address, WORKERLESS_GRACE),
                                   daemon=True, name="pibench-dask-workers")
        register_parallel_backend(CLUSTER_BACKEND, ClusterBackend)
        with client, parallel_config(backend=CLUSTER_BACKEND):
            if cluster is None:  # a cluster of others' making: its workers may run other code (ours run ours)
                check_worker_code(client, address)
            watcher.start()
            try:
                yield JobSlots(-1, pre_dispatch="all")
            except Exception as exc:
                if _scheduler_lost(exc) or client.status != "running":
                    raise ClusterLost(f"lost the dask scheduler at {address} mid-run; the tasks that finished "
                                      "before are kept: restart the scheduler and its workers and rerun the same "
                                      "command to resume") from None
                raise
            finally:
                stop.set()
                watcher.join(timeout=CONNECT_TIMEOUT)  # a count may be waiting on a scheduler that is gone
    finally:
        if cluster is not None:
            nanny = logging.getLogger("distributed.nanny")
            level = nanny.level
            nanny.setLevel(logging.ERROR)  # our own cluster's workers killed at its close: no warning of it
            try:
                cluster.close()
            finally:
                nanny.setLevel(level)
