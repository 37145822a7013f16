"""The joblib backend of ``--backend dask``: joblib's own dask backend, with what a run needs of it.

joblib sizes a dask "parallelism" by the cluster's worker threads when a call starts.
With one thread it runs every job in this process (its shortcut for one worker), and
with none it gives up after 10 s, mid-run too. A run's jobs belong on the cluster,
and a cluster may lose all its workers and get them back (a batch job ends, an
adaptive cluster scales to zero): so every job is sent to the scheduler, where it
waits for a worker, and :func:`pibench.benchmarks.backends.watch_workers` says so.
Imported only with the ``dask`` extra installed.
"""

from __future__ import annotations

from joblib._dask import DaskDistributedBackend  # joblib's dask backend; joblib exports it under no other name

#: joblib's name for :class:`ClusterBackend`.
CLUSTER_BACKEND = "pibench-dask"


class ClusterBackend(DaskDistributedBackend):
    """joblib's dask backend that never runs jobs in this process and never gives up for want of workers."""

    def effective_n_jobs(self, n_jobs: int) -> int:
        return max(2, sum(self.client.ncores().values()))
