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
from collections.abc import Iterator
from contextlib import contextmanager

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


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: More local workers than this many per core only wait on each other (and a huge -j fails late).
WORKERS_PER_CORE = 8


def check_workers(n_jobs: int, threads: int, backend: str = "loky", scheduler: str | None = None) -> None:
    """ValueError (with the fix) for a worker or thread count this machine cannot serve: threads per task
    at most its cores, local workers at most :data:`WORKERS_PER_CORE` per core (a remote dask cluster
    brings its own)."""
    for name, value in (("n_jobs", n_jobs), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a whole number >= 1.")
    cores = available_cores()
    remote = backend == "dask" and scheduler is not None  # a cluster brings its own cores
    if threads > cores and not remote:
        raise ValueError(f"--threads {threads} is more than the {cores} CPU core(s) this process may use; give "
                         f"--threads 1 (the default) to {cores}.")
    if n_jobs > WORKERS_PER_CORE * cores and not remote:
        raise ValueError(f"-j {n_jobs} is far more than the {cores} CPU core(s) here (at most "
                         f"{WORKERS_PER_CORE * cores}: more workers only wait); give -j {cores} to run one task per "
                         "core, or --backend dask --scheduler ADDRESS for a cluster.")


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
        with Client(address, timeout=CONNECT_TIMEOUT):
            pass
    except Exception as exc:  # a service that speaks another protocol fails in many ways (MemoryError too)
        hint = ("a tls:// scheduler needs dask's TLS settings (distributed.comm.tls in the dask config); "
                if scheme == "tls" else "")
        raise ValueError(f"{address} did not answer as a dask scheduler ({type(exc).__name__}: "
                         f"{str(exc)[:100]}); {hint}give the address `dask scheduler` prints.") from None


@contextmanager
def parallel_backend(backend: str, n_jobs: int, scheduler: str | None = None) -> Iterator[int]:
    """Enter the backend; yields the ``n_jobs`` to give ``joblib.Parallel``.

    dask: connect to ``scheduler`` (``tcp://host:8786``), or start a local cluster of
    ``n_jobs`` single-threaded worker processes when none is given; every worker of
    the cluster then takes jobs (n_jobs = -1). The caller checks the backend first
    (:func:`check_backend`, before the results dir is locked).
    """
    if backend == "loky":
        yield n_jobs
        return
    from distributed import Client, LocalCluster
    from joblib import parallel_config

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
        with client, parallel_config(backend="dask"):
            yield -1
    finally:
        if cluster is not None:
            nanny = logging.getLogger("distributed.nanny")
            level = nanny.level
            nanny.setLevel(logging.ERROR)  # our own cluster's workers killed at its close: no warning of it
            try:
                cluster.close()
            finally:
                nanny.setLevel(level)
