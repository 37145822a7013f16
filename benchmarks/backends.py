"""Where a run's jobs execute: joblib's loky processes on this machine, or a dask cluster.

Both go through joblib (DESIGN: no home-made scheduler); the runner's jobs are
the same, only ``joblib.parallel_config`` changes. With dask, every worker must
run the same pibench checkout (the runner checks the code version) and see the
same results and data folders (a shared file system), and each worker process
should run one task at a time (``dask worker --nthreads 1``): a task pins torch's
threads, a process-wide setting.
"""

from __future__ import annotations

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


#: Seconds to wait for a dask scheduler to accept a connection, before any work starts.
CONNECT_TIMEOUT = 5.0


def _probe_scheduler(address: str) -> None:
    """ValueError, within :data:`CONNECT_TIMEOUT`, if a tcp:// scheduler address takes no connection."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return  # tls, ucx, ...: dask's own connect says what is wrong
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--scheduler {address!r}: give the address as tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786.")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ValueError(f"could not reach the dask scheduler at {address} within {CONNECT_TIMEOUT:g} s "
                         f"({exc.strerror or exc}); start it with `dask scheduler` and give the address it "
                         "prints.") from None


@contextmanager
def parallel_backend(backend: str, n_jobs: int, scheduler: str | None = None) -> Iterator[int]:
    """Enter the backend; yields the ``n_jobs`` to give ``joblib.Parallel``.

    dask: connect to ``scheduler`` (``tcp://host:8786``), or start a local cluster of
    ``n_jobs`` single-threaded worker processes when none is given; every worker of
    the cluster then takes jobs (n_jobs = -1).
    """
    check_backend(backend, scheduler)
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
            cluster.close()
